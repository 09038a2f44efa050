/**
 * Events read once (machines/safety.events.ts `normalizeEvent`,
 * `toolEventOf`): a normalized event reads exactly as the event it was
 * made from, by every reader the guards and actions use, whatever the
 * event's fields; it is immutable; it cannot be forged; and its kept
 * booking follows the calls in flight, so sending the same normalized
 * event again is the same as sending the event again.
 *
 * Spec: issue 13 (the fast path reads each event once per step); DESIGN.md §3.3-3.5.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  booking,
  callIdOf,
  errorCodeOf,
  field,
  idKeyOf,
  isDestructiveEvent,
  isNeverRanEvent,
  isSelfVerifiedEvent,
  kindOf,
  normalizeEvent,
  statedKindOf,
  statedTargetsOf,
  targetsOf,
  timeOf,
  toolEventOf,
  toolOf,
  unknownTargetOf,
  writeKeyOf,
} from '../../machines/safety.events.js';
import { MAX_NAME_LENGTH, MAX_TARGETS_PER_EVENT } from '../../machines/safety.policy.js';
import type { SafetyContext, SafetyEvent } from '../../machines/safety.types.js';
import { initialSafetyContext } from '../../machines/safety.actions.js';
import { safetyInterpreter } from '../../src/interpreter/index.js';

const T = 1_700_000_000_000;

/** Every reading of an event the machine makes, in a context with calls in flight and established targets. */
function readings(event: unknown, context: SafetyContext): unknown {
  return {
    at: timeOf(event),
    tool: toolOf(event),
    kind: kindOf(event),
    callId: callIdOf(event),
    idKey: idKeyOf(event),
    targets: targetsOf(event),
    destructive: isDestructiveEvent(event),
    selfVerified: isSelfVerifiedEvent(event),
    writeKey: writeKeyOf(event),
    errorCode: errorCodeOf(event),
    neverRan: isNeverRanEvent(event),
    statedKind: statedKindOf(event),
    statedTargets: statedTargetsOf(event),
    unknownTarget: unknownTargetOf(context, event),
    booking: booking(context, event),
    type: field(event, 'type'),
  };
}

/** A context with two calls of `ls` without ids (one a write), one with an id, and an established target. */
const CONTEXT: SafetyContext = {
  ...initialSafetyContext(),
  checksCalls: true,
  establishedTargets: ['/srv'],
  inFlight: [
    { key: 'anon:0', tool: 'ls', kind: 'read', admittedAt: T, verifiesWrite: null, targets: ['/srv'] },
    { key: 'anon:1', tool: 'ls', kind: 'write', admittedAt: T, verifiesWrite: null },
    { key: 'id:c1', tool: 'cat', kind: 'read', admittedAt: T, verifiesWrite: null },
  ],
};

/** Values of every type, and the ones the readers tell apart. */
const anyValue = fc.oneof(
  fc.constantFrom('tool.requested', 'tool.succeeded', 'tool.failed', 'read', 'write', 'neutral', 'ls', 'cat', 'c1', '', '/srv', '/srv/app'),
  fc.string(),
  fc.string({ minLength: MAX_NAME_LENGTH + 1, maxLength: MAX_NAME_LENGTH + 3 }),
  fc.boolean(),
  fc.integer(),
  fc.double(),
  fc.constant(null),
  fc.constant(undefined),
  fc.array(fc.oneof(fc.constantFrom('/srv', '/srv/app', '/etc', ''), fc.string(), fc.integer()), { maxLength: MAX_TARGETS_PER_EVENT + 3 }),
  fc.object(),
);

/** Event-like objects: any subset of the fields the machine reads, with values of any type. */
const anyEvent = fc.record(
  {
    type: anyValue,
    tool: anyValue,
    kind: anyValue,
    callId: anyValue,
    at: fc.oneof(anyValue, fc.constant(T)),
    targets: anyValue,
    destructive: anyValue,
    selfVerified: anyValue,
    kindUnstated: anyValue,
    writeKey: anyValue,
    errorCode: fc.oneof(anyValue, fc.constant('STRICT_RESOLUTION')),
    neverRan: anyValue,
  },
  { requiredKeys: [] },
);

