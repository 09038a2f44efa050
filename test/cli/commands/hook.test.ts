import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { EXIT, main } from '../../../src/cli/main.js';
import { runHook } from '../../../src/hooks/run.js';
import { readHookSessions } from '../../../src/hooks/session-file.js';
import { buildHookExecutable } from '../../support/claude-code.js';

const root = mkdtempSync(join(tmpdir(), 'pulse-safety-hook-cli-'));
const stateDir = join(root, 'state');
const home = join(root, 'home');
const saved = { HOME: process.env.HOME, PULSE_SAFETY_STATE_DIR: process.env.PULSE_SAFETY_STATE_DIR };
beforeAll(() => {
  process.env.HOME = home;
  process.env.PULSE_SAFETY_STATE_DIR = stateDir;
});
afterAll(() => {
  for (const [key, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  rmSync(root, { recursive: true, force: true });
});

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

function project(name: string): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

describe('hook install and uninstall', () => {
  test('install merges into the project settings, says what to do next, installs once; uninstall gives the file back', async () => {
    const dir = project('merge');
    const file = join(dir, '.claude', 'settings.json');
    const original = '{\n  // mine\n  "hooks": { "Stop": [{ "hooks": [{ "type": "command", "command": "./done.sh" }] }] }\n}\n';
    mkdirSync(join(dir, '.claude'));
    writeFileSync(file, original);

    const first = await run('hook', 'install', 'claude-code', '--dir', dir, '--command', 'npx --no-install pulse-safety hook claude-code');
    expect(first.code).toBe(EXIT.clean);
    expect(first.out).toContain(`${file}: installed the claude-code hook for PreToolUse, PostToolUse`);
    expect(first.out).toMatch(/next: Claude Code runs project hooks only in a trusted workspace/);
    const installed = readFileSync(file, 'utf8');
    expect(installed).toContain('// mine');
    expect(installed).toMatch(/"onFailure": ?"block"/);

    const again = await run('hook', 'install', 'claude-code', '--dir', dir, '--command', 'npx --no-install pulse-safety hook claude-code');
    expect(again.out).toContain('already installed; nothing changed');
    expect(readFileSync(file, 'utf8')).toBe(installed);

    const removed = await run('hook', 'uninstall', 'claude-code', '--dir', dir);
    expect(removed.code).toBe(EXIT.clean);
    expect(readFileSync(file, 'utf8')).toBe(original);
  });

  test('--user writes under HOME; uninstall removes a file that held only our hooks', async () => {
    const result = await run('hook', 'install', 'codex', '--user');
    expect(result.code).toBe(EXIT.clean);
    const file = join(home, '.codex', 'hooks.json');
    const written = JSON.parse(readFileSync(file, 'utf8')) as { hooks: Record<string, [{ hooks: [{ command: string }] }]> };
    expect(Object.keys(written.hooks)).toEqual(['PreToolUse', 'PostToolUse', 'Stop', 'SessionStart']);
    // The user scope names this node and this copy by absolute paths.
    expect(written.hooks.PreToolUse![0].hooks[0].command).toContain(process.execPath);
    expect(result.out).toContain('/hooks');
    expect((await run('hook', 'uninstall', 'codex', '--user')).out).toContain('removed');
    expect(existsSync(file)).toBe(false);
  });

  test('bad input is one line, exit 2: an unknown host, both scopes, a settings file that is not JSON', async () => {
    const unknown = await run('hook', 'install', 'vim', '--dir', root);
    expect(unknown).toMatchObject({ code: EXIT.badInput });
    expect(unknown.err).toMatch(
      /^pulse-safety hook install: unknown host 'vim': one of claude-code, gemini-cli, codex, cursor, copilot\n$/,
    );
    expect((await run('hook', 'install', 'codex', '--user', '--project')).code).toBe(EXIT.badInput);
    const dir = project('broken');
    mkdirSync(join(dir, '.gemini'));
    writeFileSync(join(dir, '.gemini', 'settings.json'), '{ "hooks": ');
    const broken = await run('hook', 'install', 'gemini-cli', '--dir', dir);
    expect(broken.code).toBe(EXIT.badInput);
    expect(broken.err).toMatch(/settings\.json: not valid JSON/);
    expect(readFileSync(join(dir, '.gemini', 'settings.json'), 'utf8')).toBe('{ "hooks": ');
  });
});

describe('hook status and reset', () => {
  test('status --json shows a session made through runHook; reset removes it', async () => {
    const payload = {
      session_id: 'cli-s1',
      transcript_path: '/t.jsonl',
      cwd: '/repo',
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'rm -rf /repo/x' },
      tool_use_id: 'w1',
    };
    const output = await runHook('claude-code', JSON.stringify(payload), { stateDir, env: {} });
    expect(output.stdout).toContain('FSM_BLOCKED');

    const status = await run('hook', 'status', '--json');
    expect(status.code).toBe(EXIT.clean);
    const parsed = JSON.parse(status.out) as {
      stateDir: string;
      sessions: { sessionId: string; state: string; decisions: { rule?: string }[] }[];
    };
    expect(parsed.stateDir).toBe(resolve(stateDir));
    expect(parsed.sessions).toEqual([
      expect.objectContaining({ sessionId: 'cli-s1', state: 'RESOLVING', host: 'claude-code', cwd: '/repo' }),
    ]);
    expect(parsed.sessions[0]!.decisions.at(-1)).toMatchObject({ rule: 'no-target' });
    expect((await run('hook', 'status')).out).toContain('claude-code cli-s1: RESOLVING');

    expect((await run('hook', 'reset')).code).toBe(EXIT.badInput);
    expect((await run('hook', 'reset', 'claude-code')).code).toBe(EXIT.badInput);
    expect(await run('hook', 'reset', 'claude-code', 'cli-s1')).toMatchObject({
      code: EXIT.clean,
      out: 'removed the claude-code session cli-s1\n',
    });
    expect((await run('hook', 'reset', 'claude-code', 'cli-s1')).code).toBe(EXIT.refused);
    expect(await readHookSessions(stateDir)).toEqual([]);
  });
});

/**
 * The package as a project installs it: `package.json` and a `dist/` built
 * from this checkout's sources by esbuild (`buildHookExecutable`, the layout
 * of `npm run build`), so `verify` runs the package's real hook executable.
 */
async function installedPackage(): Promise<{ dir: string; remove(): void }> {
  const build = await buildHookExecutable();
  const dir = mkdtempSync(join(tmpdir(), 'pulse-safety-package-'));
  symlinkSync(resolve('package.json'), join(dir, 'package.json'));
  symlinkSync(build.dir, join(dir, 'dist'), 'dir');
  return {
    dir,
    remove: () => {
      rmSync(dir, { recursive: true, force: true });
      build.remove();
    },
  };
}

describe('hook verify against a real install', () => {
  test('not installed, or a hook that allows everything: exit 1 with the reason', async () => {
    const dir = project('verify-none');
    const none = await run('hook', 'verify', 'claude-code', '--dir', dir);
    expect(none.code).toBe(1);
    expect(none.out).toMatch(
      /^FAILED: no pulse-safety hook for PreToolUse in .*settings\.json: run `pulse-safety hook install claude-code`/,
    );

    // A hook command that answers nothing: the host goes on, the write would run.
    await run('hook', 'install', 'claude-code', '--dir', dir, '--command', 'cat > /dev/null # pulse-safety hook claude-code');
    const allowing = await run('hook', 'verify', 'claude-code', '--dir', dir);
    expect(allowing.code).toBe(1);
    expect(allowing.out).toMatch(/^FAILED: the canary write `rm -rf .*pulse-safety-canary-.*` was ALLOWED/);
  });

  test('in a project that has the package, the default install is verified: the canary write refused, the read allowed', async () => {
    const dir = project('verify-real');
    const pkg = await installedPackage();
    onTestFinished(() => pkg.remove());
    // The project has pulse-safety-fsm installed: its node_modules holds the package, its .bin the executable.
    mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
    symlinkSync(pkg.dir, join(dir, 'node_modules', 'pulse-safety-fsm'));
    symlinkSync(join('..', 'pulse-safety-fsm', 'dist', 'src', 'bin.js'), join(dir, 'node_modules', '.bin', 'pulse-safety'));
    const install = await run('hook', 'install', 'claude-code', '--dir', dir);
    expect(install.out).toContain('command: "$CLAUDE_PROJECT_DIR"/node_modules/.bin/pulse-safety hook claude-code');

    const verify = await run('hook', 'verify', 'claude-code', '--dir', dir, '--json');
    const result = JSON.parse(verify.out) as { ok: boolean; write: { verdict: string; reason: string }; read: { verdict: string } };
    expect(result.write.verdict).toBe('deny');
    expect(result.write.reason).toContain('FSM_BLOCKED');
    expect(result.read.verdict).toBe('allow');
    expect(result.ok).toBe(true);
    expect(verify.code).toBe(0);
    // The canary session is gone, and nothing else was left in the state directory.
    expect(await readHookSessions(stateDir)).toEqual([]);
  }, 240_000);
});
