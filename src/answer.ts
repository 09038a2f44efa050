/**
 * Asking the gate about the final answer without asking for it: what
 * `finalAnswer()` would decide now, with no side effect (no refusal counted,
 * no decision emitted, nothing sent to the actor). For hosts that must know
 * before they stream an answer, and for adapters that gate an answer in a
 * framework's own hook.
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants" (no final answer about an
 * unverified change); DESIGN.md §1 (CanFinalAnswer).
 */
import { transition } from 'xstate';
import { safetyMachine } from '../machines/safety.machine.js';
import type { GateDecidedEvent } from '../machines/safety.types.js';
import type { FinalAnswerDecision, SessionGuard } from './adapter.js';
import { FSMBlockedError } from './errors.js';

/**
 * What `guard.finalAnswer()` would answer now, computed with XState's pure
 * `transition` on the guard's current snapshot: the machine's own rules, no
 * second copy. Nothing about the session changes. The decision does not
 * depend on time (the final-answer rules read no clock).
 *
 * @returns `{ allowed: true }` or `{ allowed: false, error }` with the
 *   `FSMBlockedError` `finalAnswer()` would give (rule, reason, state).
 * @throws Error only when the machine makes no decision (a bug).
 */
export function mayAnswer(guard: Pick<SessionGuard, 'actor'>): FinalAnswerDecision {
  const [, actions] = transition(safetyMachine, guard.actor.getSnapshot(), { type: 'answer.requested', at: 0 });
  for (const action of actions) {
    const event = (action as { params?: { event?: GateDecidedEvent } }).params?.event;
    if ((action.type as string) !== 'xstate.emit' || event?.type !== 'gate.decided') continue;
    if (event.allowed) return { allowed: true };
    return {
      allowed: false,
      error: new FSMBlockedError({
        state: event.state,
        toolName: null,
        toolKind: null,
        rule: event.rule!,
        reason: event.reason!,
        recoveryId: null,
      }),
    };
  }
  throw new Error('the safety machine made no decision on answer.requested');
}
