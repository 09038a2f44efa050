/**
 * The safety statechart driven directly as an actor: states, the transitions of a successful or failed call, and verification completed by its event or by itself.
 *
 * Spec: ASSISTANT_SAFETY.md "States", "The invariants", "Blocked calls and
 * recovery", "Resetting"; DESIGN.md §1 and §3.
 */
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { initialSafetyContext, safetyMachine } from '../../../machines/safety.machine.js';
import { MAX_NAME_LENGTH } from '../../../machines/safety.policy.js';
import { T, failed, inState, requested, run, start, succeeded, toReading, toVerified, toVerifying } from '../../support/safety-session.js';

describe('Long names (MAX_NAME_LENGTH)', () => {
  it('keeps only the first MAX_NAME_LENGTH characters of a tool name and a call id', () => {
    const actor = createActor(safetyMachine).start();
    actor.send({ type: 'tool.requested', tool: 'r'.repeat(10_000), kind: 'read', callId: 'i'.repeat(10_000), at: 1 });
    const [call] = actor.getSnapshot().context.inFlight;
    expect([call!.tool.length, call!.key.length]).toEqual([MAX_NAME_LENGTH, MAX_NAME_LENGTH + 'id:'.length]);
  });
});

describe('States', () => {
  it('starts in RESOLVING', () => {
    expect(start().state).toBe('RESOLVING');
  });

  it('starts with no tracking at all', () => {
    expect(start().context).toEqual(initialSafetyContext({ autoCompleteVerification: false }));
  });

  it('takes strictFailedWrites from its input', () => {
    expect(start({ strictFailedWrites: true }).context.strictFailedWrites).toBe(true);
  });
});

describe('Transitions on a successful tool call', () => {
  it('a resolve in RESOLVING moves the session to READING', () => {
    const s = start();
    run(s, 'pulse_query', 'resolve', T, 'c1');
    expect(s.state).toBe('READING');
  });

  it('a read in RESOLVING moves the session to READING', () => {
    const s = start();
    run(s, 'pulse_metrics', 'read', T, 'c1');
    expect(s.state).toBe('READING');
  });

  it('an admitted resolve does not move the session before it succeeds', () => {
    const s = start();
    s.send(requested('pulse_query', 'resolve', T, 'c1'));
    expect(s.state).toBe('RESOLVING');
  });

  it('a successful read records the last read tool and its time', () => {
    const s = start();
    run(s, 'pulse_metrics', 'read', T + 5, 'c1');
    expect(s.context).toMatchObject({ lastReadTool: 'pulse_metrics', lastReadAt: T + 5 });
  });

  it('a resolve or read in READING keeps the session in READING', () => {
    const s = inState('READING');
    run(s, 'pulse_metrics', 'read', T + 10, 'c2');
    run(s, 'pulse_query', 'resolve', T + 11, 'c3');
    expect(s.state).toBe('READING');
  });

  it('a write from READING moves the session to VERIFYING', () => {
    const s = inState('READING');
    run(s, 'pulse_control', 'write', T + 10, 'w');
    expect(s.state).toBe('VERIFYING');
  });

  it('a write recorded in RESOLVING moves the session to VERIFYING', () => {
    const s = start();
    s.send(succeeded('pulse_control', 'write', T));
    expect(s.state).toBe('VERIFYING');
  });

  it('a write recorded in VERIFYING keeps the session in VERIFYING', () => {
    const s = inState('VERIFYING');
    s.send(succeeded('pulse_control_guest', 'write', T + 10));
    expect(s.state).toBe('VERIFYING');
  });

  it('a write records the tool and its timestamp', () => {
    const s = inState('READING');
    run(s, 'pulse_control', 'write', T + 42, 'w');
    expect(s.context).toMatchObject({ lastWriteTool: 'pulse_control', lastWriteAt: T + 42 });
  });

  it('a write clears the read-after-write flag', () => {
    const s = start();
    toVerified(s);
    expect(s.context.readAfterWrite).toBe(true);
    s.send(succeeded('pulse_control_guest', 'write', T + 10));
    expect(s.context.readAfterWrite).toBe(false);
  });

  it('a write sets wroteThisEpisode', () => {
    const s = inState('VERIFYING');
    expect(s.context.wroteThisEpisode).toBe(true);
  });

  it('a resolve in VERIFYING sets read-after-write', () => {
    const s = inState('VERIFYING');
    run(s, 'pulse_query', 'resolve', T + 10, 'c');
    expect(s.context.readAfterWrite).toBe(true);
  });

  it('a read in VERIFYING sets read-after-write', () => {
    const s = inState('VERIFYING');
    run(s, 'pulse_metrics', 'read', T + 10, 'c');
    expect(s.context.readAfterWrite).toBe(true);
  });

  it('a read in VERIFYING does not leave VERIFYING by itself', () => {
    const s = inState('VERIFYING');
    run(s, 'pulse_metrics', 'read', T + 10, 'c');
    expect(s.state).toBe('VERIFYING');
  });

  it('a read in VERIFYING that verifies zeroes the consecutive-block counter', () => {
    const s = inState('VERIFYING');
    s.send(requested('pulse_control', 'write', T + 10, 'blocked'));
    s.send(requested('pulse_control', 'write', T + 11, 'blocked-again'));
    expect(s.context.consecutiveVerifyBlocks).toBe(2);
    run(s, 'pulse_metrics', 'read', T + 12, 'c');
    expect(s.context.consecutiveVerifyBlocks).toBe(0);
  });

  it('a user_input call in RESOLVING does not advance the state', () => {
    const s = start();
    run(s, 'pulse_question', 'user_input', T, 'q');
    expect(s.state).toBe('RESOLVING');
  });

  it('a user_input call in READING records no read', () => {
    const s = inState('READING');
    const before = s.context;
    run(s, 'pulse_question', 'user_input', T + 10, 'q');
    // Only a confirmation is recorded (issue 24: whatever confirmDestructive says).
    expect(s.context).toEqual({ ...before, confirmedSinceWrite: true });
  });

  it('a user_input call in VERIFYING is not verification', () => {
    const s = inState('VERIFYING');
    run(s, 'pulse_question', 'user_input', T + 10, 'q');
    expect(s.context.readAfterWrite).toBe(false);
  });

  it('a user_input call in VERIFYING does not let the final answer through', () => {
    const s = inState('VERIFYING');
    run(s, 'pulse_question', 'user_input', T + 10, 'q');
    s.send({ type: 'answer.requested', at: T + 11 });
    expect(s.lastDecision.allowed).toBe(false);
  });
});

