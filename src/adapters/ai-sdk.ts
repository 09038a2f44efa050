/**
 * The safety gate for the Vercel AI SDK (`ai` 7): `pulse-safety-fsm/ai-sdk`.
 *
 * - `gateTools(tools, options)`: every `execute` of a `ToolSet` is checked
 *   before it runs and its outcome recorded after (ids from `toolCallId`; an
 *   `execute` that throws is an error; a result is read with `outcomeOf`). A
 *   refused call does not run: the model gets the refusal as the tool result.
 * - `gateAnswer(options)`: an `onStepEnd` and an `experimental_steering` for
 *   `generateText` / `streamText` that gate the final answer. A step without
 *   tool calls is the final answer; when the guard refuses it, the refusal,
 *   in words (`refusalText`), is steered into the run as a user message and
 *   the loop goes on. `stopWhen` and `prepareStep` cannot do this (a stop
 *   condition can only stop; `prepareStep` runs only when a step follows).
 *   `answer` says how the run ended: a refused answer at the step limit is
 *   `{ state: 'refused' }`.
 * - `gateTextStream(options)`: a `streamText` transform
 *   (`experimental_transform`) that withholds a step's text until the gate
 *   has decided: text is released as soon as the step calls a tool (it is not
 *   the answer), or at the step's end when the answer is allowed; a refused
 *   answer's text is dropped from the stream (and so from the step, the
 *   result, and what the model sees next).
 * - `withSafetyGate(options)`: all of the above in one object to spread into
 *   `generateText` / `streamText` options. One per call: a steering object
 *   serves one generation.
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants" (no final answer about an
 * unverified change), "Blocked calls and recovery"; DESIGN.md §3.1, §5.7.
 */
// Every parser loaded before this entry's classifiers are used (`classify/parsers.ts`).
import '../classify/eager.js';
import {
  experimental_createSteering,
  type Experimental_Steering,
  type Experimental_SteeringOutcome,
  type StepResult,
  type StreamTextTransform,
  type TextStreamPart,
  type ToolSet,
} from 'ai';
import type { FSMBlockedError } from '../errors/index.js';
import type { ToolCall } from '../guard/session-guard.js';
import { refusalText } from '../guard/refusal-text.js';
import {
  admitCall,
  AdapterConfigError,
  andThen,
  assertGuardSource,
  assertSomeToolReads,
  createToolClassifier,
  isBlockedToolResult,
  isPromise,
  peekAnswer,
  recordCall,
  uncheckedText,
  type AdapterGuard,
  type CallAdmission,
  type ClassificationOptions,
  type MaybePromise,
  type ToolClassifier,
} from './common.js';

const ADAPTER = 'ai-sdk';

/**
 * Where the session's guard comes from: `guard` (one session), or
 * `getGuard(sessionKey)` with the `sessionKey` of this conversation (e.g.
 * `getGuard: (key) => sessions.session(key)` over `createSessionStore`, or
 * over `createSharedSessionStore` for many processes: an asynchronous guard,
 * whose failure to commit refuses the call).
 */
export interface GuardSourceOptions {
  guard?: AdapterGuard;
  getGuard?: (sessionKey: string) => AdapterGuard;
  /** The conversation's key for `getGuard`; required with it. */
  sessionKey?: string;
}

/** Options of `gateTools`: a guard source and a classification source (`catalog`, `kinds` or `classify`). */
export interface GateToolsOptions extends GuardSourceOptions, ClassificationOptions {
  /**
   * The tool result the model gets for a refused call; default
   * `error.toToolResult()` (`{ ok: false, error: { code: 'FSM_BLOCKED', ... } }`,
   * the stable code the model can branch on, DESIGN.md §3.1).
   */
  refusal?: (error: FSMBlockedError) => unknown;
}

/** Options of `gateAnswer`. */
export interface GateAnswerOptions<TOOLS extends ToolSet = ToolSet> extends GuardSourceOptions {
  /** The steering object of this call; default a new `experimental_createSteering()`. */
  steering?: Experimental_Steering;
  /** The words steered in for a refused answer; default `refusalText(error)`. */
  answerRefusal?: (error: FSMBlockedError) => string;
  /** Your own `onStepEnd`, called after the gate's, with the SDK's step result (it cannot change the gate's decision). */
  onStepEnd?: (event: StepResult<TOOLS>) => PromiseLike<void> | void;
}

