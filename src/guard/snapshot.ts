/**
 * The persisted form of a session: compact, plain JSON with a schema
 * version, validated with zod before a session is rebuilt from it.
 *
 * Only the state and the context are kept (XState's own persisted snapshot
 * adds status, output, error, history and children, none of which this
 * machine uses); fields at their initial value are left out, tuples replace
 * objects for the repeated entries, and times are offsets from one base time
 * `t`. The XState snapshot is rebuilt with
 * `safetyMachine.resolveState({ value, context })`.
 *
 * Validation rejects, with an error naming the field, anything the machine
 * cannot reach: an unknown state, wrong types, negative counters, an unknown
 * version, more entries than the machine ever keeps (its caps), and
 * impossible combinations (derived from the transitions of
 * `machines/safety.machine.ts`, see `reachabilityIssues`). A snapshot that
 * passes is one the machine could have produced, so a restored session never
 * admits a write the original would have refused.
 *
 * Versions: 3 (written) adds what issue 28 keeps: the error code of a
 * pending recovery a tool's result raised (a fifth member of its tuple;
 * absent, `FSM_BLOCKED`), the write key of a write in flight (an eighth
 * member of its tuple, the destructive flag before it then given as a
 * boolean), the failed writes (`failedWrites`) and the written targets
 * (`written`); 2 (still read) is
 * version 3 without them, so a version-2 snapshot is restored as the same
 * session (no raised recovery, no key, no failed write) and persists again
 * as version 3. Version 2 added the targets of DESIGN.md §5 and the
 * `wrote: false` of a session whose ResetKeepProgress cleared
 * `wroteThisEpisode`; 1 (still read) is version 2 without them, so a
 * version-1 snapshot is restored as the same session (no targets, no
 * confirmation, wrote this episode exactly when it records a write).
 *
 * Spec: ASSISTANT_SAFETY.md "States", "The invariants"; DESIGN.md §1,
 * §3.3-3.5, §5.3-5.6.
 */
import { SnapshotError } from '../errors/snapshot-error.js';
import { z } from 'zod';
import {
  ErrCodeFSMBlocked,
  MAX_ESTABLISHED_TARGETS,
  MAX_FAILED_WRITES,
  MAX_IN_FLIGHT,
  MAX_LINKS,
  MAX_NAME_LENGTH,
  MAX_PENDING_RECOVERIES,
  MAX_TARGETS_PER_EVENT,
  MAX_TARGET_LENGTH,
  MAX_TIME_MS,
  recoveryIdFor,
} from '../../machines/safety.policy.js';
import { canonicalTarget, CUT_TARGET_MARK, isCutTarget, isUnknownPlace, readLinks } from '../../machines/safety.targets.js';
import type { FailedWrite, InFlightCall, PendingRecovery, SafetyContext, SafetyState, ToolKind } from '../../machines/safety.types.js';
import { SAFETY_STATES, TOOL_KINDS } from '../../machines/safety.types.js';

/** The schema version this library writes. */
export const SNAPSHOT_VERSION = 3;

/** The schema versions this library reads: the current one, and 1 and 2 (migrated: see the module comment). */
export const READABLE_SNAPSHOT_VERSIONS: readonly number[] = [1, 2, 3];

// Times are bounded by MAX_TIME_MS, the range of JavaScript dates: the base time,
// every offset and every base + offset, so every time restored is a valid date
// and persists again (no sum overflows to Infinity).
const TIME_RANGE = `must be within ±${MAX_TIME_MS} ms, the range of JavaScript dates`;
const time = z.number().min(-MAX_TIME_MS, TIME_RANGE).max(MAX_TIME_MS, TIME_RANGE); // zod 4 numbers are finite
const count = z.int().nonnegative();
const positive = z.int().min(1);
const inFlightKey = z
  .string()
  .max(MAX_NAME_LENGTH + 'id:'.length)
  .regex(/^(id:[\s\S]+|anon:(0|[1-9][0-9]*))$/, 'must be `id:<call id>` or `anon:<n>`');
/** A target as the machine keeps it: at most `MAX_TARGET_LENGTH` characters, or a cut target (`cutTarget`: one more, the mark). */
const target = z
  .string()
  .min(1)
  .max(MAX_TARGET_LENGTH + CUT_TARGET_MARK.length)
  .refine(
    (t) => t.length <= MAX_TARGET_LENGTH || t.endsWith(CUT_TARGET_MARK),
    `must be at most ${MAX_TARGET_LENGTH} characters, or a cut target (its first ${MAX_TARGET_LENGTH} and '${CUT_TARGET_MARK}')`,
  );
