/**
 * Cursor's hook format: its payloads read into the gate's events, and the
 * gate's answers written as Cursor expects them.
 *
 * Payloads (cursor.com/docs/hooks): every agent hook gets `conversation_id`
 * (stable across the conversation's turns: the session), `generation_id`,
 * `hook_event_name` (camelCase: `preToolUse`, `beforeShellExecution`, ...),
 * `workspace_roots` and `transcript_path`. The tool events:
 * - `preToolUse` / `postToolUse` / `postToolUseFailure`: `tool_name`
 *   (`Shell`, `Read`, `Write`, `Grep`, `Delete`, `Task`, `MCP:<tool>`),
 *   `tool_input`, `tool_use_id`, `cwd`; after: `tool_output` (a JSON string)
 *   or `error_message`, `failure_type`, `is_interrupt`;
 * - `beforeShellExecution` / `afterShellExecution`: `command`, `cwd`
 *   (before), `output` (after); no call id;
 * - `beforeMCPExecution` / `afterMCPExecution`: `tool_name`, `tool_input`
 *   (a JSON string), `result_json` (after);
 * - `beforeReadFile` (`file_path`), `afterFileEdit` (`file_path`, `edits`);
 * - `stop` / `subagentStop`: `status` (`completed`, `aborted`, `error`),
 *   `loop_count`; `sessionStart` (`session_id`, the conversation's id) and
 *   `sessionEnd`.
 *
 * Answers: `{"permission":"deny"|"ask","user_message","agent_message"}` on
 * exit 0, and `{}` where the gate allows (Cursor's own approval goes on). `ask` is honoured only by `beforeShellExecution` and
 * `beforeMCPExecution` ("accepted by the schema but not enforced for
 * `preToolUse`"), so elsewhere an `ask` is written as a deny. Cursor cannot
 * refuse a stop: `stop` only takes a `followup_message`, submitted as the
 * next user message, so a refused stop sends the refusal's reason back as
 * that message (Cursor caps these at `loop_limit`, 5 by default per hook).
 *
 * Cursor has no npm binary, so this codec is tested on the documented
 * payloads only. Design notes: AGENT_HOOKS.md §1.4; issue 25 items 1 and 4.
 */
import { isRecord, own } from '../../util/own.js';
import {
  HookPayloadError,
  type HookAnswer,
  type HookEvent,
  type HookOutput,
  type HookPayload,
  type HookToolCall,
  type HostCodec,
} from '../types.js';

/** The shipped catalog that classifies Cursor's tools (`src/catalogs/cursor.json`). */
export const CURSOR_CATALOG = 'cursor';

/** The name a call gets when Cursor's shell hooks (`beforeShellExecution`, `afterShellExecution`) carry it: its `preToolUse` name. */
export const CURSOR_SHELL_TOOL = 'Shell';

/** The name a read gets from `beforeReadFile`, and the name an edit gets from `afterFileEdit`. */
const READ_TOOL = 'Read';
const WRITE_TOOL = 'Write';

/** Cursor's agent hook events (cursor.com/docs/hooks, "Hook events"), each camelCase. */
export const CURSOR_EVENTS = [
  'sessionStart',
  'sessionEnd',
  'preToolUse',
  'postToolUse',
  'postToolUseFailure',
  'subagentStart',
  'subagentStop',
  'beforeShellExecution',
  'afterShellExecution',
  'beforeMCPExecution',
  'afterMCPExecution',
  'beforeReadFile',
  'afterFileEdit',
  'beforeSubmitPrompt',
  'preCompact',
  'stop',
  'afterAgentResponse',
  'afterAgentThought',
  'beforeTabFileRead',
  'afterTabFileEdit',
] as const;

const EVENT_NAMES: ReadonlySet<string> = new Set(CURSOR_EVENTS);

/** The events the host waits on for a permission, answered `{"permission": ...}`. */
const BEFORE_EVENTS: ReadonlySet<string> = new Set(['preToolUse', 'beforeShellExecution', 'beforeMCPExecution', 'beforeReadFile']);

/** The before-events that honour `"permission": "ask"` (the docs: `preToolUse` accepts it but does not enforce it). */
const ASK_EVENTS: ReadonlySet<string> = new Set(['beforeShellExecution', 'beforeMCPExecution']);

/** The events whose answer is a `followup_message`. */
const STOP_EVENTS: ReadonlySet<string> = new Set(['stop', 'subagentStop']);

function nonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

function stringOrUndefined(value: unknown): string | undefined {
  return nonEmptyString(value) ? value : undefined;
}

