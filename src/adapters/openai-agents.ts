/**
 * The safety gate for OpenAI Agents JS (`@openai/agents` 0.20):
 * `pulse-safety-fsm/openai-agents`.
 *
 * - A tool input guardrail checks each call before it runs; a refused call
 *   does not run, and the model gets the refusal through `rejectContent`.
 *   The call admitted is kept, with its whole classification, until its
 *   outcome is recorded (`recordCall`): never classified twice.
 * - Outcomes are recorded so that a tool that threw is never a success. The
 *   SDK turns an exception in a tool into a plain string ("An error occurred
 *   while running the tool...") before any tool output guardrail sees it;
 *   recording `success` there would let a failed read verify a write. So the
 *   gate records the error from the tool's `errorFunction` (and its
 *   `timeoutErrorFunction`), which the SDK calls first, and the tool output
 *   guardrail records only calls not settled by then. That is why gated
 *   tools are built with `gate.tool(...)` (the SDK's `tool()` with the
 *   gate's guardrails and error functions): a finished `FunctionTool` keeps
 *   its error function to itself.
 * - Human approval (`needsApproval`): a call the gate would refuse now
 *   (`previewCall`; every call of one response in order: `gate.run` runs
 *   them one at a time, `maxFunctionToolConcurrency` 1, so the ones without
 *   approval before it have run, and the ones asked before it are replayed
 *   as approved and run on a throwaway copy of the session) is refused to
 *   the model at once, and nobody is asked; a
 *   call waiting for its approval is not admitted (nothing in flight, nothing
 *   recorded); once approved, the approval counts as the user's confirmation
 *   (`recordApproval`) and the call is checked as it runs; a rejected one
 *   never ran and records nothing.
 * - An agent output guardrail gates the final answer; `gate.run(...)`
 *   resumes the run after its tripwire with the refusal, in words
 *   (`refusalText`), as a user message, until the answer is allowed or
 *   `maxResumes` is spent (then the tripwire error is thrown: the answer
 *   was refused). The refusal's words are the gate's own, never read from
 *   the error (the SDK redacts it under `toolUseBehavior` that stops on a
 *   tool). Not streamed, the result is the last resume's (its `newItems`
 *   hold that leg only). Text beside tool calls (and reasoning) is judged as an
 *   answer once the calls of its response settled: shown only when every
 *   call beside it was admitted and an answer would have been allowed right
 *   after them. Streamed (`stream: true`), every text of the model is held
 *   until the gate decides on it (`openai-agents/held-stream.ts`); not
 *   streamed, the refused text is hidden from the result's `newItems`.
 * - `gate.run` checks the agent and every agent reachable through its
 *   handoffs (gated tools, both guardrails); an agent used as a tool
 *   (`asTool`) is refused.
 * - Runs go through `gate.run`: it gives each run its session's guard (one
 *   guard per conversation, by the run's `sessionKey`, `session` or
 *   `conversationId`), and the SDK runs output guardrails only after a
 *   streamed answer was shown. A run the gate did not start (the SDK's
 *   `run()` on a gated agent) is refused at the gate's first callback
 *   (the agent input guardrail `gate.inputGuardrail`, before the model is
 *   called) with an `AdapterConfigError` naming the fix.
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants", "Blocked calls and recovery";
 * DESIGN.md §3.1, §5.7.
 */
// Every parser loaded before this entry's classifiers are used (`classify/parsers.ts`).
import '../classify/eager.js';
import {
  OutputGuardrailTripwireTriggered,
  RunContext,
  RunState,
  ToolGuardrailFunctionOutputFactory,
  defineToolInputGuardrail,
  defineToolOutputGuardrail,
  run as runAgent,
  tool as agentsTool,
  type Agent,
  type AgentInputItem,
  type InputGuardrail,
  type NonStreamRunOptions,
  type OutputGuardrail,
  type RunResult,
  type Runner,
  type StreamRunOptions,
  type StreamedRunResult,
  type ToolInputGuardrailDefinition,
  type ToolOutputGuardrailDefinition,
} from '@openai/agents';
import { createSessionGuard, type ToolCall } from '../guard/session-guard.js';
import type { FSMBlockedError } from '../errors/index.js';
import { refusalText } from '../guard/refusal-text.js';
import {
  AdapterConfigError,
  admitCall,
  assertGuardSource,
  assertSomeToolReads,
  createToolClassifier,
  peekAnswer,
  previewCall,
  recordApproval,
  recordCall,
  uncheckedText,
  type CallAdmission,
  type AdapterGuard,
  type ClassificationOptions,
  type ToolClassifier,
} from './common.js';
import { GatedStream, HeldEvents, callIdsOf, isText } from './openai-agents/held-stream.js';

export { AdapterConfigError } from './common.js';
export { GatedStream } from './openai-agents/held-stream.js';

const ADAPTER = 'openai-agents';

/** The name of the gate's agent output guardrail (the final answer), as it appears in `OutputGuardrailTripwireTriggered.result`. */
export const ANSWER_GUARDRAIL_NAME = 'pulse_safety_final_answer';

/** The name of the gate's agent input guardrail (the run is one `gate.run` started). */
export const RUN_GUARDRAIL_NAME = 'pulse_safety_gated_run';

/** The name of the gate's tool input guardrail (the check). */
export const CHECK_GUARDRAIL_NAME = 'pulse_safety_check';

/** The name of the gate's tool output guardrail (the record). */
export const RECORD_GUARDRAIL_NAME = 'pulse_safety_record';

/** The SDK's own default message for a tool that threw (its `defaultToolErrorFunction`), kept for tools without an `errorFunction`. */
const DEFAULT_TOOL_ERROR = 'An error occurred while running the tool. Please try again.';

