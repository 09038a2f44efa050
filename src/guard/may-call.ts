/**
 * Asking the gate about a tool call without asking for it: what `check()`
 * would decide now, with no side effect (no pending recovery opened or
 * bumped, nothing put in flight, no decision emitted). For a host that must
 * know before it asks a human to approve a call: nobody should approve a
 * call the gate will refuse (issue 26).
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants"; DESIGN.md §5.3-5.6 (targets,
 * destructive writes).
 */
import { toolEventOf } from '../../machines/safety.events.js';
import type { SafetyContext, SafetyState, ToolKind } from '../../machines/safety.types.js';
import { TOOL_KINDS } from '../../machines/safety.types.js';
import { safetyInterpreter, type InterpreterState } from '../interpreter/index.js';
import { blockedError, type Decision } from './decision.js';
import { sessionStateOf, type SessionGuard } from './session-guard.js';
import { validCall, type ToolCall } from './tool-call.js';

/**
 * A session's state and context, read without changing it: a guard of
 * `createSessionGuard` as it is, any other object with an `actor` (a session
 * store's handle) from the actor's snapshot.
 */
function stateOf(guard: Pick<SessionGuard, 'actor'>): InterpreterState<SafetyContext> {
  const state = sessionStateOf(guard);
  if (state !== null) return state;
  const snapshot = guard.actor.getSnapshot();
  return { value: snapshot.value as SafetyState, context: snapshot.context };
}

/**
 * What `guard.check(call)` would answer now, computed by the compiled
 * interpreter of the safety machine on the session's current state, which
 * nothing here changes. The call must state its `kind` (and, where it has
 * them, `targets`, `destructive`, `links`): no classifier is asked; a kind
 * outside the vocabulary is a write. Its `id` is not read (a call not yet
 * checked has no id in flight).
 *
 * @param at the time of the decision, epoch ms (default `Date.now()`):
 *   only whether a pending recovery counts reads it.
 * @returns `{ allowed: true, kind }` or `{ allowed: false, kind, error }` with
 *   the `FSMBlockedError` `check()` would give; its `recoveryId` names the
 *   recovery the refusal would open, which is not opened.
 * @throws TypeError on a malformed call (as `check`).
 * @throws Error only when the machine makes no decision (a bug).
 */
export function mayCall(guard: Pick<SessionGuard, 'actor'>, call: ToolCall & { kind: ToolKind }, at: number = Date.now()): Decision {
  const valid = validCall(call, 'mayCall');
  const kind: ToolKind = TOOL_KINDS.includes(valid.kind as ToolKind) ? (valid.kind as ToolKind) : 'write';
  const event = toolEventOf('tool.requested', valid.name, kind, at, {
    targets: valid.targets !== undefined && valid.targets.length > 0 ? valid.targets : undefined,
    destructive: valid.destructive === true ? true : undefined,
    links: valid.links !== undefined && valid.links.length > 0 ? valid.links : undefined,
  });
  const { emitted } = safetyInterpreter.transition(stateOf(guard), event);
  for (const decided of emitted) {
    if (decided.type !== 'gate.decided') continue;
    return decided.allowed ? { allowed: true, kind } : { allowed: false, kind, error: blockedError(decided) };
  }
  throw new Error('the safety machine made no decision on tool.requested');
}
