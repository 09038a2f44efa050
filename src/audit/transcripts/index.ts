/**
 * Readers of recorded agent transcripts. Each becomes a list of runs of
 * format-neutral steps that the audit replays. Formats, detected from the
 * content (see `readTranscript`): OpenAI chat (and tau-bench runs), OpenAI
 * legacy `function_call`, OpenAI Responses items, Anthropic messages, Claude
 * Code session JSONL, Gemini CLI chat history and session files, Codex
 * rollout JSONL, and this project's own JSONL events.
 *
 * Spec: ASSISTANT_SAFETY.md "Tool kinds" (what a call is); DESIGN.md §5.7
 * (whether a call failed is read from its result: `outcome.ts`); §5.1 (a
 * call's working directory, when the log records one).
 */
import { TranscriptError } from '../../errors/transcript-error.js';
import { createReadStream, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parse as parseTolerant, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { MAX_NAME_LENGTH } from '../../../machines/safety.policy.js';
import { outcomeOf, resultText } from '../../guard/outcome.js';
import { isRecord, own } from '../../util/own.js';

/**
 * A tool call the assistant made. `args` is the parsed arguments object, or
 * the raw string when it is not JSON. `cwd` is the working directory the log
 * records for the call (Claude Code's `cwd`, Codex's session and turn `cwd`),
 * absent when it records none.
 */
export interface CallStep {
  type: 'call';
  id: string;
  name: string;
  args: unknown;
  position: string;
  cwd?: string;
}
/**
 * The outcome of an earlier call, by its id. `outcome` is read from the
 * result (DESIGN §5.7, `outcomeOf`); `text` is the result's text, at most
 * `MAX_RESULT_TEXT` characters (`''` when the log records none), kept for
 * self-verification (DESIGN §1, §5.8) and catalog failure markers.
 */
export interface ResultStep {
  type: 'result';
  id: string;
  name: string;
  outcome: 'success' | 'error';
  text: string;
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

/** Options of `readTranscript`. */
export interface ReadOptions {
  /** Failure markers a catalog adds to `DEFAULT_FAILURE_MARKERS` when outcomes are read from result text (DESIGN §5.7). */
  failureMarkers?: readonly string[];
}

/** The most characters of a result's text a `ResultStep` keeps (16 KiB). */
export const MAX_RESULT_TEXT = 16 * 1024;

/**
 * A tool name as the gate keeps it: its first `MAX_NAME_LENGTH` characters
 * (the machine keeps no more, and the guard refuses a longer one), so any
 * readable transcript can be audited. Call ids are kept apart (`CallIds`).
 */
function clipName(value: string): string {
  return value.length > MAX_NAME_LENGTH ? value.slice(0, MAX_NAME_LENGTH) : value;
}

/** The form of a call id `CallIds` made up (`…#<n>` closing exactly `MAX_NAME_LENGTH` characters). */
const MADE_UP_ID = /…#[0-9]+$/;

/**
 * Call ids as the gate takes them, one to one: an id of fewer than
 * `MAX_NAME_LENGTH` characters as it is; a longer one (which the guard
 * refuses, and which a cut would merge with every id sharing its first
 * characters) its first characters and `…#<n>`, exactly `MAX_NAME_LENGTH`
 * characters, `n` counting the long ids of the run. An id of exactly
 * `MAX_NAME_LENGTH` characters is made up too when it has that form, so a
 * log's own id never takes one made up for another. Per run.
 */
class CallIds {
  /** The made-up id of each long id, and how many of its calls have no result yet (`open`, `settle`). */
  private readonly madeUp = new Map<string, { gateId: string; open: number }>();
  private count = 0;

  /** The gate's id for the log's `id`: the same for the same id while it is kept. */
  of(id: string): string {
    return this.entry(id)?.gateId ?? id;
  }

  /** `of`, for a call under `id`: kept until the result of each call under it (`settle`). */
  open(id: string): string {
    const entry = this.entry(id);
    if (entry === undefined) return id;
    entry.open += 1;
    return entry.gateId;
  }

  /** `of`, for a result under `id`: forgotten once every call under it has its result, so the map stays as small as the calls in flight. */
  settle(id: string): string {
    const entry = this.entry(id);
    if (entry === undefined) return id;
    entry.open -= 1;
    if (entry.open <= 0) this.madeUp.delete(id);
    return entry.gateId;
  }

  private entry(id: string): { gateId: string; open: number } | undefined {
    if (id.length < MAX_NAME_LENGTH || (id.length === MAX_NAME_LENGTH && !MADE_UP_ID.test(id))) return undefined;
    let entry = this.madeUp.get(id);
    if (entry === undefined) {
      const suffix = `…#${(this.count += 1)}`;
      entry = { gateId: id.slice(0, MAX_NAME_LENGTH - suffix.length) + suffix, open: 0 };
      this.madeUp.set(id, entry);
    }
    return entry;
  }

  clear(): void {
    this.madeUp.clear();
    this.count = 0;
  }
}

/** The formats `readTranscript` knows, for the error that says none was recognised. */
const SUPPORTED_FORMATS =
  'OpenAI chat and tau-bench runs, OpenAI legacy function_call, OpenAI Responses items, Anthropic messages, ' +
  'Claude Code session JSONL, Gemini CLI chat history and session files, Codex rollout JSONL, pulse-safety JSONL events';

type Json = Record<string, unknown>;

function ownString(value: Json, key: string): string | undefined {
  const found = own(value, key);
  return typeof found === 'string' ? found : undefined;
}

/** Text of a message content: a string, or the text parts of an array of blocks (thought parts left out). */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) =>
      isRecord(part) && typeof own(part, 'text') === 'string' && own(part, 'thought') !== true ? (own(part, 'text') as string) : '',
    )
    .join('');
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
  if (typeof raw !== 'string') return boundArguments(raw ?? {});
  try {
    const parsed: unknown = JSON.parse(raw);
    return nestsDeeperThan(parsed, MAX_ARGUMENT_DEPTH) ? raw : parsed;
  } catch {
    return raw;
  }
}

