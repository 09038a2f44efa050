/**
 * The safety gate for LangGraph.js (`@langchain/langgraph` 1.7):
 * `pulse-safety-fsm/langgraph`.
 *
 * - `createSafetyModelNode`: the model node whose answer enters the graph
 *   only once the gate allows it, so no stream mode shows a refused claim
 *   (a refused answer is replaced by the refusal, in words, for the model,
 *   and the loop goes on); the words beside tool calls never enter it.
 * - `SafetyToolNode`: the prebuilt `ToolNode` that checks every tool call
 *   before it runs and records its outcome after, with the classification
 *   it was checked with; calls a human must approve wait at `interrupt()`
 *   once the gate's preview says they could run (`needsApproval`).
 * - `createAnswerGateNode` and `routeAfterModel`: the answer gate for a
 *   graph with a model node of its own (its answer streams before the gate).
 * - The guard is the thread's: by default its persisted snapshot lives in
 *   the graph state (`safety`, see `SafetyAnnotation`; only the gated nodes
 *   can write it, never graph input), so the checkpointer
 *   saves it with every checkpoint, keyed by `thread_id`, and time travel or
 *   a fork restores the gate with the conversation. Or pass
 *   `getGuard(threadId)` (e.g. a session store): one guard per conversation.
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants", "Blocked calls and recovery";
 * DESIGN.md §3.1, §5.7.
 */
// Every parser loaded before this entry's classifiers are used (`classify/parsers.ts`).
import '../classify/eager.js';

export { AdapterConfigError } from './common.js';
export {
  MessagesWithSafetyAnnotation,
  SAFETY_STATE_KEY,
  SafetyAnnotation,
  SafetySnapshotChannel,
  type SealedSnapshot,
  type ThreadGuardOptions,
} from './langgraph/thread-guard.js';
export { createSafetyModelNode, type ChatModelLike, type SafetyModelNode, type SafetyModelNodeOptions } from './langgraph/model-node.js';
export { SafetyToolNode, type SafetyToolNodeOptions, type ToolCallPreview } from './langgraph/tool-node.js';
export {
  TOOL_APPROVAL,
  approvalVerdict,
  isToolApprovalRequest,
  type ApprovalCall,
  type ApprovalVerdict,
  type ToolApprovalRequest,
} from './langgraph/approval.js';
export { createAnswerGateNode, routeAfterModel, type AnswerGateNodeOptions } from './langgraph/answer-gate.js';
