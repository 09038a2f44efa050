/**
 * GitHub Copilot's hook formats: Copilot CLI's two payload dialects and VS
 * Code agent mode's, read into the gate's events, and the gate's answers
 * written so that each of them takes them.
 *
 * Three dialects reach this codec (checked against Copilot CLI 1.0.102 run
 * for real; VS Code from its docs):
 * - **Copilot CLI, camelCase hooks** (`preToolUse` in `.github/hooks/*.json`
 *   or `~/.copilot/hooks`): `sessionId`, `timestamp` (epoch ms), `cwd`, and
 *   per event `toolName` + `toolArgs` (an object in 1.0.102; a JSON string is
 *   read too), `toolResult` (`{resultType, textResultForLlm}`, postToolUse),
 *   `error` (postToolUseFailure), `stopReason` + `transcriptPath` +
 *   `stop_hook_active` (agentStop), `source` (sessionStart), `reason`
 *   (sessionEnd). The payload does not name its event: it is told by its
 *   fields. Tool names are Copilot's own (`bash`, `create`, `view`, ...).
 * - **Copilot CLI, PascalCase hooks** (`PreToolUse`, also the hooks of a
 *   `.claude/settings.json`): VS Code-style snake_case, `hook_event_name`,
 *   `session_id`, `timestamp` (ISO 8601), `tool_name` + `tool_input`,
 *   `tool_result` (`{result_type, text_result_for_llm}`), and the tools under
 *   Claude Code's names (`Bash`, `Write`, `Read`, ...) with Copilot's
 *   arguments (`path`, `file_text`), so they are classified by the `copilot`
 *   catalog, never the `claude-code` one.
 * - **VS Code agent mode**: `hookEventName`, `sessionId`, `tool_name`,
 *   `tool_input`, `tool_use_id`, `tool_response`, `transcript_path`.
 *
 * No Copilot CLI payload has a call id (VS Code's has `tool_use_id`), so the
 * gate correlates before and after by tool name and input.
 *
 * Answers, exit 0 always: a deny is
 * `{"permissionDecision":"deny","permissionDecisionReason":...}` with the
 * same inside `hookSpecificOutput` (VS Code reads it there); a refused stop
 * `{"decision":"block","reason":...}` (VS Code's `Stop` nests it in
 * `hookSpecificOutput`); an allow is silence, so Copilot's own approval goes
 * on (`"allow"` would skip it). Design notes: AGENT_HOOKS.md §1.5, §1.6;
 * issue 25 items 1 and 4.
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

/** The shipped catalog that classifies Copilot's tools (`src/catalogs/copilot.json`). */
export const COPILOT_CATALOG = 'copilot';

/**
 * Copilot CLI's hook events as its PascalCase configuration names them (and
 * VS Code's), each with the camelCase name the codec reports for it.
 */
const PASCAL_EVENTS: Readonly<Record<string, string>> = {
  SessionStart: 'sessionStart',
  SessionEnd: 'sessionEnd',
  UserPromptSubmit: 'userPromptSubmitted',
  PreToolUse: 'preToolUse',
  PostToolUse: 'postToolUse',
  PostToolUseFailure: 'postToolUseFailure',
  PermissionRequest: 'permissionRequest',
  Stop: 'agentStop',
  SubagentStart: 'subagentStart',
  SubagentStop: 'subagentStop',
  PreCompact: 'preCompact',
  Notification: 'notification',
  ErrorOccurred: 'errorOccurred',
};

/** The camelCase event names (Copilot CLI's configuration names, docs.github.com hooks reference). */
const CAMEL_EVENTS: ReadonlySet<string> = new Set([
  'sessionStart',
  'sessionEnd',
  'userPromptSubmitted',
  'preToolUse',
  'postToolUse',
  'postToolUseFailure',
  'permissionRequest',
  'agentStop',
  'subagentStart',
  'subagentStop',
  'preCompact',
  'notification',
  'errorOccurred',
]);

/** PascalCase events whose payload carries `transcript_path` in Copilot CLI 1.0.102. */
const EVENTS_WITH_TRANSCRIPT: ReadonlySet<string> = new Set(['Stop', 'SubagentStart', 'SubagentStop', 'PreCompact']);

function nonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

function stringOrUndefined(value: unknown): string | undefined {
  return nonEmptyString(value) ? value : undefined;
}

/** The first of `keys` the payload holds (own properties only). */
function pick(payload: Record<string, unknown>, ...keys: string[]): unknown {
  for (const key of keys) {
    const value = own(payload, key);
    if (value !== undefined) return value;
  }
  return undefined;
}

/**
 * True for a Copilot CLI PascalCase payload: a Copilot event name in
 * `hook_event_name`, `session_id`, an ISO `timestamp` string, and none of the
 * fields Claude Code (`tool_use_id`, `permission_mode`) or Codex (`turn_id`)
 * send; `transcript_path` only on the events that carry one (Gemini CLI
 * sends it on every event, and its events beyond `SessionStart`/`SessionEnd`
 * have names of their own).
 */