/** A tool name, at most the machine's `MAX_NAME_LENGTH`. */
const toolName = z.string().max(MAX_NAME_LENGTH);
/** An error code or a write key, as the machine keeps them: non-empty, at most `MAX_NAME_LENGTH`. */
const keptName = z.string().min(1).max(MAX_NAME_LENGTH);
const targetList = z.array(target).max(MAX_TARGETS_PER_EVENT);

/**
 * The top-level arrays and their caps (the machine's): checked on the raw
 * value before the schema reads a single entry, so an oversized snapshot is
 * refused at once.
 */
const ARRAY_CAPS: Readonly<Record<string, readonly [cap: number, what: string]>> = {
  recoveries: [MAX_PENDING_RECOVERIES, 'pending recoveries (MAX_PENDING_RECOVERIES)'],
  inFlight: [MAX_IN_FLIGHT, 'calls in flight (MAX_IN_FLIGHT)'],
  targets: [MAX_ESTABLISHED_TARGETS, 'established targets (MAX_ESTABLISHED_TARGETS)'],
  writeTargets: [MAX_TARGETS_PER_EVENT, 'targets of a write (MAX_TARGETS_PER_EVENT)'],
  links: [MAX_LINKS, 'kept links (MAX_LINKS)'],
  written: [MAX_ESTABLISHED_TARGETS, 'written targets (MAX_ESTABLISHED_TARGETS)'],
  failedWrites: [MAX_FAILED_WRITES, 'failed writes (MAX_FAILED_WRITES)'],
};

/** Names of the tuple positions, for error messages. */
const TUPLE_FIELDS: Readonly<Record<string, readonly string[]>> = {
  write: ['tool', 'at', 'seq'],
  read: ['tool', 'at'],
  recoveries: ['tool', 'createdAt', 'lastBlockedAt', 'attempts', 'errorCode'],
  inFlight: ['key', 'tool', 'kind', 'admittedAt', 'verifiesWrite', 'targets', 'destructive', 'writeKey'],
  failedWrites: ['key', 'tool', 'at', 'targets'],
};

const shapeSchema = z.strictObject({
  /** Schema version: `SNAPSHOT_VERSION` (3), or 2 or 1 (read as version 3 without the fields they lack). */
  v: z.union([z.literal(1), z.literal(2), z.literal(SNAPSHOT_VERSION)]),
  /** The state. */
  state: z.enum(SAFETY_STATES as [SafetyState, ...SafetyState[]]),
  /**
   * Base time, epoch ms: every time below is an offset from it in ms.
   * Absent: the times below are epoch ms themselves.
   */
  t: time.optional(),
  /**
   * The last successful write: `[lastWriteTool, lastWriteAt, writeSeq]`
   * (writes so far >= 1). Absent: nothing written this episode.
   */
  write: z.tuple([toolName, time, positive]).optional(),
  /** The last successful resolve or read: `[lastReadTool, lastReadAt]`. Absent: none. */
  read: z.tuple([toolName, time]).optional(),
  /** `readAfterWrite`; absent means false. */
  readAfterWrite: z.boolean().optional(),
  /** `consecutiveVerifyBlocks`; absent means 0. */
  verifyBlocks: count.optional(),
  /** `finalAnswerBlocks`; absent means 0. */
  answerBlocks: count.optional(),
  /**
   * Pending recoveries: `[tool, createdAt, lastBlockedAt, attempts]`, code
   * `FSM_BLOCKED`, or `[..., errorCode]` for a code a tool's result raised
   * (version 3), at most `MAX_PENDING_RECOVERIES`. Absent: none.
   */
  recoveries: z
    .array(z.tuple([toolName, time, time, positive, keptName.optional()]))
    .min(1)
    .max(MAX_PENDING_RECOVERIES)
    .optional(),
  /**
   * Calls in flight, oldest first: `[key, tool, kind, admittedAt, verifiesWrite]`,
   * then `targets` (canonical) when it names any, is destructive or has a
   * write key, then `true` for a destructive write (`false` when only a
   * write key follows), then the write key (version 3). At most
   * `MAX_IN_FLIGHT`. Absent: none.
   */
  inFlight: z
    .array(
      z.tuple([
        inFlightKey,
        toolName,
        z.enum(TOOL_KINDS as [ToolKind, ...ToolKind[]]),
        time,
        positive.nullable(),
        targetList.optional(),
        z.boolean().optional(),
        keptName.optional(),
      ]),
    )
    .min(1)
    .max(MAX_IN_FLIGHT)
    .optional(),
  /** `anonSeq`; absent means 0. */
  anonSeq: count.optional(),
  /** `checksCalls`; absent means false. */
  checksCalls: z.boolean().optional(),
  /** `strictFailedWrites`; absent means false. */
  strict: z.boolean().optional(),
  /**
   * `wroteThisEpisode`, when it differs from "a write is recorded": `false`
   * after ResetKeepProgress, which keeps the last write's record. Absent:
   * true exactly when `write` is present.
   */
  wrote: z.literal(false).optional(),
  /**
   * `establishedTargets`, canonical, least recently established first, at
   * most `MAX_ESTABLISHED_TARGETS`. Absent: none.
   */
  targets: z.array(target).min(1).max(MAX_ESTABLISHED_TARGETS).optional(),
  /** `writeTargets`, canonical, at most `MAX_TARGETS_PER_EVENT`. Absent: none. */
  writeTargets: targetList.min(1).optional(),
  /** `writeDestructive`; absent means false. */
  destructive: z.literal(true).optional(),
  /** `confirmedSinceWrite`; absent means false. Kept whatever `confirm` says (issue 24: it confirms unknown places too). */
  confirmed: z.literal(true).optional(),
  /**
   * `links`: symbolic links admitted writes created that lead out of their
   * directory (issue 24), canonical whole paths, oldest first, at most
   * `MAX_LINKS`. Absent: none (as in every snapshot written before links existed).
   */
  links: z.array(target).min(1).max(MAX_LINKS).optional(),
  /**
   * `writtenTargets`: the known targets of every write recorded in the
   * session (issue 28 item 2), canonical, least recently written first, at
   * most `MAX_ESTABLISHED_TARGETS` (version 3). Absent: none (as in every
   * snapshot written before they were kept).
   */
  written: z.array(target).min(1).max(MAX_ESTABLISHED_TARGETS).optional(),
  /** `confirmDestructive`; absent means false. */
  confirm: z.literal(true).optional(),
  /** `autoCompleteVerification`; absent means true (the machine completes verification by itself). */
  autoComplete: z.literal(false).optional(),
  /**
   * `failedWrites` (issue 28, version 3): `[key, tool, at]`, then the write's
   * targets (canonical) when it named any; oldest first, at most
   * `MAX_FAILED_WRITES`. Absent: none.
   */
  failedWrites: z
    .array(z.tuple([keptName, toolName, time, targetList.min(1).optional()]))
    .min(1)
    .max(MAX_FAILED_WRITES)
    .optional(),
});

