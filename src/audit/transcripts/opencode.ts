/**
 * The readers of opencode's session logs:
 *
 * - `opencode export <sessionID>` output (opencode 1.18): one JSON object
 *   `{ info: Session, messages: [{ info: Message, parts: Part[] }] }`; an
 *   array of such sessions is read as one run each;
 * - `opencode run --format json` output: one JSON object a line,
 *   `{ type: 'step_start' | 'tool_use' | 'text' | 'step_finish' | ..., sessionID, part }`.
 *
 * A part of type `tool` is a call (`callID`, `tool`, `state.input`) and,
 * once its `state.status` is `completed` or `error`, its result (`output`,
 * or `error`: a failure). A `text` part of the assistant is an answer unless
 * a call follows it in its turn. Formats: the `Part`, `ToolPart`,
 * `ToolState*` and `Message` types of npm `@opencode-ai/sdk` 1.18.33
 * (dist/gen/types.gen.d.ts) and opencode 1.18.33's `export` and `run`
 * commands (its bundled source).
 *
 * Spec: ASSISTANT_SAFETY.md "Tool kinds"; DESIGN.md §5.7 (a failure read
 * from the result, here from the tool part's status), §5.1 (the message's
 * `path.cwd` on its calls).
 */
import { TranscriptError } from '../../errors/transcript-error.js';
import { isRecord, own } from '../../util/own.js';
import { fail, ownString, StepBuilder, type Json, type ReaderContext } from './step-builder.js';
import type { ReadOptions, TranscriptRun } from './steps.js';

/** The catalog of opencode's tools: what a run read from its logs is classified with under `--catalog auto`. */
export const OPENCODE_CATALOG = 'opencode';

/** `opencode run --format json` event types (its `run` command). */
export const OPENCODE_RUN_EVENTS = new Set(['step_start', 'step_finish', 'tool_use', 'text', 'reasoning', 'error']);

/** True for an `opencode export` session: `{ info: { id }, messages: [{ info, parts }] }`. */
export function isOpencodeExport(value: unknown): value is Json {
  if (!isRecord(value)) return false;
  const info = own(value, 'info');
  const messages = own(value, 'messages');
  return (
    isRecord(info) &&
    typeof own(info, 'id') === 'string' &&
    Array.isArray(messages) &&
    messages.every((m) => isRecord(m) && isRecord(own(m, 'info')) && Array.isArray(own(m, 'parts')))
  );
}

/** True for a line of `opencode run --format json`: a known event type, a `sessionID` and a `part` object. */
export function isOpencodeRunLine(value: Json, type: string): boolean {
  return OPENCODE_RUN_EVENTS.has(type) && typeof own(value, 'sessionID') === 'string' && isRecord(own(value, 'part'));
}

/** One part of an assistant message (or a run line's part) into `at.out`. */
function readPart(part: unknown, at: ReaderContext): void {
  if (!isRecord(part)) fail(at, 'a part must be an object');
  const { out } = at;
  const type = own(part, 'type');
  if (type === 'text') {
    const text = own(part, 'text');
    if (typeof text === 'string' && text.trim() !== '' && own(part, 'synthetic') !== true) out.answer(text, at);
    return;
  }
  if (type !== 'tool') return; // reasoning, step markers, snapshots, patches, files: no tool traffic
  const tool = own(part, 'tool');
  const state = own(part, 'state');
  if (typeof tool !== 'string' || !isRecord(state)) fail(at, 'a tool part needs a string "tool" and a "state" object');
  const id = ownString(part, 'callID') ?? out.newId('callID');
  out.call(id, tool as string, own(state as Json, 'input') ?? {}, at);
  const status = own(state as Json, 'status');
  if (status === 'completed') out.result(id, tool as string, own(state as Json, 'output') ?? '', at);
  // An error part is a call that threw, or one a plugin refused: it did not run as asked.
  else if (status === 'error')
    out.result(id, tool as string, own(state as Json, 'error') ?? '', { position: at.position, outcome: 'error' });
}

/** One exported session: its messages in order, each assistant message's `path.cwd` on its calls. */
function readExport(session: Json, source: string, where: string, options: ReadOptions): TranscriptRun {
  const out = new StepBuilder(options);
  const info = own(session, 'info') as Json;
  const directory = ownString(info, 'directory');
  if (directory !== undefined) out.cwd = directory;
  (own(session, 'messages') as Json[]).forEach((message, m) => {
    const messageInfo = own(message, 'info') as Json;
    const role = own(messageInfo, 'role');
    const path = own(messageInfo, 'path');
    const cwd = isRecord(path) ? ownString(path, 'cwd') : undefined;
    if (cwd !== undefined) out.cwd = cwd;
    const parts = own(message, 'parts') as unknown[];
    if (role === 'user') {
      if (parts.some((p) => isRecord(p) && own(p, 'type') === 'text' && own(p, 'synthetic') !== true)) out.userTurn();
      return;
    }
    if (role !== 'assistant') return;
    parts.forEach((part, p) => readPart(part, { out, source, position: `${where}message ${m}, part ${p}` }));
  });
  return { id: ownString(info, 'id') as string, reward: null, steps: out.finish(), catalog: OPENCODE_CATALOG };
}

/** `opencode export` output: one session, or an array of them (one run each). */
export function readOpencodeExports(value: unknown, source: string, options: ReadOptions): TranscriptRun[] {
  if (Array.isArray(value)) return value.map((session, i) => readExport(session as Json, source, `session ${i}, `, options));
  return [readExport(value as Json, source, '', options)];
}

/**
 * `opencode run --format json` output: one run per `sessionID` (a sub-agent's
 * child session is a run of its own). Tool parts come once, finished;
 * text parts are answers unless a call follows them in their turn.
 */
export function readOpencodeRunLines(lines: readonly string[], source: string, options: ReadOptions): TranscriptRun[] {
  const runs = new Map<string, StepBuilder>();
  lines.forEach((raw, index) => {
    const line = raw.trim();
    if (line === '') return;
    const position = `line ${index + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new TranscriptError(source, position, `not valid JSON (${(error as Error).message})`);
    }
    if (!isRecord(value)) throw new TranscriptError(source, position, 'each line must be a JSON object');
    const session = ownString(value, 'sessionID');
    const part = own(value, 'part');
    if (session === undefined || !isRecord(part)) return; // an error line, or a line of another kind
    let out = runs.get(session);
    if (out === undefined) {
      out = new StepBuilder(options);
      runs.set(session, out);
    }
    readPart(part, { out, source, position });
  });
  if (runs.size === 0) throw new TranscriptError(source, 'line 1', 'no events');
  return [...runs].map(([id, out]) => ({ id, reward: null, steps: out.finish(), catalog: OPENCODE_CATALOG }));
}
