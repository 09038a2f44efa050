/**
 * The safety statechart driven directly as an actor: neutral calls, the absence of a clock, strict failed writes, malformed events, and the chart as designers read it.
 *
 * Spec: ASSISTANT_SAFETY.md "States", "The invariants", "Blocked calls and
 * recovery", "Resetting"; DESIGN.md §1 and §3.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { safetyMachine } from '../../../machines/safety.machine.js';
import { RECOVERY_TTL_MS } from '../../../machines/safety.policy.js';
import type { SafetyContext, ToolKind } from '../../../machines/safety.types.js';
import {
  ALL_STATES,
  T,
  failed,
  inState,
  requested,
  run,
  start,
  succeeded,
  toReading,
  toVerified,
  toVerifying,
} from '../../support/safety-session.js';

describe('neutral behaves like user_input (DESIGN §3.6)', () => {
  it('a neutral call in RESOLVING does not advance the state', () => {
    const s = start();
    run(s, 'calculate', 'neutral', T, 'n');
    expect(s.state).toBe('RESOLVING');
  });

  it('a neutral call in VERIFYING is not verification', () => {
    const s = inState('VERIFYING');
    run(s, 'think', 'neutral', T + 10, 'n');
    expect(s.context.readAfterWrite).toBe(false);
  });

  it('a session with neutral calls ends exactly like the same session with user_input calls', () => {
    function session(kind: ToolKind) {
      const s = start();
      run(s, 'calc', kind, T, 'a');
      s.send(requested('pulse_control', 'write', T + 1, 'w0'));
      toReading(s, T + 2);
      run(s, 'calc', kind, T + 3, 'b');
      run(s, 'pulse_control', 'write', T + 4, 'w1');
      run(s, 'calc', kind, T + 5, 'c');
      s.send({ type: 'answer.requested', at: T + 6 });
      s.send(requested('calc', kind, T + 7, 'd'));
      s.send(failed('calc', kind, T + 8, 'd'));
      return { snapshot: s.actor.getPersistedSnapshot(), decisions: s.decisions.map((d) => ({ ...d, kind: null })) };
    }
    // But for the one thing only a user can give: user input confirms the next write naming an
    // unknown place (issue 24), or a destructive one (§5.6); a computation does not.
    const confirmedBy = (kind: ToolKind) => {
      const { snapshot, decisions } = session(kind);
      const { confirmedSinceWrite, ...context } = (snapshot as unknown as { context: SafetyContext }).context;
      return { confirmedSinceWrite, same: { snapshot: { ...snapshot, context }, decisions } };
    };
    const neutral = confirmedBy('neutral');
    const userInput = confirmedBy('user_input');
    expect(neutral.same).toEqual(userInput.same);
    expect(neutral.confirmedSinceWrite).toBe(false);
    expect(userInput.confirmedSinceWrite).toBe(true);
  });
});

describe('the machine reads no clock (DESIGN §3.7)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  function replay(systemTime: number) {
    vi.useFakeTimers({ now: systemTime });
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w0'));
    toVerifying(s, T + 1);
    s.send(requested('pulse_control', 'write', T + 10, 'w1'));
    s.send({ type: 'answer.requested', at: T + 11 });
    run(s, 'pulse_metrics', 'read', T + 12, 'r');
    s.send({ type: 'clock.ticked', at: T + 13 });
    s.send({ type: 'verification.completed', at: T + 14 });
    run(s, 'pulse_control', 'write', T + 15, 'w2');
    const result = { snapshot: s.actor.getPersistedSnapshot(), decisions: s.decisions, recoveries: s.recoveries };
    vi.useRealTimers();
    return result;
  }

  it('the same events give the same snapshots and emitted events, whatever the wall clock says', () => {
    expect(replay(0)).toEqual(replay(T + 5 * RECOVERY_TTL_MS));
  });

  it('times in the context come from the events', () => {
    const s = start();
    toVerifying(s, 7);
    expect(s.context).toMatchObject({ lastReadAt: 7, lastWriteAt: 9 });
  });

  it('expiry is decided by event time, not wall time', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', 0, 'w'));
    s.send({ type: 'clock.ticked', at: RECOVERY_TTL_MS });
    expect(Object.keys(s.context.pendingRecoveries)).toEqual(['FSM_BLOCKED:pulse_control']);
  });
});

describe('strict failed writes (DESIGN §3.8)', () => {
  it('by default a failed write never leads to VERIFYING', () => {
    const s = start();
    toReading(s);
    s.send(requested('pulse_control', 'write', T + 10, 'w'));
    s.send(failed('pulse_control', 'write', T + 11, 'w'));
    expect(s.state).toBe('READING');
  });

  it('strictly, a failed write moves WRITING to VERIFYING', () => {
    const s = inState('WRITING', { strictFailedWrites: true });
    s.send(failed('pulse_control', 'write', T + 10, 'write-1'));
    expect(s.state).toBe('VERIFYING');
  });

  it('strictly, a failed write is recorded as a write', () => {
    const s = inState('WRITING', { strictFailedWrites: true });
    s.send(failed('pulse_control', 'write', T + 10, 'write-1'));
    expect(s.context).toMatchObject({
      wroteThisEpisode: true,
      readAfterWrite: false,
      lastWriteTool: 'pulse_control',
      lastWriteAt: T + 10,
      inFlight: [],
    });
  });

  it('strictly, a failed write refuses the final answer until a read ran after it', () => {
    const s = inState('WRITING', { strictFailedWrites: true });
    s.send(failed('pulse_control', 'write', T + 10, 'write-1'));
    s.send({ type: 'answer.requested', at: T + 11 });
    expect(s.lastDecision.allowed).toBe(false);
  });

  it('strictly, a failed write recorded without a check in READING moves to VERIFYING', () => {
    const s = inState('READING', { strictFailedWrites: true });
    s.send(failed('pulse_control', 'write', T + 10));
    expect(s.state).toBe('VERIFYING');
  });

  it('strictly, a failed write in VERIFYING clears read-after-write', () => {
    const s = start({ strictFailedWrites: true });
    toVerified(s);
    s.send(failed('pulse_control_guest', 'write', T + 10));
    expect(s.context.readAfterWrite).toBe(false);
  });

  it('strictly, a failed read still causes no transition', () => {
    const s = start({ strictFailedWrites: true });
    s.send(requested('pulse_query', 'resolve', T, 'q'));
    s.send(failed('pulse_query', 'resolve', T + 1, 'q'));
    expect(s.state).toBe('RESOLVING');
  });

  it('strictly, a failed write is no recovery of its pending block', () => {
    const s = start({ strictFailedWrites: true });
    s.send(requested('pulse_control', 'write', T, 'blocked'));
    s.send(failed('pulse_control', 'write', T + 1));
    expect(s.recoveries).toEqual([]);
  });
});

describe('malformed events', () => {
  const malformed: [string, unknown][] = [
    ['a tool.requested with no fields', { type: 'tool.requested' }],
    ['a tool.requested with null fields', { type: 'tool.requested', tool: null, kind: null, at: null, callId: null }],
    ['a tool.requested with wrongly typed fields', { type: 'tool.requested', tool: 42, kind: ['read'], at: '1', callId: {} }],
    ['a tool.requested with a non-finite time', { type: 'tool.requested', tool: 'x', kind: 'read', at: Number.NaN }],
    ['a tool.succeeded with no fields', { type: 'tool.succeeded' }],
    ['a tool.succeeded with null fields', { type: 'tool.succeeded', tool: null, kind: null, at: null, callId: null }],
    ['a tool.failed with wrongly typed fields', { type: 'tool.failed', tool: {}, kind: 7, at: Infinity, callId: 3 }],
    ['an answer.requested with no time', { type: 'answer.requested' }],
    ['a clock.ticked with a string time', { type: 'clock.ticked', at: 'soon' }],
    ['a verification.completed with null time', { type: 'verification.completed', at: null }],
    ['a session.reset with an object time', { type: 'session.reset', at: {} }],
    ['a session.resetKeepingProgress with no time', { type: 'session.resetKeepingProgress' }],
    [
      'a tool.requested with a __proto__ key',
      JSON.parse('{"type":"tool.requested","__proto__":{"kind":"read","callId":"x"},"tool":"t","at":1}'),
    ],
    [
      'a tool.succeeded with a __proto__ key',
      JSON.parse('{"type":"tool.succeeded","__proto__":{"kind":"read"},"tool":"__proto__","at":1}'),
    ],
    [
      'a tool.requested whose tool and id are prototype names',
      { type: 'tool.requested', tool: 'constructor', kind: 'write', at: 1, callId: '__proto__' },
    ],
    [
      'a tool.succeeded whose kind getter throws',
      {
        type: 'tool.succeeded',
        tool: 'q',
        at: 1,
        get kind(): string {
          throw new Error('boom');
        },
      },
    ],
    ['an unknown event type', { type: 'tool.exploded', tool: 'x' }],
    ['an event type naming a prototype property', { type: 'constructor' }],
  ];

  it.each(malformed)('%s never puts the actor into an error status', (_, event) => {
    for (const state of ALL_STATES) {
      const s = inState(state);
      s.sendRaw(event);
      s.send(requested('pulse_query', 'resolve', T + 100, 'after'));
      expect(s.actor.getSnapshot().status).toBe('active');
      expect(s.lastDecision.callId).toBe('after');
    }
  });

  it('a tool.requested without fields is decided as a write and blocked in RESOLVING', () => {
    const s = start();
    s.sendRaw({ type: 'tool.requested' });
    expect(s.lastDecision).toMatchObject({ allowed: false, kind: 'write', tool: '', callId: null, at: 0 });
  });

  it.each(['delete', 'READ', '', 'toString', '__proto__'])('an unknown kind %j fails closed to write', (kind) => {
    const s = inState('READING');
    s.sendRaw({ type: 'tool.requested', tool: 'x', kind, at: T + 10, callId: 'c' });
    expect(s.lastDecision).toMatchObject({ allowed: true, kind: 'write' });
    expect(s.state).toBe('WRITING');
  });

  it('an unknown kind is blocked in RESOLVING', () => {
    const s = start();
    s.sendRaw({ type: 'tool.requested', tool: 'x', kind: 'mystery', at: T });
    expect(s.lastDecision.allowed).toBe(false);
  });

  it('an outcome of unknown kind recorded without a check counts as a write', () => {
    const s = start();
    s.sendRaw({ type: 'tool.succeeded', tool: 'x', kind: 'mystery', at: T });
    expect(s.state).toBe('VERIFYING');
  });

  it('a kind inherited through __proto__ is not trusted', () => {
    const s = start();
    s.sendRaw(JSON.parse('{"type":"tool.requested","__proto__":{"kind":"read"},"tool":"t","at":1}'));
    expect(s.lastDecision).toMatchObject({ allowed: false, kind: 'write' });
  });

  it('a pending recovery of a tool named like a prototype property is kept as its own entry', () => {
    const s = start();
    s.send(requested('__proto__', 'write', T, 'a'));
    s.send(requested('constructor', 'write', T, 'b'));
    expect(Object.keys(s.context.pendingRecoveries).sort()).toEqual(['FSM_BLOCKED:__proto__', 'FSM_BLOCKED:constructor']);
  });

  it('a success of a tool named like a prototype property reports no recovery it did not have', () => {
    const s = start();
    s.send(succeeded('constructor', 'read', T));
    s.send(succeeded('hasOwnProperty', 'read', T));
    expect(s.recoveries).toEqual([]);
  });

  it('an unknown event type changes nothing', () => {
    const s = inState('VERIFYING');
    const before = s.actor.getPersistedSnapshot();
    s.sendRaw({ type: 'tool.exploded', tool: 'x', kind: 'write', at: T + 10 });
    expect(s.actor.getPersistedSnapshot()).toEqual(before);
  });

  it('a non-finite time is recorded as 0, keeping the context plain JSON', () => {
    const s = start();
    s.sendRaw({ type: 'tool.succeeded', tool: 'pulse_query', kind: 'resolve', at: Number.NaN });
    expect(s.context.lastReadAt).toBe(0);
  });
});

describe('the chart as designers read it', () => {
  it('every state and every transition carries a description', () => {
    const missing: string[] = [];
    for (const node of Object.values(safetyMachine.root.states)) {
      if (!node.description?.trim()) missing.push(node.id);
      for (const [eventType, transitions] of node.transitions) {
        transitions.forEach((t, i) => {
          if (!t.description?.trim()) missing.push(`${node.id} ${eventType}#${i}`);
        });
      }
      node.always?.forEach((t, i) => {
        if (!t.description?.trim()) missing.push(`${node.id} always#${i}`);
      });
    }
    for (const [eventType, transitions] of safetyMachine.root.transitions) {
      transitions.forEach((t, i) => {
        if (!t.description?.trim()) missing.push(`(root) ${eventType}#${i}`);
      });
    }
    expect(missing).toEqual([]);
  });
});
