/**
 * Differential tests: the adapter (`createSessionGuard`, with the statechart
 * inside) and the independent oracle (test/oracle.ts, written from the spec
 * alone) are given the same operations at the same times, and must give the
 * same decision, and describe the same session, after every step.
 *
 * Two sources of operations: every generated path (src/testing/), and
 * fast-check sequences of up to 40 operations with clock jumps and
 * interleaved parallel calls (check A, check B, record B, record A), among
 * them calls of one tool without ids and records that name only the tool,
 * so one outcome could belong to several calls, and ids checked again
 * while in flight (both sides refuse them with a TypeError). Calls name
 * targets from a small pool (paths, their ancestors and descendants, ids,
 * tables, forms that normalize alike, a path climbing out of its root, now
 * and then more than a call may name), writes may be destructive, and
 * write results may say they verified themselves (DESIGN.md §5). The
 * default run checks 2,000 sequences; `npm run test:exhaustive` (EXHAUSTIVE=1) checks
 * 100,000 and every path set. A failure prints the shrunk operation list.
 *
 * Spec: ASSISTANT_SAFETY.md (whole); DESIGN.md §1, §3, §5.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createSessionGuard, type SessionGuard } from '../../src/guard/session-guard.js';
import type { FSMBlockedError } from '../../src/errors/index.js';
import {
  getShortestSafetyPaths,
  getSimpleSafetyPaths,
  recordOptionsOf,
  toolCallOf,
  type SafetyPathOptions,
} from '../../src/testing/index.js';
import type { SafetyEvent } from '../../machines/safety.types.js';
import { SafetyOracle, TEN_MINUTES_MS, type OracleKind, type OracleView, type RefusalCause } from '../support/oracle.js';

const EXHAUSTIVE = process.env.EXHAUSTIVE === '1';
/** Time limit of a test over thousands of paths: seconds on an idle machine, minutes on a loaded one. */
const LONG_TEST_MS = 300_000;
const SEQUENCES = EXHAUSTIVE ? 100_000 : 2_000;
const MAX_OPERATIONS = 40;
const T0 = 1_700_000_000_000;

// ---------------------------------------------------------------------------
// Operations, as a loop performs them.

type Operation =
  | { op: 'check'; id?: string; tool: string; kind: OracleKind; targets?: string[]; destructive?: boolean; links?: string[] }
  /**
   * `nameOnly`: the record gives the tool's name alone; `kind` is then what
   * the name classifies as (`NAME_KINDS`). `result`: the tool's result.
   */
  | {
      op: 'record';
      id?: string;
      tool: string;
      kind: OracleKind;
      outcome: 'success' | 'error';
      nameOnly?: boolean;
      targets?: string[];
      destructive?: boolean;
      result?: unknown;
    }
  | { op: 'answer' }
  | { op: 'complete' }
  | { op: 'reset' }
  | { op: 'resetKeepProgress' }
  /** Time passes: `ms` more (random sequences) or up to the absolute time `at` (paths). */
  | { op: 'wait'; ms: number };

interface Settings {
  strictFailedWrites: boolean;
  autoCompleteVerification: boolean;
  confirmDestructive?: boolean;
  /** Tools marked self-verifying (the guard's `selfVerifying`). */
  selfVerifyingTools?: string[];
}

function describeTargets(operation: { targets?: string[]; destructive?: boolean }): string {
  const targets = operation.targets === undefined ? '' : ` ${JSON.stringify(operation.targets)}`;
  return `${targets}${operation.destructive ? ' destructive' : ''}`;
}

function describeOperation(operation: Operation): string {
  switch (operation.op) {
    case 'check':
      return `check ${operation.id ?? '(no id)'} ${operation.tool}${describeTargets(operation)} (${operation.kind})`;
    case 'record':
      return (
        `record ${operation.id ?? '(no id)'} ${operation.tool}${describeTargets(operation)}` +
        `${operation.result === undefined ? '' : ` result ${JSON.stringify(operation.result)}`}` +
        ` (${operation.kind}${operation.nameOnly ? ', name only' : ''}) ${operation.outcome}`
      );
    case 'wait':
      return `wait ${operation.ms} ms`;
    default:
      return operation.op;
  }
}

// ---------------------------------------------------------------------------
// Both sides, reduced to one shape.

