/**
 * Gemini CLI's hook format: its payloads read into the gate's events, and
 * the gate's answers written as Gemini CLI reads them.
 *
 * Checked against Gemini CLI 0.61.0 run for real (test/hooks/gemini-cli.real.test.ts)
 * and its bundled code (packages/core hooks/types, scheduler/hook-utils,
 * scheduler/scheduler, core/client):
 * - every payload carries `session_id`, `transcript_path`, `cwd`,
 *   `hook_event_name` and `timestamp` (an ISO string); `BeforeTool` adds
 *   `tool_name` and `tool_input` (paths as the model wrote them, often
 *   relative to `cwd`), plus `mcp_context` and `original_request_name` where
 *   they apply; `AfterTool` adds `tool_response` (`llmContent`,
 *   `returnDisplay`, `error` when the tool failed); `AfterAgent` adds
 *   `prompt`, `prompt_response` and `stop_hook_active`; `SessionStart` adds
 *   `source`, `SessionEnd` `reason`. There is no tool-call id: the gate
 *   correlates a call's before and after by its name and input.
 * - A shell command that exits non-zero is not an `error`: its
 *   `llmContent` ends with an `Exit Code: <n>` line and its `returnDisplay`
 *   is `Command exited with code: <n>`; both together mark it failed (the
 *   command's own output can print one of them, not both).
 * - A refused call (`{"decision":"deny","reason"}`) reaches the model as the
 *   function response `{"error": "Tool execution blocked: <reason>"}`.
 * - `{"decision":"ask"}` is honoured (hook-utils `isAskDecision` forces the
 *   user's confirmation); in a headless run (`-p`), where no one can answer,
 *   the call does not run and the run ends.
 * - An `AfterAgent` refused with `{"decision":"deny","reason"}` sends the
 *   reason back to the model as a new user prompt; the next `AfterAgent`
 *   has `stop_hook_active: true`.
 * - Exit 0 with JSON on stdout is read; exit 2 blocks; exit 1 and a timeout
 *   let the call through. Every answer here exits 0 with JSON, and never
 *   writes `continue: false` (that ends the whole agent loop).
 * - Parallel calls of one batch run their `BeforeTool` hooks concurrently,
 *   each in its own process.
 *
 * Design notes: AGENT_HOOKS.md §1.2; issue 25 (items 1 and 3).
 */
import { HookPayloadError, type HookAnswer, type HookEvent, type HookOutput, type HookPayload, type HostCodec } from '../types.js';
import { isRecord } from '../../util/own.js';
import { snakeCaseBase, stringField, type Fields } from './fields.js';

/** The catalog that classifies Gemini CLI's tools; MCP tools (`mcp_<server>_<tool>`) are judged by annotations, else writes. */
export const GEMINI_CLI_CATALOG = 'gemini-cli';

/** Gemini CLI's hook events that no other host has. */
const GEMINI_ONLY_EVENTS = new Set([
  'BeforeTool',
  'AfterTool',
  'BeforeAgent',
  'AfterAgent',
  'BeforeModel',
  'AfterModel',
  'BeforeToolSelection',
  'PreCompress',
  'Notification',
]);

/** The session events Gemini CLI shares by name with other hosts (told apart by Gemini's ISO `timestamp`). */
const SHARED_EVENTS = new Set(['SessionStart', 'SessionEnd']);

/** The event whose answer refuses a call. */
const BEFORE_TOOL = 'BeforeTool';

const isObject: (value: unknown) => value is Fields = isRecord;

/**
 * True when `payload` is one of Gemini CLI's hook payloads: a `session_id`
 * and `hook_event_name` (snake_case), and either an event only Gemini CLI
 * has (`BeforeTool`, `AfterAgent`, ...) or a session event with Gemini's ISO
 * `timestamp` string (Claude Code and Codex send none; Copilot's is a number).
 */
export function matchesGeminiCli(payload: unknown): boolean {
  const base = snakeCaseBase(payload);
  if (base === null) return false;
  const { fields, eventName } = base;
  if (GEMINI_ONLY_EVENTS.has(eventName)) return true;
  // Copilot CLI's PascalCase hooks also send snake_case fields with a string timestamp, but no transcript_path on session events.
  return (
    SHARED_EVENTS.has(eventName) &&
    typeof fields.timestamp === 'string' &&
    Object.hasOwn(fields, 'transcript_path') &&
    !Object.hasOwn(fields, 'turn_id')
  );
}

/**
 * A shell result that failed: Gemini CLI's own two marks of a non-zero exit,
 * an `Exit Code: <n>` line in `llmContent` and `returnDisplay` that is exactly
 * `Command exited with code: <n>`, both present with the same non-zero `n`.
 */
function shellExitFailed(response: Fields): boolean {
  const display = stringField(response, 'returnDisplay');
  const content = stringField(response, 'llmContent');
  if (display === undefined || content === undefined) return false;
  const shown = /^Command exited with code: (-?\d+)$/.exec(display.trim());
  if (shown === null || shown[1] === '0') return false;
  return new RegExp(`^Exit Code: ${shown[1]}$`, 'm').test(content);
}

