/**
 * Model-based test of an agent loop: every path of the safety machine from
 * `pulse-safety-fsm/testing`, replayed through the loop
 * (examples/toy-agent-loop.ts), checking at every step that the loop lets
 * through exactly what the gate decides. Copy this file for your own loop
 * (it ships in the package, beside the toy loop), replace `ToyAgentLoop`
 * with your loop, and map each event to what the model or the tools do:
 *
 * | event                            | the loop                                   |
 * |----------------------------------|--------------------------------------------|
 * | `tool.requested`                 | the model asks for the call                |
 * | `tool.succeeded` / `tool.failed` | the tool's output comes back               |
 * | `answer.requested`               | the model gives its final answer           |
 * | `session.reset`                  | the conversation is cleared                |
 * | `session.resetKeepingProgress`   | it is cleared keeping pinned items         |
 * | `clock.ticked`                   | nothing: the clock jumps ten minutes       |
 *
 * Your loop's clock must read `event.at` during each step. Pass every call
 * on with its `kind`, as `toolCallOf` gives it: then the guard classifies
 * nothing, and the paths need no catalog (the default tool names are the
 * Pulse catalog's, and `neutral` is `calculate`, which the Pulse catalog
 * does not list: classified by name it would be a write).
 *
 * A loop that runs one call at a time (checks, runs and records each call
 * before the next model turn) replays `TURN_BASED` only: the other paths
 * run calls in parallel (check A, check B, record B, record A), which such
 * a loop cannot do. The toy loop can, so it replays both.
 *
 * In your own code import from `pulse-safety-fsm/testing` rather than
 * `../src/testing/index.js`.
 */
import { describe, expect, it } from 'vitest';
import {
  getShortestSafetyPaths,
  getSimpleSafetyPaths,
  toolCallOf,
  type SafetyPath,
  type SafetyPathOptions,
  type SafetyPathStep,
} from '../src/testing/index.js';
import { ToyAgentLoop, type ToyAgentLoopOptions } from './toy-agent-loop.js';

/** The paths of a loop that runs one call at a time. */
const TURN_BASED: SafetyPathOptions = { turnBased: true };
/** The paths of a loop that may run calls in parallel (each call with its own id). */
const PARALLEL: SafetyPathOptions = {};

/** One step: act on the loop as the event says, then check what the loop did. */
export function drive(loop: ToyAgentLoop, step: SafetyPathStep): void {
  const { event } = step;
  const call = toolCallOf(event); // { id, name, kind } for tool events
  switch (event.type) {
    case 'tool.requested': {
      const request = loop.requestTool({ id: call!.id!, name: call!.name, kind: call!.kind });
      // A refused call never runs, and the model gets FSM_BLOCKED.
      expect(request.started).toBe(step.decision!.allowed);
      if (!request.started) expect(request.result.error.code).toBe('FSM_BLOCKED');
      expect(loop.runningCalls.includes(call!.id!)).toBe(request.started);
      return;
    }
    case 'tool.succeeded':
    case 'tool.failed': {
      const output = event.type === 'tool.succeeded' ? `${call!.name}: done` : `Error: ${call!.name} timed out`;
      const { recovered } = loop.finishTool(call!.id!, output);
      expect(recovered?.recoveryId ?? null).toBe(step.recoveryId);
      return;
    }
    case 'answer.requested':
      // The final answer reaches the user only when the gate allows it.
      expect(loop.answer('All done.').delivered).toBe(step.decision!.allowed);
      return;
    case 'session.reset':
      loop.clearContext({ keepPinned: false });
      return;
    case 'session.resetKeepingProgress':
      loop.clearContext({ keepPinned: true });
      return;
    case 'clock.ticked':
      return; // only the clock moves
    case 'verification.completed':
      throw new Error('paths complete verification automatically (the default) and never contain this step');
  }
}

/**
 * Replays one path through a fresh loop; a failure names the step and the
 * path. Give the loop the options the paths were made with, e.g.
 * `{ strictFailedWrites: true }`.
 */
export function replay(path: SafetyPath, loopOptions: Omit<ToyAgentLoopOptions, 'now'> = {}): void {
  let now = 0;
  const loop = new ToyAgentLoop({ ...loopOptions, now: () => now });
  for (const [index, step] of path.steps.entries()) {
    now = step.event.at;
    try {
      drive(loop, step);
      expect(loop.guard.state).toBe(step.state);
    } catch (error) {
      throw new Error(`step ${index} of "${path.description}": ${(error as Error).message}`, { cause: error });
    }
  }
}

describe('the toy agent loop replays every path of the safety machine', () => {
  for (const [name, options] of [
    ['one call at a time', TURN_BASED],
    ['calls in parallel', PARALLEL],
  ] as const) {
    it(`enforces every decision on every shortest and simple path, ${name}`, () => {
      const paths = [...getShortestSafetyPaths(options), ...getSimpleSafetyPaths(options)];
      for (const path of paths) replay(path);
      expect(paths.length).toBeGreaterThan(100);
    });
  }
});
