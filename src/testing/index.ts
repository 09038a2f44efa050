/**
 * Model-based testing for agent loops (the `pulse-safety-fsm/testing` entry):
 * paths through the safety machine's graph, each an event list with the
 * state and the gate's decision expected at every step, so an application
 * can replay every path through its own agent loop and check that the loop
 * enforces what the machine decides.
 *
 * The graph is made finite by an abstraction of the machine's context (see
 * `abstractSafetyState`), then walked with `@xstate/graph`: shortest paths
 * reach every abstract state through every transition that enters it;
 * simple paths take every cycle-free route between the states that decide
 * anything (see `abstractDecisionState`).
 *
 * With `targets`, calls also name one of two targets or none, writes may
 * be destructive and results may verify themselves (DESIGN.md §1, §5), so
 * the paths reach the target-aware rules as well. With `turnBased`, the
 * paths are those of a loop that runs one call at a time.
 *
 * For `@xstate/graph` itself on the raw machine, `shortestPathsGraphOptions`,
 * `simplePathsGraphOptions` and `testModelGraphOptions` give the same event
 * sets and state keys as `getShortestPaths`, `getSimplePaths` and
 * `createTestModel` options.
 *
 * Spec: ASSISTANT_SAFETY.md (whole); DESIGN.md §3 (correlation by call id,
 * WRITING, strict failed writes, time as an input, auto-completed
 * verification), §1 and §5 (targets, destructive and self-verifying writes).
 */
import { getShortestPaths, getSimplePaths } from '@xstate/graph';
import { createActor, type ActorLogic, type SnapshotFrom } from 'xstate';
import { z } from 'zod';
import { safetyMachine } from '../../machines/safety.machine.js';
import { MAX_TIME_MS, RECOVERY_TTL_MS } from '../../machines/safety.policy.js';
import type {
  BlockRule,
  GateDecidedEvent,
  RecoverySucceededEvent,
  SafetyEvent,
  SafetyInput,
  SafetyState,
  ToolKind,
} from '../../machines/safety.types.js';
import { TOOL_KINDS } from '../../machines/safety.types.js';

/** A snapshot of the safety machine. */
export type SafetySnapshot = SnapshotFrom<typeof safetyMachine>;

/**
 * What the abstractions read of a session: a snapshot's state value and
 * context, or a session guard's (`{ value: guard.state, context: guard.context }`),
 * so a system under test can be compared with a path by its abstract state.
 */
export type SessionView = Pick<SafetySnapshot, 'value' | 'context'>;

/**
 * The tool name used for each kind in generated events, unless
 * `SafetyPathOptions.tools` says otherwise: Pulse catalog names, and
 * `calculate` (a pure-computation tool of the tau-airline catalog) for
 * `neutral`, since the Pulse catalog has none. A loop that classifies calls
 * by name alone must pass `tools` its own catalog classifies as each kind;
 * `toolCallOf` gives the kind with the call, so a loop that passes it on to
 * `check` and `record` needs no catalog.
 */
export const DEFAULT_PATH_TOOLS: Readonly<Record<ToolKind, string>> = {
  resolve: 'pulse_query',
  read: 'pulse_metrics',
  write: 'pulse_control',
  user_input: 'pulse_question',
  neutral: 'calculate',
};

/**
 * How far a `clock.ticked` step moves a clock (ms): ten minutes
 * (`RECOVERY_TTL_MS`) and one millisecond, so every pending recovery
 * blocked before it has expired.
 */
export const CLOCK_JUMP_MS = RECOVERY_TTL_MS + 1;

/** Default time of a path's first step (epoch ms): 2023-11-14T22:13:20Z. */
export const DEFAULT_PATH_START = 1_700_000_000_000;

/** How paths are generated. Validated: unknown keys and wrong types throw (see `getShortestSafetyPaths`). */
export interface SafetyPathOptions {
  /** Tool name per kind (default `DEFAULT_PATH_TOOLS`). Events carry the kind as well. */
  tools?: Partial<Record<ToolKind, string>>;
  /** Generate for a guard created with `strictFailedWrites` (DESIGN.md §3.8); default false. */
  strictFailedWrites?: boolean;
  /**
   * Generate for a guard that completes verification itself after a verifying
   * read, as `createSessionGuard` does by default; default true. With false,
   * paths contain `verification.completed` steps (call `completeVerification()`).
   */
  autoCompleteVerification?: boolean;
  /**
   * Also record outcomes of calls the gate never admitted, as a loop in the
   * original's record-only style does; default false, so every path is one
   * a loop that records only the calls it ran can replay. Shortest paths
   * only. No path checks an id while a call of it is in flight: the guard
   * refuses that with a TypeError (`SessionGuard.check`).
   */
  includeUncheckedOutcomes?: boolean;
  /**
   * Time of the first step (epoch ms); default `DEFAULT_PATH_START`. Within
   * ±`MAX_TIME_MS` less one day, so every step's time is one the guard's
   * clock may read (a path spans well under a day).
   */
  startAt?: number;
  /**
   * Also generate calls with targets (`PATH_TARGETS`: a directory and a file
   * under it, or none), a destructive write, and writes whose result
   * verifies itself (DESIGN.md §1, §5); default false. Shortest paths only
   * (the simple paths would number in the millions): `getSimpleSafetyPaths`
   * ignores it. Replay a step's call with `toolCallOf` (targets and
   * destructive flag given) and its outcome with `recordOptionsOf`.
   */
  targets?: boolean;
  /** Generate for a guard created with `confirmDestructive` (DESIGN.md §5.6); default false. */
  confirmDestructive?: boolean;
  /**
   * Generate for a turn-based agent loop, one that checks, runs and records
   * each call before anything else happens; default false. While a call is
   * in flight, the only next step is its outcome (success or failure): no
   * second call, final answer, reset, verification or clock jump comes
   * between a call's check and its record, so no path has two calls in
   * flight. With `includeUncheckedOutcomes`, an outcome without a check is
   * recorded only when no call is in flight. The write-in-flight refusals
   * (WRITING) cannot happen in such a loop, so these paths do not reach them.
   */
  turnBased?: boolean;
}

