/**
 * createSessionGuard: the public API an agent loop calls.
 *
 * Spec: ASSISTANT_SAFETY.md (whole); DESIGN.md §3 (structured blocks,
 * correlation by call id, auto-completed verification, strict failed writes,
 * time as an input).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSessionGuard, type SessionGuard, type SessionGuardOptions, type ToolCall } from '../../src/guard/session-guard.js';
import { FSMBlockedError } from '../../src/errors/index.js';
import { MAX_NAME_LENGTH, RECOVERY_TTL_MS } from '../../machines/safety.policy.js';
import type { ToolKind } from '../../machines/safety.types.js';

const T = 1_700_000_000_000;

/** A guard with a clock the test moves by hand (epoch ms). */
function guardWithClock(options: Omit<SessionGuardOptions, 'now'> = {}) {
  const clock = { now: T };
  const guard = createSessionGuard({ ...options, now: () => clock.now });
  return { guard, clock };
}

/** check, then record success. */
function run(guard: SessionGuard, call: ToolCall): void {
  const decision = guard.check(call);
  if (!decision.allowed) throw new Error(`expected ${call.name} to be admitted: ${decision.error.message}`);
  guard.record(call);
}

function reading(options: Omit<SessionGuardOptions, 'now'> = {}) {
  const session = guardWithClock(options);
  run(session.guard, { id: 'q', name: 'pulse_query' });
  return session;
}

function writing(options: Omit<SessionGuardOptions, 'now'> = {}) {
  const session = reading(options);
  session.guard.check({ id: 'w', name: 'pulse_control', args: { action: 'restart' } });
  return session;
}

function verifying(options: Omit<SessionGuardOptions, 'now'> = {}) {
  const session = writing(options);
  session.guard.record({ id: 'w', name: 'pulse_control' });
  return session;
}

