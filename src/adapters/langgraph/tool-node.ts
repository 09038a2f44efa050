/**
 * `SafetyToolNode`, the gated prebuilt `ToolNode` of
 * `pulse-safety-fsm/langgraph`: each call checked before it runs and
 * recorded after with the classification it was checked with; calls that
 * need a human asked first (`interrupt()`), after the gate's preview.
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants", "Blocked calls and recovery";
 * DESIGN.md §3.1, §3.8 (failed writes), §5.7 (outcomes).
 */
import { Command, interrupt, isGraphBubbleUp, type LangGraphRunnableConfig } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { ToolMessage, isAIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ToolCall as LangChainToolCall } from '@langchain/core/messages/tool';
import type { DynamicTool, StructuredToolInterface } from '@langchain/core/tools';
import type { RunnableToolLike } from '@langchain/core/runnables';
import type { FSMBlockedError } from '../../errors/index.js';
import { createSessionGuard, type SessionGuard, type ToolCall } from '../../guard/session-guard.js';
import {
  AdapterConfigError,
  admitCall,
  andThen,
  assertSomeToolReads,
  createToolClassifier,
  isPromise,
  recordApproval,
  recordCall,
  uncheckedText,
  type AdapterGuard,
  type CallAdmission,
  type ClassificationOptions,
  type MaybePromise,
  type ToolClassifier,
} from '../common.js';
import { TOOL_APPROVAL, approvalVerdict, rejectionText, sessionCopy, type ApprovalCall, type ApprovalVerdict } from './approval.js';
import { ADAPTER, assertThreadGuardOptions, openThreadGuard, type ThreadGuard, type ThreadGuardOptions } from './thread-guard.js';
import { hasWords, withoutWords } from './words.js';

/** Options of `SafetyToolNode`: the `ToolNode` options, a thread guard, a classification source, approvals. */
export interface SafetyToolNodeOptions extends ThreadGuardOptions, ClassificationOptions {
  name?: string;
  tags?: string[];
  /**
   * As `ToolNode`'s: a tool that throws becomes a `ToolMessage` with status
   * `error` (default true). Either way it is recorded as an error. False
   * (the error fails the node, after every call of the message is recorded)
   * needs `getGuard`: a node that throws writes nothing to the state.
   */
  handleToolErrors?: boolean;
  /** The content of a refused call's `ToolMessage`; default `JSON.stringify(error.toToolResult())` (`FSM_BLOCKED`, DESIGN.md §3.1). */
  refusal?: (error: FSMBlockedError) => string;
  /**
   * A failed write (an error `ToolMessage`, a throw) is recorded as possibly
   * applied: a read must verify it before the next write. Default true.
   */
  strictFailedWrites?: boolean;
  /**
   * Which calls a human approves before they run, given each call with its
   * classification (e.g. `(call) => call.destructive === true`). Those the
   * gate would refuse even once approved are refused to the model and nobody
   * is asked; the others wait at one `interrupt()` (`ToolApprovalRequest`)
   * before any call of the message runs. An approval counts as the user's
   * confirmation (`user_input`). A predicate that throws asks.
   */
  needsApproval?: (call: ApprovalCall) => boolean;
}

/** What the gate says of one pending call (`SafetyToolNode.previewCalls`), with no side effect. */
export type ToolCallPreview = ApprovalCall &
  ({ needsApproval: boolean; allowed: true } | { needsApproval: boolean; allowed: false; error: FSMBlockedError | null });

type Tool = StructuredToolInterface | DynamicTool | RunnableToolLike;

/** One run of the node: its thread's guard, the humans' verdicts, the calls' failures kept until all are recorded. */
interface NodeRun {
  thread: ThreadGuard;
  /** The humans' verdicts by the framework's call object (the same object reaches `runTool`; an id may be missing). */
  verdicts: Map<LangChainToolCall, ApprovalVerdict>;
  failures: unknown[];
  /** Ids admitted (or taken over) in this run: an id met twice is never taken over. */
  started: Set<string>;
}

