/**
 * Copilot CLI session logs (`~/.copilot/session-state/<id>/events.jsonl`)
 * read as transcripts: hand-written events in the shape Copilot CLI 1.0.102
 * writes them (the real binary's own log is audited in
 * `copilot.real.test.ts`). Calls come from `assistant.message`
 * `toolRequests`, results from `tool.execution_complete` (`success: false`,
 * or a shell exit code other than 0, fails a call), answers from the
 * assistant's text; the run names the `copilot` catalog, which `--catalog
 * auto` takes (issue 25 item 4).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { readTranscript, type TranscriptStep } from '../../../src/audit/transcripts/index.js';
import { main } from '../../../src/cli/main.js';

const dir = mkdtempSync(join(tmpdir(), 'pulse-safety-copilot-log-'));
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

/** A step in short: `call view`, `result view error`, `answer`. */
function brief(step: TranscriptStep): string {
  if (step.type === 'call') return `call ${step.name}`;
  if (step.type === 'result') return `result ${step.name} ${step.outcome}`;
  return step.type;
}

let n = 0;
const event = (type: string, data: object): object => ({
  type,
  data,
  id: `e${(n += 1)}`,
  timestamp: '2026-01-01T00:00:00.000Z',
  parentId: null,
});
const request = (toolCallId: string, name: string, args: object): object => ({ toolCallId, name, arguments: args, type: 'function' });

const log = [
  event('session.start', {
    sessionId: 's-1',
    version: 1,
    producer: 'copilot-agent',
    copilotVersion: '1.0.102',
    context: { cwd: '/srv/app' },
  }),
  event('user.message', { content: 'Change the greeting.' }),
  event('system.message', { role: 'system', content: 'You are the GitHub Copilot CLI.' }),
  event('assistant.turn_start', { turnId: '0' }),
  event('assistant.message', { content: 'Let me look first.', toolRequests: [request('c1', 'view', { path: '/srv/app/hello.txt' })] }),
  event('tool.execution_start', { toolCallId: 'c1', toolName: 'view', arguments: { path: '/srv/app/hello.txt' } }),
  event('tool.execution_complete', { toolCallId: 'c1', success: true, result: { content: 'hello\n' } }),
  event('assistant.message', {
    content: '',
    toolRequests: [request('c2', 'edit', { path: '/srv/app/hello.txt', old_str: 'hello', new_str: 'hi' })],
  }),
  event('tool.execution_complete', {
    toolCallId: 'c2',
    success: true,
    result: { content: 'File /srv/app/hello.txt updated with changes.' },
  }),
  event('assistant.message', { content: '', toolRequests: [request('c3', 'bash', { command: 'cat hello.txt', description: 'show' })] }),
  event('tool.execution_complete', {
    toolCallId: 'c3',
    success: true,
    shellExecution: { exitCode: 1 },
    result: { content: '<shellId: 0 completed with exit code 1>' },
  }),
  event('assistant.message', { content: '', toolRequests: [request('c4', 'view', { path: '/srv/app/gone.txt' })] }),
  event('tool.execution_complete', { toolCallId: 'c4', success: false, error: { message: 'Path does not exist', code: 'failure' } }),
  event('assistant.message', { content: 'The greeting now says hi.', toolRequests: [] }),
  event('assistant.turn_end', { turnId: '0' }),
  event('session.shutdown', { codeChanges: { filesModified: ['/srv/app/hello.txt'] } }),
];
const text = log.map((e) => JSON.stringify(e)).join('\n') + '\n';

