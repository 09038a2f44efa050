/**
 * Adversarial review of events read once (machines/safety.events.ts
 * `normalizeEvent`, `toolEventOf`) and of `establish`'s few-targets path
 * (machines/safety.targets.ts): random sequences of ordinary and hostile
 * events are run raw and normalized, through the compiled interpreter
 * (`transition` and `advance`) and through an XState actor, with
 * normalized events sent again later, to two sessions interleaved, and
 * from an old state after the session moved on; each step's state, context
 * and emitted events must be the same. `establish` is compared with the
 * list model (filter, then append), with and without its look-up set.
 *
 * The last cases of each group are counterexamples this review found, and
 * now pass: hostile events whose normalized copy read differently from the
 * event itself, and lists `establish` moved differently from the model.
 *
 * Spec: issue 13 (the fast path reads each event once per step); DESIGN.md §3.3-3.5, §5.3.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { booking, normalizeEvent, toolEventOf } from '../../machines/safety.events.js';
import { safetyMachine } from '../../machines/safety.machine.js';
import { MAX_ESTABLISHED_TARGETS, MAX_TARGETS_PER_EVENT } from '../../machines/safety.policy.js';
import { establish, isEstablished } from '../../machines/safety.targets.js';
import type { SafetyEvent, SafetyInput, ToolKind } from '../../machines/safety.types.js';
import { initialSafetyContext } from '../../machines/safety.actions.js';
import type { SafetyContext } from '../../machines/safety.types.js';
import { safetyInterpreter, type InterpreterState } from '../../src/interpreter/index.js';

const T = 1_700_000_000_000;
const INPUT: SafetyInput = { autoCompleteVerification: false };

type State = InterpreterState<SafetyContext>;

/** One step as compared: the state, the context and the emitted events. */
function view(state: State, emitted: readonly unknown[]): string {
  return JSON.stringify({ value: state.value, context: state.context, emitted });
}

/** Runs events by pure `transition` from a fresh session; one view per step. */
function runTransition(events: readonly unknown[], input: SafetyInput = INPUT): string[] {
  let state = safetyInterpreter.initial(input);
  return events.map((event) => {
    const step = safetyInterpreter.transition(state, event as SafetyEvent);
    state = step.state;
    return view(step.state, step.emitted);
  });
}

/** Runs events by in-place `advance`; one view per step. */
function runAdvance(events: readonly unknown[], input: SafetyInput = INPUT): string[] {
  const state = safetyInterpreter.initial(input) as State;
  return events.map((event) => {
    const emitted = safetyInterpreter.advance(state as never, event as SafetyEvent);
    return view(state, emitted);
  });
}

/** Runs events through an XState actor; one view per step (its status too: an actor that errors stops). */
function runActor(events: readonly unknown[], input: SafetyInput = INPUT): string[] {
  const actor = createActor(safetyMachine, { input });
  let emitted: unknown[] = [];
  actor.on('*', (event) => emitted.push(event));
  actor.subscribe({ error: () => undefined });
  actor.start();
  const out = events.map((event) => {
    emitted = [];
    actor.send(event as SafetyEvent);
    const snapshot = actor.getSnapshot();
    return JSON.stringify({ value: snapshot.value, context: snapshot.context, emitted, status: snapshot.status });
  });
  actor.stop();
  return out;
}

// ---------------------------------------------------------------------------
// Events: ordinary ones, and hostile ones that a normalized copy must read alike.

const TOOLS = ['ls', 'cat', 'rm'] as const;
const TARGET_POOL = ['/srv', '/srv/app', '/etc', 'table:users', 'srv/../srv', '', 'id=1'] as const;

