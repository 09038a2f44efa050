/**
 * The safety statechart driven directly as an actor (issue 28): a
 * recoverable error code a tool's result raised opens a pending recovery
 * for the tool, as a refusal of the gate does; and a write whose failure
 * was recorded may still have happened, so the same write again is refused
 * (`repeated-write`) until a read touches its target, in every state and
 * every policy.
 *
 * Spec: ASSISTANT_SAFETY.md "Blocked calls and recovery"; DESIGN.md §1
 * (`STRICT_RESOLUTION`), §3.5, §3.8; issue 28 items 1 and 3.
 */
import { describe, expect, it } from 'vitest';
import { ErrCodeStrictResolution, MAX_FAILED_WRITES, RECOVERY_TTL_MS, TOOL_BLOCK_REASONS } from '../../../machines/safety.policy.js';
import type { RecoveryRaisedEvent, SafetyEvent, SafetyInput, ToolKind } from '../../../machines/safety.types.js';
import { T, failed, requested, run, start, succeeded, toReading, type Session } from '../../support/safety-session.js';

/** A session that also keeps the `recovery.raised` events it emitted. */
function session(input?: SafetyInput): Session & { raised: RecoveryRaisedEvent[] } {
  const s = start(input);
  const raised: RecoveryRaisedEvent[] = [];
  s.actor.on('recovery.raised', (event) => raised.push(event));
  return Object.assign(s, { raised });
}

function raisedFailure(tool: string, at: number, callId: string, errorCode: unknown = ErrCodeStrictResolution): SafetyEvent {
  return { type: 'tool.failed', tool, kind: 'write', at, callId, errorCode } as SafetyEvent;
}

/** A check of a write with a key and targets. */
function write(tool: string, key: string | undefined, at: number, callId: string, targets?: string[]): SafetyEvent {
  return {
    type: 'tool.requested',
    tool,
    kind: 'write',
    at,
    callId,
    ...(key === undefined ? {} : { writeKey: key }),
    ...(targets === undefined ? {} : { targets }),
  };
}

/** A check then a success of a call with targets. */
function runOn(s: Session, tool: string, kind: ToolKind, at: number, callId: string, targets: string[]): void {
  s.send({ type: 'tool.requested', tool, kind, at, callId, targets });
  s.send({ type: 'tool.succeeded', tool, kind, at, callId });
}

const CHARGE = 'charge_card#k1';