/**
 * True when `payload` is one of Cursor's hook payloads: a camelCase Cursor
 * event name in `hook_event_name` and the conversation's id in
 * `conversation_id` (or, on `sessionStart`, `session_id` beside Cursor's
 * `cursor_version` or `workspace_roots`). Claude Code, Codex, VS Code and
 * Copilot CLI's PascalCase hooks name their events in PascalCase, Gemini CLI
 * in its own words (`BeforeTool`), and Copilot CLI's camelCase hooks send no
 * event name, so no other host's payload matches.
 */
export function matchesCursor(payload: unknown): boolean {
  if (!isRecord(payload)) return false;
  const event = own(payload, 'hook_event_name');
  if (typeof event !== 'string' || !EVENT_NAMES.has(event)) return false;
  if (nonEmptyString(own(payload, 'conversation_id'))) return true;
  return (
    event === 'sessionStart' &&
    nonEmptyString(own(payload, 'session_id')) &&
    (own(payload, 'cursor_version') !== undefined || own(payload, 'workspace_roots') !== undefined)
  );
}

/** The call's directory: the payload's `cwd`, else the first workspace root. */
function cwdOf(payload: Record<string, unknown>): string | undefined {
  const cwd = stringOrUndefined(own(payload, 'cwd'));
  if (cwd !== undefined) return cwd;
  const roots = own(payload, 'workspace_roots');
  return Array.isArray(roots) ? stringOrUndefined(roots[0]) : undefined;
}

function required(payload: Record<string, unknown>, key: string, eventName: string): string {
  const value = own(payload, key);
  if (!nonEmptyString(value)) throw new HookPayloadError(`cursor ${eventName} payload: '${key}' is missing or not a string`, eventName);
  return value;
}

/** The call a tool event names, with the directory it runs in. */
function callOf(payload: Record<string, unknown>, name: string, input: unknown, id?: string): HookToolCall {
  const call: HookToolCall = { name, input, catalog: CURSOR_CATALOG };
  if (id !== undefined) call.id = id;
  const cwd = cwdOf(payload);
  if (cwd !== undefined) call.cwd = cwd;
  return call;
}

/**
 * The MCP tool's name as `preToolUse` gives it, `MCP:<tool>`, so a call seen
 * by `beforeMCPExecution` and its `afterMCPExecution` carry one name.
 */
function mcpName(payload: Record<string, unknown>, eventName: string): string {
  const tool = required(payload, 'tool_name', eventName);
  return tool.startsWith('MCP:') ? tool : `MCP:${tool}`;
}

/** The generic tool events' call: `tool_name`, `tool_input`, `tool_use_id`. */
function toolCall(payload: Record<string, unknown>, eventName: string): HookToolCall {
  return callOf(
    payload,
    required(payload, 'tool_name', eventName),
    own(payload, 'tool_input'),
    stringOrUndefined(own(payload, 'tool_use_id')),
  );
}

function eventOf(payload: Record<string, unknown>, eventName: string): HookEvent {
  switch (eventName) {
    case 'sessionStart': {
      const mode = stringOrUndefined(own(payload, 'composer_mode'));
      return mode === undefined ? { type: 'session.started' } : { type: 'session.started', source: mode };
    }
    case 'sessionEnd': {
      const reason = stringOrUndefined(own(payload, 'reason'));
      return reason === undefined ? { type: 'session.ended' } : { type: 'session.ended', reason };
    }
    case 'preToolUse':
      return { type: 'tool.before', call: toolCall(payload, eventName) };
    case 'postToolUse':
      return { type: 'tool.after', call: toolCall(payload, eventName), outcome: 'success', result: own(payload, 'tool_output') };
    case 'postToolUseFailure':
      return {
        type: 'tool.after',
        call: toolCall(payload, eventName),
        outcome: 'error',
        result: {
          error: own(payload, 'error_message') ?? 'failed',
          failure_type: own(payload, 'failure_type'),
          is_interrupt: own(payload, 'is_interrupt'),
        },
      };
    case 'beforeShellExecution':
      return { type: 'tool.before', call: callOf(payload, CURSOR_SHELL_TOOL, { command: required(payload, 'command', eventName) }) };
    case 'afterShellExecution':
      return {
        type: 'tool.after',
        call: callOf(payload, CURSOR_SHELL_TOOL, { command: required(payload, 'command', eventName) }),
        outcome: 'success',
        result: own(payload, 'output'),
      };
    case 'beforeMCPExecution':
      return { type: 'tool.before', call: callOf(payload, mcpName(payload, eventName), own(payload, 'tool_input')) };
    case 'afterMCPExecution':
      return {
        type: 'tool.after',
        call: callOf(payload, mcpName(payload, eventName), own(payload, 'tool_input')),
        outcome: 'success',
        result: own(payload, 'result_json'),
      };
    case 'beforeReadFile':
      return { type: 'tool.before', call: callOf(payload, READ_TOOL, { path: required(payload, 'file_path', eventName) }) };
    case 'afterFileEdit':
      return {
        type: 'tool.after',
        call: callOf(payload, WRITE_TOOL, { path: required(payload, 'file_path', eventName) }),
        outcome: 'success',
        result: own(payload, 'edits'),
      };
    case 'stop':
    case 'subagentStop': {
      // Only a completed loop is an answer the agent gives; an aborted or
      // failed one is the user's or the host's doing, and a follow-up
      // message would restart what the user stopped.
      if (own(payload, 'status') !== 'completed') return { type: 'ignored', name: eventName };
      const loops = own(payload, 'loop_count');
      const summary = stringOrUndefined(own(payload, 'summary'));
      const event: HookEvent = { type: 'agent.stopping', active: typeof loops === 'number' && loops > 0 };
      return summary === undefined ? event : { ...event, lastMessage: summary };
    }
    default:
      return { type: 'ignored', name: eventName };
  }
}

