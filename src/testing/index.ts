/**
 * Model-based testing for agent loops (the `pulse-safety-fsm/testing` entry):
 * paths through the safety machine's graph, each an event list with the
 * state and the gate's decision expected at every step, so an application
 * can replay every path through its own agent loop and check that the loop
 * enforces what the machine decides.
 *
 * The graph is made finite by an abstraction of the machine's context (see
 * `abstractSafetyState`), then walked with `@xstate/graph`: shortest paths
 * reach every abstract state through every transition that enters it;
 * simple paths take every cycle-free route between the states that decide
 * anything (see `abstractDecisionState`).
 *
 * With `targets`, calls also name one of two targets or none, writes may
 * be destructive and results may verify themselves (DESIGN.md §1, §5), so
 * the paths reach the target-aware rules as well. With `turnBased`, the
 * paths are those of a loop that runs one call at a time.
 *
 * For `@xstate/graph` itself on the raw machine, `shortestPathsGraphOptions`,
 * `simplePathsGraphOptions` and `testModelGraphOptions` give the same event
 * sets and state keys as `getShortestPaths`, `getSimplePaths` and
 * `createTestModel` options.
 *
 * Spec: ASSISTANT_SAFETY.md (whole); DESIGN.md §3 (correlation by call id,
 * WRITING, strict failed writes, time as an input, auto-completed
 * verification), §1 and §5 (targets, destructive and self-verifying writes).
 */
// Every parser loaded before this entry's classifiers are used (`classify/parsers.ts`).
import '../classify/eager.js';
export type { ExpectedDecision, SafetyPath, SafetyPathOptions, SafetyPathStep, SafetySnapshot, SessionView } from './types.js';
export {
  CLOCK_JUMP_MS,
  DEFAULT_PATH_TOOLS,
  PATH_TARGETS,
  UNKNOWN_PATH_TARGET,
  CLAIM_PATH_ANSWER,
  safetyEventCases,
  SHORTEST_PATH_CASES,
  SIMPLE_PATH_CASES,
  TARGET_PATH_CASES,
  type EventCaseSet,
} from './event-cases.js';
export {
  abstractDecisionState,
  abstractSafetyState,
  abstractTargetState,
  selectedTransitions,
  targetCoverageKey,
  transitionCoverageKey,
} from './abstract-state.js';
export { DEFAULT_PATH_START, getShortestSafetyPaths, getSimpleSafetyPaths, MAX_PATH_SPAN_MS } from './paths.js';
export {
  shortestPathsGraphOptions,
  simplePathsGraphOptions,
  testModelGraphOptions,
  type SafetyGraphOptions,
  type SafetyTraversalOptions,
} from './graph-options.js';
export { recordOptionsOf, SELF_VERIFYING_RESULT, toolCallOf } from './calls.js';