/** A result's text as a `ResultStep` keeps it. */
function keptText(result: unknown): string {
  const text = resultText(result);
  return text.length > MAX_RESULT_TEXT ? text.slice(0, MAX_RESULT_TEXT) : text;
}

/**
 * Builds the steps of one run. Pairs results with calls (by id, or for
 * formats without ids by name, oldest open call first) and decides answers:
 * assistant text is an answer only when no tool call follows it in the same
 * turn (a turn ends where the user speaks), so a preamble ("Let me check.")
 * recorded as its own message is no final answer.
 */
class StepBuilder {
  readonly steps: TranscriptStep[] = [];
  /** The working directory the log last recorded. */
  cwd: string | undefined;
  private readonly names = new Map<string, string>();
  /** The gate's call ids (long ones made up, `CallIds`). */
  private readonly ids = new CallIds();
  /** Calls without a result yet, by name, in order. */
  private readonly open = new Map<string, Set<string>>();
  /** Answers of the current turn, dropped if a call follows. */
  private pendingAnswers: AnswerStep[] = [];
  private readonly dropped = new Set<TranscriptStep>();
  private synthesized = 0;

  constructor(private readonly options: ReadOptions) {}

  /** A fresh id for a call the log gives none. */
  newId(kind: string): string {
    this.synthesized += 1;
    return `${kind}#${this.synthesized}`;
  }

  call(rawId: string, rawName: string, args: unknown, position: string, cwd = this.cwd): void {
    const id = this.ids.of(rawId);
    const name = clipName(rawName);
    for (const answer of this.pendingAnswers) this.dropped.add(answer);
    this.pendingAnswers = [];
    this.names.set(id, name);
    const open = this.open.get(name) ?? new Set<string>();
    open.add(id);
    this.open.set(name, open);
    const step: CallStep = { type: 'call', id, name, args, position };
    if (cwd !== undefined) step.cwd = cwd;
    this.steps.push(step);
  }

  /** The id of the oldest call of `name` without a result, or null. */
  openCallOf(name: string): string | null {
    const open = this.open.get(name);
    if (!open) return null;
    for (const id of open) return id;
    return null;
  }

  nameOf(id: string): string | undefined {
    return this.names.get(id);
  }

  /** A result of call `id`; `result` is what the log recorded, `outcome` overrides the reading of it. */
  result(rawId: string, rawName: string | undefined, result: unknown, position: string, outcome?: 'success' | 'error'): void {
    const id = this.ids.of(rawId);
    const name = rawName === undefined ? undefined : clipName(rawName);
    const known = name ?? this.names.get(id) ?? '';
    this.open.get(this.names.get(id) ?? known)?.delete(id);
    this.steps.push({
      type: 'result',
      id,
      name: known,
      outcome: outcome ?? outcomeOf(result, this.options),
      text: keptText(result),
      position,
    });
  }

  answer(text: string, position: string): void {
    const step: AnswerStep = { type: 'answer', text, position };
    this.pendingAnswers.push(step);
    this.steps.push(step);
  }

  /** The user spoke: the turn's answers stand. */
  userTurn(): void {
    this.pendingAnswers = [];
  }

  finish(): TranscriptStep[] {
    return this.dropped.size === 0 ? this.steps : this.steps.filter((step) => !this.dropped.has(step));
  }
}

