/**
 * Copilot's hook codec: the payloads Copilot CLI 1.0.102 sent to command
 * hooks when run against a scripted model (camelCase hooks and PascalCase
 * hooks, field for field; only the ids and paths changed), and VS Code agent
 * mode's documented payload, read into the gate's events; the gate's answers
 * written in the format each takes; malformed payloads refused with
 * HookPayloadError; and the calls classified by the shipped `copilot`
 * catalog.
 *
 * Issue 25 items 1 and 4; AGENT_HOOKS.md §1.5, §1.6.
 */
import { describe, expect, it } from 'vitest';
import { builtinCatalogs, createCallClassifier } from '../../../src/classify/catalog/index.js';
import { copilotCodec, matchesCopilot } from '../../../src/hooks/hosts/copilot.js';
import { HookPayloadError, type HookAnswer, type HookToolCall } from '../../../src/hooks/types.js';

const SESSION = 'c71efc1c-1457-4e9d-9bbe-aea25d33b2a1';
const TRANSCRIPT = `/home/u/.copilot/session-state/${SESSION}/events.jsonl`;

/** Copilot CLI 1.0.102, camelCase hooks (`preToolUse` in a hooks file): as sent. */
const camel = {
  sessionStart: { sessionId: SESSION, timestamp: 1796220482068, cwd: '/home/dev/proj', source: 'new', initialPrompt: 'do it' },
  userPromptSubmitted: { sessionId: SESSION, timestamp: 1796220487058, cwd: '/home/dev/proj', prompt: 'do it' },
  preToolUse: {
    sessionId: SESSION,
    timestamp: 1796220528982,
    cwd: '/home/dev/proj',
    toolName: 'bash',
    toolArgs: { command: 'ls /home/dev/proj', description: 'list' },
  },
  postToolUse: {
    sessionId: SESSION,
    timestamp: 1796220531564,
    cwd: '/home/dev/proj',
    toolName: 'bash',
    toolArgs: { command: 'ls /home/dev/proj', description: 'list' },
    toolResult: { resultType: 'success', textResultForLlm: 'a.txt\n<shellId: 0 completed with exit code 0>' },
  },
  postToolUseExit1: {
    sessionId: SESSION,
    timestamp: 1796220545482,
    cwd: '/home/dev/proj',
    toolName: 'bash',
    toolArgs: { command: 'false', description: 'fail' },
    toolResult: { resultType: 'success', textResultForLlm: '\n<shellId: 1 completed with exit code 1>' },
  },
  create: {
    sessionId: SESSION,
    timestamp: 1796220535978,
    cwd: '/home/dev/proj',
    toolName: 'create',
    toolArgs: { path: '/home/dev/proj/new.txt', file_text: 'hi\n' },
  },
  agentStop: {
    sessionId: SESSION,
    timestamp: 1796220549273,
    cwd: '/home/dev/proj',
    transcriptPath: TRANSCRIPT,
    stopReason: 'end_turn',
    stop_hook_active: false,
  },
  agentStopAgain: {
    sessionId: SESSION,
    timestamp: 1796220772890,
    cwd: '/home/dev/proj',
    transcriptPath: TRANSCRIPT,
    stopReason: 'end_turn',
    stop_hook_active: true,
  },
  sessionEnd: { sessionId: SESSION, timestamp: 1796220549877, cwd: '/home/dev/proj', reason: 'complete' },
};