/** The calls a node run will make: a `Send`'s one, or the last AI message's calls without a `ToolMessage` yet. */
function pendingCalls(input: unknown): LangChainToolCall[] {
  if (typeof input !== 'object' || input === null) return [];
  if ('lg_tool_call' in input) return [(input as { lg_tool_call: LangChainToolCall }).lg_tool_call];
  const messages: unknown = Array.isArray(input) ? input : (input as { messages?: unknown }).messages;
  if (!Array.isArray(messages)) return [];
  const list = messages as BaseMessage[];
  const answered = new Set(list.filter((m) => m instanceof ToolMessage).map((m) => (m as ToolMessage).tool_call_id));
  const last = [...list].reverse().find((m) => isAIMessage(m));
  const calls = (last as { tool_calls?: LangChainToolCall[] } | undefined)?.tool_calls ?? [];
  return calls.filter((call) => call.id == null || !answered.has(call.id));
}

/**
 * The model's tool-calling message of a state, without its words, when it
 * has words and an id (the message reducer then replaces it in place): a
 * model node of the app's own puts the words beside its tool calls in the
 * state; this keeps them out of the next prompt and the state after the
 * calls. Undefined for a `Send` or a list input, or nothing to withhold.
 */
function askedWithoutWords(input: unknown): BaseMessage | undefined {
  if (typeof input !== 'object' || input === null || Array.isArray(input) || 'lg_tool_call' in input) return undefined;
  const messages = (input as { messages?: unknown }).messages;
  if (!Array.isArray(messages)) return undefined;
  const asked = [...(messages as BaseMessage[])].reverse().find((m) => isAIMessage(m));
  if (asked === undefined || typeof asked.id !== 'string' || !hasWords(asked)) return undefined;
  return withoutWords(asked);
}

/** The error to rethrow once every call is recorded: the first real failure, else the first interrupt. */
function firstFailure(failures: unknown[]): unknown {
  return failures.find((error) => !isGraphBubbleUp(error)) ?? failures[0];
}

/**
 * Whether the session has call `id` of tool `name` admitted and not
 * recorded (a call that waited at `interrupt()`). Synchronous with a
 * `SessionGuard`, so the checks of a message's calls are made in order.
 */
function inFlight(guard: AdapterGuard, id: string, name: string): MaybePromise<boolean> {
  const holds = (context: SessionGuard['context']) => context.inFlight.some((call) => call.key === `id:${id}` && call.tool === name);
  if ('actor' in guard) return holds(guard.context);
  return guard.getPersistedSnapshot().then((snapshot) => holds(createSessionGuard({ snapshot }).context));
}

/** One call of a message as the gate would decide it (`previewMessage`). */
interface MessagePreview {
  call: LangChainToolCall;
  shown: ApprovalCall;
  needsApproval: boolean;
  admission: CallAdmission;
}

/**
 * The prebuilt `ToolNode` with the gate. Each call is checked as it starts
 * (`admitCall`) and recorded when it ends (`recordCall`) with the
 * classification it was checked with: a failure is what the runner says (an
 * error `ToolMessage`, a throw), and for a tool whose output its arguments
 * choose (a shell, SQL) only that counts, never the output's words. Parallel
 * calls of one message share the thread's guard: a read running beside a
 * write neither establishes its target nor verifies it. A `Send` fan-out
 * (one call per task) needs `getGuard`.
 *
 * A call waiting at an `interrupt()` inside its tool is in flight, never a
 * failure: on resume LangGraph runs the node again and the call goes on
 * under its first admission (with `getGuard`; in the state the node's
 * interrupted run left nothing, so it is checked afresh).
 *
 * @throws AdapterConfigError (at construction) without a classification
 *   source, when no tool can ever read or resolve, or with
 *   `handleToolErrors: false` but no `getGuard`.
 * @throws CatalogError when the catalog does not validate.
 */
export class SafetyToolNode<T = any> extends ToolNode<T> {
  private readonly classifier: ToolClassifier;
  private readonly gateOptions: SafetyToolNodeOptions;
  private readonly refusal: (error: FSMBlockedError) => string;
  /** The run of each node invocation, by its config (ToolNode.run hands the same config to every runTool). */
  private readonly runs = new WeakMap<object, NodeRun>();

