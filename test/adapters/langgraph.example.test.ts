/**
 * examples/langgraph.ts run as its own Node process (a complete program, no
 * network: a scripted model plays the conversation), and the copy of it in
 * docs/adapters/langgraph.md kept the same program.
 */
import { describe, expect, it } from 'vitest';
import { docPage, programOf, runExample } from '../support/examples.js';

describe('examples/langgraph.ts', () => {
  it('streams the graph: the deletion outside the listed directory refused, the refused claim never shown, the verified answer given and checkpointed', async () => {
    const { code, stdout, stderr } = await runExample('examples/langgraph.ts');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).not.toContain('Deleted notes/a.txt.');
    expect(stdout.trim().split('\n')).toEqual([
      'agent: calls list_files other',
      'tools: tool other/c.txt',
      'agent: calls delete_file notes/a.txt',
      'tools: refused: FSM_BLOCKED unknown-target',
      'agent: calls list_files notes',
      'tools: tool notes/a.txt, notes/b.txt',
      'agent: calls delete_file notes/a.txt',
      'tools: tool deleted notes/a.txt',
      'agent: human Your final answer was not given (FSM_BLOCKED, rule unverified-write): the change you made has not been checked since it was made. Gather evidence of its effect, then answer. This is recoverable: the session goes on.',
      'agent: calls list_files notes',
      'tools: tool notes/b.txt',
      'agent: ai notes/a.txt is deleted; notes/b.txt is left.',
      'final answer: notes/a.txt is deleted; notes/b.txt is left.',
      'checkpointed session: READING, refused answers: 1',
    ]);
  });

  it('is the program docs/adapters/langgraph.md shows', () => {
    const doc = docPage('adapters/langgraph.md');
    expect(doc).toContain(programOf('examples/langgraph.ts', 'langgraph'));
  });
});
