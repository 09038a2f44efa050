/**
 * Replaying every path of the safety machine through an agent loop: the
 * example to copy for your own loop (examples/toy-agent-loop.ts here).
 *
 * `getShortestSafetyPaths()` and `getSimpleSafetyPaths()` (from
 * `pulse-safety-fsm/testing`) give event lists with the state and decision
 * the gate must reach at each step. The test maps each event to what the
 * model or the tools do to the loop:
 *
 * | event                          | the loop                                    |
 * |--------------------------------|---------------------------------------------|
 * | `tool.requested`               | the model asks for the call                 |
 * | `tool.succeeded` / `tool.failed` | the tool's output comes back (`Error...` when failed) |
 * | `answer.requested`             | the model gives its final answer            |
 * | `session.reset`                | the conversation is cleared                 |
 * | `session.resetKeepingProgress` | it is cleared keeping pinned items          |
 * | `clock.ticked`                 | nothing: ten minutes pass                   |
 *
 * and the loop's clock reads `event.at` during each step. The paths assume
 * the guard's defaults (verification completed automatically, failed writes
 * not strict); pass `{ strictFailedWrites: true }` to both sides otherwise.
 * Then, at every step, the test checks what the loop did: a refused call
 * never started and the model got `FSM_BLOCKED`; an answer was delivered
 * only when allowed; the session is in the expected state.
 */
import { describe, expect, it } from 'vitest';
import { ToyAgentLoop } from '../../examples/toy-agent-loop.js';
import {
  getShortestSafetyPaths,
  getSimpleSafetyPaths,
  toolCallOf,
  type SafetyPath,
  type SafetyPathOptions,
  type SafetyPathStep,
} from '../../src/testing.js';

/** Replays one path through a fresh loop, checking each step against the path. */
function replay(path: SafetyPath, options: SafetyPathOptions = {}): void {
  let now = path.steps[0]?.event.at ?? 0;
  const loop = new ToyAgentLoop({ now: () => now, strictFailedWrites: options.strictFailedWrites === true });
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

/** One step: act on the loop as the event says, then check the loop's answer. */
function drive(loop: ToyAgentLoop, step: SafetyPathStep): void {
  const { event } = step;
  const call = toolCallOf(event);
  switch (event.type) {
    case 'tool.requested': {
      const messages = loop.transcript.length;
      const request = loop.requestTool({ id: call!.id!, name: call!.name, kind: call!.kind });
      expect(request.started).toBe(step.decision!.allowed);
      if (request.started) {
        expect(loop.runningCalls).toContain(call!.id);
        expect(loop.transcript).toHaveLength(messages);
      } else {
        expect(request.result.error.code).toBe('FSM_BLOCKED');
        expect(request.result.error.recoverable).toBe(true);
        expect(loop.runningCalls).not.toContain(call!.id);
        const sent = loop.transcript.at(-1)!;
        expect(sent.role).toBe('tool');
        expect(JSON.parse(sent.content)).toMatchObject({ ok: false, error: { code: 'FSM_BLOCKED' } });
      }
      return;
    }
    case 'tool.succeeded':
    case 'tool.failed': {
      const output = event.type === 'tool.succeeded' ? `${call!.name}: done` : `Error: ${call!.name} timed out`;
      const { recovered } = loop.finishTool(call!.id!, output);
      expect(recovered?.recoveryId ?? null).toBe(step.recoveryId);
      expect(loop.transcript.at(-1)).toEqual({ role: 'tool', callId: call!.id, name: call!.name, content: output });
      return;
    }
    case 'answer.requested': {
      const { delivered } = loop.answer('All done.');
      expect(delivered).toBe(step.decision!.allowed);
      expect(loop.transcript.at(-1)!.role).toBe(delivered ? 'user' : 'system');
      return;
    }
    case 'session.reset':
      loop.clearContext({ keepPinned: false });
      return;
    case 'session.resetKeepingProgress':
      loop.clearContext({ keepPinned: true });
      return;
    case 'clock.ticked':
      return; // only the clock moves
    case 'verification.completed':
      throw new Error('the default paths complete verification automatically and never contain this step');
  }
}

describe('the toy agent loop replays every path of the safety machine', () => {
  for (const strictFailedWrites of [false, true]) {
    const options: SafetyPathOptions = { strictFailedWrites };
    const name = strictFailedWrites ? ' with strict failed writes' : '';

    it(`lets through exactly what the machine allows on every shortest path${name}`, () => {
      const paths = getShortestSafetyPaths(options);
      for (const path of paths) replay(path, options);
      expect(paths.length).toBeGreaterThan(100);
    });

    it(`lets through exactly what the machine allows on every simple path${name}`, () => {
      const paths = getSimpleSafetyPaths(options);
      for (const path of paths) replay(path, options);
      expect(paths.length).toBeGreaterThan(100);
    });
  }

  it('catches a loop that lets a refused call run anyway', () => {
    // A broken loop: it ignores the gate's refusal and runs the call.
    class Careless extends ToyAgentLoop {
      override requestTool(call: Parameters<ToyAgentLoop['requestTool']>[0]) {
        const result = super.requestTool(call);
        return result.started ? result : ({ started: true } as const);
      }
    }
    const path = getShortestSafetyPaths().find((p) => p.steps.some((s) => s.decision?.allowed === false))!;
    const refused = path.steps.findIndex((s) => s.decision?.allowed === false && s.event.type === 'tool.requested');
    let now = 0;
    const loop = new Careless({ now: () => now });
    // Replay up to the refused call, then the careless loop claims it started.
    for (const earlier of path.steps.slice(0, refused)) {
      now = earlier.event.at;
      drive(loop, earlier);
    }
    const step = path.steps[refused]!;
    now = step.event.at;
    expect(() => drive(loop, step)).toThrow();
  });
});