/**
 * Reads a Cursor payload.
 * @throws HookPayloadError when it is not an object, names no event, has no
 *   conversation id, or a tool event lacks its tool (name, command, path).
 */
function read(payload: unknown): HookPayload {
  if (!isRecord(payload)) throw new HookPayloadError('cursor payload: not a JSON object');
  const eventName = own(payload, 'hook_event_name');
  if (!nonEmptyString(eventName)) throw new HookPayloadError("cursor payload: 'hook_event_name' is missing or not a string");
  const sessionId =
    stringOrUndefined(own(payload, 'conversation_id')) ??
    (eventName === 'sessionStart' ? stringOrUndefined(own(payload, 'session_id')) : undefined);
  if (sessionId === undefined)
    throw new HookPayloadError(`cursor ${eventName} payload: 'conversation_id' is missing or not a string`, eventName);
  const result: HookPayload = { host: 'cursor', sessionId, eventName, event: eventOf(payload, eventName) };
  const cwd = cwdOf(payload);
  if (cwd !== undefined) result.cwd = cwd;
  const transcriptPath = stringOrUndefined(own(payload, 'transcript_path'));
  if (transcriptPath !== undefined) result.transcriptPath = transcriptPath;
  return result;
}

function json(value: object): HookOutput {
  return { stdout: `${JSON.stringify(value)}\n`, stderr: '', exitCode: 0 };
}

/**
 * Writes an answer for `eventName` (null: the payload could not be read, so
 * it is written as `preToolUse`'s). Always exit 0 with JSON: exit 2 is
 * Cursor's plain deny, and any other exit a failed hook (let through unless
 * `failClosed`).
 * - before-events: allow `{}` (no decision: Cursor's own approval flow
 *   goes on); deny
 *   `{"permission":"deny","user_message","agent_message"}`; ask the same with
 *   `"ask"` on `beforeShellExecution` and `beforeMCPExecution`, a deny
 *   elsewhere (Cursor does not enforce `ask` there).
 * - `stop` / `subagentStop`: a refused stop is `{"followup_message": reason}`;
 *   anything else `{}`.
 * - every other event: `{}`.
 */
function write(answer: HookAnswer, eventName: string | null): HookOutput {
  const event = eventName ?? 'preToolUse';
  if (BEFORE_EVENTS.has(event) || !EVENT_NAMES.has(event)) {
    switch (answer.type) {
      case 'allow':
        // No decision, not `"permission":"allow"`: an allow answer approves
        // the call past the user's own approval settings (hooks that answer
        // allow are used to skip Cursor's prompts, djtelicloud/grok-mcp-server#491),
        // and the gate's allow only means "not refused".
        return json({});
      case 'deny':
        return json({ permission: 'deny', user_message: answer.reason, agent_message: answer.reason });
      case 'ask':
        return json({ permission: ASK_EVENTS.has(event) ? 'ask' : 'deny', user_message: answer.reason, agent_message: answer.reason });
      case 'block-stop':
        // A stop's answer for a before-event (a mix-up): refuse the tool, never allow it.
        return json({ permission: 'deny', user_message: answer.reason, agent_message: answer.reason });
      case 'continue':
        return json({});
    }
  }
  if (STOP_EVENTS.has(event) && answer.type === 'block-stop') return json({ followup_message: answer.reason });
  return json({});
}

/** Cursor's codec (`HostCodec`): pure, no I/O. */
export const cursorCodec: HostCodec = { host: 'cursor', read, write };
