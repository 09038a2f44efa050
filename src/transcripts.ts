/**
 * Readers of recorded agent transcripts: OpenAI chat messages, tau-bench runs,
 * Anthropic messages, and this project's own JSONL event format. Each becomes
 * a list of runs of format-neutral steps that the audit replays.
 *
 * Spec: ASSISTANT_SAFETY.md "Tool kinds" (what a call is); DESIGN.md §4 (an
 * output that starts with `Error` is a failed call).
 */
import { parse as parseTolerant, printParseErrorCode, type ParseError } from 'jsonc-parser';

/** A tool call the assistant made. `args` is the parsed arguments object, or the raw string when it is not JSON. */
export interface CallStep {
  type: 'call';
  id: string;
  name: string;
  args: unknown;
  position: string;
}
/** The outcome of an earlier call, by its id. */
export interface ResultStep {
  type: 'result';
  id: string;
  name: string;
  outcome: 'success' | 'error';
  position: string;
}
/** Text the assistant said to the user: a final answer. */
export interface AnswerStep {
  type: 'answer';
  text: string;
  position: string;
}
/** A full session clear (Reset). */
export interface ResetStep {
  type: 'reset';
  position: string;
}
/** A context clear that keeps pinned items (ResetKeepProgress). */
export interface ResetKeepProgressStep {
  type: 'resetKeepProgress';
  position: string;
}
/** Time passes: the audit's clock advances by `advanceMs` milliseconds. */
export interface ClockStep {
  type: 'clock';
  advanceMs: number;
  position: string;
}

/** One step of a transcript; `position` says where it is in the input (e.g. `message 7`, `line 3`). */
export type TranscriptStep = CallStep | ResultStep | AnswerStep | ResetStep | ResetKeepProgressStep | ClockStep;

/** One recorded session. `reward` is the benchmark's score when the input has one (tau-bench: 1 met, 0 not), else null. */
export interface TranscriptRun {
  id: string;
  reward: number | null;
  steps: TranscriptStep[];
}

/** A transcript that cannot be read. `message` names the source and the position. */
export class TranscriptError extends Error {
  readonly source: string;
  readonly position: string;

  constructor(source: string, position: string, problem: string) {
    super(`${source}: ${position}: ${problem}`);
    this.name = 'TranscriptError';
    this.source = source;
    this.position = position;
  }
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function own(value: Json, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(value, key) ? value[key] : undefined;
}

/** Text of a message content: a string, or the text parts of an array of blocks. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => (isObject(part) && typeof own(part, 'text') === 'string' ? (own(part, 'text') as string) : ''))
    .join('');
}

function outcomeOf(text: string, isError: boolean): 'success' | 'error' {
  return isError || text.trimStart().startsWith('Error') ? 'error' : 'success';
}

/** Arguments nested deeper than this are kept as their raw string: nothing real nests so deep, and reports must serialise them. */
export const MAX_ARGUMENT_DEPTH = 64;

/** True when `value` nests objects or arrays deeper than `limit` (iterative: no recursion to overflow). */
function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    if (depth >= limit) return true;
    for (const inner of Object.values(item)) stack.push([inner, depth + 1]);
  }
  return false;
}

/** Arguments as given, or a note in their place when they nest too deep to report. */
function boundArguments(value: unknown): unknown {
  return nestsDeeperThan(value, MAX_ARGUMENT_DEPTH) ? `[arguments nested deeper than ${MAX_ARGUMENT_DEPTH} levels]` : value;
}

function parseArguments(raw: unknown): unknown {
  if (typeof raw !== 'string') return raw ?? {};
  try {
    const parsed: unknown = JSON.parse(raw);
    return nestsDeeperThan(parsed, MAX_ARGUMENT_DEPTH) ? raw : parsed;
  } catch {
    return raw;
  }
}

