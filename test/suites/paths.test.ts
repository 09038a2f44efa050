/**
 * Model-based tests: @xstate/graph walks the safety machine's graph, made
 * finite by the abstraction in src/testing/, and every generated path is
 * replayed through the adapter (`createSessionGuard`), the system under
 * test, with the invariants asserted at every step. A coverage test then
 * fails if any structural transition of the machine was never taken.
 *
 * The abstraction, briefly (the full account is on `abstractSafetyState`):
 * the state, read-after-write, calls in flight and pending recoveries are
 * kept; the blocked-write counter is capped at 3 and a recovery's attempts
 * at 2; times are abstracted to one model time plus a clock jump past the
 * ten-minute TTL; write numbers only as "would this read verify the current
 * write". Shortest paths run over that key plus the transition that entered
 * the state (so every transition into every abstract state is taken);
 * simple paths over the coarser decision key (state, read-after-write,
 * calls in flight), with a read and a write tool. A third set, with
 * targets (one of two, or none, on every call), destructive writes,
 * self-verifying results and `confirmDestructive`, runs the shortest paths
 * over `abstractTargetState`, so every target-aware transition is taken.
 *
 * The adapter runs on its own clock, which only grows: one millisecond a
 * step, and ten minutes and one millisecond at a clock jump. Compared with
 * the model, times therefore differ, and everything else must not.
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants", "Blocked calls and recovery",
 * "Resetting"; DESIGN.md §1, §3, §5.
 */
import { writeKeyOf } from '../../src/guard/write-key.js';
import { createTestModel, getSimplePaths, toDirectedGraph, type DirectedGraphNode } from '@xstate/graph';
import { describe, expect, it } from 'vitest';
import { createActor, type AnyTransitionDefinition } from 'xstate';
import { safetyMachine } from '../../machines/safety.machine.js';
import { RECOVERY_TTL_MS } from '../../machines/safety.policy.js';
import type { GateDecidedEvent, SafetyContext, SafetyEvent, SafetyState } from '../../machines/safety.types.js';
import { createSessionGuard, type SessionGuard } from '../../src/guard/session-guard.js';
import {
  abstractDecisionState,
  abstractSafetyState,
  abstractTargetState,
  recordOptionsOf,
  safetyEventCases,
  targetCoverageKey,
  transitionCoverageKey,
  SHORTEST_PATH_CASES,
  TARGET_PATH_CASES,
  toolCallOf,
  SIMPLE_PATH_CASES,
  CLAIM_PATH_ANSWER,
  type SafetyPathOptions,
  type SafetySnapshot,
} from '../../src/testing/index.js';

/**
 * The machine's own vocabulary for the shortest paths: explicit
 * CompleteVerification, and outcomes of calls never checked. Simple paths
 * are of a loop that checks every call first (see `abstractDecisionState`).
 */
const SHORTEST_OPTIONS: SafetyPathOptions = { autoCompleteVerification: false, includeUncheckedOutcomes: true };
const SIMPLE_OPTIONS: SafetyPathOptions = { autoCompleteVerification: false };
/** The shortest paths with targets: the same vocabulary, with targets and confirmDestructive. */
const TARGET_OPTIONS: SafetyPathOptions = { ...SHORTEST_OPTIONS, targets: true, confirmDestructive: true };

/** The simple paths with strict failed writes are twice as many again: `npm run test:exhaustive` only. */
const EXHAUSTIVE = process.env.EXHAUSTIVE === '1';
/** Time limit of a test over thousands of paths: seconds on an idle machine, minutes on a loaded one. */
const LONG_TEST_MS = 300_000;

const T0 = 1_700_000_000_000;

type Generator = 'shortest' | 'simple';

/**
 * The shortest paths, by `createTestModel` over the abstraction plus the
 * transition that entered each state (`transitionCoverageKey`); with
 * targets, over `abstractTargetState` (`targetCoverageKey`).
 */
function shortestPaths(strictFailedWrites: boolean, targets = false): StepsOf[] {
  const model = createTestModel(safetyMachine, {
    input: { strictFailedWrites, confirmDestructive: targets, autoCompleteVerification: false },
    events: (snapshot: SafetySnapshot) =>
      targets
        ? safetyEventCases(snapshot, TARGET_OPTIONS, TARGET_PATH_CASES)
        : safetyEventCases(snapshot, SHORTEST_OPTIONS, SHORTEST_PATH_CASES),
    serializeState: (snapshot: SafetySnapshot, event: SafetyEvent | undefined, previous?: SafetySnapshot) =>
      targets ? targetCoverageKey(snapshot, event, previous) : transitionCoverageKey(snapshot, event, previous),
  });
  return model.getShortestPaths();
}

