/**
 * The gated model node of `pulse-safety-fsm/langgraph`: it calls the chat
 * model and lets its answer into the graph only once the gate allows it, so
 * a refused claim reaches no stream mode (`values`, `updates`, `messages`,
 * `custom`, `debug`, `streamEvents`; issue 26).
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants" (no final answer about an
 * unverified change), "Blocked calls and recovery"; DESIGN.md §3.1.
 */
import { Command, END, type LangGraphRunnableConfig } from '@langchain/langgraph';
import { HumanMessage, type BaseMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import { AsyncLocalStorageProviderSingleton } from '@langchain/core/singletons';
import type { FSMBlockedError } from '../../errors/index.js';
import { refusalText } from '../../guard/refusal-text.js';
import { peekAnswer } from '../common.js';
import { assertThreadGuardOptions, openThreadGuard, type ThreadGuardOptions } from './thread-guard.js';
import { withoutWords } from './words.js';

/** A chat model as the node calls it: messages in, a message out (`model.bindTools(tools)`, a `prompt.pipe(model)`). */
export interface ChatModelLike {
  invoke(input: BaseMessage[], options?: Partial<RunnableConfig>): Promise<BaseMessage>;
}

/** Options of `createSafetyModelNode`: a thread guard (the same as the tool node's) and where each reply goes. */
export interface SafetyModelNodeOptions extends ThreadGuardOptions {
  /** This node's own name, where a refused answer goes back to; default `agent`. */
  modelNode?: string;
  /** The tool node, where a reply with tool calls goes; default `tools`. */
  tools?: string;
  /** Where an allowed answer goes; default `END`. */
  next?: string;
  /** The words of a refused answer, given to the model as a `HumanMessage`; default `refusalText(error)`. */
  answerRefusal?: (error: FSMBlockedError) => string;
  /**
   * Let the model's tokens stream (`messages` mode, `streamEvents`) when the
   * gate would allow an answer at the moment the model is called
   * (`peekAnswer`); default false. Caveat: the node cannot know before the
   * call whether the reply will call tools, so with true the words a model
   * writes beside its tool calls ("Deleted x.") stream before those calls
   * are checked, and may claim a call the gate then refuses. The state never
   * holds them either way. When false (the default), and whenever an answer
   * would be refused, the model is called with no callbacks, so nothing of
   * the call reaches any stream: its reply enters the graph only through
   * this node's update.
   */
  streamTokens?: boolean;
}

/** The node function: a `Command` to the tool node, to `next`, or back to this node with the refusal. */
export type SafetyModelNode = (
  state: { messages: BaseMessage[] } & Record<string, unknown>,
  config: LangGraphRunnableConfig,
) => Promise<Command>;

/** True for a reply that calls tools. */
function callsTools(message: BaseMessage): boolean {
  const calls = (message as { tool_calls?: unknown }).tool_calls;
  return Array.isArray(calls) && calls.length > 0;
}

/** Ignores what it is given: the custom stream's writer of a hidden model call. */
const discard = (): void => undefined;

/**
 * The config of a model call kept out of every stream: no callbacks (neither
 * the `messages` mode's handler nor `streamEvents`' sees it, nor any tracer),
 * and a writer that discards (`getWriter()` inside the model writes nothing
 * to the `custom` mode). The run's signal still cancels it.
 */
function hidden(config: LangGraphRunnableConfig): Partial<LangGraphRunnableConfig> {
  return {
    callbacks: [],
    writer: discard,
    configurable: { ...config.configurable, writer: discard },
    ...(config.signal === undefined ? {} : { signal: config.signal }),
  };
}

/** Calls the model out of every stream, as the context of its run too (`getWriter()` reads that). */
function invokeHidden(model: ChatModelLike, messages: BaseMessage[], config: LangGraphRunnableConfig): Promise<BaseMessage> {
  const options = hidden(config);
  return AsyncLocalStorageProviderSingleton.runWithConfig({ ...config, ...options }, () => model.invoke(messages, options), true);
}

/**
 * The gated model node (issue 26). It calls `model` on the state's
 * messages, then:
 *
 * - a reply with tool calls goes to the tool node (`Command` to `tools`)
 *   without its words: they are a claim about calls not yet run (the state,
 *   the checkpoints, every stream mode and the model's next prompt never
 *   hold them);
 * - a reply without tool calls is a candidate answer, asked of the thread's
 *   guard (`finalAnswer()`, a refusal counted). Allowed: it enters the
 *   state and the graph goes to `next` (default `END`). Refused: it never
 *   enters the state or any stream; the refusal in words goes to the
 *   model as a `HumanMessage` and the graph comes back to this node
 *   (bounded by the run's `recursionLimit`: `GraphRecursionError`, no answer).
 *
 * Unless tokens may stream (`streamTokens: true`, see its caveat), the model is called with no
 * callbacks: LangGraph's `messages` mode and `streamEvents` never see the
 * call, only the node's update. Add it with its destinations and no edge out:
 * `addNode('agent', createSafetyModelNode(model), { ends: ['tools', 'agent', END] })`.
 *
 * @throws AdapterConfigError (at creation) when `getGuard` is not a function.
 * @throws TypeError (in a run) as `openThreadGuard`; what the model throws propagates.
 */
export function createSafetyModelNode(model: ChatModelLike, options: SafetyModelNodeOptions = {}): SafetyModelNode {
  assertThreadGuardOptions(options);
  const self = options.modelNode ?? 'agent';
  const tools = options.tools ?? 'tools';
  const next = options.next ?? END;
  const words = options.answerRefusal ?? refusalText;
  const streamTokens = options.streamTokens === true;
  return async (state, config) => {
    const thread = openThreadGuard(options, undefined, state, config);
    const streams = streamTokens && (await peekAnswer(thread.guard)).allowed;
    const reply = streams ? await model.invoke(state.messages, config) : await invokeHidden(model, state.messages, config);
    if (callsTools(reply)) {
      return new Command({ goto: tools, update: { ...thread.update(), messages: [withoutWords(reply)] } });
    }
    const decision = await thread.guard.finalAnswer();
    if (decision.allowed) return new Command({ goto: next, update: { ...thread.update(), messages: [reply] } });
    return new Command({ goto: self, update: { ...thread.update(), messages: [new HumanMessage({ content: words(decision.error) })] } });
  };
}