/** The kind of each tool of the random sequences by its name alone: the guard's classifier, and the oracle's reading of a name-only record. */
const NAME_KINDS: Readonly<Record<string, OracleKind>> = {
  pulse_control: 'write',
  pulse_query: 'resolve',
  pulse_metrics: 'read',
  pulse_question: 'user_input',
};
const classifyByName = (name: string): OracleKind => NAME_KINDS[name] ?? 'write';

/** A check refused because its id is in flight: a TypeError on both sides, the session untouched. */
const ID_IN_FLIGHT = { refused: 'call id in flight' } as const;

/** The rule names of the machine, in the oracle's words. */
const CAUSE_OF_RULE: Readonly<Record<string, RefusalCause>> = {
  'no-target': 'no-target',
  'unverified-write': 'unverified',
  'write-in-flight': 'in-flight',
  'unknown-target': 'unknown-resource',
  'needs-confirmation': 'unconfirmed',
};

/** The adapter's session in the oracle's terms (pending recoveries past their TTL already left out). */
function viewOf(guard: SessionGuard): OracleView {
  const context = guard.context;
  return {
    state: guard.state,
    wroteThisEpisode: context.wroteThisEpisode,
    readAfterWrite: context.readAfterWrite,
    blockedWritesWhileVerifying: context.consecutiveVerifyBlocks,
    refusedAnswers: context.finalAnswerBlocks,
    lastWrite: context.lastWriteTool === null ? null : { tool: context.lastWriteTool, at: context.lastWriteAt! },
    lastRead: context.lastReadTool === null ? null : { tool: context.lastReadTool, at: context.lastReadAt! },
    pending: Object.values(context.pendingRecoveries)
      .map((recovery) => ({
        tool: recovery.tool,
        attempts: recovery.attempts,
        firstBlockedAt: recovery.createdAt,
        lastBlockedAt: recovery.lastBlockedAt,
      }))
      .sort((a, b) => (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0)),
    established: [...context.establishedTargets],
    writeResources: [...context.writeTargets],
    writeDestructive: context.writeDestructive,
    confirmed: context.confirmedSinceWrite,
    links: [...(context.links ?? [])],
  };
}

/** A refusal in comparable form; the reason must name the target the error names, or none. */
function refusalOf(error: FSMBlockedError): unknown {
  const reasonAt = error.message.indexOf('POLICY_BLOCKED:');
  const named = /\(target: ("(?:[^"\\]|\\.)*")\)$/.exec(error.reason);
  return {
    allowed: false,
    state: error.state,
    cause: CAUSE_OF_RULE[error.rule],
    resource: error.target,
    named: named === null ? null : (JSON.parse(named[1]!) as string),
    messagePrefix: reasonAt < 0 ? error.message : error.message.slice(0, reasonAt),
    code: error.code,
    recoverable: error.recoverable,
  };
}

/** What one operation returned, as comparable JSON. */
function adapterResult(guard: SessionGuard, operation: Operation): unknown {
  switch (operation.op) {
    case 'check': {
      let decision: ReturnType<SessionGuard['check']>;
      try {
        decision = guard.check({
          id: operation.id,
          name: operation.tool,
          kind: operation.kind,
          ...(operation.targets === undefined ? {} : { targets: operation.targets }),
          ...(operation.destructive === undefined ? {} : { destructive: operation.destructive }),
          ...(operation.links === undefined ? {} : { links: operation.links }),
        });
      } catch (error) {
        if (error instanceof TypeError && /^check: call id '.*' is already in flight/.test(error.message)) return ID_IN_FLIGHT;
        throw error;
      }
      if (decision.allowed) return { allowed: true };
      return refusalOf(decision.error);
    }
    case 'record': {
      const call = operation.nameOnly
        ? { id: operation.id, name: operation.tool }
        : {
            id: operation.id,
            name: operation.tool,
            kind: operation.kind,
            ...(operation.targets === undefined ? {} : { targets: operation.targets }),
            ...(operation.destructive === undefined ? {} : { destructive: operation.destructive }),
          };
      const { recovered } = guard.record(
        call,
        operation.outcome,
        operation.result === undefined ? undefined : { result: operation.result },
      );
      return recovered === undefined
        ? null
        : {
            tool: recovered.tool,
            attempts: recovered.attempts,
            firstBlockedAt: recovered.createdAt,
            lastBlockedAt: recovered.lastBlockedAt,
          };
    }
    case 'answer': {
      const decision = guard.finalAnswer();
      if (decision.allowed) return { allowed: true };
      return refusalOf(decision.error);
    }
    case 'complete':
      return guard.completeVerification();
    case 'reset':
      guard.reset();
      return null;
    case 'resetKeepProgress':
      guard.resetKeepProgress();
      return null;
    case 'wait':
      return null;
  }
}