/** The fields version 2 added; a version-1 snapshot has none of them (nor targets on a call in flight). */
const VERSION_2_FIELDS = ['wrote', 'targets', 'writeTargets', 'destructive', 'confirmed', 'confirm', 'autoComplete', 'links'] as const;

/** A version-1 snapshot using what only version 2 has, or one of version 1 or 2 using what only version 3 has. */
function versionIssues(s: PersistedSnapshot): Issue[] {
  if (s.v === SNAPSHOT_VERSION) return [];
  const issues: Issue[] = [];
  const v3 = 'is a version-3 field, in a version-' + String(s.v) + ' snapshot';
  if (s.failedWrites !== undefined) issues.push({ path: ['failedWrites'], message: v3 });
  if (s.written !== undefined) issues.push({ path: ['written'], message: v3 });
  (s.recoveries ?? []).forEach((recovery, i) => {
    if (recovery[4] !== undefined) issues.push({ path: ['recoveries', i, 4], message: v3 });
  });
  (s.inFlight ?? []).forEach((call, i) => {
    if (call[7] !== undefined) issues.push({ path: ['inFlight', i, 7], message: v3 });
    else if (call[6] === false) issues.push({ path: ['inFlight', i, 6], message: 'is true or absent before version 3' });
  });
  if (s.v !== 1) return issues;
  issues.push(
    ...VERSION_2_FIELDS.filter((field) => s[field] !== undefined).map((field) => ({
      path: [field],
      message: 'is a version-2 field, in a version-1 snapshot',
    })),
  );
  (s.inFlight ?? []).forEach((call, i) => {
    if (call.length > 5) issues.push({ path: ['inFlight', i, 5], message: 'is a version-2 field, in a version-1 snapshot' });
  });
  return issues;
}

/**
 * A persisted session (plain JSON, schema version 3), e.g.
 * `{"v":3,"state":"VERIFYING","t":1700000010000,"write":["cancel_reservation",4000,1],"read":["get_reservation_details",0],"checksCalls":true,"targets":["reservation_id=ABC123"],"writeTargets":["reservation_id=ABC123"]}`.
 * Typically under 200 bytes as JSON without targets; see `persistedSnapshotSchema` for the fields.
 */
