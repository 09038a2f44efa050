/**
 * Reads a transcript in any supported format, detected from its content:
 * run objects and arrays of messages or items (JSON), agent clients' line
 * logs and this project's own events (JSONL). Each becomes a list of runs of
 * format-neutral steps that the audit replays; `readTranscriptEvents` gives
 * them out one at a time, streaming this project's JSONL.
 *
 * Spec: ASSISTANT_SAFETY.md "Tool kinds" (what a call is); DESIGN.md §5.7
 * (whether a call failed is read from its result: `src/guard/outcome.ts`); §5.1 (a
 * call's working directory, when the log records one).
 */
import { TranscriptError } from '../../errors/transcript-error.js';
import { createReadStream, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parse as parseTolerant, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { isRecord, own } from '../../util/own.js';
import { readLogLines } from './agent-logs.js';
import { isCopilotLine, readCopilotLines } from './copilot.js';
import { isKiroConversation, readKiroConversation } from './kiro.js';
import { isOpencodeExport, isOpencodeRunLine, readOpencodeExports, readOpencodeRunLines } from './opencode.js';
import { isQwenLine } from './qwen.js';
import { JSONL_TYPES, JsonlReader, readJsonl, type JsonlEvent } from './jsonl.js';
import { CODEX_LINE_TYPES, readEntry, RESPONSES_TYPES } from './read-entry.js';
import { ownString, StepBuilder, type Json } from './step-builder.js';
import type { ReadOptions, TranscriptRun, TranscriptStep } from './steps.js';

/** The formats `readTranscript` and `readTranscriptEvents` read, as a user names them (the visualizer and the CLI's help list them). */
export const TRANSCRIPT_FORMATS: readonly string[] = [
  'OpenAI chat and tau-bench runs',
  'OpenAI legacy function_call',
  'OpenAI Responses items',
  'Anthropic messages',
  'Claude Code session JSONL',
  'Gemini CLI chat history and session files',
  'Codex rollout JSONL',
  'opencode exports and run JSON lines',
  'Qwen Code chat recordings',
  'Kiro CLI saved conversations',
  'Copilot CLI session events',
  'pulse-safety JSONL events',
];

/** The formats `readTranscript` knows, for the error that says none was recognised. */
const SUPPORTED_FORMATS = TRANSCRIPT_FORMATS.join(', ');

/** Claude Code session line types that carry no conversation. */
const CLAUDE_OTHER_TYPES = new Set(['summary', 'system', 'file-history-snapshot', 'queue-operation', 'result', 'progress', 'attachment']);

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

/** One run: an array of messages, or a run object (`entriesOf`), its id from the run's own or its place. */
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
  // A Gemini CLI session file: its messages are typed `user` / `gemini` / ..., not chat roles.
  const geminiSession = typeof own(value, 'sessionId') === 'string' && entries.some((e) => isRecord(e) && own(e, 'type') === 'gemini');
  return {
    id,
    reward: typeof reward === 'number' && Number.isFinite(reward) ? reward : null,
    steps: readEntries(entries, source, where, options),
    ...(geminiSession ? { catalog: 'gemini-cli' } : {}),
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

/** The steps of one run's entries, each at `message N` (after `where`, the run's place). */
function readEntries(entries: unknown[], source: string, where: string, options: ReadOptions): TranscriptStep[] {
  const out = new StepBuilder(options);
  entries.forEach((entry, index) => readEntry(entry, { out, source, position: `${where}message ${index}` }));
  return out.finish();
}

/** A file of one JSON value: a log line or event on its own, an array of runs, or one run. */
function readJson(value: unknown, text: string, source: string, options: ReadOptions): TranscriptRun[] {
  if (isOpencodeExport(value) || (Array.isArray(value) && value.length > 0 && value.every(isOpencodeExport))) {
    return readOpencodeExports(value, source, options);
  }
  if (isKiroConversation(value)) return [readKiroConversation(value, source, options)];
  if (isRecord(value) && typeof own(value, 'type') === 'string' && entriesOf(value) === null) {
    // One log line or event on its own (perhaps spread over several lines).
    const format = lineFormat(value, own(value, 'type') as string);
    if (format === 'own') return readJsonl(text, source);
    if (format === 'opencode') return readOpencodeRunLines([JSON.stringify(value)], source, options);
    if (format === 'copilot') return readCopilotLines([value], source, options);
    return readLogLines([value], source, format, options);
  }
  if (Array.isArray(value)) {
    const looksLikeRuns = value.some(
      (item) => isRecord(item) && (Array.isArray(own(item, 'traj')) || Array.isArray(own(item, 'messages'))),
    );
    return looksLikeRuns ? value.map((run, i) => readRun(run, source, i, options)) : [readRun(value, source, null, options)];
  }
  return [readRun(value, source, null, options)];
}

/** The formats of a file of JSON lines. */
type LineFormat = 'own' | 'codex' | 'claude' | 'qwen' | 'opencode' | 'copilot';

/** How many typed lines are looked at for a Qwen Code line once the first looked like Claude Code's (the two share their line envelope). */
const QWEN_SCAN_LINES = 1000;

/**
 * Reads a file of one JSON value a line, and picks its format from the first
 * line with a string `type`: Codex rollout lines (`session_meta`,
 * `response_item`, ...) or bare Responses items (older Codex rollouts);
 * `opencode run --format json` lines (a `sessionID` and a `part`); Copilot
 * CLI session events (a dotted `type` such as `session.start` and a `data`
 * object); Claude
 * Code session lines (`user`, `assistant`, `summary`, ..., or any line with a
 * `message` or `sessionId`), which are Qwen Code's when one of the first
 * lines wraps a Gemini `Content` (`message.parts`) or is a `tool_result`;
 * otherwise this project's own events.
 */
function readLines(text: string, source: string, options: ReadOptions): TranscriptRun[] {
  const lines = text.split('\n');
  let format: LineFormat | null = null;
  let looked = 0;
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
    looked += 1;
    if (format === null) format = lineFormat(value, type);
    else if (isQwenLine(value, type)) format = 'qwen';
    if (format !== 'claude' || looked >= QWEN_SCAN_LINES) break;
  }
  if (format === null || format === 'own') return readJsonl(text, source);
  if (format === 'opencode') return readOpencodeRunLines(lines, source, options);
  if (format === 'copilot') return readCopilotLines(lines, source, options);
  return readLogLines(lines, source, format, options);
}

/** The format of a log whose first typed line is `value`. */
function lineFormat(value: Json, type: string): LineFormat {
  const wraps = isRecord(own(value, 'message'));
  const session = typeof own(value, 'sessionId') === 'string' || typeof own(value, 'session_id') === 'string';
  if (isOpencodeRunLine(value, type)) return 'opencode';
  if (isCopilotLine(value, type)) return 'copilot';
  if (session && isQwenLine(value, type)) return 'qwen';
  if (CODEX_LINE_TYPES.has(type) || (RESPONSES_TYPES.has(type) && !wraps)) return 'codex';
  if (JSONL_TYPES.includes(type) && !wraps && !session) return 'own';
  if (type === 'user' || type === 'assistant' || CLAUDE_OTHER_TYPES.has(type) || wraps || session) return 'claude';
  return 'own';
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
 * - Qwen Code chat recordings (`~/.qwen/projects/<project>/chats/*.jsonl`):
 *   Claude Code's line envelope around Gemini `Content`, and `tool_result`
 *   lines with the call's status (`qwen.ts`);
 * - opencode: `opencode export` JSON (`{ info, messages: [{ info, parts }] }`,
 *   or an array of them) and `opencode run --format json` lines (`opencode.ts`);
 * - a Kiro CLI (or Amazon Q Developer CLI) conversation saved with `/save`:
 *   `{ conversation_id, history: [{ user, assistant }] }` (`kiro.ts`);
 * - a Copilot CLI session log (`~/.copilot/session-state/<id>/events.jsonl`):
 *   `session.start`, `assistant.message` (`toolRequests`) and
 *   `tool.execution_complete` events (`copilot.ts`);
 * - JSONL events of this project's own format (see `JsonlReader`).
 *
 * Each run of an agent's own log format names that agent's catalog
 * (`TranscriptRun.catalog`), which `--catalog auto` takes first.
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
    yield { type: 'run', id: run.id, reward: run.reward, ...(run.catalog === undefined ? {} : { catalog: run.catalog }) };
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
