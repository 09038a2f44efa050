/**
 * Gemini CLI's codec on the payloads Gemini CLI 0.61.0 sends (their shapes
 * as its hooks received them in a real run, with this test's own values),
 * and the answers it writes.
 */
import { describe, expect, it } from 'vitest';
import { geminiCliCodec, matchesGeminiCli } from '../../../src/hooks/hosts/gemini-cli.js';
import { HookPayloadError, type HookAnswer } from '../../../src/hooks/types.js';

const base = {
  session_id: '1ab16e1e-65bb-4c2a-97ae-f362184f573e',
  transcript_path: '/home/u/.gemini/tmp/proj/chats/session-2026-12-02T14-00-1ab16e1e.jsonl',
  cwd: '/home/u/repo',
  timestamp: '2026-12-02T14:00:36.674Z',
};

describe('reading Gemini CLI payloads', () => {
  it('SessionStart and SessionEnd create and end the session', () => {
    const start = geminiCliCodec.read({ ...base, hook_event_name: 'SessionStart', source: 'startup' });
    expect(start).toEqual({
      host: 'gemini-cli',
      sessionId: base.session_id,
      eventName: 'SessionStart',
      event: { type: 'session.started', source: 'startup' },
      cwd: base.cwd,
      transcriptPath: base.transcript_path,
    });
    expect(geminiCliCodec.read({ ...base, hook_event_name: 'SessionEnd', reason: 'exit' }).event).toEqual({
      type: 'session.ended',
      reason: 'exit',
    });
  });

  it('BeforeTool is a check with no call id, in the catalog gemini-cli, in the payload cwd', () => {
    const payload = geminiCliCodec.read({
      ...base,
      hook_event_name: 'BeforeTool',
      tool_name: 'read_file',
      tool_input: { file_path: 'x.txt' },
    });
    expect(payload.event).toEqual({
      type: 'tool.before',
      call: { name: 'read_file', input: { file_path: 'x.txt' }, catalog: 'gemini-cli', cwd: base.cwd },
    });
    expect('id' in (payload.event as { call: object }).call).toBe(false);
  });

  it('an MCP tool keeps its Gemini name', () => {
    const payload = geminiCliCodec.read({
      ...base,
      hook_event_name: 'BeforeTool',
      tool_name: 'mcp_fs_write_file',
      tool_input: { path: '/tmp/a' },
      mcp_context: { server_name: 'fs', tool_name: 'write_file', command: 'npx' },
    });
    expect(payload.event).toMatchObject({ type: 'tool.before', call: { name: 'mcp_fs_write_file', catalog: 'gemini-cli' } });
  });

  it('AfterTool records the text the model got; an error is a failure', () => {
    const ok = geminiCliCodec.read({
      ...base,
      hook_event_name: 'AfterTool',
      tool_name: 'read_file',
      tool_input: { file_path: 'x.txt' },
      tool_response: { llmContent: 'x', returnDisplay: '' },
    });
    expect(ok.event).toEqual({
      type: 'tool.after',
      call: { name: 'read_file', input: { file_path: 'x.txt' }, catalog: 'gemini-cli', cwd: base.cwd },
      outcome: 'success',
      result: 'x',
    });
    const failed = geminiCliCodec.read({
      ...base,
      hook_event_name: 'AfterTool',
      tool_name: 'read_file',
      tool_input: { file_path: 'nope.txt' },
      tool_response: {
        llmContent: 'File not found',
        returnDisplay: 'File not found',
        error: { message: 'File not found', type: 'file_not_found' },
      },
    });
    expect(failed.event).toMatchObject({ type: 'tool.after', outcome: 'error' });
  });

  it("a shell command that exited non-zero is a failure only when both of Gemini CLI's marks say so", () => {
    const shell = (llmContent: string, returnDisplay: string) =>
      geminiCliCodec.read({
        ...base,
        hook_event_name: 'AfterTool',
        tool_name: 'run_shell_command',
        tool_input: { command: 'false' },
        tool_response: { llmContent, returnDisplay },
      }).event;
    const real = '<untrusted_context>\nOutput: (empty)\nExit Code: 1\nProcess Group PGID: 17641\n</untrusted_context>';
    expect(shell(real, 'Command exited with code: 1')).toMatchObject({ outcome: 'error', result: real });
    // The command's own output printing one of the marks does not make a success a failure.
    expect(shell('<untrusted_context>\nOutput: Exit Code: 1\nProcess Group PGID: 1\n</untrusted_context>', 'Exit Code: 1')).toMatchObject({
      outcome: 'success',
    });
    expect(
      shell(
        '<untrusted_context>\nOutput: Command exited with code: 1\nProcess Group PGID: 1\n</untrusted_context>',
        'Command exited with code: 1',
      ),
    ).toMatchObject({
      outcome: 'success',
    });
    expect(shell('<untrusted_context>\nOutput: x.txt\nProcess Group PGID: 17636\n</untrusted_context>', 'x.txt')).toMatchObject({
      outcome: 'success',
    });
  });

  it('AfterAgent is the stop, with stop_hook_active and the response', () => {
    const first = geminiCliCodec.read({
      ...base,
      hook_event_name: 'AfterAgent',
      prompt: 'list files',
      prompt_response: 'done',
      stop_hook_active: false,
    });
    expect(first.event).toEqual({ type: 'agent.stopping', active: false, lastMessage: 'done' });
    const again = geminiCliCodec.read({
      ...base,
      hook_event_name: 'AfterAgent',
      prompt: 'x',
      prompt_response: 'done\ndone',
      stop_hook_active: true,
    });
    expect(again.event).toEqual({ type: 'agent.stopping', active: true, lastMessage: 'done\ndone' });
  });

  it('other events are ignored by name', () => {
    for (const name of ['BeforeAgent', 'BeforeModel', 'AfterModel', 'BeforeToolSelection', 'PreCompress', 'Notification']) {
      expect(geminiCliCodec.read({ ...base, hook_event_name: name }).event).toEqual({ type: 'ignored', name });
    }
  });

  it('a payload without a session id, an event name or a tool name is refused, naming the event where it can', () => {
    expect(() => geminiCliCodec.read(null)).toThrow(HookPayloadError);
    expect(() => geminiCliCodec.read({ ...base, hook_event_name: undefined })).toThrow(HookPayloadError);
    const noSession = (() => {
      try {
        geminiCliCodec.read({ ...base, session_id: '', hook_event_name: 'BeforeTool', tool_name: 'x' });
      } catch (error) {
        return error as HookPayloadError;
      }
    })();
    expect(noSession).toBeInstanceOf(HookPayloadError);
    expect(noSession?.eventName).toBe('BeforeTool');
    expect(() => geminiCliCodec.read({ ...base, hook_event_name: 'BeforeTool', tool_input: {} })).toThrow(/without a tool_name/);
    expect(() => geminiCliCodec.read({ ...base, hook_event_name: 'AfterTool', tool_name: '  ' })).toThrow(HookPayloadError);
  });
});

