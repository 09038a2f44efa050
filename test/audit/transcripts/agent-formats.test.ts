/**
 * The logs of opencode, Qwen Code and Kiro CLI read as transcripts, each
 * run naming its agent's catalog, and `--catalog auto` taking the log's
 * format before counting tool names (issue 25 item 4). The logs are small
 * and hand-written, each in the shape its source defines:
 *
 * - opencode: `opencode export` (`{ info, messages: [{ info, parts }] }`) and
 *   `opencode run --format json` lines, per the `Part`/`ToolPart`/`ToolState`
 *   types of npm @opencode-ai/sdk 1.18.33 and opencode 1.18.33's export and
 *   run commands;
 * - Qwen Code: the `ChatRecord` lines of github:QwenLM/qwen-code
 *   packages/core/src/services/chatRecordingService.ts;
 * - Kiro CLI: the `/save` JSON whose history entries are the serde forms of
 *   `UserMessage` / `AssistantMessage` in github:aws/amazon-q-developer-cli
 *   crates/chat-cli/src/cli/chat/message.rs;
 * - Claude Code: session lines (`type`, `sessionId`, `cwd`, Anthropic `message`).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { readTranscript, type TranscriptStep } from '../../../src/audit/transcripts/index.js';
import { main } from '../../../src/cli/main.js';

const dir = mkdtempSync(join(tmpdir(), 'pulse-safety-formats-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

async function audit(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(['audit', ...argv], { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

const lines = (...values: object[]): string => values.map((v) => JSON.stringify(v)).join('\n');

/** A step in short: `call read`, `result read error`, `answer`. */
function brief(step: TranscriptStep): string {
  if (step.type === 'call') return `call ${step.name}`;
  if (step.type === 'result') return `result ${step.name} ${step.outcome}`;
  return step.type;
}

const opencodeExport = {
  info: { id: 'ses_1', directory: '/home/dev/app', title: 'Fix a.txt', version: '1.18.33', time: { created: 1, updated: 2 } },
  messages: [
    { info: { id: 'msg_1', sessionID: 'ses_1', role: 'user' }, parts: [{ type: 'text', text: 'Change a.txt' }] },
    {
      info: { id: 'msg_2', sessionID: 'ses_1', role: 'assistant', path: { cwd: '/home/dev/app', root: '/home/dev/app' } },
      parts: [
        { type: 'step-start' },
        { type: 'text', text: 'Let me look first.' },
        {
          type: 'tool',
          callID: 'call_1',
          tool: 'read',
          state: { status: 'completed', input: { filePath: '/home/dev/app/a.txt' }, output: '1: hello', title: 'a.txt', metadata: {} },
        },
      ],
    },
    {
      info: { id: 'msg_3', sessionID: 'ses_1', role: 'assistant', path: { cwd: '/home/dev/app', root: '/home/dev/app' } },
      parts: [
        {
          type: 'tool',
          callID: 'call_2',
          tool: 'edit',
          state: {
            status: 'error',
            input: { filePath: '/home/dev/app/a.txt', oldString: 'nope', newString: 'x' },
            error: 'Could not find oldString',
          },
        },
        {
          type: 'tool',
          callID: 'call_3',
          tool: 'write',
          state: {
            status: 'completed',
            input: { filePath: '/home/dev/app/a.txt', content: 'changed' },
            output: 'Wrote file successfully.',
            metadata: {},
          },
        },
      ],
    },
    { info: { id: 'msg_4', sessionID: 'ses_1', role: 'assistant' }, parts: [{ type: 'text', text: 'Done: a.txt says changed.' }] },
  ],
};

