/**
 * What the visualizer shows of a session, computed from the machine and a
 * snapshot: the active states, the context, pending recoveries with their
 * expiry, and the transitions enabled now, as XState itself selects them
 * (`machine.getTransitionData`). Pure functions.
 *
 * Spec: ASSISTANT_SAFETY.md "States", "Blocked calls and recovery";
 * DESIGN.md §3.5 (per-tool pending recoveries, ten-minute TTL).
 */
import { createActor, type AnyMachineSnapshot, type AnyStateMachine, type AnyStateNode, type AnyEventObject } from 'xstate';
import { RECOVERY_TTL_MS } from '../../machines/safety.policy.js';
import { safetyMachine } from '../../machines/safety.machine.js';
import type { GateDecidedEvent, InFlightCall, PendingRecovery, ToolKind } from '../../machines/safety.types.js';
import { TOOL_KINDS } from '../../machines/safety.types.js';
import { FSMBlockedError } from '../errors/index.js';
import { transitionIds } from '../charts/index.js';
import { MAX_PROBE_WORK } from './bounds.js';
import type { DecisionView, PendingRecoveryView, SessionView } from './protocol.js';
import { isRecord } from '../util/own.js';

/** The state value as text: a plain state name, or JSON for nested values. */
export function stateText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** A child state node by key: own keys only, so `__proto__` or `constructor` is no state. */
function childNode(node: AnyStateNode, key: string): AnyStateNode | undefined {
  return Object.prototype.hasOwnProperty.call(node.states, key) ? (node.states[key] as AnyStateNode) : undefined;
}

/**
 * Ids of the state nodes a state value makes active, root first. Unknown
 * keys (including `__proto__` and other inherited names) are skipped; never
 * throws on parsed JSON.
 */
export function activeStateIds(machine: AnyStateMachine, value: unknown): string[] {
  const ids: string[] = [machine.root.id];
  const walk = (node: AnyStateNode, part: unknown) => {
    if (typeof part === 'string') {
      const child = childNode(node, part);
      if (child) ids.push(child.id);
      return;
    }
    if (typeof part !== 'object' || part === null || Array.isArray(part)) return;
    for (const [key, inner] of Object.entries(part)) {
      const child = childNode(node, key);
      if (!child) continue;
      ids.push(child.id);
      walk(child, inner);
    }
  };
  walk(machine.root, value);
  return ids;
}

/** Whether a value has the shape of an `InFlightCall` (the fields the views read). */
function isInFlightCall(value: unknown): value is InFlightCall {
  return (
    isRecord(value) &&
    typeof value.key === 'string' &&
    typeof value.tool === 'string' &&
    (TOOL_KINDS as readonly unknown[]).includes(value.kind) &&
    typeof value.admittedAt === 'number' &&
    (value.verifiesWrite === null || typeof value.verifiesWrite === 'number')
  );
}

/** Whether a value has the shape of a `PendingRecovery`. */
function isPendingRecovery(value: unknown): value is PendingRecovery {
  return (
    isRecord(value) &&
    typeof value.recoveryId === 'string' &&
    typeof value.errorCode === 'string' &&
    typeof value.tool === 'string' &&
    typeof value.createdAt === 'number' &&
    typeof value.lastBlockedAt === 'number' &&
    typeof value.attempts === 'number'
  );
}

/** The calls in flight of a safety context; entries of another shape are left out. Never throws on parsed JSON. */
export function inFlightCalls(context: unknown): InFlightCall[] {
  return isRecord(context) && Array.isArray(context.inFlight) ? context.inFlight.filter(isInFlightCall) : [];
}

/**
 * The events the page can send a safety session right now: a call of each
 * kind, the success and the failure of each call in flight, the final answer,
 * complete verification, both resets and a clock tick, all at `now`. Never
 * throws on parsed JSON (calls in flight of another shape are skipped).
 */
