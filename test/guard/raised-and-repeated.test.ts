/**
 * The session guard and issue 28: a recoverable error code a failed result
 * raised (`error.code` or the legacy `error_code`, one of the guard's
 * `recoveryCodes`, the Pulse catalog's `STRICT_RESOLUTION` by default) opens a
 * pending recovery of the tool; the same write (same tool, same arguments,
 * whatever their key order) as one whose failure was recorded is refused
 * (`repeated-write`) until a read touches its target; both survive a
 * persisted snapshot (version 3), and older snapshots still restore.
 *
 * Spec: issue 28 items 1 and 3; DESIGN.md §1 (`STRICT_RESOLUTION`), §3.5, §3.8.
 */
import { describe, expect, it } from 'vitest';
import { FSMBlockedError } from '../../src/errors/index.js';
import { createSessionGuard, type RaisedRecovery, type ToolCall } from '../../src/guard/session-guard.js';
import { errorCodeOf, recoveryCodeOf } from '../../src/guard/outcome.js';
import { parsePersistedSnapshot } from '../../src/guard/snapshot.js';
import { writeKeyOf } from '../../src/guard/write-key.js';
import { builtinCatalogs, createCallClassifier } from '../../src/classify/catalog/index.js';

const T = 1_700_000_000_000;
const STRICT = { ok: false, error: { code: 'STRICT_RESOLUTION', message: 'resolve the guest first' } };

function clocked(options: Parameters<typeof createSessionGuard>[0] = {}) {
  let t = T;
  return createSessionGuard({ now: () => (t += 1000), ...options });
}

describe('errorCodeOf / recoveryCodeOf', () => {
  it('read error.code at the top level and the legacy error_code, from an object or its JSON text', () => {
    expect(errorCodeOf(STRICT)).toBe('STRICT_RESOLUTION');
    expect(errorCodeOf({ error_code: 'STRICT_RESOLUTION' })).toBe('STRICT_RESOLUTION');
    expect(errorCodeOf(`Blocked: ${JSON.stringify(STRICT)}`)).toBe('STRICT_RESOLUTION');
    expect(errorCodeOf({ isError: true, structuredContent: STRICT })).toBe('STRICT_RESOLUTION');
    expect(errorCodeOf([{ type: 'text', text: JSON.stringify(STRICT) }])).toBe('STRICT_RESOLUTION');
  });

  it('find none in a nested error, an empty or non-string code, text after the object, or a hostile object', () => {
    expect(errorCodeOf({ data: STRICT })).toBeNull();
    expect(errorCodeOf({ error: { code: '' } })).toBeNull();
    expect(errorCodeOf({ error: { code: 42 } })).toBeNull();
    expect(errorCodeOf(`${JSON.stringify(STRICT)} and then some`)).toBeNull();
    const hostile = new Proxy(
      {},
      {
        get: () => {
          throw new Error('trap');
        },
      },
    );
    expect(errorCodeOf(hostile)).toBeNull();
  });

  it('name only the codes listed', () => {
    expect(recoveryCodeOf(STRICT, ['STRICT_RESOLUTION'])).toBe('STRICT_RESOLUTION');
    expect(recoveryCodeOf(STRICT, [])).toBeNull();
    expect(recoveryCodeOf({ error: { code: 'RATE_LIMITED' } }, ['STRICT_RESOLUTION'])).toBeNull();
  });
});

describe('writeKeyOf', () => {
  it('is the same for the same tool and arguments in any key order, as an object or as JSON text', () => {
    const key = writeKeyOf('charge_card', { customer: 'cus_42', amount: { cents: 4900, currency: 'usd' } });
    expect(writeKeyOf('charge_card', { amount: { currency: 'usd', cents: 4900 }, customer: 'cus_42' })).toBe(key);
    expect(writeKeyOf('charge_card', '{"amount":{"currency":"usd","cents":4900},"customer":"cus_42"}')).toBe(key);
    expect(key).toMatch(/^charge_card#[0-9a-f]{64}$/);
  });

  it('differs for another tool or other arguments', () => {
    const key = writeKeyOf('charge_card', { amount: 4900 });
    expect(writeKeyOf('charge_card', { amount: 4901 })).not.toBe(key);
    expect(writeKeyOf('refund', { amount: 4900 })).not.toBe(key);
    expect(writeKeyOf('charge_card', { amount: '4900' })).not.toBe(key);
    expect(writeKeyOf('charge_card', [4900])).not.toBe(key);
  });

  it('is none without arguments, or for arguments that cannot be read whole', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    const trap = new Proxy(
      {},
      {
        ownKeys: () => {
          throw new Error('trap');
        },
      },
    );
    expect(writeKeyOf('charge_card', undefined)).toBeUndefined();
    expect(writeKeyOf('charge_card', cycle)).toBeUndefined();
    expect(writeKeyOf('charge_card', trap)).toBeUndefined();
    expect(writeKeyOf('charge_card', { n: 1n })).toBeUndefined();
  });
});