/** How far the last step of a path may be after its first (epoch ms): one day, far above any generated path. */
export const MAX_PATH_SPAN_MS = 86_400_000;

const START_RANGE = `must be an epoch-millisecond number within ±${MAX_TIME_MS - MAX_PATH_SPAN_MS}`;
const toolName = z.string().min(1, 'must be a non-empty tool name');
const optionsSchema = z
  .strictObject({
    tools: z
      .strictObject({
        resolve: toolName.optional(),
        read: toolName.optional(),
        write: toolName.optional(),
        user_input: toolName.optional(),
        neutral: toolName.optional(),
      })
      .optional(),
    strictFailedWrites: z.boolean().optional(),
    autoCompleteVerification: z.boolean().optional(),
    includeUncheckedOutcomes: z.boolean().optional(),
    targets: z.boolean().optional(),
    confirmDestructive: z.boolean().optional(),
    turnBased: z.boolean().optional(),
    startAt: z
      .number()
      .min(-(MAX_TIME_MS - MAX_PATH_SPAN_MS), START_RANGE)
      .max(MAX_TIME_MS - MAX_PATH_SPAN_MS, START_RANGE)
      .optional(),
  })
  .optional();

/**
 * Checks path options (or undefined, for the defaults).
 *
 * @throws TypeError naming every bad option, e.g.
 *   `invalid path options: strictFailedWrites: expected boolean, received string`.
 */
function parseOptions(options: unknown): SafetyPathOptions {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) =>
      issue.path.length === 0 ? issue.message : `${issue.path.join('.')}: ${issue.message}`,
    );
    throw new TypeError(`invalid path options: ${problems.join('; ')}`);
  }
  return parsed.data ?? {};
}

/** A decision the gate must make at a step; `rule` is null when allowed. */
export interface ExpectedDecision {
  allowed: boolean;
  rule: BlockRule | null;
}

/** One step of a path. */
export interface SafetyPathStep {
  /**
   * The event to replay. `event.at` (epoch ms) is what the loop's clock must
   * read during the step; times only grow, and a `clock.ticked` step jumps
   * past the ten-minute recovery TTL (nothing to call: just move the clock).
   * Tool events carry `callId`, `tool` and `kind`.
   */
  event: SafetyEvent;
  /** The session's state after the step. */
  state: SafetyState;
  /** For `tool.requested` and `answer.requested`, the gate's decision; null for other events. */
  decision: ExpectedDecision | null;
  /** The pending recovery this step's success clears (a recovery), as its id; else null. */
  recoveryId: string | null;
}

/** A path from a fresh session. */
export interface SafetyPath {
  /** Where it ends and how, e.g. `READING: check resolve-1 allowed → ok resolve-1`. */
  description: string;
  steps: SafetyPathStep[];
}

/** Call ids: `<kind>-1`, and `<kind>-2` for a second write while the first is in flight; few ids keep the graph finite. */
function callIdFor(kind: ToolKind, n: 1 | 2): string {
  return `${kind}-${n}`;
}

/** Model time of every generated event but the clock jump; paths are re-timed when returned. */
const MODEL_TIME = 0;

function hasInFlight(snapshot: SafetySnapshot, callId: string): boolean {
  return snapshot.context.inFlight.some((call) => call.key === `id:${callId}`);
}

/**
 * The two targets of paths with targets: a directory and a file under it,
 * so a read of the first establishes and verifies the second, and a read of
 * the second verifies, but does not establish, the first (DESIGN.md §5.3-5.4).
 */
export const PATH_TARGETS: readonly [string, string] = ['/srv/app', '/srv/app/app.conf'];

/** The result a self-verifying write's outcome is replayed with (DESIGN.md §1). */
export const SELF_VERIFYING_RESULT = '{"verification":{"ok":true}}';