describe('opencode', () => {
  test('an export is one run: tool parts are calls and results (an error part a failure), the last text an answer', () => {
    const [run, ...rest] = readTranscript(JSON.stringify(opencodeExport), 'export.json');
    expect(rest).toEqual([]);
    expect(run!.id).toBe('ses_1');
    expect(run!.catalog).toBe('opencode');
    expect(run!.steps.map(brief)).toEqual([
      'call read',
      'result read success',
      'call edit',
      'result edit error',
      'call write',
      'result write success',
      'answer',
    ]);
    expect(run!.steps[0]).toMatchObject({ args: { filePath: '/home/dev/app/a.txt' }, cwd: '/home/dev/app' });
  });

  test('an array of exports is one run each', () => {
    const second = { ...opencodeExport, info: { ...opencodeExport.info, id: 'ses_2' } };
    expect(readTranscript(JSON.stringify([opencodeExport, second]), 'exports.json').map((r) => r.id)).toEqual(['ses_1', 'ses_2']);
  });

  test('`opencode run --format json` lines: one run per sessionID; a refused tool part is a failed call', () => {
    const text = lines(
      { type: 'step_start', timestamp: 1, sessionID: 'ses_9', part: { type: 'step-start' } },
      {
        type: 'tool_use',
        timestamp: 2,
        sessionID: 'ses_9',
        part: {
          type: 'tool',
          tool: 'write',
          callID: 'call_1',
          state: { status: 'error', input: { filePath: '/p/a.txt', content: 'x' }, error: 'The call to ... (FSM_BLOCKED, rule no-target)' },
        },
      },
      { type: 'step_finish', timestamp: 3, sessionID: 'ses_9', part: { type: 'step-finish', reason: 'tool-calls' } },
      {
        type: 'tool_use',
        timestamp: 4,
        sessionID: 'ses_9',
        part: {
          type: 'tool',
          tool: 'read',
          callID: 'call_2',
          state: { status: 'completed', input: { filePath: '/p/a.txt' }, output: 'hello' },
        },
      },
      { type: 'text', timestamp: 5, sessionID: 'ses_9', part: { type: 'text', text: 'It says hello.' } },
    );
    const [run] = readTranscript(text, 'run.jsonl');
    expect(run).toMatchObject({ id: 'ses_9', catalog: 'opencode' });
    expect(run!.steps.map(brief)).toEqual(['call write', 'result write error', 'call read', 'result read success', 'answer']);
  });

  test('audits with the opencode catalog, and refuses the answer after an unverified write', async () => {
    const { code, out } = await audit(file('opencode-export.json', JSON.stringify(opencodeExport)));
    expect(out).toContain("catalog auto: opencode, the log's format, knows 3 of 3 tool names");
    expect(out).toMatch(/would have been refused: final answer in VERIFYING \[unverified-write\]/);
    expect(code).toBe(1);
  });
});

const qwenLog = lines(
  {
    uuid: 'u0',
    parentUuid: null,
    sessionId: 'q-1',
    timestamp: 't',
    type: 'system',
    subtype: 'session_source',
    cwd: '/srv/app',
    version: '0.9.0',
    systemPayload: { sourceType: 'cli' },
  },
  {
    uuid: 'u1',
    parentUuid: 'u0',
    sessionId: 'q-1',
    timestamp: 't',
    type: 'user',
    cwd: '/srv/app',
    version: '0.9.0',
    message: { role: 'user', parts: [{ text: 'restart the config' }] },
  },
  {
    uuid: 'u2',
    parentUuid: 'u1',
    sessionId: 'q-1',
    timestamp: 't',
    type: 'assistant',
    cwd: '/srv/app',
    version: '0.9.0',
    model: 'qwen3-coder',
    message: {
      role: 'model',
      parts: [{ functionCall: { id: 'fc-1', name: 'write_file', args: { file_path: '/srv/app/app.conf', content: 'x' } } }],
    },
  },
  {
    uuid: 'u3',
    parentUuid: 'u2',
    sessionId: 'q-1',
    timestamp: 't',
    type: 'tool_result',
    cwd: '/srv/app',
    version: '0.9.0',
    message: {
      role: 'user',
      parts: [{ functionResponse: { id: 'fc-1', name: 'write_file', response: { output: 'Successfully wrote /srv/app/app.conf' } } }],
    },
    toolCallResult: { callId: 'fc-1', status: 'success', resultDisplay: 'ok' },
  },
  {
    uuid: 'u4',
    parentUuid: 'u3',
    sessionId: 'q-1',
    timestamp: 't',
    type: 'assistant',
    cwd: '/srv/app',
    version: '0.9.0',
    message: { role: 'model', parts: [{ functionCall: { id: 'fc-2', name: 'read_file', args: { file_path: '/srv/app/app.conf' } } }] },
  },
  {
    uuid: 'u5',
    parentUuid: 'u4',
    sessionId: 'q-1',
    timestamp: 't',
    type: 'tool_result',
    cwd: '/srv/app',
    version: '0.9.0',
    message: { role: 'user', parts: [{ functionResponse: { id: 'fc-2', name: 'read_file', response: { error: 'EACCES' } } }] },
    toolCallResult: { callId: 'fc-2', status: 'error', error: 'EACCES' },
  },
  {
    uuid: 'u6',
    parentUuid: 'u5',
    sessionId: 'q-1',
    timestamp: 't',
    type: 'assistant',
    cwd: '/srv/app',
    version: '0.9.0',
    message: { role: 'model', parts: [{ text: 'Done.' }] },
  },
);

