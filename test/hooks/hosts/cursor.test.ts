/**
 * Cursor's hook codec: payloads shaped as cursor.com/docs/hooks documents
 * them, read into the gate's events; the gate's answers written in Cursor's
 * format for the event they answer; malformed payloads refused with
 * HookPayloadError; and the calls the codec makes classified by the shipped
 * `cursor` catalog.
 *
 * Cursor has no npm binary (it is a desktop editor), so no real-host test
 * runs here: the payloads are the documented ones.
 *
 * Issue 25 items 1 and 4; AGENT_HOOKS.md §1.4.
 */
import { describe, expect, it } from 'vitest';
import { builtinCatalogs, createCallClassifier } from '../../../src/classify/catalog/index.js';
import { cursorCodec, matchesCursor } from '../../../src/hooks/hosts/cursor.js';
import { HookPayloadError, type HookAnswer, type HookToolCall } from '../../../src/hooks/types.js';

const CONVERSATION = '668320d2-2fd8-4888-b33c-2a466fec86e7';

/** The common fields of every agent hook (cursor.com/docs/hooks, "Common schema"), plus the event's own. */
function payload(event: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    conversation_id: CONVERSATION,
    generation_id: '490b90b7-a2ce-4c2c-bb76-cb77b125df2f',
    model: 'claude-opus-4-7-thinking-max',
    model_id: 'claude-opus-4-7',
    hook_event_name: event,
    cursor_version: '2.1.0',
    workspace_roots: ['/home/dev/proj'],
    user_email: null,
    transcript_path: '/home/u/.cursor/projects/work-proj/agent-transcripts/668320d2.txt',
    ...fields,
  };
}

const shellPre = {
  tool_name: 'Shell',
  tool_input: { command: 'rm -rf build', working_directory: '/home/dev/proj' },
  tool_use_id: 'abc123',
  cwd: '/home/dev/proj',
};

const deny: HookAnswer = { type: 'deny', reason: 'FSM_BLOCKED: read /home/dev/proj/build first', code: 'FSM_BLOCKED', rule: 'no-target' };
const ask: HookAnswer = { type: 'ask', reason: 'FSM_BLOCKED: confirm the unknown place', rule: 'needs-confirmation' };
const blockStop: HookAnswer = {
  type: 'block-stop',
  reason: 'FSM_BLOCKED: verify the write to /home/dev/proj/a.txt before you finish',
  code: 'FSM_BLOCKED',
};

function callOf(event: ReturnType<typeof cursorCodec.read>['event']): HookToolCall {
  if (event.type !== 'tool.before' && event.type !== 'tool.after') throw new Error(`not a tool event: ${event.type}`);
  return event.call;
}