/** A `targets` value: none, a few from the pool, too many, odd entries, holes, a revoked proxy, a stable getter. */
const targetsArb: fc.Arbitrary<() => unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(() => undefined) },
  { weight: 6, arbitrary: fc.subarray([...TARGET_POOL], { maxLength: 3 }).map((list) => () => [...list]) },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: MAX_TARGETS_PER_EVENT - 1, max: MAX_TARGETS_PER_EVENT + 3 })
      .chain((length) =>
        fc.constantFrom(...TARGET_POOL).map((target) => () => Array.from({ length }, (_, i) => (i === 0 ? target : '/srv'))),
      ),
  },
  {
    weight: 1,
    arbitrary: fc.constant(() => {
      const holey: unknown[] = [];
      holey[2] = '/srv/app';
      holey[4] = 7;
      return holey;
    }),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      () => '/srv',
      () => ({ 0: '/srv', length: 1 }),
      () => [null, 3, '/etc'],
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constant(() => {
      const revoked = Proxy.revocable(['/srv'], {});
      revoked.revoke();
      return revoked.proxy;
    }),
  },
  {
    weight: 1,
    arbitrary: fc.constant(() => Object.defineProperty(['/etc', '/srv'], 0, { get: () => '/srv/app', enumerable: true })),
  },
);

interface EventSpec {
  type: string;
  tool: string | number | undefined;
  kind: string | undefined;
  callId: string | number | undefined;
  targets: () => unknown;
  destructive: unknown;
  selfVerified: unknown;
  kindUnstated: unknown;
  jump: boolean;
  /** How the event is wrapped: plain, with a throwing `kind` getter, with a stable `tool` getter, or behind a proxy. */
  wrap: 'plain' | 'throwingKind' | 'getterTool' | 'proxy';
}

const eventSpecArb: fc.Arbitrary<EventSpec> = fc.record({
  type: fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom('tool.requested', 'tool.succeeded', 'tool.failed') },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'answer.requested',
        'verification.completed',
        'session.reset',
        'session.resetKeepingProgress',
        'clock.ticked',
        'bogus',
      ),
    },
  ),
  tool: fc.oneof({ weight: 9, arbitrary: fc.constantFrom(...TOOLS) }, { weight: 1, arbitrary: fc.constantFrom(undefined, 5) }),
  kind: fc.oneof(
    { weight: 9, arbitrary: fc.constantFrom('resolve', 'read', 'write', 'user_input', 'neutral') },
    { weight: 1, arbitrary: fc.constantFrom(undefined, 'delete') },
  ),
  callId: fc.constantFrom(undefined, undefined, 'a', 'b', '', 3),
  targets: targetsArb,
  destructive: fc.constantFrom(undefined, true, false, 'true'),
  selfVerified: fc.constantFrom(undefined, true, false),
  kindUnstated: fc.constantFrom(undefined, undefined, true),
  jump: fc.oneof({ weight: 12, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  wrap: fc.oneof(
    { weight: 12, arbitrary: fc.constant('plain' as const) },
    { weight: 1, arbitrary: fc.constantFrom('throwingKind' as const, 'getterTool' as const, 'proxy' as const) },
  ),
});

/** The raw event of a spec at a time. Its getters are stable (the same value at every read). */
function rawEvent(spec: EventSpec, at: number): unknown {
  const fields: Record<string, unknown> = { type: spec.type, at };
  const put = (name: string, value: unknown) => {
    if (value !== undefined) fields[name] = value;
  };
  put('tool', spec.tool);
  put('kind', spec.kind);
  put('callId', spec.callId);
  put('targets', spec.targets());
  put('destructive', spec.destructive);
  put('selfVerified', spec.selfVerified);
  put('kindUnstated', spec.kindUnstated);
  if (spec.wrap === 'throwingKind') {
    return Object.defineProperty(fields, 'kind', {
      enumerable: true,
      get() {
        throw new Error('kind');
      },
    });
  }
  if (spec.wrap === 'getterTool') {
    const tool = fields.tool;
    return Object.defineProperty(fields, 'tool', { enumerable: true, get: () => tool });
  }
  if (spec.wrap === 'proxy') return new Proxy(fields, {});
  return fields;
}

/** A step: a new event, or the one made `back` steps ago sent again (the same object, raw or normalized). */
type StepSpec = { event: EventSpec } | { again: number };

const stepsArb = fc.array(
  fc.oneof(
    { weight: 5, arbitrary: eventSpecArb.map((event) => ({ event })) },
    { weight: 1, arbitrary: fc.nat(6).map((again) => ({ again })) },
  ),
  { minLength: 1, maxLength: 24 },
);