describe('createSessionGuard', () => {
  it('starts a session in RESOLVING', () => {
    expect(createSessionGuard().state).toBe('RESOLVING');
  });

  it('refuses a tool name longer than MAX_NAME_LENGTH with a TypeError, leaving the session as it was', () => {
    const guard = createSessionGuard();
    expect(() => guard.check({ id: 'r', name: 'x'.repeat(MAX_NAME_LENGTH + 1) })).toThrow(/at most 512 characters/);
    expect(guard.context.inFlight).toEqual([]);
  });

  it('refuses a call id longer than MAX_NAME_LENGTH', () => {
    expect(() => createSessionGuard().record({ id: 'i'.repeat(MAX_NAME_LENGTH + 1), name: 'pulse_query' })).toThrow(TypeError);
  });

  it('refuses a misspelled option, naming it, rather than leave its rule off', () => {
    expect(() => createSessionGuard({ confirmDestrutive: true } as never)).toThrow(
      /^createSessionGuard: options\.confirmDestrutive is not an option \(the options are now, classify, confirmDestructive, /,
    );
  });

  it.each([
    ['confirmDestructive', 'false', 'a boolean'],
    ['strictFailedWrites', 1, 'a boolean'],
    ['autoCompleteVerification', 'no', 'a boolean'],
    ['now', 'x', 'a function'],
    ['onDecision', {}, 'a function'],
  ])('refuses options.%s = %j: it must be %s', (key, value, expected) => {
    expect(() => createSessionGuard({ [key]: value } as never)).toThrow(
      `createSessionGuard: options.${key} must be ${expected} when given`,
    );
  });

  it('refuses options that are not an object', () => {
    expect(() => createSessionGuard(null as never)).toThrow(/^createSessionGuard: the options must be an object/);
  });

  it('takes options given as undefined as not given', () => {
    expect(createSessionGuard({ confirmDestructive: undefined, now: undefined }).state).toBe('RESOLVING');
  });

  it('exposes its started actor', () => {
    expect(createSessionGuard().actor.getSnapshot().status).toBe('active');
  });

  it("the actor's state is the guard's state", () => {
    const { guard } = writing();
    expect(guard.actor.getSnapshot().value).toBe('WRITING');
  });

  it('keeps one long-lived actor', () => {
    const { guard } = guardWithClock();
    const actor = guard.actor;
    run(guard, { name: 'pulse_query' });
    guard.reset();
    expect(guard.actor).toBe(actor);
  });

  it('two guards are independent sessions', () => {
    const first = verifying().guard;
    const second = createSessionGuard();
    expect(first.state).toBe('VERIFYING');
    expect(second.state).toBe('RESOLVING');
  });
});

describe('state', () => {
  it('is READING after a successful resolve', () => {
    expect(reading().guard.state).toBe('READING');
  });

  it('is WRITING while an admitted write has no outcome', () => {
    expect(writing().guard.state).toBe('WRITING');
  });

  it('is VERIFYING after the write succeeded', () => {
    expect(verifying().guard.state).toBe('VERIFYING');
  });
});

describe('context', () => {
  it('has the machine context under its spec names', () => {
    expect(verifying().guard.context).toMatchObject({
      wroteThisEpisode: true,
      readAfterWrite: false,
      consecutiveVerifyBlocks: 0,
      finalAnswerBlocks: 0,
      lastWriteTool: 'pulse_control',
      lastWriteAt: T,
      lastReadTool: 'pulse_query',
      lastReadAt: T,
      pendingRecoveries: {},
    });
  });

  it('is frozen, nested objects included', () => {
    const { guard } = writing();
    guard.check({ id: 'w2', name: 'pulse_control_guest' });
    const context = guard.context;
    expect(Object.isFrozen(context)).toBe(true);
    expect(Object.isFrozen(context.pendingRecoveries)).toBe(true);
    expect(Object.isFrozen(context.pendingRecoveries['FSM_BLOCKED:pulse_control_guest'])).toBe(true);
    expect(Object.isFrozen(context.inFlight)).toBe(true);
  });

  it('cannot be written to', () => {
    const context = verifying().guard.context as { readAfterWrite: boolean };
    expect(() => {
      context.readAfterWrite = true;
    }).toThrow(TypeError);
  });

  it('is a copy: changing the actor context through it is impossible', () => {
    const { guard } = verifying();
    expect(guard.context).not.toBe(guard.actor.getSnapshot().context);
  });

  it('is taken when read: a later event does not change a context already read', () => {
    const { guard } = guardWithClock();
    const before = guard.context;
    run(guard, { name: 'pulse_query' });
    expect(before.lastReadTool).toBeNull();
    expect(guard.context.lastReadTool).toBe('pulse_query');
  });

  it('shows a pending recovery exactly ten minutes after its block', () => {
    const { guard, clock } = guardWithClock();
    guard.check({ name: 'pulse_control' });
    clock.now = T + RECOVERY_TTL_MS;
    expect(Object.keys(guard.context.pendingRecoveries)).toEqual(['FSM_BLOCKED:pulse_control']);
  });

  it('never exposes a pending recovery 1 ms past its TTL, even before any event', () => {
    const { guard, clock } = guardWithClock();
    guard.check({ name: 'pulse_control' });
    clock.now = T + RECOVERY_TTL_MS + 1;
    expect(guard.context.pendingRecoveries).toEqual({});
  });

  it('hides only the expired pending recoveries', () => {
    const { guard, clock } = guardWithClock();
    guard.check({ name: 'pulse_control' });
    clock.now = T + 1000;
    guard.check({ name: 'pulse_run_command' });
    clock.now = T + RECOVERY_TTL_MS + 1;
    expect(Object.keys(guard.context.pendingRecoveries)).toEqual(['FSM_BLOCKED:pulse_run_command']);
  });
});

describe('check', () => {
  it('admits a read with { allowed: true, kind }', () => {
    expect(createSessionGuard().check({ name: 'pulse_metrics' })).toStrictEqual({ allowed: true, kind: 'read' });
  });

  it('refuses a write without a target with an FSMBlockedError', () => {
    const decision = createSessionGuard().check({ id: 'c1', name: 'pulse_control' });
    expect(decision.allowed).toBe(false);
    if (decision.allowed) return;
    expect(decision.kind).toBe('write');
    expect(decision.error).toBeInstanceOf(FSMBlockedError);
    expect(decision.error).toMatchObject({
      code: 'FSM_BLOCKED',
      state: 'RESOLVING',
      toolName: 'pulse_control',
      toolKind: 'write',
      recoveryId: 'FSM_BLOCKED:pulse_control',
    });
  });

  it('refuses a second write while the first is in flight', () => {
    const decision = writing().guard.check({ id: 'w2', name: 'pulse_control_guest' });
    expect(decision).toMatchObject({ allowed: false, error: { state: 'WRITING', rule: 'write-in-flight' } });
  });

  it('refuses a write in VERIFYING', () => {
    const decision = verifying().guard.check({ id: 'w2', name: 'pulse_control' });
    expect(decision).toMatchObject({ allowed: false, error: { state: 'VERIFYING', rule: 'unverified-write' } });
  });

  it('classifies with the Pulse catalog by default', () => {
    const guard = createSessionGuard();
    expect(guard.check({ name: 'pulse_docker', args: { action: 'services' } })).toEqual({ allowed: true, kind: 'read' });
    expect(guard.check({ name: 'pulse_docker', args: { action: 'restart' } })).toMatchObject({
      allowed: false,
      kind: 'write',
    });
  });

  it('classifies arguments given as a JSON string', () => {
    expect(createSessionGuard().check({ name: 'pulse_alerts', args: '{"action":"list"}' }).kind).toBe('read');
  });

  it('uses a custom classifier', () => {
    const guard = createSessionGuard({ classify: (name) => (name === 'lookup' ? 'resolve' : 'write') });
    expect(guard.check({ name: 'lookup' })).toEqual({ allowed: true, kind: 'resolve' });
  });

  it('passes the name and args to the classifier', () => {
    const seen: unknown[] = [];
    const guard = createSessionGuard({
      classify: (name, args) => {
        seen.push([name, args]);
        return 'read';
      },
    });
    guard.check({ name: 'x', args: { a: 1 } });
    expect(seen).toEqual([['x', { a: 1 }]]);
  });

  it('does not classify a call whose kind is given', () => {
    const seen: string[] = [];
    const guard = createSessionGuard({
      classify: (name) => {
        seen.push(name);
        return 'write';
      },
    });
    expect(guard.check({ name: 'custom', kind: 'read' })).toEqual({ allowed: true, kind: 'read' });
    expect(seen).toEqual([]);
  });

  it('a given kind wins over the catalog', () => {
    expect(createSessionGuard().check({ name: 'pulse_metrics', kind: 'write' })).toMatchObject({
      allowed: false,
      kind: 'write',
    });
  });

  it('a given kind that is not a tool kind fails closed to write', () => {
    const decision = createSessionGuard().check({ name: 'pulse_metrics', kind: 'peek' as ToolKind });
    expect(decision).toMatchObject({ allowed: false, kind: 'write' });
  });

  it('a custom classifier that throws fails closed to write', () => {
    const guard = createSessionGuard({
      classify: () => {
        throw new Error('classifier down');
      },
    });
    expect(guard.check({ name: 'pulse_metrics' })).toMatchObject({ allowed: false, kind: 'write' });
  });

  it('a custom classifier that returns something else fails closed to write', () => {
    const guard = createSessionGuard({ classify: () => 'looks-safe' as ToolKind });
    expect(guard.check({ name: 'pulse_metrics' })).toMatchObject({ allowed: false, kind: 'write' });
  });

  it('a throwing classifier leaves the session working', () => {
    const guard = createSessionGuard({
      classify: () => {
        throw new Error('classifier down');
      },
    });
    guard.check({ name: 'pulse_metrics' });
    expect(guard.actor.getSnapshot().status).toBe('active');
  });

  it('tracks an admitted call until its outcome is recorded', () => {
    const { guard } = guardWithClock();
    guard.check({ id: 'r1', name: 'pulse_metrics' });
    expect(guard.context.inFlight.map((call) => call.key)).toEqual(['id:r1']);
    guard.record({ id: 'r1', name: 'pulse_metrics' });
    expect(guard.context.inFlight).toEqual([]);
  });

  it('a refused call is not tracked as in flight', () => {
    const guard = createSessionGuard();
    guard.check({ id: 'w', name: 'pulse_control' });
    expect(guard.context.inFlight).toEqual([]);
  });
});

describe('record', () => {
  it('works without a prior check (OnToolSuccess style)', () => {
    const guard = createSessionGuard();
    guard.record({ name: 'pulse_query' });
    expect(guard.state).toBe('READING');
  });

  it('records a success by default', () => {
    const { guard } = writing();
    guard.record({ id: 'w', name: 'pulse_control' });
    expect(guard.state).toBe('VERIFYING');
  });

  it("records outcome 'error' as a failure: no transition", () => {
    const guard = createSessionGuard();
    guard.check({ id: 'q', name: 'pulse_query' });
    guard.record({ id: 'q', name: 'pulse_query' }, 'error');
    expect(guard.state).toBe('RESOLVING');
  });

  it("a write recorded with outcome 'error' goes back to READING", () => {
    const { guard } = writing();
    guard.record({ id: 'w', name: 'pulse_control' }, 'error');
    expect(guard.state).toBe('READING');
  });

  it('with strictFailedWrites, a failed write needs verification', () => {
    const { guard } = writing({ strictFailedWrites: true });
    guard.record({ id: 'w', name: 'pulse_control' }, 'error');
    expect(guard.state).toBe('VERIFYING');
    expect(guard.finalAnswer().allowed).toBe(false);
  });

  it('applies the kind the call was admitted with', () => {
    const { guard } = writing();
    guard.record({ id: 'w', name: 'pulse_control', kind: 'read' });
    expect(guard.state).toBe('VERIFYING');
  });

  it('a failure stating a read kind does not settle the write admitted under its id', () => {
    const { guard } = writing();
    guard.record({ id: 'w', name: 'pulse_control', kind: 'read' }, 'error');
    expect(guard.state).toBe('WRITING');
  });

  it('a record the classifier throws on states no kind: among a write and a read of one tool, its failure is the read’s', () => {
    const classify = (_name: string, args?: unknown): ToolKind => {
      const action = (args as { action?: string } | undefined)?.action;
      if (action === 'restart') return 'write';
      if (action === 'services' || action === undefined) return 'read';
      throw new Error('unreadable');
    };
    const { guard } = reading({ classify });
    guard.check({ name: 'pulse_docker', args: { action: 'restart' } });
    guard.check({ name: 'pulse_docker', args: { action: 'services' } });
    guard.record({ name: 'pulse_docker', args: { action: '???' } }, 'error');
    expect(guard.context.inFlight.map((call) => call.kind)).toEqual(['write']);
  });

  it('a record with arguments states the kind they classify as: among a write and a read of one tool, it picks the write', () => {
    const { guard } = reading();
    guard.check({ name: 'pulse_docker', args: { action: 'restart' } });
    guard.check({ name: 'pulse_docker', args: { action: 'services' } });
    guard.record({ name: 'pulse_docker', args: { action: 'restart' } }, 'error');
    expect(guard.context.inFlight.map((call) => call.kind)).toEqual(['read']);
  });

  it('returns {} when no pending recovery was cleared', () => {
    const guard = createSessionGuard();
    expect(guard.record({ name: 'pulse_query' })).toStrictEqual({});
  });

  it('returns the pending recovery a success cleared', () => {
    const { guard, clock } = guardWithClock();
    guard.check({ id: 'w0', name: 'pulse_control' });
    clock.now = T + 1000;
    run(guard, { id: 'q', name: 'pulse_query' });
    guard.check({ id: 'w1', name: 'pulse_control' });
    expect(guard.record({ id: 'w1', name: 'pulse_control' })).toStrictEqual({
      recovered: {
        recoveryId: 'FSM_BLOCKED:pulse_control',
        errorCode: 'FSM_BLOCKED',
        tool: 'pulse_control',
        createdAt: T,
        lastBlockedAt: T,
        attempts: 1,
      },
    });
  });

  it('a success exactly ten minutes after the block is a recovery', () => {
    const { guard, clock } = guardWithClock();
    guard.check({ name: 'pulse_control' });
    clock.now = T + RECOVERY_TTL_MS;
    expect(guard.record({ name: 'pulse_control' }).recovered?.tool).toBe('pulse_control');
  });

  it('a success 1 ms after the TTL is no recovery', () => {
    const { guard, clock } = guardWithClock();
    guard.check({ name: 'pulse_control' });
    clock.now = T + RECOVERY_TTL_MS + 1;
    expect(guard.record({ name: 'pulse_control' })).toStrictEqual({});
  });

  it('a failed call of the blocked tool is no recovery', () => {
    const { guard } = guardWithClock();
    guard.check({ name: 'pulse_control' });
    run(guard, { name: 'pulse_query' });
    guard.check({ id: 'w', name: 'pulse_control' });
    expect(guard.record({ id: 'w', name: 'pulse_control' }, 'error')).toStrictEqual({});
  });
});

describe('ResetKeepProgress keeps a target only when one was established', () => {
  it('an unchecked write recorded in RESOLVING, then ResetKeepProgress: back to RESOLVING, and a write is refused (no-target)', () => {
    const guard = createSessionGuard({ now: () => T });
    guard.record({ id: 'w0', name: 'pulse_control' }, 'success');
    expect(guard.state).toBe('VERIFYING');
    guard.resetKeepProgress();
    expect(guard.state).toBe('RESOLVING');
    const decision = guard.check({ id: 'w1', name: 'pulse_control' });
    expect(decision.allowed).toBe(false);
    if (!decision.allowed) expect(decision.error.rule).toBe('no-target');
    const restored = createSessionGuard({ now: () => T, snapshot: guard.getPersistedSnapshot() });
    expect(restored.state).toBe('RESOLVING');
  });

  it('after a read, the same reset goes back to READING', () => {
    const guard = createSessionGuard({ now: () => T });
    guard.check({ id: 'q', name: 'pulse_query' });
    guard.record({ id: 'q', name: 'pulse_query' });
    guard.check({ id: 'w', name: 'pulse_control' });
    guard.record({ id: 'w', name: 'pulse_control' });
    guard.resetKeepProgress();
    expect(guard.state).toBe('READING');
  });
});

describe('self-verification needs the write’s own outcome', () => {
  it('calls of one tool without ids: a success that may be the read’s never verifies the write, whatever its result says', () => {
    const guard = createSessionGuard({ now: () => T });
    guard.check({ id: 'q', name: 'pulse_query' });
    guard.record({ id: 'q', name: 'pulse_query' });
    guard.check({ name: 'pulse_discovery', args: { action: 'get' } });
    guard.check({ name: 'pulse_discovery', args: { action: 'delete' } });
    guard.record({ name: 'pulse_discovery' }, 'success', { result: 'deleted' });
    guard.record({ name: 'pulse_discovery' }, 'success', { result: '{"items":[],"verification":{"ok":true}}' });
    expect(guard.state).toBe('VERIFYING');
    expect(guard.finalAnswer().allowed).toBe(false);
    expect(guard.check({ id: 'w2', name: 'pulse_control' }).allowed).toBe(false);
  });

  it('a write checked under its id verifies itself by its result', () => {
    const guard = createSessionGuard({ now: () => T });
    guard.check({ id: 'q', name: 'pulse_query' });
    guard.record({ id: 'q', name: 'pulse_query' });
    guard.check({ id: 'w', name: 'pulse_control' });
    guard.record({ id: 'w', name: 'pulse_control' }, 'success', { result: '{"verification":{"ok":true}}' });
    expect(guard.state).toBe('READING');
  });
});

describe('classification, once per call', () => {
  /** A guard whose classifier answers from a table by tool name and logs every call it classifies. */
  function counting(kinds: Record<string, ToolKind>) {
    const seen: string[] = [];
    const guard = createSessionGuard({ now: () => T, classify: (name) => (seen.push(name), kinds[name] ?? 'write') });
    return { guard, seen };
  }

  it('the record of the call just checked (its id, name and args object) is not classified again', () => {
    const { guard, seen } = counting({ get: 'read' });
    const call = { id: 'r', name: 'get', args: { id: 1 } };
    guard.check(call);
    guard.record(call);
    expect(seen).toEqual(['get']);
    expect(guard.state).toBe('READING');
  });

  it('a record with other args, another id, or targets given is classified again', () => {
    const { guard, seen } = counting({ get: 'read' });
    const args = { id: 1 };
    guard.check({ id: 'a', name: 'get', args });
    guard.record({ id: 'a', name: 'get', args: { id: 1 } });
    guard.check({ id: 'b', name: 'get', args });
    guard.check({ id: 'c', name: 'get', args });
    guard.record({ id: 'b', name: 'get', args });
    guard.check({ id: 'd', name: 'get', args });
    guard.record({ id: 'd', name: 'get', args, targets: ['x'] });
    expect(seen).toHaveLength(7);
  });

  it('the record of a refused call that ran anyway is classified again, as any other', () => {
    const { guard, seen } = counting({ restart: 'write' });
    const call = { id: 'w', name: 'restart', args: {} };
    expect(guard.check(call).allowed).toBe(false);
    guard.record(call, 'error');
    expect(seen).toEqual(['restart', 'restart']);
  });
});

describe('verification', () => {
  it('by default a verifying read completes verification: back to READING', () => {
    const { guard } = verifying();
    run(guard, { id: 'r', name: 'pulse_metrics' });
    expect(guard.state).toBe('READING');
  });

  it('by default the next write is admitted after a verifying read', () => {
    const { guard } = verifying();
    run(guard, { id: 'r', name: 'pulse_metrics' });
    expect(guard.check({ id: 'w2', name: 'pulse_control' }).allowed).toBe(true);
  });

  it('by default completed verification leaves wroteThisEpisode set', () => {
    const { guard } = verifying();
    run(guard, { id: 'r', name: 'pulse_metrics' });
    expect(guard.context.wroteThisEpisode).toBe(true);
  });

  it('a read that ran beside the write does not complete verification', () => {
    const { guard } = writing();
    guard.check({ id: 'r', name: 'pulse_metrics' });
    guard.record({ id: 'w', name: 'pulse_control' });
    guard.record({ id: 'r', name: 'pulse_metrics' });
    expect(guard.state).toBe('VERIFYING');
    expect(guard.finalAnswer().allowed).toBe(false);
  });

  it('with autoCompleteVerification false, a verifying read leaves the session in VERIFYING', () => {
    const { guard } = verifying({ autoCompleteVerification: false });
    run(guard, { id: 'r', name: 'pulse_metrics' });
    expect(guard.state).toBe('VERIFYING');
    expect(guard.context.readAfterWrite).toBe(true);
  });

  it('with autoCompleteVerification false, the final answer is allowed once verified', () => {
    const { guard } = verifying({ autoCompleteVerification: false });
    run(guard, { id: 'r', name: 'pulse_metrics' });
    expect(guard.finalAnswer()).toStrictEqual({ allowed: true });
  });

  it('with autoCompleteVerification false, a write stays refused until completeVerification', () => {
    const { guard } = verifying({ autoCompleteVerification: false });
    run(guard, { id: 'r', name: 'pulse_metrics' });
    expect(guard.check({ id: 'w2', name: 'pulse_control' }).allowed).toBe(false);
    expect(guard.completeVerification()).toBe(true);
    expect(guard.state).toBe('READING');
    expect(guard.check({ id: 'w3', name: 'pulse_control' }).allowed).toBe(true);
  });

  it('completeVerification returns false and changes nothing for an unverified session', () => {
    const { guard } = verifying({ autoCompleteVerification: false });
    const before = guard.getPersistedSnapshot();
    expect(guard.completeVerification()).toBe(false);
    expect(guard.getPersistedSnapshot()).toEqual(before);
  });

  it('completeVerification returns false outside VERIFYING', () => {
    expect(reading().guard.completeVerification()).toBe(false);
  });
});

describe('finalAnswer', () => {
  it('is allowed in a fresh session', () => {
    expect(createSessionGuard().finalAnswer()).toStrictEqual({ allowed: true });
  });

  it('is refused after an unverified write, with an FSMBlockedError without a tool', () => {
    const decision = verifying().guard.finalAnswer();
    expect(decision.allowed).toBe(false);
    if (decision.allowed) return;
    expect(decision.error).toBeInstanceOf(FSMBlockedError);
    expect(decision.error).toMatchObject({ state: 'VERIFYING', toolName: null, toolKind: null, recoveryId: null });
    expect(decision.error.message).toMatch(/^FSM blocked in state VERIFYING: POLICY_BLOCKED: /);
  });

  it('is refused while a write is in flight', () => {
    expect(writing().guard.finalAnswer()).toMatchObject({ allowed: false, error: { state: 'WRITING' } });
  });

  it('is allowed after the write was verified', () => {
    const { guard } = verifying();
    run(guard, { id: 'r', name: 'pulse_metrics' });
    expect(guard.finalAnswer()).toStrictEqual({ allowed: true });
  });

  it('counts refusals in finalAnswerBlocks', () => {
    const { guard } = verifying();
    guard.finalAnswer();
    guard.finalAnswer();
    expect(guard.context.finalAnswerBlocks).toBe(2);
  });
});

describe('reset and resetKeepProgress', () => {
  it('reset returns the session to RESOLVING', () => {
    const { guard } = verifying();
    guard.reset();
    expect(guard.state).toBe('RESOLVING');
  });

  it('reset clears all tracking, pending recoveries included', () => {
    const { guard } = verifying();
    guard.check({ id: 'w2', name: 'pulse_control' });
    guard.reset();
    expect(guard.context).toMatchObject({
      wroteThisEpisode: false,
      readAfterWrite: false,
      consecutiveVerifyBlocks: 0,
      finalAnswerBlocks: 0,
      lastWriteTool: null,
      lastWriteAt: null,
      lastReadTool: null,
      lastReadAt: null,
      pendingRecoveries: {},
      inFlight: [],
    });
  });

  it('after reset a write needs a target again', () => {
    const { guard } = reading();
    guard.reset();
    expect(guard.check({ name: 'pulse_control' }).allowed).toBe(false);
  });

  it('resetKeepProgress moves a VERIFYING session to READING', () => {
    const { guard } = verifying();
    guard.resetKeepProgress();
    expect(guard.state).toBe('READING');
  });

  it('resetKeepProgress keeps the target: a write is admitted', () => {
    const { guard } = verifying();
    guard.resetKeepProgress();
    expect(guard.check({ id: 'w2', name: 'pulse_control' }).allowed).toBe(true);
  });

  it('resetKeepProgress keeps pending recoveries and the last read and write, and clears wroteThisEpisode (DESIGN §1)', () => {
    const { guard } = verifying();
    guard.check({ id: 'w2', name: 'pulse_control_guest' });
    guard.resetKeepProgress();
    expect(guard.context).toMatchObject({
      lastWriteTool: 'pulse_control',
      lastReadTool: 'pulse_query',
      wroteThisEpisode: false,
      pendingRecoveries: { 'FSM_BLOCKED:pulse_control_guest': expect.objectContaining({ attempts: 1 }) },
    });
  });
});

describe('persistence', () => {
  it('getPersistedSnapshot is plain JSON', () => {
    const { guard } = writing();
    const snapshot = guard.getPersistedSnapshot();
    expect(JSON.parse(JSON.stringify(snapshot))).toEqual(snapshot);
  });

  it('a guard restored from a persisted snapshot has the same state and context', () => {
    const { guard } = verifying();
    guard.check({ id: 'w2', name: 'pulse_control_guest' });
    guard.finalAnswer();
    const restored = createSessionGuard({ snapshot: JSON.parse(JSON.stringify(guard.getPersistedSnapshot())) });
    expect(restored.state).toBe(guard.state);
    expect(restored.actor.getSnapshot().context).toEqual(guard.actor.getSnapshot().context);
  });

  it('a restored guard keeps refusing what the original refused', () => {
    const { guard } = verifying();
    const restored = createSessionGuard({ snapshot: JSON.parse(JSON.stringify(guard.getPersistedSnapshot())) });
    expect(restored.check({ id: 'w2', name: 'pulse_control' }).allowed).toBe(false);
    expect(restored.finalAnswer().allowed).toBe(false);
  });

  it('a restored guard settles a write that was in flight when persisted', () => {
    const { guard } = writing();
    const restored = createSessionGuard({ snapshot: JSON.parse(JSON.stringify(guard.getPersistedSnapshot())) });
    restored.record({ id: 'w', name: 'pulse_control' });
    expect(restored.state).toBe('VERIFYING');
    expect(restored.context.inFlight).toEqual([]);
  });

  it('a restored guard still reports the recovery of a block from before', () => {
    const { guard } = guardWithClock();
    guard.check({ name: 'pulse_control' });
    const restored = createSessionGuard({
      now: () => T + 1,
      snapshot: JSON.parse(JSON.stringify(guard.getPersistedSnapshot())),
    });
    expect(restored.record({ name: 'pulse_control' }).recovered?.createdAt).toBe(T);
  });

  it('a restored guard keeps strict failed writes', () => {
    const { guard } = reading({ strictFailedWrites: true });
    const restored = createSessionGuard({ snapshot: JSON.parse(JSON.stringify(guard.getPersistedSnapshot())) });
    restored.check({ id: 'w', name: 'pulse_control' });
    restored.record({ id: 'w', name: 'pulse_control' }, 'error');
    expect(restored.state).toBe('VERIFYING');
  });
});

describe('the clock', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('tick drops a pending recovery past its TTL from the persisted session', () => {
    const { guard, clock } = guardWithClock();
    guard.check({ name: 'pulse_control' });
    clock.now = T + RECOVERY_TTL_MS + 1;
    guard.tick();
    expect(JSON.stringify(guard.getPersistedSnapshot())).not.toContain('pulse_control');
  });

  it('tick keeps a pending recovery within its TTL', () => {
    const { guard, clock } = guardWithClock();
    guard.check({ name: 'pulse_control' });
    clock.now = T + RECOVERY_TTL_MS;
    guard.tick();
    expect(JSON.stringify(guard.getPersistedSnapshot())).toContain('pulse_control');
  });

  it('stamps every event with the injected clock', () => {
    const { guard, clock } = guardWithClock();
    clock.now = T + 5;
    run(guard, { name: 'pulse_query' });
    clock.now = T + 9;
    run(guard, { id: 'w', name: 'pulse_control' });
    expect(guard.context).toMatchObject({ lastReadAt: T + 5, lastWriteAt: T + 9 });
  });

  it('stamps pending recoveries with the injected clock', () => {
    const { guard, clock } = guardWithClock();
    guard.check({ name: 'pulse_control' });
    clock.now = T + 7;
    guard.check({ name: 'pulse_control' });
    expect(guard.context.pendingRecoveries['FSM_BLOCKED:pulse_control']).toMatchObject({
      createdAt: T,
      lastBlockedAt: T + 7,
      attempts: 2,
    });
  });

  it('reads the clock once per record, even when the record completes verification', () => {
    const now = vi.fn(() => T);
    const guard = createSessionGuard({ now });
    run(guard, { id: 'q', name: 'pulse_query' });
    run(guard, { id: 'w', name: 'pulse_control' });
    guard.check({ id: 'm', name: 'pulse_metrics' });
    now.mockClear();
    guard.record({ id: 'm', name: 'pulse_metrics' });
    expect(guard.state).toBe('READING');
    expect(now).toHaveBeenCalledTimes(1);
  });

  it('defaults to Date.now', () => {
    vi.useFakeTimers({ now: 1_234_567 });
    const guard = createSessionGuard();
    guard.record({ name: 'pulse_query' });
    expect(guard.context.lastReadAt).toBe(1_234_567);
  });

  it.each([Number.NaN, Infinity, 8.64e15 + 1, '1' as unknown as number])(
    'a clock returning %s makes check throw a TypeError and leaves the session unchanged',
    (bad) => {
      const clock = { now: T };
      const guard = createSessionGuard({ now: () => clock.now });
      run(guard, { name: 'pulse_query' });
      const before = guard.getPersistedSnapshot();
      clock.now = bad;
      expect(() => guard.check({ name: 'pulse_control' })).toThrow(TypeError);
      expect(guard.getPersistedSnapshot()).toEqual(before);
    },
  );
});