/** Which event cases a path set tries: the tool kinds, and writes recorded without an id. */
export interface EventCaseSet {
  kinds: readonly ToolKind[];
  /** With `includeUncheckedOutcomes`: also record a write's outcome without an id or a check. */
  anonymousWrites: boolean;
  /**
   * The target lists each resolve, read and write is checked with; `[[]]`
   * for none. User input, and outcomes recorded without a check, name no
   * target. A write is also checked destructive, with the first list that
   * names a target, and a write's success also recorded self-verified, when
   * `targetCases` is set.
   */
  targetLists: readonly (readonly string[])[];
  targetCases: boolean;
  /** With `includeUncheckedOutcomes`: the kinds whose outcomes are also recorded without a check (default all of `kinds`). */
  uncheckedKinds?: readonly ToolKind[];
}

/** The event cases of the shortest paths: all five kinds, and (with unchecked outcomes) anonymous writes; no targets. */
export const SHORTEST_PATH_CASES: EventCaseSet = { kinds: TOOL_KINDS, anonymousWrites: true, targetLists: [[]], targetCases: false };

/**
 * The event cases of the shortest paths with targets: a read, a write and
 * user input (a resolve is a read to every target rule, and `neutral` is
 * `user_input` to the machine, DESIGN.md §3.6; the paths without targets
 * take both), each with no target or either target of `PATH_TARGETS`; a
 * destructive write; self-verifying write results; with unchecked
 * outcomes, those of writes only (a self-verifying write recorded without
 * a check is the one target-aware transition that needs them).
 */
export const TARGET_PATH_CASES: EventCaseSet = {
  kinds: ['read', 'write', 'user_input'],
  anonymousWrites: true,
  targetLists: [[], [PATH_TARGETS[0]], [PATH_TARGETS[1]]],
  targetCases: true,
  uncheckedKinds: ['write'],
};

/**
 * The event cases of the simple paths: every kind but `neutral`, which the
 * machine treats exactly as `user_input` (DESIGN.md §3.6; the shortest paths
 * take it). With it, the simple paths would double again. No targets.
 */
export const SIMPLE_PATH_CASES: EventCaseSet = {
  kinds: ['resolve', 'read', 'write', 'user_input'],
  anonymousWrites: false,
  targetLists: [[]],
  targetCases: false,
};

/**
 * The events tried from a snapshot, one case per event type and tool kind
 * (`cases.kinds`): each kind checked (`tool.requested`), succeeded and
 * failed, under the call id `<kind>-1` (a second write checked while the
 * first is in flight: `write-2`); the final answer; `verification.completed` (unless
 * auto-completed); both resets; and a clock jump of ten minutes and one
 * millisecond. A call is checked only while no other non-write call is in
 * flight (a write and one other call may run in parallel: enough for every
 * interleaving the rules tell apart, and it keeps the graph small), and
 * only under an id not in flight (the guard refuses a second check of an
 * id in flight). Without `includeUncheckedOutcomes`, outcomes are tried
 * only for calls in flight; with it, any id's outcome may be recorded at
 * any time, and so may a write's without an id (with `cases.anonymousWrites`).
 *
 * All events but the clock jump share one model time: with a single time,
 * only a jump can age a pending recovery, so "expired" means "a jump happened
 * since its latest block", which the re-timed paths preserve.
 *
 * With targets (`cases.targetLists`), each check of a resolve, read or
 * write is tried once per target list (and a write once more, destructive,
 * with the first list naming a target), each outcome of a call in flight
 * is recorded with that call's targets (as a loop records the call it
 * checked), and each success of a write once more self-verified
 * (`selfVerified: true`; replay with `recordOptionsOf`). Unchecked outcomes
 * and user input name no target: they reach no target rule a checked call
 * does not, and each target list would multiply the graph again.
 *
 * With `turnBased`, while a call is in flight only its outcomes are tried
 * (the loop waits for the call it runs); everything else only when no call
 * is in flight.
 */