/** OpenAI Responses item types read as tool traffic or messages; other item types (reasoning, web search) are skipped. */
const RESPONSES_TYPES = new Set([
  'message',
  'function_call',
  'function_call_output',
  'custom_tool_call',
  'custom_tool_call_output',
  'local_shell_call',
  'local_shell_call_output',
  'shell_call',
  'shell_call_output',
  'mcp_call',
]);
/** Gemini CLI session-file message types (`~/.gemini/tmp/<project>/chats/session-*.json`). */
const GEMINI_SESSION_TYPES = new Set(['user', 'gemini', 'info', 'error', 'warning']);
/** Codex rollout line types (`~/.codex/sessions/.../rollout-*.jsonl`). */
const CODEX_LINE_TYPES = new Set(['session_meta', 'response_item', 'turn_context', 'event_msg', 'compacted']);
/** Claude Code session line types that carry no conversation. */
const CLAUDE_OTHER_TYPES = new Set(['summary', 'system', 'file-history-snapshot', 'queue-operation', 'result', 'progress', 'attachment']);

/**
 * Reads one entry of a conversation into `out`: a chat message, a Responses
 * item, a Gemini content or session message, or a Claude Code / Codex log
 * line wrapping one of those (`wrapped`: the entry came out of such a line,
 * and is not unwrapped again).
 */
function readEntry(entry: unknown, out: StepBuilder, source: string, position: string, wrapped = false): void {
  const fail = (problem: string): never => {
    throw new TranscriptError(source, position, problem);
  };
  if (!isRecord(entry)) fail('a message must be an object');
  const msg = entry as Json;
  const type = own(msg, 'type');
  const role = own(msg, 'role');

  // Log lines that wrap a message: Claude Code ({ type, message, cwd }) and Codex ({ type, payload }).
  if (!wrapped && (type === 'user' || type === 'assistant') && isRecord(own(msg, 'message'))) {
    if (own(msg, 'isApiErrorMessage') === true) return; // the client's own error text, not the model's
    const cwd = ownString(msg, 'cwd');
    if (cwd !== undefined) out.cwd = cwd;
    return readEntry(own(msg, 'message'), out, source, position, true);
  }
  if (!wrapped && typeof type === 'string' && CODEX_LINE_TYPES.has(type) && role === undefined) {
    const payload = own(msg, 'payload');
    if (isRecord(payload)) {
      const cwd = ownString(payload, 'cwd');
      if (cwd !== undefined && (type === 'session_meta' || type === 'turn_context')) out.cwd = cwd;
      if (type === 'response_item') readEntry(payload, out, source, position, true);
    }
    return;
  }

  if (typeof type === 'string' && RESPONSES_TYPES.has(type) && type !== 'message') return readResponsesItem(msg, type, out, fail, position);
  if (Array.isArray(own(msg, 'parts'))) return readGeminiContent(msg, out, fail, position);
  if (typeof type === 'string' && GEMINI_SESSION_TYPES.has(type) && role === undefined)
    return readGeminiSessionMessage(msg, type, out, fail, position);
  if (typeof role !== 'string') {
    if (typeof type === 'string') return; // an item of a type no reader needs (reasoning, summaries, snapshots)
    fail('a message needs a string "role"');
  }
  readChatMessage(msg, role as string, out, fail, position);
}

/** OpenAI chat (tool_calls, tool, legacy function_call / function) and Anthropic (tool_use, tool_result) messages. */
function readChatMessage(msg: Json, role: string, out: StepBuilder, fail: (problem: string) => never, position: string): void {
  const content = own(msg, 'content');

  if (role === 'assistant') {
    let calls = 0;
    const toolCalls = own(msg, 'tool_calls');
    if (toolCalls !== undefined && toolCalls !== null) {
      if (!Array.isArray(toolCalls)) fail('"tool_calls" must be an array');
      (toolCalls as unknown[]).forEach((call, i) => {
        const fn = isRecord(call) ? own(call, 'function') : undefined;
        const id = isRecord(call) ? own(call, 'id') : undefined;
        const name = isRecord(fn) ? own(fn, 'name') : undefined;
        if (typeof id !== 'string' || typeof name !== 'string') {
          fail(`tool_calls[${i}] needs a string "id" and "function.name"`);
        }
        out.call(id as string, name as string, parseArguments(own(fn as Json, 'arguments')), position);
        calls += 1;
      });
    }
    const functionCall = own(msg, 'function_call');
    if (functionCall !== undefined && functionCall !== null) {
      const name = isRecord(functionCall) ? own(functionCall, 'name') : undefined;
      if (typeof name !== 'string') fail('"function_call" needs a string "name"');
      out.call(out.newId('function_call'), name as string, parseArguments(own(functionCall as Json, 'arguments')), position);
      calls += 1;
    }
    if (Array.isArray(content)) {
      content.forEach((block, i) => {
        if (!isRecord(block) || own(block, 'type') !== 'tool_use') return;
        const id = own(block, 'id');
        const name = own(block, 'name');
        if (typeof id !== 'string' || typeof name !== 'string') {
          fail(`content[${i}] (tool_use) needs a string "id" and "name"`);
        }
        out.call(id as string, name as string, boundArguments(own(block, 'input') ?? {}), position);
        calls += 1;
      });
    }
    const text = textOf(content);
    if (calls === 0 && text.trim() !== '') out.answer(text, position);
    return;
  }

  if (role === 'tool') {
    const id = own(msg, 'tool_call_id');
    if (typeof id !== 'string') fail('a tool message needs a string "tool_call_id"');
    out.result(id as string, ownString(msg, 'name'), msg, position);
    return;
  }

  if (role === 'function') {
    // OpenAI legacy functions: no ids; the result answers the oldest open call of its name.
    const name = own(msg, 'name');
    if (typeof name !== 'string') fail('a function message needs a string "name"');
    const id = out.openCallOf(name as string) ?? out.newId('function');
    out.result(id, name as string, msg, position);
    return;
  }

  if (role === 'user') {
    if (!Array.isArray(content)) {
      out.userTurn();
      return;
    }
    let spoke = false;
    content.forEach((block, i) => {
      if (!isRecord(block) || own(block, 'type') !== 'tool_result') {
        spoke = true;
        return;
      }
      const id = own(block, 'tool_use_id');
      if (typeof id !== 'string') fail(`content[${i}] (tool_result) needs a string "tool_use_id"`);
      out.result(id as string, undefined, block, position);
    });
    if (spoke) out.userTurn();
  }
  // system and developer text, and other roles, neither call tools nor answer.
}

