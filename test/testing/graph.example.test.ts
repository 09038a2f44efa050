/**
 * examples/xstate-graph.ts: `@xstate/graph`'s `getShortestPaths`,
 * `getSimplePaths` and `createTestModel` on the raw `safetyMachine` with
 * the options of `pulse-safety-fsm/testing`, each run here within five
 * seconds (vitest's per-test timeout: a traversal that never ends, as
 * without the options, fails the test), and the copy of the program in
 * docs/testing.md kept the same.
 *
 * Spec: DESIGN.md §3 (the event vocabulary the options generate).
 */
import { describe, expect, it } from 'vitest';
import { shortestPaths, simplePaths, testSessionGuard } from '../../examples/xstate-graph.js';
import { docPage, programOf } from '../support/examples.js';

/** Each example's budget: generous for a loaded machine, far below a traversal that never ends. */
const EXAMPLE_MS = 5_000;

describe('examples/xstate-graph.ts', () => {
  it(
    'getShortestPaths ends, reaching all four states',
    () => {
      const paths = shortestPaths();
      expect(new Set(paths.map((path) => path.state.value))).toEqual(new Set(['RESOLVING', 'READING', 'WRITING', 'VERIFYING']));
    },
    EXAMPLE_MS,
  );

  it(
    'getShortestPaths gives every event its time, and every tool event its call id, tool and kind',
    () => {
      const events = shortestPaths().flatMap((path) => path.steps.slice(1).map((step) => step.event));
      expect(events.filter((event) => typeof event.at !== 'number')).toEqual([]);
      const tools = events.filter((event) => event.type.startsWith('tool.'));
      expect(tools.filter((event) => !('callId' in event && 'tool' in event && 'kind' in event))).toEqual([]);
    },
    EXAMPLE_MS,
  );

  it(
    'getSimplePaths ends, reaching all four states',
    () => {
      const paths = simplePaths();
      expect(new Set(paths.map((path) => path.state.value))).toEqual(new Set(['RESOLVING', 'READING', 'WRITING', 'VERIFYING']));
    },
    EXAMPLE_MS,
  );

  it(
    'every createTestModel path passes through the session guard',
    async () => {
      await expect(testSessionGuard()).resolves.toBeGreaterThan(100);
    },
    EXAMPLE_MS,
  );

  it(
    'every createTestModel path passes through a guard with strict failed writes, the model built with the same rule',
    async () => {
      await expect(testSessionGuard({ strictFailedWrites: true })).resolves.toBeGreaterThan(100);
    },
    EXAMPLE_MS,
  );

  it(
    'every createTestModel path passes through a guard without auto-completion, the model built with the same rule',
    async () => {
      await expect(testSessionGuard({ autoCompleteVerification: false })).resolves.toBeGreaterThan(100);
    },
    EXAMPLE_MS,
  );

  it(
    'the createTestModel paths catch a guard that decides otherwise (strict failed writes on the guard only)',
    async () => {
      await expect(testSessionGuard({}, { strictFailedWrites: true })).rejects.toThrow(/^guard \[.*\], model \[/);
    },
    EXAMPLE_MS,
  );

  it('is the program docs/testing.md shows', () => {
    const program = programOf('examples/xstate-graph.ts', 'testing').replaceAll("'../src/testing/index.js'", "'pulse-safety-fsm/testing'");
    expect(docPage('testing.md')).toContain(program);
  });
});
