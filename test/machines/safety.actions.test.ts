/**
 * The machine's actions as plain logic (machines/safety.actions.ts): the
 * names `setup` wraps are exactly the logic's, and each is pure: it never
 * changes the context or event it is given, whatever the session.
 *
 * Spec: issue 13 item 1 (actions as plain functions of (context, event, params)).
 */
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { safetyActionLogic, type SafetyActionLogic } from '../../machines/safety.actions.js';
import { safetyMachine } from '../../machines/safety.machine.js';
import type { SafetyContext, SafetyEvent } from '../../machines/safety.types.js';

const T = 1_700_000_000_000;

/** Freezes a value and everything in it, so any write to it throws (modules are strict). */
function deepFreeze<V>(value: V): V {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}

/** A session through every state, with blocks, recoveries, targets and a self-verified write. */
const SESSION: SafetyEvent[] = [
  { type: 'tool.requested', tool: 'deploy', kind: 'write', at: T, callId: 'w0' },
  { type: 'tool.requested', tool: 'ls', kind: 'read', at: T + 1, callId: 'r1', targets: ['/srv'] },
  { type: 'tool.succeeded', tool: 'ls', kind: 'read', at: T + 2, callId: 'r1' },
  { type: 'tool.requested', tool: 'deploy', kind: 'write', at: T + 3, callId: 'w1', targets: ['/srv/app'], destructive: true },
  { type: 'answer.requested', at: T + 4 },
  { type: 'tool.succeeded', tool: 'deploy', kind: 'write', at: T + 5, callId: 'w1' },
  { type: 'tool.requested', tool: 'deploy', kind: 'write', at: T + 6, callId: 'w2' },
  { type: 'answer.requested', at: T + 7 },
  { type: 'tool.requested', tool: 'cat', kind: 'read', at: T + 8, targets: ['/srv/app'] },
  { type: 'tool.succeeded', tool: 'cat', kind: 'read', at: T + 9 },
  { type: 'tool.requested', tool: 'deploy', kind: 'write', at: T + 10, callId: 'w3' },
  { type: 'tool.succeeded', tool: 'deploy', kind: 'write', at: T + 11, callId: 'w3', selfVerified: true },
  { type: 'clock.ticked', at: T + 700_000 },
  { type: 'session.resetKeepingProgress', at: T + 700_001 },
  { type: 'session.reset', at: T + 700_002 },
];

/** Params that make every action run: each of its shapes, with a state and rule. */
const PARAMS: Record<string, unknown> = {
  admitCall: { verifying: true },
  announceAllowed: { state: 'READING' },
  announceBlocked: { state: 'VERIFYING', rule: 'unverified-write' },
  allowAnswer: { state: 'READING' },
  refuseAnswer: { state: 'VERIFYING', rule: 'unverified-write' },
};

describe('safetyActionLogic', () => {
  it('has the logic of exactly the actions the machine implements', () => {
    expect(Object.keys(safetyActionLogic).sort()).toEqual(Object.keys(safetyMachine.implementations.actions).sort());
  });

  it('never changes the context or the event it is given, at any step of a session', () => {
    const actor = createActor(safetyMachine, { input: { confirmDestructive: true } }).start();
    const contexts: SafetyContext[] = [];
    for (const event of SESSION) {
      contexts.push(structuredClone(actor.getSnapshot().context));
      actor.send(event);
    }
    for (const [i, context] of contexts.entries()) {
      for (const [name, logic] of Object.entries(safetyActionLogic)) {
        const run = logic as SafetyActionLogic<unknown>;
        expect(
          () => run(deepFreeze(context), deepFreeze(structuredClone(SESSION[i]!)), PARAMS[name]),
          `${name} at step ${i}`,
        ).not.toThrow();
      }
    }
  });

  it('returns only context fields that exist', () => {
    const context = createActor(safetyMachine).start().getSnapshot().context;
    // Plus the optional fields, present only when non-empty (SafetyContext).
    const fields = [...Object.keys(context), 'links', 'writtenTargets'];
    for (const [name, logic] of Object.entries(safetyActionLogic)) {
      const result = (logic as SafetyActionLogic<unknown>)(context, SESSION[1]!, PARAMS[name]);
      for (const key of Object.keys(result.context ?? {})) expect(fields, `${name} assigns ${key}`).toContain(key);
    }
  });
});
