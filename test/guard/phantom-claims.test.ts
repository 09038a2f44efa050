/**
 * Phantom-execution claims (issue 28 item 2) through the machine and the
 * session guard: a final answer claiming a change no recorded write made is
 * refused, rule `phantom-claim`; the written targets survive a persisted
 * snapshot; the metrics count it.
 */
import { createActor } from 'xstate';
import { describe, expect, it } from 'vitest';
import { safetyMachine } from '../../machines/safety.machine.js';
import { claimsOf, phantomClaimOf, touchesPlace, withWrittenTargets } from '../../machines/safety.claims.js';
import { initialSafetyContext } from '../../machines/safety.actions.js';
import { MAX_ESTABLISHED_TARGETS } from '../../machines/safety.policy.js';
import type { GateDecidedEvent } from '../../machines/safety.types.js';
import { createSessionGuard, type SessionGuard, type SessionGuardOptions, type ToolCall } from '../../src/guard/session-guard.js';
import { createSafetyMetrics } from '../../src/telemetry/metrics.js';

const T = 1_700_000_000_000;
const guardOf = (options: SessionGuardOptions = {}): SessionGuard => createSessionGuard({ now: () => T, ...options });

let n = 0;
/** Check a call given its kind and targets; record its outcome when admitted. */
function run(guard: SessionGuard, name: string, kind: 'read' | 'write', targets: string[], outcome: 'success' | 'error' = 'success') {
  const call: ToolCall = { id: `c${(n += 1)}`, name, kind, targets };
  const decision = guard.check(call);
  expect(decision.allowed, `${name} admitted`).toBe(true);
  guard.record(call, outcome);
}
/** A read of `target`, then a write of it that succeeds, then a read verifying it. */
function write(guard: SessionGuard, target: string, outcome: 'success' | 'error' = 'success') {
  run(guard, 'read_file', 'read', [target]);
  run(guard, 'write_file', 'write', [target], outcome);
  run(guard, 'read_file', 'read', [target]);
}

describe('the session guard refuses a final answer claiming a change no tool made', () => {
  it('no write at all: the claim is refused, naming it and what would support it', () => {
    const guard = guardOf();
    run(guard, 'read_file', 'read', ['/srv/app/a.txt']);
    const answer = guard.finalAnswer('I looked at the file. I restarted the service.');
    expect(answer.allowed).toBe(false);
    if (answer.allowed) return;
    expect(answer.error).toMatchObject({ code: 'FSM_BLOCKED', rule: 'phantom-claim', state: 'READING', recoverable: true });
    expect(answer.error.reason).toBe(
      'POLICY_BLOCKED: the final answer claims a change no tool made: "I restarted the service."; no state-changing call succeeded in this session. Make the change with a call that succeeds, or say that it was not done',
    );
    expect(guard.context.finalAnswerBlocks).toBe(1);
  });

  it('a write succeeded elsewhere: a claim naming a place no write touched is refused, naming the place', () => {
    const guard = guardOf();
    write(guard, '/srv/app/parser.py');
    const answer = guard.finalAnswer('I generated orders.json with both orders.');
    expect(answer.allowed).toBe(false);
    if (answer.allowed) return;
    expect(answer.error.rule).toBe('phantom-claim');
    expect(answer.error.reason).toContain('no state-changing call that succeeded in this session touched "orders.json"');
  });

  it('a successful write touching the place supports the claim', () => {
    const guard = guardOf();
    write(guard, '/srv/app/orders.json');
    expect(guard.finalAnswer('I generated orders.json with both orders.')).toEqual({ allowed: true });
    expect(guard.finalAnswer('Done: generated the orders.')).toEqual({ allowed: true }); // names no place: any write supports it
  });

  it('any earlier write of the session supports a claim about its place, not only the last one', () => {
    const guard = guardOf();
    write(guard, 'reservation_id=ABC123');
    write(guard, 'reservation_id=XYZ789');
    expect(guard.finalAnswer('Reservation ABC123 has been cancelled.')).toEqual({ allowed: true });
    expect(guard.finalAnswer('Reservation QQQ111 has been cancelled.').allowed).toBe(false);
  });

  it('a failed write supports nothing', () => {
    const guard = guardOf();
    run(guard, 'read_file', 'read', ['/repo/out']);
    run(guard, 'mkdir', 'write', ['/repo/out'], 'error');
    expect(guard.finalAnswer('I created /repo/out.').allowed).toBe(false);
  });

  it('an answer without a claim, or a claim hedged, is allowed', () => {
    const guard = guardOf();
    expect(guard.finalAnswer('The service is running; I will restart it if you want.')).toEqual({ allowed: true });
    expect(guard.finalAnswer('I have found your reservation.')).toEqual({ allowed: true });
  });

  it('without the text no claim is checked; with phantomClaims false the text is not read', () => {
    expect(guardOf().finalAnswer()).toEqual({ allowed: true });
    expect(guardOf({ phantomClaims: false }).finalAnswer('I restarted the service.')).toEqual({ allowed: true });
  });

  it('refuses a text that is not a string, and an option that is not a boolean', () => {
    expect(() => guardOf().finalAnswer(42 as unknown as string)).toThrow(TypeError);
    expect(() => guardOf({ phantomClaims: 'no' as unknown as boolean })).toThrow(/options.phantomClaims must be a boolean/);
  });

  it('the unverified-write rule still comes first while a write awaits verification', () => {
    const guard = guardOf();
    run(guard, 'read_file', 'read', ['/a']);
    run(guard, 'write_file', 'write', ['/a']);
    const answer = guard.finalAnswer('I deleted /b.');
    expect(answer.allowed === false && answer.error.rule).toBe('unverified-write');
    run(guard, 'read_file', 'read', ['/a']);
    const after = guard.finalAnswer('I deleted /b.');
    expect(after.allowed === false && after.error.rule).toBe('phantom-claim');
  });

  it('the written targets survive a persisted snapshot, and Reset clears them', () => {
    const guard = guardOf();
    write(guard, '/srv/app/orders.json');
    const restored = guardOf({ snapshot: JSON.stringify(guard.getPersistedSnapshot()) });
    expect(restored.context.writtenTargets).toEqual(['/srv/app/orders.json']);
    expect(restored.finalAnswer('I generated orders.json.')).toEqual({ allowed: true });
    restored.reset();
    expect(restored.context.writtenTargets).toBeUndefined();
    expect(restored.finalAnswer('I generated orders.json.').allowed).toBe(false);
  });

  it('ResetKeepProgress keeps them: the change was still made', () => {
    const guard = guardOf();
    write(guard, '/srv/app/orders.json');
    guard.resetKeepProgress();
    expect(guard.finalAnswer('I generated orders.json.')).toEqual({ allowed: true });
  });

  it('counts each refusal in pulse_ai_phantom_detected_total with the labels given, and in fsm_final_block_total', () => {
    const metrics = createSafetyMetrics({ provider: 'openai', model: 'gpt-4o' });
    const guard = guardOf({ onDecision: metrics.onDecision });
    guard.finalAnswer('I restarted the service.');
    guard.finalAnswer('Nothing to do.');
    expect(metrics.value('pulse_ai_phantom_detected_total', { provider: 'openai', model: 'gpt-4o' })).toBe(1);
    expect(metrics.value('fsm_final_block_total', { state: 'RESOLVING' })).toBe(1);
  });
});

