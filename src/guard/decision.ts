/**
 * The session guard's answers: to `check` (`Decision`), to `finalAnswer`
 * (`FinalAnswerDecision`) and to `record` (`RecordResult`), and the one
 * mapping of the machine's refusal (`gate.decided`, not allowed) to an
 * `FSMBlockedError`, shared by the guard and the audit.
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants" (what is refused, and why).
 */
import type { GateDecidedEvent, PendingRecovery, ToolKind } from '../../machines/safety.types.js';
import { FSMBlockedError, type FSMBlockedErrorInit } from '../errors/index.js';

/** The gate's answer to `check`. */
export type Decision = { allowed: true; kind: ToolKind } | { allowed: false; kind: ToolKind; error: FSMBlockedError };

/** The gate's answer to `finalAnswer`. */
export type FinalAnswerDecision = { allowed: true } | { allowed: false; error: FSMBlockedError };

/**
 * What `record` reports: `recovered`, the pending recovery this success
 * cleared, if any (the first, when it cleared several codes of its tool);
 * `raised`, the pending recovery this failure's recoverable error code
 * opened or bumped (issue 28), if any.
 */
export interface RecordResult {
  recovered?: PendingRecovery;
  raised?: PendingRecovery;
}

/**
 * Internal: a refusal's fields, as `FSMBlockedError` takes them, from the
 * machine's decision (one whose `allowed` is false): the one mapping of a
 * `gate.decided` event to a refusal, for the guard and the audit.
 */
export function refusalOf(decision: GateDecidedEvent): FSMBlockedErrorInit {
  return {
    state: decision.state,
    toolName: decision.tool,
    toolKind: decision.kind,
    rule: decision.rule!,
    reason: decision.reason!,
    recoveryId: decision.recoveryId,
    target: decision.target ?? null,
  };
}

/**
 * Internal: the refusal as an `FSMBlockedError`, built without a stack trace: it is a
 * value the guard returns (and a loop sends back to the model), not an
 * exception the guard throws, and capturing the guard's own frames cost an
 * eighth of a check on the fast path (`npm run bench`).
 */
export function blockedError(decision: GateDecidedEvent): FSMBlockedError {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new FSMBlockedError(refusalOf(decision));
  } finally {
    Error.stackTraceLimit = limit;
  }
}
