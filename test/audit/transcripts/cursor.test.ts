/**
 * Cursor agent transcripts are not read (docs/audit.md "Formats"): their
 * format has no primary source, and third-party readers disagree on whether
 * tool results are in them. A file in the shape those readers describe
 * (`{ role, message: { content } }` lines, `turn_ended` markers) must be
 * refused as bad input, exit 2 naming the file and line, never audited as
 * clean: a `Shell` call that deletes, then an answer, would otherwise pass
 * as "nothing would have been refused" or be judged without its outcome.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { main } from '../../../src/cli/main.js';

const dir = mkdtempSync(join(tmpdir(), 'pulse-safety-cursor-log-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const lines = [
  { role: 'user', message: { content: [{ type: 'text', text: '<user_query>clean up</user_query>' }] } },
  {
    role: 'assistant',
    message: {
      content: [
        { type: 'text', text: 'Removing x.' },
        { type: 'tool_use', name: 'Shell', input: { command: 'rm -rf x' } },
      ],
    },
  },
  { role: 'assistant', message: { content: [{ type: 'text', text: 'Done.' }] } },
];

test.each([
  ['without turn markers', lines],
  ['with a turn_ended marker', [...lines, { type: 'turn_ended', status: 'success' }]],
])('a Cursor-shaped transcript %s is bad input (exit 2), not a clean audit', async (_, content) => {
  const path = join(dir, 'transcript.jsonl');
  writeFileSync(path, content.map((line) => JSON.stringify(line)).join('\n') + '\n');
  let out = '';
  let err = '';
  const code = await main(['audit', path], { out: (t) => (out += t), err: (t) => (err += t) });
  expect(code).toBe(2);
  expect(err).toContain(`${path}: line 1:`);
  expect(out).not.toContain('nothing would have been refused');
});
