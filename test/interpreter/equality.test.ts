/**
 * Proof of equality: the compiled interpreter (src/interpreter/) and
 * XState's own interpreter run the safety machine alike. Every event of
 * every generated path is given to an XState actor and to the compiled
 * machine, and both must reach the same state and context (key order
 * included) and emit the same events, in order, at every step. Then the
 * same paths run through `createSessionGuard` three ways (the interpreter
 * alone, the actor driving from the start, and the actor created halfway
 * through the path, from the interpreter's session): every call's result
 * (decision, error, recovery), the state, the context, the persisted
 * snapshot and what the telemetry hooks saw must agree at every step. The
 * interpreter also runs every event read once (`normalizeEvent`, what the
 * guard sends), and must reach the same state, context and emitted events.
 *
 * The paths are those the path tests and the oracle's differential tests
 * replay, from the same public generators (src/testing/
 * `getShortestSafetyPaths` and `getSimpleSafetyPaths`): the machine's own
 * vocabulary (explicit CompleteVerification, unchecked outcomes) plain and
 * strict, with targets and confirmDestructive, the simple paths, and a
 * default loop's. Random walks over the same event cases
 * (`safetyEventCases`), with clock jumps and hostile events (malformed
 * fields of every kind) mixed in, cover what no path reaches. `EXHAUSTIVE=1`
 * (`npm run test:exhaustive`) runs every combination of the path options and
 * many more walks.
 *
 * Spec: issue 13 (proof of equality); DESIGN.md §1, §3, §5.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { normalizeEvent, safetyMachine } from '../../machines/safety.machine.js';
import type { GateDecidedEvent, RecoverySucceededEvent, SafetyEvent, SafetyInput } from '../../machines/safety.types.js';
import { createSessionGuard, sessionStateOf, type SessionGuard } from '../../src/guard/session-guard.js';
import { safetyInterpreter, type InterpreterState } from '../../src/interpreter/index.js';
import {
  CLOCK_JUMP_MS,
  SHORTEST_PATH_CASES,
  TARGET_PATH_CASES,
  getShortestSafetyPaths,
  getSimpleSafetyPaths,
  recordOptionsOf,
  safetyEventCases,
  toolCallOf,
  type SafetyPathOptions,
  type SafetySnapshot,
} from '../../src/testing/index.js';
import type { SafetyContext } from '../../machines/safety.types.js';

const EXHAUSTIVE = process.env.EXHAUSTIVE === '1';
/** Time limit of a test over thousands of paths: seconds on an idle machine, minutes on a loaded one. */
const LONG_TEST_MS = 600_000;
const WALKS = EXHAUSTIVE ? 20_000 : 300;
const MAX_WALK = 40;
const T0 = 1_700_000_000_000;

/**
 * The path sets: the path tests' (shortest, the machine's vocabulary, plain
 * and strict, and with targets; simple), and a default loop's (auto-completed
 * verification, checked calls only) as the oracle's differential tests run
 * it; when deep, every combination of the options, each with and without targets.
 */
const PATH_SETTINGS: { options: SafetyPathOptions; simple: boolean }[] = EXHAUSTIVE
  ? [false, true].flatMap((targets) =>
      [false, true].flatMap((autoCompleteVerification) =>
        [false, true].flatMap((includeUncheckedOutcomes) =>
          [false, true].map((strictFailedWrites) => ({
            options: {
              autoCompleteVerification,
              includeUncheckedOutcomes,
              strictFailedWrites,
              ...(targets ? { targets, confirmDestructive: true } : {}),
            },
            simple: !targets,
          })),
        ),
      ),
    )
  : [
      { options: { autoCompleteVerification: false, includeUncheckedOutcomes: true, strictFailedWrites: false }, simple: true },
      { options: { autoCompleteVerification: false, includeUncheckedOutcomes: true, strictFailedWrites: true }, simple: false },
      {
        options: {
          autoCompleteVerification: false,
          includeUncheckedOutcomes: true,
          strictFailedWrites: false,
          targets: true,
          confirmDestructive: true,
        },
        simple: false,
      },
      { options: { autoCompleteVerification: true, includeUncheckedOutcomes: false, strictFailedWrites: false }, simple: false },
    ];

/** The machine input a path set is generated for. */
function inputOf(options: SafetyPathOptions): SafetyInput {
  return {
    strictFailedWrites: options.strictFailedWrites === true,
    confirmDestructive: options.confirmDestructive === true,
    autoCompleteVerification: options.autoCompleteVerification !== false,
  };
}

