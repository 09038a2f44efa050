/**
 * The stream of a gated, streamed OpenAI Agents JS run (`gate.run(agent,
 * input, { stream: true })`): the SDK's stream events, with every text the
 * model writes held back until the gate decides on it.
 *
 * Why: a streamed run emits the model's text as it comes
 * (`raw_model_stream_event`, `output_text_delta`), and runs the agent's
 * output guardrails only after the whole answer was streamed; the user would
 * read a refused claim ("Deleted notes/a.txt.") before the gate refuses it.
 * So each model response is held from its first event until it is done
 * (`response_done`): one without a message (tool calls only) is released
 * then; one with a message (a final answer, or text beside tool calls) is
 * withheld, with its `message_output_created` item, while the run goes on
 * (tool calls and their outputs are released as they come). When the SDK
 * run ends well and the gate would allow an answer then (the answer gate
 * allowed the final one), what was withheld is released, in its order;
 * otherwise (the answer refused, the run failed, or it stopped on an
 * approval request with a change unverified) it is dropped: the user never
 * sees it.
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants" (no final answer about an
 * unverified change); DESIGN.md §3.1.
 */
import type { RunStreamEvent } from '@openai/agents';

/** True for the SDK's `raw_model_stream_event` whose data is of `type`. */
function isRaw(event: RunStreamEvent, type?: string): boolean {
  if (event.type !== 'raw_model_stream_event') return false;
  return type === undefined || (event.data as { type?: unknown }).type === type;
}

/**
 * True when a `response_done` event's response holds a message (text the
 * user would read: a final answer, or words beside tool calls); a response
 * whose output is not readable counts as one (fail closed).
 */
export function hasMessage(event: RunStreamEvent): boolean {
  const output = (event as { data?: { response?: { output?: unknown } } }).data?.response?.output;
  if (!Array.isArray(output)) return true;
  return output.some((item) => (item as { type?: unknown } | null)?.type === 'message');
}

/**
 * The events released to the consumers of a gated stream, and the holding
 * of one SDK run's events (`accept`, then `release` or `drop` when it ends).
 * Events released are kept, so each consumer (`subscribe`) reads them all
 * from the start, at its own pace.
 */
export class HeldEvents {
  readonly #released: RunStreamEvent[] = [];
  /** The raw events of the model response in progress. */
  #response: RunStreamEvent[] = [];
  /** Responses with a message, and their message items, until the run ends. */
  #withheld: RunStreamEvent[] = [];
  #ended = false;
  #failure: { error: unknown } | undefined;
  #wake: (() => void)[] = [];

  /** Takes one event of the SDK run: released now, or held (see the module's documentation). */
  accept(event: RunStreamEvent): void {
    if (isRaw(event)) {
      this.#response.push(event);
      if (!isRaw(event, 'response_done')) return;
      const response = this.#response;
      this.#response = [];
      if (hasMessage(event)) this.#withheld.push(...response);
      else this.#emit(response);
      return;
    }
    if (event.type === 'run_item_stream_event' && event.name === 'message_output_created') {
      this.#withheld.push(event);
      return;
    }
    this.#emit([event]);
  }

