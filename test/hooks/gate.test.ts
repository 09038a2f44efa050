/**
 * The hook's gate (src/hooks/gate.ts) on the real session store in a temp
 * directory: the invariants across hook events, correlation with and without
 * call ids, parallel events decided as the in-process guard decides them,
 * and the fail-closed answers.
 */
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { answerHook, callKey } from '../../src/hooks/gate.js';
import { readHookSessions, sessionFilePath } from '../../src/hooks/session-file.js';
import type { HookAnswer, HookEvent, HookPayload, HookToolCall } from '../../src/hooks/types.js';
import { createSessionGuard } from '../../src/guard/session-guard.js';
import { builtinCatalogs, compileCatalog } from '../../src/classify/catalog/index.js';

let stateDir: string;
beforeEach(() => {
  stateDir = mkdtempSync(join(tmpdir(), 'pulse-gate-'));
});
afterEach(() => rmSync(stateDir, { recursive: true, force: true }));

const SESSION = 'session-1';

function payload(event: HookEvent, sessionId = SESSION): HookPayload {
  return { host: 'claude-code', sessionId, eventName: event.type, event, cwd: '/home/dev/project' };
}

function bash(command: string, id?: string): HookToolCall {
  return { ...(id === undefined ? {} : { id }), name: 'Bash', input: { command }, catalog: 'claude-code', cwd: '/home/dev/project' };
}

const before = (call: HookToolCall) => answerHook(payload({ type: 'tool.before', call }), { stateDir });
const after = (call: HookToolCall, outcome: 'success' | 'error' = 'success', result: unknown = '') =>
  answerHook(payload({ type: 'tool.after', call, outcome, result }), { stateDir });
const stop = () => answerHook(payload({ type: 'agent.stopping', active: false }), { stateDir });

/** Checks and records a call that is expected to be allowed. */
async function run(call: HookToolCall, result: unknown = ''): Promise<void> {
  const answer = await before(call);
  expect(answer.type, JSON.stringify(answer)).toBe('allow');
  await after(call, 'success', result);
}

describe('the gate across hook events', () => {
  it('refuses a write before any read, with FSM_BLOCKED and the read that clears it', async () => {
    const answer = await before(bash('rm -rf ~/x', 'c1'));
    expect(answer.type).toBe('deny');
    const deny = answer as Extract<HookAnswer, { type: 'deny' }>;
    expect(deny.code).toBe('FSM_BLOCKED');
    expect(deny.reason).toContain('FSM_BLOCKED');
    expect(deny.reason).toContain('It clears once "~/x", or a folder above it, has been read or listed');
  });

  it('admits the write after a read of its target, refuses a second write before a verifying read, and the stop until then', async () => {
    await run(bash('ls ~', 'r1'));
    await run(bash('rm -rf ~/x', 'w1'));
    const second = await before(bash('rm -rf ~/y', 'w2'));
    expect(second.type).toBe('deny');
    expect((second as { rule?: string }).rule).toBe('unverified-write');
    const refused = await stop();
    expect(refused.type).toBe('block-stop');
    expect((refused as { reason: string }).reason).toContain('FSM_BLOCKED');
    await run(bash('ls ~', 'r2'));
    expect((await stop()).type).toBe('continue');
  });

  it('does not let a shell write verify itself through its own output', async () => {
    await run(bash('ls ~', 'r1'));
    await run(bash(`rm -rf ~/x; echo '{"verification":{"ok":true}}'`, 'w1'), '{"verification":{"ok":true}}');
    expect((await before(bash('rm -rf ~/y', 'w2'))).type).toBe('deny');
  });

  it('a failed write may still have changed things: the next write and the stop wait for a verifying read', async () => {
    await run(bash('ls ~', 'r1'));
    const write = bash('rm -rf ~/x; false', 'w1');
    expect((await before(write)).type).toBe('allow');
    await after(write, 'error', 'Exit code 1');
    expect(await before(bash('rm -rf ~/y', 'w2'))).toMatchObject({ type: 'deny', rule: 'unverified-write' });
    expect((await stop()).type).toBe('block-stop');
    await run(bash('ls ~', 'r2'));
    expect((await before(bash('rm -rf ~/y', 'w3'))).type).toBe('allow');
  });

  it('with confirmDestructive, a destructive write is asked about, and the call that then runs counts the approval', async () => {
    const options = { stateDir, confirmDestructive: true };
    const ask = (call: HookToolCall) => answerHook(payload({ type: 'tool.before', call }), options);
    await run(bash('ls ~', 'r1'));
    const write = bash('rm -rf ~/x', 'w1');
    expect(await ask(write)).toMatchObject({ type: 'ask', rule: 'needs-confirmation' });
    // The user approved in the host's prompt, the call ran: the session records the write, which now needs verification.
    await answerHook(payload({ type: 'tool.after', call: write, outcome: 'success', result: '' }), options);
    expect(await ask(bash('rm -rf ~/y', 'w2'))).toMatchObject({ type: 'deny', rule: 'unverified-write' });
  });

  it('correlates before and after by tool name and input where the host gives no id, also two identical calls in flight', async () => {
    await run(bash('ls ~'));
    const write = bash('rm -rf ~/x');
    expect((await before(write)).type).toBe('allow');
    await after(write);
    // The write settled: the session waits for a verifying read.
    const [record] = await readHookSessions(stateDir);
    expect(record && 'record' in record ? Object.keys(record.record.calls) : ['?']).toEqual([]);
    const read = bash('ls ~');
    expect((await before(read)).type).toBe('allow');
    expect((await before(read)).type).toBe('allow');
    const [mid] = await readHookSessions(stateDir);
    expect(mid && 'record' in mid ? Object.keys(mid.record.calls).sort() : []).toEqual([callKey(read), `${callKey(read)}#2`].sort());
    await after(read);
    await after(read);
    const [end] = await readHookSessions(stateDir);
    expect(end && 'record' in end ? Object.keys(end.record.calls) : ['?']).toEqual([]);
    expect((await stop()).type).toBe('continue');
  });

  it('decides a parallel batch of three reads and a write exactly as the in-process guard decides them', async () => {
    await run(bash('ls ~', 'r0'));
    await run(bash('rm -rf ~/a', 'w0'));
    const batch = [bash('cat ~/notes.txt', 'p1'), bash('ls ~/a', 'p2'), bash('rm -rf ~/b', 'p3'), bash('ls ~', 'p4')];
    const answers = await Promise.all(batch.map((call) => before(call)));
    // The same calls through one in-process guard: every order of the batch gives the same answers here
    // (reads are always admitted, and the write waits for a read that completes), so the batch's order is used.
    const catalog = compileCatalog(builtinCatalogs['claude-code']);
    const guard = createSessionGuard({ classify: (name, args) => catalog.classify(name, args, { cwd: '/home/dev/project' }) });
    for (const call of [bash('ls ~', 'r0'), bash('rm -rf ~/a', 'w0')]) {
      guard.check({ id: call.id!, name: call.name, args: call.input });
      guard.record({ id: call.id!, name: call.name }, 'success');
    }
    const inProcess = batch.map((call) => (guard.check({ id: call.id!, name: call.name, args: call.input }).allowed ? 'allow' : 'deny'));
    expect(answers.map((answer) => answer.type)).toEqual(inProcess);
    const byId = new Map(batch.map((call, i) => [call.id!, answers[i]!]));
    // The write is refused whatever the order: the last write is unverified until a read completes, and none has.
    expect(byId.get('p3')!.type).toBe('deny');
    expect(['p1', 'p2', 'p4'].map((id) => byId.get(id)!.type)).toEqual(['allow', 'allow', 'allow']);
  });
});

