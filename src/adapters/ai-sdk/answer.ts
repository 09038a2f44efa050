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
import { guardGetter, type GuardSourceOptions } from './guard-source.js';

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
        const message: UserModelMessage = { role: 'user', content: refusal };
        refusals.add(message);
        const delivery = steering.steer(message, { id: `pulse-safety-answer-${stepNumber}` });
        answer = { state: 'refused', stepNumber, text, error, refusal, delivery };
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