  /** Releases what is held (the SDK run ended well, and the gate would allow an answer). */
  release(): void {
    const held = [...this.#withheld, ...this.#response];
    this.#withheld = [];
    this.#response = [];
    this.#emit(held);
  }

  /** Drops what is held (the answer refused, or not decided): returns how many events. */
  drop(): number {
    const count = this.#withheld.length + this.#response.length;
    this.#withheld = [];
    this.#response = [];
    return count;
  }

  /** Ends the stream: consumers read what was released, then end (or throw `failure.error`). */
  end(failure?: { error: unknown }): void {
    this.#ended = true;
    this.#failure = failure;
    this.#notify();
  }

  /** A consumer: every released event from the first, then the end (or the failure, thrown). */
  async *subscribe(): AsyncGenerator<RunStreamEvent, void, undefined> {
    let next = 0;
    for (;;) {
      if (next < this.#released.length) {
        yield this.#released[next]!;
        next += 1;
        continue;
      }
      if (this.#ended) {
        if (this.#failure !== undefined) throw this.#failure.error;
        return;
      }
      await new Promise<void>((resolve) => this.#wake.push(resolve));
    }
  }

  #emit(events: readonly RunStreamEvent[]): void {
    if (events.length === 0) return;
    this.#released.push(...events);
    this.#notify();
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = [];
    for (const resolve of wake) resolve();
  }
}

/** The text of a released event: the delta of an `output_text_delta`, else undefined. */
export function textDeltaOf(event: RunStreamEvent): string | undefined {
  if (event.type !== 'raw_model_stream_event' || event.data.type !== 'output_text_delta') return undefined;
  const delta: unknown = event.data.delta;
  return typeof delta === 'string' ? delta : undefined;
}

/** An SDK streamed run as the gated stream reads it (`StreamedRunResult`). */
export interface StreamedRunLike {
  readonly finalOutput?: unknown;
}

/**
 * What `gate.run(agent, input, { stream: true })` gives: the SDK's stream
 * events of the run and of the runs it resumes after a refused answer, with
 * the model's text (a final answer, words beside tool calls) held until the
 * gate allows an answer (a refused one is never shown). Read it with `for await`, `toStream()` or
 * `toTextStream()` (each reader gets every event from the start); await
 * `completed` when not reading it. `result` is the SDK run streaming now
 * (the last one once completed): its `state`, `history`, `interruptions`
 * are the run's.
 */
export class GatedStream<TResult extends StreamedRunLike> implements AsyncIterable<RunStreamEvent> {
  readonly #events: HeldEvents;
  #result: TResult;
  #error: unknown;
  #ok = false;
  /** Resolves when the gated run has ended, well or not (never rejects: see `error`). */
  readonly completed: Promise<void>;

  /**
   * `events` fed by the gate; `first` the first SDK run; `done` settles when
   * the gated run ends (rejects with what ended it).
   */
  constructor(events: HeldEvents, first: TResult, done: Promise<void>) {
    this.#events = events;
    this.#result = first;
    this.completed = done.then(
      () => {
        this.#ok = true;
      },
      (error: unknown) => {
        this.#error = error;
      },
    );
  }

  /** The SDK run streaming now; the last one once `completed`. */
  get result(): TResult {
    return this.#result;
  }

  /** The error that ended the run (e.g. `OutputGuardrailTripwireTriggered` once `maxResumes` is spent), once `completed`. */
  get error(): unknown {
    return this.#error;
  }

  /** The final output once the run ended well (the answer allowed); undefined before and otherwise. */
  get finalOutput(): TResult['finalOutput'] | undefined {
    return this.#ok ? this.#result.finalOutput : undefined;
  }

  /** For the gate: the SDK run it resumed with. */
  setResult(result: TResult): void {
    this.#result = result;
  }

  /** Every event released, from the first; throws what ended the run, if it failed. */
  [Symbol.asyncIterator](): AsyncIterator<RunStreamEvent> {
    return this.#events.subscribe();
  }

  /** The released events as a `ReadableStream` (errors with what ended the run, if it failed). */
  toStream(): ReadableStream<RunStreamEvent> {
    const events = this.#events.subscribe();
    return new ReadableStream<RunStreamEvent>({
      async pull(controller) {
        const next = await events.next();
        if (next.done === true) controller.close();
        else controller.enqueue(next.value);
      },
    });
  }

  /** The released text deltas (`output_text_delta`) as a `ReadableStream` of strings. */
  toTextStream(): ReadableStream<string> {
    const events = this.#events.subscribe();
    return new ReadableStream<string>({
      async pull(controller) {
        for (;;) {
          const next = await events.next();
          if (next.done === true) {
            controller.close();
            return;
          }
          const text = textDeltaOf(next.value);
          if (text !== undefined) {
            controller.enqueue(text);
            return;
          }
        }
      },
    });
  }
}
