/**
 * Asking the gate about the final answer without asking for it: what
 * `finalAnswer()` would decide now, with no side effect (no refusal counted,
 * no decision emitted, nothing sent to the session). For hosts that must know
 * before they stream an answer, and for adapters that gate an answer in a
 * framework's own hook.
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants" (no final answer about an
 * unverified change); DESIGN.md §1 (CanFinalAnswer).
 */
import type { AnswerRequestedEvent, SafetyContext, SafetyState } from '../../machines/safety.types.js';
import { detectClaims } from '../claims/detect.js';
import { sessionStateOf, type FinalAnswerDecision, type SessionGuard } from './session-guard.js';
import { FSMBlockedError } from '../errors/index.js';
import { safetyInterpreter, type InterpreterState } from '../interpreter/index.js';

/**
 * What `guard.finalAnswer()` would answer now, computed by the compiled
 * interpreter of the safety machine (src/interpreter/) on the guard's
 * current state: the machine's own rules, no second copy, and no actor
 * created (a guard of `createSessionGuard` is read as it is; any other
 * object with an `actor` is read from the actor's snapshot). Nothing about
 * the session changes. The decision does not depend on time (the
 * final-answer rules read no clock). Given the answer's `text`, its claims
 * of a change are checked as `finalAnswer(text)` checks them, unless the
 * guard says `phantomClaims: false`.
 *
 * @returns `{ allowed: true }` or `{ allowed: false, error }` with the
 *   `FSMBlockedError` `finalAnswer()` would give (rule, reason, state).
 * @throws TypeError when `text` is given and is not a string (as `finalAnswer`).
 * @throws Error only when the machine makes no decision (a bug).
 */
export function mayAnswer(guard: Pick<SessionGuard, 'actor'> & { phantomClaims?: boolean }, text?: string): FinalAnswerDecision {
  if (text !== undefined && typeof text !== 'string') throw new TypeError('mayAnswer: text must be a string when given');
  let state: InterpreterState<SafetyContext> | null = sessionStateOf(guard);
  if (state === null) {
    const snapshot = guard.actor.getSnapshot();
    state = { value: snapshot.value as SafetyState, context: snapshot.context };
  }
  const event: AnswerRequestedEvent = { type: 'answer.requested', at: 0 };
  const claims = typeof text === 'string' && guard.phantomClaims !== false ? detectClaims(text) : [];
  if (claims.length > 0) event.claims = claims.map((c) => ({ text: c.text, places: c.places }));
  const { emitted } = safetyInterpreter.transition(state, event);
  for (const event of emitted) {
    if (event.type !== 'gate.decided') continue;
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
