/**
 * The refusal a hook prints when nothing else works (its own module failed
 * to load, or its codec threw): a write refused, or the stop refused, in the
 * host's simplest format for the event, on exit 0, which every host reads as
 * a decision. No imports, so it loads when nothing else does.
 *
 * Spec: issue 25 item 3 (fail closed, never by accident); AGENT_HOOKS.md §1.
 */
import type { HookHost, HookOutput } from './types.js';

/** The words of a last-resort refusal. */
const REASON =
  'This call was not run (HOOK_INTERNAL_ERROR): the safety hook failed. Reads are still allowed; run `pulse-safety hook status` to see why.';

/** The words of a last-resort refusal of the stop. */
const STOP_REASON =
  'The turn may not end yet (HOOK_INTERNAL_ERROR): the safety hook failed, so it cannot tell whether a change is unverified.';

/** The hosts' names of the events that end a turn (the stop). */
const STOP_EVENTS = new Set(['Stop', 'SubagentStop', 'AfterAgent', 'stop', 'subagentStop', 'agentStop']);

/**
 * The event name a payload's text gives (`hook_event_name`, `hookEventName`),
 * read without trusting it; null when there is none. Never throws.
 */
export function eventNameOf(text: string): string | null {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null) return null;
    const record = value as Record<string, unknown>;
    const name = record.hook_event_name ?? record.hookEventName;
    if (typeof name === 'string') return name;
    // Copilot CLI's camelCase payloads carry no event name; its stop payloads carry `stop_hook_active`.
    return 'stop_hook_active' in record || 'stopHookActive' in record ? 'agentStop' : null;
  } catch {
    return null;
  }
}

/**
 * A refusal of `host` for the event `eventName` (null: unknown, answered as
 * a before-tool refusal): exit 0, one line of JSON on stdout. For a stop
 * event, the stop refused in the host's format (Cursor, which cannot refuse
 * a stop, gets the reason as its follow-up message).
 */
export function lastResort(host: HookHost, eventName: string | null = null): HookOutput {
  const stop = eventName !== null && STOP_EVENTS.has(eventName);
  let answer: unknown;
  switch (host) {
    case 'claude-code':
    case 'codex':
      answer = stop
        ? { decision: 'block', reason: STOP_REASON }
        : { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: REASON } };
      break;
    case 'gemini-cli':
      answer = { decision: 'deny', reason: stop ? STOP_REASON : REASON };
      break;
    case 'cursor':
      answer = stop ? { followup_message: STOP_REASON } : { permission: 'deny', user_message: REASON, agent_message: REASON };
      break;
    case 'copilot':
      answer = stop
        ? { decision: 'block', reason: STOP_REASON }
        : {
            permissionDecision: 'deny',
            permissionDecisionReason: REASON,
            hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: REASON },
          };
      break;
  }
  return { stdout: JSON.stringify(answer) + '\n', stderr: '', exitCode: 0 };
}
