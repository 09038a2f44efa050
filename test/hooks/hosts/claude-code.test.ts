/**
 * Claude Code's hook codec: payloads (shaped as Claude Code 2.1.332 sends
 * them) read into the gate's events, the gate's answers written in Claude
 * Code's format for the event they answer, malformed payloads refused with
 * HookPayloadError, and the payloads of the other hosts that read
 * `.claude/settings.json` (VS Code, Copilot CLI, Cursor) not taken for
 * Claude Code's.
 *
 * Issue 25 items 1 and 3; AGENT_HOOKS.md §1.1, §1.4–1.6.
 */
import { describe, expect, it } from 'vitest';
import { claudeCodeCodec, isClaudeCodeToolName, matchesClaudeCode } from '../../../src/hooks/hosts/claude-code.js';
import { HookPayloadError, type HookAnswer } from '../../../src/hooks/types.js';

const SESSION = 'edcf5abf-5a0c-46b1-86f1-8dec536746d6';
const TRANSCRIPT = `/home/u/.claude/projects/-work-proj/${SESSION}.jsonl`;

/** The fields every Claude Code 2.1.332 payload carries, plus the event's own. */
function payload(event: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    session_id: SESSION,
    transcript_path: TRANSCRIPT,
    cwd: '/home/dev/proj',
    prompt_id: 'ec0b77d6-3fdd-4304-bf6f-7bd30acb97d4',
    permission_mode: 'acceptEdits',
    effort: { level: 'medium' },
    hook_event_name: event,
    ...fields,
  };
}

const bash = { tool_name: 'Bash', tool_input: { command: 'rm -rf ~/x', description: 'rm' }, tool_use_id: 'toolu_01' };

describe('claudeCodeCodec.read', () => {
  it('reads PreToolUse as tool.before with the call id, the cwd and the claude-code catalog', () => {
    const read = claudeCodeCodec.read(payload('PreToolUse', bash));
    expect(read).toEqual({
      host: 'claude-code',
      sessionId: SESSION,
      eventName: 'PreToolUse',
      cwd: '/home/dev/proj',
      transcriptPath: TRANSCRIPT,
      event: {
        type: 'tool.before',
        call: {
          id: 'toolu_01',
          name: 'Bash',
          input: { command: 'rm -rf ~/x', description: 'rm' },
          catalog: 'claude-code',
          cwd: '/home/dev/proj',
        },
      },
    });
  });

  it('keeps an MCP tool its mcp__server__tool name, under the claude-code catalog', () => {
    const read = claudeCodeCodec.read(
      payload('PreToolUse', { tool_name: 'mcp__fs__write_file', tool_input: { path: '/x' }, tool_use_id: 'toolu_09' }),
    );
    expect(read.event).toMatchObject({
      type: 'tool.before',
      call: { name: 'mcp__fs__write_file', catalog: 'claude-code', id: 'toolu_09' },
    });
  });

  it('reads a call without a tool_use_id with no id, so the gate correlates it by name and input', () => {
    const read = claudeCodeCodec.read(payload('PreToolUse', { tool_name: 'Read', tool_input: { file_path: '/etc/hostname' } }));
    expect(read.event.type).toBe('tool.before');
    if (read.event.type === 'tool.before') expect('id' in read.event.call).toBe(false);
  });

  it('reads PostToolUse as a success whose result is tool_response', () => {
    const response = { stdout: 'x', stderr: '', interrupted: false, isImage: false, noOutputExpected: false };
    const read = claudeCodeCodec.read(payload('PostToolUse', { ...bash, tool_response: response, duration_ms: 548 }));
    expect(read.event).toEqual({
      type: 'tool.after',
      call: { id: 'toolu_01', name: 'Bash', input: bash.tool_input, catalog: 'claude-code', cwd: '/home/dev/proj' },
      outcome: 'success',
      result: response,
    });
  });

  it('reads PostToolUseFailure as an error whose result is the error text', () => {
    const read = claudeCodeCodec.read(
      payload('PostToolUseFailure', { ...bash, error: 'Exit code 1', is_interrupt: false, duration_ms: 383 }),
    );
    expect(read.event).toMatchObject({ type: 'tool.after', outcome: 'error', result: 'Exit code 1', call: { id: 'toolu_01' } });
  });

  it('ignores PostToolBatch: each call of the batch was recorded by its own PostToolUse', () => {
    const batch = payload('PostToolBatch', { tool_calls: [{ ...bash, tool_response: 'PreToolUse:Bash hook error: no' }] });
    expect(claudeCodeCodec.read(batch).event).toEqual({ type: 'ignored', name: 'PostToolBatch' });
  });

  it('reads Stop and SubagentStop as agent.stopping with stop_hook_active and the last message', () => {
    const stop = claudeCodeCodec.read(
      payload('Stop', { stop_hook_active: false, last_assistant_message: 'all done', background_tasks: [], session_crons: [] }),
    );
    expect(stop.event).toEqual({ type: 'agent.stopping', active: false, lastMessage: 'all done' });
    const again = claudeCodeCodec.read(payload('SubagentStop', { stop_hook_active: true, agent_id: 'a1', agent_type: 'general-purpose' }));
    expect(again.event).toEqual({ type: 'agent.stopping', active: true });
  });

  it('reads only a true stop_hook_active as active', () => {
    expect(claudeCodeCodec.read(payload('Stop', { stop_hook_active: 'true' })).event).toEqual({ type: 'agent.stopping', active: false });
  });

  it('reads SessionStart and SessionEnd with their source and reason', () => {
    expect(claudeCodeCodec.read(payload('SessionStart', { source: 'startup' })).event).toEqual({
      type: 'session.started',
      source: 'startup',
    });
    expect(claudeCodeCodec.read(payload('SessionEnd', { reason: 'other' })).event).toEqual({ type: 'session.ended', reason: 'other' });
    expect(claudeCodeCodec.read(payload('SessionEnd')).event).toEqual({ type: 'session.ended' });
  });

  it('ignores the events the gate does not act on', () => {
    for (const name of ['UserPromptSubmit', 'PreCompact', 'Notification', 'StopFailure', 'PermissionRequest']) {
      expect(claudeCodeCodec.read(payload(name)).event).toEqual({ type: 'ignored', name });
    }
  });

  it('leaves out cwd and transcript path when the payload has none', () => {
    const read = claudeCodeCodec.read({
      session_id: SESSION,
      hook_event_name: 'PreToolUse',
      tool_name: 'Read',
      tool_input: { file_path: '/a' },
    });
    expect(read).not.toHaveProperty('cwd');
    expect(read).not.toHaveProperty('transcriptPath');
    if (read.event.type === 'tool.before') expect(read.event.call).not.toHaveProperty('cwd');
  });
});

