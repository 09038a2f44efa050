/**
 * The live hub (src/visualizer/live.ts): sessions streamed by
 * `@statelyai/inspect`'s WebSocket inspector, read as untrusted input.
 */
import { describe, expect, it } from 'vitest';
import type { AnyStateMachine } from 'xstate';
import { initialSafetyContext, safetyMachine } from '../../machines/safety.machine.js';
import { LiveHub } from '../../src/visualizer/live.js';

function hub(): { hub: LiveHub; changes: string[] } {
  const changes: string[] = [];
  const machines = new Map<string, AnyStateMachine>([['safety', safetyMachine as unknown as AnyStateMachine]]);
  return { hub: new LiveHub(machines, (id) => changes.push(id), () => 1_000), changes };
}

const actor = (sessionId: string) =>
  JSON.stringify({
    type: '@xstate.actor',
    sessionId,
    name: 'safety',
    definition: JSON.stringify({ id: 'safety' }),
    snapshot: { status: 'active', value: 'RESOLVING', context: initialSafetyContext() },
  });

const event = (sessionId: string, body: object) => JSON.stringify({ type: '@xstate.event', sessionId, event: body });

describe('LiveHub', () => {
  it('lists an announced actor under its machine', () => {
    const { hub: live } = hub();
    expect(live.receive(1, actor('x:0'))).toBe(true);
    expect(live.sessions()).toMatchObject([{ sessionId: '1/x:0', actorSessionId: 'x:0', machineId: 'safety', state: 'RESOLVING', connected: true }]);
  });

  it('keeps sessions of different connections apart, though their actor ids are the same', () => {
    const { hub: live } = hub();
    live.receive(1, actor('x:0'));
    live.receive(2, actor('x:0'));
    expect(live.sessions().map((s) => s.sessionId).sort()).toEqual(['1/x:0', '2/x:0']);
  });

  it("works out the gate's decision on an event, with the structured tool result", () => {
    const { hub: live } = hub();
    live.receive(1, actor('x:0'));
    live.receive(1, event('x:0', { type: 'tool.requested', tool: 'pulse_control', kind: 'write', callId: 'c1', at: 500 }));
    const [entry] = live.session('1/x:0')!.log;
    expect(entry).toMatchObject({ stateBefore: 'RESOLVING', stateAfter: 'RESOLVING', taken: ['t:safety.RESOLVING:tool.requested:0'] });
    expect(entry!.decision).toMatchObject({ allowed: false, code: 'FSM_BLOCKED', toolResult: { error: { tool: 'pulse_control' } } });
  });

  it("follows the application's own snapshot", () => {
    const { hub: live } = hub();
    live.receive(1, actor('x:0'));
    const context = { ...initialSafetyContext(), lastReadTool: 'pulse_query', lastReadAt: 900 };
    live.receive(1, JSON.stringify({ type: '@xstate.snapshot', sessionId: 'x:0', snapshot: { status: 'active', value: 'READING', context } }));
    expect(live.session('1/x:0')!.view).toMatchObject({ state: 'READING', context: { lastReadTool: 'pulse_query' } });
  });

  it('drops a message that is not an inspection event and changes nothing', () => {
    const { hub: live, changes } = hub();
    expect(live.receive(1, '{ not json')).toBe(false);
    expect(live.receive(1, JSON.stringify({ type: '@xstate.event', sessionId: 'x:0' }))).toBe(false);
    expect(live.receive(1, JSON.stringify({ type: '@xstate.actor', sessionId: 42 }))).toBe(false);
    expect(live.sessions()).toEqual([]);
    expect(changes).toEqual([]);
  });

  it('marks the sessions of a closed connection disconnected', () => {
    const { hub: live } = hub();
    live.receive(1, actor('x:0'));
    live.disconnect(1);
    expect(live.sessions()[0]!.connected).toBe(false);
  });

  it('charts an unknown machine from its streamed definition', () => {
    const machines = new Map<string, AnyStateMachine>();
    const live = new LiveHub(machines, () => {});
    const definition = { id: 'door', initial: 'closed', states: { closed: { on: { open: 'opened' } }, opened: {} } };
    live.receive(1, JSON.stringify({ type: '@xstate.actor', sessionId: 'x:1', definition: JSON.stringify(definition), snapshot: { value: 'closed' } }));
    expect(live.sessions()[0]).toMatchObject({ machineId: 'door', state: 'closed' });
    expect(machines.get('door')?.id).toBe('door');
    expect(live.session('1/x:1')!.view?.enabled).toEqual(['t:door.closed:open:0']);
  });
});