/** Copilot CLI 1.0.102, PascalCase hooks (`PreToolUse`, as in a `.claude/settings.json`): as sent. */
const pascal = {
  SessionStart: {
    hook_event_name: 'SessionStart',
    session_id: SESSION,
    timestamp: '2026-12-02T14:08:02.068Z',
    cwd: '/home/dev/proj',
    source: 'new',
    initial_prompt: 'do it',
  },
  PreToolUse: {
    hook_event_name: 'PreToolUse',
    session_id: SESSION,
    timestamp: '2026-12-02T14:08:55.978Z',
    cwd: '/home/dev/proj',
    tool_name: 'Write',
    tool_input: { path: '/home/dev/proj/new.txt', file_text: 'hi\n' },
  },
  PostToolUse: {
    hook_event_name: 'PostToolUse',
    session_id: SESSION,
    timestamp: '2026-12-02T14:08:57.812Z',
    cwd: '/home/dev/proj',
    tool_name: 'Write',
    tool_input: { path: '/home/dev/proj/new.txt', file_text: 'hi\n' },
    tool_result: { result_type: 'success', text_result_for_llm: 'Created file /home/dev/proj/new.txt with 3 characters' },
  },
  Stop: {
    hook_event_name: 'Stop',
    session_id: SESSION,
    timestamp: '2026-12-02T14:09:09.273Z',
    cwd: '/home/dev/proj',
    transcript_path: TRANSCRIPT,
    stop_reason: 'end_turn',
    stop_hook_active: false,
  },
  SessionEnd: {
    hook_event_name: 'SessionEnd',
    session_id: SESSION,
    timestamp: '2026-12-02T14:09:09.877Z',
    cwd: '/home/dev/proj',
    reason: 'complete',
  },
};

/** VS Code agent mode (code.visualstudio.com hooks reference): camelCase ids, snake_case tool fields, a call id. */
const vscode = {
  PreToolUse: {
    timestamp: '2026-07-29T10:00:00.000Z',
    cwd: '/home/dev/proj',
    sessionId: 'vscode-session-1',
    hookEventName: 'PreToolUse',
    transcript_path: '/home/u/.vscode/transcripts/1.json',
    tool_name: 'runTerminalCommand',
    tool_input: { command: 'rm -rf dist' },
    tool_use_id: 'call_42',
  },
  Stop: {
    timestamp: '2026-07-29T10:00:05.000Z',
    cwd: '/home/dev/proj',
    sessionId: 'vscode-session-1',
    hookEventName: 'Stop',
    transcript_path: '/t.json',
    stop_hook_active: false,
  },
};

const deny: HookAnswer = { type: 'deny', reason: 'FSM_BLOCKED: read /home/dev/proj/new.txt first', code: 'FSM_BLOCKED', rule: 'no-target' };
const blockStop: HookAnswer = {
  type: 'block-stop',
  reason: 'FSM_BLOCKED: verify the write to /home/dev/proj/new.txt before you finish',
  code: 'FSM_BLOCKED',
};

function callOf(event: ReturnType<typeof copilotCodec.read>['event']): HookToolCall {
  if (event.type !== 'tool.before' && event.type !== 'tool.after') throw new Error(`not a tool event: ${event.type}`);
  return event.call;
}