describe('a recoverable code a failed result raised (issue 28 item 1)', () => {
  it("opens a pending recovery of the tool for the Pulse catalog's STRICT_RESOLUTION, reported by record and onRecoveryRaised", () => {
    const raised: RaisedRecovery[] = [];
    const guard = clocked({ onRecoveryRaised: (event) => raised.push(event) });
    guard.record({ name: 'pulse_query' });
    const call: ToolCall = { id: 'c', name: 'pulse_control', args: { action: 'restart', guest: 'web' } };
    expect(guard.check(call).allowed).toBe(true);
    const result = guard.record(call, 'error', { result: STRICT });
    expect(result.raised).toMatchObject({ recoveryId: 'STRICT_RESOLUTION:pulse_control', errorCode: 'STRICT_RESOLUTION', attempts: 1 });
    expect(guard.context.pendingRecoveries['STRICT_RESOLUTION:pulse_control']).toEqual(result.raised);
    expect(raised).toMatchObject([{ type: 'recovery.raised', recovery: result.raised, action: 'restart' }]);
    expect(guard.state).toBe('READING');
  });

  it("is cleared by the tool's next successful call, reported as a recovery", () => {
    const guard = clocked();
    guard.record({ name: 'pulse_query' });
    guard.record({ name: 'pulse_control', kind: 'write' }, 'error', { result: JSON.stringify(STRICT) });
    guard.record({ name: 'pulse_query' });
    const call: ToolCall = { id: 'ok', name: 'pulse_control', args: { action: 'restart', guest: 'web-01' } };
    guard.completeVerification();
    expect(guard.check(call).allowed).toBe(true);
    expect(guard.record(call, 'success').recovered).toMatchObject({ errorCode: 'STRICT_RESOLUTION', tool: 'pulse_control' });
    expect(guard.context.pendingRecoveries).toEqual({});
  });

  it('reads only the codes of the `recoveryCodes` option, and an explicit errorCode wins over the result', () => {
    const none = clocked({ recoveryCodes: [] });
    none.record({ name: 'pulse_control', kind: 'write' }, 'error', { result: STRICT });
    expect(none.context.pendingRecoveries).toEqual({});
    const own = clocked({ recoveryCodes: ['NEEDS_LOOKUP'] });
    own.record({ name: 'pulse_control', kind: 'write' }, 'error', { result: { error: { code: 'NEEDS_LOOKUP' } } });
    expect(Object.keys(own.context.pendingRecoveries)).toEqual(['NEEDS_LOOKUP:pulse_control']);
    const explicit = clocked();
    explicit.record({ name: 'pulse_control', kind: 'write' }, 'error', { result: STRICT, errorCode: null });
    explicit.record({ name: 'patrol_report_finding', kind: 'write' }, 'error', { errorCode: 'STRICT_RESOLUTION' });
    expect(Object.keys(explicit.context.pendingRecoveries)).toEqual(['STRICT_RESOLUTION:patrol_report_finding']);
  });

  it('ignores the code of a success, and refuses malformed options with a TypeError', () => {
    const guard = clocked();
    guard.record({ name: 'pulse_query' }, 'success', { result: STRICT, errorCode: 'STRICT_RESOLUTION' });
    expect(guard.context.pendingRecoveries).toEqual({});
    expect(() => guard.record({ name: 'pulse_control' }, 'error', { errorCode: '' })).toThrow(TypeError);
    expect(() => guard.record({ name: 'pulse_control' }, 'error', { neverRan: 'yes' as never })).toThrow(TypeError);
    expect(() => createSessionGuard({ recoveryCodes: 'STRICT_RESOLUTION' as never })).toThrow(
      'createSessionGuard: options.recoveryCodes must be an array of non-empty strings when given',
    );
  });
});