describe('cursorCodec.read: tool events', () => {
  it('reads preToolUse as tool.before with the call id, the cwd and the cursor catalog', () => {
    expect(cursorCodec.read(payload('preToolUse', shellPre))).toEqual({
      host: 'cursor',
      sessionId: CONVERSATION,
      eventName: 'preToolUse',
      cwd: '/home/dev/proj',
      transcriptPath: '/home/u/.cursor/projects/work-proj/agent-transcripts/668320d2.txt',
      event: {
        type: 'tool.before',
        call: {
          id: 'abc123',
          name: 'Shell',
          input: { command: 'rm -rf build', working_directory: '/home/dev/proj' },
          catalog: 'cursor',
          cwd: '/home/dev/proj',
        },
      },
    });
  });

  it('keeps an MCP tool its MCP:<tool> name', () => {
    const read = cursorCodec.read(
      payload('preToolUse', { tool_name: 'MCP:write_file', tool_input: { path: '/x' }, tool_use_id: 't9', cwd: '/home/dev/proj' }),
    );
    expect(callOf(read.event)).toMatchObject({ name: 'MCP:write_file', id: 't9', catalog: 'cursor' });
  });

  it('reads postToolUse as a success carrying tool_output, under the same call id', () => {
    const read = cursorCodec.read(payload('postToolUse', { ...shellPre, tool_output: '{"exitCode":0,"stdout":""}', duration: 12 }));
    expect(read.event).toEqual({
      type: 'tool.after',
      call: { id: 'abc123', name: 'Shell', input: shellPre.tool_input, catalog: 'cursor', cwd: '/home/dev/proj' },
      outcome: 'success',
      result: '{"exitCode":0,"stdout":""}',
    });
  });

  it('reads postToolUseFailure as an error, whatever its failure_type', () => {
    for (const failure_type of ['error', 'timeout', 'permission_denied']) {
      const read = cursorCodec.read(
        payload('postToolUseFailure', { ...shellPre, error_message: 'Command timed out after 30s', failure_type, is_interrupt: false }),
      );
      expect(read.event).toMatchObject({
        type: 'tool.after',
        outcome: 'error',
        result: { error: 'Command timed out after 30s', failure_type },
      });
      expect(callOf(read.event).id).toBe('abc123');
    }
  });

  it('reads beforeShellExecution as a Shell call with no id, in its cwd, and afterShellExecution as the same call', () => {
    const before = cursorCodec.read(
      payload('beforeShellExecution', { command: 'git push --force', cwd: '/home/dev/proj/sub', sandbox: false }),
    );
    const after = cursorCodec.read(
      payload('afterShellExecution', { command: 'git push --force', output: 'Everything up-to-date', duration: 900, sandbox: false }),
    );
    expect(before.event).toEqual({
      type: 'tool.before',
      call: { name: 'Shell', input: { command: 'git push --force' }, catalog: 'cursor', cwd: '/home/dev/proj/sub' },
    });
    expect(after.event).toMatchObject({ type: 'tool.after', outcome: 'success', result: 'Everything up-to-date' });
    // One name and one input, so the gate pairs them without an id.
    expect(callOf(after.event).name).toBe(callOf(before.event).name);
    expect(callOf(after.event).input).toEqual(callOf(before.event).input);
  });

  it('reads beforeMCPExecution and afterMCPExecution under the MCP:<tool> name preToolUse uses, with the JSON-string input', () => {
    const fields = { tool_name: 'delete_issue', tool_input: '{"id":42}', url: 'https://mcp.example.com' };
    const before = cursorCodec.read(payload('beforeMCPExecution', fields));
    const after = cursorCodec.read(payload('afterMCPExecution', { ...fields, result_json: '{"ok":true}', duration: 5 }));
    expect(callOf(before.event)).toEqual({ name: 'MCP:delete_issue', input: '{"id":42}', catalog: 'cursor', cwd: '/home/dev/proj' });
    expect(after.event).toMatchObject({
      type: 'tool.after',
      outcome: 'success',
      result: '{"ok":true}',
      call: { name: 'MCP:delete_issue', input: '{"id":42}' },
    });
  });

  it('reads beforeReadFile as a Read of its file_path, and afterFileEdit as a Write of it', () => {
    const read = cursorCodec.read(payload('beforeReadFile', { file_path: '/home/dev/proj/.env', content: 'X=1', attachments: [] }));
    expect(read.event).toEqual({
      type: 'tool.before',
      call: { name: 'Read', input: { path: '/home/dev/proj/.env' }, catalog: 'cursor', cwd: '/home/dev/proj' },
    });
    const edit = cursorCodec.read(
      payload('afterFileEdit', { file_path: '/home/dev/proj/a.ts', edits: [{ old_string: 'a', new_string: 'b' }] }),
    );
    expect(edit.event).toMatchObject({
      type: 'tool.after',
      outcome: 'success',
      call: { name: 'Write', input: { path: '/home/dev/proj/a.ts' } },
    });
  });
});