function oracleResult(oracle: SafetyOracle, operation: Operation, at: number): unknown {
  switch (operation.op) {
    case 'check': {
      let decision: ReturnType<SafetyOracle['check']>;
      try {
        decision = oracle.check(operation, at);
      } catch (error) {
        if (error instanceof TypeError) return ID_IN_FLIGHT;
        throw error;
      }
      if (decision.allowed) return { allowed: true };
      return {
        allowed: false,
        state: decision.state,
        cause: decision.cause,
        resource: decision.resource,
        named: decision.resource,
        messagePrefix: decision.messagePrefix,
        code: 'FSM_BLOCKED',
        recoverable: true,
      };
    }
    case 'record':
      return oracle.record(operation, operation.outcome, at, operation.result);
    case 'answer': {
      const decision = oracle.finalAnswer(at);
      if (decision.allowed) return { allowed: true };
      return {
        allowed: false,
        state: decision.state,
        cause: decision.cause,
        resource: decision.resource,
        named: decision.resource,
        messagePrefix: decision.messagePrefix,
        code: 'FSM_BLOCKED',
        recoverable: true,
      };
    }
    case 'complete':
      return oracle.completeVerification(at);
    case 'reset':
      oracle.reset(at);
      return null;
    case 'resetKeepProgress':
      oracle.resetKeepProgress(at);
      return null;
    case 'wait':
      return null;
  }
}

/** One operation at one time (epoch ms). */
interface Timed {
  operation: Operation;
  at: number;
}

/**
 * Runs both sides; throws at the first step where they differ, with the
 * whole operation list. Returns the number of steps run.
 */
function runBoth(
  timed: readonly Timed[],
  settings: Settings,
  makeOracle: (settings: Settings) => SafetyOracle = (s) => new SafetyOracle(s),
): number {
  let now = T0;
  const { selfVerifyingTools = [], ...options } = settings;
  const guard = createSessionGuard({
    now: () => now,
    classify: classifyByName,
    ...options,
    selfVerifying: (name) => selfVerifyingTools.includes(name),
  });
  const oracle = makeOracle(settings);
  timed.forEach(({ operation, at }, index) => {
    now = at;
    const got = JSON.stringify(adapterResult(guard, operation));
    const want = JSON.stringify(oracleResult(oracle, operation, at));
    const gotView = JSON.stringify(viewOf(guard));
    const wantView = JSON.stringify(oracle.view(at));
    if (got !== want || gotView !== wantView) {
      const listing = timed
        .map((t, i) => `${i === index ? '>' : ' '} ${String(i).padStart(2)} +${t.at - T0} ms ${describeOperation(t.operation)}`)
        .join('\n');
      throw new Error(
        `adapter and oracle differ at step ${index} (${describeOperation(operation)}) with ${JSON.stringify(settings)}\n` +
          (got !== want ? `  result:  adapter ${got}\n           oracle  ${want}\n` : '') +
          (gotView !== wantView ? `  session: adapter ${gotView}\n           oracle  ${wantView}\n` : '') +
          `operations:\n${listing}`,
      );
    }
  });
  return timed.length;
}

/** Relative waits to absolute times: operations share the clock until a wait moves it. */
function timeline(operations: readonly Operation[]): Timed[] {
  let at = T0;
  return operations.map((operation) => {
    if (operation.op === 'wait') at += operation.ms;
    return { operation, at };
  });
}

/** A generated path as operations at the times its events carry. */
function pathOperations(events: readonly SafetyEvent[]): Timed[] {
  return events.map((event, index) => {
    const call = toolCallOf(event);
    const base = call && {
      ...(call.id === undefined ? {} : { id: call.id }),
      tool: call.name,
      kind: call.kind,
      ...(call.targets === undefined ? {} : { targets: call.targets }),
      ...(call.destructive === undefined ? {} : { destructive: call.destructive }),
    };
    const links = event.type === 'tool.requested' && call?.links !== undefined ? { links: call.links } : {};
    const result = recordOptionsOf(event)?.result;
    const operation: Operation =
      event.type === 'tool.requested'
        ? { op: 'check', ...base!, ...links }
        : event.type === 'tool.succeeded'
          ? { op: 'record', ...base!, outcome: 'success', ...(result === undefined ? {} : { result }) }
          : event.type === 'tool.failed'
            ? { op: 'record', ...base!, outcome: 'error' }
            : event.type === 'answer.requested'
              ? { op: 'answer' }
              : event.type === 'verification.completed'
                ? { op: 'complete' }
                : event.type === 'session.reset'
                  ? { op: 'reset' }
                  : event.type === 'session.resetKeepingProgress'
                    ? { op: 'resetKeepProgress' }
                    : { op: 'wait', ms: event.at - (events[index - 1]?.at ?? event.at) };
    return { operation, at: event.at };
  });
}