describe("telling Gemini CLI's payloads from other hosts'", () => {
  it("matches Gemini's events, and its session events by their ISO timestamp", () => {
    expect(matchesGeminiCli({ ...base, hook_event_name: 'BeforeTool', tool_name: 'read_file' })).toBe(true);
    expect(matchesGeminiCli({ ...base, hook_event_name: 'AfterAgent' })).toBe(true);
    expect(matchesGeminiCli({ ...base, hook_event_name: 'SessionStart', source: 'startup' })).toBe(true);
  });

  it("does not match Claude Code's, Codex's or Copilot's payloads", () => {
    const claude = {
      session_id: 's',
      transcript_path: '/x.jsonl',
      cwd: '/w',
      permission_mode: 'default',
      hook_event_name: 'SessionStart',
      source: 'startup',
    };
    expect(matchesGeminiCli(claude)).toBe(false);
    expect(matchesGeminiCli({ ...claude, hook_event_name: 'PreToolUse', tool_name: 'Bash' })).toBe(false);
    const codex = { ...claude, model: 'gpt-5.5', turn_id: 't', hook_event_name: 'Stop', timestamp: '2026-12-02T14:00:36.674Z' };
    expect(matchesGeminiCli(codex)).toBe(false);
    expect(matchesGeminiCli({ sessionId: 's', timestamp: 1796220036674, hookEventName: 'sessionStart' })).toBe(false);
    expect(matchesGeminiCli({ ...base, session_id: '', hook_event_name: 'BeforeTool' })).toBe(false);
    expect(matchesGeminiCli('BeforeTool')).toBe(false);
  });
});

describe('writing answers for Gemini CLI', () => {
  const reason = 'FSM_BLOCKED: a write needs its target read first. It clears once "/w/x.txt" has been read.';
  const parse = (answer: HookAnswer, event: string | null) => {
    const output = geminiCliCodec.write(answer, event);
    expect(output.exitCode).toBe(0);
    return JSON.parse(output.stdout) as Record<string, unknown>;
  };

  it('allow and continue are an empty object, exit 0', () => {
    expect(parse({ type: 'allow', kind: 'read' }, 'BeforeTool')).toEqual({});
    expect(parse({ type: 'continue' }, 'AfterTool')).toEqual({});
    expect(parse({ type: 'continue' }, 'AfterAgent')).toEqual({});
  });

  it('deny is decision deny with the reason; an unreadable payload is answered as for BeforeTool', () => {
    expect(parse({ type: 'deny', reason, code: 'FSM_BLOCKED', rule: 'no-target' }, 'BeforeTool')).toEqual({ decision: 'deny', reason });
    expect(parse({ type: 'deny', reason: 'HOOK_PAYLOAD_INVALID: x', code: 'HOOK_PAYLOAD_INVALID' }, null)).toEqual({
      decision: 'deny',
      reason: 'HOOK_PAYLOAD_INVALID: x',
    });
  });

  it("ask is Gemini CLI's ask, with the reason shown", () => {
    expect(parse({ type: 'ask', reason, rule: 'needs-confirmation' }, 'BeforeTool')).toEqual({
      decision: 'ask',
      reason,
      systemMessage: reason,
    });
  });

  it('block-stop refuses the AfterAgent; elsewhere it is only shown', () => {
    expect(parse({ type: 'block-stop', reason, code: 'FSM_BLOCKED' }, 'AfterAgent')).toEqual({ decision: 'deny', reason });
    expect(parse({ type: 'block-stop', reason, code: 'FSM_BLOCKED' }, 'SessionEnd')).toEqual({ systemMessage: reason });
  });

  it('never writes continue:false (it ends the agent loop) and never exits 1 or 2', () => {
    const answers: HookAnswer[] = [
      { type: 'allow' },
      { type: 'continue' },
      { type: 'deny', reason, code: 'HOOK_INTERNAL_ERROR' },
      { type: 'ask', reason },
      { type: 'block-stop', reason, code: 'HOOK_STATE_LOCKED' },
    ];
    for (const answer of answers) {
      for (const event of ['BeforeTool', 'AfterTool', 'AfterAgent', 'SessionStart', null]) {
        const output = geminiCliCodec.write(answer, event);
        expect(output.exitCode).toBe(0);
        expect(JSON.parse(output.stdout)).not.toHaveProperty('continue');
      }
    }
  });
});
