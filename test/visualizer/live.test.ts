/**
 * The live hub (src/visualizer/live.ts): sessions streamed by
 * `@statelyai/inspect`'s WebSocket inspector, read as untrusted input.
 */
import { describe, expect, it } from 'vitest';
import { setup, type AnyStateMachine } from 'xstate';
import { initialSafetyContext, safetyMachine } from '../../machines/safety.machine.js';
import {
  DropLog,
  MAX_CHART_STATES,
  MAX_CHART_TRANSITIONS,
  MAX_DEFINITION_BYTES,
  MAX_DEFINITIONS,
  MAX_DEFINITIONS_PER_SESSION,
  MAX_JSON_DEPTH,
  MAX_NAME_LENGTH,
  MAX_STATE_TEXT,
} from '../../src/visualizer/bounds.js';
import { LiveHub, MAX_LIVE_LOG, MAX_LIVE_SESSIONS } from '../../src/visualizer/live.js';

function hub(): { hub: LiveHub; changes: string[] } {
  const changes: string[] = [];
  const machines = new Map<string, AnyStateMachine>([['safety', safetyMachine as unknown as AnyStateMachine]]);
  return {
    hub: new LiveHub(
      machines,
      (id) => changes.push(id),
      () => 1_000,
    ),
    changes,
  };
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
    expect(live.sessions()).toMatchObject([
      { sessionId: '1/x:0', actorSessionId: 'x:0', machineId: 'safety', state: 'RESOLVING', connected: true },
    ]);
  });

  it('keeps sessions of different connections apart, though their actor ids are the same', () => {
    const { hub: live } = hub();
    live.receive(1, actor('x:0'));
    live.receive(2, actor('x:0'));
    expect(
      live
        .sessions()
        .map((s) => s.sessionId)
        .sort(),
    ).toEqual(['1/x:0', '2/x:0']);
  });

  it("works out the gate's decision on an event, with the structured tool result", () => {
    const { hub: live } = hub();
    live.receive(1, actor('x:0'));
    live.receive(1, event('x:0', { type: 'tool.requested', tool: 'pulse_control', kind: 'write', callId: 'c1', at: 500 }));
    const [entry] = live.session('1/x:0')!.log;
    expect(entry).toMatchObject({ stateBefore: 'RESOLVING', stateAfter: 'RESOLVING', taken: ['t:safety.RESOLVING:tool.requested:1'] });
    expect(entry!.decision).toMatchObject({ allowed: false, code: 'FSM_BLOCKED', toolResult: { error: { tool: 'pulse_control' } } });
  });

  it("follows the application's own snapshot", () => {
    const { hub: live } = hub();
    live.receive(1, actor('x:0'));
    const context = { ...initialSafetyContext(), lastReadTool: 'pulse_query', lastReadAt: 900 };
    live.receive(
      1,
      JSON.stringify({ type: '@xstate.snapshot', sessionId: 'x:0', snapshot: { status: 'active', value: 'READING', context } }),
    );
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
    live.receive(1, doorActor('x:1', 'door', { value: 'closed' }));
    expect(live.sessions()[0]).toMatchObject({ machineId: 'door', state: 'closed' });
    expect(live.definition('door')?.machine?.id).toBe('door');
    expect(live.session('1/x:1')!.view?.enabled).toEqual(['t:door.closed:open:0']);
  });

  it('keeps streamed definitions apart from the configured machines', () => {
    const machines = new Map<string, AnyStateMachine>([['safety', safetyMachine as unknown as AnyStateMachine]]);
    const live = new LiveHub(machines, () => {});
    live.receive(1, doorActor('x:1', 'door', { value: 'closed' }));
    expect([...machines.keys()]).toEqual(['safety']);
  });
});

/** An `@xstate.actor` message of a two-state door machine with id `id`. */
function doorActor(sessionId: string, id: string, snapshot: object = {}): string {
  const definition = { id, initial: 'closed', states: { closed: { on: { open: 'opened' } }, opened: {} } };
  return JSON.stringify({ type: '@xstate.actor', sessionId, definition: JSON.stringify(definition), snapshot });
}

/** A hub that records what it logs. */
function loggingHub(): { live: LiveHub; lines: string[]; drops: DropLog } {
  const lines: string[] = [];
  const drops = new DropLog((line) => lines.push(line));
  const machines = new Map<string, AnyStateMachine>([['safety', safetyMachine as unknown as AnyStateMachine]]);
  return {
    live: new LiveHub(
      machines,
      () => {},
      () => 1_000,
      drops,
    ),
    lines,
    drops,
  };
}

const safetySnapshot = (sessionId: string, value: unknown, context: unknown) =>
  JSON.stringify({ type: '@xstate.snapshot', sessionId, snapshot: { status: 'active', value, context } });

