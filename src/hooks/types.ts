/**
 * The shapes every coding-agent hook shares: the hosts, a host's payload
 * read into one event (`HookPayload`), the gate's answer (`HookAnswer`) and
 * what the hook process prints and exits with (`HookOutput`). Each host's
 * codec (`hosts/<host>.ts`) reads its payloads into these and writes these
 * answers in its own format; the gate (`gate.ts`) decides between them,
 * keeping the session on disk (`session-file.ts`).
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants", "Blocked calls and recovery";
 * issue 25 (the hook command); design notes: AGENT_HOOKS.md §1.
 */
import type { BlockRule, ToolKind } from '../../machines/safety.types.js';

/** The coding agents whose hook systems `pulse-safety hook <host>` answers. */
export const HOOK_HOSTS = ['claude-code', 'gemini-cli', 'codex', 'cursor', 'copilot'] as const;

/** One of `HOOK_HOSTS`. */
export type HookHost = (typeof HOOK_HOSTS)[number];

/** True when `value` names a host in `HOOK_HOSTS`. */
export function isHookHost(value: unknown): value is HookHost {
  return typeof value === 'string' && (HOOK_HOSTS as readonly string[]).includes(value);
}

/**
 * A tool call as a host's hook payload gives it.
 * - `id`: the host's call id (Claude Code and Codex `tool_use_id`, Cursor's
 *   `tool_use_id`); absent where the host gives none (Gemini CLI, Copilot
 *   CLI), and then the gate correlates before and after by tool name and
 *   input (`callKey`).
 * - `name`: the tool's name as the host gives it (`Bash`, `run_shell_command`,
 *   `mcp__fs__write_file`).
 * - `input`: the tool's arguments (an object, or what the host sent).
 * - `catalog`: the shipped catalog that classifies it, picked from the
 *   payload (its tool names and fields), not from which settings file ran
 *   the hook.
 * - `annotations`: MCP tool annotations, when the host passes them.
 * - `cwd`: the directory the call runs in (absolute), when the host says.
 */
export interface HookToolCall {
  id?: string;
  name: string;
  input: unknown;
  catalog: string;
  annotations?: unknown;
  cwd?: string;
}

/**
 * A hook payload's event, in the gate's terms:
 * - `session.started` / `session.ended`: create and clean up the session;
 * - `tool.before`: check the call (the host waits for the answer);
 * - `tool.after`: record the call's outcome. `result` is the host's result
 *   (text or the structured object); `outcome` is `error` for the hosts'
 *   failure events (`PostToolUseFailure`) and for results the host marks
 *   failed; the gate also reads failure markers as the audit does.
 * - `agent.stopping`: the agent wants to end its turn (a final answer):
 *   `active` is the host's "a stop hook already sent it back" flag.
 * - `ignored`: an event the gate does not act on (answered `continue`).
 */
export type HookEvent =
  | { type: 'session.started'; source?: string }
  | { type: 'session.ended'; reason?: string }
  | { type: 'tool.before'; call: HookToolCall }
  | { type: 'tool.after'; call: HookToolCall; outcome: 'success' | 'error'; result: unknown }
  | { type: 'agent.stopping'; active: boolean; lastMessage?: string }
  | { type: 'ignored'; name: string };

/**
 * A host's hook payload, read (`HostCodec.read`).
 * - `sessionId`: the host's session id (Claude Code `session_id`, Cursor
 *   `conversation_id`, Copilot `sessionId`), never empty.
 * - `eventName`: the host's own event name (`PreToolUse`, `BeforeTool`, ...).
 * - `transcriptPath`, `cwd`: as the host gives them, kept in the session for
 *   `hook status` and the audit.
 */
export interface HookPayload {
  host: HookHost;
  sessionId: string;
  eventName: string;
  event: HookEvent;
  cwd?: string;
  transcriptPath?: string;
}

/**
 * Why a hook refused without a decision of the machine: the session's state
 * file is corrupt or unreadable (`HOOK_STATE_UNREADABLE`), its lock could not
 * be had in time (`HOOK_STATE_LOCKED`), the payload could not be read
 * (`HOOK_PAYLOAD_INVALID`), or the hook itself failed (`HOOK_INTERNAL_ERROR`).
 * In every one of them reads are allowed and writes and the stop refused.
 */
export type HookFailureCode = 'HOOK_STATE_UNREADABLE' | 'HOOK_STATE_LOCKED' | 'HOOK_PAYLOAD_INVALID' | 'HOOK_INTERNAL_ERROR';

/**
 * The gate's answer to one hook event:
 * - `allow`: the tool may run (hosts whose silence means "go on with the
 *   normal permission flow" answer silently);
 * - `deny`: the tool may not run; `reason` is the refusal's words the model
 *   sees (it contains `FSM_BLOCKED` or the failure code, and names the read
 *   that clears it); `code` is `FSM_BLOCKED` or a `HookFailureCode`; `rule`
 *   the machine's rule when the machine refused;
 * - `ask`: the machine wants the user's confirmation (`needs-confirmation`);
 *   hosts without an `ask` answer it as `deny`;
 * - `block-stop`: the agent may not stop yet; `reason` is the instruction it
 *   gets back (hosts that cannot refuse a stop print it as a warning);
 * - `continue`: nothing to decide (after a tool, session events, an allowed stop).
 */
export type HookAnswer =
  | { type: 'allow'; kind?: ToolKind }
  | { type: 'deny'; reason: string; code: 'FSM_BLOCKED' | HookFailureCode; rule?: BlockRule }
  | { type: 'ask'; reason: string; rule?: BlockRule }
  | { type: 'block-stop'; reason: string; code: 'FSM_BLOCKED' | HookFailureCode }
  | { type: 'continue' };

/** What the hook process prints and exits with: written by `HostCodec.write`. */
export interface HookOutput {
  stdout: string;
  stderr: string;
  /** Never 2 (Claude Code, Gemini CLI and VS Code read it as "block everything") nor 1 (read as "allow"), except where the host's format needs it. */
  exitCode: number;
}

/**
 * One host's hook format: reads its payloads and writes the gate's answers.
 * Pure: no I/O, no clock.
 */
export interface HostCodec {
  readonly host: HookHost;
  /**
   * Reads a payload (the JSON the host wrote on stdin, parsed).
   * @throws HookPayloadError when it is not a payload of this host (no
   *   session id, no event name, a tool event without a tool name).
   */
  read(payload: unknown): HookPayload;
  /**
   * Writes an answer in the host's format for the event `eventName` (the
   * host's own name, or null when the payload could not be read, then the
   * answer is written for the host's before-tool event).
   */
  write(answer: HookAnswer, eventName: string | null): HookOutput;
}

/** A payload that is not one of its host's: no session id, no event name, a tool event without a tool name. */
export class HookPayloadError extends Error {
  override readonly name = 'HookPayloadError';
  readonly code = 'HOOK_PAYLOAD_INVALID';
  /** Best effort: the event name the payload gave, when it gave one, so the answer fits its event. */
  readonly eventName: string | null;
  constructor(message: string, eventName: string | null = null) {
    super(message);
    this.eventName = eventName;
  }
}
