/**
 * examples/parent-machine.ts run as its own Node process (an agent loop as
 * an XState statechart invoking the gate; scripted model, in-memory tools,
 * no network), and the copy of it in docs/xstate.md kept the same program.
 */
import { describe, expect, it } from 'vitest';
import { docPage, programOf, runExample } from '../support/examples.js';

describe('examples/parent-machine.ts', () => {
  it('routes every tool call and the answer through the gate: the early write and the unverified answer refused', async () => {
    const { code, stdout, stderr } = await runExample('examples/parent-machine.ts');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout.trim().split('\n')).toEqual([
      'restart -> refused: no-target in RESOLVING',
      'get_status -> web-01: running',
      'restart -> web-01: restarted',
      '  recovered: restart (refused 1 time(s) before)',
      'answer "Restarted web-01." -> refused: unverified-write in VERIFYING',
      'get_status -> web-01: running',
      'answer "web-01 was restarted and is running." -> allowed',
      'done: 2 refusals',
    ]);
  });

  it('is the program docs/xstate.md shows', () => {
    expect(docPage('xstate.md')).toContain(programOf('examples/parent-machine.ts', 'parent-machine'));
  });
});