/** The outcome of an `AfterTool` payload: an error when `tool_response.error` is set, or a shell command exited non-zero. */
function outcomeOf(toolName: string, response: unknown): 'success' | 'error' {
  if (!isObject(response)) return 'success';
  const error = Object.hasOwn(response, 'error') ? response.error : undefined;
  if (error !== undefined && error !== null && error !== false && error !== '') return 'error';
  if (toolName === 'run_shell_command' && shellExitFailed(response)) return 'error';
  return 'success';
}

/** The result the gate reads: the text the model got (`llmContent`) when it is text, else the whole response. */
function resultOf(response: unknown): unknown {
  if (isObject(response) && typeof response.llmContent === 'string') return response.llmContent;
  return response;
}

/** The tool call of a `BeforeTool`/`AfterTool` payload. @throws HookPayloadError without a tool name. */
function toolCallOf(payload: Fields, eventName: string, cwd: string | undefined) {
  const name = stringField(payload, 'tool_name');
  if (name === undefined || name.trim() === '') throw new HookPayloadError(`${eventName} without a tool_name`, eventName);
  const input = Object.hasOwn(payload, 'tool_input') ? payload.tool_input : undefined;
  return { name, input: input ?? {}, catalog: GEMINI_CLI_CATALOG, ...(cwd === undefined ? {} : { cwd }) };
}

/**
 * Reads a Gemini CLI payload into the gate's event.
 * @throws HookPayloadError without a session id or an event name, or a tool event without a tool name.
 */
function read(payload: unknown): HookPayload {
  if (!isObject(payload)) throw new HookPayloadError('the payload is not a JSON object');
  const eventName = stringField(payload, 'hook_event_name');
  if (eventName === undefined || eventName === '') throw new HookPayloadError('no hook_event_name');
  const sessionId = stringField(payload, 'session_id');
  if (sessionId === undefined || sessionId === '') throw new HookPayloadError('no session_id', eventName);
  const cwd = stringField(payload, 'cwd');
  const transcriptPath = stringField(payload, 'transcript_path');
  let event: HookEvent;
  switch (eventName) {
    case 'SessionStart': {
      const source = stringField(payload, 'source');
      event = { type: 'session.started', ...(source === undefined ? {} : { source }) };
      break;
    }
    case 'SessionEnd': {
      const reason = stringField(payload, 'reason');
      event = { type: 'session.ended', ...(reason === undefined ? {} : { reason }) };
      break;
    }
    case 'BeforeTool':
      event = { type: 'tool.before', call: toolCallOf(payload, eventName, cwd) };
      break;
    case 'AfterTool': {
      const call = toolCallOf(payload, eventName, cwd);
      const response = Object.hasOwn(payload, 'tool_response') ? payload.tool_response : undefined;
      event = { type: 'tool.after', call, outcome: outcomeOf(call.name, response), result: resultOf(response) };
      break;
    }
    case 'AfterAgent': {
      const lastMessage = stringField(payload, 'prompt_response');
      event = { type: 'agent.stopping', active: payload.stop_hook_active === true, ...(lastMessage === undefined ? {} : { lastMessage }) };
      break;
    }
    default:
      event = { type: 'ignored', name: eventName };
  }
  return {
    host: 'gemini-cli',
    sessionId,
    eventName,
    event,
    ...(cwd === undefined ? {} : { cwd }),
    ...(transcriptPath === undefined ? {} : { transcriptPath }),
  };
}

/** JSON on stdout, exit 0: the only answer Gemini CLI reads without falling back to "allow". */
function json(value: object): HookOutput {
  return { stdout: `${JSON.stringify(value)}\n`, stderr: '', exitCode: 0 };
}

/**
 * Writes the gate's answer for Gemini CLI, always exit 0 with JSON:
 * - `allow`, `continue`: `{}` (Gemini CLI's own policy decides as usual);
 * - `deny`: `{"decision":"deny","reason"}`: the call does not run and the
 *   model gets `Tool execution blocked: <reason>`;
 * - `ask`: `{"decision":"ask","reason","systemMessage"}`: the user confirms
 *   (interactive), or the call does not run (headless);
 * - `block-stop`: `{"decision":"deny","reason"}` on `AfterAgent`: the reason
 *   goes back to the model as a new prompt. On any other event it cannot
 *   refuse anything, so the reason is shown as a `systemMessage`.
 * `eventName` null (an unreadable payload) answers as for `BeforeTool`.
 */
function write(answer: HookAnswer, eventName: string | null): HookOutput {
  const event = eventName ?? BEFORE_TOOL;
  switch (answer.type) {
    case 'allow':
    case 'continue':
      return json({});
    case 'deny':
      return json({ decision: 'deny', reason: answer.reason });
    case 'ask':
      return json({ decision: 'ask', reason: answer.reason, systemMessage: answer.reason });
    case 'block-stop':
      return event === 'AfterAgent' || event === BEFORE_TOOL
        ? json({ decision: 'deny', reason: answer.reason })
        : json({ systemMessage: answer.reason });
  }
}

/** Gemini CLI's codec (`pulse-safety hook gemini-cli`). Pure: no I/O, no clock. */
export const geminiCliCodec: HostCodec = { host: 'gemini-cli', read, write };
