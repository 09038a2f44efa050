/**
 * The safety statechart driven directly as an actor: the five invariants of the specification, each held in every state.
 *
 * Spec: ASSISTANT_SAFETY.md "States", "The invariants", "Blocked calls and
 * recovery", "Resetting"; DESIGN.md §1 and §3.
 */
import { describe, expect, it } from 'vitest';
import { ANSWER_BLOCK_REASONS, ErrCodeFSMBlocked, TOOL_BLOCK_REASONS } from '../../../machines/safety.policy.js';
import type { ToolKind } from '../../../machines/safety.types.js';
import { ALL_STATES, T, failed, inState, requested, run, start, succeeded, toVerified } from '../../support/safety-session.js';

describe('Invariant: no writing without a validated target', () => {
  it('a write attempted in RESOLVING is blocked', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    expect(s.lastDecision).toEqual({
      type: 'gate.decided',
      subject: 'tool',
      allowed: false,
      state: 'RESOLVING',
      tool: 'pulse_control',
      kind: 'write',
      callId: 'w',
      rule: 'no-target',
      reason: TOOL_BLOCK_REASONS['no-target'],
      recoveryId: `${ErrCodeFSMBlocked}:pulse_control`,
      at: T,
    });
  });

  it('a blocked write leaves the session in RESOLVING', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    expect(s.state).toBe('RESOLVING');
  });

  it('a write stays blocked while the resolve that would establish the target has not succeeded', () => {
    const s = start();
    s.send(requested('pulse_query', 'resolve', T, 'q'));
    s.send(requested('pulse_control', 'write', T + 1, 'w'));
    expect(s.lastDecision.allowed).toBe(false);
  });

  it('a write stays blocked after a failed resolve', () => {
    const s = start();
    s.send(requested('pulse_query', 'resolve', T, 'q'));
    s.send(failed('pulse_query', 'resolve', T, 'q'));
    s.send(requested('pulse_control', 'write', T + 1, 'w'));
    expect(s.lastDecision.allowed).toBe(false);
  });

  it('a write stays blocked after user input', () => {
    const s = start();
    run(s, 'pulse_question', 'user_input', T, 'q');
    s.send(requested('pulse_control', 'write', T + 1, 'w'));
    expect(s.lastDecision.allowed).toBe(false);
  });

  it('a write is admitted once a resolve succeeded', () => {
    const s = inState('READING');
    s.send(requested('pulse_control', 'write', T + 1, 'w'));
    expect(s.lastDecision).toMatchObject({ allowed: true, state: 'READING', kind: 'write', rule: null, reason: null });
  });
});

describe('Invariant: no writing again until the last write is verified', () => {
  it('a write attempted in VERIFYING is blocked', () => {
    const s = inState('VERIFYING');
    s.send(requested('pulse_control_guest', 'write', T + 10, 'w2'));
    expect(s.lastDecision).toMatchObject({
      allowed: false,
      state: 'VERIFYING',
      tool: 'pulse_control_guest',
      rule: 'unverified-write',
      reason: TOOL_BLOCK_REASONS['unverified-write'],
    });
  });

  it('a blocked write leaves the session in VERIFYING', () => {
    const s = inState('VERIFYING');
    s.send(requested('pulse_control', 'write', T + 10, 'w2'));
    expect(s.state).toBe('VERIFYING');
  });

  it('a write in VERIFYING stays blocked after a read until verification is completed', () => {
    const s = start();
    toVerified(s);
    s.send(requested('pulse_control', 'write', T + 10, 'w2'));
    expect(s.lastDecision.allowed).toBe(false);
  });
});