describe('claudeCodeCodec.read refuses malformed payloads', () => {
  /** The HookPayloadError `read` throws for `value`. */
  function refusal(value: unknown): HookPayloadError {
    try {
      claudeCodeCodec.read(value);
    } catch (error) {
      if (error instanceof HookPayloadError) return error;
      throw error;
    }
    throw new Error(`read accepted ${JSON.stringify(value)}`);
  }

  it.each([null, 'PreToolUse', 42, [], [payload('PreToolUse', bash)]])('not an object: %j', (value) => {
    const error = refusal(value);
    expect(error.code).toBe('HOOK_PAYLOAD_INVALID');
    expect(error.eventName).toBeNull();
  });

  it('no event name, or one that is not a non-empty string', () => {
    for (const name of [undefined, '', 7]) {
      const { hook_event_name: _, ...rest } = payload('PreToolUse', bash);
      expect(refusal(name === undefined ? rest : { ...rest, hook_event_name: name }).eventName).toBeNull();
    }
  });

  it('no session id, keeping the event name so the answer fits the event', () => {
    for (const id of [undefined, '', 12, null]) {
      const error = refusal({ ...payload('Stop', { stop_hook_active: false }), session_id: id });
      expect(error.message).toMatch(/session_id/);
      expect(error.eventName).toBe('Stop');
    }
  });

  it('a tool event without a tool name', () => {
    for (const event of ['PreToolUse', 'PostToolUse', 'PostToolUseFailure']) {
      const error = refusal(payload(event, { tool_input: { command: 'ls' }, tool_use_id: 'toolu_01' }));
      expect(error.message).toMatch(/tool_name/);
      expect(error.eventName).toBe(event);
      expect(refusal(payload(event, { tool_name: '', tool_input: {} })).eventName).toBe(event);
    }
  });

  it('a tool event whose tool_input is not an object', () => {
    for (const input of [undefined, null, 'rm -rf /', ['rm']]) {
      expect(refusal(payload('PreToolUse', { tool_name: 'Bash', tool_input: input })).message).toMatch(/tool_input/);
    }
  });
});