describe('copilotCodec.read: camelCase hooks (no event name in the payload)', () => {
  it('tells preToolUse by its tool fields: a call without id, the copilot catalog, its cwd', () => {
    expect(copilotCodec.read(camel.preToolUse)).toEqual({
      host: 'copilot',
      sessionId: SESSION,
      eventName: 'preToolUse',
      cwd: '/home/dev/proj',
      event: {
        type: 'tool.before',
        call: { name: 'bash', input: { command: 'ls /home/dev/proj', description: 'list' }, catalog: 'copilot', cwd: '/home/dev/proj' },
      },
    });
  });

  it('tells postToolUse by its toolResult, passing the text the model got (exit codes included) and the same call', () => {
    const read = copilotCodec.read(camel.postToolUse);
    expect(read.eventName).toBe('postToolUse');
    expect(read.event).toMatchObject({ type: 'tool.after', outcome: 'success', result: 'a.txt\n<shellId: 0 completed with exit code 0>' });
    expect(callOf(read.event)).toEqual(callOf(copilotCodec.read(camel.preToolUse).event));
    // A command that exited 1 is a "success" to Copilot; its text carries the exit code the gate reads.
    expect(copilotCodec.read(camel.postToolUseExit1).event).toMatchObject({
      outcome: 'success',
      result: '\n<shellId: 1 completed with exit code 1>',
    });
  });

  it('reads a failed resultType and postToolUseFailure as errors', () => {
    const failed = { ...camel.postToolUse, toolResult: { resultType: 'failure', textResultForLlm: 'boom' } };
    expect(copilotCodec.read(failed).event).toMatchObject({ type: 'tool.after', outcome: 'error', result: 'boom' });
    const failure = {
      sessionId: SESSION,
      timestamp: 1,
      cwd: '/home/dev/proj',
      toolName: 'edit',
      toolArgs: { path: '/a' },
      error: 'old_str not found',
    };
    expect(copilotCodec.read(failure)).toMatchObject({
      eventName: 'postToolUseFailure',
      event: { type: 'tool.after', outcome: 'error', result: { error: 'old_str not found' } },
    });
  });

  it('parses toolArgs given as a JSON string, so before and after carry one input', () => {
    const read = copilotCodec.read({ ...camel.preToolUse, toolArgs: JSON.stringify(camel.preToolUse.toolArgs) });
    expect(callOf(read.event).input).toEqual(camel.preToolUse.toolArgs);
    expect(callOf(copilotCodec.read({ ...camel.preToolUse, toolArgs: 'not json' }).event).input).toBe('not json');
  });

  it('reads agentStop as agent.stopping, active on the stop a block sent back (stop_hook_active)', () => {
    expect(copilotCodec.read(camel.agentStop)).toMatchObject({
      eventName: 'agentStop',
      transcriptPath: TRANSCRIPT,
      event: { type: 'agent.stopping', active: false },
    });
    expect(copilotCodec.read(camel.agentStopAgain).event).toEqual({ type: 'agent.stopping', active: true });
  });

  it('reads subagentStop with the response, and the session events', () => {
    const sub = {
      sessionId: SESSION,
      timestamp: 1,
      cwd: '/w',
      transcriptPath: TRANSCRIPT,
      agentName: 'explore',
      agentType: 'explore',
      stopReason: 'end_turn',
      response: 'Found it',
    };
    expect(copilotCodec.read(sub)).toMatchObject({
      eventName: 'subagentStop',
      event: { type: 'agent.stopping', active: false, lastMessage: 'Found it' },
    });
    expect(copilotCodec.read(camel.sessionStart)).toMatchObject({
      eventName: 'sessionStart',
      event: { type: 'session.started', source: 'new' },
    });
    expect(copilotCodec.read(camel.sessionEnd)).toMatchObject({
      eventName: 'sessionEnd',
      event: { type: 'session.ended', reason: 'complete' },
    });
    expect(copilotCodec.read(camel.userPromptSubmitted).event).toEqual({ type: 'ignored', name: 'userPromptSubmitted' });
  });
});

describe('copilotCodec.read: PascalCase hooks (snake_case payloads, Claude Code tool names)', () => {
  it("reads PreToolUse's Write as Copilot's create: the copilot catalog, the path argument", () => {
    expect(copilotCodec.read(pascal.PreToolUse)).toEqual({
      host: 'copilot',
      sessionId: SESSION,
      eventName: 'PreToolUse',
      cwd: '/home/dev/proj',
      event: {
        type: 'tool.before',
        call: { name: 'Write', input: { path: '/home/dev/proj/new.txt', file_text: 'hi\n' }, catalog: 'copilot', cwd: '/home/dev/proj' },
      },
    });
  });

  it('reads PostToolUse with its text result, Stop, and the session events', () => {
    expect(copilotCodec.read(pascal.PostToolUse).event).toMatchObject({
      type: 'tool.after',
      outcome: 'success',
      result: 'Created file /home/dev/proj/new.txt with 3 characters',
    });
    expect(copilotCodec.read(pascal.Stop)).toMatchObject({
      eventName: 'Stop',
      transcriptPath: TRANSCRIPT,
      event: { type: 'agent.stopping', active: false },
    });
    expect(copilotCodec.read(pascal.SessionStart).event).toEqual({ type: 'session.started', source: 'new' });
    expect(copilotCodec.read(pascal.SessionEnd).event).toEqual({ type: 'session.ended', reason: 'complete' });
  });
});

