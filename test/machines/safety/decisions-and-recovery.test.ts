/**
 * The safety statechart driven directly as an actor: gate decisions as emitted events, blocked calls, and pending recoveries per tool with their ten-minute TTL.
 *
 * Spec: ASSISTANT_SAFETY.md "States", "The invariants", "Blocked calls and
 * recovery", "Resetting"; DESIGN.md §1 and §3.
 */
import { describe, expect, it } from 'vitest';
import { RECOVERY_TTL_MS } from '../../../machines/safety.policy.js';
import { T, failed, inState, requested, run, start, succeeded, toReading } from '../../support/safety-session.js';

describe('Gate decisions are emitted events', () => {
  it('every tool check emits exactly one gate.decided', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'a'));
    s.send(requested('pulse_query', 'resolve', T, 'b'));
    expect(s.decisions.map((d) => [d.callId, d.allowed])).toEqual([
      ['a', false],
      ['b', true],
    ]);
  });

  it('every final answer request emits exactly one gate.decided', () => {
    const s = start();
    s.send({ type: 'answer.requested', at: T });
    expect(s.decisions).toHaveLength(1);
  });

  it('recording an outcome emits no gate.decided', () => {
    const s = start();
    s.send(succeeded('pulse_query', 'resolve', T, 'a'));
    s.send(failed('pulse_control', 'write', T, 'b'));
    expect(s.decisions).toEqual([]);
  });

  it('a call without an id is decided with callId null', () => {
    const s = start();
    s.send(requested('pulse_query', 'resolve', T));
    expect(s.lastDecision.callId).toBeNull();
  });
});

describe('Blocked calls and recovery', () => {
  it('a blocked call opens a pending recovery for its tool', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    expect(s.context.pendingRecoveries).toEqual({
      'FSM_BLOCKED:pulse_control': {
        recoveryId: 'FSM_BLOCKED:pulse_control',
        errorCode: 'FSM_BLOCKED',
        tool: 'pulse_control',
        createdAt: T,
        lastBlockedAt: T,
        attempts: 1,
      },
    });
  });

  it('the refusal names the pending recovery it opened', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    expect(Object.keys(s.context.pendingRecoveries)).toEqual([s.lastDecision.recoveryId]);
  });

  it('a later successful call of the same tool clears the pending recovery', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    toReading(s, T + 1);
    run(s, 'pulse_control', 'write', T + 2, 'w2');
    expect(s.context.pendingRecoveries).toEqual({});
  });

  it('the cleared pending recovery is emitted as recovery.succeeded', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    const pending = s.context.pendingRecoveries['FSM_BLOCKED:pulse_control'];
    toReading(s, T + 1);
    run(s, 'pulse_control', 'write', T + 2, 'w2');
    expect(s.recoveries).toEqual([{ type: 'recovery.succeeded', recovery: pending, at: T + 2 }]);
  });

  it('a successful call of another tool leaves the pending recovery', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    toReading(s, T + 1);
    run(s, 'pulse_control_guest', 'write', T + 2, 'w2');
    expect(Object.keys(s.context.pendingRecoveries)).toEqual(['FSM_BLOCKED:pulse_control']);
    expect(s.recoveries).toEqual([]);
  });

  it('a failed call of the same tool leaves the pending recovery', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    toReading(s, T + 1);
    s.send(requested('pulse_control', 'write', T + 2, 'w2'));
    s.send(failed('pulse_control', 'write', T + 3, 'w2'));
    expect(Object.keys(s.context.pendingRecoveries)).toEqual(['FSM_BLOCKED:pulse_control']);
    expect(s.recoveries).toEqual([]);
  });

  it('a successful call of the same tool under another kind still clears it (by tool name)', () => {
    const s = start();
    s.send(requested('pulse_docker', 'write', T, 'w'));
    run(s, 'pulse_docker', 'read', T + 1, 'r');
    expect(s.context.pendingRecoveries).toEqual({});
    expect(s.recoveries).toHaveLength(1);
  });

  it('a blocked write in VERIFYING recovers once verification completed and the write succeeds', () => {
    const s = inState('VERIFYING');
    s.send(requested('pulse_control_guest', 'write', T + 10, 'w2'));
    run(s, 'pulse_metrics', 'read', T + 11, 'r');
    s.send({ type: 'verification.completed', at: T + 12 });
    run(s, 'pulse_control_guest', 'write', T + 13, 'w3');
    expect(s.recoveries.map((r) => r.recovery.tool)).toEqual(['pulse_control_guest']);
  });
});

