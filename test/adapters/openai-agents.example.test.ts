/**
 * examples/openai-agents.ts run as its own Node process (a complete program, no
 * network: a scripted model plays the conversation), and the copy of it in
 * docs/adapters/openai-agents.md kept the same program.
 */
import { describe, expect, it } from 'vitest';
import { docPage, programOf, runExample } from '../support/examples.js';

describe('examples/openai-agents.ts', () => {
  it('streams the run: the delete after a listing elsewhere refused, the claim before checking never shown, the verified answer', async () => {
    const { code, stdout, stderr } = await runExample('examples/openai-agents.ts');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout.trim().split('\n')).toEqual([
      'call c1: list_files {"path":"other"}',
      '  -> other/c.txt',
      'call c2: delete_file {"path":"notes/a.txt"}',
      '  -> refused: FSM_BLOCKED (unknown-target)',
      'call c3: list_files {"path":"notes"}',
      '  -> notes/a.txt notes/b.txt',
      'call c4: delete_file {"path":"notes/a.txt"}',
      '  -> deleted: true',
      'call c5: list_files {"path":"notes"}',
      '  -> notes/b.txt',
      'streamed text: "notes/a.txt is deleted; notes holds b.txt."',
      'final output: notes/a.txt is deleted; notes holds b.txt.',
      'session chat-1: READING, refused answers: 1',
    ]);
  });

  it('is the program docs/adapters/openai-agents.md shows', () => {
    const doc = docPage('adapters/openai-agents.md');
    expect(doc).toContain(programOf('examples/openai-agents.ts', 'openai-agents'));
  });
});