export function safetyProbeEvents(context: unknown, now: number): AnyEventObject[] {
  const events: AnyEventObject[] = TOOL_KINDS.map((kind) => ({ type: 'tool.requested', tool: 'probe', kind, at: now }));
  for (const call of inFlightCalls(context)) {
    const callId = call.key.startsWith('id:') ? { callId: call.key.slice(3) } : {};
    for (const type of ['tool.succeeded', 'tool.failed']) {
      events.push({ type, tool: call.tool, kind: call.kind, at: now, ...callId });
    }
  }
  for (const type of ['answer.requested', 'verification.completed', 'session.reset', 'session.resetKeepingProgress', 'clock.ticked']) {
    events.push({ type, at: now });
  }
  return events;
}

/**
 * For any other machine: one bare event of each type its current states
 * handle; none when trying them all would cost more than `MAX_PROBE_WORK`
 * (active state nodes times event types), as XState tries each event on
 * every active state.
 */
function genericProbeEvents(machine: AnyStateMachine, snapshot: AnyMachineSnapshot): AnyEventObject[] {
  const types = new Set<string>();
  const active = activeStateIds(machine, snapshot.value);
  for (const id of active) {
    const node = id === machine.root.id ? machine.root : machine.getStateNodeById(id);
    for (const type of (node.transitions as Map<string, unknown>).keys()) types.add(type);
  }
  if (active.length * types.size > MAX_PROBE_WORK) return [];
  return [...types].map((type) => ({ type }));
}

const idsByMachine = new WeakMap<AnyStateMachine, ReturnType<typeof transitionIds>>();

/** Chart ids of the transitions XState selects for `event` in `snapshot`; empty when a guard throws. */
export function selectedTransitions(machine: AnyStateMachine, snapshot: AnyMachineSnapshot, event: AnyEventObject): string[] {
  let ids = idsByMachine.get(machine);
  if (ids === undefined) {
    ids = transitionIds(machine);
    idsByMachine.set(machine, ids);
  }
  try {
    return machine
      .getTransitionData(snapshot, event)
      .map((definition) => ids.get(definition))
      .filter((id): id is string => id !== undefined);
  } catch {
    return [];
  }
}

/** What sending events to an actor restored from a snapshot did (`takeEvents`). */
export interface EventsTaken {
  /** The types of the events sent, in order. */
  sent: string[];
  /** Chart ids of every transition XState took for them, eventless (`always`) ones included. */
  taken: string[];
  /** The snapshot after the last event. */
  after: AnyMachineSnapshot;
  /** The events the machine emitted meanwhile (`emit`), in order. */
  emitted: AnyEventObject[];
}

/**
 * Sends `events` to an actor of `machine` restored from `before` and
 * records, from XState's own `@xstate.microstep` inspection, every
 * transition taken (eventless ones included) and every emitted event. Only
 * for a machine whose implementations are trusted code (the configured
 * ones): its actions run. An event `skip` approves of is not sent. An error
 * in the actor ends the sending (the actor's status is then `error`); it is
 * never rethrown.
 */
export function takeEvents(
  machine: AnyStateMachine,
  before: AnyMachineSnapshot,
  events: AnyEventObject[],
  skip: (snapshot: AnyMachineSnapshot, event: AnyEventObject) => boolean = () => false,
): EventsTaken {
  let ids = idsByMachine.get(machine);
  if (ids === undefined) {
    ids = transitionIds(machine);
    idsByMachine.set(machine, ids);
  }
  const known = ids;
  const result: EventsTaken = { sent: [], taken: [], after: before, emitted: [] };
  let recording = false;
  const actor = createActor(machine, {
    snapshot: before,
    inspect: (inspection) => {
      if (!recording || inspection.type !== '@xstate.microstep' || inspection.actorRef !== actor) return;
      for (const definition of (inspection as { _transitions: unknown[] })._transitions) {
        const id = known.get(definition as never);
        if (id !== undefined) result.taken.push(id);
      }
    },
  });
  actor.subscribe({ error: () => {} }); // an error would otherwise be rethrown later, outside any handler
  actor.on('*', (emitted) => void result.emitted.push(emitted as AnyEventObject));
  actor.start();
  recording = true;
  for (const event of events) {
    if (actor.getSnapshot().status !== 'active') break;
    if (skip(actor.getSnapshot(), event)) continue;
    result.sent.push(event.type);
    actor.send(event);
  }
  result.after = actor.getSnapshot();
  actor.stop();
  return result;
}