/** The raw and normalized events of a run: the same object again where a step sends one again. */
function eventsOf(steps: readonly StepSpec[], start = T): { raw: unknown[]; normalized: unknown[] } {
  const raw: unknown[] = [];
  const normalized: unknown[] = [];
  let clock = start;
  steps.forEach((step) => {
    if ('again' in step) {
      if (raw.length === 0) return;
      const back = Math.max(0, raw.length - 1 - step.again);
      raw.push(raw[back]);
      normalized.push(normalized[back]);
      return;
    }
    clock += step.event.jump ? 11 * 60_000 : 1000; // a jump ages pending recoveries past their TTL
    const event = rawEvent(step.event, clock);
    raw.push(event);
    normalized.push(normalizeEvent(event as SafetyEvent));
  });
  return { raw, normalized };
}

/** A session that checks its calls first and then sends ambiguous outcomes: two calls of one tool without ids, one id checked twice. */
const ambiguousPrefix: EventSpec[] = (
  [
    ['tool.requested', 'ls', 'read', undefined, ['/srv']],
    ['tool.succeeded', 'ls', 'read', undefined, ['/srv']],
    ['tool.requested', 'ls', 'read', undefined, ['/srv/app']],
    ['tool.requested', 'ls', 'write', undefined, ['/srv']],
    ['tool.requested', 'cat', 'read', 'a', ['/srv']],
    ['tool.requested', 'cat', 'resolve', 'a', ['/etc']],
  ] as const
).map(([type, tool, kind, callId, targets]) => ({
  type,
  tool,
  kind,
  callId,
  targets: () => [...targets],
  destructive: undefined,
  selfVerified: undefined,
  kindUnstated: undefined,
  jump: false,
  wrap: 'plain' as const,
}));

const inputArb = fc.record({
  autoCompleteVerification: fc.boolean(),
  strictFailedWrites: fc.boolean(),
  confirmDestructive: fc.boolean(),
});

const withPrefixArb = fc
  .tuple(fc.boolean(), stepsArb)
  .map(([prefixed, steps]) => (prefixed ? [...ambiguousPrefix.map((event) => ({ event })), ...steps] : steps));

