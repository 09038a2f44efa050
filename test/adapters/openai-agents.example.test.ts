/**
 * examples/openai-agents.ts run as its own Node process (a complete program, no
 * network: a scripted model plays the conversation), and the copy of it in
 * README.md kept the same program.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REGISTER_TS = fileURLToPath(new URL('../visualizer/support/ts-register.mjs', import.meta.url));

/** Runs an example to its end (killed after 60 s, so a hang fails the test); its exit code and output. */
function runExample(file: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', REGISTER_TS, file], { cwd: ROOT, timeout: 60_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
    child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The example's program from its first import, with the imports an app would write. */
function programOf(file: string, subpath: string): string {
  const source = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
  return source
    .slice(source.indexOf('\nimport ') + 1)
    .replaceAll("'../src/index.js'", "'pulse-safety-fsm'")
    .replaceAll(`'../src/adapters/${subpath}.js'`, `'pulse-safety-fsm/${subpath}'`)
    .trim();
}

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

  it('is the program README.md shows', () => {
    const doc = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    expect(doc).toContain(programOf('examples/openai-agents.ts', 'openai-agents'));
  });
});