export function safetyEventCases(
  snapshot: SafetySnapshot,
  options: SafetyPathOptions = {},
  cases: EventCaseSet = SHORTEST_PATH_CASES,
): SafetyEvent[] {
  const { kinds } = cases;
  const tools = { ...DEFAULT_PATH_TOOLS, ...options.tools };
  /** A turn-based loop waiting for the outcome of the call it runs: nothing else happens meanwhile. */
  const waiting = options.turnBased === true && snapshot.context.inFlight.length > 0;
  const unchecked = options.includeUncheckedOutcomes === true && !waiting;
  const at = MODEL_TIME;
  const events: SafetyEvent[] = [];
  const otherCallInFlight = (callId: string) =>
    snapshot.context.inFlight.some((call) => call.kind !== 'write' && call.key !== `id:${callId}`);
  const withTargets = (targets: readonly string[]) => (targets.length === 0 ? {} : { targets: [...targets] });
  /** A success, failure and (for a write, with target cases) self-verified success of one call. */
  const outcomes = (base: Omit<SafetyEvent & { type: 'tool.succeeded' }, 'type'>): SafetyEvent[] => [
    { type: 'tool.succeeded', ...base },
    { type: 'tool.failed', ...base },
    ...(cases.targetCases && base.kind === 'write' ? [{ type: 'tool.succeeded' as const, ...base, selfVerified: true }] : []),
  ];
  const firstTargeted = cases.targetLists.find((targets) => targets.length > 0);
  for (const kind of kinds) {
    const call = { tool: tools[kind], kind, at };
    const first = callIdFor(kind, 1);
    const second = callIdFor(kind, 2);
    const firstInFlight = hasInFlight(snapshot, first);
    // While a write is in flight, a loop that never reuses an id asks for
    // another one under a second id (the write WRITING refuses).
    const checkId = !firstInFlight ? first : kind === 'write' && !hasInFlight(snapshot, second) ? second : null;
    if (checkId !== null && !waiting && (kind === 'write' || !otherCallInFlight(checkId))) {
      for (const targets of kind === 'user_input' || kind === 'neutral' ? [[]] : cases.targetLists) {
        events.push({ type: 'tool.requested', callId: checkId, ...call, ...withTargets(targets) });
      }
      if (kind === 'write' && cases.targetCases && firstTargeted !== undefined) {
        events.push({ type: 'tool.requested', callId: checkId, ...call, ...withTargets(firstTargeted), destructive: true });
      }
    }
    for (const callId of [first, second]) {
      const admitted = snapshot.context.inFlight.find((c) => c.key === `id:${callId}`);
      if (admitted !== undefined) {
        events.push(...outcomes({ callId, ...call, ...withTargets(admitted.targets ?? []) }));
      } else if (callId === first && unchecked && (cases.uncheckedKinds ?? kinds).includes(kind)) {
        events.push(...outcomes({ callId, ...call }));
      }
    }
  }
  if (unchecked && cases.anonymousWrites && kinds.includes('write')) {
    // A write recorded without an id or a check: the only way to record a
    // write while another is in flight, since one id per kind would settle it.
    const write = { tool: tools.write, kind: 'write' as const, at };
    events.push(...outcomes(write));
  }
  if (waiting) return events;
  events.push({ type: 'answer.requested', at });
  if (options.autoCompleteVerification === false) events.push({ type: 'verification.completed', at });
  events.push(
    { type: 'session.reset', at },
    { type: 'session.resetKeepingProgress', at },
    { type: 'clock.ticked', at: at + RECOVERY_TTL_MS + 1 },
  );
  return events;
}

/** Consecutive blocked writes beyond this many look alike to the abstraction (the old waiver came at three). */
const COUNTER_CAP = 3;
/** Attempts of a pending recovery beyond this many look alike. */
const ATTEMPTS_CAP = 2;

/** Calls in flight, abstracted: key, kind, whether a read would verify the current write, targets, destructive. */
function abstractInFlight(snapshot: SessionView, kinds: readonly ToolKind[]): unknown[] {
  const context = snapshot.context;
  return context.inFlight
    .filter((call) => kinds.includes(call.kind))
    .map((call) => [
      call.key.startsWith('anon:') ? `anon:${call.tool}` : call.key,
      call.kind,
      call.verifiesWrite === null ? null : call.verifiesWrite === context.writeSeq ? 'current' : 'stale',
      ...(call.targets === undefined && call.destructive === undefined ? [] : [call.targets ?? [], call.destructive === true]),
    ])
    .sort((a, b) => (a[0]! < b[0]! ? -1 : a[0]! > b[0]! ? 1 : 0));
}

/**
 * The target part of an abstract state: established targets (sorted: with
 * two targets nothing is ever dropped, so their order decides nothing), the
 * last write's targets, and a confirmation when it can matter. Empty for a
 * session without targets or confirmations, so the abstraction of paths
 * without targets is what it always was.
 */
function abstractTargets(snapshot: SessionView): unknown[] {
  const context = snapshot.context;
  const established = [...context.establishedTargets].sort();
  const confirmed = context.confirmDestructive && context.confirmedSinceWrite;
  if (established.length === 0 && context.writeTargets.length === 0 && !context.confirmDestructive) return [];
  return [established, context.writeTargets, context.confirmDestructive, confirmed];
}

/**
 * The finite abstraction of a snapshot that the shortest paths walk over:
 * a JSON string of what can change a later decision, state, recovery or
 * event case, with everything unbounded cut down to a few values.
 *
 * - Kept: the state; read-after-write; the calls in flight (by key and kind:
 *   the event cases depend on them); whether the session checks its calls;
 *   strict failed writes.
 * - Capped: the consecutive blocked-write counter at 3, so three and more
 *   blocked writes in a row are reached (the counter decides nothing; the
 *   cap keeps "it never waives" in view); a pending recovery's attempts at 2.
 * - Abstracted: times (every event but the clock jump happens at one model
 *   time, so a pending recovery is alive until a jump, see
 *   `safetyEventCases`); `writeSeq`, which matters only as "would this read
 *   in flight verify the current write" (`current` / `stale` / null);
 *   `anonSeq` (it only numbers keys).
 * - Kept, with targets: the established targets, the last write's targets,
 *   a confirmation (with `confirmDestructive`), and each call's targets and
 *   destructive flag.
 * - Dropped: `wroteThisEpisode`, the final-answer block count, the last read
 *   and write records, the last write's destructive flag: no guard reads them.
 *
 * Calls in flight are listed by key (a stable sort): with ids and fewer than
 * `MAX_IN_FLIGHT` calls their order decides nothing (the event cases never
 * check an id in flight, so no two calls share a key).
 */