/**
 * The simple paths, by `getSimplePaths` over the decision abstraction. (Not
 * through `createTestModel`: it adds a bare `{ type }` event for every event
 * type a state handles and the cases leave out, such as an outcome when no
 * call is in flight.) Paths that are a prefix of another are dropped.
 */
function simplePaths(strictFailedWrites: boolean): StepsOf[] {
  const paths = getSimplePaths(safetyMachine, {
    input: { strictFailedWrites, autoCompleteVerification: false },
    events: (snapshot: SafetySnapshot) => safetyEventCases(snapshot, SIMPLE_OPTIONS, SIMPLE_PATH_CASES),
    serializeState: (snapshot: SafetySnapshot) => abstractDecisionState(snapshot),
  });
  const key = (path: StepsOf, length = path.steps.length) =>
    path.steps
      .slice(1, length)
      .map((step) => JSON.stringify(step.event))
      .join('\n');
  const prefixes = new Set(paths.flatMap((path) => path.steps.slice(1).map((_, i) => key(path, i + 1))));
  return paths.filter((path) => !prefixes.has(key(path)));
}

/** A generated path: an `xstate.init` step, then each event with the (abstract) state it leads to. */
interface StepsOf {
  steps: { event: SafetyEvent; state: SafetySnapshot }[];
  state: SafetySnapshot;
}

/** The path sets: shortest, plain and strict, and with targets; simple, plain (and strict when deep). */
const PATH_SETS: readonly { generator: Generator; strictFailedWrites: boolean; targets: boolean }[] = [
  { generator: 'shortest', strictFailedWrites: false, targets: false },
  { generator: 'shortest', strictFailedWrites: true, targets: false },
  { generator: 'shortest', strictFailedWrites: false, targets: true },
  { generator: 'simple', strictFailedWrites: false, targets: false },
  ...(EXHAUSTIVE ? [{ generator: 'simple' as const, strictFailedWrites: true, targets: false }] : []),
];

type PathSet = (typeof PATH_SETS)[number] & { paths: StepsOf[]; ms: number };

const enumerated = new Map<(typeof PATH_SETS)[number], PathSet>();

/**
 * A path set, enumerated on first use (inside a test, not at import, so a
 * mutation tool sees which tests run the machine) and kept; the time it took
 * is part of the report.
 */
function pathSet(spec: (typeof PATH_SETS)[number]): PathSet {
  let set = enumerated.get(spec);
  if (set === undefined) {
    const start = performance.now();
    const paths =
      spec.generator === 'shortest' ? shortestPaths(spec.strictFailedWrites, spec.targets) : simplePaths(spec.strictFailedWrites);
    set = { ...spec, paths, ms: performance.now() - start };
    enumerated.set(spec, set);
  }
  return set;
}

const allPathSets = () => PATH_SETS.map(pathSet);

// ---------------------------------------------------------------------------
// Transitions: a structural edge is a transition of the machine as seen from
// one atomic state. Root transitions (reset, clock) apply in every state and
// count once per state.

interface Edge {
  from: SafetyState;
  transition: AnyTransitionDefinition;
}

function guardName(transition: AnyTransitionDefinition): string | null {
  const guard: unknown = transition.guard;
  if (guard === undefined) return null;
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'object' && guard !== null && 'type' in guard) return String((guard as { type: unknown }).type);
  return 'inline';
}

/** `FROM --event [guard] #i--> TO`; `#i` is the transition's place among its node's transitions for the event. */
function edgeKey({ from, transition }: Edge): string {
  const index = (transition.source.transitions.get(transition.eventType) ?? []).indexOf(transition);
  const to = transition.target?.[0]?.key ?? from;
  const guard = guardName(transition);
  return `${from} --${transition.eventType}${guard === null ? '' : ` [${guard}]`} #${index}--> ${to}`;
}

/** Every structural edge, from the directed graph of the machine's state nodes. */
function structuralEdges(): Set<string> {
  const root: DirectedGraphNode = toDirectedGraph(safetyMachine);
  const edges = new Set<string>();
  for (const child of root.children) {
    const from = child.stateNode.key as SafetyState;
    const own = new Set(child.edges.map((edge) => edge.transition.eventType));
    for (const edge of child.edges) edges.add(edgeKey({ from, transition: edge.transition }));
    for (const edge of root.edges) {
      if (!own.has(edge.transition.eventType)) edges.add(edgeKey({ from, transition: edge.transition }));
    }
  }
  return edges;
}