describe('Invariant: no final answer about an unverified change', () => {
  it('the final answer is refused in VERIFYING with no read-after-write', () => {
    const s = inState('VERIFYING');
    s.send({ type: 'answer.requested', at: T + 10 });
    expect(s.lastDecision).toEqual({
      type: 'gate.decided',
      subject: 'answer',
      allowed: false,
      state: 'VERIFYING',
      tool: null,
      kind: null,
      callId: null,
      rule: 'unverified-write',
      reason: ANSWER_BLOCK_REASONS['unverified-write'],
      recoveryId: null,
      at: T + 10,
    });
  });

  it('the final answer is allowed in VERIFYING once a read ran after the write', () => {
    const s = start();
    toVerified(s);
    s.send({ type: 'answer.requested', at: T + 10 });
    expect(s.lastDecision).toMatchObject({ subject: 'answer', allowed: true, state: 'VERIFYING' });
  });

  it.each(['RESOLVING', 'READING'] as const)('the final answer is allowed in %s', (state) => {
    const s = inState(state);
    s.send({ type: 'answer.requested', at: T + 10 });
    expect(s.lastDecision).toMatchObject({ subject: 'answer', allowed: true, state, rule: null, reason: null });
  });

  it('a refused final answer is counted in finalAnswerBlocks', () => {
    const s = inState('VERIFYING');
    s.send({ type: 'answer.requested', at: T + 10 });
    s.send({ type: 'answer.requested', at: T + 11 });
    expect(s.context.finalAnswerBlocks).toBe(2);
  });

  it('a refused final answer opens no pending recovery', () => {
    const s = inState('VERIFYING');
    s.send({ type: 'answer.requested', at: T + 10 });
    expect(s.context.pendingRecoveries).toEqual({});
  });

  it('a refused final answer does not change the state', () => {
    const s = inState('VERIFYING');
    s.send({ type: 'answer.requested', at: T + 10 });
    expect(s.state).toBe('VERIFYING');
  });
});

describe('Invariant: repeated attempts do not wear the gate down', () => {
  it('each write blocked in VERIFYING increments the consecutive-block counter', () => {
    const s = inState('VERIFYING');
    for (let i = 0; i < 3; i++) s.send(requested('pulse_control', 'write', T + 10 + i, `w${i}`));
    expect(s.context.consecutiveVerifyBlocks).toBe(3);
  });

  it('the 51st write in VERIFYING is still blocked after 50 blocked writes', () => {
    const s = inState('VERIFYING');
    for (let i = 0; i < 50; i++) s.send(requested('pulse_control', 'write', T + 10 + i, `w${i}`));
    expect(s.context.consecutiveVerifyBlocks).toBe(50);
    s.send(requested('pulse_control', 'write', T + 100, 'w50'));
    expect(s.lastDecision.allowed).toBe(false);
  });

  it('the counter is telemetry only: the 51st refusal is the same as the first', () => {
    const s = inState('VERIFYING');
    for (let i = 0; i < 51; i++) s.send(requested('pulse_control', 'write', T + 10, 'w'));
    const toolDecisions = s.decisions.filter((d) => d.subject === 'tool' && d.state === 'VERIFYING');
    expect(toolDecisions).toHaveLength(51);
    expect(toolDecisions.at(-1)).toEqual(toolDecisions[0]);
  });

  it('the final answer stays refused however many writes were blocked', () => {
    const s = inState('VERIFYING');
    for (let i = 0; i < 50; i++) s.send(requested('pulse_control', 'write', T + 10 + i, `w${i}`));
    s.send({ type: 'answer.requested', at: T + 100 });
    expect(s.lastDecision.allowed).toBe(false);
  });

  it('writes blocked in RESOLVING are not counted', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    expect(s.context.consecutiveVerifyBlocks).toBe(0);
  });

  it('writes blocked in WRITING are not counted', () => {
    const s = inState('WRITING');
    s.send(requested('pulse_control_guest', 'write', T + 10, 'w2'));
    expect(s.context.consecutiveVerifyBlocks).toBe(0);
  });

  it('a new successful write zeroes the counter', () => {
    const s = inState('VERIFYING');
    s.send(requested('pulse_control', 'write', T + 10, 'w2'));
    s.send(succeeded('pulse_control_guest', 'write', T + 11));
    expect(s.context.consecutiveVerifyBlocks).toBe(0);
  });
});

describe('Invariant: reads are never blocked', () => {
  const neverBlocked: ToolKind[] = ['resolve', 'read', 'user_input', 'neutral'];
  const cases = ALL_STATES.flatMap((state) => neverBlocked.map((kind) => [state, kind] as const));

  it.each(cases)('in %s a %s call is admitted', (state, kind) => {
    const s = inState(state);
    s.send(requested('some_tool', kind, T + 10, 'c'));
    expect(s.lastDecision).toMatchObject({ subject: 'tool', allowed: true, state, kind, callId: 'c' });
  });

  it.each(ALL_STATES)('in %s an admitted read does not change the state', (state) => {
    const s = inState(state);
    s.send(requested('pulse_metrics', 'read', T + 10, 'c'));
    expect(s.state).toBe(state);
  });
});