export type PersistedSnapshot = z.infer<typeof shapeSchema>;

type Issue = { path: (string | number)[]; message: string };

/**
 * The combinations no run of the safety machine can produce, as issues
 * naming the offending field. Each rule cites the transitions it follows
 * from (machines/safety.machine.ts):
 * - `readAfterWrite` is set only in VERIFYING, with a recorded read, and
 *   cleared on every way out of VERIFYING.
 * - `consecutiveVerifyBlocks` grows only in VERIFYING and is zeroed on every
 *   way out of it.
 * - RESOLVING is entered only initially and by Reset, which clear writes,
 *   reads and answer blocks; any successful write or read leaves it.
 * - READING and WRITING are entered only after a successful read or write
 *   (a validated target); VERIFYING only by a recorded write.
 * - A write is admitted only in READING, which it leaves for WRITING, and
 *   WRITING is left when it settles; back in READING none is in flight. So at
 *   most one write is in flight, exactly one in WRITING, none in RESOLVING or
 *   READING.
 * - `verifiesWrite` is the write count when a resolve or read was admitted in
 *   VERIFYING: between 1 and the current count.
 * - `anon:<n>` keys are numbered below `anonSeq`; a key is in flight twice
 *   only as a write followed by a later call checked under the same id.
 * - Any call in flight, or any anonymous key, means a call was admitted by check.
 * - One pending recovery per tool and code; a raised code is never `FSM_BLOCKED`
 *   (which the fourth-member form stands for).
 * - A write key only on a write in flight; one failed write per key, its
 *   targets canonical.
 * - Targets are kept canonical (machines/safety.targets.ts), each once per
 *   list; only a recorded read establishes any; only a write has a
 *   destructive flag; the last write's targets and destructive flag belong
 *   to a recorded write.
 * - A confirmation is tracked only with `confirmDestructive`.
 * - `wroteThisEpisode` is cleared (with the last write's targets, its
 *   destructive flag and any confirmation) only by ResetKeepProgress, which
 *   leaves VERIFYING; every recorded write sets it again.
 * Times are not compared: the clock is an input and may step back.
 */
function reachabilityIssues(s: PersistedSnapshot): Issue[] {
  const issues: Issue[] = [];
  targetIssues(s, issues);
  const writeSeq = s.write?.[2] ?? 0;
  if (s.readAfterWrite && s.state !== 'VERIFYING') {
    issues.push({ path: ['readAfterWrite'], message: `is only ever set in VERIFYING, not ${s.state}` });
  }
  if (s.readAfterWrite && s.read === undefined) {
    issues.push({ path: ['readAfterWrite'], message: 'is set without a recorded read' });
  }
  if ((s.verifyBlocks ?? 0) > 0 && s.state !== 'VERIFYING') {
    issues.push({ path: ['verifyBlocks'], message: `blocked writes are only counted in VERIFYING, not ${s.state}` });
  }
  if (s.state === 'RESOLVING') {
    // A write recorded unchecked, then ResetKeepProgress with no target to keep, leaves one (and wroteThisEpisode cleared).
    if (s.write !== undefined && s.wrote !== false) issues.push({ path: ['write'], message: 'RESOLVING cannot follow a successful write' });
    if (s.read !== undefined) issues.push({ path: ['read'], message: 'RESOLVING cannot follow a successful read' });
    if ((s.answerBlocks ?? 0) > 0) {
      issues.push({ path: ['answerBlocks'], message: 'the final answer is never refused in RESOLVING' });
    }
  }
  if ((s.state === 'READING' || s.state === 'WRITING') && s.read === undefined && s.write === undefined) {
    issues.push({ path: ['state'], message: `${s.state} needs a validated target: a recorded read or write` });
  }
  if (s.state === 'VERIFYING' && s.write === undefined) {
    issues.push({ path: ['write'], message: 'VERIFYING needs a recorded write' });
  }
  const calls = s.inFlight ?? [];
  const writeIndexes = calls.flatMap((call, i) => (call[2] === 'write' ? [i] : []));
  if (writeIndexes.length > 1) {
    issues.push({ path: ['inFlight', writeIndexes[1]!, 2], message: 'a second write in flight' });
  } else if (s.state === 'WRITING' && writeIndexes.length === 0) {
    issues.push({ path: ['inFlight'], message: 'WRITING needs its write in flight' });
  } else if ((s.state === 'RESOLVING' || s.state === 'READING') && writeIndexes.length > 0) {
    issues.push({ path: ['inFlight', writeIndexes[0]!, 2], message: `no write is ever in flight in ${s.state}` });
  }
  const seen = new Map<string, ToolKind>();
  calls.forEach(([key, , kind, , verifiesWrite], i) => {
    if (verifiesWrite !== null && kind !== 'resolve' && kind !== 'read') {
      issues.push({ path: ['inFlight', i, 4], message: `only a resolve or read verifies a write, not a ${kind}` });
    }
    if (verifiesWrite !== null && verifiesWrite > writeSeq) {
      issues.push({ path: ['inFlight', i, 4], message: `names write ${verifiesWrite}, but only ${writeSeq} succeeded` });
    }
    if (key.startsWith('anon:') && Number(key.slice(5)) >= (s.anonSeq ?? 0)) {
      issues.push({ path: ['inFlight', i, 0], message: `${key} was never issued (anonSeq is ${s.anonSeq ?? 0})` });
    }
    const earlier = seen.get(key);
    if (earlier !== undefined && (earlier !== 'write' || kind === 'write')) {
      issues.push({ path: ['inFlight', i, 0], message: `${key} is in flight twice` });
    }
    seen.set(key, earlier === 'write' ? 'write' : kind);
  });
  if ((calls.length > 0 || (s.anonSeq ?? 0) > 0) && s.checksCalls !== true) {
    issues.push({ path: ['checksCalls'], message: 'calls were admitted by check, so it must be true' });
  }
  const recoveryIds = new Set<string>();
  (s.recoveries ?? []).forEach(([tool, , , , code], i) => {
    if (code === ErrCodeFSMBlocked) {
      issues.push({ path: ['recoveries', i, 4], message: `is ${ErrCodeFSMBlocked}, which is written by leaving the code out` });
    }
    const id = recoveryIdFor(code ?? ErrCodeFSMBlocked, tool);
    if (recoveryIds.has(id)) issues.push({ path: ['recoveries', i, 0], message: `a second pending recovery ${id}` });
    recoveryIds.add(id);
  });
  calls.forEach((call, i) => {
    if (call[7] !== undefined && call[2] !== 'write') {
      issues.push({ path: ['inFlight', i, 7], message: `only a write has a write key, not a ${call[2]}` });
    }
  });
  const keys = new Set<string>();
  (s.failedWrites ?? []).forEach(([key], i) => {
    if (keys.has(key)) issues.push({ path: ['failedWrites', i, 0], message: 'names a failed write a second time' });
    keys.add(key);
  });
  return issues;
}