describe('Recoveries a tool raises (issue 28 item 1)', () => {
  it('a failure carrying a recoverable code opens a pending recovery of its tool for that code, and emits recovery.raised', () => {
    const s = session();
    toReading(s);
    s.send(requested('pulse_control', 'write', T + 1, 'w'));
    s.send(raisedFailure('pulse_control', T + 2, 'w'));
    const recovery = {
      recoveryId: 'STRICT_RESOLUTION:pulse_control',
      errorCode: 'STRICT_RESOLUTION',
      tool: 'pulse_control',
      createdAt: T + 2,
      lastBlockedAt: T + 2,
      attempts: 1,
    };
    expect(s.context.pendingRecoveries).toEqual({ 'STRICT_RESOLUTION:pulse_control': recovery });
    expect(s.raised).toEqual([{ type: 'recovery.raised', recovery, at: T + 2 }]);
    expect(s.state).toBe('READING'); // a failure causes no transition
  });

  it('the same code raised again bumps the entry; another code of the tool is its own entry', () => {
    const s = session();
    toReading(s);
    s.send(raisedFailure('pulse_control', T + 2, 'a'));
    s.send(raisedFailure('pulse_control', T + 5, 'b'));
    s.send(raisedFailure('pulse_control', T + 6, 'c', 'OTHER_CODE'));
    expect(s.context.pendingRecoveries['STRICT_RESOLUTION:pulse_control']).toMatchObject({
      createdAt: T + 2,
      lastBlockedAt: T + 5,
      attempts: 2,
    });
    expect(s.context.pendingRecoveries['OTHER_CODE:pulse_control']).toMatchObject({ errorCode: 'OTHER_CODE', attempts: 1 });
    expect(s.raised.map((e) => e.recovery.attempts)).toEqual([1, 2, 1]);
  });

  it("the tool's next successful call clears it, with any block of the gate, each reported as a recovery", () => {
    const s = session();
    s.send(requested('pulse_control', 'write', T, 'blocked')); // RESOLVING: FSM_BLOCKED
    toReading(s, T + 1);
    s.send(raisedFailure('pulse_control', T + 2, 'x'));
    expect(Object.keys(s.context.pendingRecoveries)).toEqual(['FSM_BLOCKED:pulse_control', 'STRICT_RESOLUTION:pulse_control']);
    run(s, 'pulse_control', 'write', T + 3, 'ok');
    expect(s.context.pendingRecoveries).toEqual({});
    expect(s.recoveries.map((e) => e.recovery.errorCode)).toEqual(['FSM_BLOCKED', 'STRICT_RESOLUTION']);
  });

  it('a successful call of another tool clears nothing', () => {
    const s = session();
    toReading(s);
    s.send(raisedFailure('pulse_control', T + 2, 'x'));
    run(s, 'pulse_metrics', 'read', T + 3, 'r');
    expect(Object.keys(s.context.pendingRecoveries)).toEqual(['STRICT_RESOLUTION:pulse_control']);
    expect(s.recoveries).toEqual([]);
  });

  it('expires ten minutes after it was last raised, and Reset clears it', () => {
    const s = session();
    toReading(s);
    s.send(raisedFailure('pulse_control', T, 'x'));
    s.send({ type: 'clock.ticked', at: T + RECOVERY_TTL_MS });
    expect(Object.keys(s.context.pendingRecoveries)).toHaveLength(1);
    s.send({ type: 'clock.ticked', at: T + RECOVERY_TTL_MS + 1 });
    expect(s.context.pendingRecoveries).toEqual({});
    s.send(raisedFailure('pulse_control', T + 2, 'y'));
    s.send({ type: 'session.reset', at: T + 3 });
    expect(s.context.pendingRecoveries).toEqual({});
  });

  it('opens nothing for a failure without a code, an empty or non-string code, or a success carrying one', () => {
    const s = session();
    toReading(s);
    s.send(failed('pulse_control', 'write', T + 1, 'a'));
    s.send(raisedFailure('pulse_control', T + 2, 'b', ''));
    s.send(raisedFailure('pulse_control', T + 3, 'c', 42));
    s.send({ type: 'tool.succeeded', tool: 'pulse_metrics', kind: 'read', at: T + 4, errorCode: 'STRICT_RESOLUTION' } as SafetyEvent);
    expect(s.context.pendingRecoveries).toEqual({});
    expect(s.raised).toEqual([]);
  });
});