/** OpenAI Responses API items (and Codex's). Each call item needs a string `call_id` (or `id`). */
function readResponsesItem(item: Json, type: string, out: StepBuilder, fail: (problem: string) => never, position: string): void {
  const callId = ownString(item, 'call_id') ?? ownString(item, 'id');
  const needId = (): string => callId ?? fail(`a "${type}" item needs a string "call_id"`);
  switch (type) {
    case 'function_call':
    case 'custom_tool_call': {
      const id = needId();
      const name = own(item, 'name');
      if (typeof name !== 'string') fail(`a "${type}" item needs a string "name"`);
      const args = type === 'function_call' ? parseArguments(own(item, 'arguments')) : (own(item, 'input') ?? '');
      out.call(id, name as string, boundArguments(args), position);
      return;
    }
    case 'local_shell_call':
    case 'shell_call':
      out.call(needId(), type === 'local_shell_call' ? 'local_shell' : 'shell', boundArguments(own(item, 'action') ?? {}), position);
      return;
    case 'mcp_call': {
      // A hosted MCP call carries its own output or error.
      const id = needId();
      const name = own(item, 'name');
      if (typeof name !== 'string') fail('a "mcp_call" item needs a string "name"');
      out.call(id, name as string, parseArguments(own(item, 'arguments')), position);
      const error = own(item, 'error');
      const failed = error !== undefined && error !== null && error !== '';
      out.result(id, name as string, failed ? { error } : (own(item, 'output') ?? ''), position);
      return;
    }
    default: {
      // function_call_output, custom_tool_call_output, local_shell_call_output, shell_call_output
      const id = needId();
      out.result(id, undefined, type === 'shell_call_output' ? own(item, 'output') : item, position);
    }
  }
}

/** Gemini `Content`: `{ role: 'user' | 'model', parts: [{ text } | { functionCall } | { functionResponse }] }`. */
function readGeminiContent(content: Json, out: StepBuilder, fail: (problem: string) => never, position: string): void {
  const parts = own(content, 'parts') as unknown[];
  const role = own(content, 'role');
  let calls = 0;
  let results = 0;
  let text = '';
  parts.forEach((part, i) => {
    if (!isRecord(part)) return;
    const call = own(part, 'functionCall');
    const response = own(part, 'functionResponse');
    if (call !== undefined) {
      const name = isRecord(call) ? own(call, 'name') : undefined;
      if (typeof name !== 'string') fail(`parts[${i}] (functionCall) needs a string "name"`);
      const id = ownString(call as Json, 'id') ?? out.newId('functionCall');
      out.call(id, name as string, parseArguments(own(call as Json, 'args')), position);
      calls += 1;
    } else if (response !== undefined) {
      const name = isRecord(response) ? own(response, 'name') : undefined;
      const givenId = isRecord(response) ? ownString(response, 'id') : undefined;
      if (typeof name !== 'string' && givenId === undefined) fail(`parts[${i}] (functionResponse) needs a string "name" or "id"`);
      const id =
        givenId !== undefined && out.nameOf(givenId) !== undefined
          ? givenId
          : ((typeof name === 'string' ? out.openCallOf(name) : null) ?? givenId ?? out.newId('functionResponse'));
      out.result(id, typeof name === 'string' ? name : undefined, part, position);
      results += 1;
    } else if (typeof own(part, 'text') === 'string' && own(part, 'thought') !== true) {
      text += own(part, 'text') as string;
    }
  });
  if (role === 'model') {
    if (calls === 0 && text.trim() !== '') out.answer(text, position);
  } else if (role === 'user' && results === 0 && text.trim() !== '') {
    out.userTurn();
  }
}