/** The target rules of `reachabilityIssues`: canonical, unique, and tied to the records they need. */
function targetIssues(s: PersistedSnapshot, issues: Issue[]): void {
  const list = (path: (string | number)[], targets: readonly string[] | undefined): void => {
    const seen = new Set<string>();
    (targets ?? []).forEach((t, i) => {
      const canonical = canonicalTarget(t);
      if (canonical !== t) {
        issues.push({ path: [...path, i], message: `is not canonical (the machine keeps ${JSON.stringify(canonical)})` });
      } else if (seen.has(t)) {
        issues.push({ path: [...path, i], message: `names ${JSON.stringify(t)} a second time` });
      }
      seen.add(t);
    });
  };
  list(['targets'], s.targets);
  list(['writeTargets'], s.writeTargets);
  list(['links'], s.links);
  list(['written'], s.written);
  // Unknown places are never established nor verification targets (issue 24).
  for (const field of ['targets', 'writeTargets'] as const) {
    (s[field] ?? []).forEach((t, i) => {
      if (isUnknownPlace(t)) issues.push({ path: [field, i], message: 'is an unknown place, which the machine never keeps here' });
    });
  }
  (s.links ?? []).forEach((t, i) => {
    if (isCutTarget(t) || readLinks([t]).links[0] !== t)
      issues.push({ path: ['links', i], message: 'is not a whole path, as a kept link is' });
  });
  (s.failedWrites ?? []).forEach((failed, i) => list(['failedWrites', i, 3], failed[3]));
  (s.inFlight ?? []).forEach((call, i) => {
    list(['inFlight', i, 5], call[5]);
    if (call[6] === true && call[2] !== 'write') {
      issues.push({ path: ['inFlight', i, 6], message: `only a write is destructive, not a ${call[2]}` });
    }
  });
  if (s.targets !== undefined && s.read === undefined) {
    issues.push({ path: ['targets'], message: 'targets are established only by a recorded read' });
  }
  for (const field of ['writeTargets', 'destructive'] as const) {
    if (s[field] !== undefined && s.write === undefined) {
      issues.push({ path: [field], message: 'belongs to a recorded write, and none is recorded' });
    } else if (s[field] !== undefined && s.wrote === false) {
      issues.push({ path: [field], message: 'is cleared with wroteThisEpisode by ResetKeepProgress' });
    }
  }
  if (s.wrote === false && s.write === undefined) {
    issues.push({ path: ['wrote'], message: 'is only written beside a recorded write (absent, it already means false)' });
  }
  if (s.wrote === false && s.state === 'VERIFYING') {
    issues.push({ path: ['wrote'], message: 'VERIFYING follows a recorded write, which sets wroteThisEpisode' });
  }
}