describe('Copilot CLI session events', () => {
  test('calls with their ids and the session directory; failures from success:false and a shell exit code; the preamble is no answer', () => {
    const [run, ...rest] = readTranscript(text, 'events.jsonl');
    expect(rest).toEqual([]);
    expect(run).toMatchObject({ id: 's-1', reward: null, catalog: 'copilot' });
    expect(run!.steps.map(brief)).toEqual([
      'call view',
      'result view success',
      'call edit',
      'result edit success',
      'call bash',
      'result bash error',
      'call view',
      'result view error',
      'answer',
    ]);
    const calls = run!.steps.filter((s) => s.type === 'call');
    expect(calls.map((c) => c.id)).toEqual(['c1', 'c2', 'c3', 'c4']);
    expect(calls.every((c) => c.cwd === '/srv/app')).toBe(true);
    expect(calls[1]).toMatchObject({ args: { path: '/srv/app/hello.txt', old_str: 'hello', new_str: 'hi' }, position: 'line 8' });
    const failedView = run!.steps.find((s) => s.type === 'result' && s.id === 'c4');
    expect(failedView).toMatchObject({ text: 'Path does not exist' });
    expect(run!.steps.at(-1)).toMatchObject({ type: 'answer', text: 'The greeting now says hi.', position: 'line 14' });
  });

  test('recognised from the content under any file name, and a single event on its own', () => {
    expect(readTranscript(text, 'session.log')[0]!.catalog).toBe('copilot');
    const one = JSON.stringify(event('assistant.message', { content: 'Hi.', toolRequests: [] }), null, 2);
    expect(readTranscript(one, 'one.json')).toEqual([
      { id: 'one.json', reward: null, steps: [{ type: 'answer', text: 'Hi.', position: 'line 1' }], catalog: 'copilot' },
    ]);
  });

  test("a sub-agent's events (agentId or parentToolCallId) are a run of their own", () => {
    const sub = [
      event('session.start', { sessionId: 's-2', context: { cwd: '/srv/app' } }),
      event('user.message', { content: 'Delegate.' }),
      event('assistant.message', { content: '', toolRequests: [request('t1', 'task', { prompt: 'fix it' })] }),
      event('assistant.message', {
        content: '',
        parentToolCallId: 't1',
        toolRequests: [request('s1', 'edit', { path: 'x', old_str: 'a', new_str: 'b' })],
      }),
      event('tool.execution_complete', { toolCallId: 's1', parentToolCallId: 't1', success: true, result: { content: 'ok' } }),
      { ...(event('assistant.message', { content: 'Sub-agent done.' }) as object), agentId: 't1' },
      event('tool.execution_complete', { toolCallId: 't1', success: true, result: { content: 'fixed' } }),
      event('assistant.message', { content: 'Delegated and done.' }),
    ];
    const runs = readTranscript(sub.map((e) => JSON.stringify(e)).join('\n'), 'events.jsonl');
    expect(runs.map((run) => [run.id, run.catalog, run.steps.map(brief)])).toEqual([
      ['s-2', 'copilot', ['call task', 'result task success', 'answer']],
      ['s-2 agent t1', 'copilot', ['call edit', 'result edit success', 'answer']],
    ]);
    expect(runs[1]!.steps[0]).toMatchObject({ cwd: '/srv/app', position: 'line 4' });
  });

  test('bad events name their line', () => {
    const noName = [log[0], event('assistant.message', { content: '', toolRequests: [{ toolCallId: 'x' }] })];
    expect(() => readTranscript(noName.map((e) => JSON.stringify(e)).join('\n'), 'bad.jsonl')).toThrow(
      /bad\.jsonl.*line 2.*toolRequests\[0\] needs a string "name"/,
    );
    const noId = [log[0], event('tool.execution_complete', { success: true })];
    expect(() => readTranscript(noId.map((e) => JSON.stringify(e)).join('\n'), 'bad.jsonl')).toThrow(/line 2.*"toolCallId"/);
  });

  test('audits with the copilot catalog: the failed shell read does not verify the edit, so the answer is refused', async () => {
    const { code, out } = await audit(file('events.jsonl', text));
    expect(out).toContain("catalog auto: copilot, the log's format, knows 3 of 3 tool names");
    expect(out).toMatch(/would have been refused: final answer in VERIFYING \[unverified-write\]/);
    expect(code).toBe(1);
  });
});