/** The events of a path set's paths (shortest, and simple when asked), generated once per set. */
const pathEvents = new Map<SafetyPathOptions, SafetyEvent[][]>();
function eventsOf({ options, simple }: (typeof PATH_SETTINGS)[number]): SafetyEvent[][] {
  let lists = pathEvents.get(options);
  if (lists === undefined) {
    const paths = [...getShortestSafetyPaths(options), ...(simple ? getSimpleSafetyPaths(options) : [])];
    lists = paths.map((path) => path.steps.map((step) => step.event));
    pathEvents.set(options, lists);
  }
  return lists;
}

// ---------------------------------------------------------------------------
// The machine: XState's actor beside the compiled interpreter.

/** An XState actor of the machine and the compiled machine, fed the same events. */
class Both {
  private readonly actor;
  private state: InterpreterState<SafetyContext>;
  /** The interpreter again, given each event read once (`normalizeEvent`), as the session guard gives it. */
  private normalized: InterpreterState<SafetyContext>;
  private readonly heard: unknown[] = [];
  steps = 0;

  constructor(input: SafetyInput) {
    this.actor = createActor(safetyMachine, { input });
    this.actor.on('*', (event) => this.heard.push(event));
    this.actor.start();
    this.state = safetyInterpreter.initial(input);
    this.normalized = this.state;
    this.compare('start', []);
  }

  /** The actor's snapshot: what the event cases are generated from. */
  snapshot(): SafetySnapshot {
    return this.actor.getSnapshot();
  }

  send(event: SafetyEvent): void {
    this.heard.length = 0;
    this.actor.send(event);
    const step = safetyInterpreter.transition(this.state, event);
    this.state = step.state;
    this.compare(JSON.stringify(event), step.emitted);
    const read = safetyInterpreter.transition(this.normalized, normalizeEvent(event));
    this.normalized = read.state;
    this.compareNormalized(JSON.stringify(event), step.emitted, read.emitted);
    this.steps += 1;
  }

  private compareNormalized(after: string, emitted: readonly unknown[], emittedRead: readonly unknown[]): void {
    const want = JSON.stringify({ value: this.state.value, context: this.state.context, emitted });
    const got = JSON.stringify({ value: this.normalized.value, context: this.normalized.context, emitted: emittedRead });
    if (got !== want)
      throw new Error(`the normalized event and the event differ after ${after}:\n  normalized ${got}\n  event      ${want}`);
  }

  private compare(after: string, emitted: readonly unknown[]): void {
    const snapshot = this.actor.getSnapshot();
    expect(snapshot.status, `XState's actor after ${after}`).toBe('active');
    const want = JSON.stringify({ value: snapshot.value, context: snapshot.context, emitted: this.heard });
    const got = JSON.stringify({ value: this.state.value, context: this.state.context, emitted });
    if (got !== want) throw new Error(`the interpreter and XState differ after ${after}:\n  interpreter ${got}\n  xstate      ${want}`);
  }
}

/** Runs events through both; a difference names the path. */
function runMachine(input: SafetyInput, events: readonly SafetyEvent[]): number {
  const both = new Both(input);
  try {
    for (const event of events) both.send(event);
  } catch (error) {
    throw new Error(`${(error as Error).message}\npath:\n  ${events.map((e) => JSON.stringify(e)).join('\n  ')}`, { cause: error });
  }
  return both.steps;
}

// ---------------------------------------------------------------------------
// The guard: the interpreter alone, the actor from the start, the actor from halfway.

interface Observed {
  guard: SessionGuard;
  hooks: (GateDecidedEvent | RecoverySucceededEvent)[];
}

/** A guard on the path's clock (each event's own time), its hooks recorded. */
function observedGuard(options: SafetyPathOptions, clock: { at: number }): Observed {
  const hooks: Observed['hooks'] = [];
  const guard = createSessionGuard({
    now: () => clock.at,
    autoCompleteVerification: options.autoCompleteVerification !== false,
    strictFailedWrites: options.strictFailedWrites === true,
    confirmDestructive: options.confirmDestructive === true,
    onDecision: (decision) => hooks.push(decision),
    onRecovery: (event) => hooks.push(event),
  });
  return { guard, hooks };
}

