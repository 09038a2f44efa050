/**
 * The events a path may take from a snapshot (`safetyEventCases`), over an
 * event case set (`SHORTEST_PATH_CASES`, `TARGET_PATH_CASES`,
 * `SIMPLE_PATH_CASES`): which tools, call ids and targets, and the one model
 * time they share, which keeps the graph finite.
 *
 * Spec: DESIGN.md §3 (correlation by call id, WRITING, strict failed writes,
 * time as an input), §1 and §5 (targets, destructive and self-verifying writes).
 */
import { RECOVERY_TTL_MS } from '../../machines/safety.policy.js';
import type { SafetyEvent, ToolKind } from '../../machines/safety.types.js';
import { TOOL_KINDS } from '../../machines/safety.types.js';
import type { SafetyPathOptions, SafetySnapshot } from './types.js';

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

/** Call ids: `<kind>-1`, and `<kind>-2` for a second write while the first is in flight; few ids keep the graph finite. */
function callIdFor(kind: ToolKind, n: 1 | 2): string {
  return `${kind}-${n}`;
}

/**
 * The write key of the generated write that fails unchecked and is then
 * asked for again (issue 28, `repeated-write`): one key keeps the graph finite.
 */
export const PATH_WRITE_KEY = 'path-write';

/** Model time of every generated event but the clock jump; paths are re-timed when returned. */
export const MODEL_TIME = 0;

function hasInFlight(snapshot: SafetySnapshot, callId: string): boolean {
  return snapshot.context.inFlight.some((call) => call.key === `id:${callId}`);
}

/**
 * The two targets of paths with targets: a directory and a file under it,
 * so a read of the first establishes and verifies the second, and a read of
 * the second verifies, but does not establish, the first (DESIGN.md §5.3-5.4).
 */
export const PATH_TARGETS: readonly [string, string] = ['/srv/app', '/srv/app/app.conf'];

/**
 * The unknown place of paths with targets (issue 24): a write naming it is
 * refused until a user input succeeded since the last write, and verified by
 * any later read; a read naming it establishes nothing.
 */
export const UNKNOWN_PATH_TARGET = '?/$DIR/';

/**
 * The text of the final answer the target paths also ask for (`claimCases`):
 * a claim of a change to a place no path writes. Its event carries the
 * claims `detectClaims` finds in it; a loop under test gives the guard this
 * text (`guard.finalAnswer(CLAIM_PATH_ANSWER)`) on an `answer.requested`
 * event with `claims`.
 */
export const CLAIM_PATH_ANSWER = 'I deleted /srv/elsewhere.';

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
  /**
   * The final answer is also asked with a claim of a change (issue 28 item
   * 2): `CLAIM_PATH_ANSWER`, naming a place no path writes, so the gate
   * refuses it (rule `phantom-claim`). Default false.
   */
  claimCases?: boolean;
  /** With `includeUncheckedOutcomes`: the kinds whose outcomes are also recorded without a check (default all of `kinds`). */
  uncheckedKinds?: readonly ToolKind[];
}

/** The event cases of the shortest paths: all five kinds, and (with unchecked outcomes) anonymous writes; no targets. */
export const SHORTEST_PATH_CASES: EventCaseSet = { kinds: TOOL_KINDS, anonymousWrites: true, targetLists: [[]], targetCases: false };

/**
 * The event cases of the shortest paths with targets: a read, a write and
 * user input (a resolve is a read to every target rule, and `neutral` is
 * `user_input` to the machine but for confirmations, DESIGN.md §3.6; the
 * paths without targets take both), each with no target, either target of
 * `PATH_TARGETS`, or the unknown place `UNKNOWN_PATH_TARGET` (issue 24); a
 * destructive write; self-verifying write results; with unchecked
 * outcomes, those of writes only (a self-verifying write recorded without
 * a check is the one target-aware transition that needs them).
 */
export const TARGET_PATH_CASES: EventCaseSet = {
  kinds: ['read', 'write', 'user_input'],
  anonymousWrites: true,
  targetLists: [[], [PATH_TARGETS[0]], [PATH_TARGETS[1]], [UNKNOWN_PATH_TARGET]],
  targetCases: true,
  claimCases: true,
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
      // The write whose failure was recorded, asked for again (issue 28): only while one is remembered.
      if (kind === 'write' && (snapshot.context.failedWrites ?? []).some((failed) => failed.key === PATH_WRITE_KEY)) {
        events.push({ type: 'tool.requested', callId: checkId, ...call, writeKey: PATH_WRITE_KEY });
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
    // Its failure with the write's key: remembered, so the same write asked for again is refused (issue 28).
    // Not with target cases: the rule is target-blind, and the graph stays the size it was.
    if (!cases.targetCases) events.push({ type: 'tool.failed', ...write, writeKey: PATH_WRITE_KEY });
  }
  if (waiting) return events;
  events.push({ type: 'answer.requested', at });
  if (cases.claimCases === true) {
    events.push({ type: 'answer.requested', at, claims: [{ text: CLAIM_PATH_ANSWER, places: ['/srv/elsewhere'] }] });
  }
  if (options.autoCompleteVerification === false) events.push({ type: 'verification.completed', at });
  events.push(
    { type: 'session.reset', at },
    { type: 'session.resetKeepingProgress', at },
    { type: 'clock.ticked', at: at + RECOVERY_TTL_MS + 1 },
  );
  return events;
}
