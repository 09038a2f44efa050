/**
 * Which codec reads a payload: `codecForPayload` takes the declared host's
 * codec when the payload is that host's, else the codec of the host that
 * sent it, whatever settings file ran the hook (a Claude-format hook in
 * `.claude/settings.json` also runs under VS Code, Copilot CLI and Cursor).
 * One payload per event kind of each of the five hosts and of VS Code, each
 * checked under every declared host, and the matchers checked to take only
 * their own host's tool and stop payloads.
 *
 * Issue 25 item 4 ("picked from the payload, not from which settings file
 * was read"); AGENT_HOOKS.md §1.6, §4 item 4.
 */
import { describe, expect, it } from 'vitest';
import {
  codecForPayload,
  codecOf,
  matchesClaudeCode,
  matchesCodex,
  matchesCopilot,
  matchesCursor,
  matchesGeminiCli,
} from '../../../src/hooks/hosts/index.js';
import { HOOK_HOSTS, type HookHost } from '../../../src/hooks/types.js';

interface Sample {
  what: string;
  host: HookHost;
  payload: Record<string, unknown>;
}

const claudeBase = {
  session_id: 'edcf5abf-5a0c-46b1-86f1-8dec536746d6',
  transcript_path: '/home/u/.claude/projects/-work-proj/edcf5abf-5a0c-46b1-86f1-8dec536746d6.jsonl',
  cwd: '/home/dev/proj',
  permission_mode: 'acceptEdits',
};
const codexBase = {
  session_id: '019a4b1c-7d2e-7f00-9c1a-3b5e2d4f6a80',
  turn_id: '019a4b1c-8e3f-7a11-8b2c-4c6f3e5a7b91',
  transcript_path: '/home/u/.codex/sessions/2026/12/02/rollout-2026-12-02T14-00-00-019a4b1c-7d2e-7f00-9c1a-3b5e2d4f6a80.jsonl',
  cwd: '/home/dev/proj',
  model: 'gpt-5.5-codex',
};
const geminiBase = {
  session_id: '6e1a4d9c-0b7f-4c1e-9a55-2f3d8e7b1c40',
  transcript_path: '/home/u/.gemini/tmp/abc/chats/session-2026-12-02T14-00-6e1a4d9c.json',
  cwd: '/home/dev/proj',
  timestamp: '2026-12-02T14:00:00.000Z',
};
const cursorBase = {
  conversation_id: '668320d2-2fd8-4888-b33c-2a466fec86e7',
  generation_id: '490b90b7-a2ce-4c2c-bb76-cb77b125df2f',
  model: 'claude-opus-4-7',
  cursor_version: '2.1.0',
  workspace_roots: ['/home/dev/proj'],
  user_email: null,
  transcript_path: null,
};
const copilotSession = 'c71efc1c-1457-4e9d-9bbe-aea25d33b2a1';