/** One event as the guard's call, its result as comparable JSON (a thrown error as its name and message). */
function callGuard(guard: SessionGuard, event: SafetyEvent): string {
  const outcome = (): unknown => {
    const call = toolCallOf(event);
    switch (event.type) {
      case 'tool.requested': {
        const decision = guard.check(call!);
        return decision.allowed ? decision : { ...decision, error: decision.error.toJSON() };
      }
      case 'tool.succeeded':
      case 'tool.failed':
        return guard.record(call!, event.type === 'tool.succeeded' ? 'success' : 'error', recordOptionsOf(event));
      case 'answer.requested': {
        const decision = guard.finalAnswer();
        return decision.allowed ? decision : { allowed: false, error: decision.error.toJSON() };
      }
      case 'verification.completed':
        return guard.completeVerification();
      case 'session.reset':
        return guard.reset();
      case 'session.resetKeepingProgress':
        return guard.resetKeepProgress();
      case 'clock.ticked':
        return null; // time only: the guard reads its clock
    }
  };
  try {
    return JSON.stringify(outcome() ?? null);
  } catch (error) {
    return JSON.stringify({ thrown: (error as Error).name, message: (error as Error).message });
  }
}

/** Everything a loop can observe of a guard, as JSON. */
function observe({ guard, hooks }: Observed): string {
  return JSON.stringify({ state: guard.state, context: guard.context, persisted: guard.getPersistedSnapshot(), hooks });
}

/**
 * Runs a path's events through three guards: the interpreter alone, the
 * actor driving from the start, and the actor created after half the path.
 * All must agree at every step.
 */
function runGuards(options: SafetyPathOptions, events: readonly SafetyEvent[]): number {
  const clock = { at: T0 };
  const fast = observedGuard(options, clock);
  const fromStart = observedGuard(options, clock);
  const switched = observedGuard(options, clock);
  void fromStart.guard.actor; // the actor drives from here on
  const half = events.length >> 1;
  events.forEach((event, index) => {
    if (index === half) void switched.guard.actor;
    clock.at = event.at;
    const results = [fast, fromStart, switched].map(({ guard }) => callGuard(guard, event));
    const views = [fast, fromStart, switched].map(observe);
    const agree = results.every((r) => r === results[0]) && views.every((v) => v === views[0]);
    if (!agree) {
      throw new Error(
        `the guards differ at step ${index} (${JSON.stringify(event)}) with ${JSON.stringify(options)}:\n` +
          ['interpreter', 'actor from the start', 'actor from halfway']
            .map((name, i) => `  ${name}: ${results[i]} ${views[i]}`)
            .join('\n') +
          `\npath:\n  ${events.map((e) => JSON.stringify(e)).join('\n  ')}`,
      );
    }
  });
  // The actor created halfway holds the interpreter's session, exactly.
  const { value, context } = switched.guard.actor.getSnapshot();
  expect(JSON.stringify({ value, context })).toBe(JSON.stringify(sessionStateOf(fast.guard)));
  return events.length;
}

// ---------------------------------------------------------------------------
// Random walks over the event cases, with clock jumps and hostile events.

/** Fields of hostile events: every kind of malformed value the machine must read totally. */
const hostileValue = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.constant(''),
  fc.constant(42),
  fc.constant(Number.NaN),
  fc.constant(9e15),
  fc.constant('write'),
  fc.constant('read'),
  fc.constant('bogus'),
  fc.constant(true),
  fc.constant(['/srv/app']),
  fc.constant([7, '/srv/app/x']),
  fc.constant({}),
);
const hostileEvent: fc.Arbitrary<SafetyEvent> = fc
  .record({
    type: fc.constantFrom(
      'tool.requested',
      'tool.succeeded',
      'tool.failed',
      'answer.requested',
      'verification.completed',
      'session.resetKeepingProgress',
      'unknown.event',
    ),
    tool: hostileValue,
    kind: hostileValue,
    callId: fc.oneof(hostileValue, fc.constantFrom('read-1', 'write-1', 'write-2')),
    targets: hostileValue,
    destructive: hostileValue,
    selfVerified: hostileValue,
    kindUnstated: hostileValue,
    at: hostileValue,
  })
  .map((event) => Object.fromEntries(Object.entries(event).filter(([, value]) => value !== undefined)) as unknown as SafetyEvent);

/** One step of a walk: pick an event case (by index, modulo their number), jump the clock, or send a hostile event. */
const walkStep = fc.oneof(
  { weight: 12, arbitrary: fc.nat().map((pick) => ({ pick })) },
  { weight: 1, arbitrary: fc.constant({ jump: true as const }) },
  { weight: 1, arbitrary: hostileEvent.map((hostile) => ({ hostile })) },
);