describe('Qwen Code', () => {
  test("a chat recording is Qwen Code's, not Claude Code's, though its first line looks like one", () => {
    const [run, ...rest] = readTranscript(qwenLog, 'q-1.jsonl');
    expect(rest).toEqual([]);
    expect(run).toMatchObject({ id: 'q-1', catalog: 'qwen-code' });
    expect(run!.steps.map(brief)).toEqual([
      'call write_file',
      'result write_file success',
      'call read_file',
      'result read_file error',
      'answer',
    ]);
    expect(run!.steps[0]).toMatchObject({ cwd: '/srv/app', args: { file_path: '/srv/app/app.conf' } });
  });

  test('audits with the qwen-code catalog: the write before any read is refused, and the failed read verifies nothing', async () => {
    const { out } = await audit(file('qwen.jsonl', qwenLog));
    expect(out).toContain("catalog auto: qwen-code, the log's format, knows 2 of 2 tool names");
    expect(out).toMatch(/would have been refused: write 'write_file' on \/srv\/app\/app.conf in RESOLVING \[no-target\]/);
    expect(out).toMatch(/would have been refused: final answer in VERIFYING \[unverified-write\]/);
  });
});

const kiroConversation = {
  conversation_id: 'k-42',
  next_message: null,
  history: [
    {
      user: {
        additional_context: '',
        env_context: { env_state: { operating_system: 'linux', current_working_directory: '/home/u/infra' } },
        content: { Prompt: { prompt: 'scale the service' } },
        timestamp: null,
        images: null,
      },
      assistant: {
        ToolUse: {
          message_id: 'm1',
          content: 'Looking at the service first.',
          tool_uses: [
            {
              id: 'tu-1',
              name: 'use_aws',
              orig_name: 'use_aws',
              args: { service_name: 'ecs', operation_name: 'describe-services', region: 'eu-west-1' },
              orig_args: {},
            },
          ],
        },
      },
    },
    {
      user: {
        additional_context: '',
        env_context: { env_state: null },
        content: {
          ToolUseResults: { tool_use_results: [{ tool_use_id: 'tu-1', content: [{ Json: { services: [] } }], status: 'Success' }] },
        },
        timestamp: null,
        images: null,
      },
      assistant: {
        ToolUse: {
          message_id: 'm2',
          content: '',
          tool_uses: [
            {
              id: 'tu-2',
              name: 'use_aws',
              orig_name: 'use_aws',
              args: { service_name: 'ecs', operation_name: 'update-service', parameters: { 'desired-count': 3 } },
              orig_args: {},
            },
          ],
        },
      },
    },
    {
      user: {
        additional_context: '',
        env_context: { env_state: null },
        content: { ToolUseResults: { tool_use_results: [{ tool_use_id: 'tu-2', content: [{ Text: 'updated' }], status: 'Success' }] } },
        timestamp: null,
        images: null,
      },
      assistant: { Response: { message_id: 'm3', content: 'Scaled to 3 tasks.' } },
    },
  ],
};