/**
 * How the run stands on its final answer, updated after each step.
 *
 * - `none`: no step has ended without tool calls since the last tool step
 *   (a run stopped by its step limit while calling tools has no answer).
 * - `allowed`: the last step was the answer and the gate let it through.
 * - `refused`: the last step was the answer and the gate refused it. After
 *   the run this is the answer the app got back (the loop could not go on:
 *   the step limit, an error): do not present `result.text` as the answer.
 *   `error` is the guard's `FSMBlockedError`, or what the guard threw;
 *   `delivery` resolves to the steering outcome (`not-delivered` with reason
 *   `stop-condition` at the step limit).
 */
export type AnswerState =
  | { state: 'none' }
  | { state: 'allowed'; stepNumber: number; text: string }
  | {
      state: 'refused';
      stepNumber: number;
      text: string;
      error: FSMBlockedError | Error;
      refusal: string;
      delivery: Promise<Experimental_SteeringOutcome>;
    };

/** The answer gate for one call: spread it into the options (`onStepEnd`, `experimental_steering`; `answer` is not enumerable). */
export interface AnswerGate<TOOLS extends ToolSet = ToolSet> {
  /** The SDK's `onStepEnd` callback; it reads `stepNumber`, `text` and `toolCalls` of the step. */
  onStepEnd: (event: StepResult<TOOLS>) => Promise<void>;
  experimental_steering: Experimental_Steering;
  /** The run's answer state (see `AnswerState`); read it after the call. */
  readonly answer: AnswerState;
}

/** Options of `withSafetyGate`. */
export interface SafetyGateOptions<TOOLS extends ToolSet> extends GateToolsOptions, GateAnswerOptions<TOOLS> {
  tools: TOOLS;
}

/**
 * What `withSafetyGate` returns: spread it into `generateText` or
 * `streamText` options (`experimental_transform` is used by `streamText`
 * only). `answer` is not spread (not enumerable); read it after the call.
 */
export interface SafetyGate<TOOLS extends ToolSet> {
  tools: TOOLS;
  onStepEnd: (event: StepResult<TOOLS>) => Promise<void>;
  experimental_steering: Experimental_Steering;
  experimental_transform: StreamTextTransform<TOOLS>;
  readonly answer: AnswerState;
}

/** The guard getter of the options, validated. */
function guardGetter(options: GuardSourceOptions): () => AdapterGuard {
  assertGuardSource(options, ADAPTER);
  if (options.guard !== undefined) {
    const guard = options.guard;
    return () => guard;
  }
  const { getGuard, sessionKey } = options;
  if (typeof sessionKey !== 'string' || sessionKey === '') {
    throw new AdapterConfigError(ADAPTER, "`getGuard` needs the conversation's `sessionKey` (a non-empty string)");
  }
  return () => getGuard!(sessionKey);
}

function isAsyncGeneratorFunction(fn: unknown): boolean {
  return Object.prototype.toString.call(fn) === '[object AsyncGeneratorFunction]';
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
  );
}

type Execute = (input: unknown, options: { toolCallId: string }) => unknown;
type ToModelOutput = (options: { toolCallId: string; input: unknown; output: unknown }) => unknown;

/** What every gated tool of a `ToolSet` shares: where the session's guard comes from, the classification source, the refusal result. */
interface ToolGate {
  getGuard: () => AdapterGuard;
  classifier: ToolClassifier;
  refusal: (error: FSMBlockedError) => unknown;
}

/**
 * A streaming tool's output passed on value by value; when it ends, the last
 * value is recorded as the call's result. One that throws, or that the
 * consumer stops early, is recorded as an error.
 */