/** Reads one chat (OpenAI and/or Anthropic messages) into steps. */
function readMessages(messages: unknown[], source: string, where: string): TranscriptStep[] {
  const steps: TranscriptStep[] = [];
  const names = new Map<string, string>();
  messages.forEach((message, index) => {
    const position = `${where}message ${index}`;
    const fail = (problem: string): never => {
      throw new TranscriptError(source, position, problem);
    };
    if (!isObject(message)) fail('a message must be an object');
    const msg = message as Json;
    const role = own(msg, 'role');
    if (typeof role !== 'string') fail('a message needs a string "role"');
    const content = own(msg, 'content');

    if (role === 'assistant') {
      const toolCalls = own(msg, 'tool_calls');
      let calls = 0;
      if (toolCalls !== undefined && toolCalls !== null) {
        if (!Array.isArray(toolCalls)) fail('"tool_calls" must be an array');
        (toolCalls as unknown[]).forEach((call, i) => {
          const fn = isObject(call) ? own(call, 'function') : undefined;
          const id = isObject(call) ? own(call, 'id') : undefined;
          const name = isObject(fn) ? own(fn, 'name') : undefined;
          if (typeof id !== 'string' || typeof name !== 'string') {
            fail(`tool_calls[${i}] needs a string "id" and "function.name"`);
          }
          names.set(id as string, name as string);
          steps.push({ type: 'call', id: id as string, name: name as string, args: parseArguments(own(fn as Json, 'arguments')), position });
          calls += 1;
        });
      }
      if (Array.isArray(content)) {
        content.forEach((block, i) => {
          if (!isObject(block) || own(block, 'type') !== 'tool_use') return;
          const id = own(block, 'id');
          const name = own(block, 'name');
          if (typeof id !== 'string' || typeof name !== 'string') {
            fail(`content[${i}] (tool_use) needs a string "id" and "name"`);
          }
          names.set(id as string, name as string);
          steps.push({ type: 'call', id: id as string, name: name as string, args: boundArguments(own(block, 'input') ?? {}), position });
          calls += 1;
        });
      }
      const text = textOf(content);
      if (calls === 0 && text.trim() !== '') steps.push({ type: 'answer', text, position });
      return;
    }

    if (role === 'tool') {
      const id = own(msg, 'tool_call_id');
      if (typeof id !== 'string') fail('a tool message needs a string "tool_call_id"');
      const name = own(msg, 'name');
      steps.push({
        type: 'result',
        id: id as string,
        name: typeof name === 'string' ? name : (names.get(id as string) ?? ''),
        outcome: outcomeOf(textOf(content), false),
        position,
      });
      return;
    }

    if (role === 'user' && Array.isArray(content)) {
      content.forEach((block, i) => {
        if (!isObject(block) || own(block, 'type') !== 'tool_result') return;
        const id = own(block, 'tool_use_id');
        if (typeof id !== 'string') fail(`content[${i}] (tool_result) needs a string "tool_use_id"`);
        steps.push({
          type: 'result',
          id: id as string,
          name: names.get(id as string) ?? '',
          outcome: outcomeOf(textOf(own(block, 'content')), own(block, 'is_error') === true),
          position,
        });
      });
    }
    // system and user text, and other roles, neither call tools nor answer.
  });
  return steps;
}

function readRun(value: unknown, source: string, index: number | null): TranscriptRun {
  const where = index === null ? '' : `run ${index}, `;
  if (Array.isArray(value)) return { id: source, reward: null, steps: readMessages(value, source, where) };
  if (!isObject(value)) {
    throw new TranscriptError(source, index === null ? 'top level' : `run ${index}`, 'expected a run object or an array of messages');
  }
  const messages = own(value, 'traj') ?? own(value, 'messages');
  if (!Array.isArray(messages)) {
    throw new TranscriptError(source, index === null ? 'top level' : `run ${index}`, 'a run needs a "traj" or "messages" array');
  }
  const reward = own(value, 'reward');
  const taskId = own(value, 'task_id');
  const trial = own(value, 'trial');
  const givenId = own(value, 'id');
  const id =
    typeof givenId === 'string'
      ? givenId
      : taskId !== undefined
        ? `task ${String(taskId)}${trial !== undefined ? ` trial ${String(trial)}` : ''}`
        : index === null
          ? source
          : `run ${index}`;
  return {
    id,
    reward: typeof reward === 'number' && Number.isFinite(reward) ? reward : null,
    steps: readMessages(messages, source, where),
  };
}

const JSONL_TYPES = ['run', 'call', 'result', 'answer', 'reset', 'resetKeepProgress', 'clock'];

function readJson(value: unknown, text: string, source: string): TranscriptRun[] {
  if (isObject(value) && JSONL_TYPES.includes(own(value, 'type') as string)) return readJsonl(text, source);
  if (Array.isArray(value)) {
    const looksLikeRuns = value.some(
      (item) => isObject(item) && (Array.isArray(own(item, 'traj')) || Array.isArray(own(item, 'messages'))),
    );
    return looksLikeRuns ? value.map((run, i) => readRun(run, source, i)) : [readRun(value, source, null)];
  }
  return [readRun(value, source, null)];
}

/**
 * Reads this project's JSONL event format: one JSON object a line, blank
 * lines ignored.
 * `{"type":"run","id":"...","reward":1}` starts a run (optional for one run);
 * `{"type":"call","id":"c1","name":"pulse_query","args":{...}}`;
 * `{"type":"result","id":"c1","outcome":"success"|"error"}`;
 * `{"type":"answer","text":"..."}`; `{"type":"reset"}`; `{"type":"resetKeepProgress"}`;
 * `{"type":"clock","advanceMs":660000}`.
 */
