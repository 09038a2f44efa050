/**
 * The package as users get it: `npm pack`, the tarball installed into an
 * empty project without optional dependencies, the main entry imported and
 * used. An app that uses none of the adapters installs none of the agent
 * SDKs (they are optional peer dependencies of their subpaths).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'pulse-safety-pack-'));
const app = join(work, 'app');
const npm = (args: string[], cwd: string) =>
  execFileSync('npm', args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false' },
  });

/** Runs an ES module snippet inside the installed app and returns what it prints. */
function inApp(code: string): string {
  return execFileSync(process.execPath, ['--input-type=module', '-e', code], { cwd: app, encoding: 'utf8' });
}

beforeAll(() => {
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')], { cwd: root });
  const [packed] = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--pack-destination', work], root)) as { filename: string }[];
  execFileSync('mkdir', [app]);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }));
  // --ignore-scripts: nothing of the package needs an install script (tree-sitter-bash is used as WebAssembly).
  npm(['install', join(work, packed!.filename), '--omit=optional', '--ignore-scripts', '--prefer-offline', '--no-package-lock'], app);
}, 300_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the packed package, installed without optional dependencies', () => {
  test('pulls in no agent SDK', () => {
    const modules = join(app, 'node_modules');
    for (const sdk of ['ai', '@openai/agents', '@langchain/langgraph', '@langchain/core', '@modelcontextprotocol/sdk']) {
      expect(existsSync(join(modules, sdk)), `${sdk} was installed`).toBe(false);
    }
    expect(readdirSync(modules)).toContain('pulse-safety-fsm');
  });

  test('the main entry gates a session and parses a shell command', () => {
    const out = inApp(`
      import { createSessionGuard, createCallClassifier, builtinCatalogs } from 'pulse-safety-fsm';
      const guard = createSessionGuard();
      const first = guard.check({ id: 'w', name: 'pulse_control', args: { action: 'restart' } });
      const bash = createCallClassifier(builtinCatalogs['claude-code'])('Bash', { command: 'ls && rm -rf build' }, { cwd: '/repo' });
      console.log(JSON.stringify({ allowed: first.allowed, code: first.allowed ? null : first.error.code, bash }));
    `);
    expect(JSON.parse(out)).toEqual({
      allowed: false,
      code: 'FSM_BLOCKED',
      bash: {
        kind: 'write',
        targets: expect.arrayContaining(['/repo/build']),
        destructive: true,
        reason: expect.any(String),
        echoes: true,
      },
    });
  });

  test('the testing entry and the command line work', () => {
    expect(inApp(`import { safetyEventCases } from 'pulse-safety-fsm/testing'; console.log(typeof safetyEventCases);`).trim()).toBe(
      'function',
    );
    const audit = execFileSync(join(app, 'node_modules/.bin/pulse-safety'), ['audit', '--demo'], { cwd: app, encoding: 'utf8' });
    expect(audit).toContain('runs with a refusal');
  });

  test('ships the example model-based test the README says to copy, beside the loop it tests', () => {
    const examples = join(app, 'node_modules', 'pulse-safety-fsm', 'examples');
    expect(existsSync(join(examples, 'toy-agent-loop.paths.test.ts'))).toBe(true);
    expect(existsSync(join(examples, 'toy-agent-loop.ts'))).toBe(true);
  });
});
