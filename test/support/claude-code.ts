/**
 * Claude Code, the real binary, for tests: where it is, a build of this
 * repository's `pulse-safety` for its hooks to run, a throwaway project and
 * home for it, and one `claude -p` run against a scripted model
 * (scripted-anthropic.ts).
 *
 * The binary is `node_modules/.bin/claude` (npm `@anthropic-ai/claude-code`,
 * native, so it runs on Node 20). When it is missing the tests skip, saying
 * why; under `CI=true` they fail.
 *
 * The hook runs this repository's sources compiled to JavaScript by esbuild
 * (each file on its own, no bundling, the JSON catalogs copied beside them:
 * the layout of `dist/`), in a temporary directory whose `node_modules`
 * links to the repository's. A type-checked build (`npm run build`) takes
 * minutes on a small machine; the type check is `npm run typecheck`'s job.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** How the Claude Code tests get the binary. */
export type ClaudePlan = { kind: 'ready'; bin: string; version: string } | { kind: 'missing'; reason: string };

/** Decided when the test file loads (so `describe.skipIf` can use it): the binary and its version, or why there is none. */
export function claudePlan(): ClaudePlan {
  const bin = join(REPO_ROOT, 'node_modules', '.bin', 'claude');
  if (!existsSync(bin))
    return { kind: 'missing', reason: `no Claude Code binary at node_modules/.bin/claude (npm @anthropic-ai/claude-code)` };
  const probe = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, HOME: tmpdir() } });
  const version = /(\d+\.\d+\.\d+)/.exec(probe.stdout ?? '')?.[1];
  if (probe.status !== 0 || version === undefined) {
    return {
      kind: 'missing',
      reason: `node_modules/.bin/claude --version failed (${probe.error?.message ?? probe.stderr?.trim() ?? probe.status})`,
    };
  }
  return { kind: 'ready', bin, version };
}

/** ' (skipped: ...)' for a test title when Claude Code is missing and this is no CI run; '' otherwise. */
export function claudeSkipNote(plan: ClaudePlan): string {
  return plan.kind === 'missing' && process.env.CI !== 'true' ? ` (skipped: ${plan.reason})` : '';
}

/** The `.ts` files under `dir`, relative to the repository's root (no declaration files). */
function sources(dir: string, ext: string): string[] {
  return (readdirSync(join(REPO_ROOT, dir), { recursive: true }) as string[])
    .filter((file) => file.endsWith(ext) && !file.endsWith('.d.ts'))
    .map((file) => join(dir, file));
}

/**
 * Compiles `src/` and `machines/` into a new temporary directory with
 * esbuild (as `dist/` is laid out) and returns the path of its `bin.js`
 * (`<dir>/src/bin.js`); `remove()` deletes the directory.
 */