function readJsonl(text: string, source: string): TranscriptRun[] {
  const runs: TranscriptRun[] = [];
  let current: TranscriptRun | null = null;
  const names = new Map<string, string>();
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (line === '') return;
    const position = `line ${index + 1}`;
    const fail = (problem: string): never => {
      throw new TranscriptError(source, position, problem);
    };
    let event: unknown;
    try {
      event = JSON.parse(line);
    } catch (error) {
      fail(`not valid JSON (${(error as Error).message})`);
    }
    if (!isObject(event)) fail('each line must be a JSON object');
    const e = event as Json;
    const type = own(e, 'type');
    if (typeof type !== 'string' || !JSONL_TYPES.includes(type)) {
      fail(`"type" must be one of ${JSONL_TYPES.join(', ')}`);
    }
    if (type === 'run') {
      names.clear(); // call ids are per run
      const id = own(e, 'id');
      const reward = own(e, 'reward');
      current = {
        id: typeof id === 'string' ? id : `run ${runs.length}`,
        reward: typeof reward === 'number' && Number.isFinite(reward) ? reward : null,
        steps: [],
      };
      runs.push(current);
      return;
    }
    if (current === null) {
      current = { id: source, reward: null, steps: [] };
      runs.push(current);
    }
    const steps: TranscriptStep[] = current.steps;
    const str = (key: string): string => {
      const value = own(e, key);
      if (typeof value !== 'string' || value === '') fail(`a "${String(type)}" event needs a non-empty string "${key}"`);
      return value as string;
    };
    switch (type) {
      case 'call': {
        const id = str('id');
        const name = str('name');
        names.set(id, name);
        steps.push({ type: 'call', id, name, args: boundArguments(own(e, 'args') ?? {}), position });
        break;
      }
      case 'result': {
        const id = str('id');
        const outcome = own(e, 'outcome');
        if (outcome !== 'success' && outcome !== 'error') fail('"outcome" must be "success" or "error"');
        const name = own(e, 'name');
        steps.push({
          type: 'result',
          id,
          name: typeof name === 'string' ? name : (names.get(id) ?? ''),
          outcome: outcome as 'success' | 'error',
          position,
        });
        break;
      }
      case 'answer': {
        const answer = own(e, 'text');
        if (typeof answer !== 'string') fail('an "answer" event needs a string "text"');
        steps.push({ type: 'answer', text: answer as string, position });
        break;
      }
      case 'clock': {
        const advanceMs = own(e, 'advanceMs');
        if (typeof advanceMs !== 'number' || !Number.isFinite(advanceMs) || advanceMs < 0) {
          fail('a "clock" event needs a finite, non-negative number "advanceMs"');
        }
        steps.push({ type: 'clock', advanceMs: advanceMs as number, position });
        break;
      }
      default:
        steps.push({ type: type as 'reset' | 'resetKeepProgress', position });
    }
  });
  if (runs.length === 0) throw new TranscriptError(source, 'line 1', 'no events');
  return runs;
}

/** Line and column of a character offset, 1-based. */
function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return `line ${line}, column ${offset - before.lastIndexOf('\n')}`;
}

/**
 * Reads a transcript in any supported format, detected from its content:
 * - a JSON array of runs `{ traj | messages, reward?, task_id?, trial?, id? }` (tau-bench);
 * - a JSON array of messages, or an object `{ messages }` (OpenAI chat with
 *   `tool_calls` / `tool` messages; Anthropic with `tool_use` / `tool_result` blocks);
 * - JSONL events of this project's own format (see `readJsonl` above; a
 *   `.jsonl` / `.ndjson` source name, or text that is not one JSON value).
 *
 * An assistant message with text and no tool calls is an answer; a tool output
 * that starts with `Error` (or an Anthropic `is_error`) is a failed call.
 *
 * @param text the file's content.
 * @param source a name for messages (the file path).
 * @throws TranscriptError naming `source` and the position (line and column,
 *   `run N, message M`, or `line N`) of the first problem.
 */
export function readTranscript(text: string, source: string): TranscriptRun[] {
  if (typeof text !== 'string') throw new TranscriptError(String(source), 'top level', 'expected text');
  if (text.startsWith('\uFEFF')) text = text.slice(1); // a UTF-8 byte-order mark is no content
  if (/\.(jsonl|ndjson)$/i.test(source)) return readJsonl(text, source);
  if (text.trim() === '') throw new TranscriptError(source, 'line 1', 'the file is empty');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const lines = text.split('\n').filter((line) => line.trim() !== '');
    if (lines.length > 1 && lines.every((line) => line.trim().startsWith('{'))) return readJsonl(text, source);
    // JSON.parse does not always say where; a parser that reports offsets does.
    const errors: ParseError[] = [];
    try {
      parseTolerant(text, errors, { disallowComments: true, allowTrailingComma: false });
    } catch {
      // Nesting deep enough to exhaust the stack: no position to give.
    }
    const first = errors[0];
    const position = first ? lineAndColumn(text, first.offset) : 'top level';
    const problem = first ? printParseErrorCode(first.error) : (error as Error).message;
    throw new TranscriptError(source, position, `not valid JSON (${problem})`);
  }
  return readJson(value, text, source);
}
