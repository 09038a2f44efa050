/**
 * examples/ai-sdk.ts run as its own Node process (a complete program, no
 * network: the SDK's mock model plays the script), and the copy of it in
 * docs/adapters/ai-sdk.md kept the same program.
 */
import { describe, expect, it } from 'vitest';
import { docPage, programOf, runExample } from '../support/examples.js';

describe('examples/ai-sdk.ts', () => {
  it('runs the conversation: the early write and the unverified answer refused, the verified answer given', async () => {
    const { code, stdout, stderr } = await runExample('examples/ai-sdk.ts');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout.trim().split('\n')).toEqual([
      'step 0: restart -> refused: FSM_BLOCKED in RESOLVING',
      'step 1: get_status -> web-01: running',
      'step 2: restart -> web-01: restarted',
      'step 3: answer "Restarted web-01." -> refused',
      'step 4: get_status -> web-01: running',
      'step 5: answer "web-01 was restarted and is running." -> allowed',
      'answer: web-01 was restarted and is running.',
      'session: READING, refused answers: 1',
    ]);
  });

  it('is the program docs/adapters/ai-sdk.md shows', () => {
    const doc = docPage('adapters/ai-sdk.md');
    expect(doc).toContain(programOf('examples/ai-sdk.ts', 'ai-sdk'));
  });
});
