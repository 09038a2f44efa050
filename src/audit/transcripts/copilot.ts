/**
 * The reader of GitHub Copilot CLI's session logs: `events.jsonl` in
 * `$COPILOT_HOME/session-state/<sessionId>/` (`~/.copilot` without
 * `COPILOT_HOME`), one event a line, `{ type, data, id, timestamp, parentId }`.
 * The events read:
 *
 * - `session.start`: `data.sessionId` names the run, `data.context.cwd` is
 *   the directory of the calls that follow;
 * - `user.message`: the user spoke (`data.content`);
 * - `assistant.message`: `data.content` is the assistant's text (an answer
 *   unless a call follows it in its turn), `data.toolRequests[]` its calls
 *   (`{ toolCallId, name, arguments }`);
 * - `tool.execution_complete`: the result of call `data.toolCallId`;
 *   `data.success: false` fails it (its `data.error`), and so does a shell
 *   command whose `data.shellExecution.exitCode` is not 0, which Copilot
 *   records as `success: true`; `data.result.content` is the text the model
 *   was given.
 *
 * An event of a sub-agent (one with an `agentId`, at the top or in `data`,
 * or a `data.parentToolCallId`, as Copilot's own reader of its log tells
 * them apart) belongs to a run of its own, `<sessionId> agent <id>`: its
 * calls are not the main agent's.
 *
 * Every other event (`system.message`, `assistant.turn_start`,
 * `tool.execution_start`, usage records, `session.shutdown`, ...) carries
 * no call, result or answer. Format: what Copilot CLI 1.0.102 (npm
 * `@github/copilot`) wrote for a session in prompt mode (`copilot -p`), run
 * against a scripted model (test/audit/transcripts/copilot.real.test.ts).
 *
 * Spec: ASSISTANT_SAFETY.md "Tool kinds"; DESIGN.md §5.7 (a failure read
 * from the recorded outcome), §5.1 (the session's working directory on its
 * calls).
 */
import { TranscriptError } from '../../errors/transcript-error.js';
import { isRecord, own } from '../../util/own.js';
import { fail, ownString, parseArguments, StepBuilder, type Json, type ReaderContext } from './step-builder.js';
import type { ReadOptions, TranscriptRun } from './steps.js';

/** The catalog of Copilot CLI's tools. */
export const COPILOT_CATALOG = 'copilot';

/** The event-type namespaces of a Copilot CLI session log (`session.start`, `tool.execution_complete`, ...). */
const COPILOT_EVENT = /^(session|user|assistant|system|tool|subagent|hook|skill|abort|pending_messages)\.[a-z_.]+$/;

/** True for a line of a Copilot CLI session log: a dotted event type and a `data` object. */
export function isCopilotLine(value: Json, type: string): boolean {
  return COPILOT_EVENT.test(type) && isRecord(own(value, 'data'));
}

/** The text of a tool result: `result.content` (a string), else `error.message`, else `''`. */
function resultText(data: Json): string {
  const result = own(data, 'result');
  const content = isRecord(result) ? own(result, 'content') : undefined;
  if (typeof content === 'string') return content;
  const error = own(data, 'error');
  if (typeof error === 'string') return error;
  const message = isRecord(error) ? own(error, 'message') : undefined;
  return typeof message === 'string' ? message : '';
}

/** True when a completed tool execution failed: `success` not true, or a shell command that exited non-zero. */
function failed(data: Json): boolean {
  if (own(data, 'success') !== true) return true;
  const shell = own(data, 'shellExecution');
  const exitCode = isRecord(shell) ? own(shell, 'exitCode') : undefined;
  return typeof exitCode === 'number' && exitCode !== 0;
}

/** One event into `at.out`; `run` receives the session id of a `session.start`. */
function readEvent(type: string, data: Json, at: ReaderContext, run: { id: string | null }): void {
  const { out } = at;
  switch (type) {
    case 'session.start':
    case 'session.resume': {
      const context = own(data, 'context');
      const cwd = isRecord(context) ? ownString(context, 'cwd') : undefined;
      if (cwd !== undefined) out.cwd = cwd;
      run.id ??= ownString(data, 'sessionId') ?? null;
      return;
    }
    case 'user.message':
      out.userTurn();
      return;
    case 'assistant.message': {
      const text = own(data, 'content');
      if (typeof text === 'string' && text.trim() !== '') out.answer(text, at);
      const requests = own(data, 'toolRequests');
      if (requests === undefined) return;
      if (!Array.isArray(requests)) fail(at, 'an assistant.message\'s "toolRequests" must be an array');
      (requests as unknown[]).forEach((request, i) => {
        const name = isRecord(request) ? own(request, 'name') : undefined;
        if (typeof name !== 'string') fail(at, `toolRequests[${i}] needs a string "name"`);
        const id = ownString(request as Json, 'toolCallId') ?? out.newId('toolCallId');
        out.call(id, name as string, parseArguments(own(request as Json, 'arguments')), at);
      });
      return;
    }
    case 'tool.execution_complete': {
      const id = ownString(data, 'toolCallId');
      if (id === undefined) fail(at, 'a tool.execution_complete needs a string "toolCallId"');
      out.result(id as string, undefined, resultText(data), { position: at.position, outcome: failed(data) ? 'error' : 'success' });
      return;
    }
    default:
      return; // turn markers, usage, system prompt, tool starts, shutdown: no call, result or answer
  }
}

/** The sub-agent an event belongs to (`agentId`, `data.agentId`, `data.parentToolCallId`), or undefined for the main agent's. */
function agentOf(value: Json, data: Json): string | undefined {
  for (const id of [ownString(value, 'agentId'), ownString(data, 'agentId'), ownString(data, 'parentToolCallId')]) {
    if (id !== undefined && id !== '') return id;
  }
  return undefined;
}

/**
 * A Copilot CLI session log: the main agent's run, named by its
 * `session.start`'s `sessionId` (else `source`), then one run per sub-agent
 * (`<sessionId> agent <id>`). `lines` are the file's lines, or one value
 * already parsed (a single-line log). Positions are `line N`.
 *
 * @throws TranscriptError naming `source` and the line of a line that is not
 *   a JSON object, a tool request without a name, or a completion without a
 *   call id.
 */
export function readCopilotLines(lines: readonly (string | Json)[], source: string, options: ReadOptions): TranscriptRun[] {
  const main = new StepBuilder(options);
  const run: { id: string | null } = { id: null };
  const agents = new Map<string, StepBuilder>();
  let seen = false;
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
    const type = own(value, 'type');
    const data = own(value, 'data');
    if (typeof type !== 'string' || !isRecord(data)) return;
    seen = true;
    const agent = agentOf(value, data);
    let out = main;
    if (agent !== undefined) {
      out = agents.get(agent) ?? new StepBuilder(options);
      if (!agents.has(agent)) {
        out.cwd = main.cwd;
        agents.set(agent, out);
      }
    }
    readEvent(type, data, { out, source, position }, run);
  });
  if (!seen) throw new TranscriptError(source, 'line 1', 'no events');
  const id = run.id ?? source;
  return [
    { id, reward: null, steps: main.finish(), catalog: COPILOT_CATALOG },
    ...[...agents].map(([agent, out]) => ({ id: `${id} agent ${agent}`, reward: null, steps: out.finish(), catalog: COPILOT_CATALOG })),
  ];
}
