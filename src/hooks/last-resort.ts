/**
 * The refusal a hook prints when nothing else works (its own module failed
 * to load, or its codec threw): a write refused in the host's simplest deny
 * format, on exit 0, which every host reads as a decision. No imports, so
 * it loads when nothing else does.
 *
 * Spec: issue 25 item 3 (fail closed, never by accident); AGENT_HOOKS.md §1.
 */
import type { HookHost, HookOutput } from './types.js';

/** The words of a last-resort refusal. */
const REASON =
  'This call was not run (HOOK_INTERNAL_ERROR): the safety hook failed. Reads are still allowed; run `pulse-safety hook status` to see why.';

/** A before-tool refusal of `host` (exit 0, one line of JSON on stdout). */
export function lastResort(host: HookHost): HookOutput {
  let answer: unknown;
  switch (host) {
    case 'claude-code':
    case 'codex':
      answer = { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: REASON } };
      break;
    case 'gemini-cli':
      answer = { decision: 'deny', reason: REASON };
      break;
    case 'cursor':
      answer = { permission: 'deny', user_message: REASON, agent_message: REASON };
      break;
    case 'copilot':
      answer = { permissionDecision: 'deny', permissionDecisionReason: REASON };
      break;
  }
  return { stdout: JSON.stringify(answer) + '\n', stderr: '', exitCode: 0 };
}
