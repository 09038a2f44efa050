/**
 * `@xstate/graph` on the raw `safetyMachine`, with the event sets and state
 * keys of `pulse-safety-fsm/testing`: shortest paths, simple paths, and a
 * test model whose every path is replayed through the session guard. Its
 * test (test/graph.example.test.ts) runs each function and checks that
 * docs/testing.md shows this program.
 *
 * Without the options, `getShortestPaths(safetyMachine)` never ends: the
 * default events carry only `type`, and the machine's counters grow
 * without bound. The options give events with `at`, `callId`, `tool` and
 * `kind`, and a state key with the counters capped.
 *
 * In your own code import from `pulse-safety-fsm` and
 * `pulse-safety-fsm/testing` rather than `../src/index.js` and `../src/testing/index.js`.
 */
import { createTestModel, getShortestPaths, getSimplePaths } from '@xstate/graph';
import { createSessionGuard, safetyMachine, type SafetyEvent, type SessionGuardOptions } from '../src/index.js';
import {
  abstractSafetyState,
  CLOCK_JUMP_MS,
  recordOptionsOf,
  shortestPathsGraphOptions,
  simplePathsGraphOptions,
  testModelGraphOptions,
  toolCallOf,
} from '../src/testing/index.js';

/** A shortest path to every abstract state (state, flags, calls in flight, recoveries; counters capped). */
export function shortestPaths() {
  return getShortestPaths(safetyMachine, shortestPathsGraphOptions());
}

/** Every cycle-free path through the states that decide refusals, for a loop that checks each call first. */
export function simplePaths() {
  return getSimplePaths(safetyMachine, simplePathsGraphOptions());
}

/** The rules the model and the guard must share, or the guard is tested against another machine. */
export type SharedRules = Pick<SessionGuardOptions, 'strictFailedWrites' | 'confirmDestructive' | 'autoCompleteVerification'>;

/**
 * The test model's shortest paths, each replayed through a fresh session
 * guard, which must be in the path's abstract state after every step.
 * `rules` reach both the model and the guard; `guardOptions` (default the
 * same rules) only the guard. Resolves to the number of paths; rejects at
 * the first step that differs.
 */
export async function testSessionGuard(rules: SharedRules = {}, guardOptions: SessionGuardOptions = rules): Promise<number> {
  const model = createTestModel(safetyMachine, testModelGraphOptions(rules));
  const paths = model.getShortestPaths();
  for (const path of paths) {
    let now = 1_700_000_000_000; // the guard's clock: 1 ms a step, past the recovery TTL at a clock jump
    const guard = createSessionGuard({ ...guardOptions, now: () => now });
    const replay = ({ event }: { event: { type: string } }) => {
      const e = event as SafetyEvent;
      now += e.type === 'clock.ticked' ? CLOCK_JUMP_MS : 1;
      const call = toolCallOf(e); // { id, name, kind } of a tool event
      if (e.type === 'tool.requested') guard.check(call!);
      if (e.type === 'tool.succeeded') guard.record(call!, 'success', recordOptionsOf(e));
      if (e.type === 'tool.failed') guard.record(call!, 'error');
      if (e.type === 'answer.requested') guard.finalAnswer();
      if (e.type === 'verification.completed') guard.completeVerification();
      if (e.type === 'session.reset') guard.reset();
      if (e.type === 'session.resetKeepingProgress') guard.resetKeepProgress();
    };
    await path.test({
      events: {
        'tool.requested': replay,
        'tool.succeeded': replay,
        'tool.failed': replay,
        'answer.requested': replay,
        'verification.completed': replay,
        'session.reset': replay,
        'session.resetKeepingProgress': replay,
        'clock.ticked': replay,
      },
      states: {
        '*': (snapshot) => {
          const got = abstractSafetyState({ value: guard.state, context: guard.context });
          if (got !== abstractSafetyState(snapshot)) throw new Error(`guard ${got}, model ${abstractSafetyState(snapshot)}`);
        },
      },
    });
  }
  return paths.length;
}