async function* recordedStream(stream: AsyncIterable<unknown>, guard: AdapterGuard, classifier: ToolClassifier, call: ToolCall) {
  let last: unknown;
  let settled = false;
  try {
    for await (const value of stream) {
      last = value;
      yield value;
    }
    settled = true;
    await recordCall(guard, classifier, call, { threw: false, result: last });
  } finally {
    // Threw, or the consumer stopped early: it did not finish, so it gives no evidence.
    if (!settled) await recordCall(guard, classifier, call, { threw: true });
  }
}

/**
 * The gated `execute` of the tool `name`: the call checked (`admitCall`, id
 * the SDK's `toolCallId`), then run and its outcome recorded, or refused.
 */
function gateExecute(name: string, original: Execute, gate: ToolGate): Execute {
  const { getGuard, classifier, refusal } = gate;
  /** Runs an admitted call and records its outcome; a refused one gives the refusal. */
  const proceed = (guard: AdapterGuard, admission: CallAdmission, input: unknown, execOptions: { toolCallId: string }): unknown => {
    if (!admission.allowed) {
      if (admission.error === null) throw new Error(uncheckedText(name, admission.failure), { cause: admission.failure });
      return refusal(admission.error);
    }
    const { call } = admission;
    const fail = (error: unknown): MaybePromise<never> =>
      andThen(recordCall(guard, classifier, call, { threw: true }), () => {
        throw error;
      });
    let produced: unknown;
    try {
      produced = original(input, execOptions);
    } catch (error) {
      return fail(error);
    }
    if (isAsyncIterable(produced)) return recordedStream(produced, guard, classifier, call);
    return Promise.resolve(produced).then(
      (result) => andThen(recordCall(guard, classifier, call, { threw: false, result }), () => result),
      (error: unknown) => fail(error),
    );
  };
  const gatedExecute = (input: unknown, execOptions: { toolCallId: string }): unknown => {
    const guard = getGuard();
    // A synchronous guard decides here, before any other call of the step goes on.
    const admission = admitCall({ guard, classifier, id: execOptions?.toolCallId, name, args: input });
    if (!isPromise(admission)) return proceed(guard, admission, input, execOptions);
    // An asynchronous guard decides later; a streaming tool (an async generator function) stays one.
    if (isAsyncGeneratorFunction(original)) {
      return (async function* gatedLater() {
        const produced = proceed(guard, await admission, input, execOptions);
        if (isAsyncIterable(produced)) yield* produced;
        else yield await produced;
      })();
    }
    return admission.then((decided) => proceed(guard, decided, input, execOptions));
  };
  return gatedExecute;
}

/** The tool with its gated `execute`; its own `toModelOutput`, if any, is not asked about a refusal (the model gets it as JSON). */
function withExecute(tool: object, execute: Execute): object {
  const toModelOutput = (tool as { toModelOutput?: unknown }).toModelOutput;
  return {
    ...tool,
    execute,
    ...(typeof toModelOutput === 'function'
      ? {
          toModelOutput: (args: { toolCallId: string; input: unknown; output: unknown }) =>
            isBlockedToolResult(args.output) ? { type: 'json', value: args.output } : (toModelOutput as ToModelOutput)(args),
        }
      : {}),
  };
}

/**
 * Wraps a `ToolSet` so every tool with an `execute` is gated: checked
 * before it runs (id: the SDK's `toolCallId`), its outcome recorded after.
 * An `execute` that throws (or a streaming one whose iteration throws or is
 * abandoned) is recorded as an error and its error rethrown (the SDK makes
 * it a `tool-error`); a result is recorded as `outcomeOf` reads it (so
 * `{ error: ... }` or `Exit Code: 1` is an error). A refused call does not
 * run; its tool result is `options.refusal(error)` (default the structured
 * `toToolResult()`), and a tool's own `toModelOutput` is not asked about it.
 * A call the guard cannot check (it threw) does not run either: `execute`
 * throws, and the model sees a tool error.
 *
 * Tools without `execute` (run by your app, or by the provider) are left as
 * they are: gate them yourself with the guard.
 *
 * @returns a new `ToolSet` with the same keys and tool properties.
 * @throws AdapterConfigError (at wrap time) without a classification or
 *   guard source, or when no gated tool can ever read or resolve.
 * @throws CatalogError when the catalog does not validate.
 */