describe('LiveHub: a safety snapshot is validated before any view sees it', () => {
  it('drops a snapshot whose calls in flight are not calls, and keeps the session as it was', () => {
    const { live } = loggingHub();
    live.receive(1, actor('x:0'));
    const before = live.session('1/x:0');
    expect(live.receive(1, safetySnapshot('x:0', 'READING', { ...initialSafetyContext(), inFlight: [null] }))).toBe(false);
    expect(live.session('1/x:0')).toEqual(before);
  });

  it('drops a snapshot whose pending recoveries are not recoveries', () => {
    const { live } = loggingHub();
    live.receive(1, actor('x:0'));
    expect(live.receive(1, safetySnapshot('x:0', 'RESOLVING', { ...initialSafetyContext(), pendingRecoveries: { a: null } }))).toBe(false);
    expect(live.session('1/x:0')!.view).toMatchObject({ state: 'RESOLVING', pendingRecoveries: [] });
  });

  it('drops an announcement whose snapshot is broken, so no session appears', () => {
    const { live } = loggingHub();
    const message = JSON.stringify({
      type: '@xstate.actor',
      sessionId: 'x:0',
      definition: JSON.stringify({ id: 'safety' }),
      snapshot: { value: 'READING', context: { ...initialSafetyContext(), inFlight: [null] } },
    });
    expect(live.receive(1, message)).toBe(false);
    expect(live.sessions()).toEqual([]);
  });

  it('drops a state the safety machine does not have', () => {
    const { live } = loggingHub();
    live.receive(1, actor('x:0'));
    expect(live.receive(1, safetySnapshot('x:0', { RESOLVING: 'x' }, initialSafetyContext()))).toBe(false);
    expect(live.sessions()[0]!.state).toBe('RESOLVING');
  });

  it('drops a combination the safety machine cannot reach', () => {
    const { live } = loggingHub();
    live.receive(1, actor('x:0'));
    // readAfterWrite is only ever set in VERIFYING.
    const context = { ...initialSafetyContext(), readAfterWrite: true, lastReadTool: 'pulse_query', lastReadAt: 900 };
    expect(live.receive(1, safetySnapshot('x:0', 'READING', context))).toBe(false);
  });

  it('accepts the snapshot a real session streams, fields it does not know left out', () => {
    const { live } = loggingHub();
    live.receive(1, actor('x:0'));
    const context = { ...initialSafetyContext(), lastReadTool: 'pulse_query', lastReadAt: 900, extra: { a: 1 } };
    expect(live.receive(1, safetySnapshot('x:0', 'READING', context))).toBe(true);
    expect(live.session('1/x:0')!.view!.context).not.toHaveProperty('extra');
  });

  it('logs the first drop of a kind and counts the rest', () => {
    const { live, lines, drops } = loggingHub();
    live.receive(1, actor('x:0'));
    for (let i = 0; i < 50; i++) live.receive(1, safetySnapshot('x:0', 'READING', { ...initialSafetyContext(), inFlight: [null] }));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^pulse-safety visualizer: dropped invalid safety snapshot: context\.inFlight\[0\]: /);
    expect(drops.counted()).toEqual({ 'invalid safety snapshot': 50 });
  });
});

