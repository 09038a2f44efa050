/**
 * Claude Code's hook format: its payloads read into the gate's events, and
 * the gate's answers written as Claude Code reads them.
 *
 * Checked against Claude Code 2.1.332 run for real (test/hooks/claude-code.real.test.ts)
 * and its bundled code:
 * - every payload carries `session_id`, `transcript_path`, `cwd` and
 *   `hook_event_name` (snake_case); tool events add `tool_name`,
 *   `tool_input` and `tool_use_id`; `PostToolUse` adds `tool_response`,
 *   `PostToolUseFailure` adds `error` (a failed Bash: `Exit code N`) and
 *   `is_interrupt`; `Stop` adds `stop_hook_active` and
 *   `last_assistant_message`; `SessionStart` adds `source`, `SessionEnd`
 *   `reason`.
 * - A refused call (`permissionDecision: "deny"`) reaches the model as a
 *   `tool_result` with `is_error: true` and the text
 *   `PreToolUse:<tool> hook error: <reason>`; no `PostToolUse` fires for it.
 * - `permissionDecision: "ask"` shows the reason to the user; in `-p` mode
 *   (no one to ask) the call is refused and the model gets the bare reason
 *   as an error `tool_result`.
 * - A `Stop` refused with `{"decision":"block","reason"}` sends the agent
 *   back to work: the model gets the reason as "Stop hook feedback"; after 8
 *   refusals in a row Claude Code stops anyway.
 * - `hookSpecificOutput.hookEventName` must name the event the hook answers:
 *   any other name is a hook error, and a failed hook lets the call through.
 *   So every answer here is written for the event it answers.
 * - Exit 0 with empty stdout is silence: the call goes on through Claude
 *   Code's own permission flow. `permissionDecision: "allow"` would skip the
 *   user's prompt, so it is never written. Exit 2 blocks whatever the JSON
 *   says, any other non-zero exit lets the call through: every answer exits 0.
 *
 * Design notes: AGENT_HOOKS.md §1.1; issue 25 (items 1 and 3).
 */
import claudeCodeCatalog from '../../catalogs/claude-code.json' with { type: 'json' };
import {
  HookPayloadError,
  type HookAnswer,
  type HookEvent,
  type HookOutput,
  type HookPayload,
  type HookToolCall,
  type HostCodec,
} from '../types.js';
import { isRecord } from '../../util/own.js';

/** The catalog that classifies Claude Code's tools; names it does not list (new tools, `mcp__<server>__<tool>`) are writes. */
export const CLAUDE_CODE_CATALOG = 'claude-code';

/** The events a `{"decision":"block","reason"}` sends back to work. */
const STOP_EVENTS = new Set(['Stop', 'SubagentStop']);

/** Events whose `hookSpecificOutput.additionalContext` reaches the model without blocking anything. */
const CONTEXT_EVENTS = new Set(['PostToolUse', 'PostToolUseFailure', 'SessionStart']);

/**
 * Fields of the other hosts that read `.claude/settings.json` too (VS Code
 * and Copilot CLI: camelCase ids and a `timestamp`; Cursor: its conversation
 * fields). Claude Code 2.1.332 sends none of them.
 */
const OTHER_HOSTS_FIELDS = [
  // Codex's hooks share Claude Code's format, and add the turn's id.
  'turn_id',
  'sessionId',
  'hookEventName',
  'toolName',
  'toolArgs',
  'timestamp',
  'conversation_id',
  'generation_id',
  'cursor_version',
  'workspace_roots',
];

/** Tool names of Claude Code's catalog (current and former). */
const CLAUDE_TOOL_NAMES: ReadonlySet<string> = new Set(Object.keys(claudeCodeCatalog.tools));

/** Cursor's tool names that look like Claude Code's (PascalCase) but are not. */
const CURSOR_TOOL_NAMES = new Set(['Shell', 'Delete']);

type Fields = Record<string, unknown>;

const isObject: (value: unknown) => value is Fields = isRecord;

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * Whether `name` is in Claude Code's tool vocabulary: a tool of the
 * `claude-code` catalog, an MCP tool (`mcp__<server>__<tool>`), or a
 * PascalCase name (Claude Code's tools are named so; a new one is a write
 * for the catalog). The lowercase and camelCase names of VS Code (`editFiles`,
 * `runTerminalCommand`) and Copilot CLI (`bash`, `view`) are not, nor
 * Cursor's `Shell` and `Delete`.
 */