export function abstractSafetyState(snapshot: SessionView): string {
  const context = snapshot.context;
  const recoveries = Object.values(context.pendingRecoveries)
    .map((recovery) => [recovery.tool, Math.min(recovery.attempts, ATTEMPTS_CAP)] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return JSON.stringify([
    snapshot.value,
    context.readAfterWrite,
    Math.min(context.consecutiveVerifyBlocks, COUNTER_CAP),
    recoveries,
    abstractInFlight(snapshot, TOOL_KINDS),
    context.checksCalls,
    context.strictFailedWrites,
    context.lastReadAt === null,
    ...abstractTargets(snapshot),
  ]);
}

/**
 * The coarse abstraction the simple paths walk over: the state,
 * read-after-write, and the calls in flight (by key and kind, and whether a
 * read would verify the current write). These decide every refusal and
 * which events can come next, for a loop that checks every call before
 * recording it (the simple paths' event cases); counters and recoveries
 * decide neither, and leaving them out keeps the simple paths in the
 * thousands. It does not fit outcomes recorded without a check, which
 * verify or not depending on whether the session has ever checked a call.
 */
export function abstractDecisionState(snapshot: SessionView): string {
  const context = snapshot.context;
  const inFlight = context.inFlight
    .map((call) => [call.key, call.kind, call.verifiesWrite === context.writeSeq, ...(call.targets ?? [])] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return JSON.stringify([snapshot.value, context.readAfterWrite, inFlight, context.lastReadAt === null, ...abstractTargets(snapshot)]);
}

/**
 * The coarser abstraction of the shortest paths with targets: what decides
 * the target rules and the event cases (the state, read-after-write, the
 * calls in flight with their targets, whether the session checks its calls,
 * the established targets, the last write's targets, a confirmation), but
 * not the blocked-write counter or the pending recoveries, which no target
 * rule reads and the paths without targets cover. With them the graph
 * would not be enumerable in minutes.
 */
export function abstractTargetState(snapshot: SessionView): string {
  const context = snapshot.context;
  return JSON.stringify([
    snapshot.value,
    context.readAfterWrite,
    abstractInFlight(snapshot, TOOL_KINDS),
    context.checksCalls,
    context.strictFailedWrites,
    context.lastReadAt === null,
    ...abstractTargets(snapshot),
  ]);
}

/**
 * The vertex key of the shortest paths with targets: `abstractTargetState`
 * and the transitions that led to it (`selectedTransitions`), so every
 * transition into every such state is taken; except the final answer,
 * CompleteVerification and the clock jump, which no target rule changes
 * (the paths without targets take each of them in every state): a state
 * they lead to is keyed by itself alone, which keeps the graph to about
 * half.
 */
export function targetCoverageKey(snapshot: SafetySnapshot, event: SafetyEvent | undefined, previous: SafetySnapshot | undefined): string {
  const state = abstractTargetState(snapshot);
  if (previous === undefined || event === undefined) return state;
  if (event.type === 'answer.requested' || event.type === 'verification.completed' || event.type === 'clock.ticked') return state;
  return `${state} via ${selectedTransitions(previous, event)}`;
}

/**
 * The machine's transitions an event selects from a snapshot, as one string
 * `<state>|<source node>|<event type>#<index>` per transition, joined by `+`
 * (`<state>|none` when the event selects nothing). Root transitions (reset,
 * clock) are told apart by the state they leave.
 */
export function selectedTransitions(snapshot: SafetySnapshot, event: SafetyEvent): string {
  const selected = safetyMachine.getTransitionData(snapshot, event);
  if (selected.length === 0) return `${String(snapshot.value)}|none`;
  return selected
    .map((t) => {
      const index = (t.source.transitions.get(t.eventType) ?? []).indexOf(t);
      return `${String(snapshot.value)}|${t.source.id}|${t.eventType}#${index}`;
    })
    .join('+');
}

/**
 * The vertex key of the shortest paths: the abstract state
 * (`abstractSafetyState`), the transitions that led to it
 * (`selectedTransitions`), and whether that step cleared a pending recovery
 * (`recovered`) or let one expire (`expired`). Reaching every such vertex
 * takes every transition into every abstract state, and every recovery and
 * expiry, not only the cheapest way there.
 */
export function transitionCoverageKey(
  snapshot: SafetySnapshot,
  event: SafetyEvent | undefined,
  previous: SafetySnapshot | undefined,
): string {
  const state = abstractSafetyState(snapshot);
  if (previous === undefined || event === undefined) return state;
  const dropped = Object.keys(snapshot.context.pendingRecoveries).length < Object.keys(previous.context.pendingRecoveries).length;
  const effect = !dropped ? '' : event.type === 'clock.ticked' ? ' (expired)' : ' (recovered)';
  return `${state} via ${selectedTransitions(previous, event)}${effect}`;
}

/**
 * The machine as path logic. It completes verification by itself when its
 * input says `autoCompleteVerification` (its default, as `createSessionGuard`'s),
 * so paths need no wrapper for it.
 */
const pathLogic = safetyMachine as unknown as ActorLogic<SafetySnapshot, SafetyEvent, SafetyInput | undefined>;

function label(event: SafetyEvent): string {
  switch (event.type) {
    case 'tool.requested':
      return `check ${event.callId ?? event.tool}`;
    case 'tool.succeeded':
      return `ok ${event.callId ?? event.tool}`;
    case 'tool.failed':
      return `fail ${event.callId ?? event.tool}`;
    case 'answer.requested':
      return 'answer';
    case 'verification.completed':
      return 'complete verification';
    case 'session.reset':
      return 'reset';
    case 'session.resetKeepingProgress':
      return 'reset keeping progress';
    case 'clock.ticked':
      return 'clock +10 min';
  }
}

/**
 * Re-times a model event list on a growing clock (one millisecond a step,
 * ten minutes and one millisecond more at each clock jump) and replays it
 * through an actor of the path logic to find the state, decision and
 * recovery expected at each step.
 */
function toSafetyPath(
  modelEvents: readonly SafetyEvent[],
  logic: ActorLogic<SafetySnapshot, SafetyEvent, SafetyInput | undefined>,
  input: SafetyInput,
  startAt: number,
): SafetyPath {
  const actor = createActor(logic, { input });
  const emitted: { type: string }[] = [];
  actor.on('*', (event) => emitted.push(event));
  actor.start();
  let jumps = 0;
  const steps = modelEvents.map((modelEvent, index): SafetyPathStep => {
    if (modelEvent.type === 'clock.ticked') jumps += 1;
    const event = { ...modelEvent, at: startAt + index + jumps * (RECOVERY_TTL_MS + 1) };
    emitted.length = 0;
    actor.send(event);
    const decided = emitted.find((e): e is GateDecidedEvent => e.type === 'gate.decided');
    const recovered = emitted.find((e): e is RecoverySucceededEvent => e.type === 'recovery.succeeded');
    return {
      event,
      state: actor.getSnapshot().value as SafetyState,
      decision: decided === undefined ? null : { allowed: decided.allowed, rule: decided.rule },
      recoveryId: recovered?.recovery.recoveryId ?? null,
    };
  });
  const end = actor.getSnapshot().value as SafetyState;
  actor.stop();
  const labels = steps.map((step) =>
    step.decision === null ? label(step.event) : `${label(step.event)} ${step.decision.allowed ? 'allowed' : 'blocked'}`,
  );
  return { description: `${end}: ${labels.join(' → ') || '(start)'}`, steps };
}

/** Keeps the paths that are no prefix of another, in their order; drops repeats. */
function maximalPaths(eventLists: SafetyEvent[][]): SafetyEvent[][] {
  const keyOf = (events: readonly SafetyEvent[]) => events.map((event) => JSON.stringify(event));
  const prefixes = new Set<string>();
  for (const events of eventLists) {
    const keys = keyOf(events);
    for (let length = 0; length < keys.length; length += 1) prefixes.add(keys.slice(0, length).join('\n'));
  }
  const seen = new Set<string>();
  return eventLists.filter((events) => {
    const key = keyOf(events).join('\n');
    if (prefixes.has(key) || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

type Generator = typeof getShortestPaths;

function generate(
  generator: Generator,
  serializeState: (snapshot: SafetySnapshot, event: SafetyEvent | undefined, previous?: SafetySnapshot) => string,
  options: SafetyPathOptions,
  cases: EventCaseSet,
): SafetyPath[] {
  const startAt = options.startAt ?? DEFAULT_PATH_START;
  const logic = pathLogic;
  const input: SafetyInput = {
    strictFailedWrites: options.strictFailedWrites === true,
    confirmDestructive: options.confirmDestructive === true,
    autoCompleteVerification: options.autoCompleteVerification !== false,
  };
  const statePaths = generator(logic, {
    input,
    events: (snapshot: SafetySnapshot) => safetyEventCases(snapshot, options, cases),
    serializeState,
  });
  // @xstate/graph paths start with an `xstate.init` step; the events that follow are the path.
  const eventLists = statePaths.map((path) => path.steps.slice(1).map((step) => step.event));
  return maximalPaths(eventLists).map((events) => toSafetyPath(events, logic, input, startAt));
}

/**
 * Shortest paths to every abstract state (`abstractSafetyState`), reached
 * through every transition that can enter it, and through every recovery and
 * expiry (`transitionCoverageKey`), so together they take every transition
 * of the machine that the event cases can reach. Paths that are a prefix of
 * another are left out. With `targets`, the same over `abstractTargetState`
 * (`targetCoverageKey`).
 *
 * @throws TypeError when `options` is not an object of the known options
 *   with their types (an unknown key, a non-boolean flag, an empty tool name,
 *   `startAt` outside ±(`MAX_TIME_MS` − `MAX_PATH_SPAN_MS`)).
 */
export function getShortestSafetyPaths(options?: SafetyPathOptions): SafetyPath[] {
  const parsed = parseOptions(options);
  return parsed.targets === true
    ? generate(getShortestPaths, targetCoverageKey, parsed, TARGET_PATH_CASES)
    : generate(getShortestPaths, transitionCoverageKey, parsed, SHORTEST_PATH_CASES);
}

/**
 * Every simple path (no abstract state twice) from a fresh session over the
 * decision abstraction (`abstractDecisionState`): every order in which a
 * loop that checks each call before recording it can pass through the
 * states that decide refusals (`includeUncheckedOutcomes` is ignored: see
 * `abstractDecisionState`). Paths that are a prefix of another are left out.
 *
 * @throws TypeError as `getShortestSafetyPaths` does, for bad options.
 */
export function getSimpleSafetyPaths(options?: SafetyPathOptions): SafetyPath[] {
  const realizable = { ...parseOptions(options), includeUncheckedOutcomes: false };
  return generate(getSimplePaths, (snapshot) => abstractDecisionState(snapshot), realizable, SIMPLE_PATH_CASES);
}

/**
 * Options of the `@xstate/graph` traversals on the raw `safetyMachine`
 * (`shortestPathsGraphOptions`, `simplePathsGraphOptions`,
 * `testModelGraphOptions`): the machine's settings, the tool names, and
 * whether the loop is turn-based. See `SafetyPathOptions` for each.
 */
export type SafetyGraphOptions = Pick<
  SafetyPathOptions,
  'strictFailedWrites' | 'confirmDestructive' | 'autoCompleteVerification' | 'tools' | 'targets' | 'turnBased' | 'includeUncheckedOutcomes'
> & {
  /**
   * What the shortest paths cover: `states` (default), a shortest path to
   * every abstract state (`abstractSafetyState`); `transitions`, to every
   * abstract state through every transition that can enter it
   * (`transitionCoverageKey`), as the project's own path tests walk it:
   * about ten times the paths.
   */
  coverage?: 'states' | 'transitions';
};

/**
 * What `getShortestPaths`, `getSimplePaths` and `createTestModel` of
 * `@xstate/graph` take on `safetyMachine`: the machine's input, the events
 * to try from each snapshot (`safetyEventCases`: every event carries `at`,
 * tool events `callId`, `tool` and `kind`), and a finite state key with its
 * counters capped (`abstractSafetyState` and kin). Event times are model
 * times: every event at 0 but a clock jump, at `RECOVERY_TTL_MS` + 1; a
 * system under test needs a clock of its own that moves a millisecond a
 * step and past the TTL at each `clock.ticked` (`getShortestSafetyPaths`
 * re-times its paths instead). Verification completes by itself, as the
 * machine's input and `createSessionGuard` default to; with
 * `autoCompleteVerification: false` (input and events), only a
 * `verification.completed` step completes it: create the guard you test
 * the same way.
 */
export interface SafetyTraversalOptions {
  /** The machine's input: `strictFailedWrites`, `confirmDestructive` and `autoCompleteVerification` (default true) as the options say. */
  input: SafetyInput;
  /** The events tried from a snapshot (`safetyEventCases` over the options and the generator's case set). */
  events: (snapshot: SafetySnapshot) => SafetyEvent[];
  /** The finite vertex key: an abstract state, or with `coverage: 'transitions'` the state and the transition into it. */
  serializeState: (snapshot: SafetySnapshot, event: SafetyEvent | undefined, previous?: SafetySnapshot) => string;
}

const graphOptionsSchema = optionsSchema
  .unwrap()
  .pick({
    strictFailedWrites: true,
    confirmDestructive: true,
    autoCompleteVerification: true,
    tools: true,
    targets: true,
    turnBased: true,
    includeUncheckedOutcomes: true,
  })
  .extend({ coverage: z.enum(['states', 'transitions']).optional() })
  .optional();

/**
 * Checks graph options (or undefined, for the defaults).
 * @throws TypeError naming every bad option, as `parseOptions` does.
 */
function parseGraphOptions(options: unknown, name: string): SafetyGraphOptions {
  const parsed = graphOptionsSchema.safeParse(options);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) =>
      issue.path.length === 0 ? issue.message : `${issue.path.join('.')}: ${issue.message}`,
    );
    throw new TypeError(`invalid ${name} options: ${problems.join('; ')}`);
  }
  return parsed.data ?? {};
}

/** The traversal options of a parsed option set over an event case set and a state key. */
function traversalOptions(
  options: SafetyGraphOptions,
  cases: EventCaseSet,
  serializeState: SafetyTraversalOptions['serializeState'],
): SafetyTraversalOptions {
  const { coverage: _coverage, ...rest } = options;
  const autoCompleteVerification = options.autoCompleteVerification !== false;
  const pathOptions: SafetyPathOptions = { ...rest, autoCompleteVerification };
  return {
    input: {
      strictFailedWrites: options.strictFailedWrites === true,
      confirmDestructive: options.confirmDestructive === true,
      autoCompleteVerification,
    },
    events: (snapshot) => safetyEventCases(snapshot, pathOptions, cases),
    serializeState,
  };
}

/**
 * Options for `getShortestPaths(safetyMachine, ...)` of `@xstate/graph`:
 * the event cases of `getShortestSafetyPaths` (`SHORTEST_PATH_CASES`, or
 * `TARGET_PATH_CASES` with `targets`) over `abstractSafetyState`
 * (`abstractTargetState` with targets), or with `coverage: 'transitions'`
 * over `transitionCoverageKey` (`targetCoverageKey`). Unlike
 * `getShortestSafetyPaths`, the paths keep the `xstate.init` step, model
 * times, and paths that are a prefix of another.
 *
 * @throws TypeError for options that are not `SafetyGraphOptions`.
 */
export function shortestPathsGraphOptions(options?: SafetyGraphOptions): SafetyTraversalOptions {
  const parsed = parseGraphOptions(options, 'shortest paths graph');
  const transitions = parsed.coverage === 'transitions';
  if (parsed.targets === true) {
    return traversalOptions(parsed, TARGET_PATH_CASES, transitions ? targetCoverageKey : (snapshot) => abstractTargetState(snapshot));
  }
  return traversalOptions(parsed, SHORTEST_PATH_CASES, transitions ? transitionCoverageKey : (snapshot) => abstractSafetyState(snapshot));
}

/**
 * Options for `getSimplePaths(safetyMachine, ...)` of `@xstate/graph`: the
 * event cases of `getSimpleSafetyPaths` (`SIMPLE_PATH_CASES`) over
 * `abstractDecisionState`. `targets`, `includeUncheckedOutcomes` and
 * `coverage` are ignored (see `getSimpleSafetyPaths`).
 *
 * @throws TypeError for options that are not `SafetyGraphOptions`.
 */
export function simplePathsGraphOptions(options?: SafetyGraphOptions): SafetyTraversalOptions {
  const parsed = parseGraphOptions(options, 'simple paths graph');
  const realizable = { ...parsed, targets: false, includeUncheckedOutcomes: false };
  return traversalOptions(realizable, SIMPLE_PATH_CASES, (snapshot) => abstractDecisionState(snapshot));
}

/**
 * Options for `createTestModel(safetyMachine, ...)` of `@xstate/graph`.
 * `createTestModel` adds a bare `{ type }` event for every event type a
 * state handles and the event cases leave out, and such an event (no `at`,
 * no tool) is one no system under test can replay. So these options try
 * every event type the machine handles in every snapshot: the shortest
 * paths' cases with `includeUncheckedOutcomes` (an outcome can always be
 * recorded, of a call in flight or, as a record-only loop does, of one
 * never checked) and `verification.completed` (with auto-completion, a step
 * that changes nothing: the machine has completed already, or cannot);
 * hence no `turnBased`
 * (while a turn-based loop waits for its call, nothing else happens: use
 * `getShortestSafetyPaths({ turnBased: true })`). `model.getShortestPaths()`
 * then reaches every abstract state, as `shortestPathsGraphOptions` does.
 *
 * @throws TypeError for options that are not `SafetyGraphOptions` without
 *   `turnBased` (a `turnBased: true` is refused: it would bring bare events back).
 */
export function testModelGraphOptions(
  options?: Omit<SafetyGraphOptions, 'turnBased' | 'includeUncheckedOutcomes'>,
): SafetyTraversalOptions {
  const parsed = parseGraphOptions(options, 'test model graph');
  if (parsed.turnBased === true) {
    throw new TypeError(
      'invalid test model graph options: turnBased: createTestModel would add bare events a turn-based loop cannot replay; use getShortestSafetyPaths({ turnBased: true })',
    );
  }
  const traversal = shortestPathsGraphOptions({ ...parsed, includeUncheckedOutcomes: true });
  if (parsed.autoCompleteVerification === false) return traversal;
  // VERIFYING handles verification.completed even when the machine completes by itself:
  // offered, it is a step that changes nothing (the guard's completeVerification() is false).
  return {
    ...traversal,
    events: (snapshot) => [...traversal.events(snapshot), { type: 'verification.completed', at: MODEL_TIME }],
  };
}

/**
 * The tool call of a tool event, as `check` and `record` take it
 * (`{ id, name, kind, targets?, destructive? }`; targets and the destructive
 * flag only when the event has them); null for other events.
 */
export function toolCallOf(
  event: SafetyEvent,
): { id?: string; name: string; kind: ToolKind; targets?: string[]; destructive?: boolean } | null {
  if (event.type !== 'tool.requested' && event.type !== 'tool.succeeded' && event.type !== 'tool.failed') return null;
  return {
    ...(event.callId === undefined ? {} : { id: event.callId }),
    name: event.tool,
    kind: event.kind,
    ...(event.targets === undefined ? {} : { targets: [...event.targets] }),
    ...(event.destructive === true ? { destructive: true } : {}),
  };
}

/**
 * The third argument of `record` for a tool event: `{ result }` with a
 * self-verifying result (`SELF_VERIFYING_RESULT`) for a success marked
 * `selfVerified`; undefined otherwise.
 */
export function recordOptionsOf(event: SafetyEvent): { result: string } | undefined {
  return event.type === 'tool.succeeded' && event.selfVerified === true ? { result: SELF_VERIFYING_RESULT } : undefined;
}