function isPascalCli(payload: Record<string, unknown>): boolean {
  const event = own(payload, 'hook_event_name');
  if (typeof event !== 'string' || !Object.hasOwn(PASCAL_EVENTS, event)) return false;
  if (!nonEmptyString(own(payload, 'session_id')) || typeof own(payload, 'timestamp') !== 'string') return false;
  if (own(payload, 'tool_use_id') !== undefined || own(payload, 'permission_mode') !== undefined || own(payload, 'turn_id') !== undefined)
    return false;
  return own(payload, 'transcript_path') === undefined || EVENTS_WITH_TRANSCRIPT.has(event);
}

/**
 * True when `payload` is a Copilot hook payload: Copilot CLI's camelCase
 * dialect (`sessionId`, no `hook_event_name`), VS Code's (`sessionId` with
 * `hookEventName`), or Copilot CLI's PascalCase one (see `isPascalCli`).
 * Claude Code, Codex, Gemini CLI and Cursor send `session_id` or
 * `conversation_id` with `hook_event_name`, never `sessionId`.
 */
export function matchesCopilot(payload: unknown): boolean {
  if (!isRecord(payload)) return false;
  if (nonEmptyString(own(payload, 'sessionId')))
    return own(payload, 'hook_event_name') === undefined && own(payload, 'conversation_id') === undefined;
  return isPascalCli(payload);
}

/**
 * The camelCase event of a payload that does not name it (Copilot CLI's
 * camelCase hooks), told by its fields; null when none fits.
 */
function inferEvent(payload: Record<string, unknown>): string | null {
  const has = (key: string): boolean => own(payload, key) !== undefined;
  if (has('toolName')) {
    if (has('toolResult')) return 'postToolUse';
    if (has('error')) return 'postToolUseFailure';
    return 'preToolUse';
  }
  if (has('agentName')) return has('response') ? 'subagentStop' : 'subagentStart';
  if (has('stopReason') || has('stop_hook_active') || has('stopHookActive')) return 'agentStop';
  if (has('errorContext')) return 'errorOccurred';
  if (has('prompt')) return 'userPromptSubmitted';
  if (has('source')) return 'sessionStart';
  if (has('reason')) return 'sessionEnd';
  if (has('trigger')) return 'preCompact';
  return null;
}

/** The payload's event, as the host names it (`eventName`) and in the codec's camelCase terms (`kind`). */
function eventNames(payload: Record<string, unknown>): { eventName: string; kind: string } {
  const declared = pick(payload, 'hook_event_name', 'hookEventName');
  if (typeof declared === 'string' && declared.length > 0) {
    const kind = Object.hasOwn(PASCAL_EVENTS, declared) ? PASCAL_EVENTS[declared]! : declared;
    return { eventName: declared, kind };
  }
  const inferred = inferEvent(payload);
  if (inferred === null) throw new HookPayloadError('copilot payload: names no event and has none of the fields of one');
  return { eventName: inferred, kind: inferred };
}

/** Tool arguments as the host sent them; a JSON string holding an object is parsed, so before and after carry one shape. */
function argsOf(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    const parsed: unknown = JSON.parse(value);
    return isRecord(parsed) ? parsed : value;
  } catch {
    return value;
  }
}

function toolCall(payload: Record<string, unknown>, eventName: string): HookToolCall {
  const name = pick(payload, 'toolName', 'tool_name');
  if (!nonEmptyString(name))
    throw new HookPayloadError(
      `copilot ${eventName} payload: the tool name ('toolName' or 'tool_name') is missing or not a string`,
      eventName,
    );
  const call: HookToolCall = { name, input: argsOf(pick(payload, 'toolArgs', 'tool_input')), catalog: COPILOT_CATALOG };
  const id = stringOrUndefined(own(payload, 'tool_use_id'));
  if (id !== undefined) call.id = id;
  const cwd = stringOrUndefined(pick(payload, 'cwd', 'workingDirectory'));
  if (cwd !== undefined) call.cwd = cwd;
  return call;
}

/** Result types Copilot CLI gives a call that did not succeed (its SDK's `ToolResultObject.resultType`). */
const FAILED_RESULT_TYPES: ReadonlySet<string> = new Set(['failure', 'denied', 'rejected', 'timeout']);

/**
 * A postToolUse's outcome and result. Copilot CLI 1.0.102 sends a shell
 * command that exited non-zero as `resultType: "success"` with text ending
 * `<shellId: N completed with exit code 1>`: the result passed on is that
 * text, whose exit code the gate reads as the audit does.
 */
function afterOf(payload: Record<string, unknown>): { outcome: 'success' | 'error'; result: unknown } {
  const result = pick(payload, 'toolResult', 'tool_result', 'tool_response');
  if (!isRecord(result)) return { outcome: 'success', result };
  const type = pick(result, 'resultType', 'result_type');
  const text = pick(result, 'textResultForLlm', 'text_result_for_llm');
  const outcome = typeof type === 'string' && FAILED_RESULT_TYPES.has(type) ? 'error' : 'success';
  return { outcome, result: typeof text === 'string' ? text : result };
}