describe('a normalized event decides as the event it was made from', () => {
  // One behaviour per case: the normalized run, by each interpreter entry point, against the raw run through transition.
  it.each([
    { through: 'pure transition, step by step, with normalized events sent again later', run: runTransition, numRuns: 400 },
    { through: 'advance (in place)', run: runAdvance, numRuns: 300 },
  ])('through $through, as the raw event through transition', ({ run, numRuns }) => {
    fc.assert(
      fc.property(withPrefixArb, inputArb, (steps, input) => {
        const { raw, normalized } = eventsOf(steps);
        expect(run(normalized, input)).toEqual(runTransition(raw, input));
      }),
      { numRuns },
    );
  });

  it('through an XState actor', () => {
    fc.assert(
      fc.property(withPrefixArb, (steps) => {
        const { raw, normalized } = eventsOf(steps);
        expect(runActor(normalized)).toEqual(runActor(raw));
      }),
      { numRuns: 60 },
    );
  });

  it('when the same normalized events go to two sessions, interleaved', () => {
    fc.assert(
      fc.property(withPrefixArb, withPrefixArb, fc.array(fc.boolean(), { maxLength: 60 }), (a, b, order) => {
        const one = eventsOf(a);
        const two = eventsOf(b);
        // The second session sends some of the first's normalized events too (the same objects).
        const shared = two.normalized.map((event, i) => (i % 3 === 0 && one.normalized[i] !== undefined ? one.normalized[i] : event));
        const sharedRaw = two.raw.map((event, i) => (i % 3 === 0 && one.raw[i] !== undefined ? one.raw[i] : event));
        const sessions = [
          {
            state: safetyInterpreter.initial(INPUT),
            rawState: safetyInterpreter.initial(INPUT),
            events: one.normalized,
            raws: one.raw,
            i: 0,
          },
          { state: safetyInterpreter.initial(INPUT), rawState: safetyInterpreter.initial(INPUT), events: shared, raws: sharedRaw, i: 0 },
        ];
        const picks = [...order, ...Array.from({ length: a.length + b.length }, (_, k) => k % 2 === 0)];
        for (const pick of picks) {
          const session = sessions[pick ? 0 : 1]!;
          if (session.i >= session.events.length) continue;
          const normalizedStep = safetyInterpreter.transition(session.state, session.events[session.i] as SafetyEvent);
          const rawStep = safetyInterpreter.transition(session.rawState, session.raws[session.i] as SafetyEvent);
          expect(view(normalizedStep.state, normalizedStep.emitted)).toEqual(view(rawStep.state, rawStep.emitted));
          session.state = normalizedStep.state;
          session.rawState = rawStep.state;
          session.i += 1;
        }
      }),
      { numRuns: 150 },
    );
  });

  it('from an old state after the session moved on with the same normalized event', () => {
    fc.assert(
      fc.property(withPrefixArb, fc.nat(30), (steps, pick) => {
        const { raw, normalized } = eventsOf(steps);
        const states: State[] = [];
        let state = safetyInterpreter.initial(INPUT);
        for (const event of normalized) {
          states.push(state);
          state = safetyInterpreter.transition(state, event as SafetyEvent).state;
        }
        // Every event again, from every earlier state: its booking was kept for a later context.
        const k = pick % normalized.length;
        for (const old of states) {
          const fromNormalized = safetyInterpreter.transition(old, normalized[k] as SafetyEvent);
          const fromRaw = safetyInterpreter.transition(old, raw[k] as SafetyEvent);
          expect(view(fromNormalized.state, fromNormalized.emitted)).toEqual(view(fromRaw.state, fromRaw.emitted));
        }
      }),
      { numRuns: 200 },
    );
  });

  it('after session.resetKeepingProgress, sent again with the calls it was booked against gone', () => {
    const outcome = normalizeEvent({ type: 'tool.succeeded', tool: 'ls', kind: 'read', at: T + 10 });
    const raw = { type: 'tool.succeeded', tool: 'ls', kind: 'read', at: T + 10 };
    const checks = (n: unknown) => [
      { type: 'tool.requested', tool: 'ls', kind: 'read', at: T },
      { type: 'tool.requested', tool: 'ls', kind: 'read', at: T + 1 },
      n,
      { type: 'session.resetKeepingProgress', at: T + 11 },
      n,
      { type: 'tool.requested', tool: 'ls', kind: 'write', at: T + 12 },
      n,
    ];
    expect(runTransition(checks(outcome))).toEqual(runTransition(checks(raw)));
  });

  it('a proxy of a normalized event, and normalizing it again, decide as the event', () => {
    fc.assert(
      fc.property(stepsArb, (steps) => {
        const { raw, normalized } = eventsOf(steps);
        const proxied = normalized.map((event) => new Proxy(event as object, {}));
        const renormalized = proxied.map((event) => normalizeEvent(event as SafetyEvent));
        const expected = runTransition(raw);
        expect(runTransition(proxied)).toEqual(expected);
        expect(runTransition(renormalized)).toEqual(expected);
      }),
      { numRuns: 150 },
    );
  });

  it('toolEventOf decides as the plain event of the same fields', () => {
    const kinds: ToolKind[] = ['resolve', 'read', 'write', 'user_input', 'neutral'];
    const toolEventArb = fc.record({
      type: fc.constantFrom('tool.requested' as const, 'tool.succeeded' as const, 'tool.failed' as const),
      tool: fc.constantFrom(...TOOLS),
      kind: fc.constantFrom(...kinds),
      callId: fc.constantFrom(undefined, 'a', 'b'),
      targets: fc.option(fc.subarray(['/srv', '/srv/app', '/etc'], { maxLength: 2 }), { nil: undefined }),
      destructive: fc.constantFrom(undefined, true),
      selfVerified: fc.constantFrom(undefined, true),
      kindUnstated: fc.constantFrom(undefined, true),
    });
    fc.assert(
      fc.property(fc.array(toolEventArb, { maxLength: 20 }), (specs) => {
        const made = specs.map(({ type, tool, kind, ...fields }, i) => toolEventOf(type, tool, kind, T + i, fields));
        const plain = specs.map(({ type, tool, kind, ...fields }, i) => {
          const event: Record<string, unknown> = { type, tool, kind, at: T + i };
          for (const [name, value] of Object.entries(fields)) if (value !== undefined) event[name] = value;
          return event;
        });
        expect(runTransition(made)).toEqual(runTransition(plain));
      }),
      { numRuns: 200 },
    );
  });
});