/** Every edge the generated paths take: the transitions each step's event selects from the step before. */
function takenEdges(): Set<string> {
  const edges = new Set<string>();
  for (const { paths } of allPathSets()) {
    for (const path of paths) {
      for (let i = 1; i < path.steps.length; i += 1) {
        const previous = path.steps[i - 1]!.state;
        const from = previous.value as SafetyState;
        for (const transition of safetyMachine.getTransitionData(previous, path.steps[i]!.event)) {
          edges.add(edgeKey({ from, transition }));
        }
      }
    }
  }
  return edges;
}

// ---------------------------------------------------------------------------
// The system under test, with the invariants.

/** Context without times: they differ between the model's clock and the adapter's. */
/**
 * The context without its times, and with write keys (issue 28) as one mark: the
 * guard computes its own key from a call's arguments (`toolCallOf`), the path's event names it.
 */
function timeless(context: Readonly<SafetyContext>): string {
  return JSON.stringify(context, (key, value: unknown) => {
    if (/At$/.test(key) || key === 'at') return undefined;
    const writeKey = key === 'writeKey' || (key === 'key' && typeof value === 'string' && !/^(id|anon):/.test(value));
    return writeKey ? '<write key>' : value;
  });
}

function writeInFlight(context: Readonly<SafetyContext>): boolean {
  return context.inFlight.some((call) => call.kind === 'write');
}

/** `inner` is `outer` or under it, for the canonical absolute paths of `PATH_TARGETS`. */
function under(inner: string, outer: string): boolean {
  return inner === outer || inner.startsWith(`${outer}/`);
}

/**
 * Every target is one a successful read established, or under one (DESIGN §5.3); an unknown place
 * (`?/…`) is never established, and stands only when a user input succeeded since the last write (issue 24).
 */
function allEstablished(context: Readonly<SafetyContext>, targets: readonly string[]): boolean {
  return targets.every((target) =>
    target.startsWith('?/') ? context.confirmedSinceWrite : context.establishedTargets.some((known) => under(target, known)),
  );
}

/** Some read target touches some written target; any read touches a write without targets (DESIGN §5.4). */
function touchesWritten(reads: readonly string[], written: readonly string[]): boolean {
  return written.length === 0 || reads.some((r) => written.some((w) => under(r, w) || under(w, r)));
}

/**
 * The adapter under test, beside an actor of the machine fed the same model
 * events: the adapter must decide as the machine does and hold the same
 * session, times aside, and both must stay in the abstract state the path
 * says.
 */
class System {
  readonly guard: SessionGuard;
  private readonly model;
  private modelDecision: GateDecidedEvent | null = null;
  private now = T0;

  constructor(
    strictFailedWrites: boolean,
    private readonly key: (snapshot: SafetySnapshot) => string,
    private readonly confirmDestructive = false,
  ) {
    this.guard = createSessionGuard({ now: () => this.now, autoCompleteVerification: false, strictFailedWrites, confirmDestructive });
    this.model = createActor(safetyMachine, { input: { strictFailedWrites, confirmDestructive, autoCompleteVerification: false } });
    this.model.on('gate.decided', (decision) => {
      this.modelDecision = decision;
    });
    this.model.start();
  }

