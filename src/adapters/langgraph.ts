/**
 * The safety gate for LangGraph.js (`@langchain/langgraph` 1.7):
 * `pulse-safety-fsm/langgraph`.
 *
 * - `SafetyToolNode`: the prebuilt `ToolNode` that checks every tool call
 *   before it runs and records its outcome after. The outcome is its
 *   `ToolMessage`: `status: "error"` (a tool that threw, with
 *   `handleToolErrors`) is an error, and a success's content is read with
 *   `outcomeOf`. A refused call does not run; its `ToolMessage` (status
 *   `error`) carries the structured refusal (`FSM_BLOCKED`).
 * - `createAnswerGateNode`: the node for the model's no-tool-calls edge.
 *   When the guard allows the answer it goes on (to `END` by default); when
 *   it refuses, the answer is removed from the state (`RemoveMessage`) and
 *   the refusal, in words (`refusalText`), goes back to the model as a user
 *   message.
 * - The guard is the thread's: by default its persisted snapshot lives in
 *   the graph state (`safety`, see `SafetyAnnotation`), so the checkpointer
 *   saves it with every checkpoint, keyed by `thread_id`, and time travel or
 *   a fork restores the gate with the conversation. Or pass
 *   `getGuard(threadId)` (e.g. a session store) to keep it outside the graph.
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants", "Blocked calls and recovery";
 * DESIGN.md §3.1, §5.7.
 */
