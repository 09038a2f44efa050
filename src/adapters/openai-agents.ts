/**
 * The safety gate for OpenAI Agents JS (`@openai/agents` 0.20):
 * `pulse-safety-fsm/openai-agents`.
 *
 * - A tool input guardrail checks each call before it runs; a refused call
 *   does not run, and the model gets the refusal through `rejectContent`.
 * - Outcomes are recorded so that a tool that threw is never a success. The
 *   SDK turns an exception in a tool into a plain string ("An error occurred
 *   while running the tool...") before any tool output guardrail sees it;
 *   recording `success` there would let a failed read verify a write. So the
 *   gate records the error from the tool's `errorFunction` (and its
 *   `timeoutErrorFunction`), which the SDK calls first, and the tool output
 *   guardrail records only calls not settled by then, reading their result
 *   with `outcomeOf`. That is why gated tools are built with `gate.tool(...)`
 *   (the SDK's `tool()` with the gate's guardrails and error functions):
 *   a finished `FunctionTool` keeps its error function to itself.
 * - An agent output guardrail gates the final answer; `gate.run(...)`
 *   resumes the run after its tripwire with the refusal, in words
 *   (`refusalText`), as a user message, until the answer is allowed or
 *   `maxResumes` is spent (then the tripwire error is thrown: the answer
 *   was refused).
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants", "Blocked calls and recovery";
 * DESIGN.md §3.1, §5.7.
 */
// Every parser loaded before this entry's classifiers are used (`classify/parsers.ts`).
import '../classify/eager.js';
import {
  OutputGuardrailTripwireTriggered,
  ToolGuardrailFunctionOutputFactory,
  defineToolInputGuardrail,
  defineToolOutputGuardrail,
  run as runAgent,
  tool as agentsTool,
  type Agent,
  type AgentInputItem,
  type NonStreamRunOptions,
  type OutputGuardrail,
  type RunContext,
  type RunResult,
  type Runner,
  type ToolInputGuardrailDefinition,
  type ToolOutputGuardrailDefinition,
} from '@openai/agents';
import type { ToolCall } from '../guard/session-guard.js';
import type { FSMBlockedError } from '../errors/index.js';
import { refusalText } from '../guard/refusal-text.js';
import {
  AdapterConfigError,
  admitCall,
  assertGuardSource,
  assertSomeToolReads,
  createToolClassifier,
  recordCall,
  uncheckedText,
  type AdapterGuard,
  type ClassificationOptions,
  type ToolClassifier,
} from './common.js';

const ADAPTER = 'openai-agents';

/** The name of the gate's agent output guardrail (the final answer), as it appears in `OutputGuardrailTripwireTriggered.result`. */
export const ANSWER_GUARDRAIL_NAME = 'pulse_safety_final_answer';

/** The name of the gate's tool input guardrail (the check). */
export const CHECK_GUARDRAIL_NAME = 'pulse_safety_check';

/** The name of the gate's tool output guardrail (the record). */
export const RECORD_GUARDRAIL_NAME = 'pulse_safety_record';

/** The SDK's own default message for a tool that threw (its `defaultToolErrorFunction`), kept for tools without an `errorFunction`. */
const DEFAULT_TOOL_ERROR = 'An error occurred while running the tool. Please try again.';

/** Options of `createSafetyGate`: a guard source and a classification source (`catalog`, `kinds` or `classify`). */
export interface AgentsSafetyOptions<TContext = unknown> extends ClassificationOptions {
  /** The guard of the one session this gate serves. */
  guard?: AdapterGuard;
  /**
   * The guard of a session by its key (e.g. `(key) => sessions.session(key)`
   * over `createSessionStore`, or `createSharedSessionStore` for many processes).
   */
  getGuard?: (sessionKey: string) => AdapterGuard;
  /** The session key of a run, from its context (required with `getGuard`), e.g. `(ctx) => ctx.context.chatId`. */
  sessionKey?: (context: RunContext<TContext>) => string;
  /**
   * The `rejectContent` message the model gets for a refused call; default
   * `JSON.stringify(error.toToolResult())` (the stable code `FSM_BLOCKED`
   * the model can branch on, DESIGN.md §3.1).
   */
  refusal?: (error: FSMBlockedError) => string;
  /** The words of a refused final answer, given to the model as a user message; default `refusalText(error)`. */
  answerRefusal?: (error: FSMBlockedError) => string;
  /** How many times `run` resumes after a refused answer before it throws the tripwire error; default 3. */
  maxResumes?: number;
  /** The `Runner` whose `run` the gate's `run` uses; default the SDK's shared one (`run()`). */
  runner?: Pick<Runner, 'run'>;
}