/**
 * Chart ids of the transitions enabled now: for the safety machine, those the
 * page's controls would take (`safetyProbeEvents`); for any other machine,
 * those a bare event of each handled type would take.
 */
export function enabledTransitions(machine: AnyStateMachine, snapshot: AnyMachineSnapshot, now: number): string[] {
  const events = machine.id === safetyMachine.id ? safetyProbeEvents(snapshot.context, now) : genericProbeEvents(machine, snapshot);
  const enabled = new Set<string>();
  for (const event of events) for (const id of selectedTransitions(machine, snapshot, event)) enabled.add(id);
  return [...enabled].sort();
}

/**
 * Pending recoveries of a safety context with their expiry at `now`, oldest
 * first. Entries of another shape are left out; never throws on parsed JSON.
 */
export function pendingRecoveryViews(context: unknown, now: number): PendingRecoveryView[] {
  const recoveries = isRecord(context) && isRecord(context.pendingRecoveries) ? context.pendingRecoveries : {};
  return Object.values(recoveries)
    .filter(isPendingRecovery)
    .map((recovery) => {
      const expiresAt = recovery.lastBlockedAt + RECOVERY_TTL_MS;
      return { ...recovery, expiresAt, expiresInMs: expiresAt - now };
    })
    .sort((a, b) => a.createdAt - b.createdAt || a.recoveryId.localeCompare(b.recoveryId));
}

/**
 * The view of a session: state, context, pending recoveries and calls in
 * flight (safety machine only), the transitions enabled now and those the
 * last event took. Never throws on a snapshot whose value and context are
 * parsed JSON nested at most `MAX_JSON_DEPTH` deep.
 */
export function sessionView(
  machine: AnyStateMachine,
  snapshot: AnyMachineSnapshot,
  now: number,
  taken: readonly string[] = [],
): SessionView {
  const context = isRecord(snapshot.context) ? (JSON.parse(JSON.stringify(snapshot.context)) as Record<string, unknown>) : {};
  const safety = machine.id === safetyMachine.id;
  return {
    machineId: machine.id,
    state: stateText(snapshot.value),
    activeStateIds: activeStateIds(machine, snapshot.value),
    status: snapshot.status,
    now,
    context,
    pendingRecoveries: safety ? pendingRecoveryViews(context, now) : [],
    inFlight: safety ? inFlightCalls(context) : [],
    enabled: snapshot.status === 'active' ? enabledTransitions(machine, snapshot, now) : [],
    taken: [...taken],
  };
}

/**
 * The view of a gate decision from the adapter's answer: allowed, or the
 * `FSMBlockedError` with the structured tool result a loop sends back for a
 * refused call (`toToolResult()`, DESIGN.md §3.1).
 */
export function decisionFromError(subject: 'tool' | 'answer', kind: ToolKind | null, error: FSMBlockedError | null): DecisionView {
  if (error === null) {
    return { subject, allowed: true, code: null, rule: null, reason: null, message: null, toolResult: null, kind };
  }
  return {
    subject,
    allowed: false,
    code: error.code,
    rule: error.rule,
    reason: error.reason,
    message: error.message,
    toolResult: subject === 'tool' ? error.toToolResult() : null,
    kind,
  };
}

/** The view of a `gate.decided` event the machine emitted (as the adapter turns it into an `FSMBlockedError`). */
export function decisionView(decision: GateDecidedEvent): DecisionView {
  if (decision.allowed || decision.rule === null || decision.reason === null) {
    return decisionFromError(decision.subject, decision.kind, null);
  }
  const error = new FSMBlockedError({
    state: decision.state,
    toolName: decision.tool,
    toolKind: decision.kind,
    rule: decision.rule,
    reason: decision.reason,
    recoveryId: decision.recoveryId,
  });
  return decisionFromError(decision.subject, decision.kind, error);
}
