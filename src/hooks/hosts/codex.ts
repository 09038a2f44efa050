/**
 * Codex's hook format: its payloads read into the gate's events, and the
 * gate's answers written as Codex reads them.
 *
 * Checked against Codex 0.171.0 run for real (test/hooks/codex.real.test.ts)
 * and the strings of its binary:
 * - every payload carries `session_id`, `transcript_path` (a
 *   `rollout-….jsonl`, or null), `cwd`, `hook_event_name`, `model` and
 *   `permission_mode`; turn events add `turn_id`. `PreToolUse` adds
 *   `tool_name`, `tool_input` and `tool_use_id` (the model's call id);
 *   `PostToolUse` adds `tool_response`; `Stop` adds `stop_hook_active` and
 *   `last_assistant_message`; `SessionStart` adds `source`. There is no
 *   `SessionEnd`.
 * - Tool names: every shell tool (`exec_command`, `shell`, ...) is `Bash`
 *   with `tool_input.command` the script string (its `workdir` becomes the
 *   payload's `cwd`); `apply_patch` has the
 *   patch text in `tool_input.command`; MCP tools are `mcp__<server>__<tool>`.
 *   Other tools (`view_image`, `web_search`, ...) fire no hook.
 * - A Bash `tool_response` is the command's output only: a non-zero exit
 *   is not told apart from a success (the output could print anything), so
 *   a Bash result is a success unless the gate's failure markers say
 *   otherwise. `apply_patch`'s response starts with Codex's own
 *   `Exit code: <n>` line; a structured (MCP) response with `isError: true`
 *   is a failure.
 * - A refused call (`permissionDecision: "deny"` with a non-empty
 *   `permissionDecisionReason`) reaches the model as the tool output
 *   `Command blocked by PreToolUse hook: <reason>. Command: <command>`
 *   (`Tool call blocked by PreToolUse hook: <reason>. Tool: <name>` for MCP).
 * - `permissionDecision: "allow"` and `"ask"`, `decision: "approve"`,
 *   `continue`, `stopReason` and `suppressOutput` are "unsupported": Codex
 *   marks the hook failed and runs the call. So an allowed call is silence
 *   (exit 0, empty stdout) and `ask` is written as a refusal.
 * - A `Stop` refused with `{"decision":"block","reason"}` sends the agent
 *   back to work with the reason as a user message
 *   (`<hook_prompt …>reason</hook_prompt>`); the next `Stop` has
 *   `stop_hook_active: true`.
 * - The `PreToolUse` and `PostToolUse` hooks of parallel calls run
 *   concurrently, each in its own process.
 *
 * Design notes: AGENT_HOOKS.md §1.3; issue 25 (items 1 and 3).
 */
import { HookPayloadError, type HookAnswer, type HookEvent, type HookOutput, type HookPayload, type HostCodec } from '../types.js';
import { isRecord } from '../../util/own.js';
import { snakeCaseBase, stringField, type Fields } from './fields.js';

/** The catalog that classifies Codex's hook tools (`Bash`, `apply_patch`; MCP tools by annotations, else writes). */
export const CODEX_CATALOG = 'codex';

/** The event whose answer refuses a call. */
const PRE_TOOL_USE = 'PreToolUse';

/** The events a `{"decision":"block","reason"}` sends back to work. */
const STOP_EVENTS = new Set(['Stop']);

/** A Codex session's transcript: `…/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`. */
const ROLLOUT_PATH = /[\\/]rollout-[^\\/]*\.jsonl$/;

const isObject: (value: unknown) => value is Fields = isRecord;

/**
 * True when `payload` is one of Codex's hook payloads: a `session_id` and a
 * `hook_event_name`, plus Codex's `turn_id` (every turn event has one; Claude
 * Code's payloads have none), or, for the events outside a turn
 * (`SessionStart`), a `model` string beside a `rollout-….jsonl` transcript.
 */
export function matchesCodex(payload: unknown): boolean {
  const base = snakeCaseBase(payload);
  if (base === null) return false;
  const fields = base.fields;
  if (typeof fields.turn_id === 'string') return true;
  const transcript = stringField(fields, 'transcript_path');
  return typeof fields.model === 'string' && transcript !== undefined && ROLLOUT_PATH.test(transcript);
}

