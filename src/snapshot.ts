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
 * version, and impossible combinations (derived from the transitions of
 * `machines/safety.machine.ts`, see `reachabilityIssues`). A snapshot that
 * passes is one the machine could have produced, so a restored session never
 * admits a write the original would have refused.
 *
 * Spec: ASSISTANT_SAFETY.md "States", "The invariants"; DESIGN.md §3.3-3.5.
 */
import { z } from 'zod';
import { ErrCodeFSMBlocked, MAX_IN_FLIGHT, MAX_TIME_MS, recoveryIdFor } from '../machines/safety.policy.js';
import type { InFlightCall, PendingRecovery, SafetyContext, SafetyState, ToolKind } from '../machines/safety.types.js';
import { SAFETY_STATES, TOOL_KINDS } from '../machines/safety.types.js';

/** The schema version this library writes and reads. */
export const SNAPSHOT_VERSION = 1;

// Times are bounded by MAX_TIME_MS, the range of JavaScript dates: the base time,
// every offset and every base + offset, so every time restored is a valid date
// and persists again (no sum overflows to Infinity).
const TIME_RANGE = `must be within ±${MAX_TIME_MS} ms, the range of JavaScript dates`;
const time = z.number().min(-MAX_TIME_MS, TIME_RANGE).max(MAX_TIME_MS, TIME_RANGE); // zod 4 numbers are finite
const count = z.int().nonnegative();
const positive = z.int().min(1);
const inFlightKey = z
  .string()
  .regex(/^(id:[\s\S]+|anon:(0|[1-9][0-9]*))$/, 'must be `id:<call id>` or `anon:<n>`');

/** Names of the tuple positions, for error messages. */
const TUPLE_FIELDS: Readonly<Record<string, readonly string[]>> = {
  write: ['tool', 'at', 'seq'],
  read: ['tool', 'at'],
  recoveries: ['tool', 'createdAt', 'lastBlockedAt', 'attempts'],
  inFlight: ['key', 'tool', 'kind', 'admittedAt', 'verifiesWrite'],
};

const shapeSchema = z.strictObject({
  /** Schema version, `SNAPSHOT_VERSION`. */
  v: z.literal(SNAPSHOT_VERSION),
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
  write: z.tuple([z.string(), time, positive]).optional(),
  /** The last successful resolve or read: `[lastReadTool, lastReadAt]`. Absent: none. */
  read: z.tuple([z.string(), time]).optional(),
  /** `readAfterWrite`; absent means false. */
  readAfterWrite: z.boolean().optional(),
  /** `consecutiveVerifyBlocks`; absent means 0. */
  verifyBlocks: count.optional(),
  /** `finalAnswerBlocks`; absent means 0. */
  answerBlocks: count.optional(),
  /**
   * Pending recoveries (code `FSM_BLOCKED`): `[tool, createdAt, lastBlockedAt, attempts]`.
   * Absent: none.
   */
  recoveries: z.array(z.tuple([z.string(), time, time, positive])).min(1).optional(),
  /**
   * Calls in flight, oldest first: `[key, tool, kind, admittedAt, verifiesWrite]`.
   * Absent: none.
   */
  inFlight: z
    .array(z.tuple([inFlightKey, z.string(), z.enum(TOOL_KINDS as [ToolKind, ...ToolKind[]]), time, positive.nullable()]))
    .min(1)
    .max(MAX_IN_FLIGHT)
    .optional(),
  /** `anonSeq`; absent means 0. */
  anonSeq: count.optional(),
  /** `checksCalls`; absent means false. */
  checksCalls: z.boolean().optional(),
  /** `strictFailedWrites`; absent means false. */
  strict: z.boolean().optional(),
});

/**
 * A persisted session (plain JSON, schema version 1), e.g.
 * `{"v":1,"state":"VERIFYING","t":1700000010000,"write":["cancel_reservation",4000,1],"read":["get_reservation_details",0],"checksCalls":true}`.
 * Typically under 200 bytes as JSON; see `persistedSnapshotSchema` for the fields.
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
 * - One pending recovery per tool.
 * Times are not compared: the clock is an input and may step back.
 */
function reachabilityIssues(s: PersistedSnapshot): Issue[] {
  const issues: Issue[] = [];
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
    if (s.write !== undefined) issues.push({ path: ['write'], message: 'RESOLVING cannot follow a successful write' });
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
  const tools = new Set<string>();
  (s.recoveries ?? []).forEach(([tool], i) => {
    if (tools.has(tool)) issues.push({ path: ['recoveries', i, 0], message: `a second pending recovery of ${tool}` });
    tools.add(tool);
  });
  return issues;
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
  for (const issue of [...timeRangeIssues(snapshot), ...reachabilityIssues(snapshot)]) {
    ctx.addIssue({ code: 'custom', ...issue });
  }
});

/**
 * A persisted snapshot that does not validate. `message` names the field,
 * e.g. `snapshot: inFlight[0].kind: Invalid option: expected one of ...`.
 * A `TypeError`, as the value is not a snapshot of this machine.
 */
export class SnapshotError extends TypeError {
  /** The path of the first bad field, e.g. `['inFlight', 0, 'kind']`. */
  readonly path: readonly (string | number)[];

  constructor(message: string, path: readonly (string | number)[] = []) {
    super(message);
    this.name = 'SnapshotError';
    this.path = path;
  }
}

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
  value = ownFields(value);
  const version = Object.prototype.hasOwnProperty.call(value, 'v') ? (value as { v: unknown }).v : undefined;
  if (version !== SNAPSHOT_VERSION) {
    fail(
      ['v'],
      version === undefined
        ? `missing schema version (this library reads version ${SNAPSHOT_VERSION})`
        : `unknown schema version ${JSON.stringify(version)} (this library reads version ${SNAPSHOT_VERSION})`,
    );
  }
  let result: ReturnType<typeof persistedSnapshotSchema.safeParse>;
  try {
    result = persistedSnapshotSchema.safeParse(value);
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
  for (const [tool, createdAt, lastBlockedAt, attempts] of s.recoveries ?? []) {
    const recoveryId = recoveryIdFor(ErrCodeFSMBlocked, tool);
    pendingRecoveries[recoveryId] = {
      recoveryId,
      errorCode: ErrCodeFSMBlocked,
      tool,
      createdAt: time(createdAt),
      lastBlockedAt: time(lastBlockedAt),
      attempts,
    };
  }
  const inFlight: InFlightCall[] = (s.inFlight ?? []).map(([key, tool, kind, admittedAt, verifiesWrite]) => ({
    key,
    tool,
    kind,
    admittedAt: time(admittedAt),
    verifiesWrite,
  }));
  return {
    wroteThisEpisode: s.write !== undefined,
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
 * expired ones itself, by the time of its events).
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
    snapshot.recoveries = recoveries.map((r) => [r.tool, offset(r.createdAt), offset(r.lastBlockedAt), r.attempts]);
  }
  if (context.inFlight.length > 0) {
    snapshot.inFlight = context.inFlight.map((c) => [c.key, c.tool, c.kind, offset(c.admittedAt), c.verifiesWrite]);
  }
  if (context.anonSeq > 0) snapshot.anonSeq = context.anonSeq;
  if (context.checksCalls) snapshot.checksCalls = true;
  if (context.strictFailedWrites) snapshot.strict = true;
  return snapshot;
}