// ---------------------------------------------------------------------------
// Random sequences.

const kinds = fc.constantFrom<OracleKind>('resolve', 'read', 'write', 'user_input', 'neutral');
/** Few tools and ids, so calls collide: same tool blocked twice, same id checked twice, records that match. */
const tools = fc.constantFrom('pulse_control', 'pulse_query', 'pulse_metrics', 'pulse_question');
const ids = fc.option(fc.constantFrom('a', 'b', 'c'), { nil: undefined, freq: 4 });
const outcomes = fc.constantFrom<'success' | 'error'>('success', 'success', 'error');
/**
 * Targets that touch and do not: a directory, its file and its sibling
 * (`/srv/a` and `/srv/ab` do not touch), the same directory written
 * differently, a relative path under `.`, `~` and a path climbing out of
 * it, ids and a table.
 */
const TARGET_POOL = [
  '/srv',
  '/srv/a',
  '/srv/a/conf',
  '/srv/ab',
  '/srv/./a/',
  '/srv/x/../a//conf',
  '.',
  'src/app.ts',
  '~',
  '~/../etc',
  'reservation_id=A',
  'reservation_id=B',
  'table:users',
  // Issue 24: places known only at run time, named places and their wildcards, a path through a link.
  '?/$DIR/',
  '?/sh <stdin>',
  'git:/srv/a',
  'git:/srv/b',
  'process:*',
  'process:node',
  'k8s:*',
  'k8s:pod/*',
  'k8s:pod/x',
  'k8s:deployment/x',
  'host:h:/etc/app.conf',
  '/srv/a/up/x',
];
/** Escaping links a write may make (issue 24): paths, one under another, and entries that are no paths; now and then too many. */
const LINK_POOL = ['/srv/a/up', '/srv/a/up/deeper', 'src', '~', '../out', 'reservation_id=A', '?/x', 'git:/srv/a'];
const linkLists = fc.oneof(
  { weight: 6, arbitrary: fc.constant(undefined) },
  { weight: 3, arbitrary: fc.array(fc.constantFrom(...LINK_POOL), { minLength: 1, maxLength: 2 }) },
  { weight: 1, arbitrary: fc.constant(Array.from({ length: 33 }, (_, i) => `/l/${i}`)) },
);
/** A call's targets: none known (most often), one to three from the pool, or now and then more than a call may name. */
const targetLists = fc.oneof(
  { weight: 3, arbitrary: fc.constant(undefined) },
  { weight: 4, arbitrary: fc.array(fc.constantFrom(...TARGET_POOL), { minLength: 1, maxLength: 3 }) },
  { weight: 1, arbitrary: fc.constant<string[]>([]) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(...TARGET_POOL).map((extra) => [...Array.from({ length: 32 }, (_, i) => `/srv/a/f${i}`), extra]),
  },
);
const call = fc
  .record({
    id: ids,
    tool: tools,
    kind: kinds,
    targets: targetLists,
    destructive: fc.constantFrom(undefined, false, true),
    links: linkLists,
  })
  .map(({ targets, destructive, links, ...rest }) => ({
    ...rest,
    ...(targets === undefined ? {} : { targets }),
    ...(destructive === undefined ? {} : { destructive }),
    ...(links === undefined ? {} : { links }),
  }));