describe('cursorCodec.read: session and stop events', () => {
  it('reads sessionStart (session_id is the conversation id) and sessionEnd', () => {
    const start = cursorCodec.read(
      payload('sessionStart', { session_id: CONVERSATION, is_background_agent: false, composer_mode: 'agent' }),
    );
    expect(start).toMatchObject({ sessionId: CONVERSATION, event: { type: 'session.started', source: 'agent' } });
    const withoutConversation = payload('sessionStart', { session_id: CONVERSATION });
    delete withoutConversation.conversation_id;
    expect(cursorCodec.read(withoutConversation).sessionId).toBe(CONVERSATION);
    expect(cursorCodec.read(payload('sessionEnd', { reason: 'user_close' })).event).toEqual({
      type: 'session.ended',
      reason: 'user_close',
    });
  });

  it('reads a completed stop as agent.stopping, active once a follow-up already sent it back', () => {
    expect(cursorCodec.read(payload('stop', { status: 'completed', loop_count: 0 })).event).toEqual({
      type: 'agent.stopping',
      active: false,
    });
    expect(cursorCodec.read(payload('stop', { status: 'completed', loop_count: 2 })).event).toEqual({
      type: 'agent.stopping',
      active: true,
    });
  });

  it('ignores an aborted or failed stop: a follow-up would restart what the user stopped', () => {
    expect(cursorCodec.read(payload('stop', { status: 'aborted', loop_count: 0 })).event).toEqual({ type: 'ignored', name: 'stop' });
    expect(cursorCodec.read(payload('stop', { status: 'error', loop_count: 0 })).event).toEqual({ type: 'ignored', name: 'stop' });
  });

  it("reads a completed subagentStop as agent.stopping with the sub-agent's summary", () => {
    const read = cursorCodec.read(
      payload('subagentStop', { subagent_type: 'generalPurpose', status: 'completed', summary: 'Changed src/auth.ts', loop_count: 0 }),
    );
    expect(read.event).toEqual({ type: 'agent.stopping', active: false, lastMessage: 'Changed src/auth.ts' });
  });

  it('ignores the events the gate does not act on', () => {
    for (const event of ['beforeSubmitPrompt', 'afterAgentResponse', 'preCompact', 'subagentStart']) {
      expect(cursorCodec.read(payload(event, { prompt: 'x', text: 'y' })).event).toEqual({ type: 'ignored', name: event });
    }
  });
});

