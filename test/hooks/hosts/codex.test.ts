/**
 * Codex's codec on the payloads Codex 0.171.0 sends (their shapes as its
 * hooks received them in a real run, with this test's own values), and the
 * answers it writes.
 */
import { describe, expect, it } from 'vitest';
import { codexCodec, matchesCodex } from '../../../src/hooks/hosts/codex.js';
import { builtinCatalogs, createCallClassifier } from '../../../src/index.js';
import { HookPayloadError, type HookAnswer, type HookToolCall } from '../../../src/hooks/types.js';

const base = {
  session_id: '01a2370c-bce4-70f1-a5b3-b73b581fc0be',
  transcript_path: '/home/u/.codex/sessions/2026/12/02/rollout-2026-12-02T13-58-31-01a2370c-bce4-70f1-a5b3-b73b581fc0be.jsonl',
  cwd: '/home/u/repo',
  model: 'gpt-5.5',
  permission_mode: 'bypassPermissions',
};
const turn = { ...base, turn_id: '01a2370c-bea8-72a1-8de0-804e92f77b04' };
const PATCH = '*** Begin Patch\n*** Add File: y.txt\n+hello\n*** End Patch\n';

describe('reading Codex payloads', () => {
  it('SessionStart creates the session', () => {
    expect(codexCodec.read({ ...base, hook_event_name: 'SessionStart', source: 'startup' })).toEqual({
      host: 'codex',
      sessionId: base.session_id,
      eventName: 'SessionStart',
      event: { type: 'session.started', source: 'startup' },
      cwd: base.cwd,
      transcriptPath: base.transcript_path,
    });
  });

  it('PreToolUse is a check under the call id, in the catalog codex, in the payload cwd', () => {
    const payload = codexCodec.read({
      ...turn,
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'rm x.txt' },
      tool_use_id: 'call_0_0',
    });
    expect(payload.event).toEqual({
      type: 'tool.before',
      call: { id: 'call_0_0', name: 'Bash', input: { command: 'rm x.txt' }, catalog: 'codex', cwd: base.cwd },
    });
  });

  it("the catalog reads Bash's command and apply_patch's files in the payload cwd", () => {
    const classifyHookCall = (call: HookToolCall) =>
      createCallClassifier((builtinCatalogs as Record<string, unknown>)[call.catalog])(call.name, call.input, { cwd: call.cwd! });
    const callOf = (tool_name: string, tool_input: unknown) =>
      (codexCodec.read({ ...turn, hook_event_name: 'PreToolUse', tool_name, tool_input, tool_use_id: 'c' }).event as { call: HookToolCall })
        .call;
    expect(classifyHookCall(callOf('Bash', { command: 'rm x.txt' }))).toMatchObject({ kind: 'write', targets: ['/home/u/repo/x.txt'] });
    expect(classifyHookCall(callOf('Bash', { command: 'cat x.txt' }))).toMatchObject({ kind: 'read', targets: ['/home/u/repo/x.txt'] });
    expect(classifyHookCall(callOf('apply_patch', { command: PATCH }))).toMatchObject({ kind: 'write', targets: ['/home/u/repo/y.txt'] });
    expect(classifyHookCall(callOf('mcp__fs__write_file', { path: '/tmp/a' }))).toMatchObject({ kind: 'write' });
  });

  it('PostToolUse records the response; Bash is a success whatever its output says', () => {
    const post = (tool_name: string, tool_input: unknown, tool_response: unknown) =>
      codexCodec.read({ ...turn, hook_event_name: 'PostToolUse', tool_name, tool_input, tool_response, tool_use_id: 'call_1_2' }).event;
    expect(post('Bash', { command: 'ls' }, 'x.txt\n')).toEqual({
      type: 'tool.after',
      call: { id: 'call_1_2', name: 'Bash', input: { command: 'ls' }, catalog: 'codex', cwd: base.cwd },
      outcome: 'success',
      result: 'x.txt\n',
    });
    // `false` exits 1 and Codex 0.171.0 sends only its (empty) output.
    expect(post('Bash', { command: 'false' }, '')).toMatchObject({ outcome: 'success', result: '' });
    expect(post('Bash', { command: 'printf "Exit code: 1\\n"' }, 'Exit code: 1\n')).toMatchObject({ outcome: 'success' });
  });

  it("apply_patch's own exit code line, and an MCP isError, are failures", () => {
    const post = (tool_name: string, tool_response: unknown) =>
      codexCodec.read({
        ...turn,
        hook_event_name: 'PostToolUse',
        tool_name,
        tool_input: { command: PATCH },
        tool_response,
        tool_use_id: 'p',
      }).event;
    expect(
      post('apply_patch', 'Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nA y.txt\n'),
    ).toMatchObject({
      outcome: 'success',
    });
    expect(post('apply_patch', 'Exit code: 1\nWall time: 0 seconds\nOutput:\napply_patch verification failed: x\n')).toMatchObject({
      outcome: 'error',
    });
    expect(post('mcp__fs__write_file', { content: [{ type: 'text', text: 'denied' }], isError: true })).toMatchObject({ outcome: 'error' });
    expect(post('mcp__fs__write_file', { content: [{ type: 'text', text: 'ok' }] })).toMatchObject({ outcome: 'success' });
  });

  it('Stop is the stop, with stop_hook_active and the last message', () => {
    expect(codexCodec.read({ ...turn, hook_event_name: 'Stop', stop_hook_active: false, last_assistant_message: 'done' }).event).toEqual({
      type: 'agent.stopping',
      active: false,
      lastMessage: 'done',
    });
    expect(codexCodec.read({ ...turn, hook_event_name: 'Stop', stop_hook_active: true, last_assistant_message: null }).event).toEqual({
      type: 'agent.stopping',
      active: true,
    });
  });

  it('other events are ignored by name', () => {
    for (const name of ['UserPromptSubmit', 'PermissionRequest', 'SubagentStart', 'SubagentStop', 'PreCompact', 'PostCompact']) {
      expect(codexCodec.read({ ...turn, hook_event_name: name }).event).toEqual({ type: 'ignored', name });
    }
  });

  it('a null transcript path is left out', () => {
    expect(codexCodec.read({ ...base, transcript_path: null, hook_event_name: 'SessionStart' })).not.toHaveProperty('transcriptPath');
  });

  it('a payload without a session id, an event name or a tool name is refused', () => {
    expect(() => codexCodec.read([])).toThrow(HookPayloadError);
    expect(() => codexCodec.read({ ...turn })).toThrow(/hook_event_name/);
    expect(() => codexCodec.read({ ...turn, session_id: 3, hook_event_name: 'PreToolUse' })).toThrow(/session_id/);
    expect(() => codexCodec.read({ ...turn, hook_event_name: 'PreToolUse', tool_input: {} })).toThrow(/without a tool_name/);
  });
});