/** Two calls of one tool without ids, of any kinds and targets: an outcome of either could be the other's. */
const sameToolPair = fc.tuple(tools, kinds, kinds, targetLists, targetLists).map(
  ([tool, kindA, kindB, targetsA, targetsB]) =>
    [
      { tool, kind: kindA, ...(targetsA === undefined ? {} : { targets: targetsA }) },
      { tool, kind: kindB, ...(targetsB === undefined ? {} : { targets: targetsB }) },
    ] as const,
);
/** A write's result: none, self-verifying (text or object), and near misses of it (DESIGN.md §1). */
const results = fc.constantFrom<unknown>(
  undefined,
  undefined,
  '{"verification": {"ok": true}}',
  'done: {"verification":{"ok":true},"state":"saved"}',
  { verification: { ok: true } },
  '{"verification": {"ok": "true"}}',
  '{"verification": {"ok": true}} trailing text',
  'ok',
);
/** A record gives the tool's name alone one time in three. */
const nameOnly = fc.constantFrom(false, false, true);
/** Around the ten-minute TTL, exactly on it, and anywhere up to twice it. */
const waits = fc.oneof(
  fc.constantFrom(1, 1_000, TEN_MINUTES_MS - 1, TEN_MINUTES_MS, TEN_MINUTES_MS + 1),
  fc.integer({ min: 0, max: 2 * TEN_MINUTES_MS }),
);

const withId = <T extends { id?: string | undefined }>(value: T) => {
  const { id, ...rest } = value;
  return id === undefined ? rest : { ...rest, id };
};

/** The record of a call: with its kind (and targets), or (`byName`) with the tool's name alone; with a result when given. */
function recordOf(
  c: { id?: string | undefined; tool: string; kind: OracleKind; targets?: string[]; destructive?: boolean },
  outcome: 'success' | 'error',
  byName: boolean,
  result?: unknown,
): Operation {
  const withResult = result === undefined ? {} : { result };
  return byName
    ? { op: 'record', ...withId({ id: c.id, tool: c.tool, kind: classifyByName(c.tool) }), outcome, nameOnly: true, ...withResult }
    : { op: 'record', ...withId(c), outcome, ...withResult };
}

/** Groups of operations; a group is one step of a loop. */
const group: fc.Arbitrary<Operation[]> = fc.oneof(
  { weight: 4, arbitrary: call.map((c) => [{ op: 'check' as const, ...withId(c) }]) },
  {
    weight: 3,
    arbitrary: fc.tuple(call, outcomes, nameOnly, results).map(([c, outcome, byName, result]) => [recordOf(c, outcome, byName, result)]),
  },
  {
    weight: 4,
    arbitrary: fc
      .tuple(call, outcomes, nameOnly, results)
      .map(([c, outcome, byName, result]): Operation[] => [{ op: 'check', ...withId(c) }, recordOf(c, outcome, byName, result)]),
  },
  {
    // Parallel calls: check A, check B, record B, record A.
    weight: 2,
    arbitrary: fc
      .tuple(call, call, outcomes, outcomes, nameOnly, nameOnly)
      .map(([a, b, outcomeA, outcomeB, byNameA, byNameB]): Operation[] => [
        { op: 'check', ...withId(a) },
        { op: 'check', ...withId(b) },
        recordOf(b, outcomeB, byNameB),
        recordOf(a, outcomeA, byNameA),
      ]),
  },
  {
    // Parallel calls of one tool without ids, recorded in either order: whose outcome is whose?
    weight: 2,
    arbitrary: fc
      .tuple(sameToolPair, outcomes, outcomes, nameOnly, nameOnly, fc.boolean())
      .map(([[a, b], outcomeA, outcomeB, byNameA, byNameB, bFirst]): Operation[] => {
        const records = [recordOf(a, outcomeA, byNameA), recordOf(b, outcomeB, byNameB)];
        return [{ op: 'check', ...a }, { op: 'check', ...b }, ...(bFirst ? records.reverse() : records)];
      }),
  },
  { weight: 1, arbitrary: fc.constant<Operation[]>([{ op: 'answer' }]) },
  { weight: 1, arbitrary: fc.constant<Operation[]>([{ op: 'complete' }]) },
  { weight: 1, arbitrary: fc.constant<Operation[]>([{ op: 'resetKeepProgress' }]) },
  { weight: 1, arbitrary: fc.constant<Operation[]>([{ op: 'reset' }]) },
  { weight: 2, arbitrary: waits.map((ms): Operation[] => [{ op: 'wait', ms }]) },
);

const sequences = fc.record({
  settings: fc.record({
    strictFailedWrites: fc.boolean(),
    autoCompleteVerification: fc.boolean(),
    confirmDestructive: fc.boolean(),
    selfVerifyingTools: fc.constantFrom<string[]>([], [], ['pulse_control']),
  }),
  // `size: 'max'`: lengths spread over the whole range, not clustered near zero.
  operations: fc
    .array(group, { minLength: 1, maxLength: MAX_OPERATIONS, size: 'max' })
    .map((groups) => groups.flat().slice(0, MAX_OPERATIONS)),
});