describe('LiveHub: any other input is read totally', () => {
  it('drops a message nested deeper than the bound before parsing it', () => {
    const { live, drops } = loggingHub();
    const deep = '{"a":'.repeat(5_000) + '"R"' + '}'.repeat(5_000);
    const message = JSON.stringify({
      type: '@xstate.actor',
      sessionId: 'x:0',
      definition: '{"id":"door"}',
      snapshot: { value: 'HOLE' },
    }).replace('"HOLE"', deep);
    expect(live.receive(1, message)).toBe(false);
    expect(live.sessions()).toEqual([]);
    expect(drops.counted()).toEqual({ 'inspection message nested too deep': 1 });
  });

  it('accepts a message nested as deep as the bound', () => {
    const { live } = loggingHub();
    // The message object and its snapshot are 2 levels; the value adds the rest.
    const value = '{"closed":'.repeat(MAX_JSON_DEPTH - 2) + '"x"' + '}'.repeat(MAX_JSON_DEPTH - 2);
    expect(live.receive(1, doorActor('x:0', 'door', { value: 'HOLE' }).replace('"HOLE"', value))).toBe(true);
  });

  it('shows an unknown machine whose state value names inherited keys', () => {
    const { live } = loggingHub();
    live.receive(1, doorActor('x:0', 'door', { value: 'closed' }));
    live.receive(1, '{"type":"@xstate.snapshot","sessionId":"x:0","snapshot":{"value":{"__proto__":"x","constructor":{"toString":"y"}}}}');
    expect(live.session('1/x:0')!.view).toMatchObject({ machineId: 'door', state: '{"__proto__":"x","constructor":{"toString":"y"}}' });
  });

  it('reads no safety fields from an unknown machine whose context happens to have them', () => {
    const { live } = loggingHub();
    live.receive(1, doorActor('x:0', 'door', { value: 'closed', context: { inFlight: [null], pendingRecoveries: { a: null } } }));
    expect(live.session('1/x:0')!.view).toMatchObject({ pendingRecoveries: [], inFlight: [], context: { inFlight: [null] } });
  });

  it('cuts a long state value in the session list and the log', () => {
    const { live } = loggingHub();
    live.receive(1, doorActor('x:0', 'door', { value: { closed: 'x'.repeat(10_000) } }));
    live.receive(1, JSON.stringify({ type: '@xstate.event', sessionId: 'x:0', event: { type: 'open' } }));
    expect(live.sessions()[0]!.state).toHaveLength(MAX_STATE_TEXT);
    expect(live.session('1/x:0')!.log[0]!.stateBefore).toHaveLength(MAX_STATE_TEXT);
  });

  it(`keeps at most ${MAX_LIVE_SESSIONS} sessions, the least recently seen dropped`, () => {
    let now = 0;
    const live = new LiveHub(
      new Map(),
      () => {},
      () => ++now,
    );
    for (let i = 0; i <= MAX_LIVE_SESSIONS; i++) live.receive(1, doorActor(`x:${i}`, 'door'));
    expect(live.stats().liveSessions).toBe(MAX_LIVE_SESSIONS);
    expect(live.session('1/x:0')).toBeUndefined();
  });

  it(`keeps at most ${MAX_LIVE_LOG} log entries per session, the oldest dropped`, () => {
    const { live } = loggingHub();
    live.receive(1, doorActor('x:0', 'door', { value: 'closed' }));
    for (let i = 0; i < MAX_LIVE_LOG + 10; i++)
      live.receive(1, JSON.stringify({ type: '@xstate.event', sessionId: 'x:0', event: { type: `e${i}` } }));
    const log = live.session('1/x:0')!.log;
    expect(log).toHaveLength(MAX_LIVE_LOG);
    expect(log[0]!.label).toBe('e10');
  });

  it('refuses an event type longer than the bound', () => {
    const { live } = loggingHub();
    expect(
      live.receive(1, JSON.stringify({ type: '@xstate.event', sessionId: 'x:0', event: { type: 'e'.repeat(MAX_NAME_LENGTH + 1) } })),
    ).toBe(false);
  });
});

describe('LiveHub: streamed definitions are bounded', () => {
  it(`keeps at most ${MAX_DEFINITIONS_PER_SESSION} definitions per session, the oldest evicted`, () => {
    const { live } = loggingHub();
    for (let i = 0; i < 10; i++) live.receive(1, doorActor('x:0', `door${i}`));
    expect(live.definitionsOf('1/x:0')).toBe(MAX_DEFINITIONS_PER_SESSION);
    expect(live.definition('door5')).toBeUndefined();
    expect(live.definition('door9')?.machine).not.toBeNull();
  });

  it(`keeps at most ${MAX_DEFINITIONS} definitions in all, the oldest evicted`, () => {
    const { live } = loggingHub();
    for (let i = 0; i < 3 * MAX_DEFINITIONS; i++) live.receive(1, doorActor(`x:${i}`, `door${i}`));
    expect(live.stats().definitions).toBe(MAX_DEFINITIONS);
    expect(live.definition('door0')).toBeUndefined();
    expect(live.definition(`door${3 * MAX_DEFINITIONS - 1}`)).toBeDefined();
  });

  it(`refuses a definition nested more than ${MAX_JSON_DEPTH} deep`, () => {
    const { live, drops } = loggingHub();
    const definition = '{"id":"deep","meta":' + '['.repeat(MAX_JSON_DEPTH) + ']'.repeat(MAX_JSON_DEPTH) + '}';
    live.receive(1, JSON.stringify({ type: '@xstate.actor', sessionId: 'x:0', definition }));
    expect(live.definition('deep')).toBeUndefined();
    expect(drops.counted()).toEqual({ 'machine definition': 1 });
  });

  it('does not keep a definition that names a configured machine', () => {
    const { live } = loggingHub();
    live.receive(1, actor('x:0'));
    expect(live.stats().definitions).toBe(0);
    expect(live.sessions()[0]!.machineId).toBe('safety');
  });

  it(`refuses a definition over ${MAX_DEFINITION_BYTES} bytes, and shows its session without a chart`, () => {
    const { live, drops } = loggingHub();
    const definition = JSON.stringify({ id: 'huge', description: 'x'.repeat(MAX_DEFINITION_BYTES) });
    live.receive(1, JSON.stringify({ type: '@xstate.actor', sessionId: 'x:0', definition, snapshot: { value: 'a' } }));
    expect(live.stats().definitions).toBe(0);
    expect(live.sessions()[0]).toMatchObject({ machineId: null, state: 'a' });
    expect(drops.counted()).toEqual({ 'machine definition': 1 });
  });

  it(`keeps a machine of more than ${MAX_CHART_STATES} states unbuilt, as too large to chart`, () => {
    const { live } = loggingHub();
    const states = Object.fromEntries(Array.from({ length: MAX_CHART_STATES + 1 }, (_, i) => [`s${i}`, {}]));
    const definition = JSON.stringify({ id: 'big', initial: 's0', states });
    live.receive(1, JSON.stringify({ type: '@xstate.actor', sessionId: 'x:0', definition, snapshot: { value: 's0' } }));
    expect(live.definition('big')).toMatchObject({
      machine: null,
      tooLarge: `the machine 'big' is too large to chart: more than ${MAX_CHART_STATES} states`,
    });
    expect(live.session('1/x:0')!.view).toMatchObject({ machineId: 'big', state: 's0', activeStateIds: [], enabled: [] });
  });

  it(`keeps a machine of more than ${MAX_CHART_TRANSITIONS} transitions unbuilt`, () => {
    const { live } = loggingHub();
    const on = Object.fromEntries(Array.from({ length: MAX_CHART_TRANSITIONS + 1 }, (_, i) => [`e${i}`, 'a']));
    const definition = JSON.stringify({ id: 'busy', initial: 'a', states: { a: { on } } });
    live.receive(1, JSON.stringify({ type: '@xstate.actor', sessionId: 'x:0', definition }));
    expect(live.definition('busy')?.machine).toBeNull();
  });
});