const walks = fc.record({
  options: fc.constantFrom<SafetyPathOptions>(
    { autoCompleteVerification: false, includeUncheckedOutcomes: true },
    { autoCompleteVerification: false, includeUncheckedOutcomes: true, strictFailedWrites: true },
    { autoCompleteVerification: false, includeUncheckedOutcomes: true, targets: true, confirmDestructive: true },
    { autoCompleteVerification: true, includeUncheckedOutcomes: true },
    { autoCompleteVerification: true, includeUncheckedOutcomes: true, strictFailedWrites: true, targets: true, confirmDestructive: true },
  ),
  steps: fc.array(walkStep, { minLength: 1, maxLength: MAX_WALK, size: 'max' }),
});

/** A walk's events, chosen from the actor's snapshot as it goes, and run through both. */
function runWalk(
  options: SafetyPathOptions,
  steps: readonly ({ pick: number } | { jump: true } | { hostile: SafetyEvent })[],
): SafetyEvent[] {
  const both = new Both(inputOf(options));
  const cases = options.targets === true ? TARGET_PATH_CASES : SHORTEST_PATH_CASES;
  const events: SafetyEvent[] = [];
  let at = T0;
  for (const step of steps) {
    at += 1;
    let event: SafetyEvent;
    if ('jump' in step) {
      at += CLOCK_JUMP_MS;
      event = { type: 'clock.ticked', at };
    } else if ('hostile' in step) {
      event = step.hostile;
    } else {
      const choices = safetyEventCases(both.snapshot(), options, cases);
      event = { ...choices[step.pick % choices.length]!, at } as SafetyEvent;
    }
    events.push(event);
    both.send(event);
  }
  return events;
}

// ---------------------------------------------------------------------------

describe('the compiled interpreter equals XState on the safety machine', () => {
  for (const settings of PATH_SETTINGS) {
    const name = `${JSON.stringify(settings.options)}${settings.simple ? ', shortest and simple' : ', shortest'}`;

    it(
      `at every step of every path: states, contexts and emitted events, ${name}`,
      () => {
        const lists = eventsOf(settings);
        let steps = 0;
        for (const events of lists) steps += runMachine(inputOf(settings.options), events);
        console.info(`equality: ${lists.length} paths (${steps} steps) agree with XState, ${name}`);
        expect(steps).toBeGreaterThan(0);
      },
      LONG_TEST_MS,
    );

    it(
      `through createSessionGuard, the interpreter alone and the actor driving from the start or from halfway, ${name}`,
      () => {
        const lists = eventsOf(settings);
        let steps = 0;
        for (const events of lists) steps += runGuards(settings.options, events);
        console.info(`equality: ${lists.length} paths (${steps} steps) agree through three guards, ${name}`);
        expect(steps).toBeGreaterThan(0);
      },
      LONG_TEST_MS,
    );
  }

  it(
    `on ${WALKS.toLocaleString('en-US')} random walks of up to ${MAX_WALK} events, clock jumps and hostile events among them`,
    () => {
      let steps = 0;
      const details = fc.check(
        fc.property(walks, ({ options, steps: walk }) => {
          steps += runWalk(options, walk).length;
        }),
        { numRuns: WALKS },
      );
      if (details.failed) {
        const reason = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
        throw new Error(
          `a random walk makes the interpreter and XState differ (fast-check seed ${details.seed}, path "${details.counterexamplePath}"):\n${reason}`,
        );
      }
      console.info(`equality: ${WALKS} random walks (${steps} events) agree with XState`);
      expect(steps).toBeGreaterThanOrEqual(WALKS);
    },
    EXHAUSTIVE ? 3_600_000 : LONG_TEST_MS,
  );

  it('a difference fails with the event and both sides', () => {
    const both = new Both({});
    // A session the machine could not reach, given to the interpreter only: the next step differs.
    (both as unknown as { state: InterpreterState<SafetyContext> }).state = safetyInterpreter.initial({ strictFailedWrites: true });
    expect(() => both.send({ type: 'answer.requested', at: T0 })).toThrow(
      /^the interpreter and XState differ after \{"type":"answer\.requested".*\n {2}interpreter .*"strictFailedWrites":true.*\n {2}xstate {6}.*"strictFailedWrites":false/,
    );
  });
});