describe('copilotCodec.read: VS Code agent mode', () => {
  it('reads its PreToolUse with the call id, and its Stop', () => {
    expect(copilotCodec.read(vscode.PreToolUse)).toMatchObject({
      host: 'copilot',
      sessionId: 'vscode-session-1',
      eventName: 'PreToolUse',
      event: {
        type: 'tool.before',
        call: { id: 'call_42', name: 'runTerminalCommand', input: { command: 'rm -rf dist' }, catalog: 'copilot' },
      },
    });
    expect(copilotCodec.read(vscode.Stop).event).toEqual({ type: 'agent.stopping', active: false });
  });
});

describe('copilotCodec.read: malformed payloads', () => {
  it.each([
    ['not an object', 42, null],
    ['no session id', { toolName: 'bash', toolArgs: {} }, 'preToolUse'],
    ['no event name and no event fields', { sessionId: SESSION, timestamp: 1 }, null],
    [
      'a PascalCase tool event without tool_name',
      { hook_event_name: 'PreToolUse', session_id: SESSION, timestamp: 'x', tool_input: {} },
      'PreToolUse',
    ],
    ['a tool name that is not a string', { sessionId: SESSION, toolName: 7, toolArgs: {} }, 'preToolUse'],
  ])('%s: HookPayloadError naming the event it gave', (_what, value, eventName) => {
    let error: unknown;
    try {
      copilotCodec.read(value);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(HookPayloadError);
    expect((error as HookPayloadError).eventName).toBe(eventName);
  });
});

describe('copilotCodec.write', () => {
  const parse = (stdout: string): unknown => JSON.parse(stdout);

  it('denies with permissionDecision at the top (Copilot CLI camelCase) and in hookSpecificOutput (PascalCase, VS Code), exit 0', () => {
    for (const event of ['preToolUse', 'PreToolUse', null]) {
      const out = copilotCodec.write(deny, event);
      expect(out.exitCode).toBe(0);
      expect(parse(out.stdout)).toEqual({
        permissionDecision: 'deny',
        permissionDecisionReason: deny.reason,
        hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: deny.reason },
      });
    }
  });

  it("answers an allow with silence, so Copilot's own approval goes on (allow would skip it)", () => {
    expect(copilotCodec.write({ type: 'allow', kind: 'write' }, 'preToolUse')).toEqual({ stdout: '', stderr: '', exitCode: 0 });
  });

  it('asks with permissionDecision ask', () => {
    const out = parse(copilotCodec.write({ type: 'ask', reason: 'confirm', rule: 'needs-confirmation' }, 'preToolUse').stdout);
    expect(out).toMatchObject({ permissionDecision: 'ask', permissionDecisionReason: 'confirm' });
  });

  it("refuses a stop with decision block; VS Code's Stop also gets it nested", () => {
    expect(parse(copilotCodec.write(blockStop, 'agentStop').stdout)).toEqual({ decision: 'block', reason: blockStop.reason });
    expect(parse(copilotCodec.write(blockStop, 'subagentStop').stdout)).toEqual({ decision: 'block', reason: blockStop.reason });
    expect(parse(copilotCodec.write(blockStop, 'Stop').stdout)).toEqual({
      decision: 'block',
      reason: blockStop.reason,
      hookSpecificOutput: { hookEventName: 'Stop', decision: 'block', reason: blockStop.reason },
    });
    expect(copilotCodec.write({ type: 'continue' }, 'agentStop')).toEqual({ stdout: '', stderr: '', exitCode: 0 });
  });

  it('writes a stop refused for a before-tool event as a deny, and silence after tools and for session events', () => {
    expect(parse(copilotCodec.write(blockStop, 'preToolUse').stdout)).toMatchObject({ permissionDecision: 'deny' });
    for (const event of ['postToolUse', 'PostToolUse', 'sessionStart', 'SessionEnd']) {
      expect(copilotCodec.write({ type: 'continue' }, event).stdout).toBe('');
    }
  });

  it('answers an event it does not know as a before-tool event: a deny stays a deny', () => {
    expect(parse(copilotCodec.write(deny, 'somethingNew').stdout)).toMatchObject({ permissionDecision: 'deny' });
  });
});

