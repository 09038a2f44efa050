/**
 * Reading hook payloads' fields, shared by the host codecs: own properties
 * only (an inherited `toString` or a `__proto__` key is never data).
 *
 * Spec: issue 25 item 1; AGENT_HOOKS.md §1.
 */
import { isRecord, own } from '../../util/own.js';

/** A payload's fields. */
export type Fields = Record<string, unknown>;

/** The own string field `name`; undefined when absent or not a string. */
export function stringField(fields: Fields, name: string): string | undefined {
  const value = own(fields, name);
  return typeof value === 'string' ? value : undefined;
}

/**
 * The snake_case base every Claude-style payload has (Claude Code, Codex,
 * Gemini CLI): a non-empty `session_id` and a `hook_event_name`; null when
 * `payload` is not an object or lacks either.
 */
export function snakeCaseBase(payload: unknown): { fields: Fields; sessionId: string; eventName: string } | null {
  if (!isRecord(payload)) return null;
  const sessionId = stringField(payload, 'session_id');
  const eventName = stringField(payload, 'hook_event_name');
  if (sessionId === undefined || sessionId === '' || eventName === undefined) return null;
  return { fields: payload, sessionId, eventName };
}
