/**
 * Persistence: the compact, versioned, validated snapshot (src/guard/snapshot.ts)
 * and `createSessionGuard({ snapshot })`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MAX_ESTABLISHED_TARGETS,
  MAX_IN_FLIGHT,
  MAX_NAME_LENGTH,
  MAX_PENDING_RECOVERIES,
  MAX_TARGETS_PER_EVENT,
  MAX_TARGET_LENGTH,
  MAX_TIME_MS,
} from '../../machines/safety.policy.js';
import type { ToolKind } from '../../machines/safety.types.js';
import { createSessionGuard, type SessionGuard, type SessionGuardOptions } from '../../src/guard/session-guard.js';
import { SNAPSHOT_VERSION, parsePersistedSnapshot, persistedSnapshotSchema, type PersistedSnapshot } from '../../src/guard/snapshot.js';
import { SnapshotError } from '../../src/errors/snapshot-error.js';

const T0 = 1_700_000_000_000;
const READ = 'pulse_metrics';
const WRITE = 'pulse_control';

function clockFrom(start = T0): () => number {
  let t = start;
  return () => (t += 1000);
}

/** The error `createSessionGuard({ snapshot })` throws, or null. */
function restoreError(snapshot: unknown): SnapshotError | null {
  try {
    createSessionGuard({ snapshot });
    return null;
  } catch (error) {
    if (error instanceof SnapshotError) return error;
    throw error;
  }
}

/** A valid VERIFYING snapshot to derive broken ones from. */
function verifyingSnapshot(): PersistedSnapshot {
  const guard = createSessionGuard({ now: clockFrom() });
  guard.check({ id: 'r', name: READ });
  guard.record({ id: 'r', name: READ });
  guard.check({ id: 'w', name: WRITE });
  guard.record({ id: 'w', name: WRITE });
  return guard.getPersistedSnapshot();
}

describe('the persisted form', () => {
  it('is the version and the state alone for a fresh session', () => {
    expect(createSessionGuard().getPersistedSnapshot()).toEqual({ v: SNAPSHOT_VERSION, state: 'RESOLVING' });
  });

  it('is plain JSON: it survives JSON.stringify and JSON.parse unchanged', () => {
    const snapshot = verifyingSnapshot();
    expect(JSON.parse(JSON.stringify(snapshot))).toEqual(snapshot);
  });

  it('keeps the last write as [tool, at, writeSeq] and the last read as [tool, at], times from the base t', () => {
    const snapshot = verifyingSnapshot();
    expect(snapshot.t).toBe(T0 + 2000);
    expect(snapshot.write).toEqual([WRITE, 2000, 1]);
    expect(snapshot.read).toEqual([READ, 0]);
  });

  it('keeps a call in flight as [key, tool, kind, admittedAt, verifiesWrite]', () => {
    const guard = createSessionGuard({ snapshot: verifyingSnapshot(), now: () => T0 + 9000 });
    guard.check({ id: 'r2', name: READ });
    expect(guard.getPersistedSnapshot().inFlight).toEqual([['id:r2', READ, 'read', 7000, 1]]);
  });

  it('keeps a pending recovery as [tool, createdAt, lastBlockedAt, attempts]', () => {
    let t = T0;
    const guard = createSessionGuard({ now: () => (t += 5) });
    guard.check({ name: WRITE });
    guard.check({ name: WRITE });
    expect(guard.getPersistedSnapshot()).toMatchObject({ t: T0 + 5, recoveries: [[WRITE, 0, 5, 2]] });
  });

  it('keeps a single time as it is, without a base', () => {
    const guard = createSessionGuard({ now: () => T0 });
    guard.record({ name: READ });
    expect(guard.getPersistedSnapshot()).toEqual({ v: SNAPSHOT_VERSION, state: 'READING', read: [READ, T0] });
  });

  it('keeps times that are not safe integers as they are, without a base', () => {
    let t = 0.5;
    const guard = createSessionGuard({ now: () => (t += 1000.25) });
    guard.record({ name: READ });
    guard.record({ name: WRITE });
    const snapshot = guard.getPersistedSnapshot();
    expect(snapshot.t).toBeUndefined();
    expect(createSessionGuard({ snapshot }).context.lastWriteAt).toBe(2001);
  });
  it('keeps times further apart than the range of JavaScript dates as they are, without a base', () => {
    const guard = createSessionGuard({ snapshot: { v: 1, state: 'VERIFYING', read: [READ, -4.5e15], write: [WRITE, 4.5e15, 1] } });
    expect(guard.getPersistedSnapshot()).toEqual({
      v: SNAPSHOT_VERSION,
      state: 'VERIFYING',
      read: [READ, -4.5e15],
      write: [WRITE, 4.5e15, 1],
    });
  });
});

