/**
 * The last-resort refusal (src/hooks/last-resort.ts): for every host, one
 * line of JSON on exit 0 that refuses a write, or the stop for a stop event,
 * in the format that host reads.
 */
import { describe, expect, it } from 'vitest';
import { eventNameOf, lastResort } from '../../src/hooks/last-resort.js';
import { HOOK_HOSTS } from '../../src/hooks/types.js';

describe('lastResort', () => {
  it.each(HOOK_HOSTS)('%s: a before-tool refusal on exit 0, in one JSON line naming HOOK_INTERNAL_ERROR', (host) => {
    const output = lastResort(host);
    expect(output.exitCode).toBe(0);
    expect(output.stdout.endsWith('\n')).toBe(true);
    const answer = JSON.parse(output.stdout) as Record<string, unknown>;
    const text = JSON.stringify(answer);
    expect(text).toContain('HOOK_INTERNAL_ERROR');
    expect(text).toMatch(/"(permissionDecision|decision|permission)":"deny"/);
  });

  it('refuses the stop in the stop format of each host that can refuse it, and sends Cursor the reason as a follow-up', () => {
    expect(JSON.parse(lastResort('claude-code', 'Stop').stdout)).toMatchObject({ decision: 'block' });
    expect(JSON.parse(lastResort('claude-code', 'SubagentStop').stdout)).toMatchObject({ decision: 'block' });
    expect(JSON.parse(lastResort('codex', 'Stop').stdout)).toMatchObject({ decision: 'block' });
    expect(JSON.parse(lastResort('gemini-cli', 'AfterAgent').stdout)).toMatchObject({ decision: 'deny' });
    expect(JSON.parse(lastResort('copilot', 'agentStop').stdout)).toMatchObject({ decision: 'block' });
    expect(JSON.parse(lastResort('cursor', 'stop').stdout)).toHaveProperty('followup_message');
    // A before-tool event keeps the before-tool format.
    expect(JSON.parse(lastResort('claude-code', 'PreToolUse').stdout)).toHaveProperty('hookSpecificOutput.permissionDecision', 'deny');
  });

  it('reads the event name of a payload without trusting it', () => {
    expect(eventNameOf('{"hook_event_name":"Stop","session_id":"s"}')).toBe('Stop');
    expect(eventNameOf('{"hookEventName":"PreToolUse"}')).toBe('PreToolUse');
    expect(eventNameOf('{"sessionId":"s","stop_hook_active":false}')).toBe('agentStop');
    expect(eventNameOf('{"sessionId":"s","toolName":"bash"}')).toBeNull();
    expect(eventNameOf('not json')).toBeNull();
    expect(eventNameOf('[1]')).toBeNull();
    expect(eventNameOf('')).toBeNull();
  });
});