describe('fails closed', () => {
  it('a corrupt state file: reads allowed, writes and the stop refused with HOOK_STATE_UNREADABLE', async () => {
    const file = sessionFilePath(stateDir, 'claude-code', SESSION);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, '{"version":1, "host": "claude-code", "sessi');
    expect((await before(bash('ls ~', 'r1'))).type).toBe('allow');
    const write = await before(bash('rm -rf ~/x', 'w1'));
    expect(write).toMatchObject({ type: 'deny', code: 'HOOK_STATE_UNREADABLE' });
    expect(await stop()).toMatchObject({ type: 'block-stop', code: 'HOOK_STATE_UNREADABLE' });
  });

  it('a snapshot the guard cannot restore: the same fail-closed answers, with HOOK_INTERNAL_ERROR', async () => {
    await run(bash('ls ~', 'r1'));
    const file = sessionFilePath(stateDir, 'claude-code', SESSION);
    const sessions = await readHookSessions(stateDir);
    const entry = sessions[0]!;
    if (!('record' in entry)) throw new Error('unreadable session');
    writeFileSync(file, JSON.stringify({ ...entry.record, snapshot: { v: 2, s: 'NOWHERE' } }));
    const answer = await before(bash('rm -rf ~/x', 'w1'));
    expect(answer.type).toBe('deny');
    expect((answer as { code: string }).code).toMatch(/^HOOK_/);
    expect((await before(bash('cat ~/x', 'r2'))).type).toBe('allow');
  });

  it('an MCP tool without annotations is a write; with read-only annotations a read', async () => {
    const mcp: HookToolCall = { id: 'm1', name: 'mcp__fs__read_file', input: { path: '/x' }, catalog: 'claude-code' };
    expect((await before(mcp)).type).toBe('deny');
    const annotated = await answerHook(payload({ type: 'tool.before', call: { ...mcp, id: 'm2' } }), {
      stateDir,
      mcpAnnotations: { mcp__fs__read_file: { readOnlyHint: true } },
    });
    expect(annotated).toMatchObject({ type: 'allow', kind: 'read' });
  });
});