function stopActive(payload: Record<string, unknown>): boolean {
  return pick(payload, 'stop_hook_active', 'stopHookActive') === true;
}

function eventOf(payload: Record<string, unknown>, eventName: string, kind: string): HookEvent {
  switch (kind) {
    case 'sessionStart': {
      const source = stringOrUndefined(own(payload, 'source'));
      return source === undefined ? { type: 'session.started' } : { type: 'session.started', source };
    }
    case 'sessionEnd': {
      const reason = stringOrUndefined(own(payload, 'reason'));
      return reason === undefined ? { type: 'session.ended' } : { type: 'session.ended', reason };
    }
    case 'preToolUse':
      return { type: 'tool.before', call: toolCall(payload, eventName) };
    case 'postToolUse':
      return { type: 'tool.after', call: toolCall(payload, eventName), ...afterOf(payload) };
    case 'postToolUseFailure':
      return {
        type: 'tool.after',
        call: toolCall(payload, eventName),
        outcome: 'error',
        result: { error: pick(payload, 'error', 'error_message') ?? 'failed' },
      };
    case 'agentStop':
      return { type: 'agent.stopping', active: stopActive(payload) };
    case 'subagentStop': {
      const response = stringOrUndefined(own(payload, 'response'));
      const event: HookEvent = { type: 'agent.stopping', active: stopActive(payload) };
      return response === undefined ? event : { ...event, lastMessage: response };
    }
    default:
      return { type: 'ignored', name: eventName };
  }
}

/**
 * Reads a Copilot payload (any of the three dialects).
 * @throws HookPayloadError when it is not an object, has no session id
 *   (`sessionId` or `session_id`), names no event and has none of an
 *   event's fields, or a tool event has no tool name.
 */
function read(payload: unknown): HookPayload {
  if (!isRecord(payload)) throw new HookPayloadError('copilot payload: not a JSON object');
  const { eventName, kind } = eventNames(payload);
  const sessionId = stringOrUndefined(pick(payload, 'sessionId', 'session_id'));
  if (sessionId === undefined)
    throw new HookPayloadError(
      `copilot ${eventName} payload: the session id ('sessionId' or 'session_id') is missing or not a string`,
      eventName,
    );
  const result: HookPayload = { host: 'copilot', sessionId, eventName, event: eventOf(payload, eventName, kind) };
  const cwd = stringOrUndefined(pick(payload, 'cwd', 'workingDirectory'));
  if (cwd !== undefined) result.cwd = cwd;
  const transcriptPath = stringOrUndefined(pick(payload, 'transcriptPath', 'transcript_path'));
  if (transcriptPath !== undefined) result.transcriptPath = transcriptPath;
  return result;
}

function json(value: object): HookOutput {
  return { stdout: `${JSON.stringify(value)}\n`, stderr: '', exitCode: 0 };
}

const SILENT: HookOutput = { stdout: '', stderr: '', exitCode: 0 };

/** The camelCase kind of an event name as `read` reported it. */
function kindOf(eventName: string | null): string {
  if (eventName === null) return 'preToolUse';
  if (Object.hasOwn(PASCAL_EVENTS, eventName)) return PASCAL_EVENTS[eventName]!;
  return CAMEL_EVENTS.has(eventName) ? eventName : 'preToolUse';
}

function decision(permissionDecision: 'deny' | 'ask', reason: string): HookOutput {
  return json({
    permissionDecision,
    permissionDecisionReason: reason,
    hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision, permissionDecisionReason: reason },
  });
}

/**
 * Writes an answer for `eventName` (null, or an event this codec does not
 * know: written as the before-tool event's, the safe side). Exit 0 always:
 * Copilot CLI reads a deny only from JSON on exit 0 (exit 2 denies since
 * 1.0.70, but VS Code reads exit 2 as "block everything").
 * - before-tool: allow is silence; deny and ask `permissionDecision` with its
 *   reason, top level and in `hookSpecificOutput`; a `block-stop` here is a deny.
 * - `agentStop` / `Stop` / `subagentStop`: a refused stop is
 *   `{"decision":"block","reason"}`, also nested for VS Code's `Stop`;
 *   anything else silence.
 * - every other event: silence.
 */
function write(answer: HookAnswer, eventName: string | null): HookOutput {
  const kind = kindOf(eventName);
  if (kind === 'preToolUse' || kind === 'permissionRequest') {
    switch (answer.type) {
      case 'deny':
      case 'block-stop':
        return decision('deny', answer.reason);
      case 'ask':
        return decision('ask', answer.reason);
      default:
        return SILENT;
    }
  }
  if ((kind === 'agentStop' || kind === 'subagentStop') && answer.type === 'block-stop') {
    const block = { decision: 'block', reason: answer.reason };
    return json(eventName === 'Stop' ? { ...block, hookSpecificOutput: { hookEventName: 'Stop', ...block } } : block);
  }
  return SILENT;
}

/** Copilot's codec (`HostCodec`): Copilot CLI and VS Code agent mode; pure, no I/O. */
export const copilotCodec: HostCodec = { host: 'copilot', read, write };
