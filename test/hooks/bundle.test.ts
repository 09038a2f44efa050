/**
 * The hook bundle (scripts/bundle-hook.mjs) run by src/hooks/bundle.ts, in
 * real Node processes: the bundle answers a Claude Code PreToolUse as the
 * hook's modules do (a first Read allowed, a Bash read allowed with
 * tree-sitter-bash loaded from node_modules, `rm -rf` refused with
 * FSM_BLOCKED, a psql SELECT allowed with libpg-query loaded), writes its code
 * cache on the first run and uses it on the next, and runs without one when
 * the cache is off. The bundle is built into a directory of the test's own,
 * beside a link to the project's node_modules (where the parsers are).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
let dir = '';
let bundle = '';
/** src/hooks/bundle.ts as one ES module, so the child processes run plain JavaScript. */
let loader = '';

beforeAll(async () => {
  dir = mkdtempSync(join(os.tmpdir(), 'pulse-safety-bundle-'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  bundle = join(dir, 'hook', 'hook.cjs');
  const { bundleHook } = (await import(pathToFileURL(join(ROOT, 'scripts/bundle-hook.mjs')).href)) as {
    bundleHook(outfile: string): Promise<void>;
  };
  await bundleHook(bundle);
  loader = join(dir, 'loader.mjs');
  await build({
    entryPoints: [join(ROOT, 'src/hooks/bundle.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile: loader,
    logLevel: 'warning',
  });
}, 120_000);

afterAll(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

/** A Claude Code PreToolUse payload of session `session`. */
function preToolUse(session: string, tool: string, input: Record<string, unknown>, id: string): string {
  return JSON.stringify({
    session_id: session,
    transcript_path: join(dir, 'transcript.jsonl'),
    cwd: dir,
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    tool_name: tool,
    tool_input: input,
    tool_use_id: id,
  });
}

/** Runs one hook event through `runHookBundle` in a fresh Node process; stdout, exit code and how the code cache was used. */
function runBundled(payload: string, env: Record<string, string>): { stdout: string; status: number | null; cache: string } {
  const script =
    `import { runHookBundle } from ${JSON.stringify(pathToFileURL(loader).href)};\n` +
    `const use = await runHookBundle(${JSON.stringify(bundle)}, 'claude-code');\n` +
    `process.stderr.write('cache:' + use + '\\n');\n`;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    input: payload,
    encoding: 'utf8',
    env: { ...process.env, ...env },
  });
  return { stdout: result.stdout, status: result.status, cache: /cache:(\w+)/.exec(result.stderr)?.[1] ?? result.stderr };
}

describe('the hook bundle', () => {
  it('answers as the gate does, loading the parsers a call needs, and writes then uses its code cache', () => {
    const state = mkdtempSync(join(dir, 'state-'));
    const cache = join(dir, 'cache');
    const env = { PULSE_SAFETY_STATE_DIR: state, PULSE_SAFETY_CACHE_DIR: cache };
    const first = runBundled(preToolUse('s1', 'Read', { file_path: join(dir, 'a.txt') }, 'toolu_1'), env);
    expect(first).toMatchObject({ status: 0, stdout: '', cache: 'written' }); // allowed: Claude Code's silence
    expect(readdirSync(cache).filter((name) => name.endsWith('.v8cache'))).toHaveLength(1);

    const bash = runBundled(preToolUse('s1', 'Bash', { command: `ls -la ${dir} && git -C ${dir} status` }, 'toolu_2'), env);
    expect(bash).toMatchObject({ status: 0, stdout: '', cache: 'used' });

    const rm = runBundled(preToolUse('s2', 'Bash', { command: 'rm -rf ~/x' }, 'toolu_3'), env);
    expect(rm.status).toBe(0);
    const answer = JSON.parse(rm.stdout) as { hookSpecificOutput: { permissionDecision: string; permissionDecisionReason: string } };
    expect(answer.hookSpecificOutput.permissionDecision).toBe('deny');
    expect(answer.hookSpecificOutput.permissionDecisionReason).toContain('FSM_BLOCKED');

    const sql = runBundled(preToolUse('s3', 'Bash', { command: 'psql -d shop -c "select id from orders where id = 1"' }, 'toolu_4'), env);
    expect(sql).toMatchObject({ status: 0, stdout: '', cache: 'used' });
  }, 180_000);

  it('runs without a code cache when it is off', () => {
    const state = mkdtempSync(join(dir, 'state-'));
    const result = runBundled(preToolUse('s4', 'Read', { file_path: join(dir, 'b.txt') }, 'toolu_5'), {
      PULSE_SAFETY_STATE_DIR: state,
      PULSE_SAFETY_CODE_CACHE: '0',
    });
    expect(result).toMatchObject({ status: 0, stdout: '', cache: 'off' });
  }, 120_000);
});