describe('Failed tool calls (DESIGN §1)', () => {
  it('a failed resolve in RESOLVING causes no transition', () => {
    const s = start();
    s.send(requested('pulse_query', 'resolve', T, 'c'));
    s.send(failed('pulse_query', 'resolve', T, 'c'));
    expect(s.state).toBe('RESOLVING');
  });

  it('a failed read records no read', () => {
    const s = inState('READING');
    s.send(requested('pulse_metrics', 'read', T + 10, 'c'));
    s.send(failed('pulse_metrics', 'read', T + 10, 'c'));
    expect(s.context.lastReadAt).toBe(T);
  });

  it('a failed read in VERIFYING is not verification', () => {
    const s = inState('VERIFYING');
    s.send(requested('pulse_metrics', 'read', T + 10, 'c'));
    s.send(failed('pulse_metrics', 'read', T + 10, 'c'));
    expect(s.context.readAfterWrite).toBe(false);
  });

  it('a failed write recorded in VERIFYING causes no transition', () => {
    const s = start();
    toVerified(s);
    const before = s.context;
    s.send(failed('pulse_control_guest', 'write', T + 10));
    expect(s.state).toBe('VERIFYING');
    expect(s.context).toEqual(before);
  });
});

describe('CompleteVerification', () => {
  it('returns a verified session from VERIFYING to READING', () => {
    const s = start();
    toVerified(s);
    s.send({ type: 'verification.completed', at: T + 10 });
    expect(s.state).toBe('READING');
  });

  it('does not return an unverified session to READING', () => {
    const s = inState('VERIFYING');
    s.send({ type: 'verification.completed', at: T + 10 });
    expect(s.state).toBe('VERIFYING');
  });

  it('makes further writes possible', () => {
    const s = start();
    toVerified(s);
    s.send({ type: 'verification.completed', at: T + 10 });
    s.send(requested('pulse_control', 'write', T + 11, 'w2'));
    expect(s.lastDecision.allowed).toBe(true);
  });

  it('clears read-after-write and the consecutive-block counter', () => {
    const s = start();
    toVerifying(s);
    s.send(requested('pulse_control', 'write', T + 5, 'blocked'));
    s.send(requested('pulse_metrics', 'read', T + 6, 'r'));
    s.send(requested('pulse_control', 'write', T + 7, 'blocked-again'));
    s.send(succeeded('pulse_metrics', 'read', T + 8, 'r'));
    s.send({ type: 'verification.completed', at: T + 10 });
    expect(s.context).toMatchObject({ readAfterWrite: false, consecutiveVerifyBlocks: 0 });
  });

  it('deliberately leaves wroteThisEpisode set', () => {
    const s = start();
    toVerified(s);
    s.send({ type: 'verification.completed', at: T + 10 });
    expect(s.context.wroteThisEpisode).toBe(true);
  });

  it.each(['RESOLVING', 'READING', 'WRITING'] as const)('is ignored in %s', (state) => {
    const s = inState(state);
    const before = s.actor.getPersistedSnapshot();
    s.send({ type: 'verification.completed', at: T + 10 });
    expect(s.actor.getPersistedSnapshot()).toEqual(before);
  });
});