describe('restoring a session', () => {
  it('refuses a write in a restored VERIFYING session', () => {
    const guard = createSessionGuard({ snapshot: verifyingSnapshot() });
    expect(guard.state).toBe('VERIFYING');
    expect(guard.check({ id: 'w2', name: WRITE }).allowed).toBe(false);
  });

  it('accepts the snapshot as a JSON string', () => {
    const guard = createSessionGuard({ snapshot: JSON.stringify(verifyingSnapshot()) });
    expect(guard.state).toBe('VERIFYING');
  });

  it('shares nothing with the snapshot object it was given', () => {
    const snapshot = createSessionGuard({ snapshot: verifyingSnapshot() }).getPersistedSnapshot();
    const guard = createSessionGuard({ snapshot });
    snapshot.write![2] = 99;
    expect(guard.context.writeSeq).toBe(1);
  });

  it('keeps the snapshot’s strict failed writes when the option is not given', () => {
    const strict = createSessionGuard({ strictFailedWrites: true }).getPersistedSnapshot();
    expect(createSessionGuard({ snapshot: strict }).context.strictFailedWrites).toBe(true);
  });

  it('makes a restored session strict when the option says so, whatever the snapshot says', () => {
    const lax = createSessionGuard().getPersistedSnapshot();
    expect(createSessionGuard({ snapshot: lax, strictFailedWrites: true }).context.strictFailedWrites).toBe(true);
  });

  it('does not let an explicit false loosen a strict snapshot', () => {
    const strict = createSessionGuard({ strictFailedWrites: true }).getPersistedSnapshot();
    expect(createSessionGuard({ snapshot: strict, strictFailedWrites: false }).context.strictFailedWrites).toBe(true);
  });

  it('accepts fields written out at their initial value', () => {
    const guard = createSessionGuard({
      snapshot: { v: 1, state: 'RESOLVING', readAfterWrite: false, verifyBlocks: 0, anonSeq: 0, checksCalls: false },
    });
    expect(guard.state).toBe('RESOLVING');
  });
});

