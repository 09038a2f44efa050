/**
 * The answer gate of `pulse-safety-fsm/langgraph` for a graph whose model
 * node is your own: a node on the model's no-tool-calls edge. The answer is
 * in the state (and in every stream) before this node runs: for streaming,
 * use `createSafetyModelNode` instead (model-node.ts).
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants"; DESIGN.md §3.1.
 */
import { Command, END, type LangGraphRunnableConfig } from '@langchain/langgraph';
import { HumanMessage, RemoveMessage, type BaseMessage } from '@langchain/core/messages';
import type { FSMBlockedError } from '../../errors/index.js';
import { refusalText } from '../../guard/refusal-text.js';
import { assertThreadGuardOptions, openThreadGuard, type ThreadGuardOptions } from './thread-guard.js';

/** Options of `createAnswerGateNode`. */
export interface AnswerGateNodeOptions extends ThreadGuardOptions {
  /** The model's node, where a refused answer goes back to; default `agent`. */
  modelNode?: string;
  /** Where an allowed answer goes; default `END`. */
  next?: string;
  /** The words of a refused answer; default `refusalText(error)`. */
  answerRefusal?: (error: FSMBlockedError) => string;
}

/**
 * A router for the model node's edge: to the tool node when the last
 * message calls tools, else to the answer gate.
 *
 * @example graph.addConditionalEdges('agent', routeAfterModel(), ['tools', 'answer_gate'])
 */
export function routeAfterModel(names: { tools?: string; answerGate?: string } = {}): (state: { messages: BaseMessage[] }) => string {
  const tools = names.tools ?? 'tools';
  const answerGate = names.answerGate ?? 'answer_gate';
  return (state) => {
    const last = state.messages.at(-1) as { tool_calls?: unknown[] } | undefined;
    return Array.isArray(last?.tool_calls) && last.tool_calls.length > 0 ? tools : answerGate;
  };
}

/**
 * The answer gate: a node for the model's no-tool-calls edge that asks the
 * thread's guard (`finalAnswer()`, counting a refusal). Allowed: a `Command`
 * to `next` (default `END`). Refused: a `Command` back to `modelNode` that
 * removes the answer from the state (`RemoveMessage` by its id) and adds the
 * refusal in words as a `HumanMessage`. Either way the snapshot goes into the
 * state (unless `getGuard`). Add it with its destinations:
 * `addNode('answer_gate', createAnswerGateNode(), { ends: ['agent', END] })`.
 *
 * The answer was already streamed by the model's node (every stream mode
 * shows it before this node refuses it): a graph that streams uses
 * `createSafetyModelNode`. A graph that reaches its `recursionLimit` throws
 * `GraphRecursionError`: the app gets no answer rather than a refused one.
 *
 * @throws AdapterConfigError (at creation) when `getGuard` is not a function.
 */
export function createAnswerGateNode(
  options: AnswerGateNodeOptions = {},
): (state: { messages: BaseMessage[] } & Record<string, unknown>, config: LangGraphRunnableConfig) => Promise<Command> {
  assertThreadGuardOptions(options);
  const modelNode = options.modelNode ?? 'agent';
  const next = options.next ?? END;
  const words = options.answerRefusal ?? refusalText;
  return async (state, config) => {
    const thread = openThreadGuard(options, undefined, state, config);
    const decision = await thread.guard.finalAnswer();
    if (decision.allowed) return new Command({ goto: next, update: thread.update() });
    const answer = state.messages.at(-1);
    const remove = typeof answer?.id === 'string' ? [new RemoveMessage({ id: answer.id })] : [];
    return new Command({
      goto: modelNode,
      update: { ...thread.update(), messages: [...remove, new HumanMessage({ content: words(decision.error) })] },
    });
  };
}