describe('claudeCodeCodec.write', () => {
  const deny: HookAnswer = {
    type: 'deny',
    code: 'FSM_BLOCKED',
    rule: 'no-target',
    reason: "FSM_BLOCKED: FSM blocked tool 'Bash' (write) in state RESOLVING; read '~/x' first",
  };

  it('allow and continue are silence with exit 0 (never permissionDecision "allow")', () => {
    for (const event of ['PreToolUse', 'PostToolUse', 'Stop', 'SessionStart', null]) {
      expect(claudeCodeCodec.write({ type: 'allow', kind: 'read' }, event)).toEqual({ stdout: '', stderr: '', exitCode: 0 });
      expect(claudeCodeCodec.write({ type: 'continue' }, event)).toEqual({ stdout: '', stderr: '', exitCode: 0 });
    }
  });

  it('deny before a tool: permissionDecision "deny" with the reason', () => {
    const output = claudeCodeCodec.write(deny, 'PreToolUse');
    expect(output.exitCode).toBe(0);
    expect(JSON.parse(output.stdout)).toEqual({
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: deny.reason },
    });
  });

  it('ask before a tool: permissionDecision "ask" with the reason', () => {
    const output = claudeCodeCodec.write({ type: 'ask', reason: 'confirm: rm -rf build', rule: 'needs-confirmation' }, 'PreToolUse');
    expect(output.exitCode).toBe(0);
    expect(JSON.parse(output.stdout)).toEqual({
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'ask', permissionDecisionReason: 'confirm: rm -rf build' },
    });
  });

  it('an unreadable payload (no event name) is refused as a PreToolUse', () => {
    const output = claudeCodeCodec.write({ type: 'deny', code: 'HOOK_PAYLOAD_INVALID', reason: 'HOOK_PAYLOAD_INVALID: not JSON' }, null);
    expect(JSON.parse(output.stdout).hookSpecificOutput).toMatchObject({ hookEventName: 'PreToolUse', permissionDecision: 'deny' });
    expect(output.exitCode).toBe(0);
  });

  it('block-stop at Stop and SubagentStop: decision "block" with the reason', () => {
    for (const event of ['Stop', 'SubagentStop']) {
      const output = claudeCodeCodec.write({ type: 'block-stop', code: 'FSM_BLOCKED', reason: 'verify the write first' }, event);
      expect(output.exitCode).toBe(0);
      expect(JSON.parse(output.stdout)).toEqual({ decision: 'block', reason: 'verify the write first' });
    }
  });

  it('a deny at Stop (a corrupt state file) still refuses the stop in the Stop format', () => {
    const output = claudeCodeCodec.write(
      { type: 'deny', code: 'HOOK_STATE_UNREADABLE', reason: 'HOOK_STATE_UNREADABLE: state file corrupt' },
      'Stop',
    );
    expect(JSON.parse(output.stdout)).toEqual({ decision: 'block', reason: 'HOOK_STATE_UNREADABLE: state file corrupt' });
  });

  it('block-stop for a before-tool event refuses the call', () => {
    const output = claudeCodeCodec.write({ type: 'block-stop', code: 'HOOK_INTERNAL_ERROR', reason: 'HOOK_INTERNAL_ERROR' }, 'PreToolUse');
    expect(JSON.parse(output.stdout).hookSpecificOutput.permissionDecision).toBe('deny');
  });

  it('a refusal after a tool or at the session start names its own event and goes to the model as context', () => {
    for (const event of ['PostToolUse', 'PostToolUseFailure', 'SessionStart']) {
      const output = claudeCodeCodec.write({ type: 'deny', code: 'HOOK_STATE_UNREADABLE', reason: 'HOOK_STATE_UNREADABLE: x' }, event);
      expect(output.exitCode).toBe(0);
      expect(JSON.parse(output.stdout)).toEqual({
        hookSpecificOutput: { hookEventName: event, additionalContext: 'HOOK_STATE_UNREADABLE: x' },
      });
    }
  });

  it('a refusal at an event that must not block is silence with the reason on stderr', () => {
    for (const event of ['SessionEnd', 'UserPromptSubmit', 'PreCompact', 'PostToolBatch']) {
      const output = claudeCodeCodec.write(deny, event);
      expect(output).toEqual({ stdout: '', stderr: `${deny.reason}\n`, exitCode: 0 });
    }
  });

  it('never exits 1 or 2, whatever the answer and event', () => {
    const answers: HookAnswer[] = [
      deny,
      { type: 'ask', reason: 'r' },
      { type: 'block-stop', code: 'FSM_BLOCKED', reason: 'r' },
      { type: 'allow' },
      { type: 'continue' },
    ];
    const events = [
      null,
      'PreToolUse',
      'PostToolUse',
      'PostToolUseFailure',
      'PostToolBatch',
      'Stop',
      'SubagentStop',
      'SessionStart',
      'SessionEnd',
      'Other',
    ];
    for (const answer of answers) for (const event of events) expect(claudeCodeCodec.write(answer, event).exitCode).toBe(0);
  });
});