describe('a snapshot that does not validate', () => {
  it('is refused with a SnapshotError, which is a TypeError', () => {
    const error = restoreError({ v: 1, state: 'NOWHERE' });
    expect(error).toBeInstanceOf(SnapshotError);
    expect(error).toBeInstanceOf(TypeError);
  });

  it('names the state when it is unknown', () => {
    expect(restoreError({ v: 1, state: 'NOWHERE' })?.message).toMatch(/^snapshot: state: /);
  });

  it('names an unknown version', () => {
    expect(restoreError({ ...verifyingSnapshot(), v: 4 })?.message).toBe(
      'snapshot: v: unknown schema version 4 (this library reads versions 1, 2 and 3)',
    );
  });

  it('names a missing version, as in XState’s own persisted snapshot', () => {
    const xstateShape = { status: 'active', value: 'READING', context: {}, children: {}, historyValue: {} };
    expect(restoreError(xstateShape)?.path).toEqual(['v']);
  });

  it('refuses a value that is not an object', () => {
    expect(restoreError(42)?.message).toMatch(/^snapshot: \(root\): expected an object/);
  });

  it('refuses a string that is not JSON', () => {
    expect(restoreError('{"v":1,')?.message).toMatch(/^snapshot: \(root\): not valid JSON/);
  });

  it('names a field of the wrong type inside a tuple', () => {
    const snapshot = { ...verifyingSnapshot(), write: [WRITE, 'yesterday', 1] };
    expect(restoreError(snapshot)?.path).toEqual(['write', 'at']);
  });

  it('names a negative counter', () => {
    expect(restoreError({ ...verifyingSnapshot(), verifyBlocks: -1 })?.path).toEqual(['verifyBlocks']);
  });

  it('names a fractional write count', () => {
    expect(restoreError({ ...verifyingSnapshot(), write: [WRITE, T0, 1.5] })?.path).toEqual(['write', 'seq']);
  });

  it('names an unknown field rather than dropping it', () => {
    expect(restoreError({ ...verifyingSnapshot(), readAfterwrite: true })?.message).toMatch(/readAfterwrite/);
  });

  it('names an in-flight kind outside the vocabulary', () => {
    const snapshot = { ...verifyingSnapshot(), checksCalls: true, inFlight: [['id:x', READ, 'peek', T0, null]] };
    expect(restoreError(snapshot)?.message).toMatch(/^snapshot: inFlight\[0\]\.kind: /);
  });

  it('refuses a __proto__ key without polluting any prototype', () => {
    const error = restoreError(JSON.parse('{"v":1,"state":"READING","read":["x",1],"__proto__":{"polluted":true}}'));
    expect(error?.message).toMatch(/__proto__/);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it('names a base time outside the range of JavaScript dates', () => {
    const error = restoreError({ v: 1, state: 'READING', t: 1e308, read: [READ, 1e308] });
    expect(error?.path).toEqual(['t']);
    expect(error?.message).toBe(`snapshot: t: must be within ±${MAX_TIME_MS} ms, the range of JavaScript dates`);
  });

  it('names an offset outside the range of JavaScript dates', () => {
    expect(restoreError({ v: 1, state: 'READING', read: [READ, MAX_TIME_MS + 1] })?.path).toEqual(['read', 'at']);
  });

  it('names an offset whose sum with the base leaves the range of JavaScript dates', () => {
    const error = restoreError({ v: 1, state: 'READING', t: MAX_TIME_MS, read: [READ, 1] });
    expect(error?.path).toEqual(['read', 'at']);
    expect(error?.message).toBe(
      `snapshot: read.at: added to t it is ${MAX_TIME_MS + 1}, outside ±${MAX_TIME_MS} ms, the range of JavaScript dates`,
    );
  });

  it('accepts times at the ends of the range of JavaScript dates and restores them from its own persisted form', () => {
    const guard = createSessionGuard({
      snapshot: { v: 1, state: 'VERIFYING', read: [READ, -MAX_TIME_MS], write: [WRITE, MAX_TIME_MS, 1] },
    });
    const restored = createSessionGuard({ snapshot: JSON.parse(JSON.stringify(guard.getPersistedSnapshot())) });
    expect(restored.context.lastReadAt).toBe(-MAX_TIME_MS);
    expect(restored.context.lastWriteAt).toBe(MAX_TIME_MS);
  });

  it('names a field whose getter throws, with a SnapshotError rather than the raw error', () => {
    const snapshot = {
      v: 1,
      get state(): string {
        throw new Error('boom');
      },
    };
    const error = restoreError(snapshot);
    expect(error?.path).toEqual(['state']);
    expect(error?.message).toBe('snapshot: state: cannot be read (boom)');
  });

  it('refuses more calls in flight than the machine ever tracks', () => {
    const inFlight = Array.from({ length: MAX_IN_FLIGHT + 1 }, (_, i) => [`id:${i}`, READ, 'read', T0, null]);
    expect(restoreError({ v: 1, state: 'READING', read: [READ, T0], checksCalls: true, inFlight })?.path).toEqual(['inFlight']);
  });
});

describe('an impossible combination', () => {
  const base = (): PersistedSnapshot => verifyingSnapshot();

  it('refuses readAfterWrite outside VERIFYING', () => {
    expect(restoreError({ ...base(), state: 'READING', readAfterWrite: true })?.path).toEqual(['readAfterWrite']);
  });

  it('refuses readAfterWrite without a recorded read', () => {
    const { read: _read, ...noRead } = base();
    expect(restoreError({ ...noRead, readAfterWrite: true })?.path).toEqual(['readAfterWrite']);
  });

  it('refuses counted blocked writes outside VERIFYING', () => {
    expect(restoreError({ ...base(), state: 'READING', verifyBlocks: 2 })?.path).toEqual(['verifyBlocks']);
  });

  it('refuses RESOLVING after a successful write', () => {
    const { read: _read, ...noRead } = base();
    expect(restoreError({ ...noRead, state: 'RESOLVING' })?.path).toEqual(['write']);
  });

  it('refuses RESOLVING after a successful read', () => {
    expect(restoreError({ v: 1, state: 'RESOLVING', read: [READ, T0] })?.path).toEqual(['read']);
  });

  it('refuses a refused final answer counted in RESOLVING', () => {
    expect(restoreError({ v: 1, state: 'RESOLVING', answerBlocks: 1 })?.path).toEqual(['answerBlocks']);
  });

  it('refuses READING without a validated target', () => {
    expect(restoreError({ v: 1, state: 'READING' })?.message).toBe(
      'snapshot: state: READING needs a validated target: a recorded read or write',
    );
  });

  it('refuses VERIFYING without a recorded write', () => {
    expect(restoreError({ v: 1, state: 'VERIFYING', read: [READ, T0] })?.path).toEqual(['write']);
  });

  it('refuses a write in flight in READING', () => {
    const snapshot = { v: 1, state: 'READING', read: [READ, T0], checksCalls: true, inFlight: [['id:w', WRITE, 'write', T0, null]] };
    expect(restoreError(snapshot)?.path).toEqual(['inFlight', 0, 'kind']);
  });

  it('refuses a write in flight in RESOLVING', () => {
    const snapshot = { v: 1, state: 'RESOLVING', checksCalls: true, inFlight: [['id:w', WRITE, 'write', T0, null]] };
    expect(restoreError(snapshot)?.path).toEqual(['inFlight', 0, 'kind']);
  });

  it('refuses WRITING without its write in flight', () => {
    expect(restoreError({ v: 1, state: 'WRITING', read: [READ, T0] })?.path).toEqual(['inFlight']);
  });

  it('refuses two writes in flight', () => {
    const inFlight = [
      ['id:w1', WRITE, 'write', T0, null],
      ['id:w2', WRITE, 'write', T0, null],
    ];
    expect(restoreError({ ...base(), checksCalls: true, inFlight })?.path).toEqual(['inFlight', 1, 'kind']);
  });

  it('refuses a read that verifies a write that never succeeded', () => {
    const inFlight = [['id:r', READ, 'read', T0, 2]];
    expect(restoreError({ ...base(), inFlight })?.path).toEqual(['inFlight', 0, 'verifiesWrite']);
  });

  it('refuses a user-input call that verifies a write', () => {
    const inFlight = [['id:q', 'pulse_question', 'user_input', T0, 1]];
    expect(restoreError({ ...base(), inFlight })?.path).toEqual(['inFlight', 0, 'verifiesWrite']);
  });

  it('refuses an anonymous key that was never issued', () => {
    const inFlight = [['anon:3', READ, 'read', T0, null]];
    expect(restoreError({ ...base(), anonSeq: 3, inFlight })?.path).toEqual(['inFlight', 0, 'key']);
  });

  it('refuses one id in flight twice, unless a write came first', () => {
    const inFlight = [
      ['id:r', READ, 'read', T0, null],
      ['id:r', WRITE, 'write', T0, null],
    ];
    expect(restoreError({ ...base(), inFlight })?.path).toEqual(['inFlight', 1, 'key']);
  });

  it('refuses calls in flight in a session that never checked a call', () => {
    const snapshot = { ...base(), checksCalls: false, inFlight: [['id:r', READ, 'read', T0, null]] };
    expect(restoreError(snapshot)?.path).toEqual(['checksCalls']);
  });

  it('refuses two pending recoveries of one tool', () => {
    const recoveries = [
      [WRITE, T0, T0, 1],
      [WRITE, T0, T0, 1],
    ];
    expect(restoreError({ ...base(), recoveries })?.path).toEqual(['recoveries', 1, 'tool']);
  });

  it('reports every issue through the zod schema', () => {
    const result = persistedSnapshotSchema.safeParse({ v: 1, state: 'READING', readAfterWrite: true, verifyBlocks: 1 });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.path[0])).toEqual(expect.arrayContaining(['readAfterWrite', 'verifyBlocks', 'state']));
  });
});