/**
 * A Gemini CLI session-file message: `{ type: 'user' | 'gemini' | 'info' | ..., content, toolCalls? }`,
 * each tool call `{ id, name, args, result: [parts], status: 'success' | 'error' | 'cancelled' }`.
 * A message's calls all come before their results: the model asked for them together.
 */
function readGeminiSessionMessage(msg: Json, type: string, out: StepBuilder, fail: (problem: string) => never, position: string): void {
  if (type === 'user') {
    out.userTurn();
    return;
  }
  if (type !== 'gemini') return; // info, warning and error messages are the client's, not the model's
  const toolCalls = own(msg, 'toolCalls');
  const records: { id: string; name: string; record: Json }[] = [];
  if (Array.isArray(toolCalls)) {
    toolCalls.forEach((record, i) => {
      const name = isRecord(record) ? own(record, 'name') : undefined;
      if (typeof name !== 'string') fail(`toolCalls[${i}] needs a string "name"`);
      const id = ownString(record as Json, 'id') ?? out.newId('toolCall');
      out.call(id, name as string, parseArguments(own(record as Json, 'args')), position);
      records.push({ id, name: name as string, record: record as Json });
    });
  }
  for (const { id, name, record } of records) {
    const status = own(record, 'status');
    const result = own(record, 'result') ?? own(record, 'resultDisplay');
    if (result === undefined && status !== 'success' && status !== 'error' && status !== 'cancelled') continue; // not finished when the file was written
    // 'cancelled': the user declined it, so it never ran.
    const failed = status === 'error' || status === 'cancelled';
    out.result(id, name, result, position, failed ? 'error' : undefined);
  }
  const text = textOf(own(msg, 'content'));
  if (records.length === 0 && text.trim() !== '') out.answer(text, position);
}

/**
 * A run id part from a JSON value: strings and numbers as written, anything
 * else as its JSON text (never `String()`, which calls a `toString` the input
 * may have replaced), cut to 200 characters.
 */
function idPart(value: unknown): string {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value).slice(0, 200);
  try {
    return (JSON.stringify(value) ?? 'null').slice(0, 200);
  } catch {
    return '(unprintable)'; // nested too deep to serialise
  }
}

function readRun(value: unknown, source: string, index: number | null, options: ReadOptions): TranscriptRun {
  const where = index === null ? '' : `run ${index}, `;
  const place = index === null ? 'top level' : `run ${index}`;
  if (Array.isArray(value)) return { id: source, reward: null, steps: readEntries(value, source, where, options) };
  if (!isRecord(value)) throw new TranscriptError(source, place, 'expected a run object or an array of messages');
  const entries = entriesOf(value);
  if (entries === null) {
    throw new TranscriptError(
      source,
      place,
      index === null
        ? 'a run needs a "traj", "messages", "history", "contents", "input" or "output" array'
        : 'a run needs a "traj" or "messages" array',
    );
  }
  const reward = own(value, 'reward');
  const taskId = own(value, 'task_id');
  const trial = own(value, 'trial');
  const givenId = ownString(value, 'id') ?? ownString(value, 'sessionId');
  const id =
    givenId !== undefined
      ? givenId
      : taskId !== undefined
        ? `task ${idPart(taskId)}${trial !== undefined ? ` trial ${idPart(trial)}` : ''}`
        : index === null
          ? source
          : `run ${index}`;
  return {
    id,
    reward: typeof reward === 'number' && Number.isFinite(reward) ? reward : null,
    steps: readEntries(entries, source, where, options),
  };
}

/**
 * The conversation of a run object: tau-bench `traj`, `messages` (chat, or a
 * Gemini CLI session file), Gemini `history` / `contents`, or OpenAI
 * Responses `input` then `output`. Null when it has none.
 */
function entriesOf(value: Json): unknown[] | null {
  for (const key of ['traj', 'messages', 'history', 'contents']) {
    const found: unknown = own(value, key);
    if (Array.isArray(found)) return found as unknown[];
  }
  const input: unknown = own(value, 'input');
  const output: unknown = own(value, 'output');
  if (!Array.isArray(input) && !Array.isArray(output)) return null;
  return [...(Array.isArray(input) ? (input as unknown[]) : []), ...(Array.isArray(output) ? (output as unknown[]) : [])];
}

function readEntries(entries: unknown[], source: string, where: string, options: ReadOptions): TranscriptStep[] {
  const out = new StepBuilder(options);
  entries.forEach((entry, index) => readEntry(entry, out, source, `${where}message ${index}`));
  return out.finish();
}