/** Why a run the gate did not start is refused, and the fix. */
const PLAIN_RUN =
  'this agent is gated: run it with gate.run(agent, input, options) (stream: true included), ' +
  "not the SDK's run(): a plain run has no session of its own, and streamed it would show the answer " +
  'before the gate decides on it (the SDK runs output guardrails after the text is streamed)';

/** Options of `createSafetyGate`: a guard source and a classification source (`catalog`, `kinds` or `classify`). */
export interface AgentsSafetyOptions<TContext = unknown> extends ClassificationOptions {
  /**
   * The guard of the ONE conversation this gate serves: the first run binds
   * it; a later run of another conversation (another `sessionKey`, `session`
   * or `conversationId`; or none, unless it resumes a `RunState`) is refused
   * (`AdapterConfigError`). For an app serving many conversations, use `getGuard`.
   */
  guard?: AdapterGuard;
  /**
   * The guard of a conversation by its key (e.g. `(key) => sessions.session(key)`
   * over `createSessionStore`, or `createSharedSessionStore` for many
   * processes). The key of a run: `sessionKey(runContext)` when given, else
   * the run's `session.getSessionId()`, else its `conversationId`; a run with
   * none is refused.
   */
  getGuard?: (sessionKey: string) => AdapterGuard;
  /** The conversation key of a run, from its context, e.g. `(ctx) => ctx.context.chatId`; wins over `session` and `conversationId`. */
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
  /**
   * A write that failed (threw, timed out) is recorded as possibly applied:
   * it needs a read before the next write or the answer (a call that threw
   * may have run). Default true; false trusts a failure to mean "not applied".
   */
  strictFailedWrites?: boolean;
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

/** The input of `gate.run`: the SDK's (a string, items, or a `RunState` to resume, e.g. after approvals). */
export type GatedRunInput<TContext, TAgent extends Agent<any, any>> = string | AgentInputItem[] | RunState<TContext, TAgent>;

/** A streamed gated run (`gate.run(..., { stream: true })`): see `GatedStream`. */
export type GatedStreamedRun<TContext, TAgent extends Agent<any, any>> = GatedStream<StreamedRunResult<TContext, TAgent>>;

/** The gate's `run`: the SDK's `run()` through the gate, streamed or not. */
export interface GatedRun<TContext> {
  <TAgent extends Agent<any, any>>(
    agent: TAgent,
    input: GatedRunInput<TContext, TAgent>,
    options?: NonStreamRunOptions<TContext, TAgent>,
  ): Promise<RunResult<TContext, TAgent>>;
  <TAgent extends Agent<any, any>>(
    agent: TAgent,
    input: GatedRunInput<TContext, TAgent>,
    options: StreamRunOptions<TContext, TAgent>,
  ): Promise<GatedStreamedRun<TContext, TAgent>>;
}

/** The gate of one app: its guardrails, error functions, gated `tool()` and `run()`. */
export interface AgentsSafetyGate<TContext = unknown> {
  /**
   * The SDK's `tool()` with the gate: its input guardrail runs last among
   * the tool's input guardrails (a call another guardrail rejects is never
   * checked), its output guardrail first among the output guardrails (it
   * records the tool's own result), `errorFunction` / `timeoutErrorFunction`
   * wrap yours (or the SDK's default) to record the error first, and
   * `needsApproval` (yours) is asked only about calls the gate would allow
   * now. Same options and result as `tool()`.
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
  /**
   * The run check, for the agent's `inputGuardrails` (blocking: it runs
   * before the model is called): a run `gate.run` did not start is refused
   * (its error names the fix) before any text of it is streamed.
   */
  readonly inputGuardrail: InputGuardrail;
  /** The final-answer gate: put it in the agent's `outputGuardrails`. Its tripwire carries `AnswerRefusalInfo`. */
  readonly outputGuardrail: OutputGuardrail<'text', TContext>;
  /**
   * The SDK's `run()` (or `options.runner`'s) through the gate. Before the
   * first run the agent is checked (`assertAgent`) and the run is given its
   * conversation's guard (see `guard`, `getGuard`). After the answer
   * guardrail's tripwire the run is resumed: its history plus the refusal in
   * words as a user message (with a `session` or `conversationId`, the
   * refusal alone), on the agent that gave the answer, in the same
   * `RunContext`; at most `maxResumes` times, then the tripwire error is
   * thrown. `input` may be a `RunState` (resuming after approvals). With
   * `stream: true` it resolves to a `GatedStream`: the events, with the
   * model's text held until the gate allows an answer; not streamed, the
   * result's `newItems` (and `history`, `output` derived from them) leave
   * out text the gate refused (see `#hideRefusedText`); after a refused
   * answer the result is the last resume's, its `newItems` that leg only.
   * The calls of one model response run one at a time, in order (the run's
   * `toolExecution.maxFunctionToolConcurrency` is set to 1). Calls of the
   * run left unsettled when it ends (a run that threw, a tool that timed
   * out with `raise_exception`) are recorded as errors.
   * @throws AdapterConfigError on a misconfigured agent, a run of another
   *   conversation than a fixed `guard`'s, a run without a key for
   *   `getGuard`, or `previousResponseId` (not supported).
   */
  run: GatedRun<TContext>;
  /**
   * Records as errors the calls of a run (its `RunContext`) still in flight.
   * Resolves to how many. (`gate.run` does it itself.)
   */
  settle(context: RunContext<TContext>): Promise<number>;
  /**
   * Checks an agent as `run` does before its first run: its function tools
   * gated by this gate, one of them able to read, both guardrails in place;
   * the same for every agent reachable through its handoffs (one without
   * tools may have none that reads); no agent used as a tool (`asTool`).
   * @throws AdapterConfigError naming what is wrong.
   */
  assertAgent(agent: Agent<any, any>): void;
}

/** An admitted call without an outcome yet. */
interface Pending {
  guard: AdapterGuard;
  call: ToolCall;
}

/** One run's gate state (its `RunContext` is the key), across `gate.run`'s resumes and the SDK's resumes of its `RunState`. */
interface GatedRunEntry {
  guard: AdapterGuard;
  /** How many `gate.run` calls are running it now: its callbacks are refused when 0 (a plain `run()` of its state). */
  active: number;
  /** Admitted calls without an outcome yet, by call id. */
  pending: Map<string, Pending>;
  /** Calls a human was asked to approve (the gate allowed them when asked), by call id. */
  asked: Set<string>;
  /** Calls the gate would refuse when their approval was to be asked, with that refusal: never run without one. */
  doomed: Map<string, FSMBlockedError>;
  /**
   * The calls of this leg of the run put to a human (waiting for their
   * approval), in order: each later call of the response is previewed on a
   * throwaway copy of the session where these were approved and ran
   * (`#previewInTurn`). Emptied when the leg ends (`#settleRun`): an
   * interruption ends it, and the approved calls then run for real.
   */
  assumed: { name: string; args: unknown }[];
  /** Keeps the previews of `#previewInTurn` in order. */
  chain: Promise<unknown>;
  /**
   * The last answer refusal of the answer guardrail: what a resume gives the
   * model (the SDK may redact the tripwire's `outputInfo`, e.g. with a
   * `toolUseBehavior` that ends the run on a tool's output).
   */
  refused: AnswerRefusalInfo | undefined;
  /**
   * Calls recorded, by call id: the order of their records (`seq`) and
   * whether an answer would have been allowed right after (`allowed`): how
   * text beside them is judged (`#besideAllowed`).
   */
  settled: Map<string, { seq: number; allowed: boolean }>;
  /** The last `seq` given. */
  seq: number;
}

/**
 * True for a refusal only the user's confirmation clears (`needs-confirmation`,
 * a write to an unknown place): a human's approval of the call is that
 * confirmation (`recordApproval`), so the human is asked about it.
 */
function approvable(error: FSMBlockedError): boolean {
  const clearedBy = error.clearedBy;
  return clearedBy.length > 0 && clearedBy.every((kind) => kind === 'user_input');
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

/** A run result as the gate reads it to hide refused text (`RunResult`, `StreamedRunResult`). */
interface RunResultLike {
  readonly rawResponses?: readonly { output?: unknown }[];
  readonly newItems?: readonly { type?: string; rawItem?: unknown }[];
}

/** A tool's error function, as the SDK calls it (`errorFunction`, `timeoutErrorFunction`). */
type ErrorFunction<TContext, R> = (context: RunContext<TContext>, error: unknown, details?: unknown) => R;

/** A tool's `needsApproval`, as the SDK's `tool()` takes it. */
type NeedsApproval<TContext> = boolean | ((context: RunContext<TContext>, input: unknown, callId?: string) => Promise<boolean> | boolean);

/** The SDK's run function, as the gate calls it. */
type RunWith<TContext, TAgent extends Agent<any, any>, R> = (
  agent: TAgent,
  input: GatedRunInput<TContext, TAgent>,
  options: Record<string, unknown>,
) => Promise<R>;

/** The state an SDK error carries (`error.state`), as far as the gate reads it. */
interface ErrorState<TContext, TAgent> {
  _context?: RunContext<TContext>;
  history?: AgentInputItem[];
  currentAgent?: TAgent;
}

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
  readonly #strict: boolean;
  readonly #refusal: (error: FSMBlockedError) => string;
  readonly #answerWords: (error: FSMBlockedError) => string;
  readonly #runner: Pick<Runner, 'run'> | undefined;
  /** The tools built by this gate (`tool`, `tools`): `assertAgent` refuses an agent with any other function tool. */
  readonly #built = new WeakSet<object>();
  /** The runs `gate.run` started, by their `RunContext` (which every callback of the run gets). */
  readonly #runs = new WeakMap<object, GatedRunEntry>();
  /** A fixed `guard`'s conversation, once a run bound it: its key (undefined: a run that named none). */
  #bound: { key: string | undefined } | undefined;

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

  readonly #runGuardrail: InputGuardrail = {
    name: RUN_GUARDRAIL_NAME,
    runInParallel: false,
    execute: async ({ context }) => {
      this.#runOf(context as RunContext<TContext>);
      return { tripwireTriggered: false, outputInfo: { gated: true } };
    },
  };

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
  readonly inputGuardrail: InputGuardrail = this.#runGuardrail;
  readonly outputGuardrail: OutputGuardrail<'text', TContext> = this.#answerGuardrail;
  readonly run = ((agent: Agent<any, any>, input: GatedRunInput<TContext, Agent<any, any>>, runOptions: Record<string, unknown> = {}) =>
    this.#run(agent, input, runOptions)) as GatedRun<TContext>;
  readonly settle = (context: RunContext<TContext>): Promise<number> => this.#settleRun(this.#runs.get(context));
  readonly assertAgent = (agent: Agent<any, any>): void => this.#assertAgent(agent);

  /** `options` as `createSafetyGate` checked them; `classifier` made from them; `maxResumes` their count, default applied. */
  constructor(options: AgentsSafetyOptions<TContext>, classifier: ToolClassifier, maxResumes: number) {
    this.#options = options;
    this.#classifier = classifier;
    this.#maxResumes = maxResumes;
    this.#strict = options.strictFailedWrites ?? true;
    this.#refusal = options.refusal ?? ((error: FSMBlockedError) => JSON.stringify(error.toToolResult()));
    this.#answerWords = options.answerRefusal ?? refusalText;
    this.#runner = options.runner;
  }

  /**
   * The gate state of a run being run by `gate.run`.
   * @throws AdapterConfigError for a run `gate.run` did not start, or one of its states resumed by the SDK's `run()`.
   */
  #runOf(context: RunContext<TContext>): GatedRunEntry {
    const entry = this.#runs.get(context);
    if (entry === undefined || entry.active === 0) throw new AdapterConfigError(ADAPTER, PLAIN_RUN);
    return entry;
  }