  constructor(tools: Tool[], options: SafetyToolNodeOptions) {
    super(tools, {
      ...(options.name === undefined ? {} : { name: options.name }),
      ...(options.tags === undefined ? {} : { tags: options.tags }),
      ...(options.handleToolErrors === undefined ? {} : { handleToolErrors: options.handleToolErrors }),
    });
    assertThreadGuardOptions(options);
    if (options.handleToolErrors === false && options.getGuard === undefined) {
      throw new AdapterConfigError(
        ADAPTER,
        '`handleToolErrors: false` needs `getGuard`: a node that throws writes nothing to the graph state, so the records ' +
          'of the calls that did run would be lost and a retry would run them again',
      );
    }
    if (options.needsApproval !== undefined && typeof options.needsApproval !== 'function') {
      throw new AdapterConfigError(ADAPTER, '`needsApproval` must be a function (call) => boolean');
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

  /**
   * What the gate would say now of each call the node would run on `state`
   * (the last AI message's calls without a result), with no side effect:
   * e.g. at an `interruptBefore: ['tools']` pause, to ask a human only
   * about calls that can run. A call that needs approval is previewed as
   * approved.
   * @throws TypeError as the node's run (`openThreadGuard`).
   */
  async previewCalls(state: unknown, config: LangGraphRunnableConfig): Promise<ToolCallPreview[]> {
    const { guard } = openThreadGuard(this.gateOptions, this.classifier.isSelfVerifying, state, config);
    const previews = await this.previewMessage(guard, pendingCalls(state));
    return previews.map(({ shown, needsApproval, admission }) =>
      admission.allowed ? { ...shown, needsApproval, allowed: true } : { ...shown, needsApproval, allowed: false, error: admission.error },
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
    const run: NodeRun = { thread, verdicts: new Map(), failures: [], started: new Set() };
    this.runs.set(config, run);
    try {
      await this.askApprovals(run, pendingCalls(input));
      const output = (await super.run(input, config)) as unknown;
      // Every call of the message is recorded by now (runTool never rejects): the first failure goes on.
      if (run.failures.length > 0) throw firstFailure(run.failures);
      const update = thread.update();
      const asked = askedWithoutWords(input);
      if (Array.isArray(output)) {
        const extra = [...(asked === undefined ? [] : [{ messages: [asked] }]), ...(Object.keys(update).length === 0 ? [] : [update])];
        return (extra.length === 0 ? output : [...(output as unknown[]), ...extra]) as T;
      }
      const result = output as Record<string, unknown>;
      const messages =
        asked !== undefined && Array.isArray(result.messages) ? { messages: [asked, ...(result.messages as unknown[])] } : {};
      return { ...result, ...messages, ...update } as T;
    } finally {
      this.runs.delete(config);
    }
  }

  protected override async runTool(
    call: LangChainToolCall,
    config: LangGraphRunnableConfig,
    state: unknown,
  ): Promise<ToolMessage | Command> {
    const run = this.runs.get(config);
    if (run === undefined) throw new Error(`pulse-safety-fsm/${ADAPTER}: runTool outside a SafetyToolNode run`);
    const { guard } = run.thread;
    const verdict = run.verdicts.get(call);
    if (verdict !== undefined && !verdict.approved) return this.message(call, rejectionText(call.name, verdict));
    const admission = await this.admit(run, call, verdict !== undefined);
    if (!admission.allowed) {
      return this.message(call, admission.error === null ? uncheckedText(call.name, admission.failure) : this.refusal(admission.error));
    }
    const options = { strictFailedWrites: this.gateOptions.strictFailedWrites !== false };
    let output: ToolMessage | Command;
    try {
      output = await super.runTool(call, config, state);
    } catch (error) {
      // An interrupt (or a drained run) leaves the call in flight: it has not ended.
      if (!isGraphBubbleUp(error)) await recordCall(guard, this.classifier, admission.call, { threw: true }, options);
      run.failures.push(error);
      return this.message(call, 'not run');
    }
    const failed = output instanceof ToolMessage && output.status === 'error';
    const content = output instanceof ToolMessage ? output.content : undefined;
    await recordCall(guard, this.classifier, admission.call, { threw: false, result: content, content, failed }, options);
    return output;
  }

  /**
   * The gate's admission of a call about to run: an approved one has its
   * approval recorded first; a call the session holds in flight under its
   * id (it waited at an `interrupt()`) goes on under that admission.
   */
  private admit(run: NodeRun, call: LangChainToolCall, approved: boolean): MaybePromise<CallAdmission> {
    const { guard } = run.thread;
    const id = call.id ?? '';
    const refused = (failure: unknown): CallAdmission => ({ allowed: false, error: null, failure });
    try {
      const takeOver = id !== '' && !run.started.has(id) && !run.thread.inState;
      if (id !== '') run.started.add(id);
      const admission = andThen(approved ? recordApproval(guard) : undefined, () =>
        andThen(takeOver ? inFlight(guard, id, call.name) : false, (resumed) =>
          resumed
            ? { allowed: true as const, call: this.classified(call) }
            : admitCall({ guard, classifier: this.classifier, id: call.id, name: call.name, args: call.args }),
        ),
      );
      return isPromise(admission) ? admission.catch(refused) : admission;
    } catch (failure) {
      return refused(failure);
    }
  }

  /**
   * Asks a human about the calls that need it, before any call runs: those
   * the gate would refuse even once approved are left to be refused; the
   * others wait at one `interrupt()`, and their verdicts are kept for the run.
   */
  private async askApprovals(run: NodeRun, calls: LangChainToolCall[]): Promise<void> {
    if (this.gateOptions.needsApproval === undefined) return;
    const previews = await this.previewMessage(run.thread.guard, calls);
    const asks = previews.filter(({ needsApproval, admission }) => needsApproval && admission.allowed);
    if (asks.length === 0) return;
    const answer: unknown = interrupt({ type: TOOL_APPROVAL, calls: asks.map(({ shown }) => shown) });
    for (const { call, shown } of asks) run.verdicts.set(call, approvalVerdict(answer, shown.id));
  }

  /**
   * What the gate would decide of a message's calls as the node runs them
   * (in order, each one that needs approval approved just before it is
   * checked, a call waiting at an `interrupt()` taken over), asked of a
   * throwaway copy of the session: no side effect on the session itself.
   * A session that cannot be copied refuses every call (`failure`).
   */
  private async previewMessage(guard: AdapterGuard, calls: LangChainToolCall[]): Promise<MessagePreview[]> {
    const described = calls.map((call) => ({ call, shown: this.describe(call) }));
    let copy: SessionGuard;
    try {
      copy = await sessionCopy(guard, this.gateOptions.guardOptions);
    } catch (failure) {
      return described.map(({ call, shown }) => ({
        call,
        shown,
        needsApproval: this.needsApproval(shown),
        admission: { allowed: false, error: null, failure },
      }));
    }
    const run: NodeRun = {
      thread: { guard: copy, update: () => ({}), inState: false },
      verdicts: new Map(),
      failures: [],
      started: new Set(),
    };
    const previews: MessagePreview[] = [];
    for (const { call, shown } of described) {
      const needsApproval = this.needsApproval(shown);
      previews.push({ call, shown, needsApproval, admission: await this.admit(run, call, needsApproval) });
    }
    return previews;
  }

  /** The call with its whole classification (as `admitCall` checks it). */
  private classified(call: LangChainToolCall): ToolCall {
    const classification = this.classifier.classify(call.name, call.args);
    return {
      ...(call.id === undefined || call.id === '' ? {} : { id: call.id }),
      name: call.name,
      args: call.args,
      kind: classification.kind,
      targets: classification.targets,
      destructive: classification.destructive,
      echoes: classification.echoes === true,
      ...(classification.links === undefined ? {} : { links: classification.links }),
    };
  }

  /** The call as a human is shown it. */
  private describe(call: LangChainToolCall): ApprovalCall {
    const { kind, targets, destructive } = this.classified(call);
    return {
      id: call.id ?? '',
      name: call.name,
      args: call.args,
      kind: kind ?? 'write',
      targets: targets ?? [],
      destructive: destructive === true,
    };
  }

  /** Whether the call needs a human's approval; a predicate that throws asks (fails closed). */
  private needsApproval(call: ApprovalCall): boolean {
    const predicate = this.gateOptions.needsApproval;
    if (predicate === undefined) return false;
    try {
      return predicate({ ...call, targets: [...call.targets] }) !== false;
    } catch {
      return true;
    }
  }

  /** A `ToolMessage` with status `error` for a call that did not run. */
  private message(call: LangChainToolCall, content: string): ToolMessage {
    return new ToolMessage({ status: 'error', content, name: call.name, tool_call_id: call.id ?? '' });
  }
}