  /** Runs one model event through the adapter, asserting the invariants around it. */
  step(event: SafetyEvent): void {
    this.now += event.type === 'clock.ticked' ? RECOVERY_TTL_MS + 1 : 1;
    this.modelDecision = null;
    this.model.send(event);
    const expected = this.modelDecision as GateDecidedEvent | null;
    const guard = this.guard;
    const before = { state: guard.state, context: guard.context };
    const after = () => ({ state: guard.state, context: guard.context });
    const call = toolCallOf(event);
    switch (event.type) {
      case 'tool.requested': {
        const decision = guard.check(call!);
        expect(decision.allowed).toBe(expected?.allowed);
        if (event.kind === 'write') {
          // No write in RESOLVING, VERIFYING or WRITING; one is admitted only in READING, on
          // established targets (DESIGN §5.3) or confirmed unknown places (issue 24), and, destructive, confirmed (§5.6).
          const unconfirmed = this.confirmDestructive && event.destructive === true && !before.context.confirmedSinceWrite;
          // Nor the same write as one whose failure was recorded (issue 28, repeated-write).
          const key = event.writeKey === undefined ? undefined : writeKeyOf(event.tool, { writeKey: event.writeKey });
          const repeated = (before.context.failedWrites ?? []).some((failed) => failed.key === key);
          const admissible = before.state === 'READING' && allEstablished(before.context, event.targets ?? []) && !unconfirmed && !repeated;
          expect(decision.allowed, `write admitted in ${before.state}`).toBe(admissible);
        } else {
          expect(decision.allowed, `${event.kind} refused in ${before.state}`).toBe(true);
        }
        if (!decision.allowed) {
          expect(decision.error.code).toBe('FSM_BLOCKED');
          expect(decision.error.recoverable).toBe(true);
          expect(decision.error.rule).toBe(expected?.rule);
          // A blocked write changes no state, verification flag or call in flight.
          const now = after();
          expect(now.state).toBe(before.state);
          expect(now.context.readAfterWrite).toBe(before.context.readAfterWrite);
          expect(now.context.inFlight).toEqual(before.context.inFlight);
          if (before.state === 'VERIFYING') {
            // The counter counts, and never waives: however high, the write was refused.
            expect(now.context.consecutiveVerifyBlocks).toBe(before.context.consecutiveVerifyBlocks + 1);
          }
        }
        return;
      }
      case 'tool.succeeded':
      case 'tool.failed': {
        guard.record(call!, event.type === 'tool.succeeded' ? 'success' : 'error', recordOptionsOf(event));
        const now = after();
        if (!before.context.readAfterWrite && now.context.readAfterWrite && recordOptionsOf(event) === undefined) {
          // Evidence must touch the target (DESIGN §5.4): the call verifying the write touches its targets.
          const admitted = before.context.inFlight.find((c) => c.key === `id:${event.callId}`);
          const reads = admitted !== undefined ? (admitted.targets ?? []) : (event.targets ?? []);
          expect(touchesWritten(reads, now.context.writeTargets), 'an off-target read verified the write').toBe(true);
        }
        // An unknown place is never established, nor a verification target (issue 24).
        expect([...now.context.establishedTargets, ...now.context.writeTargets].filter((t) => t.startsWith('?/'))).toEqual([]);
        return;
      }
      case 'answer.requested': {
        // An answer claiming a change (target paths): the loop gives the guard its text.
        const claiming = event.claims !== undefined;
        const decision = guard.finalAnswer(claiming ? CLAIM_PATH_ANSWER : undefined);
        const unverified = before.state === 'VERIFYING' && !before.context.readAfterWrite;
        const inFlight = before.state === 'WRITING' || writeInFlight(before.context);
        // No final answer while a write is unverified or in flight, nor one claiming a change to a place no
        // write touched (issue 28 item 2); otherwise it is allowed.
        expect(decision.allowed, `final answer in ${before.state}`).toBe(!unverified && !inFlight && !claiming);
        expect(decision.allowed).toBe(expected?.allowed);
        if (!decision.allowed) expect(decision.error.rule).toBe(expected?.rule);
        expect(guard.state).toBe(before.state);
        return;
      }
      case 'verification.completed': {
        const completed = guard.completeVerification();
        // CompleteVerification ends VERIFYING exactly when a later read verified the write
        // and no other write is in flight.
        const verified = before.state === 'VERIFYING' && before.context.readAfterWrite && !writeInFlight(before.context);
        expect(completed, `verification completed from ${before.state}`).toBe(verified);
        expect(guard.state).toBe(verified ? 'READING' : before.state);
        return;
      }
      case 'session.reset':
        guard.reset();
        expect(guard.state).toBe('RESOLVING');
        return;
      case 'session.resetKeepingProgress':
        guard.resetKeepProgress();
        // The target is kept; a session that never read any (a write recorded unchecked) has none: RESOLVING.
        expect(guard.state).toBe(before.state === 'RESOLVING' || before.context.lastReadAt === null ? 'RESOLVING' : 'READING');
        // DESIGN §1: the original's own test; the established targets are the target it keeps.
        expect(guard.context.wroteThisEpisode).toBe(false);
        expect(guard.context.establishedTargets).toEqual(before.context.establishedTargets);
        return;
      case 'clock.ticked':
        // Time only (the adapter has no tick): every pending recovery has aged out.
        expect(guard.context.pendingRecoveries).toEqual({});
        return;
    }
  }

  /** After a step: the adapter holds the machine's session, and the path's abstract state. */
  matches(pathState: SafetySnapshot): void {
    const model = this.model.getSnapshot();
    const sut = { value: this.guard.state, context: this.guard.context } as unknown as SafetySnapshot;
    expect(sut.value).toBe(model.value);
    expect(timeless(sut.context)).toBe(timeless(model.context));
    expect(this.key(sut)).toBe(this.key(pathState));
  }
}

