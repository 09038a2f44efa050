/**
 * The toy agent loop (examples/toy-agent-loop.ts) against every path of the
 * safety machine. Importing the example test that ships in the package
 * (examples/toy-agent-loop.paths.test.ts, outside this suite's `test/`
 * folder) registers its tests here: one call at a time and calls in
 * parallel. The README tells users to copy that file, by its path in the
 * installed package. The tests below reuse its `drive` and `replay` for what
 * the shipped test leaves out: strict failed writes, and a broken loop that
 * the replay must catch (so the replay can fail).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { drive, replay } from '../../examples/toy-agent-loop.paths.test.js';
import { ToyAgentLoop } from '../../examples/toy-agent-loop.js';
import { getShortestSafetyPaths, getSimpleSafetyPaths } from '../../src/testing/index.js';

describe('the shipped example test', () => {
  it('is the one README.md tells users to copy', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    expect(readme).toContain('node_modules/pulse-safety-fsm/examples/toy-agent-loop.paths.test.ts');
  });
});

describe('the toy agent loop, beyond the shipped test', () => {
  it('enforces every decision on every shortest and simple path with strict failed writes', () => {
    const options = { strictFailedWrites: true };
    const paths = [...getShortestSafetyPaths(options), ...getSimpleSafetyPaths(options)];
    for (const path of paths) replay(path, options);
    expect(paths.length).toBeGreaterThan(100);
  });

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
    for (const earlier of path.steps.slice(0, refused)) {
      now = earlier.event.at;
      drive(loop, earlier);
    }
    const step = path.steps[refused]!;
    now = step.event.at;
    expect(() => drive(loop, step)).toThrow();
  });
});