// ---------------------------------------------------------------------------
// Properties: any run, persisted and restored at any point.

type Op =
  | {
      op: 'check' | 'record';
      id?: string;
      name: string;
      kind?: ToolKind;
      outcome: 'success' | 'error';
      targets?: string[];
      destructive?: boolean;
      result?: string;
    }
  | { op: 'answer' | 'complete' | 'reset' | 'resetKeep' }
  | { op: 'wait'; ms: number };

const TOOLS = [READ, 'pulse_query', WRITE, 'pulse_question', 'made_up_tool', 'pulse_alerts'];
const KINDS: ToolKind[] = ['resolve', 'read', 'write', 'user_input', 'neutral'];

/** A tool call: few ids (so ids repeat and go unknown), the kind mostly left to the classifier. */
const callArb: fc.Arbitrary<Op> = fc
  .record({
    op: fc.constantFrom('check' as const, 'check' as const, 'record' as const),
    id: fc.constantFrom('a', 'b', 'c', '', undefined),
    name: fc.constantFrom(...TOOLS),
    kind: fc.option(fc.constantFrom(...KINDS), { freq: 5, nil: undefined }),
    outcome: fc.constantFrom('success' as const, 'success' as const, 'error' as const),
  })
  .map(({ id, kind, ...call }) => ({ ...call, ...(id === undefined ? {} : { id }), ...(kind === undefined ? {} : { kind }) }));

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 16, arbitrary: callArb },
  { weight: 1, arbitrary: fc.constantFrom({ op: 'answer' as const }, { op: 'complete' as const }) },
  { weight: 1, arbitrary: fc.constantFrom({ op: 'reset' as const }, { op: 'resetKeep' as const }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 900_000 }) }) },
);

const optionsArb = fc.record({ strictFailedWrites: fc.boolean(), autoCompleteVerification: fc.boolean() });

/** How the clock moves per reading: steadily, by fractions, or backwards (a wall clock may step back). */
const clockStepArb = fc.constantFrom(7, 7, 1000.25, -3);

/** Applies one op; returns what the guard decided or reported, as plain data. */
function apply(guard: SessionGuard, op: Op, clock: { t: number }): unknown {
  switch (op.op) {
    case 'check': {
      let d: ReturnType<SessionGuard['check']>;
      try {
        d = guard.check(op);
      } catch (error) {
        // A check under an id still in flight is refused before the session changes (documented TypeError).
        if (error instanceof TypeError && error.message.startsWith('check: call id')) return { refused: 'id in flight' };
        throw error;
      }
      return d.allowed ? d : { allowed: false, kind: d.kind, error: d.error.toJSON(), rule: d.error.rule };
    }
    case 'record':
      return guard.record(op, op.outcome, op.result === undefined ? undefined : { result: op.result });
    case 'answer': {
      const d = guard.finalAnswer();
      return d.allowed ? d : { allowed: false, error: d.error.toJSON() };
    }
    case 'complete':
      return guard.completeVerification();
    case 'reset':
      return guard.reset();
    case 'resetKeep':
      return guard.resetKeepProgress();
    case 'wait':
      clock.t += op.ms;
      return undefined;
  }
}