/**
 * Checks `runs` random sequences; on a disagreement, throws with the
 * sequence fast-check shrank it to, listed one operation a line, and the
 * seed to replay it. Returns the number of operations run.
 */
function agreeOnRandomSequences(
  runs: number,
  makeOracle?: (settings: Settings) => SafetyOracle,
): { sequences: number; operations: number } {
  let sequenceCount = 0;
  let operationCount = 0;
  const property = fc.property(sequences, ({ settings, operations }) => {
    sequenceCount += 1;
    operationCount += runBoth(timeline(operations), settings, makeOracle);
  });
  const details = fc.check(property, { numRuns: runs });
  if (details.failed) {
    const [shrunk] = details.counterexample ?? [];
    const reason = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    throw new Error(
      `a random sequence makes the adapter and the oracle disagree ` +
        `(fast-check seed ${details.seed}, path "${details.counterexamplePath}"); ` +
        `shrunk to ${shrunk?.operations.length ?? '?'} operations:\n${reason}`,
    );
  }
  return { sequences: sequenceCount, operations: operationCount };
}

// ---------------------------------------------------------------------------

/**
 * Path sets compared: the machine's own vocabulary and a default loop's, each
 * plain and strict, and a default loop's with targets and confirmDestructive
 * (when deep: all eight without targets, all eight with).
 */
const PATH_SETTINGS: SafetyPathOptions[] = EXHAUSTIVE
  ? [false, true].flatMap((targets) =>
      [false, true].flatMap((autoCompleteVerification) =>
        [false, true].flatMap((includeUncheckedOutcomes) =>
          [false, true].map((strictFailedWrites) => ({
            autoCompleteVerification,
            includeUncheckedOutcomes,
            strictFailedWrites,
            ...(targets ? { targets, confirmDestructive: true } : {}),
          })),
        ),
      ),
    )
  : [
      { autoCompleteVerification: false, includeUncheckedOutcomes: true, strictFailedWrites: false },
      { autoCompleteVerification: false, includeUncheckedOutcomes: true, strictFailedWrites: true },
      { autoCompleteVerification: true, includeUncheckedOutcomes: false, strictFailedWrites: false },
      { autoCompleteVerification: true, includeUncheckedOutcomes: false, strictFailedWrites: true },
      {
        autoCompleteVerification: true,
        includeUncheckedOutcomes: false,
        strictFailedWrites: false,
        targets: true,
        confirmDestructive: true,
      },
    ];

describe('adapter against the independent oracle', () => {
  for (const options of PATH_SETTINGS) {
    const settings: Settings = {
      strictFailedWrites: options.strictFailedWrites === true,
      autoCompleteVerification: options.autoCompleteVerification !== false,
      confirmDestructive: options.confirmDestructive === true,
    };
    const name = JSON.stringify(options);
    it(
      `agrees at every step of every shortest and simple path, ${name}`,
      () => {
        // The simple paths ignore `targets`: with it, only the shortest are new.
        const paths = [...getShortestSafetyPaths(options), ...(options.targets === true ? [] : getSimpleSafetyPaths(options))];
        let steps = 0;
        for (const path of paths) steps += runBoth(pathOperations(path.steps.map((step) => step.event)), settings);
        console.info(`differential: ${paths.length} generated paths (${steps} steps) agree, ${name}`);
        expect(paths.length).toBeGreaterThan(0);
      },
      LONG_TEST_MS,
    );
  }

  it(
    `agrees at every step of ${SEQUENCES.toLocaleString('en-US')} random sequences of up to ${MAX_OPERATIONS} operations`,
    () => {
      const { sequences: count, operations } = agreeOnRandomSequences(SEQUENCES);
      console.info(`differential: ${count} random sequences (${operations} operations) agree`);
      expect(count).toBeGreaterThanOrEqual(SEQUENCES);
    },
    EXHAUSTIVE ? 3_600_000 : 120_000,
  );

  it('a disagreement fails with the shrunk operation list', () => {
    // An oracle told the opposite strictness disagrees as soon as a write fails.
    const misinformed = (settings: Settings) => new SafetyOracle({ ...settings, strictFailedWrites: !settings.strictFailedWrites });
    expect(() => agreeOnRandomSequences(1_000, misinformed)).toThrow(
      /shrunk to \d+ operations:\nadapter and oracle differ at step \d+ \(record .*\(write(, name only)?\) error\)[\s\S]*operations:\n/,
    );
  });
});
