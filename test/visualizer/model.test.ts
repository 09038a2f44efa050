/**
 * The view builder (src/visualizer/model.ts) reads any parsed JSON totally:
 * inherited key names, entries of the wrong shape, and a probe whose work
 * would be too large.
 */
import { describe, expect, it } from 'vitest';
import { createMachine, type AnyStateMachine } from 'xstate';
import { MAX_PROBE_WORK } from '../../src/visualizer/bounds.js';
import { activeStateIds, enabledTransitions, pendingRecoveryViews, safetyProbeEvents } from '../../src/visualizer/model.js';

const door = createMachine({
  id: 'door',
  initial: 'closed',
  states: { closed: { on: { open: 'opened' } }, opened: {} },
}) as unknown as AnyStateMachine;

describe('activeStateIds', () => {
  it('skips keys that name inherited properties, not states', () => {
    const value = JSON.parse('{"__proto__":"x","constructor":{"toString":"y"},"closed":{}}') as unknown;
    expect(activeStateIds(door, value)).toEqual(['door', 'door.closed']);
  });
});

describe('safetyProbeEvents', () => {
  it('skips calls in flight that are not calls', () => {
    const call = { key: 'id:c1', tool: 'pulse_control', kind: 'write', admittedAt: 5, verifiesWrite: null };
    const events = safetyProbeEvents({ inFlight: [null, 7, { key: 1 }, call] }, 10);
    expect(events.filter((event) => event.type === 'tool.succeeded')).toEqual([
      { type: 'tool.succeeded', tool: 'pulse_control', kind: 'write', at: 10, callId: 'c1' },
    ]);
  });
});

describe('pendingRecoveryViews', () => {
  it('skips entries that are not pending recoveries', () => {
    const recovery = { recoveryId: 'FSM_BLOCKED:t', errorCode: 'FSM_BLOCKED', tool: 't', createdAt: 0, lastBlockedAt: 0, attempts: 1 };
    expect(pendingRecoveryViews({ pendingRecoveries: { a: null, b: { lastBlockedAt: 'x' }, c: recovery } }, 0)).toEqual([
      { ...recovery, expiresAt: 600_000, expiresInMs: 600_000 },
    ]);
  });
});

describe('enabledTransitions', () => {
  it(`tries no events on a machine whose active states times event types pass ${MAX_PROBE_WORK}`, () => {
    const regions = 150;
    const states = Object.fromEntries(
      Array.from({ length: regions }, (_, i) => [`r${i}`, { initial: 'a', states: { a: { on: { [`e${i}`]: 'b' } }, b: {} } }]),
    );
    const machine = createMachine({ id: 'wide', type: 'parallel', states } as never) as unknown as AnyStateMachine;
    const snapshot = machine.resolveState({
      value: Object.fromEntries(Array.from({ length: regions }, (_, i) => [`r${i}`, 'a'])),
    } as never);
    // 301 active states (root, regions, their `a`) × 150 event types > 20,000.
    expect(enabledTransitions(machine, snapshot, 0)).toEqual([]);
  });

  it('tries every event of a machine within the bound', () => {
    const snapshot = door.resolveState({ value: 'closed' } as never);
    expect(enabledTransitions(door, snapshot, 0)).toEqual(['t:door.closed:open:0']);
  });
});
