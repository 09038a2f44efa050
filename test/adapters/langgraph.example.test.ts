/**
 * examples/langgraph.ts run as its own Node process (a complete program, no
 * network: a scripted model plays the conversation), and the copy of it in
 * docs/adapters/langgraph.md kept the same program.
 */
import { describe, expect, it } from 'vitest';
import { docPage, programOf, runExample } from '../support/examples.js';

describe('examples/langgraph.ts', () => {
  it('runs the graph: the early write refused, the refused answer removed and sent back, the verified answer given and checkpointed', async () => {
    const { code, stdout, stderr } = await runExample('examples/langgraph.ts');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout.trim().split('\n')).toEqual([
      'agent: calls restart',
      'tools: tool refused: FSM_BLOCKED',
      'agent: calls get_status',
      'tools: tool web-01: running',
      'agent: calls restart',
      'tools: tool web-01: restarted',
      'agent: ai Restarted web-01.',
      'answer_gate: human Your final answer was not given (FSM_BLOCKED, rule unverified-write): the change you made has not been checked since it was made. Gather evidence of its effect, then answer. This is recoverable: the session goes on.',
      'agent: calls get_status',
      'tools: tool web-01: running',
      'agent: ai web-01 was restarted and is running.',
      'final answer: web-01 was restarted and is running.',
      'checkpointed session: READING, refused answers: 1',
    ]);
  });

  it('is the program docs/adapters/langgraph.md shows', () => {
    const doc = docPage('adapters/langgraph.md');
    expect(doc).toContain(programOf('examples/langgraph.ts', 'langgraph'));
  });
});
