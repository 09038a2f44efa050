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
 * (`response_done`): one without text (tool calls only) is released then.
 * Text is a message or reasoning (both can say "Deleted notes/a.txt.").
 * Text beside tool calls is judged as an answer when it was written: held
 * until the calls of its response have settled (the next model response
 * starts, or the run ends), then shown only when every call beside it was
 * admitted and has settled, and the gate would allow an answer right after
 * the last of them (`gate.run` decides, `judgeBeside`); else dropped, and
 * never released later. A response with text and no call (a final answer)
 * is withheld, with its `message_output_created` / `reasoning_item_created`
 * items, while the run goes on: when the SDK run ends well and the gate
 * would allow an answer then (the answer gate allowed the final one), it is
 * released; otherwise (the answer refused, the run failed, or it stopped on
 * an approval request) it is dropped: the user never sees it.
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

/** The output items of a `response_done` event's response; undefined when it is not readable. */
function outputOf(event: RunStreamEvent): unknown[] | undefined {
  const output = (event as { data?: { response?: { output?: unknown } } }).data?.response?.output;
  return Array.isArray(output) ? output : undefined;
}

/**
 * True for an output item the user would read: a message (a final answer,
 * or words beside tool calls) or reasoning (it can say what the answer says:
 * "Deleted notes/a.txt.").
 */
export function isText(item: unknown): boolean {
  const type = (item as { type?: unknown } | null)?.type;
  return type === 'message' || type === 'reasoning';
}

/**
 * The call ids of a response's tool calls (a `function_call`, or any other
 * `..._call` item: a hosted tool, a shell, a computer); a call without an id
 * gives `''` (never settled by the gate: fail closed).
 */
export function callIdsOf(output: readonly unknown[]): string[] {
  const ids: string[] = [];
  for (const item of output) {
    const { type, callId, id } = (item ?? {}) as { type?: unknown; callId?: unknown; id?: unknown };
    if (typeof type !== 'string' || !type.endsWith('_call')) continue;
    ids.push(typeof callId === 'string' ? callId : typeof id === 'string' ? id : '');
  }
  return ids;
}

/** True for the SDK's run item events of text: `message_output_created`, `reasoning_item_created`. */
function isTextItemEvent(event: RunStreamEvent): boolean {
  return event.type === 'run_item_stream_event' && (event.name === 'message_output_created' || event.name === 'reasoning_item_created');
}

/** A response with text beside tool calls, held until the calls settle and the gate judges it (`judgeBeside`). */
export interface BesideResponse {
  /** Its tool calls' ids. */
  callIds: string[];
  /** Its raw events, then its text item events. */
  events: RunStreamEvent[];
}

/**
 * The events released to the consumers of a gated stream, and the holding
 * of one SDK run's events (`accept`, then `release` or `drop` when it ends).
 * A response with text beside tool calls is held apart (`beside`) and
 * judged when its calls have settled (`judgeBeside`): shown or dropped then,
 * never released later. Events released are kept, so each consumer
 * (`subscribe`) reads them all from the start, at its own pace.
 */
export class HeldEvents {
  readonly #released: RunStreamEvent[] = [];
  /** The raw events of the model response in progress. */
  #response: RunStreamEvent[] = [];
  /** A response with text and no calls (a final answer), and its text items, until the run ends. */
  #withheld: RunStreamEvent[] = [];
  /** The response with text beside calls, until judged. */
  #beside: BesideResponse | undefined;
  /** Where the text item events of the last response with text go. */
  #items: RunStreamEvent[] | undefined;
  #ended = false;
  #failure: { error: unknown } | undefined;
  #wake: (() => void)[] = [];

  /** The response with text beside calls waiting for its judgement, if any. */
  get beside(): BesideResponse | undefined {
    return this.#beside;
  }

  /** True when `event` starts a new model response: the calls of the one before it have settled. */
  startsResponse(event: RunStreamEvent): boolean {
    return isRaw(event) && this.#response.length === 0;
  }

  /** Shows (`allowed`) or drops the response with text beside calls; after this it is never released. */
  judgeBeside(allowed: boolean): void {
    const beside = this.#beside;
    this.#beside = undefined;
    if (beside === undefined) return;
    if (this.#items === beside.events) this.#items = undefined;
    if (allowed) this.#emit(beside.events);
  }

  /** Takes one event of the SDK run: released now, or held (see the module's documentation). */
  accept(event: RunStreamEvent): void {
    if (isRaw(event)) {
      this.#response.push(event);
      if (!isRaw(event, 'response_done')) return;
      const response = this.#response;
      this.#response = [];
      const output = outputOf(event);
      if (output === undefined) {
        // Not readable: held as an answer (fail closed).
        this.#withheld.push(...response);
        this.#items = this.#withheld;
        return;
      }
      if (!output.some(isText)) {
        this.#emit(response);
        return;
      }
      const callIds = callIdsOf(output);
      if (callIds.length === 0) {
        this.#withheld.push(...response);
        this.#items = this.#withheld;
        return;
      }
      // A former one not judged yet (the gate judges each before the next response): dropped.
      this.judgeBeside(false);
      this.#beside = { callIds, events: response };
      this.#items = this.#beside.events;
      return;
    }
    if (isTextItemEvent(event)) {
      // Text items come after their response: held with it; without one held (judged already), dropped.
      this.#items?.push(event);
      return;
    }
    this.#emit([event]);
  }

  /** Releases the final answer held (the SDK run ended well, and the gate would allow an answer); drops an unjudged beside response. */
  release(): void {
    this.judgeBeside(false);
    const held = [...this.#withheld, ...this.#response];
    this.#withheld = [];
    this.#response = [];
    this.#items = undefined;
    this.#emit(held);
  }

  /** Drops what is held (the answer refused, or not decided): returns how many events. */
  drop(): number {
    const count = this.#withheld.length + this.#response.length + (this.#beside?.events.length ?? 0);
    this.#beside = undefined;
    this.#withheld = [];
    this.#response = [];
    this.#items = undefined;
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
