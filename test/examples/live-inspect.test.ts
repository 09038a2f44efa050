/**
 * The live inspection example (examples/live-inspect.ts) run as its own Node
 * process with no visualizer listening: it says it cannot connect and exits
 * non-zero instead of playing its session into the void. Its streaming to a
 * running visualizer is tested in a browser (test/visualizer/browser-live.test.ts).
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REGISTER_TS = fileURLToPath(new URL('../support/ts-register.mjs', import.meta.url));

/** A port on 127.0.0.1 that nothing listens on: one the system handed out, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Runs the example to its end (killed after 20 s, so a hang fails the test, not the run); resolves to its exit code and output. */
function runExample(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', REGISTER_TS, 'examples/live-inspect.ts', ...args], { cwd: ROOT, timeout: 20_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
    child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the live inspection example', () => {
  it('reports in one line that it cannot connect, plays no step and exits 1 when no visualizer listens', async () => {
    const url = `ws://127.0.0.1:${await closedPort()}/inspect`;
    const { code, stdout, stderr } = await runExample(['--url', url, '--step-ms', '0']);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toMatch(
      new RegExp(`^live-inspect: cannot connect to ${url} \\(.*ECONNREFUSED.*\\); start the visualizer first \\(npm start\\)\\n$`),
    );
  });
});
