/**
 * The safety statechart driven directly as an actor: reset and ResetKeepProgress.
 *
 * Spec: ASSISTANT_SAFETY.md "States", "The invariants", "Blocked calls and
 * recovery", "Resetting"; DESIGN.md §1 and §3.
 */
import { describe, expect, it } from 'vitest';
import { initialSafetyContext } from '../../../machines/safety.machine.js';
import { ALL_STATES, T, inState, requested, run, start, succeeded, toVerified, toVerifying } from '../../support/safety-session.js';

describe('Resetting', () => {
  it.each(ALL_STATES)('Reset returns a %s session to RESOLVING', (state) => {
    const s = inState(state);
    s.send({ type: 'session.reset', at: T + 10 });
    expect(s.state).toBe('RESOLVING');
  });

  it('Reset clears all tracking', () => {
    const s = inState('VERIFYING');
    s.send(requested('pulse_control', 'write', T + 10, 'blocked'));
    s.send(requested('pulse_metrics', 'read', T + 11, 'in-flight'));
    s.send({ type: 'answer.requested', at: T + 12 });
    s.send({ type: 'session.reset', at: T + 13 });
    // checksCalls is how the session is driven (a setting, like strictFailedWrites), not tracking.
    expect(s.context).toEqual({ ...initialSafetyContext({ autoCompleteVerification: false }), checksCalls: true });
  });

  it('Reset clears pending recoveries (DESIGN §3.2)', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    s.send({ type: 'session.reset', at: T + 1 });
    expect(s.context.pendingRecoveries).toEqual({});
  });

  it('a success after Reset reports no recovery of a block from before it', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    s.send({ type: 'session.reset', at: T + 1 });
    s.send(succeeded('pulse_control', 'write', T + 2));
    expect(s.recoveries).toEqual([]);
  });

  it('Reset keeps the strict failed-writes option', () => {
    const s = inState('VERIFYING', { strictFailedWrites: true });
    s.send({ type: 'session.reset', at: T + 10 });
    expect(s.context.strictFailedWrites).toBe(true);
  });

  it('ResetKeepProgress moves a VERIFYING session back to READING', () => {
    const s = inState('VERIFYING');
    s.send({ type: 'session.resetKeepingProgress', at: T + 10 });
    expect(s.state).toBe('READING');
  });

  it('ResetKeepProgress moves a WRITING session back to READING (DESIGN §3.2)', () => {
    const s = inState('WRITING');
    s.send({ type: 'session.resetKeepingProgress', at: T + 10 });
    expect(s.state).toBe('READING');
  });

  it('ResetKeepProgress keeps a READING session in READING', () => {
    const s = inState('READING');
    s.send({ type: 'session.resetKeepingProgress', at: T + 10 });
    expect(s.state).toBe('READING');
  });

  it('ResetKeepProgress keeps a RESOLVING session in RESOLVING', () => {
    const s = start();
    s.send({ type: 'session.resetKeepingProgress', at: T });
    expect(s.state).toBe('RESOLVING');
  });

  it('ResetKeepProgress does not discard that a target was established: a write is admitted', () => {
    const s = inState('VERIFYING');
    s.send({ type: 'session.resetKeepingProgress', at: T + 10 });
    s.send(requested('pulse_control', 'write', T + 11, 'w2'));
    expect(s.lastDecision.allowed).toBe(true);
  });

  it('ResetKeepProgress drops verification tracking: flags and counters', () => {
    const s = start();
    toVerifying(s);
    s.send(requested('pulse_control', 'write', T + 5, 'blocked'));
    s.send({ type: 'answer.requested', at: T + 6 });
    run(s, 'pulse_metrics', 'read', T + 7, 'r');
    s.send({ type: 'session.resetKeepingProgress', at: T + 10 });
    expect(s.context).toMatchObject({ readAfterWrite: false, consecutiveVerifyBlocks: 0, finalAnswerBlocks: 0 });
  });

  it('ResetKeepProgress drops the calls in flight', () => {
    const s = inState('WRITING');
    s.send(requested('pulse_metrics', 'read', T + 5, 'r'));
    s.send({ type: 'session.resetKeepingProgress', at: T + 10 });
    expect(s.context.inFlight).toEqual([]);
  });

  it('ResetKeepProgress keeps the last read and write records', () => {
    const s = start();
    toVerified(s);
    s.send({ type: 'session.resetKeepingProgress', at: T + 10 });
    expect(s.context).toMatchObject({
      lastWriteTool: 'pulse_control',
      lastWriteAt: T + 2,
      lastReadTool: 'pulse_metrics',
      lastReadAt: T + 3,
    });
  });

  it('ResetKeepProgress keeps pending recoveries (DESIGN §3.2)', () => {
    const s = inState('VERIFYING');
    s.send(requested('pulse_control_guest', 'write', T + 5, 'blocked'));
    const before = s.context.pendingRecoveries;
    s.send({ type: 'session.resetKeepingProgress', at: T + 10 });
    expect(s.context.pendingRecoveries).toEqual(before);
  });

  it('a write whose outcome arrives after ResetKeepProgress dropped it still needs verification', () => {
    const s = inState('WRITING');
    s.send({ type: 'session.resetKeepingProgress', at: T + 10 });
    s.send(succeeded('pulse_control', 'write', T + 11, 'write-1'));
    expect(s.state).toBe('VERIFYING');
  });

  it("ResetKeepProgress clears wroteThisEpisode (DESIGN §1: the original's own test)", () => {
    const s = inState('VERIFYING');
    s.send({ type: 'session.resetKeepingProgress', at: T + 10 });
    expect(s.context.wroteThisEpisode).toBe(false);
  });

  it('wroteThisEpisode is cleared by Reset', () => {
    const s = inState('VERIFYING');
    s.send({ type: 'session.reset', at: T + 10 });
    expect(s.context.wroteThisEpisode).toBe(false);
  });
});