type TestPath = ReturnType<typeof shortestPaths>[number];

function systemFor(strictFailedWrites: boolean, generator: Generator, targets = false): System {
  if (targets) return new System(strictFailedWrites, abstractTargetState, true);
  return new System(strictFailedWrites, generator === 'shortest' ? abstractSafetyState : abstractDecisionState);
}

/** A shortest path, through the TestModel's own runner (`path.test`). */
async function replayTestPath(path: TestPath, strictFailedWrites: boolean, targets: boolean): Promise<void> {
  const system = systemFor(strictFailedWrites, 'shortest', targets);
  const step = ({ event }: { event: { type: string } }) => system.step(event as SafetyEvent);
  await (path as ReturnType<ReturnType<typeof createTestModel>['getShortestPaths']>[number]).test({
    events: {
      'tool.requested': step,
      'tool.succeeded': step,
      'tool.failed': step,
      'answer.requested': step,
      'verification.completed': step,
      'session.reset': step,
      'session.resetKeepingProgress': step,
      'clock.ticked': step,
    },
    states: { '*': (snapshot) => system.matches(snapshot as SafetySnapshot) },
  });
}

/** A simple path, step by step; a failure names the path. */
function replaySteps(path: StepsOf, strictFailedWrites: boolean): void {
  const system = systemFor(strictFailedWrites, 'simple');
  try {
    for (const step of path.steps.slice(1)) {
      system.step(step.event);
      system.matches(step.state);
    }
  } catch (error) {
    const events = path.steps.slice(1).map((step) => JSON.stringify(step.event));
    throw new Error(`${(error as Error).message}\npath:\n  ${events.join('\n  ')}`, { cause: error });
  }
}

describe('paths through the safety machine', () => {
  it(
    'reports the number of paths and the time to enumerate them',
    () => {
      for (const set of allPathSets()) {
        const steps = set.paths.reduce((sum, path) => sum + path.steps.length - 1, 0);
        console.info(
          `paths: ${set.generator} (${set.strictFailedWrites ? 'strict failed writes' : set.targets ? 'targets' : 'default'}): ` +
            `${set.paths.length} paths, ${steps} steps, enumerated in ${Math.round(set.ms)} ms`,
        );
      }
      // Each set ends in every state of the chart somewhere.
      for (const set of allPathSets()) {
        const ends = new Set(set.paths.map((path) => String(path.steps.at(-1)!.state.value)));
        expect([...ends].sort(), `${set.generator} paths end in`).toEqual(['READING', 'RESOLVING', 'VERIFYING', 'WRITING']);
      }
    },
    LONG_TEST_MS,
  );

  for (const spec of PATH_SETS) {
    const name = `${spec.generator} paths${spec.strictFailedWrites ? ' with strict failed writes' : ''}${spec.targets ? ' with targets' : ''}`;
    it(
      `every one of the ${name} holds the invariants at every step through the adapter`,
      async () => {
        const set = pathSet(spec);
        for (const path of set.paths) {
          if (set.generator === 'shortest') await replayTestPath(path, set.strictFailedWrites, set.targets);
          else replaySteps(path, set.strictFailedWrites);
        }
      },
      LONG_TEST_MS,
    );
  }

  it('the shortest paths reach every state the machine has', () => {
    const reached = new Set(allPathSets().flatMap((set) => set.paths.map((path) => String(path.state.value))));
    expect([...reached].sort()).toEqual(Object.keys(safetyMachine.root.states).sort());
  });

  it('the shortest paths refuse a third write in a row in VERIFYING (where an old version waived it)', () => {
    const shortest = allPathSets()
      .filter((set) => set.generator === 'shortest')
      .flatMap((set) => set.paths);
    const third = shortest.some((path) =>
      path.steps.some((step) => step.state.value === 'VERIFYING' && step.state.context.consecutiveVerifyBlocks === 3),
    );
    expect(third).toBe(true);
  });

  it('the paths take every structural transition of the machine', () => {
    const structural = structuralEdges();
    const taken = takenEdges();
    const untaken = [...structural].filter((edge) => !taken.has(edge));
    const unknown = [...taken].filter((edge) => !structural.has(edge));
    console.info(`transition coverage: ${structural.size - untaken.length} of ${structural.size} structural edges taken`);
    expect(unknown, 'taken edges missing from the structure').toEqual([]);
    expect(untaken, 'structural edges no generated path takes').toEqual([]);
  });
});