export function gateTools<TOOLS extends ToolSet>(tools: TOOLS, options: GateToolsOptions): TOOLS {
  if (typeof tools !== 'object' || tools === null) throw new AdapterConfigError(ADAPTER, 'gateTools: `tools` must be a ToolSet object');
  const getGuard = guardGetter(options);
  const classifier = createToolClassifier(options, ADAPTER);
  const gate: ToolGate = { getGuard, classifier, refusal: options.refusal ?? ((error: FSMBlockedError) => error.toToolResult()) };
  const gated: Record<string, unknown> = {};
  const names: string[] = [];
  for (const [name, tool] of Object.entries(tools)) {
    const execute = (tool as { execute?: unknown }).execute;
    if (typeof execute !== 'function') {
      gated[name] = tool;
      continue;
    }
    names.push(name);
    gated[name] = withExecute(tool, gateExecute(name, execute as Execute, gate));
  }
  assertSomeToolReads(names, classifier, ADAPTER);
  return gated as TOOLS;
}

/**
 * The final-answer gate of one `generateText` / `streamText` call. Its
 * `onStepEnd` asks the guard (`finalAnswer()`, which counts a refusal) on
 * every step without tool calls; when refused, it steers the refusal into the
 * run (`steering.steer`, so the loop continues even after a truncated
 * answer) and records the step as `refused` in `answer`. Anything the guard
 * throws refuses the answer too (the SDK swallows what `onStepEnd` throws,
 * so the gate must not throw to refuse). Stop conditions still apply: give
 * the call a `stopWhen` with room for the model to verify (the SDK's default
 * is one step), and read `answer` afterwards.
 *
 * @throws AdapterConfigError without a guard source, or `getGuard` without `sessionKey`.
 */
export function gateAnswer<TOOLS extends ToolSet = ToolSet>(options: GateAnswerOptions<TOOLS>): AnswerGate<TOOLS> {
  const getGuard = guardGetter(options);
  const steering = options.steering ?? experimental_createSteering();
  const words = options.answerRefusal ?? refusalText;
  const userOnStepEnd = options.onStepEnd;
  let answer: AnswerState = { state: 'none' };

  async function onStepEnd(event: StepResult<TOOLS>): Promise<void> {
    const step = event as Partial<Record<'toolCalls' | 'stepNumber' | 'text', unknown>> | undefined;
    const toolCalls = Array.isArray(step?.toolCalls) ? step.toolCalls.length : 0;
    const stepNumber = typeof step?.stepNumber === 'number' ? step.stepNumber : -1;
    const text = typeof step?.text === 'string' ? step.text : '';
    if (toolCalls > 0) {
      answer = { state: 'none' };
    } else {
      let error: FSMBlockedError | Error | null;
      let refusal: string;
      try {
        const decision = await getGuard().finalAnswer();
        error = decision.allowed ? null : decision.error;
        refusal = decision.allowed ? '' : words(decision.error);
      } catch (thrown) {
        error = thrown instanceof Error ? thrown : new Error(String(thrown));
        refusal = `Your final answer was not given: the safety gate could not check it (${error.message.slice(0, 300)}). Try again.`;
      }
      if (error === null) {
        answer = { state: 'allowed', stepNumber, text };
      } else {
        const delivery = steering.steer(refusal, { id: `pulse-safety-answer-${stepNumber}` });
        answer = { state: 'refused', stepNumber, text, error, refusal, delivery };
      }
    }
    if (userOnStepEnd !== undefined) await userOnStepEnd(event);
  }

  const gate = { onStepEnd, experimental_steering: steering };
  Object.defineProperty(gate, 'answer', { enumerable: false, get: () => answer }); // not spread into the options
  return gate as AnswerGate<TOOLS>;
}

