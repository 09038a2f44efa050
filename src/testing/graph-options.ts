/**
 * Options for `@xstate/graph`'s own traversals on the raw `safetyMachine`
 * (`shortestPathsGraphOptions`, `simplePathsGraphOptions`,
 * `testModelGraphOptions`): the same event sets and state keys as
 * `getShortestSafetyPaths` and `getSimpleSafetyPaths`, for a project that
 * walks the graph itself.
 */
import { z } from 'zod';
import type { SafetyEvent, SafetyInput } from '../../machines/safety.types.js';
import {
  abstractDecisionState,
  abstractSafetyState,
  abstractTargetState,
  targetCoverageKey,
  transitionCoverageKey,
} from './abstract-state.js';
import {
  MODEL_TIME,
  safetyEventCases,
  SHORTEST_PATH_CASES,
  SIMPLE_PATH_CASES,
  TARGET_PATH_CASES,
  type EventCaseSet,
} from './event-cases.js';
import { optionsSchema } from './paths.js';
import type { SafetyPathOptions, SafetySnapshot } from './types.js';

/**
 * Options of the `@xstate/graph` traversals on the raw `safetyMachine`
 * (`shortestPathsGraphOptions`, `simplePathsGraphOptions`,
 * `testModelGraphOptions`): the machine's settings, the tool names, and
 * whether the loop is turn-based. See `SafetyPathOptions` for each.
 */
export type SafetyGraphOptions = Pick<
  SafetyPathOptions,
  'strictFailedWrites' | 'confirmDestructive' | 'autoCompleteVerification' | 'tools' | 'targets' | 'turnBased' | 'includeUncheckedOutcomes'
> & {
  /**
   * What the shortest paths cover: `states` (default), a shortest path to
   * every abstract state (`abstractSafetyState`); `transitions`, to every
   * abstract state through every transition that can enter it
   * (`transitionCoverageKey`), as the project's own path tests walk it:
   * about ten times the paths.
   */
  coverage?: 'states' | 'transitions';
};

/**
 * What `getShortestPaths`, `getSimplePaths` and `createTestModel` of
 * `@xstate/graph` take on `safetyMachine`: the machine's input, the events
 * to try from each snapshot (`safetyEventCases`: every event carries `at`,
 * tool events `callId`, `tool` and `kind`), and a finite state key with its
 * counters capped (`abstractSafetyState` and kin). Event times are model
 * times: every event at 0 but a clock jump, at `RECOVERY_TTL_MS` + 1; a
 * system under test needs a clock of its own that moves a millisecond a
 * step and past the TTL at each `clock.ticked` (`getShortestSafetyPaths`
 * re-times its paths instead). Verification completes by itself, as the
 * machine's input and `createSessionGuard` default to; with
 * `autoCompleteVerification: false` (input and events), only a
 * `verification.completed` step completes it: create the guard you test
 * the same way.
 */
export interface SafetyTraversalOptions {
  /** The machine's input: `strictFailedWrites`, `confirmDestructive` and `autoCompleteVerification` (default true) as the options say. */
  input: SafetyInput;
  /** The events tried from a snapshot (`safetyEventCases` over the options and the generator's case set). */
  events: (snapshot: SafetySnapshot) => SafetyEvent[];
  /** The finite vertex key: an abstract state, or with `coverage: 'transitions'` the state and the transition into it. */
  serializeState: (snapshot: SafetySnapshot, event: SafetyEvent | undefined, previous?: SafetySnapshot) => string;
}

const graphOptionsSchema = optionsSchema
  .unwrap()
  .pick({
    strictFailedWrites: true,
    confirmDestructive: true,
    autoCompleteVerification: true,
    tools: true,
    targets: true,
    turnBased: true,
    includeUncheckedOutcomes: true,
  })
  .extend({ coverage: z.enum(['states', 'transitions']).optional() })
  .optional();

/**
 * Checks graph options (or undefined, for the defaults).
 * @throws TypeError naming every bad option, as `parseOptions` does.
 */
function parseGraphOptions(options: unknown, name: string): SafetyGraphOptions {
  const parsed = graphOptionsSchema.safeParse(options);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) =>
      issue.path.length === 0 ? issue.message : `${issue.path.join('.')}: ${issue.message}`,
    );
    throw new TypeError(`invalid ${name} options: ${problems.join('; ')}`);
  }
  return parsed.data ?? {};
}