const JSONL_TYPES = ['run', 'call', 'result', 'answer', 'reset', 'resetKeepProgress', 'clock'];

function readJson(value: unknown, text: string, source: string, options: ReadOptions): TranscriptRun[] {
  if (isRecord(value) && typeof own(value, 'type') === 'string' && entriesOf(value) === null) {
    // One log line or event on its own (perhaps spread over several lines).
    const format = lineFormat(value, own(value, 'type') as string);
    return format === 'own' ? readJsonl(text, source) : readLogLines([value], source, format, options);
  }
  if (Array.isArray(value)) {
    const looksLikeRuns = value.some(
      (item) => isRecord(item) && (Array.isArray(own(item, 'traj')) || Array.isArray(own(item, 'messages'))),
    );
    return looksLikeRuns ? value.map((run, i) => readRun(run, source, i, options)) : [readRun(value, source, null, options)];
  }
  return [readRun(value, source, null, options)];
}

/**
 * Reads a file of one JSON value a line, and picks its format from the first
 * line with a string `type`: Codex rollout lines (`session_meta`,
 * `response_item`, ...) or bare Responses items (older Codex rollouts); Claude
 * Code session lines (`user`, `assistant`, `summary`, ..., or any line with a
 * `message` or `sessionId`); otherwise this project's own events.
 */
function readLines(text: string, source: string, options: ReadOptions): TranscriptRun[] {
  const lines = text.split('\n');
  let format: 'own' | 'codex' | 'claude' = 'own';
  for (const raw of lines) {
    const line = raw.trim();
    if (!line.startsWith('{')) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    if (!isRecord(value)) continue;
    const type = own(value, 'type');
    if (typeof type !== 'string') continue;
    format = lineFormat(value, type);
    break;
  }
  if (format === 'own') return readJsonl(text, source);
  return readLogLines(lines, source, format, options);
}

/** The format of a log whose first typed line is `value`. */
function lineFormat(value: Json, type: string): 'own' | 'codex' | 'claude' {
  const wraps = isRecord(own(value, 'message'));
  const session = typeof own(value, 'sessionId') === 'string' || typeof own(value, 'session_id') === 'string';
  if (CODEX_LINE_TYPES.has(type) || (RESPONSES_TYPES.has(type) && !wraps)) return 'codex';
  if (JSONL_TYPES.includes(type) && !wraps && !session) return 'own';
  if (type === 'user' || type === 'assistant' || CLAUDE_OTHER_TYPES.has(type) || wraps || session) return 'claude';
  return 'own';
}

/**
 * Claude Code session JSONL (one run per `sessionId`, a subagent's sidechain
 * lines a run of their own) and Codex rollout JSONL (one run, named by its
 * `session_meta` id). `lines` are the file's lines, or one value already
 * parsed (a single-line log). Positions are `line N`.
 */
function readLogLines(
  lines: readonly (string | Json)[],
  source: string,
  format: 'codex' | 'claude',
  options: ReadOptions,
): TranscriptRun[] {
  const runs = new Map<string, { run: TranscriptRun; out: StepBuilder }>();
  /** The working directory last recorded per run key, also by lines that start no run (stream-json's init line). */
  const cwds = new Map<string, string>();
  const runOf = (key: string) => {
    let found = runs.get(key);
    if (!found) {
      found = { run: { id: key, reward: null, steps: [] }, out: new StepBuilder(options) };
      found.out.cwd = cwds.get(key);
      runs.set(key, found);
    }
    return found;
  };
  let key = source;
  let named = false;
  lines.forEach((raw, index) => {
    const line = typeof raw === 'string' ? raw.trim() : raw;
    if (line === '') return;
    const position = `line ${index + 1}`;
    let value: unknown = line;
    if (typeof line === 'string') {
      try {
        value = JSON.parse(line);
      } catch (error) {
        throw new TranscriptError(source, position, `not valid JSON (${(error as Error).message})`);
      }
    }
    if (!isRecord(value)) throw new TranscriptError(source, position, 'each line must be a JSON object');
    if (format === 'claude') {
      const session = ownString(value, 'sessionId') ?? ownString(value, 'session_id');
      if (session !== undefined) {
        const agent = ownString(value, 'agentId');
        key = own(value, 'isSidechain') === true ? `${session} ${agent === undefined ? 'sidechain' : `agent ${agent}`}` : session;
      }
      const cwd = ownString(value, 'cwd');
      if (cwd !== undefined) {
        cwds.set(key, cwd);
        const run = runs.get(key);
        if (run) run.out.cwd = cwd;
      }
      const type = own(value, 'type');
      // Other lines (summaries, snapshots, system notes, stream-json init and result) carry no conversation.
      if (type === 'user' || type === 'assistant') readEntry(value, runOf(key).out, source, position);
      return;
    }
    const entry = runOf(source);
    if (!named && own(value, 'type') === 'session_meta') {
      const payload = own(value, 'payload');
      const id = isRecord(payload) ? ownString(payload, 'id') : undefined;
      if (id !== undefined) {
        entry.run.id = id;
        named = true;
      }
    }
    if (typeof own(value, 'type') === 'string') readEntry(value, entry.out, source, position);
  });
  if (runs.size === 0) throw new TranscriptError(source, 'line 1', 'no events');
  return [...runs.values()].map(({ run, out }) => ({ ...run, steps: out.finish() }));
}

