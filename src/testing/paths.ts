/**
 * The paths themselves (`getShortestSafetyPaths`, `getSimpleSafetyPaths`):
 * the options checked, the graph walked with `@xstate/graph` over an event
 * case set and an abstraction, the paths that are a prefix of another left
 * out, and each path re-timed and replayed through the machine for the
 * state, decision and recovery expected at every step.
 */
import { getShortestPaths, getSimplePaths } from '@xstate/graph';
import { createActor, type ActorLogic } from 'xstate';
import { z } from 'zod';
import { safetyMachine } from '../../machines/safety.machine.js';
import { MAX_TIME_MS, RECOVERY_TTL_MS } from '../../machines/safety.policy.js';
import type { GateDecidedEvent, RecoverySucceededEvent, SafetyEvent, SafetyInput, SafetyState } from '../../machines/safety.types.js';
import { abstractDecisionState, targetCoverageKey, transitionCoverageKey } from './abstract-state.js';
import { safetyEventCases, SHORTEST_PATH_CASES, SIMPLE_PATH_CASES, TARGET_PATH_CASES, type EventCaseSet } from './event-cases.js';
import type { SafetyPath, SafetyPathOptions, SafetyPathStep, SafetySnapshot } from './types.js';

/** Default time of a path's first step (epoch ms): 2023-11-14T22:13:20Z. */
export const DEFAULT_PATH_START = 1_700_000_000_000;

/** How far the last step of a path may be after its first (epoch ms): one day, far above any generated path. */
export const MAX_PATH_SPAN_MS = 86_400_000;

const START_RANGE = `must be an epoch-millisecond number within ±${MAX_TIME_MS - MAX_PATH_SPAN_MS}`;
const toolName = z.string().min(1, 'must be a non-empty tool name');
/** The schema of `SafetyPathOptions` (or undefined), strict: an unknown key is an error (`parseOptions`; `graph-options.ts` picks from it). */
export const optionsSchema = z
  .strictObject({
    tools: z
      .strictObject({
        resolve: toolName.optional(),
        read: toolName.optional(),
        write: toolName.optional(),
        user_input: toolName.optional(),
        neutral: toolName.optional(),
      })
      .optional(),
    strictFailedWrites: z.boolean().optional(),
    autoCompleteVerification: z.boolean().optional(),
    includeUncheckedOutcomes: z.boolean().optional(),
    targets: z.boolean().optional(),
    confirmDestructive: z.boolean().optional(),
    turnBased: z.boolean().optional(),
    startAt: z
      .number()
      .min(-(MAX_TIME_MS - MAX_PATH_SPAN_MS), START_RANGE)
      .max(MAX_TIME_MS - MAX_PATH_SPAN_MS, START_RANGE)
      .optional(),
  })
  .optional();

/**
 * Checks path options (or undefined, for the defaults).
 *
 * @throws TypeError naming every bad option, e.g.
 *   `invalid path options: strictFailedWrites: expected boolean, received string`.
 */
function parseOptions(options: unknown): SafetyPathOptions {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) =>
      issue.path.length === 0 ? issue.message : `${issue.path.join('.')}: ${issue.message}`,
    );
    throw new TypeError(`invalid path options: ${problems.join('; ')}`);
  }
  return parsed.data ?? {};
}

/**
 * The machine as path logic. It completes verification by itself when its
 * input says `autoCompleteVerification` (its default, as `createSessionGuard`'s),
 * so paths need no wrapper for it.
 */
const pathLogic = safetyMachine as unknown as ActorLogic<SafetySnapshot, SafetyEvent, SafetyInput | undefined>;

function label(event: SafetyEvent): string {
  switch (event.type) {
    case 'tool.requested':
      return `check ${event.callId ?? event.tool}`;
    case 'tool.succeeded':
      return `ok ${event.callId ?? event.tool}`;
    case 'tool.failed':
      return `fail ${event.callId ?? event.tool}`;
    case 'answer.requested':
      return event.claims === undefined ? 'answer' : 'answer claiming a change';
    case 'verification.completed':
      return 'complete verification';
    case 'session.reset':
      return 'reset';
    case 'session.resetKeepingProgress':
      return 'reset keeping progress';
    case 'clock.ticked':
      return 'clock +10 min';
  }
}

/**
 * Re-times a model event list on a growing clock (one millisecond a step,
 * ten minutes and one millisecond more at each clock jump) and replays it
 * through an actor of the path logic to find the state, decision and
 * recovery expected at each step.
 */