/** What the answer guardrail reports as `outputInfo` when it trips: the refusal as JSON and in words. */
export interface AnswerRefusalInfo {
  allowed: false;
  code: 'FSM_BLOCKED';
  rule: string;
  state: string;
  reason: string;
  /** The words given back to the model (`answerRefusal`, default `refusalText`). */
  refusal: string;
}

/** The gate of one app: its guardrails, error functions, gated `tool()` and resuming `run()`. */
export interface AgentsSafetyGate<TContext = unknown> {
  /**
   * The SDK's `tool()` with the gate: its input guardrail runs last among
   * the tool's input guardrails (a call another guardrail rejects is never
   * checked), its output guardrail first among the output guardrails (it
   * records the tool's own result), and `errorFunction` /
   * `timeoutErrorFunction` wrap yours (or the SDK's default) to record the
   * error first. Same options and result as `tool()`.
   */
  tool: typeof agentsTool;
  /**
   * `tool()` for each of the options, then the configuration check: at least
   * one of the tools can read or resolve.
   * @throws AdapterConfigError when none can.
   */
  tools(list: readonly Parameters<typeof agentsTool>[0][]): ReturnType<typeof agentsTool>[];
  /** The check, as a tool input guardrail (for tools you build yourself; then also use `errorFunction`). */
  readonly toolInputGuardrail: ToolInputGuardrailDefinition<TContext>;
  /** The record of calls not settled as errors, as a tool output guardrail. */
  readonly toolOutputGuardrail: ToolOutputGuardrailDefinition<TContext>;
  /**
   * An `errorFunction` that records the failed call's error, then answers as
   * `inner` does: `undefined` gives the SDK's default message, `null`
   * rethrows (the SDK's "propagate").
   */
  errorFunction<R = string>(
    inner?: ((context: RunContext<TContext>, error: unknown, details?: unknown) => R | Promise<R>) | null,
  ): (context: RunContext<TContext>, error: unknown, details?: unknown) => Promise<R | string>;
  /** The final-answer gate: put it in the agent's `outputGuardrails`. Its tripwire carries `AnswerRefusalInfo`. */
  readonly outputGuardrail: OutputGuardrail<'text', TContext>;
  /**
   * The SDK's `run()` (or `options.runner`'s), resumed after the answer
   * guardrail's tripwire: the run's history plus the refusal in words as a
   * user message (with a `session` or `conversationId`, the refusal alone),
   * on the agent that gave the answer; at most `maxResumes` times, then the
   * tripwire error is thrown. Calls of the run left unsettled when it ends
   * (a run that threw, a tool that timed out with `raise_exception`) are
   * recorded as errors. Before the first run the agent is checked: its
   * function tools gated by this gate, one of them able to read, the answer
   * guardrail in place.
   * @throws AdapterConfigError on a misconfigured agent or `stream: true` / `previousResponseId` (not supported).
   */
  run<TAgent extends Agent<any, any>>(
    agent: TAgent,
    input: string | AgentInputItem[],
    options?: NonStreamRunOptions<TContext, TAgent>,
  ): Promise<RunResult<TContext, TAgent>>;
  /**
   * Records as errors the calls of a run (its `RunContext`) still in flight:
   * for apps that call the SDK's `run()` themselves, after it ends or throws.
   * Resolves to how many.
   */
  settle(context: RunContext<TContext>): Promise<number>;
  /**
   * Checks an agent as `run` does before its first run.
   * @throws AdapterConfigError naming what is wrong.
   */
  assertAgent(agent: Agent<any, any>): void;
}