describe('LiveHub: distinct sessions and labels (issue 12 item 8)', () => {
  it('keeps apart two actors that announce the same session id on one connection (two copies of XState on one inspector)', () => {
    const { hub: live } = hub();
    live.receive(1, actor('x:0'));
    live.receive(1, actor('x:0'));
    expect(
      live
        .sessions()
        .map((s) => s.sessionId)
        .sort(),
    ).toEqual(['1/x:0', '1/x:0#2']);
  });

  it('says on both sessions that their actors share a session id on one connection', () => {
    const { hub: live } = hub();
    live.receive(1, actor('x:0'));
    live.receive(1, actor('x:0'));
    for (const session of live.sessions())
      expect(session.collision).toMatch(/^another actor announced session id x:0 on the same inspector connection/);
  });

  it("sends a shared session id's later events to the newest actor", () => {
    const { hub: live } = hub();
    live.receive(1, actor('x:0'));
    live.receive(1, actor('x:0'));
    live.receive(1, event('x:0', { type: 'answer.requested', at: 500 }));
    expect(live.session('1/x:0#2')!.events).toBe(1);
    expect(live.session('1/x:0')!.events).toBe(0);
  });

  it('labels sessions of one machine on two inspectors apart', () => {
    const { hub: live } = hub();
    live.receive(1, actor('x:0'));
    live.receive(2, actor('x:0'));
    expect(
      live
        .sessions()
        .map((s) => s.label)
        .sort(),
    ).toEqual(['safety · x:0 · inspector 1', 'safety · x:0 · inspector 2']);
  });

  it('labels a session with the name the application gives its actor, and its machine', () => {
    const { hub: live } = hub();
    const named = JSON.parse(actor('x:0')) as Record<string, unknown>;
    live.receive(1, JSON.stringify({ ...named, name: 'checkout-agent' }));
    expect(live.sessions()[0]!.label).toBe('checkout-agent (safety) · x:0 · inspector 1');
  });
});

describe('LiveHub: the transitions an event took', () => {
  it('lists the eventless transitions XState took after an event of a configured machine', () => {
    const lift = setup({}).createMachine({
      id: 'lift',
      initial: 'idle',
      states: { idle: { on: { call: 'moving' } }, moving: { always: { target: 'arrived' } }, arrived: {} },
    });
    const live = new LiveHub(
      new Map<string, AnyStateMachine>([['lift', lift as unknown as AnyStateMachine]]),
      () => {},
      () => 1_000,
    );
    live.receive(
      1,
      JSON.stringify({ type: '@xstate.actor', sessionId: 'x:0', definition: JSON.stringify({ id: 'lift' }), snapshot: { value: 'idle' } }),
    );
    live.receive(1, event('x:0', { type: 'call' }));
    expect(live.session('1/x:0')!.log[0]).toMatchObject({ stateAfter: 'arrived', taken: ['t:lift.idle:call:0', 't:lift.moving:always:0'] });
  });
});
