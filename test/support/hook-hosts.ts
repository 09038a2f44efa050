/**
 * Helpers of the tests that run a coding agent's real binary with
 * `pulse-safety hook <host>` as its hook: the hook command bundled from the
 * sources (esbuild, packages left external so they resolve from this
 * project's node_modules), the agents' binaries from node_modules, and a
 * child process run to its end without blocking the test's own scripted
 * model server.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Bundles `src/bin.ts` into `test-output/<name>/bin.js` and its chunks (inside the
 * project, so its packages resolve from node_modules) and returns the
 * command line that runs `pulse-safety hook <host>` with this Node.
 * @throws when the bundle cannot be built.
 */
export async function bundleHookCommand(name: string, host: string): Promise<string> {
  const dir = join(ROOT, 'test-output', name);
  mkdirSync(dir, { recursive: true });
  const outfile = join(dir, 'bin.js');
  // Split at dynamic imports, as the built package is: the hook's fast path loads only the hook's modules.
  await build({
    entryPoints: { bin: join(ROOT, 'src/bin.ts') },
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    outdir: dir,
    outExtension: { '.js': '.js' },
    logLevel: 'silent',
  });
  return `${JSON.stringify(process.execPath)} ${JSON.stringify(outfile)} hook ${host}`;
}

/**
 * The agent's binary in node_modules/.bin, or a reason it is missing. Under
 * `CI=true` a missing binary is an error the test must report as a failure.
 */
export function agentBinary(name: string): { path: string; missing?: undefined } | { path?: undefined; missing: string } {
  const path = join(ROOT, 'node_modules', '.bin', name);
  return existsSync(path) ? { path } : { missing: `${path} is not installed (npm ci installs it)` };
}

/** True when the tests run under CI (`CI=true`): a missing real part fails there, never skips. */
export const UNDER_CI = process.env.CI === 'true';

/** What a finished child process left. */
export interface Finished {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `command args` to its end (stdin closed), asynchronously, so a
 * server of the same process keeps answering it. Killed after `timeoutMs`
 * (its result then has `signal: 'SIGKILL'`).
 */
export function runToEnd(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr });
    });
  });
}

/** An environment for an agent: this process's PATH and locale, nothing else of the user's; `extra` on top. */
export function isolatedEnv(home: string, extra: Record<string, string>): NodeJS.ProcessEnv {
  const keep = ['PATH', 'LANG', 'LC_ALL', 'TERM', 'TMPDIR', 'SYSTEMROOT'];
  const env: NodeJS.ProcessEnv = {};
  for (const key of keep) if (process.env[key] !== undefined) env[key] = process.env[key];
  return {
    ...env,
    HOME: home,
    XDG_STATE_HOME: join(home, '.local', 'state'),
    XDG_CONFIG_HOME: join(home, '.config'),
    NO_COLOR: '1',
    ...extra,
  };
}