/** What one line of this project's JSONL format says: a run starts, or a step. */
export type JsonlEvent = { type: 'run'; id: string; reward: number | null } | { type: 'step'; step: TranscriptStep };

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
    const fail = (problem: string): never => {
      throw new TranscriptError(this.source, position, problem);
    };
    let event: unknown;
    try {
      event = JSON.parse(line);
    } catch (error) {
      fail(`not valid JSON (${(error as Error).message})`);
    }
    if (!isRecord(event)) fail('each line must be a JSON object');
    const e = event as Json;
    const type = own(e, 'type');
    if (typeof type !== 'string' || !JSONL_TYPES.includes(type)) {
      fail(`"type" must be one of ${JSONL_TYPES.join(', ')}`);
    }
    if (type === 'run') {
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
    const text = (key: string): string => {
      const value = own(e, key);
      if (typeof value !== 'string' || value === '') fail(`a "${String(type)}" event needs a non-empty string "${key}"`);
      return value as string;
    };
    const str = (key: string): string => clipName(text(key));
    switch (type) {
      case 'call': {
        const id = this.ids.open(text('id'));
        const name = str('name');
        const cwd = own(e, 'cwd');
        if (cwd !== undefined && typeof cwd !== 'string') fail('"cwd" must be a string');
        this.names.set(id, name);
        const step: CallStep = { type: 'call', id, name, args: boundArguments(own(e, 'args') ?? {}), position };
        if (typeof cwd === 'string') step.cwd = cwd;
        return { type: 'step', step };
      }
      case 'result': {
        const id = this.ids.settle(text('id'));
        const outcome = own(e, 'outcome');
        if (outcome !== 'success' && outcome !== 'error') fail('"outcome" must be "success" or "error"');
        const resultText = own(e, 'text');
        if (resultText !== undefined && typeof resultText !== 'string') fail('a "result" event\'s "text" must be a string');
        const name = own(e, 'name');
        const known = this.names.get(id);
        this.names.delete(id); // a finished call's name is not needed again: the map stays as small as the calls in flight
        return {
          type: 'step',
          step: {
            type: 'result',
            id,
            name: typeof name === 'string' ? clipName(name) : (known ?? ''),
            outcome: outcome as 'success' | 'error',
            text: typeof resultText === 'string' ? resultText.slice(0, MAX_RESULT_TEXT) : '',
            position,
          },
        };
      }
      case 'answer': {
        const answer = own(e, 'text');
        if (typeof answer !== 'string') fail('an "answer" event needs a string "text"');
        return { type: 'step', step: { type: 'answer', text: answer as string, position } };
      }
      case 'clock': {
        const advanceMs = own(e, 'advanceMs');
        if (typeof advanceMs !== 'number' || !Number.isFinite(advanceMs) || advanceMs < 0) {
          fail('a "clock" event needs a finite, non-negative number "advanceMs"');
        }
        return { type: 'step', step: { type: 'clock', advanceMs: advanceMs as number, position } };
      }
      default:
        return { type: 'step', step: { type: type as 'reset' | 'resetKeepProgress', position } };
    }
  }
}

/** Reads this project's JSONL event format whole (see `JsonlReader`). */
function readJsonl(text: string, source: string): TranscriptRun[] {
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

/** Line and column of a character offset, 1-based. */
function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return `line ${line}, column ${offset - before.lastIndexOf('\n')}`;
}

/** Refuses a reading in which nothing at all was recognised: a format we do not know, read as nothing, must not pass as a clean audit. */
function requireSomething(runs: TranscriptRun[], source: string): TranscriptRun[] {
  if (runs.some((run) => run.steps.some((step) => step.type === 'call' || step.type === 'answer'))) return runs;
  throw new TranscriptError(
    source,
    'top level',
    `no tool call and no final answer recognised: not a supported transcript format, or nothing to audit (supported: ${SUPPORTED_FORMATS})`,
  );
}