describe('bad input', () => {
  const badCalls: [string, unknown][] = [
    ['undefined', undefined],
    ['null', null],
    ['a string', 'pulse_query'],
    ['a number', 42],
    ['an array', [{ name: 'pulse_query' }]],
    ['an object without a name', { args: {} }],
    ['a numeric name', { name: 5 }],
    ['a null name', { name: null }],
    ['a numeric id', { name: 'pulse_query', id: 7 }],
    ['a null id', { name: 'pulse_query', id: null }],
  ];

  it.each(badCalls)('check(%s) throws a TypeError naming check', (_, call) => {
    const guard = createSessionGuard();
    expect(() => guard.check(call as ToolCall)).toThrow(TypeError);
    expect(() => guard.check(call as ToolCall)).toThrow(/^check: /);
  });

  it.each(badCalls)('check(%s) leaves the session unchanged', (_, call) => {
    const { guard } = writing();
    const before = guard.getPersistedSnapshot();
    expect(() => guard.check(call as ToolCall)).toThrow();
    expect(guard.getPersistedSnapshot()).toEqual(before);
    expect(guard.actor.getSnapshot().status).toBe('active');
  });

  it.each(badCalls)('record(%s) throws a TypeError naming record', (_, call) => {
    const guard = createSessionGuard();
    expect(() => guard.record(call as ToolCall)).toThrow(TypeError);
    expect(() => guard.record(call as ToolCall)).toThrow(/^record: /);
  });

  it.each(badCalls)('record(%s) leaves the session unchanged', (_, call) => {
    const { guard } = writing();
    const before = guard.getPersistedSnapshot();
    expect(() => guard.record(call as ToolCall)).toThrow();
    expect(guard.getPersistedSnapshot()).toEqual(before);
  });

  it.each(['ok', 'failure', null, 1, ''])('record with outcome %j throws a TypeError', (outcome) => {
    const guard = createSessionGuard();
    expect(() => guard.record({ name: 'pulse_query' }, outcome as 'success')).toThrow(TypeError);
  });

  it.each(['ok', 'failure', null])('record with outcome %j leaves the session unchanged', (outcome) => {
    const { guard } = writing();
    const before = guard.getPersistedSnapshot();
    expect(() => guard.record({ id: 'w', name: 'pulse_control' }, outcome as 'success')).toThrow();
    expect(guard.getPersistedSnapshot()).toEqual(before);
    expect(guard.state).toBe('WRITING');
  });

  it('the session goes on normally after bad input', () => {
    const { guard } = writing();
    expect(() => guard.record(null as unknown as ToolCall)).toThrow(TypeError);
    guard.record({ id: 'w', name: 'pulse_control' });
    expect(guard.state).toBe('VERIFYING');
  });

  it('arguments of any shape are accepted and classified fail-closed', () => {
    const guard = createSessionGuard();
    for (const args of [null, 42, ['x'], 'not json', JSON.parse('{"__proto__":{"action":"get"}}')]) {
      expect(guard.check({ name: 'vm_tool', args })).toMatchObject({ allowed: false, kind: 'write' });
    }
  });
});