describe('CompleteVerification by itself (autoCompleteVerification, the default)', () => {
  /** A session as a raw actor gets it without input: the machine completes verification itself. */
  const auto = () => start({ autoCompleteVerification: true });

  it('is on for an actor created without input', () => {
    const actor = createActor(safetyMachine).start();
    actor.send(requested('pulse_query', 'resolve', T, 'q'));
    actor.send(succeeded('pulse_query', 'resolve', T, 'q'));
    actor.send(requested('pulse_control', 'write', T + 1, 'w'));
    actor.send(succeeded('pulse_control', 'write', T + 2, 'w'));
    actor.send(requested('pulse_metrics', 'read', T + 3, 'r'));
    actor.send(succeeded('pulse_metrics', 'read', T + 4, 'r'));
    expect(actor.getSnapshot().value).toBe('READING');
  });

  it('a verifying read returns the session to READING at once', () => {
    const s = auto();
    toVerified(s);
    expect(s.state).toBe('READING');
  });

  it('a write after a verifying read is admitted without verification.completed', () => {
    const s = auto();
    toVerified(s);
    s.send(requested('pulse_control', 'write', T + 10, 'w2'));
    expect(s.lastDecision.allowed).toBe(true);
  });

  it('clears read-after-write and keeps wroteThisEpisode, as CompleteVerification does', () => {
    const s = auto();
    toVerified(s);
    expect(s.context).toMatchObject({ readAfterWrite: false, consecutiveVerifyBlocks: 0, wroteThisEpisode: true });
  });

  it('does not complete an unverified session', () => {
    const s = start({ autoCompleteVerification: true });
    toVerifying(s);
    run(s, 'pulse_question', 'user_input', T + 10, 'q');
    expect(s.state).toBe('VERIFYING');
  });

  /**
   * A write and a read of one tool checked without ids, then a self-verified
   * success that states no kind: booked worst case, the write stays in flight,
   * and the result may be the read's (its output can say anything).
   */
  function verifiedBesideWrite() {
    const s = auto();
    toReading(s);
    s.send({ type: 'tool.requested', tool: 'deploy', kind: 'write', at: T + 1 });
    s.send({ type: 'tool.requested', tool: 'deploy', kind: 'read', at: T + 2 });
    s.send({ type: 'tool.succeeded', tool: 'deploy', kind: 'write', kindUnstated: true, selfVerified: true, at: T + 3 });
    return s;
  }

  it('an ambiguous success of calls without ids verifies nothing of itself (the result may be the other call’s)', () => {
    const s = verifiedBesideWrite();
    expect({ state: s.state, readAfterWrite: s.context.readAfterWrite }).toEqual({ state: 'VERIFYING', readAfterWrite: false });
  });

  it('nor does the success of the write left in flight: it may be the read’s, and the session still needs a read', () => {
    const s = verifiedBesideWrite();
    s.send({ type: 'tool.succeeded', tool: 'deploy', kind: 'write', kindUnstated: true, selfVerified: true, at: T + 4 });
    expect({ state: s.state, readAfterWrite: s.context.readAfterWrite }).toEqual({ state: 'VERIFYING', readAfterWrite: false });
  });

  it('a self-verified success of a write checked under its id verifies it at once', () => {
    const s = auto();
    toReading(s);
    s.send({ type: 'tool.requested', tool: 'deploy', kind: 'write', callId: 'w', at: T + 1 });
    s.send({ type: 'tool.succeeded', tool: 'deploy', kind: 'write', callId: 'w', selfVerified: true, at: T + 2 });
    expect(s.state).toBe('READING');
  });

  it('emits nothing of its own: the read is the only decision', () => {
    const s = auto();
    toVerifying(s);
    const before = s.decisions.length;
    run(s, 'pulse_metrics', 'read', T + 3, 'read-1');
    expect(s.decisions.length).toBe(before + 1);
  });

  it('is kept by Reset', () => {
    const s = start({ autoCompleteVerification: false });
    s.send({ type: 'session.reset', at: T });
    expect(s.context.autoCompleteVerification).toBe(false);
  });

  it('with autoCompleteVerification false, a verifying read leaves the session in VERIFYING', () => {
    const s = start({ autoCompleteVerification: false });
    toVerified(s);
    expect(s.state).toBe('VERIFYING');
  });
});