describe('a failed write repeated (issue 28 item 3)', () => {
  const charge = (id: string, args: unknown = { customer: 'cus_42', amount: 4900 }): ToolCall => ({
    id,
    name: 'charge_card',
    args,
    kind: 'write',
    targets: [`customer=${typeof args === 'object' && args !== null ? String((args as { customer?: unknown }).customer) : 'cus_42'}`],
  });
  const lookup = (id: string, customer = 'cus_42'): ToolCall => ({
    id,
    name: 'get_customer',
    kind: 'read',
    targets: [`customer=${customer}`],
  });

  /** A session whose charge `c1` timed out: possibly applied (so it needs verification) unless `possiblyApplied` is false. */
  function afterFailedCharge(options: Parameters<typeof createSessionGuard>[0] = {}, possiblyApplied = true) {
    const guard = clocked(options);
    guard.check(lookup('r0'));
    guard.record(lookup('r0'));
    expect(guard.check(charge('c1')).allowed).toBe(true);
    guard.record(charge('c1'), 'error', { result: 'ReadTimeout: Read timed out. (read timeout=10)', possiblyApplied });
    return guard;
  }

  it('refuses the same charge again, in another key order, with an FSMBlockedError of rule repeated-write', () => {
    for (const strictFailedWrites of [false, true]) {
      const guard = afterFailedCharge({ strictFailedWrites });
      const decision = guard.check(charge('c2', '{"amount":4900,"customer":"cus_42"}'));
      expect(decision.allowed).toBe(false);
      if (decision.allowed) return;
      expect(decision.error).toBeInstanceOf(FSMBlockedError);
      expect(decision.error).toMatchObject({ rule: 'repeated-write', target: 'customer=cus_42', recoverable: true });
      expect(decision.error.toToolResult().error).toMatchObject({ code: 'FSM_BLOCKED', rule: 'repeated-write' });
      expect(decision.error.clearedBy).toEqual(['resolve', 'read']);
    }
  });

  it('admits another charge, and the same one once a read of the customer succeeded', () => {
    const guard = afterFailedCharge({}, false);
    expect(guard.state).toBe('READING');
    // The same charge padded, case-changed, with a member that says nothing: the same write.
    const reworded = guard.check(charge('c2b', { customer: ' CUS_42', amount: 4900, note: '' }));
    expect(reworded.allowed === false && reworded.error.rule).toBe('repeated-write');
    guard.check(lookup('r7', 'cus_7'));
    guard.record(lookup('r7', 'cus_7'));
    expect(guard.check(charge('c2', { customer: 'cus_7', amount: 100 })).allowed).toBe(true);
    guard.record(charge('c2', { customer: 'cus_7', amount: 100 }));
    guard.check(lookup('r1', 'cus_7'));
    guard.record(lookup('r1', 'cus_7'));
    expect(guard.check(charge('c3')).allowed).toBe(false);
    guard.check(lookup('r2'));
    guard.record(lookup('r2'));
    expect(guard.check(charge('c4')).allowed).toBe(true);
  });

  it('does not remember a call that never ran, nor one checked without its arguments', () => {
    const guard = clocked();
    guard.check(lookup('r0'));
    guard.record(lookup('r0'));
    guard.check(charge('c1'));
    guard.record(charge('c1'), 'error', { neverRan: true });
    const bare: ToolCall = { id: 'b1', name: 'charge_card', kind: 'write' };
    guard.check(bare);
    guard.record(bare, 'error');
    expect(guard.context.failedWrites).toBeUndefined();
    expect(guard.check(charge('c2')).allowed).toBe(true);
    expect(guard.check({ ...bare, id: 'b2' }).allowed).toBe(false); // a write in flight, not a repeat
  });

  it('keeps failed writes, raised recoveries and keys in flight through a persisted snapshot (version 3)', () => {
    const guard = afterFailedCharge({}, false);
    guard.record({ name: 'pulse_control', kind: 'write' }, 'error', { errorCode: 'STRICT_RESOLUTION' });
    guard.check(lookup('r7', 'cus_7'));
    guard.record(lookup('r7', 'cus_7'));
    expect(guard.check(charge('c9', { customer: 'cus_7', amount: 1 })).allowed).toBe(true);
    const snapshot = guard.getPersistedSnapshot();
    expect(snapshot.v).toBe(3);
    expect(snapshot.failedWrites).toEqual([
      [expect.stringMatching(/^charge_card#/), 'charge_card', expect.any(Number), ['customer=cus_42']],
    ]);
    expect(snapshot.recoveries).toEqual([['pulse_control', expect.any(Number), expect.any(Number), 1, 'STRICT_RESOLUTION']]);
    expect(snapshot.inFlight?.[0]?.[7]).toMatch(/^charge_card#/);
    const restored = createSessionGuard({ snapshot: JSON.stringify(snapshot), now: () => T + 10_000 });
    expect(restored.context).toEqual(guard.context);
    expect(restored.getPersistedSnapshot()).toEqual(snapshot);
    restored.record(charge('c9', { customer: 'cus_7', amount: 1 }), 'error');
    expect(restored.check(charge('c10', { customer: 'cus_7', amount: 1 })).allowed).toBe(false);
  });

  it('restores a version-2 snapshot as it was, and refuses one using a version-3 field', () => {
    const v2 = { v: 2, state: 'READING', read: ['get_customer', 0], recoveries: [['pulse_control', 0, 0, 1]], checksCalls: true };
    const { context } = parsePersistedSnapshot(v2);
    expect(context.failedWrites).toBeUndefined();
    expect(context.pendingRecoveries['FSM_BLOCKED:pulse_control']?.errorCode).toBe('FSM_BLOCKED');
    expect(() => parsePersistedSnapshot({ ...v2, failedWrites: [['k', 'charge_card', 0]] })).toThrow(
      'snapshot: failedWrites: is a version-3 field, in a version-2 snapshot',
    );
    expect(() => parsePersistedSnapshot({ ...v2, recoveries: [['pulse_control', 0, 0, 1, 'STRICT_RESOLUTION']] })).toThrow(
      /recoveries\[0\]\.errorCode: is a version-3 field/,
    );
  });

  it('refuses a version-3 snapshot the machine cannot reach: a key on a read, a failed write twice, FSM_BLOCKED written out', () => {
    const base = { v: 3, state: 'READING', read: ['get_customer', 0], checksCalls: true } as const;
    expect(() => parsePersistedSnapshot({ ...base, inFlight: [['id:r', 'get_customer', 'read', 0, null, [], false, 'k']] })).toThrow(
      /only a write has a write key/,
    );
    expect(() =>
      parsePersistedSnapshot({
        ...base,
        failedWrites: [
          ['k', 'charge_card', 0],
          ['k', 'charge_card', 1],
        ],
      }),
    ).toThrow(/names a failed write a second time/);
    expect(() => parsePersistedSnapshot({ ...base, recoveries: [['pulse_control', 0, 0, 1, 'FSM_BLOCKED']] })).toThrow(
      /written by leaving the code out/,
    );
  });
});

describe('a failed write retried reworded (a new user trial)', () => {
  it("is the same write when a script names the same places: the key is the tool and a script's known places", () => {
    const places = ['/repo/build', 'reservation_id=ABC123'];
    const key = writeKeyOf('Bash', { command: 'rm -rf build', description: 'Remove build' }, places);
    expect(writeKeyOf('Bash ', { command: 'rm -fr build/', description: 'Retry the removal' }, [...places].reverse())).toBe(key);
    expect(writeKeyOf('Bash', { command: 'rm -rf dist' }, ['/repo/dist'])).not.toBe(key);
    // Unknown places say nothing about which place: the arguments decide.
    expect(writeKeyOf('Bash', { command: 'rm -rf "$D"' }, ['?/$D'])).toBe(writeKeyOf('Bash', { command: 'rm -rf "$D"' }));
  });

  it('is refused through the guard, reworded as a model rewords a retry, until a read touches its target', () => {
    const classify = createCallClassifier(builtinCatalogs['claude-code']);
    const guard = createSessionGuard({ classify, onWarning: () => {} });
    const cwd = { cwd: '/repo' };
    const ls = { id: 'r1', name: 'Bash', args: { command: 'ls /repo/old', ...cwd } };
    expect(guard.check(ls).allowed).toBe(true);
    guard.record(ls, 'success');
    const rm = { id: 'w1', name: 'Bash', args: { command: 'rm -rf /repo/old', description: 'Remove the old folder' } };
    expect(guard.check(rm).allowed).toBe(true);
    guard.record(rm, 'error');
    for (const [i, args] of [
      { command: 'rm -rf /repo/old', description: 'Retry the removal' },
      { command: 'rm -fr /repo/old/' },
      { command: 'rm -r -f /repo//old', timeout: 1000 },
    ].entries()) {
      const decision = guard.check({ id: `w${i + 2}`, name: 'Bash', args });
      expect(decision.allowed, JSON.stringify(args)).toBe(false);
      expect(decision.allowed === false && decision.error.rule).toBe('repeated-write');
    }
    const again = { id: 'r2', name: 'Bash', args: { command: 'ls /repo/old' } };
    expect(guard.check(again).allowed).toBe(true);
    guard.record(again, 'success');
    expect(guard.check({ id: 'w9', name: 'Bash', args: { command: 'rm -fr /repo/old' } }).allowed).toBe(true);
  });
});
