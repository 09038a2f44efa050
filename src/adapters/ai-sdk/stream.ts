/**
 * The stream gate of the AI SDK adapter: a `streamText` transform
 * (`experimental_transform`) under which no text reaches the reader before
 * the gate has decided on it.
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants" (no final answer about an
 * unverified change); DESIGN.md §3.4 (a call's outcome is known by its id).
 */
import type { StreamTextTransform, TextStreamPart, ToolSet } from 'ai';
import { andThen, isBlockedToolResult, isPromise, peekAnswer, type AdapterGuard, type MaybePromise } from '../common.js';
import { guardGetter, type GuardSourceOptions } from './guard-source.js';
import { refusedCallsOf, withheldTextOf, type RefusedCalls, type WithheldText } from './refused-calls.js';

type Part<TOOLS extends ToolSet> = TextStreamPart<TOOLS>;

/** Parts that carry what the model says (its text, its reasoning, raw chunks): held from the step's first one, dropped with a refused text. */
const SAID = new Set([
  'text-start',
  'text-delta',
  'text-end',
  'reasoning-start',
  'reasoning-delta',
  'reasoning-end',
  'reasoning-file',
  'raw',
]);

function isSaid(type: string): boolean {
  return SAID.has(type);
}

/** The `toolCallId` of a part, if it has one (a tool call, result, error, denial; an approval request's call). */
function callIdOf(part: unknown): string | undefined {
  const { toolCallId, toolCall } = part as { toolCallId?: unknown; toolCall?: { toolCallId?: unknown } };
  if (typeof toolCallId === 'string') return toolCallId;
  return typeof toolCall?.toolCallId === 'string' ? toolCall.toolCallId : undefined;
}

/**
 * A `streamText` transform (`experimental_transform`) that withholds each
 * step's text until the gate has decided on it, whether or not the step
 * calls tools: text beside a tool call is judged as an answer too.
 *
 * Per step, from its first text or reasoning part (or `raw` chunk: a
 * provider's raw chunks carry the text too) every part is held, in order.
 * Reasoning is held and dropped with the text: it can claim a change too. At the step's
 * `finish-step` (when its tool calls have run and been recorded) the text is
 * released when all of these hold, and dropped otherwise, the other parts
 * kept:
 *
 * - every tool call of the step has its outcome in the step (none waits for
 *   an approval, none is left for the app to run);
 * - no call of the step was refused by the gate (text written beside a
 *   refused call speaks of what did not happen). The gate's own decision
 *   tells (`gateTools` / `withSafetyGate` with the same guard source note
 *   the refused `toolCallId`s), whatever your `refusal` returns; a tool
 *   result shaped as the default refusal counts as refused too;
 * - `peekAnswer(guard, text)` allows the step's text as an answer now (no
 *   unverified write, none in flight, no claim of a change no tool made). It has no side effect: `gateAnswer`'s `onStepEnd`, which runs
 *   after this transform has passed the step's `finish-step`, makes the
 *   counted decision on the same state.
 *
 * A step cut before its `finish-step` (an `error`, an `abort`, the stream's
 * end) has its text dropped. A dropped text is gone from the stream, the
 * step, the result and the model's next prompt. When the gate cannot tell
 * (the guard throws or rejects), the text is dropped. Put this transform
 * first, before your own (e.g. `smoothStream()`): a transform before it sees
 * the text before the gate does.
 *
 * @throws AdapterConfigError without a guard source, or `getGuard` without `sessionKey`.
 */
export function gateTextStream<TOOLS extends ToolSet = ToolSet>(options: GuardSourceOptions): StreamTextTransform<TOOLS> {
  const getGuard = guardGetter(options);
  const refused = refusedCallsOf(options);
  const withheld = withheldTextOf(options);
  return () => {
    const step = new HeldStep<TOOLS>(getGuard, refused, withheld);
    return new TransformStream<Part<TOOLS>, Part<TOOLS>>({
      transform(part, controller) {
        switch (part.type) {
          case 'finish-step':
            return step.settle(controller, step.said ? step.mayShow() : true, part);
          case 'start-step': // a step that never finished (it should not happen)
          case 'error':
          case 'abort':
          case 'finish':
            // The step was cut before its end: what it said is not shown.
            return step.settle(controller, !step.said, part);
          default:
            step.take(part, controller);
        }
      },
      flush(controller) {
        step.release(controller, !step.said);
      },
    });
  };
}

/** One step of a stream as the gate holds it: its parts from the first that says something, and the outcomes of its calls. */
class HeldStep<TOOLS extends ToolSet> {
  /** The step has text (or raw chunks). */
  said = false;
  private held: Part<TOOLS>[] = [];
  /** Calls of this step without an outcome yet. */
  private readonly open = new Set<string>();
  /** The calls of this step. */
  private readonly calls = new Set<string>();
  /** A call of this step had a result shaped as a refusal. */
  private refused = false;
  /** The step's text so far (its `text-delta` parts): the answer whose claims the gate checks. */
  private text = '';

  constructor(
    private readonly getGuard: () => AdapterGuard,
    private readonly refusedCalls: RefusedCalls,
    private readonly withheld: WithheldText,
  ) {}

  /** A call of this step was refused (or not checked) by the gate, as its own decision or its result's shape tells. */
  private anyRefused(): boolean {
    if (this.refused) return true;
    for (const id of this.calls) if (this.refusedCalls.has(id)) return true;
    return false;
  }

  /** A part of the step: held from the first that says something on, passed on before. */
  take(part: Part<TOOLS>, controller: TransformStreamDefaultController<Part<TOOLS>>): void {
    this.track(part);
    if (part.type === 'text-delta') {
      const delta = (part as { text?: unknown }).text;
      if (typeof delta === 'string') this.text += delta;
    }
    if (isSaid(part.type)) this.said = true;
    if (this.said) this.held.push(part);
    else controller.enqueue(part);
  }

  /** Whether the step's text may be shown (false when it cannot be told). */
  mayShow(): MaybePromise<boolean> {
    if (this.open.size > 0 || this.anyRefused()) return false;
    try {
      const decision = peekAnswer(this.getGuard(), this.text);
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

  /** The held parts out, the text only when `keepText`; the step starts over. */
  release(controller: TransformStreamDefaultController<Part<TOOLS>>, keepText: boolean): void {
    for (const part of this.held) if (keepText || !isSaid(part.type)) controller.enqueue(part);
    // The answer gate decides on the text the step said, not on the empty text it is left with.
    this.withheld.put(keepText ? '' : this.text);
    this.held = [];
    this.said = false;
    this.text = '';
    this.open.clear();
    this.calls.clear();
    this.refused = false;
  }

  /** Ends the step: its held parts out, the text only if `keep` says so; then `part`. */
  settle(controller: TransformStreamDefaultController<Part<TOOLS>>, keep: MaybePromise<boolean>, part: Part<TOOLS>): MaybePromise<void> {
    return andThen(keep, (keepText) => {
      this.release(controller, keepText);
      controller.enqueue(part);
    });
  }

  private track(part: Part<TOOLS>): void {
    const id = callIdOf(part);
    if (id === undefined) return;
    this.calls.add(id);
    if (part.type === 'tool-call') this.open.add(id);
    if (part.type === 'tool-error' || part.type === 'tool-output-denied') this.open.delete(id);
    if (part.type === 'tool-result' && (part as { preliminary?: boolean }).preliminary !== true) {
      if (isBlockedToolResult((part as { output?: unknown }).output)) this.refused = true;
      this.open.delete(id);
    }
  }
}
