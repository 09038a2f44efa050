/**
 * This project's own JSONL event format, read one line at a time
 * (`JsonlReader`), so a file of any length can be audited as a stream with
 * bounded memory, or whole (`readJsonl`).
 */
import { TranscriptError } from '../../errors/transcript-error.js';
import { isRecord, own } from '../../util/own.js';
import { boundArguments, CallIds, clipName, type Json } from './step-builder.js';
import { MAX_RESULT_TEXT, type CallStep, type ResultStep, type TranscriptRun, type TranscriptStep } from './steps.js';

/** The `type` of each event of the format. */
export const JSONL_TYPES = ['run', 'call', 'result', 'answer', 'reset', 'resetKeepProgress', 'clock'];

/** What one line of this project's JSONL format says: a run starts, or a step. */
/** A run starts (`catalog`: the agent's catalog, when its log format says, see `TranscriptRun.catalog`), or one of its steps. */
export type JsonlEvent = { type: 'run'; id: string; reward: number | null; catalog?: string } | { type: 'step'; step: TranscriptStep };

/**
 * This project's JSONL event format, one line at a time (so a file of any
 * length can be read as a stream): one JSON object a line, blank lines
 * ignored.
 * `{"type":"run","id":"...","reward":1}` starts a run (optional for one run);
 * `{"type":"call","id":"c1","name":"pulse_query","args":{...},"cwd":"/srv"}` (`cwd` optional);
 * `{"type":"result","id":"c1","outcome":"success"|"error","text":"..."}` (`text` optional);
 * `{"type":"answer","text":"..."}`; `{"type":"reset"}`; `{"type":"resetKeepProgress"}`;
 * `{"type":"clock","advanceMs":660000}`.
 */
export class JsonlReader {
  /** Tool names by call id, in the current run (ids are per run). */
  private readonly names = new Map<string, string>();
  /** The gate's call ids in the current run (long ones made up, `CallIds`). */
  private readonly ids = new CallIds();
  /** Runs started so far, for the ids of unnamed runs. */
  private runs = 0;

  constructor(private readonly source: string) {}

  /**
   * Reads line `lineNumber` (1-based) of the file.
   * @returns the event it holds, or null for a blank line.
   * @throws TranscriptError naming the source and the line.
   */
  line(raw: string, lineNumber: number): JsonlEvent | null {
    const line = raw.trim();
    if (line === '') return null;
    const position = `line ${lineNumber}`;
    const e = this.parse(line, position);
    const type = own(e, 'type') as string;
    switch (type) {
      case 'run':
        return this.run(e);
      case 'call':
        return { type: 'step', step: this.call(e, position) };
      case 'result':
        return { type: 'step', step: this.result(e, position) };
      case 'answer': {
        const answer = own(e, 'text');
        if (typeof answer !== 'string') this.fail(position, 'an "answer" event needs a string "text"');
        return { type: 'step', step: { type: 'answer', text: answer as string, position } };
      }
      case 'clock': {
        const advanceMs = own(e, 'advanceMs');
        if (typeof advanceMs !== 'number' || !Number.isFinite(advanceMs) || advanceMs < 0) {
          this.fail(position, 'a "clock" event needs a finite, non-negative number "advanceMs"');
        }
        return { type: 'step', step: { type: 'clock', advanceMs: advanceMs as number, position } };
      }
      default:
        return { type: 'step', step: { type: type as 'reset' | 'resetKeepProgress', position } };
    }
  }

  /** The line's event object, its `type` one of `JSONL_TYPES`. */
  private parse(line: string, position: string): Json {
    let event: unknown;
    try {
      event = JSON.parse(line);
    } catch (error) {
      this.fail(position, `not valid JSON (${(error as Error).message})`);
    }
    if (!isRecord(event)) this.fail(position, 'each line must be a JSON object');
    const type = own(event as Json, 'type');
    if (typeof type !== 'string' || !JSONL_TYPES.includes(type)) {
      this.fail(position, `"type" must be one of ${JSONL_TYPES.join(', ')}`);
    }
    return event as Json;
  }

  /** A `run` event: a new run starts, and the call ids of the last are forgotten. */
  private run(e: Json): JsonlEvent {
    this.names.clear(); // call ids are per run
    this.ids.clear();
    const id = own(e, 'id');
    const reward = own(e, 'reward');
    return {
      type: 'run',
      id: typeof id === 'string' ? id : `run ${this.runs++}`,
      reward: typeof reward === 'number' && Number.isFinite(reward) ? reward : null,
    };
  }

  /** A `call` event's step. */
  private call(e: Json, position: string): CallStep {
    const id = this.ids.open(this.text(e, 'call', 'id', position));
    const name = clipName(this.text(e, 'call', 'name', position));
    const cwd = own(e, 'cwd');
    if (cwd !== undefined && typeof cwd !== 'string') this.fail(position, '"cwd" must be a string');
    this.names.set(id, name);
    const step: CallStep = { type: 'call', id, name, args: boundArguments(own(e, 'args') ?? {}), position };
    if (typeof cwd === 'string') step.cwd = cwd;
    return step;
  }

  /** A `result` event's step. */
  private result(e: Json, position: string): ResultStep {
    const id = this.ids.settle(this.text(e, 'result', 'id', position));
    const outcome = own(e, 'outcome');
    if (outcome !== 'success' && outcome !== 'error') this.fail(position, '"outcome" must be "success" or "error"');
    const resultText = own(e, 'text');
    if (resultText !== undefined && typeof resultText !== 'string') this.fail(position, 'a "result" event\'s "text" must be a string');
    const name = own(e, 'name');
    const known = this.names.get(id);
    this.names.delete(id); // a finished call's name is not needed again: the map stays as small as the calls in flight
    return {
      type: 'result',
      id,
      name: typeof name === 'string' ? clipName(name) : (known ?? ''),
      outcome: outcome as 'success' | 'error',
      text: typeof resultText === 'string' ? resultText.slice(0, MAX_RESULT_TEXT) : '',
      position,
    };
  }

  /** The event's non-empty string `key`. */
  private text(e: Json, type: string, key: string, position: string): string {
    const value = own(e, key);
    if (typeof value !== 'string' || value === '') this.fail(position, `a "${type}" event needs a non-empty string "${key}"`);
    return value as string;
  }

  /** @throws TranscriptError naming the source, the line and `problem`, always. */
  private fail(position: string, problem: string): never {
    throw new TranscriptError(this.source, position, problem);
  }
}

/** Reads this project's JSONL event format whole (see `JsonlReader`). */
export function readJsonl(text: string, source: string): TranscriptRun[] {
  const runs: TranscriptRun[] = [];
  const reader = new JsonlReader(source);
  let current: TranscriptRun | null = null;
  text.split('\n').forEach((raw, index) => {
    const event = reader.line(raw, index + 1);
    if (event === null) return;
    if (event.type === 'run') {
      current = { id: event.id, reward: event.reward, steps: [] };
      runs.push(current);
      return;
    }
    if (current === null) {
      current = { id: source, reward: null, steps: [] };
      runs.push(current);
    }
    current.steps.push(event.step);
  });
  if (runs.length === 0) throw new TranscriptError(source, 'line 1', 'no events');
  return runs;
}