describe('Kiro CLI', () => {
  test('a saved conversation is one run: tool uses and their results, the response an answer', () => {
    const [run] = readTranscript(JSON.stringify(kiroConversation), 'kiro.json');
    expect(run).toMatchObject({ id: 'k-42', catalog: 'kiro' });
    expect(run!.steps.map(brief)).toEqual(['call use_aws', 'result use_aws success', 'call use_aws', 'result use_aws success', 'answer']);
    expect(run!.steps[0]).toMatchObject({ cwd: '/home/u/infra' });
  });

  test('an Error status and a cancelled tool use are failures; the older [user, assistant] pairs read alike', () => {
    const pairs = {
      conversation_id: 'k-7',
      history: [
        [
          { content: { Prompt: { prompt: 'go' } } },
          {
            ToolUse: {
              message_id: 'a',
              content: '',
              tool_uses: [
                { id: 't1', name: 'fs_read', args: { mode: 'Line', path: '/x' } },
                { id: 't2', name: 'execute_bash', args: { command: 'rm -rf /x' } },
              ],
            },
          },
        ],
        [
          {
            content: {
              CancelledToolUses: {
                prompt: 'stop',
                tool_use_results: [{ tool_use_id: 't2', content: [{ Text: 'Tool use was cancelled by the user' }], status: 'Error' }],
              },
            },
          },
          { Response: { message_id: 'b', content: 'Stopped.' } },
        ],
      ],
    };
    const [run] = readTranscript(JSON.stringify(pairs), 'pairs.json');
    expect(run!.steps.map(brief)).toEqual(['call fs_read', 'call execute_bash', 'result execute_bash error', 'answer']);
  });

  test('audits with the kiro catalog: the describe establishes the service, the update is admitted, the answer refused until verified', async () => {
    const { out } = await audit(file('kiro.json', JSON.stringify(kiroConversation)));
    expect(out).toContain("catalog auto: kiro, the log's format, knows 1 of 1 tool names");
    expect(out).not.toMatch(/refused: write 'use_aws'/);
    expect(out).toMatch(/would have been refused: final answer in VERIFYING \[unverified-write\]/);
  });
});

describe('--catalog auto takes the log format first', () => {
  const mcpOnly = lines(
    { type: 'user', sessionId: 'cc-1', cwd: '/repo', message: { role: 'user', content: 'file an issue' } },
    {
      type: 'assistant',
      sessionId: 'cc-1',
      cwd: '/repo',
      message: { role: 'assistant', content: [{ type: 'tool_use', id: 'tu1', name: 'mcp__github__list_issues', input: { repo: 'a/b' } }] },
    },
    {
      type: 'user',
      sessionId: 'cc-1',
      cwd: '/repo',
      message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu1', content: '[]' }] },
    },
    {
      type: 'assistant',
      sessionId: 'cc-1',
      cwd: '/repo',
      message: {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'tu2', name: 'mcp__github__create_issue', input: { repo: 'a/b', title: 'x' } }],
      },
    },
  );

  test('a Claude Code log whose calls are all MCP tools audits with the claude-code catalog', async () => {
    const { out, err } = await audit(file('cc-mcp.jsonl', mcpOnly));
    expect(out).toContain("(catalog auto: claude-code, the log's format, knows 0 of 2 tool names, policy full)");
    // The MCP tools are unknown to it, so writes: the warning says so.
    expect(err).toContain("warning: catalog 'claude-code' knows only 0 of the 2 tool names");
  });

  test('logs of two agents given together fall back to counting tool names', async () => {
    const { out } = await audit(file('cc-mcp2.jsonl', mcpOnly), file('kiro2.json', JSON.stringify(kiroConversation)));
    expect(out).not.toContain("the log's format");
  });

  test('a format many agents share (OpenAI chat) names no catalog: tool names decide', () => {
    const chat = [
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'Read', arguments: '{"file_path":"/a"}' } }],
      },
    ];
    expect(readTranscript(JSON.stringify(chat), 'chat.json')[0]!.catalog).toBeUndefined();
  });
});