describe('the booking a normalized event keeps, asked of contexts sharing arrays', () => {
  // Two reads of `ls` without ids in flight: the first admitted before write 1 succeeded, the second after it (it would verify it).
  const inFlight = [
    { key: 'anon:1', tool: 'ls', kind: 'read' as const, admittedAt: T, verifiesWrite: null, targets: ['/srv'] },
    { key: 'anon:2', tool: 'ls', kind: 'read' as const, admittedAt: T + 1, verifiesWrite: 1, targets: ['/srv'] },
  ];
  const writeTargets = ['/srv'];
  const context: SafetyContext = { ...initialSafetyContext(), checksCalls: true, writeSeq: 1, inFlight, writeTargets };
  const failure = { type: 'tool.failed', tool: 'ls', kind: 'read', at: T + 2 } as SafetyEvent;

  it('is asked again when only the write count changed (the same calls and write targets)', () => {
    const normalized = normalizeEvent(failure);
    expect(booking(context, normalized)).toEqual(booking(context, failure));
    const later = { ...context, writeSeq: 2 };
    expect(booking(later, failure)).not.toEqual(booking(context, failure)); // the case tells them apart
    expect(booking(later, normalized)).toEqual(booking(later, failure));
  });

  it('is asked again when only the write targets changed (the same calls and write count)', () => {
    const normalized = normalizeEvent(failure);
    expect(booking(context, normalized)).toEqual(booking(context, failure));
    const later = { ...context, writeTargets: ['/etc'] };
    expect(booking(later, failure)).not.toEqual(booking(context, failure));
    expect(booking(later, normalized)).toEqual(booking(later, failure));
  });
});

// ---------------------------------------------------------------------------
// Counterexamples: hostile `targets` and `type` that a normalized copy reads differently.

/** A session that read `/srv`, then a write of `targets` is requested (raw: refused, `/etc/passwd` is not established). */
function writeAfterRead(targets: unknown): { raw: string; normalized: string } {
  const prefix = [
    { type: 'tool.requested', tool: 'ls', kind: 'read', at: T, targets: ['/srv'] },
    { type: 'tool.succeeded', tool: 'ls', kind: 'read', at: T + 1, targets: ['/srv'] },
  ];
  const write = { type: 'tool.requested', tool: 'rm', kind: 'write', at: T + 2, targets };
  return {
    raw: runTransition([...prefix, write]).at(-1)!,
    normalized: runTransition([...prefix, normalizeEvent(write as SafetyEvent)]).at(-1)!,
  };
}

describe('hostile targets and types a normalized copy once read differently (found by this review, fixed)', () => {
  it('a targets array whose `constructor` is not a constructor: the normalized write is refused, as the raw one', () => {
    // A `slice` would go through ArraySpeciesCreate and throw; readTargets never reads `constructor`, nor does cutTargets.
    const { raw, normalized } = writeAfterRead(Object.assign(['/etc/passwd'], { constructor: 1 }));
    expect(JSON.parse(raw).emitted[0].allowed).toBe(false);
    expect(normalized).toEqual(raw);
  });

  it('an Array subclass whose species makes a non-array: the normalized write is refused, as the raw one', () => {
    class Odd extends Array<string> {
      static override get [Symbol.species](): ArrayConstructor {
        return Object as unknown as ArrayConstructor;
      }
    }
    const { raw, normalized } = writeAfterRead(Odd.from(['/etc/passwd']));
    expect(JSON.parse(raw).emitted[0].allowed).toBe(false);
    expect(normalized).toEqual(raw);
  });

  it('a throwing entry just past MAX_TARGETS_PER_EVENT is not read: both refuse (overflow)', () => {
    // readTargets reads entries [0, MAX) and `length`; so does cutTargets, and no further.
    const targets = Array.from({ length: MAX_TARGETS_PER_EVENT + 1 }, () => '/srv');
    Object.defineProperty(targets, MAX_TARGETS_PER_EVENT, {
      get() {
        throw new Error('entry');
      },
    });
    const { raw, normalized } = writeAfterRead(targets);
    expect(JSON.parse(raw).emitted[0].allowed).toBe(false);
    expect(normalized).toEqual(raw);
  });

  it('an inherited `type` is dispatched on alike: the normalized write is refused, as the raw one', () => {
    // The interpreter and XState select a transition by `event.type` (inherited counts); normalizeEvent copies it as dispatched.
    const event = Object.assign(Object.create({ type: 'tool.requested' }) as object, {
      tool: 'rm',
      kind: 'write',
      at: T + 2,
      targets: ['/etc/passwd'],
    });
    const prefix = [
      { type: 'tool.requested', tool: 'ls', kind: 'read', at: T, targets: ['/srv'] },
      { type: 'tool.succeeded', tool: 'ls', kind: 'read', at: T + 1, targets: ['/srv'] },
    ];
    const raw = runTransition([...prefix, event]).at(-1)!;
    expect(JSON.parse(raw).emitted[0].allowed).toBe(false);
    expect(runTransition([...prefix, normalizeEvent(event as SafetyEvent)]).at(-1)).toEqual(raw);
  });
});

