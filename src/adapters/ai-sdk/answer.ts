/**
 * The final-answer gate of the AI SDK adapter: an `onStepEnd` and an
 * `experimental_steering` for `generateText` / `streamText` (one per call).
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants" (no final answer about an
 * unverified change), "Blocked calls and recovery"; DESIGN.md §3.1.
 */
import {
  experimental_createSteering,
  type Experimental_Steering,
  type Experimental_SteeringOutcome,
  type StepResult,
  type ToolSet,
  type UserModelMessage,
} from 'ai';
import type { FSMBlockedError } from '../../errors/index.js';
import { refusalText } from '../../guard/refusal-text.js';
import { peekAnswer, type AdapterGuard } from '../common.js';
import { guardGetter, type GuardSourceOptions } from './guard-source.js';
import { refusedCallsOf, withheldTextOf, type RefusedCalls } from './refused-calls.js';

/** The step content parts that carry what the model said: taken out of a step whose text the gate refused. */
const SAID = new Set<unknown>(['text', 'reasoning', 'reasoning-file']);

type ContentPart = { type?: unknown; toolCallId?: unknown; toolCall?: { toolCallId?: unknown } };

/**
 * Whether a step that calls tools may keep what it says, as the stream gate
 * decides it: every call has its outcome in the step, none was refused by
 * the gate, and an answer would be allowed now (no unverified write). False
 * when it cannot be told.
 */
async function toolStepMaySay(content: ContentPart[], refused: RefusedCalls, guard: () => AdapterGuard): Promise<boolean> {
  try {
    const open = new Set<unknown>();
    for (const part of content) {
      const id = typeof part.toolCallId === 'string' ? part.toolCallId : part.toolCall?.toolCallId;
      if (typeof id === 'string' && refused.has(id)) return false;
      if (part.type === 'tool-call') open.add(id);
    }
    for (const part of content) if (part.type === 'tool-result' || part.type === 'tool-error') open.delete(part.toolCallId);
    return open.size === 0 && (await peekAnswer(guard())).allowed;
  } catch {
    return false;
  }
}

/** Takes the text and reasoning parts out of a step's content, in place (best effort: a content that cannot be changed is left). */
function withholdSaid(content: ContentPart[]): void {
  try {
    for (let i = content.length - 1; i >= 0; i -= 1) if (SAID.has(content[i]?.type)) content.splice(i, 1);
  } catch {
    // left as the SDK made it: documented, the app reads `answer` before the steps
  }
}

/** Your own step callback, as the SDK calls it. */
export type StepEndCallback<TOOLS extends ToolSet> = (event: StepResult<TOOLS>) => PromiseLike<void> | void;

/** Options of `gateAnswer`. */
export interface GateAnswerOptions<TOOLS extends ToolSet = ToolSet> extends GuardSourceOptions {
  /** The steering object of this call; default a new `experimental_createSteering()`. */
  steering?: Experimental_Steering;
  /** The words steered in for a refused answer; default `refusalText(error)`. */
  answerRefusal?: (error: FSMBlockedError) => string;
  /** Your own `onStepEnd`, called after the gate's, with the SDK's step result (it cannot change the gate's decision). */
  onStepEnd?: StepEndCallback<TOOLS>;
}

/**
 * How the run stands on its final answer, updated after each step.
 *
 * - `none`: no step has ended without tool calls since the last tool step
 *   (a run stopped by its step limit while calling tools has no answer).
 * - `allowed`: the last step was the answer and the gate let it through.
 * - `refused`: the last step was the answer and the gate refused it. After
 *   the run this is the answer the app got back (the loop could not go on:
 *   the step limit, an error): `text` is the refused answer, taken out of
 *   the step (`result.text` is empty); do not present it.
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

/**
 * The final-answer gate of one `generateText` / `streamText` call. Its
 * `onStepEnd` asks the guard (`finalAnswer(text)`, which counts a refusal
 * and checks the text's claims of a change, issue 28 item 2) on every step
 * without tool calls, with the step's text, or the text the stream gate
 * withheld from it; when refused, it steers the refusal into the
 * run (`steering.steer`, so the loop continues even after a truncated
 * answer) and records the step as `refused` in `answer`. Anything the guard
 * throws refuses the answer too (the SDK swallows what `onStepEnd` throws,
 * so the gate must not throw to refuse). A step whose text it refuses (a
 * refused answer; beside a call refused, waiting or unverified) has its
 * text and reasoning parts taken out of its `content`, in place, before
 * your `onStepEnd`: `generateText`'s steps, `result.text` and
 * `result.response.messages` do not hold it (each step's own
 * `response.messages` and the model's next prompt still do, built before). Stop conditions still apply: give
 * the call a `stopWhen` with room for the model to verify (the SDK's default
 * is one step), and read `answer` afterwards.
 *
 * @throws AdapterConfigError without a guard source, or `getGuard` without `sessionKey`.
 */