/** The times given as offsets whose sum with the base `t` leaves the range of JavaScript dates. */
function timeRangeIssues(s: PersistedSnapshot): Issue[] {
  if (s.t === undefined) return [];
  const base = s.t;
  const offsets: [(string | number)[], number][] = [];
  if (s.write !== undefined) offsets.push([['write', 1], s.write[1]]);
  if (s.read !== undefined) offsets.push([['read', 1], s.read[1]]);
  (s.recoveries ?? []).forEach(([, createdAt, lastBlockedAt], i) => {
    offsets.push([['recoveries', i, 1], createdAt], [['recoveries', i, 2], lastBlockedAt]);
  });
  (s.inFlight ?? []).forEach(([, , , admittedAt], i) => offsets.push([['inFlight', i, 3], admittedAt]));
  (s.failedWrites ?? []).forEach(([, , at], i) => offsets.push([['failedWrites', i, 2], at]));
  return offsets
    .filter(([, offset]) => Math.abs(base + offset) > MAX_TIME_MS)
    .map(([path, offset]) => ({
      path,
      message: `added to t it is ${base + offset}, outside ±${MAX_TIME_MS} ms, the range of JavaScript dates`,
    }));
}

/**
 * The zod schema of a persisted snapshot: the shape, then the time range
 * and the reachability rules. `persistedSnapshotSchema.safeParse(json)`
 * reports every issue.
 */
export const persistedSnapshotSchema = shapeSchema.superRefine((snapshot, ctx) => {
  for (const issue of [...versionIssues(snapshot), ...timeRangeIssues(snapshot), ...reachabilityIssues(snapshot)]) {
    ctx.addIssue({ code: 'custom', ...issue });
  }
});

/** Tuple indexes replaced by field names: `['inFlight', 0, 2]` -> `['inFlight', 0, 'kind']`. */
function namedPath(path: readonly PropertyKey[]): (string | number)[] {
  const out = path.map((p) => (typeof p === 'symbol' ? String(p) : p));
  const fields = typeof out[0] === 'string' ? TUPLE_FIELDS[out[0]] : undefined;
  if (fields === undefined) return out;
  const at = out[0] === 'write' || out[0] === 'read' ? 1 : 2;
  const index = out[at];
  if (typeof index === 'number' && fields[index] !== undefined) out[at] = fields[index];
  return out;
}