describe('cursorCodec.read: malformed payloads', () => {
  it.each([
    ['not an object', 'x', null],
    ['an array', [], null],
    ['no hook_event_name', { conversation_id: CONVERSATION }, null],
    ['no conversation_id', { hook_event_name: 'preToolUse', tool_name: 'Shell' }, 'preToolUse'],
    ['a tool event without tool_name', payload('preToolUse', { tool_input: {} }), 'preToolUse'],
    ['a shell event without command', payload('beforeShellExecution', { cwd: '/x' }), 'beforeShellExecution'],
    ['a read without file_path', payload('beforeReadFile', {}), 'beforeReadFile'],
  ])('%s: HookPayloadError naming the event it gave', (_what, value, eventName) => {
    let error: unknown;
    try {
      cursorCodec.read(value);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(HookPayloadError);
    expect((error as HookPayloadError).eventName).toBe(eventName);
  });
});

describe('cursorCodec.write', () => {
  const parse = (stdout: string): unknown => JSON.parse(stdout);

  it('answers a deny with permission deny and the reason for the user and the agent, exit 0', () => {
    for (const event of ['preToolUse', 'beforeShellExecution', 'beforeMCPExecution', 'beforeReadFile', null]) {
      const out = cursorCodec.write(deny, event);
      expect(out.exitCode).toBe(0);
      expect(parse(out.stdout)).toEqual({ permission: 'deny', user_message: deny.reason, agent_message: deny.reason });
    }
  });

  it('answers an allow with no decision, so Cursor asks the user as it would without the hook', () => {
    const out = cursorCodec.write({ type: 'allow', kind: 'read' }, 'preToolUse');
    expect(out).toEqual({ stdout: '{}\n', stderr: '', exitCode: 0 });
  });

  it('asks only where Cursor honours ask, and denies elsewhere', () => {
    expect(parse(cursorCodec.write(ask, 'beforeShellExecution').stdout)).toMatchObject({ permission: 'ask' });
    expect(parse(cursorCodec.write(ask, 'beforeMCPExecution').stdout)).toMatchObject({ permission: 'ask' });
    expect(parse(cursorCodec.write(ask, 'preToolUse').stdout)).toMatchObject({ permission: 'deny', agent_message: ask.reason });
    expect(parse(cursorCodec.write(ask, 'beforeReadFile').stdout)).toMatchObject({ permission: 'deny' });
  });

  it('answers a refused stop with the reason as the follow-up message (Cursor cannot refuse a stop)', () => {
    expect(parse(cursorCodec.write(blockStop, 'stop').stdout)).toEqual({ followup_message: blockStop.reason });
    expect(parse(cursorCodec.write(blockStop, 'subagentStop').stdout)).toEqual({ followup_message: blockStop.reason });
    expect(cursorCodec.write({ type: 'continue' }, 'stop')).toEqual({ stdout: '{}\n', stderr: '', exitCode: 0 });
  });

  it('never allows where a stop was refused for a before-event, and writes {} after tools and for session events', () => {
    expect(parse(cursorCodec.write(blockStop, 'preToolUse').stdout)).toMatchObject({ permission: 'deny' });
    for (const event of ['postToolUse', 'afterShellExecution', 'sessionStart', 'sessionEnd']) {
      expect(cursorCodec.write({ type: 'continue' }, event)).toEqual({ stdout: '{}\n', stderr: '', exitCode: 0 });
    }
  });

  it('answers an event it does not know as a before-tool event: a deny stays a deny', () => {
    expect(parse(cursorCodec.write(deny, 'someFutureEvent').stdout)).toMatchObject({ permission: 'deny' });
  });
});

describe('matchesCursor', () => {
  it("takes Cursor's payloads", () => {
    expect(matchesCursor(payload('preToolUse', shellPre))).toBe(true);
    expect(matchesCursor(payload('stop', { status: 'completed', loop_count: 0 }))).toBe(true);
    const start = payload('sessionStart', { session_id: CONVERSATION });
    delete start.conversation_id;
    expect(matchesCursor(start)).toBe(true);
  });

  it("refuses the PascalCase events other hosts send, and payloads without Cursor's ids", () => {
    expect(matchesCursor({ ...payload('PreToolUse', shellPre) })).toBe(false);
    expect(matchesCursor({ session_id: 's', hook_event_name: 'sessionStart' })).toBe(false);
    expect(matchesCursor({ hook_event_name: 'preToolUse', tool_name: 'Shell' })).toBe(false);
    expect(matchesCursor(null)).toBe(false);
  });
});

describe('the cursor catalog classifies the calls the codec makes', () => {
  const classify = createCallClassifier(builtinCatalogs.cursor);
  const classifyCall = (call: HookToolCall) => classify(call.name, call.input, call.cwd === undefined ? {} : { cwd: call.cwd });

  it('parses a Shell command in its directory: rm -rf is a destructive write naming its target', () => {
    const result = classifyCall(
      callOf(cursorCodec.read(payload('beforeShellExecution', { command: 'rm -rf build', cwd: '/home/dev/proj' })).event),
    );
    expect(result).toMatchObject({ kind: 'write', destructive: true });
    expect(result.targets).toContain('/home/dev/proj/build');
  });

  it('reads ls as a read-only Shell command', () => {
    expect(
      classifyCall(
        callOf(
          cursorCodec.read(payload('preToolUse', { ...shellPre, tool_input: { command: 'ls -la', working_directory: '/home/dev/proj' } }))
            .event,
        ),
      ).kind,
    ).not.toBe('write');
  });

  it("names a file tool's path: Read reads it, Write writes it, Delete destroys it", () => {
    const tool = (tool_name: string, tool_input: unknown) =>
      classifyCall(
        callOf(cursorCodec.read(payload('preToolUse', { tool_name, tool_input, tool_use_id: 'x', cwd: '/home/dev/proj' })).event),
      );
    expect(tool('Read', { path: '/home/dev/proj/a.ts' })).toMatchObject({ kind: 'read', targets: ['/home/dev/proj/a.ts'] });
    expect(tool('Write', { path: '/home/dev/proj/a.ts', contents: 'x' })).toMatchObject({
      kind: 'write',
      targets: ['/home/dev/proj/a.ts'],
      destructive: false,
    });
    expect(tool('Delete', { path: '/home/dev/proj/a.ts' })).toMatchObject({
      kind: 'write',
      targets: ['/home/dev/proj/a.ts'],
      destructive: true,
    });
    expect(tool('Task', { description: 'explore' }).kind).toBe('write');
  });

  it('reads beforeReadFile as a read of that file, so it can establish the write after it', () => {
    const read = classifyCall(callOf(cursorCodec.read(payload('beforeReadFile', { file_path: '/home/dev/proj/a.ts', content: '' })).event));
    expect(read).toMatchObject({ kind: 'read', targets: ['/home/dev/proj/a.ts'] });
  });

  it('fails closed: an MCP tool and an unknown tool are writes', () => {
    expect(classify('MCP:read_issue', { id: 1 }).kind).toBe('write');
    expect(classify('SomeNewTool', {}).kind).toBe('write');
  });
});