const SAMPLES: Sample[] = [
  {
    what: 'Claude Code PreToolUse',
    host: 'claude-code',
    payload: { ...claudeBase, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls' }, tool_use_id: 'toolu_01' },
  },
  {
    what: 'Claude Code PostToolUse',
    host: 'claude-code',
    payload: {
      ...claudeBase,
      hook_event_name: 'PostToolUse',
      tool_name: 'Write',
      tool_input: { file_path: '/home/dev/proj/a' },
      tool_response: {},
      tool_use_id: 'toolu_02',
    },
  },
  {
    what: 'Claude Code Stop',
    host: 'claude-code',
    payload: { ...claudeBase, hook_event_name: 'Stop', stop_hook_active: false, last_assistant_message: 'done' },
  },
  { what: 'Claude Code SessionStart', host: 'claude-code', payload: { ...claudeBase, hook_event_name: 'SessionStart', source: 'startup' } },
  {
    what: 'Codex PreToolUse',
    host: 'codex',
    payload: { ...codexBase, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls' }, tool_use_id: 'call_1' },
  },
  {
    what: 'Codex Stop',
    host: 'codex',
    payload: { ...codexBase, hook_event_name: 'Stop', stop_hook_active: false, last_assistant_message: 'done' },
  },
  {
    what: 'Gemini CLI BeforeTool',
    host: 'gemini-cli',
    payload: { ...geminiBase, hook_event_name: 'BeforeTool', tool_name: 'run_shell_command', tool_input: { command: 'ls' } },
  },
  {
    what: 'Gemini CLI AfterAgent',
    host: 'gemini-cli',
    payload: { ...geminiBase, hook_event_name: 'AfterAgent', prompt: 'x', prompt_response: 'done', stop_hook_active: false },
  },
  { what: 'Gemini CLI SessionStart', host: 'gemini-cli', payload: { ...geminiBase, hook_event_name: 'SessionStart', source: 'startup' } },
  {
    what: 'Cursor preToolUse',
    host: 'cursor',
    payload: {
      ...cursorBase,
      hook_event_name: 'preToolUse',
      tool_name: 'Shell',
      tool_input: { command: 'ls' },
      tool_use_id: 'abc',
      cwd: '/home/dev/proj',
    },
  },
  {
    what: 'Cursor beforeShellExecution',
    host: 'cursor',
    payload: { ...cursorBase, hook_event_name: 'beforeShellExecution', command: 'ls', cwd: '/home/dev/proj', sandbox: false },
  },
  { what: 'Cursor stop', host: 'cursor', payload: { ...cursorBase, hook_event_name: 'stop', status: 'completed', loop_count: 0 } },
  {
    what: 'Cursor sessionStart',
    host: 'cursor',
    payload: { ...cursorBase, hook_event_name: 'sessionStart', session_id: cursorBase.conversation_id, composer_mode: 'agent' },
  },
  {
    what: 'Copilot CLI preToolUse (camelCase)',
    host: 'copilot',
    payload: { sessionId: copilotSession, timestamp: 1796220528982, cwd: '/home/dev/proj', toolName: 'bash', toolArgs: { command: 'ls' } },
  },
  {
    what: 'Copilot CLI agentStop (camelCase)',
    host: 'copilot',
    payload: {
      sessionId: copilotSession,
      timestamp: 1796220549273,
      cwd: '/home/dev/proj',
      transcriptPath: '/t/events.jsonl',
      stopReason: 'end_turn',
      stop_hook_active: false,
    },
  },
  {
    what: 'Copilot CLI PreToolUse (PascalCase, Claude tool name)',
    host: 'copilot',
    payload: {
      hook_event_name: 'PreToolUse',
      session_id: copilotSession,
      timestamp: '2026-12-02T14:08:48.982Z',
      cwd: '/home/dev/proj',
      tool_name: 'Bash',
      tool_input: { command: 'ls', description: 'list' },
    },
  },
  {
    what: 'Copilot CLI PostToolUse (PascalCase)',
    host: 'copilot',
    payload: {
      hook_event_name: 'PostToolUse',
      session_id: copilotSession,
      timestamp: '2026-12-02T14:08:57.812Z',
      cwd: '/home/dev/proj',
      tool_name: 'Write',
      tool_input: { path: '/home/dev/proj/new.txt', file_text: 'hi' },
      tool_result: { result_type: 'success', text_result_for_llm: 'Created file' },
    },
  },
  {
    what: 'Copilot CLI Stop (PascalCase)',
    host: 'copilot',
    payload: {
      hook_event_name: 'Stop',
      session_id: copilotSession,
      timestamp: '2026-12-02T14:09:09.273Z',
      cwd: '/home/dev/proj',
      transcript_path: '/t/events.jsonl',
      stop_reason: 'end_turn',
      stop_hook_active: false,
    },
  },
  {
    what: 'Copilot CLI SessionStart (PascalCase)',
    host: 'copilot',
    payload: {
      hook_event_name: 'SessionStart',
      session_id: copilotSession,
      timestamp: '2026-12-02T14:08:02.068Z',
      cwd: '/home/dev/proj',
      source: 'new',
      initial_prompt: 'do it',
    },
  },
  {
    what: 'Copilot CLI SessionEnd (PascalCase)',
    host: 'copilot',
    payload: {
      hook_event_name: 'SessionEnd',
      session_id: copilotSession,
      timestamp: '2026-12-02T14:09:09.877Z',
      cwd: '/home/dev/proj',
      reason: 'complete',
    },
  },
  {
    what: 'Copilot CLI sessionStart (camelCase)',
    host: 'copilot',
    payload: { sessionId: copilotSession, timestamp: 1796220482068, cwd: '/home/dev/proj', source: 'new', initialPrompt: 'do it' },
  },
  {
    what: 'VS Code PreToolUse',
    host: 'copilot',
    payload: {
      timestamp: '2026-07-29T10:00:00.000Z',
      cwd: '/home/dev/proj',
      sessionId: 'vscode-1',
      hookEventName: 'PreToolUse',
      transcript_path: '/t.json',
      tool_name: 'runTerminalCommand',
      tool_input: { command: 'ls' },
      tool_use_id: 'call_42',
    },
  },
  {
    what: 'VS Code Stop',
    host: 'copilot',
    payload: {
      timestamp: '2026-07-29T10:00:05.000Z',
      cwd: '/home/dev/proj',
      sessionId: 'vscode-1',
      hookEventName: 'Stop',
      transcript_path: '/t.json',
      stop_hook_active: false,
    },
  },
];

const MATCHERS: Record<HookHost, (payload: unknown) => boolean> = {
  'claude-code': matchesClaudeCode,
  codex: matchesCodex,
  'gemini-cli': matchesGeminiCli,
  cursor: matchesCursor,
  copilot: matchesCopilot,
};

describe('codecOf', () => {
  it.each(HOOK_HOSTS)('%s: the codec of that host', (host) => {
    expect(codecOf(host).host).toBe(host);
  });

  it('throws a TypeError for a host it does not know', () => {
    expect(() => codecOf('amp' as HookHost)).toThrow(TypeError);
  });
});

describe('codecForPayload picks the host that sent the payload, whichever host was declared', () => {
  const cases = SAMPLES.flatMap((sample) => HOOK_HOSTS.map((declared) => ({ ...sample, declared })));
  it.for(cases)('$what, declared $declared', ({ payload, host, declared }) => {
    const codec = codecForPayload(declared, payload);
    expect(codec.host).toBe(host);
    // And that codec reads it.
    expect(codec.read(payload).host).toBe(host);
  });
});

describe("each host's matcher takes its own tool and stop payloads and no other host's", () => {
  it.for(SAMPLES)('$what', ({ payload, host }) => {
    const takers = HOOK_HOSTS.filter((candidate) => MATCHERS[candidate](payload));
    expect(takers).toEqual([host]);
  });
});

describe('a payload no codec takes goes to the declared host, whose read says why', () => {
  it.each(HOOK_HOSTS)('declared %s', (declared) => {
    for (const payload of [null, 'text', [], {}, { session_id: '' }]) {
      const codec = codecForPayload(declared, payload);
      expect(codec.host).toBe(declared);
      expect(() => codec.read(payload)).toThrow();
    }
  });
});
