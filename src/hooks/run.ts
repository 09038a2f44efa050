/**
 * One hook process: the host's payload in (stdin's text), the host's answer
 * out (stdout, stderr, exit code). `pulse-safety hook <host>` runs it; it
 * never throws, and what it cannot read or decide it answers with an explicit
 * refusal of a write (a read is still allowed), never with an exit code the
 * host reads as "allow" or "block everything".
 *
 * Spec: issue 25 items 1 and 3; AGENT_HOOKS.md §1 (each host's answer format and failure modes).
 */
import { readFileSync } from 'node:fs';
import { answerHook, failClosedAnswer, type HookGateOptions } from './gate.js';
import { codecForPayload, codecOf } from './hosts/index.js';
import { hookStateDirectory } from './session-file.js';
import { HookPayloadError, type HookAnswer, type HookHost, type HookOutput } from './types.js';
import { eventNameOf, lastResort } from './last-resort.js';

/** Options of `runHook`. */
export interface RunHookOptions {
  /** The environment (default `process.env`): `PULSE_SAFETY_STATE_DIR`, `XDG_STATE_HOME`, `PULSE_SAFETY_MCP_ANNOTATIONS`, `PULSE_SAFETY_CONFIRM_DESTRUCTIVE` (`1`: destructive writes need the user's confirmation). */
  env?: NodeJS.ProcessEnv;
  /** The state directory; default `hookStateDirectory(env)`. */
  stateDir?: string;
  /** The clock, epoch ms; default `Date.now`. */
  now?: () => number;
  /** How long to wait for a session's lock, in ms; default 5000. */
  lockTimeoutMs?: number;
}

/** The largest payload read, in characters (hosts send a few KiB; a tool input may be larger). */
export const MAX_HOOK_PAYLOAD = 8 * 1024 * 1024;

/** The refusal written when the payload cannot be read: for the host's before-tool event, a write refused. */
function unreadable(host: HookHost, detail: string, eventName: string | null): HookOutput {
  const answer: HookAnswer = {
    type: 'deny',
    code: 'HOOK_PAYLOAD_INVALID',
    reason: `This call was not run (HOOK_PAYLOAD_INVALID): the safety hook could not read what the agent sent (${detail}), so it cannot tell a read from a change.`,
  };
  return codecOf(host).write(answer, eventName);
}

/**
 * MCP annotations by tool name, from the JSON file `PULSE_SAFETY_MCP_ANNOTATIONS`
 * names (`{ "mcp__fs__read_file": { "readOnlyHint": true } }`); none when unset.
 * @throws Error when the file cannot be read or is not a JSON object (the hook then fails closed).
 */
function mcpAnnotationsOf(env: NodeJS.ProcessEnv): Record<string, unknown> | undefined {
  const file = env.PULSE_SAFETY_MCP_ANNOTATIONS;
  if (file === undefined || file === '') return undefined;
  const value: unknown = JSON.parse(readFileSync(file, 'utf8'));
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error(`PULSE_SAFETY_MCP_ANNOTATIONS: ${file} is not a JSON object of annotations by tool name`);
  }
  return value as Record<string, unknown>;
}

/**
 * Answers one hook payload of `host`. The payload is read by the codec of the
 * host that sent it (`codecForPayload`: a Claude-format hook also runs under
 * VS Code and Copilot CLI, with their payloads), decided by `answerHook`, and
 * written in that host's format.
 *
 * @param host the host named on the command line (`pulse-safety hook <host>`).
 * @param stdin the payload's text.
 * @returns what to print and the exit code; never rejects.
 */
export async function runHook(host: HookHost, stdin: string, options: RunHookOptions = {}): Promise<HookOutput> {
  let eventName: string | null = null;
  try {
    const env = options.env ?? process.env;
    if (stdin.length > MAX_HOOK_PAYLOAD) return unreadable(host, `a payload over ${MAX_HOOK_PAYLOAD} characters`, null);
    let raw: unknown;
    try {
      raw = JSON.parse(stdin);
    } catch (error) {
      return unreadable(host, `not JSON: ${(error as Error).message}`, null);
    }
    const codec = codecForPayload(host, raw);
    let payload;
    try {
      payload = codec.read(raw);
    } catch (error) {
      if (error instanceof HookPayloadError) return unreadable(codec.host, error.message, error.eventName);
      throw error;
    }
    eventName = payload.eventName;
    const gate: HookGateOptions = {
      stateDir: options.stateDir ?? hookStateDirectory(env),
      confirmDestructive: env.PULSE_SAFETY_CONFIRM_DESTRUCTIVE === '1',
      ...(options.now === undefined ? {} : { now: options.now }),
      ...(options.lockTimeoutMs === undefined ? {} : { lockTimeoutMs: options.lockTimeoutMs }),
    };
    let answer: HookAnswer;
    try {
      const annotations = mcpAnnotationsOf(env);
      answer = await answerHook(payload, annotations === undefined ? gate : { ...gate, mcpAnnotations: annotations });
    } catch (error) {
      answer = failClosedAnswer(payload, 'HOOK_INTERNAL_ERROR', `the hook failed (${(error as Error).message ?? String(error)})`);
    }
    return codec.write(answer, payload.eventName);
  } catch (error) {
    try {
      return unreadable(host, `internal error: ${error instanceof Error ? error.message : String(error)}`, eventName);
    } catch {
      return lastResort(host, eventName ?? eventNameOf(stdin));
    }
  }
}