describe('matchesClaudeCode', () => {
  it('takes the payloads of Claude Code 2.1.332', () => {
    expect(matchesClaudeCode(payload('PreToolUse', bash))).toBe(true);
    expect(matchesClaudeCode(payload('PreToolUse', { tool_name: 'mcp__github__create_issue', tool_input: {} }))).toBe(true);
    expect(matchesClaudeCode(payload('PreToolUse', { tool_name: 'exit_plan_mode', tool_input: {} }))).toBe(true);
    expect(matchesClaudeCode(payload('Stop', { stop_hook_active: false }))).toBe(true);
    expect(matchesClaudeCode(payload('SessionStart', { source: 'startup' }))).toBe(true);
  });

  it('takes a PascalCase tool Claude Code added after the catalog (a write for the catalog)', () => {
    expect(matchesClaudeCode(payload('PreToolUse', { tool_name: 'SomeNewTool', tool_input: {} }))).toBe(true);
  });

  it('refuses VS Code agent mode payloads (camelCase ids, its own tool names)', () => {
    const vscode = {
      timestamp: '2026-06-03T10:00:00.000Z',
      cwd: '/home/dev/proj',
      sessionId: 'vs-1',
      hookEventName: 'PreToolUse',
      transcript_path: '/tmp/t.json',
      tool_name: 'editFiles',
      tool_input: { filePath: '/home/dev/proj/a.ts' },
      tool_use_id: 'call_1',
    };
    expect(matchesClaudeCode(vscode)).toBe(false);
    expect(matchesClaudeCode({ ...vscode, session_id: 'vs-1', hook_event_name: 'PreToolUse' })).toBe(false);
  });

  it('refuses Copilot CLI payloads, camelCase or its snake_case form for PascalCase events', () => {
    expect(matchesClaudeCode({ sessionId: 's', timestamp: 1767225600000, cwd: '/p', toolName: 'bash', toolArgs: '{"command":"ls"}' })).toBe(
      false,
    );
    const snake = {
      session_id: 's',
      hook_event_name: 'PreToolUse',
      timestamp: '2026-01-01T00:00:00Z',
      cwd: '/p',
      tool_name: 'bash',
      tool_input: { command: 'ls' },
    };
    expect(matchesClaudeCode(snake)).toBe(false);
    const { timestamp: _, ...withoutTime } = snake;
    expect(matchesClaudeCode(withoutTime)).toBe(false); // `bash` is not a Claude Code tool
    expect(matchesClaudeCode({ ...withoutTime, tool_name: 'view' })).toBe(false);
  });

  it('refuses Cursor payloads', () => {
    const cursor = {
      conversation_id: 'c1',
      generation_id: 'g1',
      hook_event_name: 'preToolUse',
      cursor_version: '1.7.0',
      workspace_roots: ['/p'],
      tool_name: 'Shell',
      tool_input: { command: 'ls' },
      tool_use_id: 't1',
    };
    expect(matchesClaudeCode(cursor)).toBe(false);
    expect(matchesClaudeCode({ ...cursor, session_id: 'c1' })).toBe(false);
    expect(matchesClaudeCode(payload('PreToolUse', { tool_name: 'Shell', tool_input: { command: 'ls' } }))).toBe(false);
  });

  it('refuses what is no payload at all', () => {
    for (const value of [
      null,
      undefined,
      'x',
      1,
      [],
      {},
      { session_id: '', hook_event_name: 'Stop' },
      { session_id: 's' },
      payload('PreToolUse', { tool_name: 3 }),
    ]) {
      expect(matchesClaudeCode(value)).toBe(false);
    }
  });

  it('knows Claude Code tool names from the other hosts', () => {
    for (const name of ['Bash', 'Read', 'Write', 'Edit', 'WebFetch', 'PowerShell', 'mcp__fs__read_file', 'propose_skills'])
      expect(isClaudeCodeToolName(name)).toBe(true);
    for (const name of [
      'bash',
      'create',
      'view',
      'runTerminalCommand',
      'create_file',
      'Shell',
      'Delete',
      'MCP:read',
      'mcp__',
      'run_shell_command',
    ]) {
      expect(isClaudeCodeToolName(name)).toBe(false);
    }
  });
});