describe('matchesCopilot', () => {
  it("takes every payload Copilot CLI sent, and VS Code's", () => {
    for (const value of [...Object.values(camel), ...Object.values(pascal), ...Object.values(vscode)])
      expect(matchesCopilot(value)).toBe(true);
  });

  it("refuses Claude Code's, Codex's and Cursor's", () => {
    const claude = {
      session_id: 's',
      transcript_path: '/t.jsonl',
      cwd: '/w',
      permission_mode: 'default',
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: {},
      tool_use_id: 'toolu_1',
    };
    expect(matchesCopilot(claude)).toBe(false);
    expect(matchesCopilot({ ...claude, permission_mode: undefined, timestamp: '2026-01-01T00:00:00Z' })).toBe(false); // a call id: not Copilot CLI
    expect(matchesCopilot({ session_id: 's', turn_id: 't', hook_event_name: 'PreToolUse', timestamp: 'x' })).toBe(false);
    expect(matchesCopilot({ conversation_id: 'c', hook_event_name: 'preToolUse', sessionId: 's' })).toBe(false);
    expect(matchesCopilot('x')).toBe(false);
  });
});

describe('the copilot catalog classifies the calls the codec makes', () => {
  const classify = createCallClassifier(builtinCatalogs.copilot);
  const classifyCall = (call: HookToolCall) => classify(call.name, call.input, call.cwd === undefined ? {} : { cwd: call.cwd });

  it("names create's path under both of its names, and parses bash in the hook's cwd", () => {
    expect(classifyCall(callOf(copilotCodec.read(camel.create).event))).toMatchObject({
      kind: 'write',
      targets: ['/home/dev/proj/new.txt'],
    });
    expect(classifyCall(callOf(copilotCodec.read(pascal.PreToolUse).event))).toMatchObject({
      kind: 'write',
      targets: ['/home/dev/proj/new.txt'],
    });
    expect(classifyCall(callOf(copilotCodec.read(camel.preToolUse).event))).toMatchObject({ kind: 'read', targets: ['/home/dev/proj'] });
    const rm = classifyCall(
      callOf(copilotCodec.read({ ...camel.preToolUse, toolArgs: { command: 'rm -rf build', description: 'x' } }).event),
    );
    expect(rm).toMatchObject({ kind: 'write', destructive: true });
    expect(rm.targets).toContain('/home/dev/proj/build');
  });

  it('reads view and Read, and grep and glob name each of their paths', () => {
    expect(classify('view', { path: '/home/dev/proj/a.ts' })).toMatchObject({ kind: 'read', targets: ['/home/dev/proj/a.ts'] });
    expect(classify('Read', { path: '/home/dev/proj/a.ts' })).toMatchObject({ kind: 'read', targets: ['/home/dev/proj/a.ts'] });
    expect(classify('grep', { pattern: 'x', paths: ['/home/dev/a', '/home/dev/b'] })).toMatchObject({
      kind: 'read',
      targets: ['/home/dev/a', '/home/dev/b'],
    });
    expect(classify('glob', { pattern: '*.ts', paths: ['/work'] })).toMatchObject({ kind: 'resolve', targets: ['/work'] });
  });

  it('parses sql as SQLite: a SELECT reads, an INSERT writes its table', () => {
    expect(classify('sql', { description: 'x', query: 'SELECT * FROM todos' }).kind).toBe('read');
    expect(classify('sql', { description: 'x', query: "INSERT INTO todos (id) VALUES ('a')" })).toMatchObject({
      kind: 'write',
      targets: ['table:todos'],
    });
  });

  it('fails closed: sub-agents, skills and unknown tools (VS Code names, MCP) are writes; ask_user asks', () => {
    for (const tool of ['task', 'skill', 'write_agent', 'runTerminalCommand', 'github-mcp-server-create_issue'])
      expect(classify(tool, {}).kind).toBe('write');
    expect(classify('ask_user', { question: 'ok?' }).kind).toBe('user_input');
  });
});