/**
 * Reads a transcript in any supported format, detected from its content:
 * - a JSON array of runs `{ traj | messages, reward?, task_id?, trial?, id? }` (tau-bench);
 * - a JSON array of messages, or an object `{ messages }`: OpenAI chat
 *   (`tool_calls` / `tool` messages; legacy `function_call` / `function`
 *   messages, paired by name in order), Anthropic (`tool_use` / `tool_result`
 *   blocks);
 * - OpenAI Responses items, an array or `{ input?, output? }`:
 *   `function_call` / `function_call_output`, `custom_tool_call(_output)`,
 *   `local_shell_call(_output)`, `shell_call(_output)`, `mcp_call`, and
 *   `message` items (assistant `output_text` is an answer);
 * - Gemini CLI chat history or checkpoint, an array or `{ history }` of
 *   `{ role: 'user' | 'model', parts }` (`functionCall` / `functionResponse`
 *   parts; calls without ids get ids in order, responses pair by name);
 * - a Gemini CLI session file `{ sessionId, messages: [{ type: 'user' | 'gemini', content, toolCalls? }] }`;
 * - Claude Code session JSONL (`~/.claude/projects/.../<session>.jsonl`, and
 *   `claude -p --output-format stream-json` output): `user` / `assistant`
 *   lines with Anthropic messages, the line's `cwd` on its calls, one run per
 *   session, subagent sidechains apart; other line types skipped;
 * - Codex rollout JSONL (`~/.codex/sessions/.../rollout-*.jsonl`):
 *   `response_item` lines of Responses items, the session's and turn's `cwd`
 *   on calls;
 * - JSONL events of this project's own format (see `readJsonl` above).
 *
 * An assistant text with no tool call after it in its turn is an answer.
 * Whether a call failed is read from its result (`outcomeOf`, DESIGN §5.7).
 *
 * @param text the file's content.
 * @param source a name for messages (the file path).
 * @param options `failureMarkers`: a catalog's failure markers, added to the defaults.
 * @throws TranscriptError naming `source` and the position (line and column,
 *   `run N, message M`, or `line N`) of the first problem; also when no tool
 *   call and no answer at all is recognised (an unknown format must not read
 *   as an empty, clean transcript).
 */
export function readTranscript(text: string, source: string, options: ReadOptions = {}): TranscriptRun[] {
  if (typeof text !== 'string') throw new TranscriptError(String(source), 'top level', 'expected text');
  if (text.startsWith('\uFEFF')) text = text.slice(1); // a UTF-8 byte-order mark is no content
  return requireSomething(readAny(text, source, options), source);
}

function readAny(text: string, source: string, options: ReadOptions): TranscriptRun[] {
  if (/\.(jsonl|ndjson)$/i.test(source)) return readLines(text, source, options);
  if (text.trim() === '') throw new TranscriptError(source, 'line 1', 'the file is empty');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const lines = text.split('\n').filter((line) => line.trim() !== '');
    if (lines.length > 1 && lines.every((line) => line.trim().startsWith('{'))) return readLines(text, source, options);
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
  return readJson(value, text, source, options);
}

/**
 * Reads a transcript file as a stream of events: a run starts, or a step. A
 * file of this project's JSONL format is read line by line, so memory stays
 * bounded whatever its length; every other format is read whole
 * (`readTranscript`) and its runs given out one by one.
 *
 * @throws TranscriptError naming the file and the position of the first
 *   problem (while iterating); the file system's error when it cannot be read.
 */
export async function* readTranscriptEvents(path: string, options: ReadOptions = {}): AsyncGenerator<JsonlEvent> {
  if (await isOwnJsonl(path)) {
    const reader = new JsonlReader(path);
    const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
    let lineNumber = 0;
    let any = false;
    for await (const raw of lines) {
      lineNumber += 1;
      const event = reader.line(lineNumber === 1 && raw.startsWith('\uFEFF') ? raw.slice(1) : raw, lineNumber);
      if (event === null) continue;
      if (!any && event.type === 'step') yield { type: 'run', id: path, reward: null };
      any = true;
      yield event;
    }
    if (!any) throw new TranscriptError(path, 'line 1', 'no events');
    return;
  }
  for (const run of readTranscript(readFileSync(path, 'utf8'), path, options)) {
    yield { type: 'run', id: run.id, reward: run.reward };
    for (const step of run.steps) yield { type: 'step', step };
  }
}

/** The file is this project's JSONL format: its first non-blank line is one of its events (read from the first 64 KiB). */
async function isOwnJsonl(path: string): Promise<boolean> {
  const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8', end: 65_535 }), crlfDelay: Infinity });
  try {
    for await (const raw of lines) {
      const line = raw.replace(/^\uFEFF/, '').trim();
      if (line === '') continue;
      if (!line.startsWith('{')) return false;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        return false;
      }
      if (!isRecord(value)) return false;
      const type = own(value, 'type');
      return typeof type === 'string' && JSONL_TYPES.includes(type) && lineFormat(value, type) === 'own';
    }
    return false;
  } finally {
    lines.close();
  }
}
