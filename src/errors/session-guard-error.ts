/**
 * `SessionGuardError`: a session guard that cannot take a call at all.
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants" (a decision, once made, is final).
 */
/** Why a session guard refused a call: a re-entrant call from a hook, or a stopped actor. */
export type SessionGuardErrorCode = 'GUARD_REENTRANT' | 'GUARD_STOPPED';

/**
 * A session guard that cannot take the call at all (not a block: no decision
 * is made and the session is untouched). `code` says which:
 * - `GUARD_REENTRANT`: a telemetry hook (`onDecision`, `onRecovery`) called
 *   the guard while a decision of the same guard was being reported; hooks
 *   observe, they never decide (ASSISTANT_SAFETY.md "The invariants": a
 *   decision, once made, is final);
 * - `GUARD_STOPPED`: the guard's actor is stopped or failed, so the session
 *   cannot go on; every method throws this same error instead of doing
 *   nothing. Restore from the last persisted snapshot into a new guard.
 */
export class SessionGuardError extends Error {
  /** `GUARD_REENTRANT` or `GUARD_STOPPED`. */
  readonly code: SessionGuardErrorCode;

  constructor(code: SessionGuardErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SessionGuardError';
    this.code = code;
  }
}