/**
 * A `streamText` transform (`experimental_transform`) that withholds each
 * step's text until the gate has decided on it. Per step: text parts (and
 * any part after the first text part) are held; a tool call or tool input
 * part shows the step is not the answer, so everything held is released and
 * the step passes through; at the step's end (or an `error` / `abort` part,
 * or the stream's end) the held text is released when `mayAnswer(guard)`
 * allows the answer, and dropped otherwise (the parts that are not text are
 * kept). `mayAnswer` has no side effect: `gateAnswer`'s `onStepEnd`, which
 * runs after the transform has passed the step's `finish-step`, makes the
 * counted decision, on the same state. Put this transform before your own
 * (e.g. `smoothStream()`).
 *
 * @throws AdapterConfigError without a guard source, or `getGuard` without `sessionKey`.
 */
export function gateTextStream<TOOLS extends ToolSet = ToolSet>(options: GuardSourceOptions): StreamTextTransform<TOOLS> {
  const getGuard = guardGetter(options);
  return () => {
    let held: TextStreamPart<TOOLS>[] = [];
    let holding = false; // a text part of this step is held
    let passing = false; // this step called a tool: nothing of it is the answer

    /** Whether the answer may be shown (false when it cannot be told: it is not shown). */
    function allowed(): MaybePromise<boolean> {
      try {
        const decision = peekAnswer(getGuard());
        return isPromise(decision)
          ? decision.then(
              (d) => d.allowed,
              () => false,
            )
          : decision.allowed;
      } catch {
        return false;
      }
    }
    function release(controller: TransformStreamDefaultController<TextStreamPart<TOOLS>>, keep: MaybePromise<boolean>): MaybePromise<void> {
      return andThen(keep, (keepText) => emit(controller, keepText));
    }
    function emit(controller: TransformStreamDefaultController<TextStreamPart<TOOLS>>, keepText: boolean): void {
      for (const part of held) {
        const isText = part.type === 'text-start' || part.type === 'text-delta' || part.type === 'text-end';
        if (keepText || !isText) controller.enqueue(part);
      }
      held = [];
      holding = false;
    }

    return new TransformStream<TextStreamPart<TOOLS>, TextStreamPart<TOOLS>>({
      transform(part, controller) {
        switch (part.type) {
          case 'start-step':
            passing = false;
            return andThen(holding ? release(controller, allowed()) : undefined, () => controller.enqueue(part));
          case 'tool-input-start':
          case 'tool-call':
            passing = true;
            if (holding) void release(controller, true);
            controller.enqueue(part);
            return;
          case 'finish-step':
          case 'error':
          case 'abort':
          case 'finish':
            return andThen(holding ? release(controller, passing ? false : allowed()) : undefined, () => controller.enqueue(part));
          case 'text-start':
          case 'text-delta':
          case 'text-end':
            if (passing) {
              controller.enqueue(part);
            } else {
              holding = true;
              held.push(part);
            }
            return;
          default:
            if (holding) held.push(part);
            else controller.enqueue(part);
        }
      },
      flush(controller) {
        return holding ? release(controller, passing ? false : allowed()) : undefined;
      },
    });
  };
}

/**
 * Everything in one object for a `generateText` / `streamText` call:
 * `tools` gated (`gateTools`), `onStepEnd` and `experimental_steering`
 * (`gateAnswer`), `experimental_transform` (`gateTextStream`); `answer`
 * (not spread) tells how the run ended. Create one per call.
 *
 * @example
 * const safety = withSafetyGate({ tools, guard: sessions.session(chatId), catalog });
 * const result = await generateText({ model, prompt, stopWhen: isStepCount(10), ...safety });
 * if (safety.answer.state !== 'allowed') { ... } // e.g. the step limit cut the run on a refused answer
 *
 * @throws AdapterConfigError / CatalogError as `gateTools` and `gateAnswer` do.
 */
export function withSafetyGate<TOOLS extends ToolSet>(options: SafetyGateOptions<TOOLS>): SafetyGate<TOOLS> {
  const tools = gateTools(options.tools, options);
  const answerGate = gateAnswer<TOOLS>(options);
  const gate = {
    tools,
    onStepEnd: answerGate.onStepEnd,
    experimental_steering: answerGate.experimental_steering,
    experimental_transform: gateTextStream<TOOLS>(options),
  };
  Object.defineProperty(gate, 'answer', { enumerable: false, get: () => answerGate.answer });
  return gate as SafetyGate<TOOLS>;
}