/**
 * The outcome of a `PostToolUse` payload: an MCP result with `isError: true`,
 * or an `apply_patch` response whose leading `Exit code: <n>` is not 0, is an
 * error; anything else a success (a Bash response is only the output).
 */
function outcomeOf(toolName: string, response: unknown): 'success' | 'error' {
  if (isObject(response) && response.isError === true) return 'error';
  if (toolName === 'apply_patch' && typeof response === 'string') {
    const code = /^Exit code: (-?\d+)\r?\n/.exec(response);
    if (code !== null && code[1] !== '0') return 'error';
  }
  return 'success';
}

/** The tool call of a `PreToolUse`/`PostToolUse` payload. @throws HookPayloadError without a tool name. */
function toolCallOf(payload: Fields, eventName: string, cwd: string | undefined) {
  const name = stringField(payload, 'tool_name');
  if (name === undefined || name.trim() === '') throw new HookPayloadError(`${eventName} without a tool_name`, eventName);
  const id = stringField(payload, 'tool_use_id');
  const input = Object.hasOwn(payload, 'tool_input') ? payload.tool_input : undefined;
  return {
    ...(id === undefined || id === '' ? {} : { id }),
    name,
    input: input ?? {},
    catalog: CODEX_CATALOG,
    ...(cwd === undefined ? {} : { cwd }),
  };
}

/**
 * Reads a Codex payload into the gate's event.
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
    case 'PreToolUse':
      event = { type: 'tool.before', call: toolCallOf(payload, eventName, cwd) };
      break;
    case 'PostToolUse': {
      const call = toolCallOf(payload, eventName, cwd);
      const response = Object.hasOwn(payload, 'tool_response') ? payload.tool_response : undefined;
      event = { type: 'tool.after', call, outcome: outcomeOf(call.name, response), result: response ?? null };
      break;
    }
    case 'Stop': {
      const lastMessage = stringField(payload, 'last_assistant_message');
      event = { type: 'agent.stopping', active: payload.stop_hook_active === true, ...(lastMessage === undefined ? {} : { lastMessage }) };
      break;
    }
    default:
      event = { type: 'ignored', name: eventName };
  }
  return {
    host: 'codex',
    sessionId,
    eventName,
    event,
    ...(cwd === undefined ? {} : { cwd }),
    ...(transcriptPath === undefined ? {} : { transcriptPath }),
  };
}

const SILENCE: HookOutput = { stdout: '', stderr: '', exitCode: 0 };

function json(value: object): HookOutput {
  return { stdout: `${JSON.stringify(value)}\n`, stderr: '', exitCode: 0 };
}

/** A refusal of a call: the only `PreToolUse` answer Codex supports besides silence. */
function refuse(reason: string): HookOutput {
  const text = reason.trim() === '' ? 'FSM_BLOCKED: refused by the safety gate.' : reason;
  return json({ hookSpecificOutput: { hookEventName: PRE_TOOL_USE, permissionDecision: 'deny', permissionDecisionReason: text } });
}

/**
 * Writes the gate's answer for Codex, always exit 0:
 * - `allow`, `continue`: empty stdout (Codex's own approvals decide as usual);
 * - `deny`, and `ask` (Codex's `ask` is unsupported and runs the call):
 *   `hookSpecificOutput.permissionDecision: "deny"` with the reason;
 * - `block-stop`: `{"decision":"block","reason"}` on `Stop` (the reason
 *   becomes the agent's next prompt); on a `PreToolUse` it refuses the call.
 *   On any other event nothing can be refused: empty stdout.
 * `eventName` null (an unreadable payload) answers as for `PreToolUse`.
 */
function write(answer: HookAnswer, eventName: string | null): HookOutput {
  const event = eventName ?? PRE_TOOL_USE;
  switch (answer.type) {
    case 'allow':
    case 'continue':
      return SILENCE;
    case 'deny':
    case 'ask':
      if (event === PRE_TOOL_USE) return refuse(answer.reason);
      return STOP_EVENTS.has(event) ? json({ decision: 'block', reason: answer.reason }) : SILENCE;
    case 'block-stop':
      if (STOP_EVENTS.has(event)) return json({ decision: 'block', reason: answer.reason });
      return event === PRE_TOOL_USE ? refuse(answer.reason) : SILENCE;
  }
}

/** Codex's codec (`pulse-safety hook codex`). Pure: no I/O, no clock. */
export const codexCodec: HostCodec = { host: 'codex', read, write };