  /**
   * The conversation key of a run: `sessionKey(runContext)`, else the
   * session's id, else the conversation id; undefined when it names none.
   * @throws TypeError when `sessionKey` gives no non-empty string; what it or `getSessionId` throw.
   */
  async #keyOf(context: RunContext<TContext>, runOptions: Record<string, unknown>, state: RunState<TContext, any> | undefined) {
    if (this.#options.sessionKey !== undefined) {
      const key = this.#options.sessionKey(context);
      if (typeof key !== 'string' || key === '') {
        throw new TypeError(`pulse-safety-fsm/${ADAPTER}: sessionKey(context) must give a non-empty string, got ${JSON.stringify(key)}`);
      }
      return key;
    }
    const session = runOptions.session as { getSessionId?: () => Promise<string> } | undefined;
    if (typeof session?.getSessionId === 'function') {
      const id = await session.getSessionId();
      if (typeof id === 'string' && id !== '') return id;
    }
    const conversationId = runOptions.conversationId ?? state?._conversationId;
    return typeof conversationId === 'string' && conversationId !== '' ? conversationId : undefined;
  }

  /**
   * The gate state of a run `gate.run` is about to run: the one it has (a
   * resume in the same `RunContext`), or a new one with its conversation's
   * guard.
   * @throws AdapterConfigError when a fixed `guard` already serves another
   *   conversation, or `getGuard` has no key; what `getGuard` throws.
   */
  async #enter(context: RunContext<TContext>, runOptions: Record<string, unknown>, state: RunState<TContext, any> | undefined) {
    const known = this.#runs.get(context);
    if (known !== undefined) return known;
    const key = await this.#keyOf(context, runOptions, state);
    let guard: AdapterGuard;
    if (this.#options.guard !== undefined) {
      // The same key is the same conversation; no key is, only for a state this gate's runs left (a fresh run is another).
      const same = this.#bound !== undefined && key === this.#bound.key && (key !== undefined || state !== undefined);
      if (this.#bound !== undefined && !same) {
        throw new AdapterConfigError(
          ADAPTER,
          `this gate's \`guard\` serves one conversation${this.#bound.key === undefined ? '' : ` ('${this.#bound.key}')`}, and this run ` +
            `${key === undefined ? 'names none' : `is '${key}'`}: one guard shared by two conversations would let one's reads admit ` +
            "the other's writes. Serve many with `getGuard(key)` (and `sessionKey`, a `session` or a `conversationId` per run), " +
            'or name this conversation the same way in each of its runs',
        );
      }
      this.#bound ??= { key };
      guard = this.#options.guard;
    } else {
      if (key === undefined) {
        throw new AdapterConfigError(
          ADAPTER,
          '`getGuard` needs the conversation of each run: give `sessionKey(runContext)`, or run with a `session` or a `conversationId`',
        );
      }
      guard = this.#options.getGuard!(key);
    }
    const entry: GatedRunEntry = {
      guard,
      active: 0,
      pending: new Map(),
      asked: new Set(),
      doomed: new Map(),
      assumed: [],
      chain: Promise.resolve(),
      refused: undefined,
      settled: new Map(),
      seq: 0,
    };
    this.#runs.set(context, entry);
    return entry;
  }

  /** The refusal of a call as the model gets it (`rejectContent`). */
  #reject(error: FSMBlockedError) {
    return ToolGuardrailFunctionOutputFactory.rejectContent(this.#refusal(error), { allowed: false, ...error.toJSON() });
  }

  /**
   * The check of one call (the tool input guardrail). A call waiting for its
   * approval (a pre-approval run of the guardrails) is only previewed; an
   * approved one first records the approval; then the call is admitted and
   * kept until its outcome.
   */
  async #check(context: RunContext<TContext>, toolCall: { callId?: string; name: string; arguments?: unknown }) {
    const entry = this.#runOf(context);
    const { callId, name } = toolCall;
    const args = argumentsOf(toolCall.arguments);
    const id = typeof callId === 'string' && callId !== '' ? callId : undefined;
    const asked = id !== undefined && entry.asked.has(id);
    const approved = asked && context.isToolApproved({ toolName: name, callId: id }) === true;
    try {
      if (asked && !approved) {
        // The guardrails run before the approval is asked (`preApprovalInputGuardrails`): nothing is admitted yet.
        const preview = await previewCall({ guard: entry.guard, classifier: this.#classifier, name, args });
        if (preview.allowed || (preview.error !== null && approvable(preview.error))) {
          return ToolGuardrailFunctionOutputFactory.allow({ allowed: true, awaitingApproval: true });
        }
        if (preview.error === null) {
          return ToolGuardrailFunctionOutputFactory.rejectContent(uncheckedText(name, preview.failure), { allowed: false });
        }
        return this.#reject(preview.error);
      }
      if (approved) {
        entry.asked.delete(id);
        await recordApproval(entry.guard);
      } else if (!asked && entry.assumed.length > 0) {
        // A call beside calls put to a human before it in this response: judged as if they were approved and ran.
        const preview = await this.#previewInTurn(entry, name, args);
        if (!preview.allowed) {
          if (preview.error === null) {
            return ToolGuardrailFunctionOutputFactory.rejectContent(uncheckedText(name, preview.failure), { allowed: false });
          }
          return this.#reject(preview.error);
        }
      }
    } catch (failure) {
      return ToolGuardrailFunctionOutputFactory.rejectContent(uncheckedText(name, failure), { allowed: false });
    }
    const doomed = id === undefined ? undefined : entry.doomed.get(id);
    if (doomed !== undefined) {
      // Refused when its approval was to be asked (e.g. a second write beside one asked): it has no approval and never runs.
      entry.doomed.delete(id!);
      return this.#reject(doomed);
    }
    const admission = await admitCall({ guard: entry.guard, classifier: this.#classifier, id, name, args });
    if (!admission.allowed) {
      if (admission.error === null) {
        return ToolGuardrailFunctionOutputFactory.rejectContent(uncheckedText(name, admission.failure), { allowed: false });
      }
      return this.#reject(admission.error);
    }
    if (id !== undefined) entry.pending.set(id, { guard: entry.guard, call: admission.call });
    return ToolGuardrailFunctionOutputFactory.allow({ allowed: true });
  }

  /**
   * The gate's `needsApproval`: the tool's own first; a call it would ask
   * about is asked about only when the gate would allow it now. A call the
   * gate would refuse gets no approval request: the check refuses it to the
   * model; one refused only for want of the user's confirmation is asked
   * (the approval is that confirmation). The calls of one model response
   * are previewed in order, each as if those asked before it were approved
   * and ran (`#previewInTurn`): a second write beside the first is refused
   * at once, with its refusal, and nobody is asked. A preview that fails
   * asks the human (the approval stays; the check decides after it).
   */
  async #needsApproval(
    context: RunContext<TContext>,
    tool: { name: string; own: NeedsApproval<TContext> },
    input: unknown,
    callId?: string,
  ) {
    const { name, own } = tool;
    const asks = typeof own === 'function' ? await own(context, input, callId) : own;
    if (asks !== true) return false;
    const entry = this.#runOf(context);
    if (typeof callId !== 'string' || callId === '') return true;
    const preview = await this.#previewInTurn(entry, name, input);
    if (!preview.allowed && preview.error !== null && !approvable(preview.error)) {
      entry.doomed.set(callId, preview.error);
      return false;
    }
    entry.asked.add(callId);
    entry.assumed.push({ name, args: input });
    return true;
  }

  /**
   * Would this call be allowed, once the calls of this response put to a
   * human before it (`GatedRunEntry.assumed`) were approved and ran? The
   * calls of a response run one after another (`gate.run` sets the run's
   * `maxFunctionToolConcurrency` to 1), so a call that needs no approval
   * has run, and is on the session, when the next one is previewed; the
   * ones waiting for a human are replayed, in order, on a throwaway copy of
   * the session (approved, admitted, recorded as run). So a write beside a
   * write asked before it, or after one that ran, is refused at once
   * (`write-in-flight` / `unverified-write`) and nobody is asked about it.
   * The session itself is never touched. A copy that cannot be made, or a
   * replay that fails, refuses (fails closed: the call gets the gate's
   * "could not check" refusal).
   */
  #previewInTurn(entry: GatedRunEntry, name: string, args: unknown): Promise<CallAdmission> {
    const step = async (): Promise<CallAdmission> => {
      if (entry.assumed.length === 0) return previewCall({ guard: entry.guard, classifier: this.#classifier, name, args });
      try {
        const snapshot = 'actor' in entry.guard ? entry.guard.getPersistedSnapshot() : await entry.guard.getPersistedSnapshot();
        const copy = createSessionGuard({ snapshot });
        for (const assumed of entry.assumed) {
          await recordApproval(copy);
          const admission = await admitCall({ guard: copy, classifier: this.#classifier, id: undefined, ...assumed });
          if (admission.allowed) {
            await recordCall(copy, this.#classifier, admission.call, { threw: false, result: '' }, { strictFailedWrites: this.#strict });
          }
        }
        return await previewCall({ guard: copy, classifier: this.#classifier, name, args });
      } catch (failure) {
        return { allowed: false, error: null, failure } as CallAdmission;
      }
    };
    const next = entry.chain.then(step, step);
    entry.chain = next.catch(() => undefined);
    return next;
  }

  /** Records a call's outcome once; later reports of the same call, and calls never admitted, are ignored. */
  async #settleCall(
    context: RunContext<TContext>,
    callId: string | undefined,
    outcome: { threw: true } | { threw: false; result: unknown },
  ): Promise<void> {
    if (callId === undefined) return;
    const entry = this.#runs.get(context);
    const pending = entry?.pending.get(callId);
    if (pending === undefined) return;
    entry!.pending.delete(callId);
    await recordCall(pending.guard, this.#classifier, pending.call, outcome, { strictFailedWrites: this.#strict });
    await this.#noteSettled(entry!, [callId]);
  }

  /** Notes calls just recorded, with whether an answer would be allowed right after them (see `GatedRunEntry.settled`). */
  async #noteSettled(entry: GatedRunEntry, callIds: readonly string[]): Promise<void> {
    if (callIds.length === 0) return;
    entry.seq += 1;
    const seq = entry.seq;
    const allowed = await this.#mayAnswer(entry);
    for (const callId of callIds) entry.settled.set(callId, { seq, allowed });
  }

  /**
   * Whether text written beside tool calls may be shown: judged as an answer
   * when it was written, i.e. once its calls settled. True only when every
   * call beside it was admitted and recorded (none refused, none waiting for
   * an approval, none the gate does not gate) and an answer would have been
   * allowed right after the last of them was recorded.
   */
  #besideAllowed(entry: GatedRunEntry, callIds: readonly string[]): boolean {
    let last: { seq: number; allowed: boolean } | undefined;
    for (const callId of callIds) {
      const settled = entry.settled.get(callId);
      if (settled === undefined) return false;
      if (last === undefined || settled.seq > last.seq) last = settled;
    }
    return last?.allowed === true;
  }

  /**
   * Hides from a run result's `newItems` (and so from its `history` and
   * `output`, which the SDK derives from it) the text the user must not
   * read: the messages and reasoning of a response beside tool calls that
   * `#besideAllowed` refuses, and of a response without calls that is not
   * the allowed final answer (`answered`: the run ended well, not on an
   * approval request). Text of no known response is hidden too (fail
   * closed). The run's `state` keeps every item (the SDK resumes from it).
   */
  #hideRefusedText(entry: GatedRunEntry, result: RunResultLike, answered: boolean): void {
    const responses = result.rawResponses ?? [];
    const shown = new Set<unknown>();
    responses.forEach((response, index) => {
      const output = Array.isArray(response?.output) ? response.output : [];
      const callIds = callIdsOf(output);
      const ok = callIds.length > 0 ? this.#besideAllowed(entry, callIds) : answered && index === responses.length - 1;
      if (ok) for (const item of output) if (isText(item)) shown.add(item);
    });
    const items = result.newItems ?? [];
    const kept = items.filter(
      (item) => !(item?.type === 'message_output_item' || item?.type === 'reasoning_item') || shown.has(item.rawItem),
    );
    if (kept.length === items.length) return;
    Object.defineProperty(result, 'newItems', { configurable: true, enumerable: false, get: () => kept });
  }

  /** Whether an answer would be allowed now (`peekAnswer`, no side effect); false when the guard cannot tell. */
  async #mayAnswer(entry: GatedRunEntry): Promise<boolean> {
    try {
      return (await peekAnswer(entry.guard)).allowed;
    } catch {
      return false;
    }
  }

  /** The final-answer decision (the agent output guardrail): a refusal trips the wire with `AnswerRefusalInfo`. */
  async #judgeAnswer(context: RunContext<TContext>) {
    const entry = this.#runOf(context);
    entry.refused = undefined;
    const decision = await entry.guard.finalAnswer();
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
    entry.refused = info;
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

  /** The SDK's `tool()` with the gate's guardrails, error functions and approval (see `AgentsSafetyGate.tool`). */
  #gatedTool(toolOptions: Record<string, unknown>): ReturnType<typeof agentsTool> {
    const name =
      typeof toolOptions.name === 'string' ? toolOptions.name : ((toolOptions.execute as { name?: string } | undefined)?.name ?? 'tool');
    const structured = toolOptions.outputSchema !== undefined;
    const userError = toolOptions.errorFunction as ErrorFunction<TContext, string | Promise<string>> | null | undefined;
    const userTimeout = toolOptions.timeoutErrorFunction as ErrorFunction<TContext, unknown> | undefined;
    const approval = toolOptions.needsApproval as NeedsApproval<TContext> | undefined;
    const timeoutMs = toolOptions.timeoutMs;
    const behavior = toolOptions.timeoutBehavior ?? (structured ? 'raise_exception' : 'error_as_result');
    const built = agentsTool({
      ...toolOptions,
      inputGuardrails: [...((toolOptions.inputGuardrails as unknown[]) ?? []), this.#checkGuardrail],
      outputGuardrails: [this.#recordGuardrail, ...((toolOptions.outputGuardrails as unknown[]) ?? [])],
      // A structured tool's SDK default is to rethrow (null); a plain one's, the default message.
      errorFunction: this.#errorFunction(userError === undefined && structured ? null : userError),
      ...(approval === undefined || approval === false
        ? {}
        : {
            needsApproval: async (context: RunContext<TContext>, input: unknown, callId?: string) =>
              this.#needsApproval(context, { name, own: approval }, input, callId),
          }),
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
  async #settleRun(entry: GatedRunEntry | undefined): Promise<number> {
    if (entry === undefined) return 0;
    entry.assumed = [];
    const left = [...entry.pending.entries()];
    entry.pending.clear();
    for (const [, pending] of left) {
      await recordCall(pending.guard, this.#classifier, pending.call, { threw: true }, { strictFailedWrites: this.#strict });
    }
    await this.#noteSettled(
      entry,
      left.map(([callId]) => callId),
    );
    return left.length;
  }

  /**
   * The agent's check before a run (see `AgentsSafetyGate.assertAgent`):
   * the agent, then every agent reachable through its handoffs (each may end
   * the run with its answer, and runs its tools in the same run).
   */
  #assertAgent(agent: Agent<any, any>): void {
    const seen = new Set<object>();
    const queue: { agent: Agent<any, any>; via: string | undefined }[] = [{ agent, via: undefined }];
    while (queue.length > 0) {
      const next = queue.shift()!;
      if (seen.has(next.agent)) continue;
      seen.add(next.agent);
      this.#assertOneAgent(next.agent, next.via);
      const handoffs = (next.agent?.handoffs ?? []) as unknown[];
      for (const item of handoffs) {
        const target = (item as { agent?: unknown } | null)?.agent ?? item;
        if (target === null || typeof target !== 'object' || !Array.isArray((target as { tools?: unknown }).tools)) {
          throw new AdapterConfigError(ADAPTER, `agent '${next.agent.name}': a handoff whose agent the gate cannot check`);
        }
        queue.push({
          agent: target as Agent<any, any>,
          via: next.via === undefined ? next.agent.name : `${next.via} -> ${next.agent.name}`,
        });
      }
    }
  }

  /** One agent's check (see `#assertAgent`); `via` names the handoffs that reach it, for the error. */
  #assertOneAgent(agent: Agent<any, any>, via: string | undefined): void {
    const name = via === undefined ? `agent '${agent.name}'` : `agent '${agent.name}' (a handoff of ${via})`;
    const tools = (agent?.tools ?? []) as { type?: string; name?: string; on?: unknown; customDataExtractor?: unknown }[];
    const functions = tools.filter((tool) => tool.type === 'function');
    const agentTools = functions.filter((tool) => typeof tool.on === 'function' && 'customDataExtractor' in tool);
    if (agentTools.length > 0) {
      throw new AdapterConfigError(
        ADAPTER,
        `${name}: tool(s) ${agentTools.map((tool) => `'${tool.name}'`).join(', ')} run another agent (Agent.asTool): ` +
          "not supported by the gate (that agent's run is not gate.run's: its calls and its answer would not be gated); " +
          'use a handoff to a gated agent',
      );
    }
    const ungated = functions.filter((tool) => !this.#built.has(tool)).map((tool) => `'${tool.name}'`);
    if (ungated.length > 0) {
      throw new AdapterConfigError(
        ADAPTER,
        `${name}: function tool(s) ${ungated.join(', ')} are not gated: build them with gate.tool(...) or gate.tools([...])`,
      );
    }
    // The agent the run starts with must be able to read; one reached by a handoff, when it has tools.
    if (via === undefined || functions.length > 0) {
      assertSomeToolReads(
        functions.map((tool) => String(tool.name)),
        this.#classifier,
        ADAPTER,
      );
    }
    const outputs = (agent.outputGuardrails ?? []) as { name?: string }[];
    if (!outputs.some((guardrail) => guardrail === this.#answerGuardrail || guardrail.name === ANSWER_GUARDRAIL_NAME)) {
      throw new AdapterConfigError(ADAPTER, `${name}: add gate.outputGuardrail to its outputGuardrails (the final-answer gate)`);
    }
    const inputs = (agent.inputGuardrails ?? []) as { name?: string }[];
    if (!inputs.some((guardrail) => guardrail === this.#runGuardrail || guardrail.name === RUN_GUARDRAIL_NAME)) {
      throw new AdapterConfigError(
        ADAPTER,
        `${name}: add gate.inputGuardrail to its inputGuardrails (it refuses a run of the agent the gate did not start, ` +
          'before its answer could be streamed)',
      );
    }
  }

  /** The run through the gate (see `AgentsSafetyGate.run`). */
  async #run<TAgent extends Agent<any, any>>(
    agent: TAgent,
    input: GatedRunInput<TContext, TAgent>,
    runOptions: Record<string, unknown>,
  ): Promise<RunResult<TContext, TAgent> | GatedStreamedRun<TContext, TAgent>> {
    if (runOptions.previousResponseId !== undefined) {
      throw new AdapterConfigError(ADAPTER, 'gate.run cannot resume a previousResponseId chain: use a session or conversationId');
    }
    this.#assertAgent(agent);
    const state = input instanceof RunState ? input : undefined;
    const given = runOptions.context;
    const context: RunContext<TContext> =
      state !== undefined
        ? state._context
        : given instanceof RunContext
          ? (given as RunContext<TContext>)
          : new RunContext(given as TContext);
    const entry = await this.#enter(context, runOptions, state);
    entry.assumed = [];
    // A resumed state's approval requests were asked by this gate (or by one like it, before a restart).
    for (const item of state?.getInterruptions() ?? []) {
      const callId = (item.rawItem as { callId?: unknown }).callId;
      if (typeof callId === 'string' && callId !== '') entry.asked.add(callId);
    }
    const runner = this.#runner;
    const sdkRun = (runner?.run.bind(runner) ?? runAgent) as unknown as RunWith<TContext, TAgent, unknown>;
    // The calls of a response run one after another: each is judged after the ones before it (`#previewInTurn`).
    const toolExecution = {
      ...(runner as { config?: { toolExecution?: object } } | undefined)?.config?.toolExecution,
      ...(runOptions.toolExecution as object | undefined),
      maxFunctionToolConcurrency: 1,
    };
    // The first run takes the state as it is; the resumes run in the same RunContext.
    const optionsOf = (resumed: boolean) =>
      state !== undefined && !resumed ? { ...runOptions, toolExecution, context: undefined } : { ...runOptions, toolExecution, context };
    if (runOptions.stream === true)
      return this.#stream(agent, input, {
        entry,
        sdkRun: sdkRun as RunWith<TContext, TAgent, StreamedRunResult<TContext, TAgent>>,
        optionsOf,
      });
    entry.active += 1;
    try {
      let current: TAgent = agent;
      let currentInput = input;
      for (let resumes = 0; ; resumes += 1) {
        try {
          const result = await (sdkRun as RunWith<TContext, TAgent, RunResult<TContext, TAgent>>)(
            current,
            currentInput,
            optionsOf(resumes > 0),
          );
          await this.#settleRun(entry);
          this.#hideRefusedText(entry, result as unknown as RunResultLike, (result.interruptions ?? []).length === 0);
          return result;
        } catch (error) {
          await this.#settleRun(entry);
          const next = this.#resumeAfter(entry, error, resumes, { runOptions, agent: current });
          if (next === undefined) throw error;
          ({ agent: current, input: currentInput } = next);
        }
      }
    } finally {
      entry.active -= 1;
    }
  }

  /**
   * What to run after a run that threw: the history plus the refusal in
   * words, on the agent that answered, when it is the answer guardrail's
   * tripwire and `maxResumes` is not spent; else undefined (rethrow). The
   * words are the gate's own (`GatedRunEntry.refused`), never read from the
   * error: the SDK redacts its result to `{ tripwireTriggered: true }` when
   * the answer was a tool's output (`toolUseBehavior: 'stop_on_first_tool'`,
   * `{ stopAtToolNames }`). Never throws: an error it cannot read is rethrown.
   */
  #resumeAfter<TAgent extends Agent<any, any>>(
    entry: GatedRunEntry,
    error: unknown,
    resumes: number,
    leg: { runOptions: Record<string, unknown>; agent: TAgent },
  ): { agent: TAgent; input: AgentInputItem[] } | undefined {
    const { runOptions, agent } = leg;
    const refused = entry.refused;
    entry.refused = undefined;
    let state: ErrorState<TContext, TAgent> | undefined;
    let ours: boolean;
    try {
      state = (error as { state?: ErrorState<TContext, TAgent> } | null)?.state;
      const guardrail = (error as { result?: { guardrail?: { name?: unknown } } } | null)?.result?.guardrail;
      ours = error instanceof OutputGuardrailTripwireTriggered && guardrail?.name === ANSWER_GUARDRAIL_NAME && state !== undefined;
    } catch {
      return undefined;
    }
    if (!ours || refused === undefined || state === undefined || resumes >= this.#maxResumes) return undefined;
    const message: AgentInputItem = { role: 'user', content: refused.refusal };
    const serverHistory = runOptions.session !== undefined || runOptions.conversationId !== undefined;
    return { agent: state.currentAgent ?? agent, input: serverHistory ? [message] : [...(state.history ?? []), message] };
  }

  /**
   * The streamed run through the gate: the SDK's streamed runs (the first,
   * then each resume after a refused answer) fed to one `GatedStream`,
   * holding the model's text until its run ended with an answer allowed.
   */
  async #stream<TAgent extends Agent<any, any>>(
    agent: TAgent,
    input: GatedRunInput<TContext, TAgent>,
    how: {
      entry: GatedRunEntry;
      sdkRun: RunWith<TContext, TAgent, StreamedRunResult<TContext, TAgent>>;
      optionsOf: (resumed: boolean) => Record<string, unknown>;
    },
  ): Promise<GatedStreamedRun<TContext, TAgent>> {
    const { entry, sdkRun, optionsOf } = how;
    const events = new HeldEvents();
    entry.active += 1;
    let first: StreamedRunResult<TContext, TAgent>;
    try {
      first = await sdkRun(agent, input, { ...optionsOf(false), stream: true });
    } catch (error) {
      entry.active -= 1;
      await this.#settleRun(entry);
      throw error;
    }
    const view: { stream?: GatedStreamedRun<TContext, TAgent> } = {};
    const pump = async (): Promise<void> => {
      let current = first;
      let currentAgent = agent;
      for (let resumes = 0; ; resumes += 1) {
        try {
          for await (const event of current) {
            // A new response: the calls of the one before have settled; text beside them is judged now.
            const beside = events.beside;
            if (beside !== undefined && events.startsResponse(event)) events.judgeBeside(this.#besideAllowed(entry, beside.callIds));
            events.accept(event);
          }
          await current.completed;
          // The SDK ends a failed stream with its error (it rethrows it from the iteration too).
          if (current.error !== undefined && current.error !== null) throw current.error as Error;
          await this.#settleRun(entry);
          const ending = events.beside;
          if (ending !== undefined) events.judgeBeside(this.#besideAllowed(entry, ending.callIds));
          const answered = (current.interruptions ?? []).length === 0;
          this.#hideRefusedText(entry, current as unknown as RunResultLike, answered);
          // The run ended well: its final answer is shown if it ended on one, and an answer would be allowed now.
          if (answered && (await this.#mayAnswer(entry))) events.release();
          else events.drop();
          return;
        } catch (error) {
          events.drop();
          await this.#settleRun(entry);
          const next = this.#resumeAfter(entry, error, resumes, { runOptions: optionsOf(true), agent: currentAgent });
          if (next === undefined) throw error;
          currentAgent = next.agent;
          current = await sdkRun(next.agent, next.input, { ...optionsOf(true), stream: true });
          view.stream?.setResult(current);
        }
      }
    };
    const done = pump().finally(() => {
      entry.active -= 1;
    });
    done.then(
      () => events.end(),
      (error: unknown) => events.end({ error }),
    );
    view.stream = new GatedStream(events, first, done);
    return view.stream;
  }
}

/**
 * Creates the safety gate for OpenAI Agents JS.
 *
 * @example
 * const gate = createSafetyGate({ getGuard: (key) => sessions.session(key), catalog });
 * const tools = gate.tools([{ name: 'get_status', ... }, { name: 'restart', ... }]);
 * const agent = new Agent({ name: 'ops', model, tools, inputGuardrails: [gate.inputGuardrail], outputGuardrails: [gate.outputGuardrail] });
 * const result = await gate.run(agent, 'Restart web-01.', { conversationId });
 *
 * @throws AdapterConfigError without a guard or classification source, or a bad `maxResumes` or `sessionKey`.
 * @throws CatalogError when the catalog does not validate.
 */
export function createSafetyGate<TContext = unknown>(options: AgentsSafetyOptions<TContext>): AgentsSafetyGate<TContext> {
  assertGuardSource(options, ADAPTER);
  const classifier = createToolClassifier(options, ADAPTER);
  if (options.sessionKey !== undefined && typeof options.sessionKey !== 'function') {
    throw new AdapterConfigError(ADAPTER, '`sessionKey` must be a function (runContext) => string: which conversation a run belongs to');
  }
  const maxResumes = options.maxResumes ?? 3;
  if (!Number.isInteger(maxResumes) || maxResumes < 0) {
    throw new AdapterConfigError(ADAPTER, `maxResumes must be a non-negative integer, got ${String(maxResumes)}`);
  }
  return new AgentsGate(options, classifier, maxResumes);
}