// ---------------------------------------------------------------------------
// establish: the list model, with and without the look-up set.

/** The old semantics: filter out the targets read, append them (first occurrence order), drop the oldest past the bound. */
function establishModel(established: readonly string[], targets: readonly string[]): string[] {
  const adding = [...new Set(targets)];
  const next = established.filter((target) => !adding.includes(target)).concat(adding);
  return next.slice(Math.max(0, next.length - MAX_ESTABLISHED_TARGETS));
}

const ESTABLISH_POOL = Array.from({ length: 40 }, (_, i) => `/t/${i}`);

describe('establish', () => {
  it('equals the list model, and its look-up set answers as the list, over chains of reads, with and without the set built', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.constantFrom(...ESTABLISH_POOL), { maxLength: 40 }),
        fc.array(fc.tuple(fc.array(fc.constantFrom(...ESTABLISH_POOL), { maxLength: 7 }), fc.boolean(), fc.boolean()), { maxLength: 20 }),
        fc.boolean(),
        (start, reads, full) => {
          // At the cap: fill to MAX_ESTABLISHED_TARGETS with unique filler before the pool.
          let list = full ? [...Array.from({ length: MAX_ESTABLISHED_TARGETS - start.length }, (_, i) => `/f/${i}`), ...start] : [...start];
          let model = [...list];
          for (const [targets, lookFirst, fromOld] of reads) {
            if (lookFirst) isEstablished(list, '/t/0'); // builds the list's set
            const before = list;
            const next = establish(list, targets);
            const expected = establishModel(model, targets);
            expect(next).toEqual(expected);
            for (const target of [...ESTABLISH_POOL, '/f/0', '/f/1']) {
              expect(isEstablished(next, target)).toBe(expected.includes(target));
            }
            if (fromOld) {
              // A pure transition from the old state: establish again from the list the set moved away from.
              expect(establish(before, targets)).toEqual(expected);
              for (const target of ESTABLISH_POOL) expect(isEstablished(before, target)).toBe(model.includes(target));
            }
            list = next;
            model = expected;
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('a list with a target twice (not canonical: never made by the machine, a restored raw snapshot could) loses both copies, as the model', () => {
    // (Not ['/a', '/b', '/a'] read again: its most recent entry is already '/a', so the list stays as it is.)
    expect(establish(['/a', '/b', '/a', '/c'], ['/a'])).toEqual(['/b', '/c', '/a']);
    const withSet = ['/a', '/b', '/a', '/c'];
    isEstablished(withSet, '/a'); // its set holds three targets for four entries
    expect(establish(withSet, ['/a'])).toEqual(['/b', '/c', '/a']);
  });

  it('a read of more targets than the list holds keeps the look-up set to the list (the targets it drops are not established)', () => {
    const list = Array.from({ length: 10 }, (_, i) => `/t/${i}`);
    isEstablished(list, '/t/0'); // builds the list's set, which establish hands on
    const read = Array.from({ length: MAX_ESTABLISHED_TARGETS + 20 }, (_, i) => `/r/${i}`);
    const next = establish(list, read);
    expect(next).toEqual(establishModel(list, read));
    expect(isEstablished(next, '/r/0')).toBe(false);
    expect(isEstablished(next, '/t/0')).toBe(false);
    expect(isEstablished(next, `/r/${MAX_ESTABLISHED_TARGETS + 19}`)).toBe(true);
  });
});