describe("telling Codex's payloads from other hosts'", () => {
  it('matches by turn_id, and SessionStart by its model and rollout transcript', () => {
    expect(matchesCodex({ ...turn, hook_event_name: 'PreToolUse', tool_name: 'Bash' })).toBe(true);
    expect(matchesCodex({ ...base, hook_event_name: 'SessionStart', source: 'startup' })).toBe(true);
  });

  it("does not match Claude Code's or Gemini CLI's payloads", () => {
    const claude = {
      session_id: 's',
      transcript_path: '/home/u/.claude/projects/-w/s.jsonl',
      cwd: '/w',
      permission_mode: 'default',
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_use_id: 'toolu_1',
    };
    expect(matchesCodex(claude)).toBe(false);
    expect(matchesCodex({ ...claude, hook_event_name: 'SessionStart', model: 'claude-opus' })).toBe(false);
    expect(matchesCodex({ session_id: 's', cwd: '/w', hook_event_name: 'BeforeTool', timestamp: '2026-12-02T14:00:36.674Z' })).toBe(false);
    expect(matchesCodex({ ...turn, session_id: '', hook_event_name: 'Stop' })).toBe(false);
  });
});

describe('writing answers for Codex', () => {
  const reason = 'FSM_BLOCKED: a write needs its target read first. It clears once "/w/x.txt" has been read.';

  it('allow and continue are silence, exit 0 (Codex treats permissionDecision allow as a failed hook)', () => {
    for (const event of ['PreToolUse', 'PostToolUse', 'Stop', 'SessionStart']) {
      expect(codexCodec.write({ type: 'allow', kind: 'read' }, event)).toEqual({ stdout: '', stderr: '', exitCode: 0 });
      expect(codexCodec.write({ type: 'continue' }, event)).toEqual({ stdout: '', stderr: '', exitCode: 0 });
    }
  });

  it('deny, and ask (unsupported in Codex: it would run the call), are a PreToolUse deny with the reason', () => {
    const denied = {
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason },
    };
    const deny = codexCodec.write({ type: 'deny', reason, code: 'FSM_BLOCKED', rule: 'no-target' }, 'PreToolUse');
    expect(deny.exitCode).toBe(0);
    expect(JSON.parse(deny.stdout)).toEqual(denied);
    expect(JSON.parse(codexCodec.write({ type: 'ask', reason, rule: 'needs-confirmation' }, 'PreToolUse').stdout)).toEqual(denied);
    expect(JSON.parse(codexCodec.write({ type: 'deny', reason, code: 'HOOK_PAYLOAD_INVALID' }, null).stdout)).toEqual(denied);
  });

  it('a deny never has an empty reason (Codex fails such a hook open)', () => {
    const output = JSON.parse(codexCodec.write({ type: 'deny', reason: ' ', code: 'FSM_BLOCKED' }, 'PreToolUse').stdout);
    expect(output.hookSpecificOutput.permissionDecisionReason).toMatch(/FSM_BLOCKED/);
  });

  it('block-stop is decision block on Stop', () => {
    const output = codexCodec.write({ type: 'block-stop', reason, code: 'FSM_BLOCKED' }, 'Stop');
    expect(output.exitCode).toBe(0);
    expect(JSON.parse(output.stdout)).toEqual({ decision: 'block', reason });
    expect(codexCodec.write({ type: 'block-stop', reason, code: 'FSM_BLOCKED' }, 'SessionStart').stdout).toBe('');
  });

  it('never writes a field Codex marks as a failed hook (which runs the call)', () => {
    const unsupported = ['continue', 'stopReason', 'suppressOutput', 'systemMessage'];
    const answers: HookAnswer[] = [
      { type: 'allow' },
      { type: 'continue' },
      { type: 'deny', reason, code: 'HOOK_STATE_UNREADABLE' },
      { type: 'ask', reason },
      { type: 'block-stop', reason, code: 'HOOK_STATE_LOCKED' },
    ];
    for (const answer of answers) {
      for (const event of ['PreToolUse', 'PostToolUse', 'Stop', null]) {
        const output = codexCodec.write(answer, event);
        expect(output.exitCode).toBe(0);
        if (output.stdout === '') continue;
        const json = JSON.parse(output.stdout);
        for (const field of unsupported) expect(json).not.toHaveProperty(field);
        if (json.hookSpecificOutput) expect(json.hookSpecificOutput.permissionDecision).toBe('deny');
        if (json.decision !== undefined) expect(json.decision).toBe('block');
      }
    }
  });
});