export function isClaudeCodeToolName(name: string): boolean {
  if (CLAUDE_TOOL_NAMES.has(name)) return true;
  if (/^mcp__[^_]/.test(name)) return true;
  return /^[A-Z][A-Za-z0-9]*$/.test(name) && !CURSOR_TOOL_NAMES.has(name);
}

/**
 * A cheap check that `payload` is Claude Code's and not that of another host
 * reading the same `.claude/settings.json` (VS Code agent mode, Copilot CLI,
 * Cursor): snake_case `session_id` and `hook_event_name` (non-empty
 * strings), none of the other hosts' own fields (`sessionId`,
 * `hookEventName`, `timestamp`, `conversation_id`, `cursor_version`, ...),
 * and a `tool_name`, when there is one, in Claude Code's vocabulary
 * (`isClaudeCodeToolName`). Never throws.
 */
export function matchesClaudeCode(payload: unknown): boolean {
  if (!isObject(payload)) return false;
  if (nonEmptyString(payload.session_id) === undefined || nonEmptyString(payload.hook_event_name) === undefined) return false;
  if (OTHER_HOSTS_FIELDS.some((field) => field in payload)) return false;
  if (!('tool_name' in payload)) return true;
  return typeof payload.tool_name === 'string' && isClaudeCodeToolName(payload.tool_name);
}

/** The tool call of a tool event; throws `HookPayloadError` without a tool name or with a `tool_input` that is not an object. */
function toolCall(payload: Fields, eventName: string): HookToolCall {
  const name = nonEmptyString(payload.tool_name);
  if (name === undefined) throw new HookPayloadError(`Claude Code ${eventName} payload without a tool_name`, eventName);
  if (!isObject(payload.tool_input))
    throw new HookPayloadError(`Claude Code ${eventName} payload for '${name}' without a tool_input object`, eventName);
  const call: HookToolCall = { name, input: payload.tool_input, catalog: CLAUDE_CODE_CATALOG };
  const id = nonEmptyString(payload.tool_use_id);
  if (id !== undefined) call.id = id;
  const cwd = nonEmptyString(payload.cwd);
  if (cwd !== undefined) call.cwd = cwd;
  return call;
}

/** Reads one event of a payload whose session id and event name are known. */
function readEvent(payload: Fields, eventName: string): HookEvent {
  switch (eventName) {
    case 'SessionStart':
      return typeof payload.source === 'string' ? { type: 'session.started', source: payload.source } : { type: 'session.started' };
    case 'SessionEnd':
      return typeof payload.reason === 'string' ? { type: 'session.ended', reason: payload.reason } : { type: 'session.ended' };
    case 'PreToolUse':
      return { type: 'tool.before', call: toolCall(payload, eventName) };
    case 'PostToolUse':
      return { type: 'tool.after', call: toolCall(payload, eventName), outcome: 'success', result: payload.tool_response };
    case 'PostToolUseFailure':
      return { type: 'tool.after', call: toolCall(payload, eventName), outcome: 'error', result: payload.error };
    case 'Stop':
    case 'SubagentStop': {
      const lastMessage = typeof payload.last_assistant_message === 'string' ? payload.last_assistant_message : undefined;
      const event: HookEvent = { type: 'agent.stopping', active: payload.stop_hook_active === true };
      return lastMessage === undefined ? event : { ...event, lastMessage };
    }
    // PostToolBatch repeats the calls of a parallel batch after each of them
    // already fired its own PostToolUse or PostToolUseFailure, which recorded
    // it; recording them again would count each outcome twice.
    default:
      return { type: 'ignored', name: eventName };
  }
}

/**
 * Reads a Claude Code hook payload (the JSON on the hook's stdin, parsed).
 * Events: `SessionStart` → `session.started`; `SessionEnd` →
 * `session.ended`; `PreToolUse` → `tool.before` (id `tool_use_id`, cwd the
 * payload's, catalog `claude-code`; MCP tools keep their `mcp__` name);
 * `PostToolUse` → `tool.after` success with `tool_response`;
 * `PostToolUseFailure` → `tool.after` error with `error`; `Stop` and
 * `SubagentStop` → `agent.stopping` (`stop_hook_active`,
 * `last_assistant_message`); every other event (`PostToolBatch`,
 * `UserPromptSubmit`, `PreCompact`, ...) → `ignored`.
 * @throws HookPayloadError when the payload is not an object, has no
 *   `session_id` or `hook_event_name` (non-empty strings), or is a tool event
 *   without a `tool_name` or a `tool_input` object; `eventName` carries the
 *   event name when the payload gave one.
 */