describe('Pending recoveries per tool with attempts and a ten-minute TTL (DESIGN §3.5)', () => {
  it('a repeated block of the same tool bumps attempts in one entry', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'a'));
    s.send(requested('pulse_control', 'write', T + 1000, 'b'));
    s.send(requested('pulse_control', 'write', T + 2000, 'c'));
    expect(s.context.pendingRecoveries).toEqual({
      'FSM_BLOCKED:pulse_control': expect.objectContaining({ createdAt: T, lastBlockedAt: T + 2000, attempts: 3 }),
    });
  });

  it('blocks of different tools are tracked separately', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'a'));
    s.send(requested('pulse_run_command', 'write', T + 1, 'b'));
    expect(Object.keys(s.context.pendingRecoveries).sort()).toEqual(['FSM_BLOCKED:pulse_control', 'FSM_BLOCKED:pulse_run_command']);
  });

  it('the TTL is ten minutes', () => {
    expect(RECOVERY_TTL_MS).toBe(10 * 60 * 1000);
  });

  it('a pending recovery is kept exactly ten minutes after its block', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    s.send({ type: 'clock.ticked', at: T + 600_000 });
    expect(Object.keys(s.context.pendingRecoveries)).toEqual(['FSM_BLOCKED:pulse_control']);
  });

  it('a pending recovery is gone 1 ms after ten minutes', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    s.send({ type: 'clock.ticked', at: T + 600_001 });
    expect(s.context.pendingRecoveries).toEqual({});
  });

  it('a success exactly ten minutes after the block is a recovery', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    s.send(succeeded('pulse_control', 'write', T + 600_000));
    expect(s.recoveries).toHaveLength(1);
  });

  it('a success 1 ms after the TTL is no recovery', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    s.send(succeeded('pulse_control', 'write', T + 600_001));
    expect(s.recoveries).toEqual([]);
  });

  it('an expired entry is dropped by the next successful call of any tool', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    run(s, 'pulse_query', 'resolve', T + 600_001, 'q');
    expect(s.context.pendingRecoveries).toEqual({});
  });

  it('the TTL runs from the latest block', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'a'));
    s.send(requested('pulse_control', 'write', T + 500_000, 'b'));
    s.send({ type: 'clock.ticked', at: T + 1_100_000 });
    expect(Object.keys(s.context.pendingRecoveries)).toEqual(['FSM_BLOCKED:pulse_control']);
    s.send({ type: 'clock.ticked', at: T + 1_100_001 });
    expect(s.context.pendingRecoveries).toEqual({});
  });

  it('a block after the entry expired opens a fresh entry with one attempt', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'a'));
    s.send(requested('pulse_control', 'write', T + 600_001, 'b'));
    expect(s.context.pendingRecoveries['FSM_BLOCKED:pulse_control']).toMatchObject({
      createdAt: T + 600_001,
      lastBlockedAt: T + 600_001,
      attempts: 1,
    });
  });

  it('a clock tick keeps entries still alive for other tools', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'a'));
    s.send(requested('pulse_run_command', 'write', T + 100, 'b'));
    s.send({ type: 'clock.ticked', at: T + 600_050 });
    expect(Object.keys(s.context.pendingRecoveries)).toEqual(['FSM_BLOCKED:pulse_run_command']);
  });
});