export async function buildHookExecutable(): Promise<{ bin: string; dir: string; remove(): void }> {
  const { build } = await import('esbuild');
  const dir = mkdtempSync(join(tmpdir(), 'pulse-safety-hook-build-'));
  const entryPoints = [...sources('src', '.ts'), ...sources('machines', '.ts')].map((file) => join(REPO_ROOT, file));
  await build({
    entryPoints,
    outdir: dir,
    outbase: REPO_ROOT,
    format: 'esm',
    platform: 'node',
    target: 'node20.19',
    bundle: false,
    logLevel: 'error',
  });
  for (const file of [...sources('src', '.json'), ...sources('machines', '.json')]) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    copyFileSync(join(REPO_ROOT, file), join(dir, file));
  }
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return { bin: join(dir, 'src', 'bin.js'), dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A Claude Code hook handler of `.claude/settings.json`. */
export interface CommandHook {
  type: 'command';
  command: string;
  args?: string[];
  timeout?: number;
  onFailure?: 'block' | 'continue';
}

/**
 * The hooks a project's `.claude/settings.json` gets for `pulse-safety hook
 * claude-code` run as `node <bin> hook claude-code` (exec form: `command`
 * and `args`, no shell): every tool before it runs (`onFailure: "block"`, so
 * a hook that crashes, is killed or times out refuses the call instead of
 * letting it through) and after, the stop, the session's start and end
 * (`timeout: 60`: Claude Code 2.1.332 cuts SessionEnd hooks off after 1.5 s
 * unless a handler asks for more, and a loaded machine needs more).
 * `preToolUse` replaces the before-tool handler (a test's own wrapper).
 */
export function hookSettings(bin: string, options: { preToolUse?: CommandHook } = {}): Record<string, unknown> {
  const handler: CommandHook = { type: 'command', command: process.execPath, args: [bin, 'hook', 'claude-code'] };
  const all = (hook: CommandHook): unknown[] => [{ matcher: '*', hooks: [hook] }];
  const plain = (hook: CommandHook): unknown[] => [{ hooks: [hook] }];
  return {
    hooks: {
      SessionStart: plain(handler),
      // Claude Code gives SessionEnd hooks 1.5 s in all unless a handler's `timeout` (seconds, up to 60) says more.
      SessionEnd: plain({ ...handler, timeout: 60 }),
      PreToolUse: all(options.preToolUse ?? { ...handler, onFailure: 'block' }),
      PostToolUse: all(handler),
      PostToolUseFailure: all(handler),
      Stop: plain(handler),
      SubagentStop: plain(handler),
    },
  };
}

/** A throwaway place for one run: `home` (the run's HOME), `project` (its working directory, with `.claude/settings.json`), `state` (the hook's state directory). */
export interface ClaudeSandbox {
  root: string;
  home: string;
  project: string;
  state: string;
  remove(): void;
}

/** Creates a sandbox whose project's `.claude/settings.json` is `settings`. */
export function claudeSandbox(settings: Record<string, unknown>): ClaudeSandbox {
  const root = mkdtempSync(join(tmpdir(), 'pulse-safety-claude-'));
  const home = join(root, 'home');
  const project = join(root, 'project');
  const state = join(root, 'state');
  for (const dir of [home, join(project, '.claude'), state]) mkdirSync(dir, { recursive: true });
  writeFileSync(join(project, '.claude', 'settings.json'), JSON.stringify(settings, null, 2));
  return { root, home, project, state, remove: () => rmSync(root, { recursive: true, force: true }) };
}

/** The outcome of one `claude -p` run. */
export interface ClaudeRun {
  exitCode: number | null;
  /** The `--output-format json` result (`result`, `num_turns`, `permission_denials`, ...), or null when stdout was not JSON. */
  result: Record<string, unknown> | null;
  stdout: string;
  stderr: string;
}

/** Options of `runClaude`. */
export interface RunClaudeOptions {
  bin: string;
  sandbox: ClaudeSandbox;
  /** The scripted model's URL (`ANTHROPIC_BASE_URL`). */
  baseUrl: string;
  prompt?: string;
  /** The session id (a UUID); default a new one. */
  sessionId?: string;
  /** More environment for Claude Code (and so for its hooks). */
  env?: Record<string, string>;
  /** Kill the run after this many ms (default 480 000): a hung run fails the test instead of hanging it. */
  killAfterMs?: number;
}

/**
 * Runs `claude -p <prompt> --output-format json --permission-mode acceptEdits
 * --allowedTools "Bash Read Write Edit Glob Grep"` in the sandbox's project,
 * with HOME the sandbox's (so no user settings are read), the scripted model,
 * a dummy API key, no nonessential traffic, and `PULSE_SAFETY_STATE_DIR` the
 * sandbox's state directory.
 */
export function runClaude(options: RunClaudeOptions): Promise<ClaudeRun & { sessionId: string }> {
  const sessionId = options.sessionId ?? randomUUID();
  const args = [
    '-p',
    options.prompt ?? 'go',
    '--output-format',
    'json',
    '--permission-mode',
    'acceptEdits',
    '--allowedTools',
    'Bash Read Write Edit Glob Grep',
    '--session-id',
    sessionId,
  ];
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: options.sandbox.home,
    TMPDIR: process.env.TMPDIR ?? tmpdir(),
    ANTHROPIC_BASE_URL: options.baseUrl,
    ANTHROPIC_API_KEY: 'dummy-key-for-the-scripted-model',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    PULSE_SAFETY_STATE_DIR: options.sandbox.state,
    ...options.env,
  };
  return new Promise((resolvePromise, reject) => {
    const child = spawn(options.bin, args, { cwd: options.sandbox.project, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.killAfterMs ?? 480_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (exitCode) => {
      clearTimeout(timer);
      let result: Record<string, unknown> | null;
      try {
        result = JSON.parse(stdout) as Record<string, unknown>;
      } catch {
        result = null;
      }
      resolvePromise({ exitCode, result, stdout, stderr, sessionId });
    });
  });
}