export function gateAnswer<TOOLS extends ToolSet = ToolSet>(options: GateAnswerOptions<TOOLS>): AnswerGate<TOOLS> {
  return createAnswerGate(options).gate;
}

/**
 * `gateAnswer`, and which steered messages are the gate's refusals
 * (`isRefusal`, by identity), for `withSafetyGate` to keep them in the
 * messages a `prepareStep` of yours returns.
 *
 * @throws AdapterConfigError as `gateAnswer` does.
 */
export function createAnswerGate<TOOLS extends ToolSet = ToolSet>(
  options: GateAnswerOptions<TOOLS>,
): { gate: AnswerGate<TOOLS>; isRefusal: (message: unknown) => boolean } {
  const refusals = new WeakSet<object>();
  const getGuard = guardGetter(options);
  const steering = options.steering ?? experimental_createSteering();
  const words = options.answerRefusal ?? refusalText;
  const userOnStepEnd = options.onStepEnd;
  const refused = refusedCallsOf(options);
  const withheld = withheldTextOf(options);
  let answer: AnswerState = { state: 'none' };

  async function onStepEnd(event: StepResult<TOOLS>): Promise<void> {
    const step = event as Partial<Record<'toolCalls' | 'stepNumber' | 'text', unknown>> | undefined;
    const toolCalls = Array.isArray(step?.toolCalls) ? step.toolCalls.length : 0;
    const stepNumber = typeof step?.stepNumber === 'number' ? step.stepNumber : -1;
    const text = typeof step?.text === 'string' ? step.text : '';
    // A step whose text the stream gate withheld is left with none: the guard decides on what it said.
    const withheldText = withheld.take();
    const answerText = text === '' ? withheldText : text;
    const content = (event as { content?: unknown } | undefined)?.content;
    const said = Array.isArray(content) && (content as ContentPart[]).some((part) => SAID.has(part?.type));
    if (toolCalls > 0) {
      answer = { state: 'none' };
      if (said && !(await toolStepMaySay(content as ContentPart[], refused, getGuard))) withholdSaid(content as ContentPart[]);
    } else {
      let error: FSMBlockedError | Error | null;
      let refusal: string;
      try {
        const decision = await getGuard().finalAnswer(answerText);
        error = decision.allowed ? null : decision.error;
        refusal = decision.allowed ? '' : words(decision.error);
      } catch (thrown) {
        error = thrown instanceof Error ? thrown : new Error(String(thrown));
        refusal = `Your final answer was not given: the safety gate could not check it (${error.message.slice(0, 300)}). Try again.`;
      }
      if (error === null) {
        answer = { state: 'allowed', stepNumber, text };
      } else {
        const message: UserModelMessage = { role: 'user', content: refusal };
        refusals.add(message);
        const delivery = steering.steer(message, { id: `pulse-safety-answer-${stepNumber}` });
        answer = { state: 'refused', stepNumber, text, error, refusal, delivery };
        if (said) withholdSaid(content as ContentPart[]);
      }
    }
    if (userOnStepEnd !== undefined) await userOnStepEnd(event);
  }

  const gate = { onStepEnd, experimental_steering: steering };
  Object.defineProperty(gate, 'answer', { enumerable: false, get: () => answer }); // not spread into the options
  return {
    gate: gate as AnswerGate<TOOLS>,
    isRefusal: (message) => typeof message === 'object' && message !== null && refusals.has(message),
  };
}
