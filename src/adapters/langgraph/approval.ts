/**
 * Human approval of tool calls in `pulse-safety-fsm/langgraph` (issue 26):
 * what `SafetyToolNode` asks with LangGraph's `interrupt()` and how it reads
 * the answer given with `Command({ resume })`, and the copy of a session
 * the gate's preview is asked on (so nobody is asked about a call the gate
 * would refuse anyway).
 *
 * Spec: ASSISTANT_SAFETY.md "Tool kinds" (`user_input`), "The invariants";
 * DESIGN.md §5.6 (destructive writes need a confirmation).
 */
import type { ToolKind } from '../../../machines/safety.types.js';
import { createSessionGuard, type SessionGuard, type SessionGuardOptions } from '../../guard/session-guard.js';
import type { AdapterGuard } from '../common.js';

/** The `type` of the value `SafetyToolNode` gives `interrupt()` when calls wait for approval. */
export const TOOL_APPROVAL = 'pulse-safety-fsm/tool-approval';

/** One call waiting for a human, as the approval request shows it (its whole classification). */
export interface ApprovalCall {
  /** The framework's tool call id (empty when the model gave none). */
  id: string;
  name: string;
  args: unknown;
  kind: ToolKind;
  targets: string[];
  destructive: boolean;
}

/**
 * The value of the interrupt (`result.__interrupt__[0].value`): every call
 * of the model's message that waits for approval, none of which has run.
 * Answer with `new Command({ resume: answer })`, `answer` one of: `true`
 * (approve all), `false` (reject all), or by call id `{ [id]: true | false |
 * { approved: boolean, reason?: string } }` (a call it does not name is
 * rejected).
 */
export interface ToolApprovalRequest {
  type: typeof TOOL_APPROVAL;
  calls: ApprovalCall[];
}

/** A human's answer on one call. */
export type ApprovalVerdict = { approved: true } | { approved: false; reason?: string };

/** True for the value `SafetyToolNode` gives `interrupt()` (`ToolApprovalRequest`). */
export function isToolApprovalRequest(value: unknown): value is ToolApprovalRequest {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { type?: unknown }).type === TOOL_APPROVAL &&
    Array.isArray((value as { calls?: unknown }).calls)
  );
}

/** One entry of a resume answer read totally: anything but `true` or `{ approved: true }` rejects. */
function verdictOfEntry(entry: unknown): ApprovalVerdict {
  if (entry === true) return { approved: true };
  if (typeof entry !== 'object' || entry === null) return { approved: false };
  const { approved, reason } = entry as { approved?: unknown; reason?: unknown };
  if (approved === true) return { approved: true };
  return typeof reason === 'string' ? { approved: false, reason: reason.slice(0, 500) } : { approved: false };
}

/**
 * The human's verdict on call `id` from the resume value (see
 * `ToolApprovalRequest`). Fails closed: a value it cannot read rejects.
 */
export function approvalVerdict(answer: unknown, id: string): ApprovalVerdict {
  if (answer === true) return { approved: true };
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return { approved: false };
  try {
    return Object.prototype.hasOwnProperty.call(answer, id) ? verdictOfEntry((answer as Record<string, unknown>)[id]) : { approved: false };
  } catch {
    return { approved: false };
  }
}

/** What the model is told of a call a human rejected (it did not run). */
export function rejectionText(name: string, verdict: { reason?: string }): string {
  const reason = verdict.reason === undefined ? '' : ` (${verdict.reason})`;
  return `The call to '${name}' was not run: the user did not approve it${reason}.`;
}

/**
 * A throwaway copy of the session (from its persisted snapshot), to ask
 * the gate what it would decide with no side effect on the session itself.
 * @throws what the guard's `getPersistedSnapshot` throws (a store that cannot load).
 */
export async function sessionCopy(
  guard: AdapterGuard,
  guardOptions: Omit<SessionGuardOptions, 'snapshot'> | undefined,
): Promise<SessionGuard> {
  return createSessionGuard({ ...guardOptions, snapshot: await guard.getPersistedSnapshot() });
}