/** The traversal options of a parsed option set over an event case set and a state key. */
function traversalOptions(
  options: SafetyGraphOptions,
  cases: EventCaseSet,
  serializeState: SafetyTraversalOptions['serializeState'],
): SafetyTraversalOptions {
  const { coverage: _coverage, ...rest } = options;
  const autoCompleteVerification = options.autoCompleteVerification !== false;
  const pathOptions: SafetyPathOptions = { ...rest, autoCompleteVerification };
  return {
    input: {
      strictFailedWrites: options.strictFailedWrites === true,
      confirmDestructive: options.confirmDestructive === true,
      autoCompleteVerification,
    },
    events: (snapshot) => safetyEventCases(snapshot, pathOptions, cases),
    serializeState,
  };
}

/**
 * Options for `getShortestPaths(safetyMachine, ...)` of `@xstate/graph`:
 * the event cases of `getShortestSafetyPaths` (`SHORTEST_PATH_CASES`, or
 * `TARGET_PATH_CASES` with `targets`) over `abstractSafetyState`
 * (`abstractTargetState` with targets), or with `coverage: 'transitions'`
 * over `transitionCoverageKey` (`targetCoverageKey`). Unlike
 * `getShortestSafetyPaths`, the paths keep the `xstate.init` step, model
 * times, and paths that are a prefix of another.
 *
 * @throws TypeError for options that are not `SafetyGraphOptions`.
 */
export function shortestPathsGraphOptions(options?: SafetyGraphOptions): SafetyTraversalOptions {
  const parsed = parseGraphOptions(options, 'shortest paths graph');
  const transitions = parsed.coverage === 'transitions';
  if (parsed.targets === true) {
    return traversalOptions(parsed, TARGET_PATH_CASES, transitions ? targetCoverageKey : (snapshot) => abstractTargetState(snapshot));
  }
  return traversalOptions(parsed, SHORTEST_PATH_CASES, transitions ? transitionCoverageKey : (snapshot) => abstractSafetyState(snapshot));
}

/**
 * Options for `getSimplePaths(safetyMachine, ...)` of `@xstate/graph`: the
 * event cases of `getSimpleSafetyPaths` (`SIMPLE_PATH_CASES`) over
 * `abstractDecisionState`. `targets`, `includeUncheckedOutcomes` and
 * `coverage` are ignored (see `getSimpleSafetyPaths`).
 *
 * @throws TypeError for options that are not `SafetyGraphOptions`.
 */
export function simplePathsGraphOptions(options?: SafetyGraphOptions): SafetyTraversalOptions {
  const parsed = parseGraphOptions(options, 'simple paths graph');
  const realizable = { ...parsed, targets: false, includeUncheckedOutcomes: false };
  return traversalOptions(realizable, SIMPLE_PATH_CASES, (snapshot) => abstractDecisionState(snapshot));
}

/**
 * Options for `createTestModel(safetyMachine, ...)` of `@xstate/graph`.
 * `createTestModel` adds a bare `{ type }` event for every event type a
 * state handles and the event cases leave out, and such an event (no `at`,
 * no tool) is one no system under test can replay. So these options try
 * every event type the machine handles in every snapshot: the shortest
 * paths' cases with `includeUncheckedOutcomes` (an outcome can always be
 * recorded, of a call in flight or, as a record-only loop does, of one
 * never checked) and `verification.completed` (with auto-completion, a step
 * that changes nothing: the machine has completed already, or cannot);
 * hence no `turnBased`
 * (while a turn-based loop waits for its call, nothing else happens: use
 * `getShortestSafetyPaths({ turnBased: true })`). `model.getShortestPaths()`
 * then reaches every abstract state, as `shortestPathsGraphOptions` does.
 *
 * @throws TypeError for options that are not `SafetyGraphOptions` without
 *   `turnBased` (a `turnBased: true` is refused: it would bring bare events back).
 */
export function testModelGraphOptions(
  options?: Omit<SafetyGraphOptions, 'turnBased' | 'includeUncheckedOutcomes'>,
): SafetyTraversalOptions {
  const parsed = parseGraphOptions(options, 'test model graph');
  if (parsed.turnBased === true) {
    throw new TypeError(
      'invalid test model graph options: turnBased: createTestModel would add bare events a turn-based loop cannot replay; use getShortestSafetyPaths({ turnBased: true })',
    );
  }
  const traversal = shortestPathsGraphOptions({ ...parsed, includeUncheckedOutcomes: true });
  if (parsed.autoCompleteVerification === false) return traversal;
  // VERIFYING handles verification.completed even when the machine completes by itself:
  // offered, it is a step that changes nothing (the guard's completeVerification() is false).
  return {
    ...traversal,
    events: (snapshot) => [...traversal.events(snapshot), { type: 'verification.completed', at: MODEL_TIME }],
  };
}