function read(payload: unknown): HookPayload {
  if (!isObject(payload)) throw new HookPayloadError('a Claude Code hook payload is a JSON object');
  const eventName = nonEmptyString(payload.hook_event_name);
  if (eventName === undefined) throw new HookPayloadError('Claude Code hook payload without a hook_event_name');
  const sessionId = nonEmptyString(payload.session_id);
  if (sessionId === undefined) throw new HookPayloadError(`Claude Code ${eventName} payload without a session_id`, eventName);
  const result: HookPayload = { host: 'claude-code', sessionId, eventName, event: readEvent(payload, eventName) };
  const cwd = nonEmptyString(payload.cwd);
  if (cwd !== undefined) result.cwd = cwd;
  const transcriptPath = nonEmptyString(payload.transcript_path);
  if (transcriptPath !== undefined) result.transcriptPath = transcriptPath;
  return result;
}

/** Exit 0 with a JSON answer on stdout. */
function json(answer: unknown, stderr = ''): HookOutput {
  return { stdout: JSON.stringify(answer), stderr, exitCode: 0 };
}

/** Exit 0, nothing on stdout: Claude Code goes on as if there were no hook. */
function silent(stderr = ''): HookOutput {
  return { stdout: '', stderr, exitCode: 0 };
}

/** A before-tool decision: `deny` or `ask`, with the reason. */
function permission(decision: 'deny' | 'ask', reason: string): HookOutput {
  return json({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: decision, permissionDecisionReason: reason } });
}

/**
 * A refusal (`deny`, `ask` or `block-stop`) written for the event it
 * answers: before a tool (and when the event is unknown) the call is refused
 * (`ask` kept where it is one); at a stop the agent is sent back with the
 * reason; after a tool and at the session's start, where nothing can be
 * refused any more, the reason goes to the model as additional context;
 * elsewhere (`SessionEnd`, `UserPromptSubmit`, `PreCompact`, ...) nothing
 * is blocked (a block there would erase the user's prompt or stop a
 * compaction) and the reason goes to stderr, which Claude Code logs.
 */
function refusal(decision: 'deny' | 'ask', reason: string, eventName: string | null): HookOutput {
  if (eventName === null || eventName === 'PreToolUse') return permission(decision, reason);
  if (STOP_EVENTS.has(eventName)) return json({ decision: 'block', reason });
  if (CONTEXT_EVENTS.has(eventName)) return json({ hookSpecificOutput: { hookEventName: eventName, additionalContext: reason } });
  return silent(`${reason}\n`);
}

/**
 * Writes the gate's answer in Claude Code's format for the event
 * `eventName` (null when the payload could not be read: then as for
 * `PreToolUse`). Always exit 0:
 * - `allow`, `continue`: empty stdout (Claude Code's own permission flow
 *   goes on; `permissionDecision: "allow"` is never written);
 * - `deny` (and `block-stop` outside a stop):
 *   `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":reason}}`;
 * - `ask`: the same with `"ask"` (the reason goes to the user, not the model);
 * - `block-stop` (and `deny`, `ask` at a stop): `{"decision":"block","reason":reason}`;
 * - a refusal after a tool or at `SessionStart`: the reason as
 *   `hookSpecificOutput.additionalContext`; at any other event: silence
 *   with the reason on stderr.
 */
function write(answer: HookAnswer, eventName: string | null): HookOutput {
  switch (answer.type) {
    case 'allow':
    case 'continue':
      return silent();
    case 'deny':
      return refusal('deny', answer.reason, eventName);
    case 'ask':
      return refusal('ask', answer.reason, eventName);
    case 'block-stop':
      return refusal('deny', answer.reason, eventName);
  }
}

/** Claude Code's codec (`pulse-safety hook claude-code`). */
export const claudeCodeCodec: HostCodec = { host: 'claude-code', read, write };