function toSafetyPath(
  modelEvents: readonly SafetyEvent[],
  logic: ActorLogic<SafetySnapshot, SafetyEvent, SafetyInput | undefined>,
  input: SafetyInput,
  startAt: number,
): SafetyPath {
  const actor = createActor(logic, { input });
  const emitted: { type: string }[] = [];
  actor.on('*', (event) => emitted.push(event));
  actor.start();
  let jumps = 0;
  const steps = modelEvents.map((modelEvent, index): SafetyPathStep => {
    if (modelEvent.type === 'clock.ticked') jumps += 1;
    const event = { ...modelEvent, at: startAt + index + jumps * (RECOVERY_TTL_MS + 1) };
    emitted.length = 0;
    actor.send(event);
    const decided = emitted.find((e): e is GateDecidedEvent => e.type === 'gate.decided');
    const recovered = emitted.find((e): e is RecoverySucceededEvent => e.type === 'recovery.succeeded');
    return {
      event,
      state: actor.getSnapshot().value as SafetyState,
      decision: decided === undefined ? null : { allowed: decided.allowed, rule: decided.rule },
      recoveryId: recovered?.recovery.recoveryId ?? null,
    };
  });
  const end = actor.getSnapshot().value as SafetyState;
  actor.stop();
  const labels = steps.map((step) =>
    step.decision === null ? label(step.event) : `${label(step.event)} ${step.decision.allowed ? 'allowed' : 'blocked'}`,
  );
  return { description: `${end}: ${labels.join(' → ') || '(start)'}`, steps };
}

/** Keeps the paths that are no prefix of another, in their order; drops repeats. */
function maximalPaths(eventLists: SafetyEvent[][]): SafetyEvent[][] {
  const keyOf = (events: readonly SafetyEvent[]) => events.map((event) => JSON.stringify(event));
  const prefixes = new Set<string>();
  for (const events of eventLists) {
    const keys = keyOf(events);
    for (let length = 0; length < keys.length; length += 1) prefixes.add(keys.slice(0, length).join('\n'));
  }
  const seen = new Set<string>();
  return eventLists.filter((events) => {
    const key = keyOf(events).join('\n');
    if (prefixes.has(key) || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

type Generator = typeof getShortestPaths;

function generate(
  generator: Generator,
  serializeState: (snapshot: SafetySnapshot, event: SafetyEvent | undefined, previous?: SafetySnapshot) => string,
  options: SafetyPathOptions,
  cases: EventCaseSet,
): SafetyPath[] {
  const startAt = options.startAt ?? DEFAULT_PATH_START;
  const logic = pathLogic;
  const input: SafetyInput = {
    strictFailedWrites: options.strictFailedWrites === true,
    confirmDestructive: options.confirmDestructive === true,
    autoCompleteVerification: options.autoCompleteVerification !== false,
  };
  const statePaths = generator(logic, {
    input,
    events: (snapshot: SafetySnapshot) => safetyEventCases(snapshot, options, cases),
    serializeState,
  });
  // @xstate/graph paths start with an `xstate.init` step; the events that follow are the path.
  const eventLists = statePaths.map((path) => path.steps.slice(1).map((step) => step.event));
  return maximalPaths(eventLists).map((events) => toSafetyPath(events, logic, input, startAt));
}

/**
 * Shortest paths to every abstract state (`abstractSafetyState`), reached
 * through every transition that can enter it, and through every recovery and
 * expiry (`transitionCoverageKey`), so together they take every transition
 * of the machine that the event cases can reach. Paths that are a prefix of
 * another are left out. With `targets`, the same over `abstractTargetState`
 * (`targetCoverageKey`).
 *
 * @throws TypeError when `options` is not an object of the known options
 *   with their types (an unknown key, a non-boolean flag, an empty tool name,
 *   `startAt` outside ±(`MAX_TIME_MS` − `MAX_PATH_SPAN_MS`)).
 */
export function getShortestSafetyPaths(options?: SafetyPathOptions): SafetyPath[] {
  const parsed = parseOptions(options);
  return parsed.targets === true
    ? generate(getShortestPaths, targetCoverageKey, parsed, TARGET_PATH_CASES)
    : generate(getShortestPaths, transitionCoverageKey, parsed, SHORTEST_PATH_CASES);
}

/**
 * Every simple path (no abstract state twice) from a fresh session over the
 * decision abstraction (`abstractDecisionState`): every order in which a
 * loop that checks each call before recording it can pass through the
 * states that decide refusals (`includeUncheckedOutcomes` is ignored: see
 * `abstractDecisionState`). Paths that are a prefix of another are left out.
 *
 * @throws TypeError as `getShortestSafetyPaths` does, for bad options.
 */
export function getSimpleSafetyPaths(options?: SafetyPathOptions): SafetyPath[] {
  const realizable = { ...parseOptions(options), includeUncheckedOutcomes: false };
  return generate(getSimplePaths, (snapshot) => abstractDecisionState(snapshot), realizable, SIMPLE_PATH_CASES);
}