describe('round trip (property)', () => {
  it('every snapshot a run reaches validates, and restores to the same state and context', () => {
    fc.assert(
      fc.property(optionsArb, clockStepArb, fc.array(opArb, { maxLength: 80, size: 'max' }), (options, step, ops) => {
        const clock = { t: T0 };
        const guard = createSessionGuard({ ...options, now: () => (clock.t += step) });
        for (const op of ops) {
          apply(guard, op, clock);
          const persisted = JSON.parse(JSON.stringify(guard.getPersistedSnapshot()));
          const restored = parsePersistedSnapshot(persisted);
          expect(restored.state).toBe(guard.state);
          expect(restored.context).toEqual(guard.actor.getSnapshot().context);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('every snapshot a guard accepts persists again as one that restores to the same persisted form', () => {
    const timeArb = fc.oneof(
      fc.integer({ min: -1e16, max: 1e16 }),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.constantFrom(0, MAX_TIME_MS, -MAX_TIME_MS, MAX_TIME_MS + 1, 1e308, -1e308, T0),
    );
    const snapshotArb = fc.record(
      {
        v: fc.constant(1),
        state: fc.constantFrom('READING', 'VERIFYING'),
        t: timeArb,
        read: fc.tuple(fc.constant(READ), timeArb),
        write: fc.tuple(fc.constant(WRITE), timeArb, fc.integer({ min: 1, max: 3 })),
        recoveries: fc.tuple(fc.tuple(fc.constant(WRITE), timeArb, timeArb, fc.integer({ min: 1, max: 3 }))),
        inFlight: fc.tuple(fc.tuple(fc.constant('id:r'), fc.constant(READ), fc.constant('read'), timeArb, fc.constant(null))),
        checksCalls: fc.constant(true),
      },
      { requiredKeys: ['v', 'state'] },
    );
    fc.assert(
      fc.property(snapshotArb, (snapshot) => {
        let guard: SessionGuard;
        try {
          guard = createSessionGuard({ snapshot });
        } catch (error) {
          expect(error).toBeInstanceOf(SnapshotError);
          return;
        }
        const persisted = JSON.stringify(guard.getPersistedSnapshot());
        const restored = createSessionGuard({ snapshot: JSON.parse(persisted) });
        expect(restored.state).toBe(guard.state);
        expect(JSON.stringify(restored.getPersistedSnapshot())).toBe(persisted);
      }),
      { numRuns: 500 },
    );
  });

  it('a run persisted and restored at any points decides the same as an uninterrupted run', () => {
    fc.assert(
      fc.property(
        optionsArb,
        clockStepArb,
        fc.array(fc.tuple(opArb, fc.boolean()), { maxLength: 80, size: 'max' }),
        (options: SessionGuardOptions, step, steps) => {
          const clock = { t: T0 };
          const now = () => (clock.t += step);
          const straight = createSessionGuard({ ...options, now });
          const clockB = { t: T0 };
          const nowB = () => (clockB.t += step);
          let resumed = createSessionGuard({ ...options, now: nowB });
          for (const [op, persistHere] of steps) {
            if (persistHere) {
              const json = JSON.stringify(resumed.getPersistedSnapshot());
              resumed = createSessionGuard({ ...options, now: nowB, snapshot: JSON.parse(json) });
            }
            expect(apply(resumed, op, clockB)).toEqual(apply(straight, op, clock));
          }
          expect(resumed.state).toBe(straight.state);
          expect(resumed.actor.getSnapshot().context).toEqual(straight.actor.getSnapshot().context);
        },
      ),
      { numRuns: 200 },
    );
  });
});

// ---------------------------------------------------------------------------
// Version 2: targets, destructive writes, confirmations, `wrote: false` (DESIGN.md §1, §5).

const FILE = '/srv/app/app.conf';
const DIR = '/srv/app';

/** READING with DIR established, then a write of FILE recorded (VERIFYING). */
function targetedGuard(options: SessionGuardOptions = {}): SessionGuard {
  const guard = createSessionGuard({ now: clockFrom(), ...options });
  guard.check({ id: 'r', name: READ, kind: 'read', targets: [DIR] });
  guard.record({ id: 'r', name: READ, kind: 'read' });
  guard.check({ id: 'w', name: WRITE, kind: 'write', targets: [FILE], destructive: true });
  guard.record({ id: 'w', name: WRITE, kind: 'write' });
  return guard;
}

describe('version 2: the persisted targets', () => {
  it('keeps the established targets, the last write’s targets and its destructive flag', () => {
    expect(targetedGuard().getPersistedSnapshot()).toMatchObject({
      v: SNAPSHOT_VERSION,
      targets: [DIR],
      writeTargets: [FILE],
      destructive: true,
    });
  });

  it('keeps a call in flight’s targets, and its destructive flag, after verifiesWrite', () => {
    // The read is recorded at the base time t; the write is checked one clock step (1000 ms) later.
    const guard = createSessionGuard({ now: clockFrom() });
    guard.check({ id: 'r', name: READ, kind: 'read', targets: [DIR] });
    guard.record({ id: 'r', name: READ, kind: 'read' });
    guard.check({ id: 'w', name: WRITE, kind: 'write', targets: [FILE], destructive: true });
    expect(guard.getPersistedSnapshot().inFlight).toEqual([['id:w', WRITE, 'write', 1000, null, [FILE], true]]);
  });

  it('keeps a destructive write without targets with an empty target list before the flag', () => {
    const guard = createSessionGuard({ now: clockFrom() });
    guard.record({ name: READ });
    guard.check({ id: 'w', name: WRITE, kind: 'write', destructive: true });
    expect(guard.getPersistedSnapshot().inFlight).toEqual([['id:w', WRITE, 'write', 1000, null, [], true]]);
  });

  it('keeps confirmDestructive and a confirmation', () => {
    const guard = createSessionGuard({ now: clockFrom(), confirmDestructive: true });
    guard.record({ name: 'pulse_question' });
    expect(guard.getPersistedSnapshot()).toMatchObject({ confirm: true, confirmed: true });
  });

  it('writes wrote: false after ResetKeepProgress, which keeps the last write’s record', () => {
    const guard = targetedGuard();
    guard.resetKeepProgress();
    const snapshot = guard.getPersistedSnapshot();
    expect(snapshot).toMatchObject({ wrote: false, write: [WRITE, expect.any(Number), 1] });
    expect(createSessionGuard({ snapshot }).context.wroteThisEpisode).toBe(false);
  });

  it('restores every version-2 field', () => {
    const guard = targetedGuard({ confirmDestructive: true });
    const restored = createSessionGuard({ snapshot: JSON.parse(JSON.stringify(guard.getPersistedSnapshot())) });
    expect(restored.context).toEqual(guard.actor.getSnapshot().context);
  });

  it('a restored session goes on deciding with its targets: a read of the directory verifies the write', () => {
    const restored = createSessionGuard({ snapshot: targetedGuard().getPersistedSnapshot() });
    restored.record({ name: READ, kind: 'read', targets: [FILE] });
    expect(restored.state).toBe('VERIFYING'); // a record without a check verifies nothing in a session that checks
    restored.check({ id: 'r2', name: READ, kind: 'read', targets: [DIR] });
    restored.record({ id: 'r2', name: READ, kind: 'read' });
    expect(restored.state).toBe('READING');
  });

  it('a version-2 snapshot without targets is as small as before', () => {
    const snapshot = verifyingSnapshot();
    expect(Object.keys(snapshot).sort()).toEqual(['checksCalls', 'read', 'state', 't', 'v', 'write']);
  });
});

describe('version 1 still restores (migration)', () => {
  /** A snapshot exactly as version 1 of this library wrote it: a VERIFYING session with a read in flight. */
  const VERSION_1 =
    '{"v":1,"state":"VERIFYING","t":1700000001000,"write":["cancel_reservation",1000,1],"read":["get_reservation_details",0],' +
    '"recoveries":[["cancel_reservation",2000,2000,1]],"inFlight":[["id:call_7","get_reservation_details","read",3000,1]],"checksCalls":true}';

  it('restores the session it stands for', () => {
    const guard = createSessionGuard({ snapshot: VERSION_1 });
    expect(guard.state).toBe('VERIFYING');
    expect(guard.context).toMatchObject({
      wroteThisEpisode: true,
      lastWriteTool: 'cancel_reservation',
      lastWriteAt: 1700000002000,
      establishedTargets: [],
      writeTargets: [],
      writeDestructive: false,
      confirmedSinceWrite: false,
      confirmDestructive: false,
    });
  });

  it('goes on deciding as version 1 did: the read in flight verifies the write', () => {
    const guard = createSessionGuard({ snapshot: VERSION_1, now: () => 1700000010000 });
    guard.record({ id: 'call_7', name: 'get_reservation_details' });
    expect(guard.state).toBe('READING');
  });

  it('persists again as version 2, the same fields otherwise', () => {
    const persisted = createSessionGuard({ snapshot: VERSION_1 }).getPersistedSnapshot();
    expect(persisted).toEqual({ ...JSON.parse(VERSION_1), v: SNAPSHOT_VERSION });
  });

  it('refuses a version-2 field in a version-1 snapshot', () => {
    const error = restoreError({ ...JSON.parse(VERSION_1), targets: [DIR] });
    expect(error?.path).toEqual(['targets']);
    expect(error?.message).toBe('snapshot: targets: is a version-2 field, in a version-1 snapshot');
  });

  it('refuses a version-1 call in flight with targets', () => {
    const snapshot = JSON.parse(VERSION_1);
    snapshot.inFlight[0].push([FILE]);
    expect(restoreError(snapshot)?.path).toEqual(['inFlight', 0, 'targets']);
  });

  it('persistedSnapshotSchema accepts version 1 too', () => {
    expect(persistedSnapshotSchema.safeParse(JSON.parse(VERSION_1)).success).toBe(true);
  });
});

describe('version 2: impossible target fields', () => {
  const base = (): PersistedSnapshot => targetedGuard().getPersistedSnapshot();

  it('refuses a target that is not canonical, naming the canonical form', () => {
    const error = restoreError({ ...base(), targets: ['/srv/./app/'] });
    expect(error?.path).toEqual(['targets', 0]);
    expect(error?.message).toBe('snapshot: targets[0]: is not canonical (the machine keeps "/srv/app")');
  });

  it('refuses a target named twice', () => {
    expect(restoreError({ ...base(), targets: [DIR, DIR] })?.path).toEqual(['targets', 1]);
  });

  it('refuses a non-canonical target of the last write', () => {
    expect(restoreError({ ...base(), writeTargets: ['/a//b'] })?.path).toEqual(['writeTargets', 0]);
  });

  it('refuses a non-canonical target of a call in flight', () => {
    const inFlight = [['id:r2', READ, 'read', T0, 1, ['a/']]];
    expect(restoreError({ ...base(), inFlight })?.path).toEqual(['inFlight', 0, 'targets', 0]);
  });

  it('refuses a destructive flag on a call in flight that is not a write', () => {
    const inFlight = [['id:r2', READ, 'read', T0, 1, [], true]];
    expect(restoreError({ ...base(), inFlight })?.path).toEqual(['inFlight', 0, 'destructive']);
  });

  it('refuses established targets without a recorded read', () => {
    const { read: _read, ...noRead } = base();
    expect(restoreError({ ...noRead, targets: [DIR] })?.path).toEqual(['targets']);
  });

  it('refuses the last write’s targets, or its flag, without a recorded write', () => {
    const snapshot = { v: SNAPSHOT_VERSION, state: 'READING', read: [READ, T0] };
    expect(restoreError({ ...snapshot, writeTargets: [FILE] })?.path).toEqual(['writeTargets']);
    expect(restoreError({ ...snapshot, destructive: true })?.path).toEqual(['destructive']);
  });

  it('refuses the last write’s targets beside wrote: false (ResetKeepProgress clears both)', () => {
    expect(restoreError({ ...base(), state: 'READING', wrote: false })?.path).toEqual(['writeTargets']);
  });

  it('refuses wrote: false without a recorded write', () => {
    expect(restoreError({ v: SNAPSHOT_VERSION, state: 'READING', read: [READ, T0], wrote: false })?.path).toEqual(['wrote']);
  });

  it('refuses wrote: false in VERIFYING', () => {
    const { writeTargets: _t, destructive: _d, ...plain } = base();
    expect(restoreError({ ...plain, wrote: false })?.path).toEqual(['wrote']);
  });

  it('refuses wrote: true, which is never written', () => {
    expect(restoreError({ ...base(), wrote: true })?.path).toEqual(['wrote']);
  });

  it('restores a confirmation without confirmDestructive (issue 24: it confirms unknown places too)', () => {
    expect(restoreError({ ...base(), confirmed: true })).toBeNull();
  });

  it(`refuses a target longer than MAX_TARGET_LENGTH (${MAX_TARGET_LENGTH})`, () => {
    expect(restoreError({ ...base(), targets: [`/${'a'.repeat(MAX_TARGET_LENGTH)}`] })?.path).toEqual(['targets', 0]);
  });

  it('refuses an empty target', () => {
    expect(restoreError({ ...base(), writeTargets: [''] })?.path).toEqual(['writeTargets', 0]);
  });
});

describe('the machine’s caps, enforced before anything else is read', () => {
  it(`refuses more than MAX_PENDING_RECOVERIES (${MAX_PENDING_RECOVERIES}) pending recoveries`, () => {
    const recoveries = Array.from({ length: MAX_PENDING_RECOVERIES + 1 }, (_, i) => [`tool_${i}`, 0, 0, 1]);
    expect(restoreError({ v: SNAPSHOT_VERSION, state: 'RESOLVING', recoveries })?.message).toBe(
      `snapshot: recoveries: ${MAX_PENDING_RECOVERIES + 1} entries, but the machine keeps at most ${MAX_PENDING_RECOVERIES} pending recoveries (MAX_PENDING_RECOVERIES)`,
    );
  });

  it(`refuses a tool name longer than MAX_NAME_LENGTH (${MAX_NAME_LENGTH}), which the machine never keeps`, () => {
    const recoveries = [['t'.repeat(MAX_NAME_LENGTH + 1), 0, 0, 1]];
    expect(restoreError({ v: SNAPSHOT_VERSION, state: 'RESOLVING', recoveries })?.path).toEqual(['recoveries', 0, 'tool']);
  });

  it('accepts a tool name of exactly MAX_NAME_LENGTH', () => {
    const recoveries = [['t'.repeat(MAX_NAME_LENGTH), 0, 0, 1]];
    expect(restoreError({ v: SNAPSHOT_VERSION, state: 'RESOLVING', recoveries })).toBeNull();
  });

  it(`accepts exactly MAX_PENDING_RECOVERIES pending recoveries`, () => {
    const recoveries = Array.from({ length: MAX_PENDING_RECOVERIES }, (_, i) => [`tool_${i}`, 0, 0, 1]);
    expect(restoreError({ v: SNAPSHOT_VERSION, state: 'RESOLVING', recoveries })).toBeNull();
  });

  it('refuses 100,000 pending recoveries with a SnapshotError naming the field, without reading the entries', () => {
    const entry = Object.defineProperty([], 0, {
      get() {
        throw new Error('an entry was read');
      },
    });
    const recoveries = new Array(100_000).fill(entry);
    const error = restoreError({ v: SNAPSHOT_VERSION, state: 'RESOLVING', recoveries });
    expect(error).toBeInstanceOf(SnapshotError);
    expect(error?.path).toEqual(['recoveries']);
    expect(error?.message).toMatch(/^snapshot: recoveries: 100000 entries, but the machine keeps at most 32 /);
  });

  it(`refuses more than MAX_ESTABLISHED_TARGETS (${MAX_ESTABLISHED_TARGETS}) established targets`, () => {
    const targets = Array.from({ length: MAX_ESTABLISHED_TARGETS + 1 }, (_, i) => `/t/${i}`);
    expect(restoreError({ v: SNAPSHOT_VERSION, state: 'READING', read: [READ, T0], targets })?.path).toEqual(['targets']);
  });

  it(`refuses more than MAX_TARGETS_PER_EVENT (${MAX_TARGETS_PER_EVENT}) targets of the last write`, () => {
    const writeTargets = Array.from({ length: MAX_TARGETS_PER_EVENT + 1 }, (_, i) => `/t/${i}`);
    expect(restoreError({ ...verifyingSnapshot(), writeTargets })?.path).toEqual(['writeTargets']);
  });

  it('refuses more targets on a call in flight than an event carries', () => {
    const targets = Array.from({ length: MAX_TARGETS_PER_EVENT + 1 }, (_, i) => `/t/${i}`);
    const inFlight = [['id:r2', READ, 'read', T0, 1, targets]];
    expect(restoreError({ ...verifyingSnapshot(), inFlight })?.path).toEqual(['inFlight', 0, 'targets']);
  });
});

describe('round trip with targets (property)', () => {
  const targetPool = ['/srv', DIR, FILE, '/srv/./other/', '.', 'src/a.ts', '~', 'reservation_id=A', 'table:users'];
  const targetedCallArb: fc.Arbitrary<Op> = fc
    .record({
      op: fc.constantFrom('check' as const, 'check' as const, 'record' as const),
      id: fc.constantFrom('a', 'b', 'c', undefined),
      name: fc.constantFrom(...TOOLS),
      kind: fc.option(fc.constantFrom(...KINDS), { freq: 5, nil: undefined }),
      outcome: fc.constantFrom('success' as const, 'success' as const, 'error' as const),
      targets: fc.option(fc.array(fc.constantFrom(...targetPool), { maxLength: 3 }), { nil: undefined }),
      destructive: fc.option(fc.boolean(), { nil: undefined }),
      result: fc.option(fc.constantFrom('{"verification":{"ok":true}}', 'ok'), { nil: undefined }),
    })
    .map((call) => Object.fromEntries(Object.entries(call).filter(([, value]) => value !== undefined)) as Op);
  const targetedOpArb: fc.Arbitrary<Op> = fc.oneof({ weight: 8, arbitrary: targetedCallArb }, { weight: 2, arbitrary: opArb });

  it('every snapshot a run with targets reaches validates, and restores to the same state and context', () => {
    fc.assert(
      fc.property(
        fc.record({ strictFailedWrites: fc.boolean(), autoCompleteVerification: fc.boolean(), confirmDestructive: fc.boolean() }),
        fc.array(targetedOpArb, { maxLength: 60, size: 'max' }),
        (options, ops) => {
          const clock = { t: T0 };
          const guard = createSessionGuard({ ...options, now: () => (clock.t += 7) });
          for (const op of ops) {
            apply(guard, op, clock);
            const restored = parsePersistedSnapshot(JSON.parse(JSON.stringify(guard.getPersistedSnapshot())));
            expect(restored.state).toBe(guard.state);
            expect(restored.context).toEqual(guard.actor.getSnapshot().context);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
