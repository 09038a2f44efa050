/**
 * The readers of agent clients' session logs, one JSON object a line:
 * Claude Code session JSONL (and `claude -p --output-format stream-json`
 * output), Qwen Code chat recordings (`qwen.ts`) and Codex rollout JSONL. Each line wraps an entry that
 * `readEntry` reads; here the lines are split into runs, and the working
 * directory the log records is carried to the calls.
 *
 * Spec: DESIGN.md §5.1 (a call's working directory, when the log records one).
 */
import { TranscriptError } from '../../errors/transcript-error.js';
import { isRecord, own } from '../../util/own.js';
import { readEntry } from './read-entry.js';
import { QWEN_CATALOG, readQwenToolResult } from './qwen.js';
import { ownString, StepBuilder, type Json } from './step-builder.js';
import type { ReadOptions, TranscriptRun } from './steps.js';

/** The catalog of each format's agent (`TranscriptRun.catalog`). */
const CATALOG_OF = { claude: 'claude-code', qwen: QWEN_CATALOG, codex: 'codex' } as const;

/**
 * Claude Code session JSONL and Qwen Code chat recordings (one run per
 * `sessionId`, a subagent's sidechain lines a run of their own) and Codex
 * rollout JSONL (one run, named by its `session_meta` id). `lines` are the
 * file's lines, or one value already parsed (a single-line log). Positions
 * are `line N`. Each run names its format's catalog.
 */
export function readLogLines(
  lines: readonly (string | Json)[],
  source: string,
  format: 'codex' | 'claude' | 'qwen',
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
    if (format === 'claude' || format === 'qwen') {
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
      if (type === 'user' || type === 'assistant') readEntry(value, { out: runOf(key).out, source, position });
      else if (format === 'qwen' && type === 'tool_result') readQwenToolResult(value, { out: runOf(key).out, source, position });
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
    if (typeof own(value, 'type') === 'string') readEntry(value, { out: entry.out, source, position });
  });
  if (runs.size === 0) throw new TranscriptError(source, 'line 1', 'no events');
  return [...runs.values()].map(({ run, out }) => ({ ...run, steps: out.finish(), catalog: CATALOG_OF[format] }));
}