function formatPath(path: readonly (string | number)[]): string {
  if (path.length === 0) return '(root)';
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

function fail(path: (string | number)[], message: string): never {
  throw new SnapshotError(`snapshot: ${formatPath(path)}: ${message}`, path);
}

/**
 * Validates a persisted snapshot and rebuilds the state and context it
 * stands for.
 *
 * @param input a `PersistedSnapshot` (any JSON value, checked), or its JSON string.
 * @returns the state and a fresh context object (nothing shared with `input`).
 * @throws SnapshotError naming the first bad field: not JSON, not an object,
 *   a field that cannot be read (its getter throws), an unknown version, a
 *   wrong type, a negative counter, an unknown state, a time (base, offset,
 *   or their sum) outside ±`MAX_TIME_MS`, or a combination the machine cannot reach.
 */
export function parsePersistedSnapshot(input: unknown): { state: SafetyState; context: SafetyContext } {
  let value = input;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch (error) {
      fail([], `not valid JSON (${(error as Error).message})`);
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    fail([], 'expected an object from guard.getPersistedSnapshot()');
  }
  const fields = ownFields(value);
  const version = Object.prototype.hasOwnProperty.call(fields, 'v') ? fields.v : undefined;
  const readable = `this library reads versions ${READABLE_SNAPSHOT_VERSIONS.slice(0, -1).join(', ')} and ${String(READABLE_SNAPSHOT_VERSIONS.at(-1))}`;
  if (!READABLE_SNAPSHOT_VERSIONS.includes(version as number)) {
    fail(
      ['v'],
      version === undefined ? `missing schema version (${readable})` : `unknown schema version ${JSON.stringify(version)} (${readable})`,
    );
  }
  for (const [field, [cap, what]] of Object.entries(ARRAY_CAPS)) {
    const entries = fields[field];
    if (Array.isArray(entries) && entries.length > cap) {
      fail([field], `${entries.length} entries, but the machine keeps at most ${cap} ${what}`);
    }
  }
  let result: ReturnType<typeof persistedSnapshotSchema.safeParse>;
  try {
    result = persistedSnapshotSchema.safeParse(fields);
  } catch (error) {
    fail([], `cannot be read (${error instanceof Error ? error.message : String(error)})`);
  }
  if (!result.success) {
    const issue = result.error.issues[0]!;
    fail(namedPath(issue.path), issue.message);
  }
  return { state: result.data.state, context: contextOf(result.data) };
}

/**
 * A plain copy of an object's own enumerable fields, read once each.
 *
 * @throws SnapshotError naming the field whose getter throws, or the root
 *   when the object's keys cannot be listed (a hostile Proxy).
 */
function ownFields(value: object): Record<string, unknown> {
  let keys: string[];
  try {
    keys = Object.keys(value);
  } catch (error) {
    fail([], `cannot be read (${error instanceof Error ? error.message : String(error)})`);
  }
  const fields: Record<string, unknown> = {};
  for (const key of keys) {
    let field: unknown;
    try {
      field = (value as Record<string, unknown>)[key];
    } catch (error) {
      fail([key], `cannot be read (${error instanceof Error ? error.message : String(error)})`);
    }
    Object.defineProperty(fields, key, { value: field, enumerable: true, writable: true, configurable: true });
  }
  return fields;
}

function contextOf(s: PersistedSnapshot): SafetyContext {
  const base = s.t ?? 0;
  const time = (offset: number): number => base + offset;
  const pendingRecoveries: Record<string, PendingRecovery> = {};
  for (const [tool, createdAt, lastBlockedAt, attempts, code] of s.recoveries ?? []) {
    const errorCode = code ?? ErrCodeFSMBlocked;
    const recoveryId = recoveryIdFor(errorCode, tool);
    pendingRecoveries[recoveryId] = {
      recoveryId,
      errorCode,
      tool,
      createdAt: time(createdAt),
      lastBlockedAt: time(lastBlockedAt),
      attempts,
    };
  }
  const inFlight: InFlightCall[] = (s.inFlight ?? []).map(
    ([key, tool, kind, admittedAt, verifiesWrite, targets, destructive, writeKey]) => ({
      key,
      tool,
      kind,
      admittedAt: time(admittedAt),
      verifiesWrite,
      ...(targets === undefined || targets.length === 0 ? {} : { targets: [...targets] }),
      ...(destructive === true ? { destructive } : {}),
      ...(writeKey === undefined ? {} : { writeKey }),
    }),
  );
  const failedWrites: FailedWrite[] = (s.failedWrites ?? []).map(([key, tool, at, targets]) => ({
    key,
    tool,
    at: time(at),
    ...(targets === undefined ? {} : { targets: [...targets] }),
  }));
  return {
    wroteThisEpisode: s.write !== undefined && s.wrote !== false,
    readAfterWrite: s.readAfterWrite === true,
    consecutiveVerifyBlocks: s.verifyBlocks ?? 0,
    finalAnswerBlocks: s.answerBlocks ?? 0,
    lastWriteTool: s.write?.[0] ?? null,
    lastWriteAt: s.write === undefined ? null : time(s.write[1]),
    lastReadTool: s.read?.[0] ?? null,
    lastReadAt: s.read === undefined ? null : time(s.read[1]),
    pendingRecoveries,
    inFlight,
    writeSeq: s.write?.[2] ?? 0,
    anonSeq: s.anonSeq ?? 0,
    checksCalls: s.checksCalls === true,
    strictFailedWrites: s.strict === true,
    establishedTargets: [...(s.targets ?? [])],
    writeTargets: [...(s.writeTargets ?? [])],
    writeDestructive: s.destructive === true,
    confirmedSinceWrite: s.confirmed === true,
    confirmDestructive: s.confirm === true,
    ...(s.autoComplete === false ? { autoCompleteVerification: false } : {}), // absent means true, as initialSafetyContext
    ...(s.links === undefined ? {} : { links: [...s.links] }), // absent means none, as initialSafetyContext
    ...(s.written === undefined ? {} : { writtenTargets: [...s.written] }), // absent means none, as initialSafetyContext
    ...(failedWrites.length === 0 ? {} : { failedWrites }), // absent means none, as initialSafetyContext
  };
}

/**
 * The base time of a context's times: their minimum, when there are two or
 * more, all safe integers, and every offset from it is at most `MAX_TIME_MS`;
 * else 0 (absolute times).
 */
function baseTime(context: SafetyContext): number {
  const times: number[] = [];
  if (context.lastWriteAt !== null) times.push(context.lastWriteAt);
  if (context.lastReadAt !== null) times.push(context.lastReadAt);
  for (const r of Object.values(context.pendingRecoveries)) times.push(r.createdAt, r.lastBlockedAt);
  for (const c of context.inFlight) times.push(c.admittedAt);
  for (const f of context.failedWrites ?? []) times.push(f.at);
  if (times.length < 2 || !times.every(Number.isSafeInteger)) return 0;
  const min = Math.min(...times);
  return Math.max(...times) - min <= MAX_TIME_MS ? min : 0;
}

/**
 * The persisted form of a state and context (plain JSON; fields at their
 * initial value left out; times as offsets from a base time `t`). Lossless
 * for every context the machine reaches:
 * `parsePersistedSnapshot(toPersistedSnapshot(state, context))` gives them back.
 * Pending recoveries are kept as they are, expired or not (the machine drops
 * expired ones itself, by the time of its events). Fields added in versions 2 and 3
 * that a context lacks (one built by hand, or validated by a schema that
 * does not know them) are taken at their initial value.
 */
export function toPersistedSnapshot(state: SafetyState, context: SafetyContext): PersistedSnapshot {
  const snapshot: PersistedSnapshot = { v: SNAPSHOT_VERSION, state };
  const base = baseTime(context);
  if (base !== 0) snapshot.t = base;
  const offset = (time: number): number => time - base;
  if (context.lastWriteTool !== null && context.lastWriteAt !== null) {
    snapshot.write = [context.lastWriteTool, offset(context.lastWriteAt), context.writeSeq];
  }
  if (context.lastReadTool !== null && context.lastReadAt !== null) {
    snapshot.read = [context.lastReadTool, offset(context.lastReadAt)];
  }
  if (context.readAfterWrite) snapshot.readAfterWrite = true;
  if (context.consecutiveVerifyBlocks > 0) snapshot.verifyBlocks = context.consecutiveVerifyBlocks;
  if (context.finalAnswerBlocks > 0) snapshot.answerBlocks = context.finalAnswerBlocks;
  const recoveries = Object.values(context.pendingRecoveries);
  if (recoveries.length > 0) {
    snapshot.recoveries = recoveries.map((r) =>
      r.errorCode === ErrCodeFSMBlocked
        ? [r.tool, offset(r.createdAt), offset(r.lastBlockedAt), r.attempts]
        : [r.tool, offset(r.createdAt), offset(r.lastBlockedAt), r.attempts, r.errorCode],
    );
  }
  if (context.inFlight.length > 0) {
    snapshot.inFlight = context.inFlight.map((c) => {
      const call: NonNullable<PersistedSnapshot['inFlight']>[number] = [c.key, c.tool, c.kind, offset(c.admittedAt), c.verifiesWrite];
      const targets = c.targets ?? [];
      const keyed = c.writeKey !== undefined;
      if (targets.length > 0 || c.destructive === true || keyed) call.push([...targets]);
      if (c.destructive === true || keyed) call.push(c.destructive === true);
      if (keyed) call.push(c.writeKey);
      return call;
    });
  }
  if (context.anonSeq > 0) snapshot.anonSeq = context.anonSeq;
  if (context.checksCalls) snapshot.checksCalls = true;
  if (context.strictFailedWrites) snapshot.strict = true;
  if (context.wroteThisEpisode === false && snapshot.write !== undefined) snapshot.wrote = false;
  const established = context.establishedTargets ?? [];
  if (established.length > 0) snapshot.targets = [...established];
  const writeTargets = context.writeTargets ?? [];
  if (writeTargets.length > 0) snapshot.writeTargets = [...writeTargets];
  if (context.writeDestructive === true) snapshot.destructive = true;
  if (context.confirmedSinceWrite === true) snapshot.confirmed = true;
  if (context.confirmDestructive === true) snapshot.confirm = true;
  if (context.autoCompleteVerification === false) snapshot.autoComplete = false;
  const links = context.links ?? [];
  if (links.length > 0) snapshot.links = [...links];
  const written = context.writtenTargets ?? [];
  if (written.length > 0) snapshot.written = [...written];
  const failedWrites = context.failedWrites ?? [];
  if (failedWrites.length > 0) {
    snapshot.failedWrites = failedWrites.map((f) => {
      const entry: NonNullable<PersistedSnapshot['failedWrites']>[number] = [f.key, f.tool, offset(f.at)];
      if (f.targets !== undefined && f.targets.length > 0) entry.push([...f.targets]);
      return entry;
    });
  }
  return snapshot;
}
