/**
 * The types the testing entry's modules share: the safety machine's
 * snapshot and what the abstractions read of a session, the path options,
 * and a path with its steps and expected decisions. Types only: importing
 * them loads nothing.
 */
import type { SnapshotFrom } from 'xstate';
import type { safetyMachine } from '../../machines/safety.machine.js';
import type { BlockRule, SafetyEvent, SafetyState, ToolKind } from '../../machines/safety.types.js';

/** A snapshot of the safety machine. */
export type SafetySnapshot = SnapshotFrom<typeof safetyMachine>;

/**
 * What the abstractions read of a session: a snapshot's state value and
 * context, or a session guard's (`{ value: guard.state, context: guard.context }`),
 * so a system under test can be compared with a path by its abstract state.
 */
export type SessionView = Pick<SafetySnapshot, 'value' | 'context'>;

/** How paths are generated. Validated: unknown keys and wrong types throw (see `getShortestSafetyPaths`). */
export interface SafetyPathOptions {
  /** Tool name per kind (default `DEFAULT_PATH_TOOLS`). Events carry the kind as well. */
  tools?: Partial<Record<ToolKind, string>>;
  /** Generate for a guard created with `strictFailedWrites` (DESIGN.md §3.8); default false. */
  strictFailedWrites?: boolean;
  /**
   * Generate for a guard that completes verification itself after a verifying
   * read, as `createSessionGuard` does by default; default true. With false,
   * paths contain `verification.completed` steps (call `completeVerification()`).
   */
  autoCompleteVerification?: boolean;
  /**
   * Also record outcomes of calls the gate never admitted, as a loop in the
   * original's record-only style does; default false, so every path is one
   * a loop that records only the calls it ran can replay. Shortest paths
   * only. No path checks an id while a call of it is in flight: the guard
   * refuses that with a TypeError (`SessionGuard.check`).
   */
  includeUncheckedOutcomes?: boolean;
  /**
   * Time of the first step (epoch ms); default `DEFAULT_PATH_START`. Within
   * ±`MAX_TIME_MS` less one day, so every step's time is one the guard's
   * clock may read (a path spans well under a day).
   */
  startAt?: number;
  /**
   * Also generate calls with targets (`PATH_TARGETS`: a directory and a file
   * under it, or none), a destructive write, and writes whose result
   * verifies itself (DESIGN.md §1, §5); default false. Shortest paths only
   * (the simple paths would number in the millions): `getSimpleSafetyPaths`
   * ignores it. Replay a step's call with `toolCallOf` (targets and
   * destructive flag given) and its outcome with `recordOptionsOf`.
   */
  targets?: boolean;
  /** Generate for a guard created with `confirmDestructive` (DESIGN.md §5.6); default false. */
  confirmDestructive?: boolean;
  /**
   * Generate for a turn-based agent loop, one that checks, runs and records
   * each call before anything else happens; default false. While a call is
   * in flight, the only next step is its outcome (success or failure): no
   * second call, final answer, reset, verification or clock jump comes
   * between a call's check and its record, so no path has two calls in
   * flight. With `includeUncheckedOutcomes`, an outcome without a check is
   * recorded only when no call is in flight. The write-in-flight refusals
   * (WRITING) cannot happen in such a loop, so these paths do not reach them.
   */
  turnBased?: boolean;
}

/** A decision the gate must make at a step; `rule` is null when allowed. */
export interface ExpectedDecision {
  allowed: boolean;
  rule: BlockRule | null;
}

/** One step of a path. */
export interface SafetyPathStep {
  /**
   * The event to replay. `event.at` (epoch ms) is what the loop's clock must
   * read during the step; times only grow, and a `clock.ticked` step jumps
   * past the ten-minute recovery TTL (nothing to call: just move the clock).
   * Tool events carry `callId`, `tool` and `kind`.
   */
  event: SafetyEvent;
  /** The session's state after the step. */
  state: SafetyState;
  /** For `tool.requested` and `answer.requested`, the gate's decision; null for other events. */
  decision: ExpectedDecision | null;
  /** The pending recovery this step's success clears (a recovery), as its id; else null. */
  recoveryId: string | null;
}

/** A path from a fresh session. */
export interface SafetyPath {
  /** Where it ends and how, e.g. `READING: check resolve-1 allowed → ok resolve-1`. */
  description: string;
  steps: SafetyPathStep[];
}
