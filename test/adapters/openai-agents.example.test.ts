/**
 * examples/openai-agents.ts run as its own Node process (a complete program, no
 * network: a scripted model plays the conversation), and the copy of it in
 * docs/adapters/openai-agents.md kept the same program.
 */
import { describe, expect, it } from 'vitest';
import { docPage, programOf, runExample } from '../support/examples.js';

describe('examples/openai-agents.ts', () => {
  it('runs the conversation: the early write refused, the run resumed after the refused answer, the verified answer given', async () => {
    const { code, stdout, stderr } = await runExample('examples/openai-agents.ts');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout.trim().split('\n')).toEqual([
      'user: Restart web-01.',
      'call c1: restart',
      '  -> refused: FSM_BLOCKED',
      'call c2: get_status',
      '  -> web-01: running',
      'call c3: restart',
      '  -> web-01: restarted',
      'answer: "Restarted web-01."',
      'user: Your final answer was not given (FSM_BLOCKED, rule unverified-write): the change you made has not been checked since it was made. Gather evidence of its effect, then answer. This is recoverable: the session goes on.',
      'call c4: get_status',
      '  -> web-01: running',
      'answer: "web-01 was restarted and is running."',
      'final output: web-01 was restarted and is running.',
      'session: READING, refused answers: 1',
    ]);
  });

  it('is the program docs/adapters/openai-agents.md shows', () => {
    const doc = docPage('adapters/openai-agents.md');
    expect(doc).toContain(programOf('examples/openai-agents.ts', 'openai-agents'));
  });
});