interface Pending {
  guard: AdapterGuard;
  call: ToolCall;
}

/** A tool call's arguments as the classifier reads them: the parsed JSON object, or the text when it does not parse. */
function argumentsOf(text: unknown): unknown {
  if (typeof text !== 'string') return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function callIdOf(details: unknown): string | undefined {
  const callId = (details as { toolCall?: { callId?: unknown } } | undefined)?.toolCall?.callId;
  return typeof callId === 'string' && callId !== '' ? callId : undefined;
}

/** A tool's error function, as the SDK calls it (`errorFunction`, `timeoutErrorFunction`). */
type ErrorFunction<TContext, R> = (context: RunContext<TContext>, error: unknown, details?: unknown) => R;

/**
 * The gate of one app (see `createSafetyGate`, its factory). The instance is
 * the object users get: each member is an arrow-function property, so it
 * keeps its gate when taken off it (`const { run, tool } = gate`); the
 * gate's own state and steps are `#private`, so the object's own keys are
 * exactly the members of `AgentsSafetyGate`, and the members call each
 * other's private step, never a property a caller could have replaced.
 */
class AgentsGate<TContext> implements AgentsSafetyGate<TContext> {
  readonly #options: AgentsSafetyOptions<TContext>;
  readonly #classifier: ToolClassifier;
  readonly #maxResumes: number;
  readonly #refusal: (error: FSMBlockedError) => string;
  readonly #answerWords: (error: FSMBlockedError) => string;
  readonly #runner: Pick<Runner, 'run'> | undefined;
  /** The tools built by this gate (`tool`, `tools`): `assertAgent` refuses an agent with any other function tool. */
  readonly #built = new WeakSet<object>();
  /** Admitted calls without an outcome yet, by run (its RunContext, which every hook of the run gets) and call id. */
  readonly #pending = new WeakMap<object, Map<string, Pending>>();

  readonly #checkGuardrail = defineToolInputGuardrail<TContext>({
    name: CHECK_GUARDRAIL_NAME,
    run: async ({ context, toolCall }) => this.#check(context, toolCall),
  });

  readonly #recordGuardrail = defineToolOutputGuardrail<TContext>({
    name: RECORD_GUARDRAIL_NAME,
    run: async ({ context, toolCall, output }) => {
      await this.#settleCall(context, toolCall.callId, { threw: false, result: output });
      return ToolGuardrailFunctionOutputFactory.allow();
    },
  });

  readonly #answerGuardrail: OutputGuardrail<'text', TContext> = {
    name: ANSWER_GUARDRAIL_NAME,
    execute: async ({ context }) => this.#judgeAnswer(context),
  };

  // The members, in the order of `AgentsSafetyGate` (their documentation is there).
  readonly tool = ((toolOptions: Record<string, unknown>) => this.#gatedTool(toolOptions)) as typeof agentsTool;
  readonly tools = (list: readonly Parameters<typeof agentsTool>[0][]): ReturnType<typeof agentsTool>[] => this.#gatedTools(list);
  readonly toolInputGuardrail: ToolInputGuardrailDefinition<TContext> = this.#checkGuardrail;
  readonly toolOutputGuardrail: ToolOutputGuardrailDefinition<TContext> = this.#recordGuardrail;
  readonly errorFunction = <R = string>(
    inner?: ErrorFunction<TContext, R | Promise<R>> | null,
  ): ErrorFunction<TContext, Promise<R | string>> => this.#errorFunction(inner);
  readonly outputGuardrail: OutputGuardrail<'text', TContext> = this.#answerGuardrail;
  readonly run = <TAgent extends Agent<any, any>>(
    agent: TAgent,
    input: string | AgentInputItem[],
    runOptions: NonStreamRunOptions<TContext, TAgent> = {},
  ): Promise<RunResult<TContext, TAgent>> => this.#run(agent, input, runOptions);
  readonly settle = (context: RunContext<TContext>): Promise<number> => this.#settleRun(context);
  readonly assertAgent = (agent: Agent<any, any>): void => this.#assertAgent(agent);

  /** `options` as `createSafetyGate` checked them; `classifier` made from them; `maxResumes` their count, default applied. */
  constructor(options: AgentsSafetyOptions<TContext>, classifier: ToolClassifier, maxResumes: number) {
    this.#options = options;
    this.#classifier = classifier;
    this.#maxResumes = maxResumes;
    this.#refusal = options.refusal ?? ((error: FSMBlockedError) => JSON.stringify(error.toToolResult()));
    this.#answerWords = options.answerRefusal ?? refusalText;
    this.#runner = options.runner;
  }

  /**
   * The guard of a run's session.
   * @throws TypeError when `sessionKey(context)` gives no non-empty string; what `sessionKey` or `getGuard` throw.
   */
  #sessionOf(context: RunContext<TContext>): { guard: AdapterGuard } {
    const options = this.#options;
    if (options.guard !== undefined) return { guard: options.guard };
    const key = options.sessionKey!(context);
    if (typeof key !== 'string' || key === '') {
      throw new TypeError(`pulse-safety-fsm/${ADAPTER}: sessionKey(context) must give a non-empty string, got ${JSON.stringify(key)}`);
    }
    return { guard: options.getGuard!(key) };
  }

  /** The check of one call (the tool input guardrail): admitted calls are kept until their outcome. */
  async #check(context: RunContext<TContext>, toolCall: { callId?: string; name: string; arguments?: unknown }) {
    let session: { guard: AdapterGuard };
    try {
      session = this.#sessionOf(context);
    } catch (failure) {
      return ToolGuardrailFunctionOutputFactory.rejectContent(uncheckedText(toolCall.name, failure), { allowed: false });
    }
    const admission = await admitCall({
      guard: session.guard,
      classifier: this.#classifier,
      id: toolCall.callId,
      name: toolCall.name,
      args: argumentsOf(toolCall.arguments),
    });
    if (admission.allowed) {
      if (typeof toolCall.callId === 'string' && toolCall.callId !== '') {
        const calls = this.#pending.get(context) ?? new Map<string, Pending>();
        calls.set(toolCall.callId, { guard: session.guard, call: admission.call });
        this.#pending.set(context, calls);
      }
      return ToolGuardrailFunctionOutputFactory.allow({ allowed: true });
    }
    if (admission.error === null) {
      return ToolGuardrailFunctionOutputFactory.rejectContent(uncheckedText(toolCall.name, admission.failure), { allowed: false });
    }
    return ToolGuardrailFunctionOutputFactory.rejectContent(this.#refusal(admission.error), {
      allowed: false,
      ...admission.error.toJSON(),
    });
  }

  /** Records a call's outcome once; later reports of the same call, and calls never admitted, are ignored. */
  async #settleCall(
    context: RunContext<TContext>,
    callId: string | undefined,
    outcome: { threw: true } | { threw: false; result: unknown },
  ): Promise<void> {
    if (callId === undefined) return;
    const calls = this.#pending.get(context);
    const entry = calls?.get(callId);
    if (entry === undefined) return;
    calls!.delete(callId);
    await recordCall(entry.guard, this.#classifier, entry.call, outcome);
  }

  /** The final-answer decision (the agent output guardrail): a refusal trips the wire with `AnswerRefusalInfo`. */
  async #judgeAnswer(context: RunContext<TContext>) {
    const decision = await this.#sessionOf(context).guard.finalAnswer();
    if (decision.allowed) return { tripwireTriggered: false, outputInfo: { allowed: true } };
    const { error } = decision;
    const info: AnswerRefusalInfo = {
      allowed: false,
      code: error.code,
      rule: error.rule,
      state: error.state,
      reason: error.reason,
      refusal: this.#answerWords(error),
    };
    return { tripwireTriggered: true, outputInfo: info };
  }

  /** An error function that settles the call as failed first (see `AgentsSafetyGate.errorFunction`). */
  #errorFunction<R>(inner: ErrorFunction<TContext, R | Promise<R>> | null | undefined): ErrorFunction<TContext, Promise<R | string>> {
    return async (context, error, details) => {
      await this.#settleCall(context, callIdOf(details), { threw: true });
      if (inner === null) throw error;
      if (inner === undefined) return DEFAULT_TOOL_ERROR;
      return inner(context, error, details);
    };
  }

  /** The SDK's `tool()` with the gate's guardrails and error functions (see `AgentsSafetyGate.tool`). */
  #gatedTool(toolOptions: Record<string, unknown>): ReturnType<typeof agentsTool> {
    const name =
      typeof toolOptions.name === 'string' ? toolOptions.name : ((toolOptions.execute as { name?: string } | undefined)?.name ?? 'tool');
    const structured = toolOptions.outputSchema !== undefined;
    const userError = toolOptions.errorFunction as ErrorFunction<TContext, string | Promise<string>> | null | undefined;
    const userTimeout = toolOptions.timeoutErrorFunction as ErrorFunction<TContext, unknown> | undefined;
    const timeoutMs = toolOptions.timeoutMs;
    const behavior = toolOptions.timeoutBehavior ?? (structured ? 'raise_exception' : 'error_as_result');
    const built = agentsTool({
      ...toolOptions,
      inputGuardrails: [...((toolOptions.inputGuardrails as unknown[]) ?? []), this.#checkGuardrail],
      outputGuardrails: [this.#recordGuardrail, ...((toolOptions.outputGuardrails as unknown[]) ?? [])],
      // A structured tool's SDK default is to rethrow (null); a plain one's, the default message.
      errorFunction: this.#errorFunction(userError === undefined && structured ? null : userError),
      ...(timeoutMs !== undefined && behavior === 'error_as_result'
        ? {
            timeoutErrorFunction: async (context: RunContext<TContext>, error: unknown, details?: unknown) => {
              await this.#settleCall(context, callIdOf(details), { threw: true });
              return userTimeout !== undefined
                ? userTimeout(context, error, details)
                : `Tool '${name}' timed out after ${String(timeoutMs as number)}ms.`;
            },
          }
        : {}),
    } as never);
    this.#built.add(built);
    return built;
  }

  /** `tool()` for each, then at least one must read (see `AgentsSafetyGate.tools`). */
  #gatedTools(list: readonly Parameters<typeof agentsTool>[0][]): ReturnType<typeof agentsTool>[] {
    const built = list.map((toolOptions) => this.#gatedTool(toolOptions as Record<string, unknown>));
    assertSomeToolReads(
      built.map((tool) => tool.name),
      this.#classifier,
      ADAPTER,
    );
    return built;
  }

  /** Records the run's calls still in flight as errors (see `AgentsSafetyGate.settle`). */
  async #settleRun(context: RunContext<TContext> | undefined): Promise<number> {
    const calls = context === undefined ? undefined : this.#pending.get(context);
    if (calls === undefined) return 0;
    const left = [...calls.values()];
    this.#pending.delete(context!);
    for (const entry of left) await recordCall(entry.guard, this.#classifier, entry.call, { threw: true });
    return left.length;
  }

  /** The agent's check before a run (see `AgentsSafetyGate.assertAgent`). */
  #assertAgent(agent: Agent<any, any>): void {
    const tools = (agent?.tools ?? []) as { type?: string; name?: string }[];
    const functions = tools.filter((tool) => tool.type === 'function');
    const ungated = functions.filter((tool) => !this.#built.has(tool)).map((tool) => `'${tool.name}'`);
    if (ungated.length > 0) {
      throw new AdapterConfigError(
        ADAPTER,
        `agent '${agent.name}': function tool(s) ${ungated.join(', ')} are not gated: build them with gate.tool(...) or gate.tools([...])`,
      );
    }
    assertSomeToolReads(
      functions.map((tool) => String(tool.name)),
      this.#classifier,
      ADAPTER,
    );
    const guardrails = (agent.outputGuardrails ?? []) as { name?: string }[];
    if (!guardrails.some((guardrail) => guardrail === this.#answerGuardrail || guardrail.name === ANSWER_GUARDRAIL_NAME)) {
      throw new AdapterConfigError(
        ADAPTER,
        `agent '${agent.name}': add gate.outputGuardrail to its outputGuardrails (the final-answer gate)`,
      );
    }
  }

  /** The run, resumed after a refused answer (see `AgentsSafetyGate.run`). */
  async #run<TAgent extends Agent<any, any>>(
    agent: TAgent,
    input: string | AgentInputItem[],
    runOptions: NonStreamRunOptions<TContext, TAgent>,
  ): Promise<RunResult<TContext, TAgent>> {
    if ((runOptions as { stream?: unknown }).stream === true) {
      throw new AdapterConfigError(ADAPTER, 'gate.run does not stream: use run() and catch OutputGuardrailTripwireTriggered yourself');
    }
    if (runOptions.previousResponseId !== undefined) {
      throw new AdapterConfigError(ADAPTER, 'gate.run cannot resume a previousResponseId chain: use a session or conversationId');
    }
    this.#assertAgent(agent);
    const serverHistory = runOptions.session !== undefined || runOptions.conversationId !== undefined;
    const runner = this.#runner;
    const runWith = (runner?.run.bind(runner) ?? runAgent) as (
      a: TAgent,
      i: string | AgentInputItem[],
      o: NonStreamRunOptions<TContext, TAgent>,
    ) => Promise<RunResult<TContext, TAgent>>;
    let current: TAgent = agent;
    let currentInput = input;
    for (let resumes = 0; ; resumes += 1) {
      let result: RunResult<TContext, TAgent>;
      try {
        result = await runWith(current, currentInput, runOptions);
      } catch (error) {
        const state = (error as { state?: { _context?: RunContext<TContext>; history?: AgentInputItem[]; currentAgent?: TAgent } }).state;
        await this.#settleRun(state?._context);
        const ours =
          error instanceof OutputGuardrailTripwireTriggered &&
          (error.result.guardrail as { name: string }).name === ANSWER_GUARDRAIL_NAME &&
          state !== undefined;
        if (!ours || resumes >= this.#maxResumes) throw error;
        const info = error.result.output.outputInfo as AnswerRefusalInfo;
        const message: AgentInputItem = { role: 'user', content: info.refusal };
        currentInput = serverHistory ? [message] : [...(state.history ?? []), message];
        current = state.currentAgent ?? current;
        continue;
      }
      await this.#settleRun(result.runContext);
      return result;
    }
  }
}

/**
 * Creates the safety gate for OpenAI Agents JS.
 *
 * @example
 * const gate = createSafetyGate({ guard: createSessionGuard(), catalog });
 * const tools = gate.tools([{ name: 'get_status', ... }, { name: 'restart', ... }]);
 * const agent = new Agent({ name: 'ops', model, tools, outputGuardrails: [gate.outputGuardrail] });
 * const result = await gate.run(agent, 'Restart web-01.');
 *
 * @throws AdapterConfigError without a guard or classification source, `getGuard` without `sessionKey`, or a bad `maxResumes`.
 * @throws CatalogError when the catalog does not validate.
 */
export function createSafetyGate<TContext = unknown>(options: AgentsSafetyOptions<TContext>): AgentsSafetyGate<TContext> {
  assertGuardSource(options, ADAPTER);
  const classifier = createToolClassifier(options, ADAPTER);
  if (options.getGuard !== undefined && typeof options.sessionKey !== 'function') {
    throw new AdapterConfigError(ADAPTER, '`getGuard` needs `sessionKey(context)`: which session a run belongs to');
  }
  const maxResumes = options.maxResumes ?? 3;
  if (!Number.isInteger(maxResumes) || maxResumes < 0) {
    throw new AdapterConfigError(ADAPTER, `maxResumes must be a non-negative integer, got ${String(maxResumes)}`);
  }
  return new AgentsGate(options, classifier, maxResumes);
}