describe('A failed or ambiguous write repeated (issue 28 item 3)', () => {
  it('the same write after its failure is refused, rule repeated-write, naming its target; another write is not', () => {
    const s = session();
    runOn(s, 'get_card', 'read', T, 'r0', ['card=c1']);
    s.send(write('charge_card', CHARGE, T + 1, 'w1', ['card=c1']));
    s.send(failed('charge_card', 'write', T + 2, 'w1'));
    expect(s.state).toBe('READING');
    s.send(write('charge_card', CHARGE, T + 3, 'w2', ['card=c1']));
    expect(s.lastDecision).toMatchObject({
      allowed: false,
      state: 'READING',
      rule: 'repeated-write',
      recoveryId: 'FSM_BLOCKED:charge_card',
      target: 'card=c1',
      reason: `${TOOL_BLOCK_REASONS['repeated-write']} (target: "card=c1")`,
    });
    expect(s.lastDecision.reason).toMatch(/^POLICY_BLOCKED: /);
    s.send(write('charge_card', 'charge_card#k2', T + 4, 'w3', ['card=c1']));
    expect(s.lastDecision.allowed).toBe(true);
  });

  it('is the rule under strict failed writes too, where the failure leads to VERIFYING', () => {
    const s = session({ strictFailedWrites: true });
    toReading(s);
    s.send(write('charge_card', CHARGE, T + 1, 'w1'));
    s.send(failed('charge_card', 'write', T + 2, 'w1'));
    expect(s.state).toBe('VERIFYING');
    s.send(write('charge_card', CHARGE, T + 3, 'w2'));
    expect(s.lastDecision).toMatchObject({ allowed: false, state: 'VERIFYING', rule: 'repeated-write' });
    expect(s.lastDecision.target).toBeUndefined(); // the failed write named no target
  });

  it('a possibly applied failure (the runner timed out) is remembered as any failure is', () => {
    const s = session();
    toReading(s);
    s.send(write('charge_card', CHARGE, T + 1, 'w1'));
    s.send({ ...failed('charge_card', 'write', T + 2, 'w1'), possiblyApplied: true } as SafetyEvent);
    s.send(write('charge_card', CHARGE, T + 3, 'w2'));
    expect(s.lastDecision.rule).toBe('repeated-write');
  });

  it('is refused in every state: RESOLVING, READING, WRITING and VERIFYING', () => {
    // RESOLVING: a failed write recorded without a check, with its key.
    const resolving = session();
    resolving.send({ ...failed('charge_card', 'write', T, undefined), writeKey: CHARGE } as SafetyEvent);
    resolving.send(write('charge_card', CHARGE, T + 1, 'w'));
    expect(resolving.lastDecision).toMatchObject({ state: 'RESOLVING', rule: 'repeated-write' });
    // WRITING: another write in flight.
    const writing = session();
    toReading(writing);
    writing.send(write('charge_card', CHARGE, T + 1, 'w1'));
    writing.send(failed('charge_card', 'write', T + 2, 'w1'));
    writing.send(write('refund', 'refund#k', T + 3, 'w2'));
    expect(writing.state).toBe('WRITING');
    writing.send(write('charge_card', CHARGE, T + 4, 'w3'));
    expect(writing.lastDecision).toMatchObject({ state: 'WRITING', rule: 'repeated-write' });
    // VERIFYING: another write succeeded.
    writing.send(succeeded('refund', 'write', T + 5, 'w2'));
    writing.send(write('charge_card', CHARGE, T + 6, 'w4'));
    expect(writing.lastDecision).toMatchObject({ state: 'VERIFYING', rule: 'repeated-write' });
  });

  it('a successful read touching its target, admitted after the failure, clears it', () => {
    const s = session();
    runOn(s, 'get_card', 'read', T, 'r0', ['card=c1']);
    s.send(write('charge_card', CHARGE, T + 1, 'w1', ['card=c1']));
    s.send(failed('charge_card', 'write', T + 2, 'w1'));
    runOn(s, 'get_card', 'read', T + 3, 'r1', ['card=c2']); // another target: nothing cleared
    expect(s.context.failedWrites).toHaveLength(1);
    s.send({ type: 'tool.requested', tool: 'get_card', kind: 'read', at: T + 4, callId: 'r2', targets: ['card=c1'] });
    s.send(failed('get_card', 'read', T + 4, 'r2')); // a failed read is no evidence
    expect(s.context.failedWrites).toHaveLength(1);
    runOn(s, 'get_card', 'read', T + 5, 'r3', ['card=c1']);
    expect(s.context.failedWrites).toBeUndefined();
    s.send(write('charge_card', CHARGE, T + 6, 'w2', ['card=c1']));
    expect(s.lastDecision.allowed).toBe(true);
  });

  it('a failed write without targets is cleared by any successful read; one with targets not by a read naming none', () => {
    const s = session();
    runOn(s, 'get_card', 'read', T, 'r0', ['card=c1']);
    s.send(write('charge_card', CHARGE, T + 1, 'w1', ['card=c1']));
    s.send(failed('charge_card', 'write', T + 2, 'w1'));
    s.send(write('send_mail', 'send_mail#k', T + 3, 'w2'));
    s.send(failed('send_mail', 'write', T + 4, 'w2'));
    run(s, 'pulse_metrics', 'read', T + 5, 'r');
    expect(s.context.failedWrites?.map((f) => f.key)).toEqual([CHARGE]);
  });

  it('a read that ran beside the failed write clears it too: the machine is timeless (a documented limit)', () => {
    const s = session();
    runOn(s, 'get_card', 'read', T, 'r0', ['card=c1']);
    s.send(write('charge_card', CHARGE, T + 1, 'w1', ['card=c1']));
    s.send({ type: 'tool.requested', tool: 'get_card', kind: 'read', at: T + 1, callId: 'beside', targets: ['card=c1'] });
    s.send(failed('charge_card', 'write', T + 2, 'w1'));
    expect(s.context.failedWrites).toHaveLength(1);
    s.send(succeeded('get_card', 'read', T + 3, 'beside'));
    expect(s.context.failedWrites).toBeUndefined();
    s.send(write('charge_card', CHARGE, T + 4, 'w2', ['card=c1']));
    expect(s.lastDecision.allowed).toBe(true);
  });

  it('a call that never ran (rejected), a write checked without a key, and a failed read are not remembered', () => {
    const s = session();
    toReading(s);
    s.send(write('charge_card', CHARGE, T + 1, 'w1'));
    s.send({ ...failed('charge_card', 'write', T + 2, 'w1'), neverRan: true } as SafetyEvent);
    s.send(write('charge_card', undefined, T + 3, 'w2'));
    s.send(failed('charge_card', 'write', T + 4, 'w2'));
    s.send({ ...requested('get_card', 'read', T + 5, 'r'), writeKey: 'get_card#k' } as SafetyEvent);
    s.send(failed('get_card', 'read', T + 6, 'r'));
    expect(s.context.failedWrites).toBeUndefined();
    s.send(write('charge_card', CHARGE, T + 7, 'w3'));
    expect(s.lastDecision.allowed).toBe(true);
  });

  it('Reset forgets failed writes; ResetKeepProgress keeps them', () => {
    const s = session();
    toReading(s);
    s.send(write('charge_card', CHARGE, T + 1, 'w1'));
    s.send(failed('charge_card', 'write', T + 2, 'w1'));
    s.send({ type: 'session.resetKeepingProgress', at: T + 3 });
    s.send(write('charge_card', CHARGE, T + 4, 'w2'));
    expect(s.lastDecision.rule).toBe('repeated-write');
    s.send({ type: 'session.reset', at: T + 5 });
    expect(s.context.failedWrites).toBeUndefined();
    toReading(s, T + 6);
    s.send(write('charge_card', CHARGE, T + 7, 'w3'));
    expect(s.lastDecision.allowed).toBe(true);
  });

  it(`remembers at most ${MAX_FAILED_WRITES} failed writes, the oldest dropped past it`, () => {
    const s = session();
    toReading(s);
    for (let i = 0; i <= MAX_FAILED_WRITES; i += 1) {
      s.send(write('charge_card', `k${i}`, T + 1 + 2 * i, `w${i}`));
      s.send(failed('charge_card', 'write', T + 2 + 2 * i, `w${i}`));
    }
    expect(s.context.failedWrites).toHaveLength(MAX_FAILED_WRITES);
    expect(s.context.failedWrites?.[0]?.key).toBe('k1');
    s.send(write('charge_card', 'k1', T + 1000, 'again-1'));
    expect(s.lastDecision.rule).toBe('repeated-write');
    s.send(write('charge_card', 'k0', T + 1001, 'again-0'));
    expect(s.lastDecision.allowed).toBe(true);
  });
});
