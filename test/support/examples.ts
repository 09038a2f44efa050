/**
 * Running the example programs as their own Node processes, and reading them
 * as the docs pages show them (with the imports an app writes).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REGISTER_TS = fileURLToPath(new URL('./ts-register.mjs', import.meta.url));

/** Runs an example to its end (killed after 60 s, so a hang fails the test); its exit code and output. */
export function runExample(file: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
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
export function programOf(file: string, subpath: string): string {
  const source = readFileSync(new URL(file, new URL('../../', import.meta.url)), 'utf8');
  return source
    .slice(source.indexOf('\nimport ') + 1)
    .replaceAll("'../src/index.js'", "'pulse-safety-fsm'")
    .replaceAll(`'../src/adapters/${subpath}.js'`, `'pulse-safety-fsm/${subpath}'`)
    .replaceAll(`'../src/adapters/${subpath}/index.js'`, `'pulse-safety-fsm/${subpath}'`)
    .trim();
}

/**
 * A documentation page, to find an example in: `docs/<name>` (e.g.
 * `'adapters/ai-sdk.md'`), or the README itself for `'README.md'`. Throws
 * (ENOENT) when the page does not exist.
 */
export function docPage(name: string): string {
  const path = name === 'README.md' ? name : `docs/${name}`;
  return readFileSync(new URL(path, new URL('../../', import.meta.url)), 'utf8');
}
