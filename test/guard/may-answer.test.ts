/** `mayAnswer`: the final-answer decision without side effects (issue: adapters need "may I answer now?"). */
import { describe, expect, it } from 'vitest';
import { createSessionGuard } from '../../src/guard/session-guard.js';
import { mayAnswer } from '../../src/guard/may-answer.js';

function verifyingGuard() {
  let t = 1_000;
  const guard = createSessionGuard({ now: () => (t += 1) });
  guard.check({ id: 'q', name: 'pulse_query' });
  guard.record({ id: 'q', name: 'pulse_query' });
  guard.check({ id: 'w', name: 'pulse_control' });
  guard.record({ id: 'w', name: 'pulse_control' });
  return guard;
}

describe('mayAnswer', () => {
  it('allows in a session with nothing unverified', () => {
    expect(mayAnswer(createSessionGuard())).toEqual({ allowed: true });
  });

  it('refuses after an unverified write, with the rule and reason finalAnswer() would give', () => {
    const guard = verifyingGuard();
    const peek = mayAnswer(guard);
    const real = guard.finalAnswer();
    expect(peek.allowed).toBe(false);
    expect(real.allowed).toBe(false);
    if (peek.allowed || real.allowed) return;
    expect(peek.error.toJSON()).toEqual(real.error.toJSON());
  });

  it('changes nothing: no refusal is counted and no decision reaches onDecision', () => {
    const decisions: unknown[] = [];
    let t = 1_000;
    const guard = createSessionGuard({ now: () => (t += 1), onDecision: (d) => decisions.push(d) });
    guard.check({ id: 'q', name: 'pulse_query' });
    guard.record({ id: 'q', name: 'pulse_query' });
    guard.check({ id: 'w', name: 'pulse_control' });
    guard.record({ id: 'w', name: 'pulse_control' });
    const before = { state: guard.state, context: guard.context, decisions: decisions.length };
    mayAnswer(guard);
    mayAnswer(guard);
    expect({ state: guard.state, context: guard.context, decisions: decisions.length }).toEqual(before);
    expect(guard.context.finalAnswerBlocks).toBe(0);
  });

  it('refuses while a write is in flight', () => {
    const guard = createSessionGuard();
    guard.check({ id: 'q', name: 'pulse_query' });
    guard.record({ id: 'q', name: 'pulse_query' });
    guard.check({ id: 'w', name: 'pulse_control' });
    const peek = mayAnswer(guard);
    expect(peek.allowed === false && peek.error.rule).toBe('write-in-flight');
  });
});

describe('mayAnswer and finalAnswer agree on bad text', () => {
  it('a text that is not a string is a TypeError from both, and changes nothing', () => {
    const guard = createSessionGuard();
    expect(() => mayAnswer(guard, 5 as never)).toThrow(TypeError);
    expect(() => guard.finalAnswer(5 as never)).toThrow(TypeError);
    expect(mayAnswer(guard, 'Nothing to do here.')).toEqual({ allowed: true });
  });
});