describe('the machine decides on the claims the event carries', () => {
  const decisions = (claims: unknown) => {
    const actor = createActor(safetyMachine).start();
    const seen: GateDecidedEvent[] = [];
    actor.on('gate.decided', (e) => seen.push(e));
    actor.send({ type: 'answer.requested', at: 1, claims } as never);
    return seen;
  };

  it('refuses with rule phantom-claim, no recovery id, and the claim in the reason', () => {
    const [decision] = decisions([{ text: 'I deleted /tmp/x.', places: ['/tmp/x'] }]);
    expect(decision).toMatchObject({ subject: 'answer', allowed: false, rule: 'phantom-claim', recoveryId: null, state: 'RESOLVING' });
    expect(decision!.reason).toContain('"I deleted /tmp/x."');
  });

  it('reads the claims totally: not an array is none, a malformed entry fails closed', () => {
    expect(decisions('I deleted x')[0]!.allowed).toBe(true);
    expect(decisions([])[0]!.allowed).toBe(true);
    expect(decisions([1, null])[0]!.allowed).toBe(true);
    expect(decisions([{ text: 5 }])[0]!.reason).toContain('(a claim that could not be read)');
    const trap = new Proxy([], {
      get() {
        throw new Error('trap');
      },
    });
    expect(decisions(trap)[0]!.allowed).toBe(false);
  });

  it('claimsOf cuts a long text and keeps only string places', () => {
    const [claim] = claimsOf({ claims: [{ text: 'x'.repeat(500), places: ['a', 7, '', 'b'] }] });
    expect(claim!.text).toHaveLength(200);
    expect(claim!.text.endsWith('…')).toBe(true);
    expect(claim!.places).toEqual(['a', 'b']);
  });
});

describe('touchesPlace and the written targets', () => {
  it.each([
    ['/srv/app/orders.json', 'orders.json', true],
    ['/srv/app/orders.json', '/srv/app/orders.json', true],
    ['reservation_id=ABC123', 'ABC123', true],
    ['service:nginx', 'nginx', true],
    ['/repo/build/x.js', '/repo/build/', true],
    ['/repo/build/x.js', 'build', true],
    ['/srv/app/parser.py', 'orders.json', false],
    ['reservation_id=ABC1234', 'ABC123', false],
    ['/srv/app/xorders.json', 'orders.json', false],
    ['/a', '/', false],
  ])('%s touches %s: %s', (target, place, expected) => {
    expect(touchesPlace(target, place)).toBe(expected);
  });

  it('keeps each written target once, most recent last, at most MAX_ESTABLISHED_TARGETS', () => {
    expect(withWrittenTargets(undefined, [])).toBeUndefined();
    expect(withWrittenTargets(['/a', '/b'], ['/a'])).toEqual(['/b', '/a']);
    const many = Array.from({ length: MAX_ESTABLISHED_TARGETS }, (_, i) => `/f${i}`);
    const next = withWrittenTargets(many, ['/new'])!;
    expect(next).toHaveLength(MAX_ESTABLISHED_TARGETS);
    expect(next[0]).toBe('/f1');
    expect(next.at(-1)).toBe('/new');
  });

  it('a claim naming no place is supported by any recorded write; with none it is not', () => {
    const event = { claims: [{ text: 'Done: all fixed.', places: [] }] };
    expect(phantomClaimOf(initialSafetyContext(), event)).toMatchObject({ place: null });
    expect(phantomClaimOf({ ...initialSafetyContext(), writeSeq: 1 }, event)).toBeNull();
  });
});
