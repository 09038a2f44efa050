/**
 * The finite abstractions of a session that the path generators walk over
 * (`abstractSafetyState`, `abstractDecisionState`, `abstractTargetState`),
 * and the vertex keys that also tell apart the transitions into a state
 * (`transitionCoverageKey`, `targetCoverageKey`, from `selectedTransitions`),
 * so the shortest paths take every transition, not only the cheapest way in.
 */
import { safetyMachine } from '../../machines/safety.machine.js';
import type { SafetyEvent, ToolKind } from '../../machines/safety.types.js';
import { TOOL_KINDS } from '../../machines/safety.types.js';
import type { SafetySnapshot, SessionView } from './types.js';

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
/**
 * How many failed writes a repeat of which is refused (issue 28): a count,
 * not their keys (a guard computes its own key from a call's arguments,
 * `toolCallOf`); nothing when none, so other states keep their keys.
 */
function abstractFailedWrites(snapshot: SessionView): unknown[] {
  const count = snapshot.context.failedWrites?.length ?? 0;
  return count === 0 ? [] : [{ failedWrites: count }];
}

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
    ...abstractFailedWrites(snapshot),
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
  return JSON.stringify([
    snapshot.value,
    context.readAfterWrite,
    inFlight,
    context.lastReadAt === null,
    ...abstractTargets(snapshot),
    ...abstractFailedWrites(snapshot),
  ]);
}

/**
 * The coarser abstraction of the shortest paths with targets: what decides
 * the target rules and the event cases (the state, read-after-write, the
 * calls in flight with their targets, whether the session checks its calls,
 * the established targets, the last write's targets, a confirmation, with
 * or without `confirmDestructive`), but
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
    // A confirmation admits a write naming an unknown place whatever confirmDestructive says (issue 24).
    context.confirmedSinceWrite,
    ...abstractFailedWrites(snapshot),
  ]);
}

/**
 * The vertex key of the shortest paths with targets: `abstractTargetState`
 * and the transitions that led to it (`selectedTransitions`), so every
 * transition into every such state is taken; except the final answer
 * without claims, CompleteVerification and the clock jump, which no target
 * rule changes (the paths without targets take each of them in every
 * state): a state they lead to is keyed by itself alone, which keeps the
 * graph to about half. An answer claiming a change (issue 28 item 2) is
 * only in these paths, so it is keyed as a transition to cover.
 */
export function targetCoverageKey(snapshot: SafetySnapshot, event: SafetyEvent | undefined, previous: SafetySnapshot | undefined): string {
  const state = abstractTargetState(snapshot);
  if (previous === undefined || event === undefined) return state;
  // An answer claiming a change (issue 28 item 2) is kept apart: its refusal (`phantom-claim`) is a transition to cover.
  const claiming = event.type === 'answer.requested' && event.claims !== undefined;
  if ((event.type === 'answer.requested' && !claiming) || event.type === 'verification.completed' || event.type === 'clock.ticked') {
    return state;
  }
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
