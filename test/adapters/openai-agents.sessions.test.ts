/**
 * Issue #26, the wiring trap: an `Agent` built once serves every user, so
 * the gate gives each conversation its own guard (`getGuard`, keyed by the
 * run's `sessionKey`, the SDK's `session` or its `conversationId`), and a
 * fixed `guard` refuses to serve a second conversation. Also: targets (a
 * listing of `other` does not admit deleting `notes/a.txt`) and the
 * subpath's `AdapterConfigError`. Real `@openai/agents` runner, the SDK's
 * `ScriptedModel` and `MemorySession`.
 */
import { MemorySession } from '@openai/agents';
import { describe, expect, it } from 'vitest';
import { AdapterConfigError as CommonConfigError } from '../../src/adapters/common.js';
import { AdapterConfigError } from '../../src/adapters/openai-agents.js';
import { createSessionStore } from '../../src/store/session-store.js';
import { answer, filesAgent, guardWithClock, list, outputFor, remove } from './openai-agents.support.js';

/** User A lists notes; user B, on the same agent, deletes notes/a.txt. */
const A_THEN_B = [list('notes', 'a1'), answer('notes holds a.txt and b.txt.'), remove('notes/a.txt', 'b1'), answer('I could not.')];

function store() {
  let t = 1_000;
  return createSessionStore({ now: () => (t += 1) });
}

describe('one guard per conversation', () => {
  it("getGuard by the run's conversationId: A's listing does not admit B's delete", async () => {
    const sessions = store();
    const { gate, agent, log, model } = filesAgent(A_THEN_B, { getGuard: (key) => sessions.session(key) });
    await gate.run(agent, 'What is in notes?', { conversationId: 'conv-a' });
    const b = await gate.run(agent, 'Delete notes/a.txt.', { conversationId: 'conv-b' });
    expect(log).toEqual(['list_files notes']);
    expect(outputFor(model.calls[3]!.request.input, 'b1')).toContain('FSM_BLOCKED');
    expect(b.finalOutput).toBe('I could not.');
    expect(sessions.session('conv-a').context.lastReadTool).toBe('list_files');
    expect(sessions.session('conv-b').context.lastReadTool).toBeNull();
  });

  it("getGuard by the SDK session's id (MemorySession)", async () => {
    const sessions = store();
    const { gate, agent, log } = filesAgent(A_THEN_B, { getGuard: (key) => sessions.session(key) });
    await gate.run(agent, 'What is in notes?', { session: new MemorySession({ sessionId: 'user-a' }) });
    await gate.run(agent, 'Delete notes/a.txt.', { session: new MemorySession({ sessionId: 'user-b' }) });
    expect(log).toEqual(['list_files notes']);
    expect(sessions.session('user-a').state).toBe('READING');
    expect(sessions.session('user-b').state).toBe('RESOLVING');
  });

  it('getGuard by sessionKey(runContext), which wins over the session', async () => {
    const sessions = store();
    const { gate, agent } = filesAgent<{ user: string }>([list('notes', 'a1'), answer('ok')], {
      getGuard: (key) => sessions.session(key),
      sessionKey: (context) => `user:${context.context.user}`,
    });
    await gate.run(agent, 'What is in notes?', { context: { user: 'a' }, session: new MemorySession({ sessionId: 's-1' }) });
    expect(sessions.session('user:a').state).toBe('READING');
    expect(sessions.session('s-1').state).toBe('RESOLVING');
  });

  it('a fixed guard refuses a second conversation before its model is called: B never reaches the delete', async () => {
    const { gate, agent, log, model } = filesAgent(A_THEN_B);
    await gate.run(agent, 'What is in notes?');
    const error = await gate.run(agent, 'Delete notes/a.txt.').catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(AdapterConfigError);
    expect(String(error)).toMatch(/serves one conversation.*getGuard/);
    expect(model.calls).toHaveLength(2);
    expect(log).toEqual(['list_files notes']);
  });

  it('a fixed guard serves the runs that name its conversation', async () => {
    const guard = guardWithClock();
    const { gate, agent } = filesAgent(
      [list('notes', 'a1'), answer('ok'), remove('notes/a.txt', 'a2'), list('notes', 'a3'), answer('gone')],
      {
        guard,
      },
    );
    await gate.run(agent, 'What is in notes?', { conversationId: 'conv-a' });
    const second = await gate.run(agent, 'Delete notes/a.txt.', { conversationId: 'conv-a' });
    expect(second.finalOutput).toBe('gone');
    await expect(gate.run(agent, 'hello', { conversationId: 'conv-b' })).rejects.toThrow(/'conv-a'.*is 'conv-b'/);
  });
});

describe('targets', () => {
  it('a listing of other does not admit deleting notes/a.txt; a listing of notes does', async () => {
    const { gate, agent, log, model } = filesAgent([
      list('other', 'c1'),
      remove('notes/a.txt', 'c2'),
      list('notes', 'c3'),
      remove('notes/a.txt', 'c4'),
      list('notes', 'c5'),
      answer('notes/a.txt is deleted.'),
    ]);
    const result = await gate.run(agent, 'Delete notes/a.txt.');
    expect(outputFor(model.calls[2]!.request.input, 'c2')).toContain('unknown-target');
    expect(log).toEqual(['list_files other', 'list_files notes', 'delete_file notes/a.txt', 'list_files notes']);
    expect(result.finalOutput).toBe('notes/a.txt is deleted.');
  });
});

describe('AdapterConfigError', () => {
  it("is exported from pulse-safety-fsm/openai-agents, the same class as every adapter's", () => {
    expect(AdapterConfigError).toBe(CommonConfigError);
    const { gate, agent } = filesAgent([]);
    expect(() => gate.assertAgent(agent.clone({ outputGuardrails: [] }))).toThrow(AdapterConfigError);
  });
});