describe('bad input to the guard gets a clear error and leaves the session as it was', () => {
  it('a tool call whose getter throws is a TypeError that keeps the cause', () => {
    const guard = createSessionGuard();
    const cause = new Error('trap');
    const call = new Proxy(
      {},
      {
        get: () => {
          throw cause;
        },
      },
    ) as ToolCall;
    let thrown: unknown;
    try {
      guard.check(call);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(TypeError);
    expect((thrown as Error).message).toBe('check: the tool call could not be read (a getter or proxy trap threw)');
    expect((thrown as Error).cause).toBe(cause);
    expect(guard.state).toBe('RESOLVING');
  });

  it('a clock that returns no number is a TypeError naming what it returned', () => {
    const guard = createSessionGuard({ now: () => Number.NaN });
    expect(() => guard.check({ name: 'pulse_query' })).toThrow(
      /^the guard's clock returned NaN, not an epoch-millisecond number within ±8640000000000000$/,
    );
  });

  it('a clock at the very edge of the range of JavaScript dates is accepted', () => {
    const guard = createSessionGuard({ now: () => 8_640_000_000_000_000 });
    expect(guard.check({ name: 'pulse_query' }).allowed).toBe(true);
  });

  it('an outcome other than success or error is a TypeError quoting it', () => {
    const guard = createSessionGuard();
    guard.check({ id: 'q', name: 'pulse_query' });
    expect(() => guard.record({ id: 'q', name: 'pulse_query' }, 'maybe' as 'success')).toThrow(
      `record: outcome must be 'success' or 'error', got "maybe"`,
    );
    expect(guard.state).toBe('RESOLVING');
  });

  it('a classifier that throws fails closed: the call is judged a write', () => {
    const guard = createSessionGuard({
      classify: () => {
        throw new Error('classifier broke');
      },
    });
    const decision = guard.check({ name: 'pulse_metrics' });
    expect(decision.allowed).toBe(false);
    if (!decision.allowed) expect(decision.error.toolKind).toBe('write');
  });

  it('a classifier that returns no kind fails closed: the call is judged a write', () => {
    const guard = createSessionGuard({ classify: () => 'harmless' as ToolKind });
    const decision = guard.check({ name: 'pulse_metrics' });
    expect(decision.allowed).toBe(false);
    if (!decision.allowed) expect(decision.error.toolKind).toBe('write');
  });
});