// Every parser loaded before this entry's classifiers are used (`classify/parsers.ts`).
import '../classify/eager.js';
import { Annotation, Command, END, MessagesAnnotation, type LangGraphRunnableConfig } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { HumanMessage, RemoveMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import type { ToolCall as LangChainToolCall } from '@langchain/core/messages/tool';
import type { DynamicTool, StructuredToolInterface } from '@langchain/core/tools';
import type { RunnableToolLike } from '@langchain/core/runnables';
import { createSessionGuard, type SessionGuardOptions } from '../guard/session-guard.js';
import type { FSMBlockedError } from '../errors/index.js';
import { refusalText } from '../guard/refusal-text.js';
import type { PersistedSnapshot } from '../guard/snapshot.js';
import {
  AdapterConfigError,
  admitCall,
  assertSomeToolReads,
  createToolClassifier,
  recordCall,
  uncheckedText,
  type AdapterGuard,
  type ClassificationOptions,
  type ToolClassifier,
} from './common.js';

const ADAPTER = 'langgraph';

/** The default state key of the persisted guard snapshot. */
export const SAFETY_STATE_KEY = 'safety';

/**
 * The state channel of the guard's persisted snapshot (`safety`, last value
 * wins). Spread its `spec` into your own state, or use
 * `MessagesWithSafetyAnnotation`.
 */
export const SafetyAnnotation = Annotation.Root({
  safety: Annotation<PersistedSnapshot | undefined>(),
});

/** `MessagesAnnotation` plus the `safety` channel: the state of a gated chat agent. */
export const MessagesWithSafetyAnnotation = Annotation.Root({
  ...MessagesAnnotation.spec,
  ...SafetyAnnotation.spec,
});

/**
 * Where a thread's guard lives.
 *
 * - Default: its snapshot in the graph state under `stateKey` (default
 *   `safety`), restored with `createSessionGuard({ ...guardOptions, snapshot })`
 *   at each node and written back with the node's update. Needs a state with
 *   that channel (`SafetyAnnotation`) and, to persist, a checkpointer. A
 *   node that finds tool results in the thread but no snapshot throws (a
 *   state without the channel silently drops the snapshot).
 * - `getGuard(threadId)`: the guard of the run's `configurable.thread_id`
 *   (e.g. `(id) => sessions.session(id)` over `createSessionStore`, or
 *   `createSharedSessionStore` for many processes); the graph state then
 *   holds nothing of it.
 */
export interface ThreadGuardOptions {
  getGuard?: (threadId: string) => AdapterGuard;
  /** The state key of the snapshot; default `safety`. */
  stateKey?: string;
  /** Options of the guards restored from the state (clock, strict failed writes, ...). */
  guardOptions?: Omit<SessionGuardOptions, 'snapshot'>;
}

/** Options of `SafetyToolNode`: the `ToolNode` options, a thread guard and a classification source. */
export interface SafetyToolNodeOptions extends ThreadGuardOptions, ClassificationOptions {
  name?: string;
  tags?: string[];
  /** As `ToolNode`'s: a tool that throws becomes a `ToolMessage` with status `error` (default true); either way it is recorded as an error. */
  handleToolErrors?: boolean;
  /** The content of a refused call's `ToolMessage`; default `JSON.stringify(error.toToolResult())` (`FSM_BLOCKED`, DESIGN.md §3.1). */
  refusal?: (error: FSMBlockedError) => string;
}

/** Options of `createAnswerGateNode`. */
export interface AnswerGateNodeOptions extends ThreadGuardOptions {
  /** The model's node, where a refused answer goes back to; default `agent`. */
  modelNode?: string;
  /** Where an allowed answer goes; default `END`. */
  next?: string;
  /** The words of a refused answer; default `refusalText(error)`. */
  answerRefusal?: (error: FSMBlockedError) => string;
}

type Tool = StructuredToolInterface | DynamicTool | RunnableToolLike;

/** A thread's guard for one node run, and the update that persists it. */
interface ThreadGuard {
  guard: AdapterGuard;
  /** The state update to return: the new snapshot in snapshot mode, nothing with `getGuard`. */
  update(): Record<string, unknown>;
}

function threadIdOf(config: LangGraphRunnableConfig | undefined): string {
  const id = config?.configurable?.thread_id as unknown;
  if (typeof id !== 'string' && typeof id !== 'number') {
    throw new TypeError(`pulse-safety-fsm/${ADAPTER}: getGuard needs the run's configurable.thread_id`);
  }
  return String(id);
}

function openThreadGuard(
  options: ThreadGuardOptions,
  selfVerifying: ((name: string) => boolean) | undefined,
  state: unknown,
  config: LangGraphRunnableConfig | undefined,
): ThreadGuard {
  if (options.getGuard !== undefined) {
    const guard = options.getGuard(threadIdOf(config));
    return { guard, update: () => ({}) };
  }
  const key = options.stateKey ?? SAFETY_STATE_KEY;
  if (typeof state !== 'object' || state === null || Array.isArray(state)) {
    throw new TypeError(
      `pulse-safety-fsm/${ADAPTER}: the guard's snapshot lives in the graph state under '${key}': use a state object ` +
        '(e.g. MessagesWithSafetyAnnotation), or pass getGuard',
    );
  }
  const snapshot = (state as Record<string, unknown>)[key];
  const messages = (state as { messages?: unknown }).messages;
  const toolsRan = Array.isArray(messages) && messages.some((m) => m instanceof ToolMessage);
  if ((snapshot === undefined || snapshot === null) && toolsRan) {
    // LangGraph drops an update for a key the state does not have: the gate would start afresh at every node.
    throw new TypeError(
      `pulse-safety-fsm/${ADAPTER}: tools have run in this thread but the state holds no guard snapshot under '${key}': ` +
        'give the state that channel (MessagesWithSafetyAnnotation, or SafetyAnnotation.spec), or pass getGuard',
    );
  }
  const guard = createSessionGuard({
    ...(selfVerifying === undefined ? {} : { selfVerifying }),
    ...options.guardOptions,
    ...(snapshot === undefined || snapshot === null ? {} : { snapshot }),
  });
  return { guard, update: () => ({ [key]: guard.getPersistedSnapshot() }) };
}

/** A tool's output as `recordCall` reads it: the message's status and content (a `Command` is a success). */
function outcomeOfMessage(output: unknown): { result: unknown; content: unknown } {
  if (output instanceof ToolMessage) return { result: { status: output.status, content: output.content }, content: output.content };
  return { result: undefined, content: undefined };
}

/**
 * The prebuilt `ToolNode` with the gate (see the module header). Parallel
 * tool calls of one message share the thread's guard: all are checked as
 * they start, so a read running beside a write neither establishes its
 * target nor verifies it. A `Send` fan-out (one call per task) needs
 * `getGuard`: parallel tasks cannot each write the state's snapshot.
 *
 * @throws AdapterConfigError (at construction) without a classification
 *   source, or when no tool can ever read or resolve.
 * @throws CatalogError when the catalog does not validate.
 */
export class SafetyToolNode<T = any> extends ToolNode<T> {
  private readonly classifier: ToolClassifier;
  private readonly gateOptions: SafetyToolNodeOptions;
  private readonly refusal: (error: FSMBlockedError) => string;
  /** The thread guard of each node run, by its config (ToolNode.run hands the same config to every runTool). */
  private readonly runs = new WeakMap<object, ThreadGuard>();

  constructor(tools: Tool[], options: SafetyToolNodeOptions) {
    super(tools, {
      ...(options.name === undefined ? {} : { name: options.name }),
      ...(options.tags === undefined ? {} : { tags: options.tags }),
      ...(options.handleToolErrors === undefined ? {} : { handleToolErrors: options.handleToolErrors }),
    });
    if (options.getGuard !== undefined && typeof options.getGuard !== 'function') {
      throw new AdapterConfigError(ADAPTER, '`getGuard` must be a function (threadId: string) => SessionGuard');
    }
    this.classifier = createToolClassifier(options, ADAPTER);
    this.gateOptions = options;
    this.refusal = options.refusal ?? ((error) => JSON.stringify(error.toToolResult()));
    assertSomeToolReads(
      tools.map((tool) => tool.name),
      this.classifier,
      ADAPTER,
    );
  }

  protected override async run(input: unknown, config: LangGraphRunnableConfig): Promise<T> {
    const isSend = typeof input === 'object' && input !== null && 'lg_tool_call' in input;
    if (isSend && this.gateOptions.getGuard === undefined) {
      throw new TypeError(
        `pulse-safety-fsm/${ADAPTER}: a Send fan-out of tool calls needs getGuard (parallel tasks cannot share the state's snapshot)`,
      );
    }
    const state = isSend ? (({ lg_tool_call: _call, ...rest }) => rest)(input as Record<string, unknown>) : input;
    const thread = openThreadGuard(this.gateOptions, this.classifier.isSelfVerifying, state, config);
    this.runs.set(config, thread);
    try {
      const output = (await super.run(input, config)) as unknown;
      const update = thread.update();
      if (Object.keys(update).length === 0) return output as T;
      if (Array.isArray(output)) return [...(output as unknown[]), update] as T;
      return { ...(output as Record<string, unknown>), ...update } as T;
    } finally {
      this.runs.delete(config);
    }
  }

  protected override async runTool(
    call: LangChainToolCall,
    config: LangGraphRunnableConfig,
    state: unknown,
  ): Promise<ToolMessage | Command> {
    const thread = this.runs.get(config);
    if (thread === undefined) throw new Error(`pulse-safety-fsm/${ADAPTER}: runTool outside a SafetyToolNode run`);
    const { guard } = thread;
    // With a synchronous guard the check is made here, as the call starts (before any tool of the message finishes).
    const admission = await admitCall({ guard, classifier: this.classifier, id: call.id, name: call.name, args: call.args });
    if (!admission.allowed) {
      const content = admission.error === null ? uncheckedText(call.name, admission.failure) : this.refusal(admission.error);
      return new ToolMessage({ status: 'error', content, name: call.name, tool_call_id: call.id ?? '' });
    }
    let output: ToolMessage | Command;
    try {
      output = await super.runTool(call, config, state);
    } catch (error) {
      await recordCall(guard, this.classifier, admission.call, { threw: true });
      throw error;
    }
    await recordCall(guard, this.classifier, admission.call, { threw: false, ...outcomeOfMessage(output) });
    return output;
  }
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
 * A graph that reaches its `recursionLimit` throws `GraphRecursionError`:
 * the app gets no answer rather than a refused one.
 */
export function createAnswerGateNode(
  options: AnswerGateNodeOptions = {},
): (state: { messages: BaseMessage[] } & Record<string, unknown>, config: LangGraphRunnableConfig) => Promise<Command> {
  if (options.getGuard !== undefined && typeof options.getGuard !== 'function') {
    throw new AdapterConfigError(ADAPTER, '`getGuard` must be a function (threadId: string) => SessionGuard');
  }
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
