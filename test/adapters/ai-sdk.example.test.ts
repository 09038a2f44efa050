/**
 * examples/ai-sdk.ts run as its own Node process (a complete program, no
 * network: the SDK's mock model plays the script), and the copy of it in
 * docs/adapters/ai-sdk.md kept the same program.
 */
import { describe, expect, it } from 'vitest';
import { docPage, programOf, runExample } from '../support/examples.js';

describe('examples/ai-sdk.ts', () => {
  it('runs the conversation: the delete after listing another directory and the unverified claim refused, the verified answer streamed', async () => {
    const { code, stdout, stderr } = await runExample('examples/ai-sdk.ts');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout.trim().split('\n')).toEqual([
      'step 0: list_files {"path":"other"} -> other/c.txt',
      'step 1: delete_file {"path":"notes/a.txt"} -> refused: FSM_BLOCKED, unknown-target (notes/a.txt)',
      'step 2: list_files {"path":"notes"} -> notes/a.txt, notes/b.txt',
      'step 3: delete_file {"path":"notes/a.txt"} -> deleted notes/a.txt',
      'step 4: answer -> refused',
      'step 5: list_files {"path":"notes"} -> notes/b.txt',
      'step 6: answer -> allowed',
      'streamed: notes/a.txt is gone; notes/b.txt is left.',
      'session: READING, refused answers: 1',
    ]);
  });

  it('is the program docs/adapters/ai-sdk.md shows', () => {
    const doc = docPage('adapters/ai-sdk.md');
    expect(doc).toContain(programOf('examples/ai-sdk.ts', 'ai-sdk'));
  });
});