describe('normalizeEvent', () => {
  it('reads as the event it was made from, by every reader, whatever its fields', () => {
    fc.assert(
      fc.property(anyEvent, (event) => {
        expect(readings(normalizeEvent(event as SafetyEvent), CONTEXT)).toEqual(readings(event, CONTEXT));
      }),
      { numRuns: 2000 },
    );
  });

  it('reads a non-object, a throwing getter and a throwing proxy as the readers read them, and never throws', () => {
    const throwing = Object.defineProperty({ type: 'tool.requested' }, 'kind', {
      enumerable: true,
      get() {
        throw new Error('boom');
      },
    });
    const trap = new Proxy(
      {},
      {
        get: () => {
          throw new Error('trap');
        },
        getOwnPropertyDescriptor: () => {
          throw new Error('trap');
        },
      },
    );
    const revoked = Proxy.revocable([], {});
    revoked.revoke();
    for (const event of [null, 42, 'tool.requested', throwing, trap, { type: 'tool.requested', targets: revoked.proxy }]) {
      expect(readings(normalizeEvent(event as SafetyEvent), CONTEXT)).toEqual(readings(event, CONTEXT));
    }
  });

  it('returns a normalized event as it is', () => {
    const once = normalizeEvent({ type: 'tool.requested', tool: 'ls', kind: 'read', at: T });
    expect(normalizeEvent(once)).toBe(once);
  });

  it('makes a frozen event whose fields are the ones read, so it shows as the event', () => {
    const event: SafetyEvent = { type: 'tool.succeeded', tool: 'ls', kind: 'read', at: T, callId: 'c1', targets: ['/srv'] };
    const normalized = normalizeEvent(event);
    expect(Object.isFrozen(normalized)).toBe(true);
    expect(JSON.parse(JSON.stringify(normalized))).toEqual(event);
    expect(() => {
      (normalized as { tool: string }).tool = 'rm';
    }).toThrow(TypeError);
  });

  it('keeps one entry past the targets it reads, so a write naming too many is still refused', () => {
    const targets = Array.from({ length: MAX_TARGETS_PER_EVENT + 10 }, () => '/srv');
    const normalized = normalizeEvent({ type: 'tool.requested', tool: 'rm', kind: 'write', at: T, targets });
    expect((normalized as { targets: string[] }).targets).toHaveLength(MAX_TARGETS_PER_EVENT + 1);
    expect(unknownTargetOf(CONTEXT, normalized)).toEqual({ target: null });
  });

  it('is not forged by a proxy of a normalized event: the proxy is read through its traps, and a throwing trap reads as missing', () => {
    const normalized = normalizeEvent({ type: 'tool.requested', tool: 'ls', kind: 'read', at: T });
    const lying = new Proxy(normalized, {
      get: () => {
        throw new Error('trap');
      },
    });
    expect(kindOf(lying)).toBe('write');
    expect(toolOf(lying)).toBe('');
  });
});

describe('toolEventOf', () => {
  it('makes what normalizeEvent makes of the same fields', () => {
    const fields = { callId: 'c1', targets: ['/srv/app'], destructive: true, selfVerified: true, kindUnstated: true } as const;
    const made = toolEventOf('tool.succeeded', 'deploy', 'write', T, fields);
    const event = normalizeEvent({ type: 'tool.succeeded', tool: 'deploy', kind: 'write', at: T, ...fields, targets: [...fields.targets] });
    expect(readings(made, CONTEXT)).toEqual(readings(event, CONTEXT));
    expect(JSON.stringify(made)).toBe(JSON.stringify(event));
  });

  it('leaves out the fields not given', () => {
    expect(Object.keys(toolEventOf('tool.requested', 'ls', 'read', T, {}))).toEqual(['type', 'tool', 'kind', 'at']);
  });
});

describe('the booking a normalized event keeps', () => {
  /** Sends each event to the interpreter from a fresh session; returns every step's state, context and emitted events. */
  function run(events: readonly SafetyEvent[]): string[] {
    let state = safetyInterpreter.initial({ autoCompleteVerification: false });
    return events.map((event) => {
      const step = safetyInterpreter.transition(state, event);
      state = step.state;
      return JSON.stringify(step);
    });
  }

  it('follows the calls in flight: the same normalized outcome sent twice is booked as the event sent twice', () => {
    const checks: SafetyEvent[] = [
      { type: 'tool.requested', tool: 'ls', kind: 'resolve', at: T },
      { type: 'tool.succeeded', tool: 'ls', kind: 'resolve', at: T + 1 },
      { type: 'tool.requested', tool: 'ls', kind: 'read', at: T + 2 },
      { type: 'tool.requested', tool: 'ls', kind: 'write', at: T + 3 },
    ];
    const outcome: SafetyEvent = { type: 'tool.succeeded', tool: 'ls', kind: 'read', at: T + 4 };
    const once = normalizeEvent(outcome);
    const twice = run([...checks, once, once]);
    expect(twice).toEqual(run([...checks, outcome, outcome]));
    // The second outcome was booked against what the first left in flight: it settled the write.
    expect(JSON.parse(twice.at(-1)!).state.value).toBe('VERIFYING');
  });
});
