/**
 * Codex 0.171.0's own binary (`codex exec`), pointed at a scripted model on
 * 127.0.0.1 through a Responses-API provider in a temporary `CODEX_HOME`'s
 * config.toml, with `pulse-safety hook codex` as its SessionStart,
 * PreToolUse, PostToolUse and Stop hook in `<CODEX_HOME>/hooks.json`
 * (trusted for the run by `--dangerously-bypass-hook-trust`). The tests
 * assert what the model was sent and what is left on disk.
 *
 * Each run of the binary takes 1–6 min on a heavily loaded 2-core machine (every hook is a Node process: 13 s each at load 28). Under
 * `CI=true` a missing binary fails; elsewhere it skips, saying why.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinCatalogs, createCallClassifier, createSessionGuard } from '../../src/index.js';
import { agentBinary, bundleHookCommand, isolatedEnv, runToEnd, UNDER_CI, type Finished } from '../support/hook-hosts.js';
import { startScriptedOpenAI, toolOutput, userTexts, type ScriptedOpenAIServer, type ScriptedTurn } from '../support/scripted-openai.js';

const codex = agentBinary('codex');
const RUN_TIMEOUT_MS = 600_000;
/** A model Codex 0.171.0 knows, so it offers its apply_patch tool. */
const MODEL = 'gpt-5.5';

describe('codex binary', () => {
  it('is installed (a missing binary fails under CI)', () => {
    if (codex.missing !== undefined && !UNDER_CI) return; // skipped below, saying why
    expect(codex.missing).toBeUndefined();
  });
});

if (codex.missing !== undefined && !UNDER_CI) console.warn(`skipping the Codex real-binary tests: ${codex.missing}`);

describe.skipIf(codex.missing !== undefined && !UNDER_CI)('Codex 0.171.0 with pulse-safety hook codex', () => {
  let hook: string;
  const dirs: string[] = [];

  beforeAll(async () => {
    hook = await bundleHookCommand('hook-codex', 'codex');
  }, 120_000);

  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** A temporary CODEX_HOME with the scripted provider and the hook, a work folder with `files`, and the state directory. */
  function setUp(files: Record<string, string>, server: ScriptedOpenAIServer) {
    const root = mkdtempSync(join(tmpdir(), 'pulse-codex-'));
    dirs.push(root);
    const home = join(root, 'home');
    const codexHome = join(home, '.codex');
    const work = join(root, 'work');
    const state = join(root, 'state');
    mkdirSync(codexHome, { recursive: true });
    mkdirSync(work);
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(join(work, name, '..'), { recursive: true });
      writeFileSync(join(work, name), text);
    }
    writeFileSync(
      join(codexHome, 'config.toml'),
      [
        `model = "${MODEL}"`,
        'model_provider = "scripted"',
        '',
        '[model_providers.scripted]',
        'name = "scripted"',
        `base_url = "${server.baseUrl}"`,
        'wire_api = "responses"',
        'env_key = "SCRIPTED_API_KEY"',
        '',
      ].join('\n'),
    );
    const entry = { type: 'command', command: hook, timeout: 600 };
    const hooks = {
      SessionStart: [{ hooks: [entry] }],
      PreToolUse: [{ matcher: '*', hooks: [entry] }],
      PostToolUse: [{ matcher: '*', hooks: [entry] }],
      Stop: [{ hooks: [entry] }],
    };
    writeFileSync(join(codexHome, 'hooks.json'), JSON.stringify({ hooks }, null, 2));
    return { home, codexHome, work, state };
  }

  function runCodex(setup: ReturnType<typeof setUp>): Promise<Finished> {
    const env = isolatedEnv(setup.home, {
      CODEX_HOME: setup.codexHome,
      SCRIPTED_API_KEY: 'scripted-test-key',
      PULSE_SAFETY_STATE_DIR: setup.state,
    });
    const args = [
      'exec',
      '--skip-git-repo-check',
      '--dangerously-bypass-hook-trust',
      '--dangerously-bypass-approvals-and-sandbox',
      '-C',
      setup.work,
      'tidy the folder',
    ];
    return runToEnd(codex.path!, args, { cwd: setup.work, env, timeoutMs: RUN_TIMEOUT_MS });
  }

  const shell = (cmd: string, id: string) => ({ name: 'exec_command', arguments: { cmd }, id });

  it(
    'refuses a write before any read, admits it after the read, refuses a second write and the stop until a verifying read; a patch names its files',
    async () => {
      const exists: Record<number, { victim: boolean; other: boolean }> = {};
      const patch = '*** Begin Patch\n*** Update File: other.txt\n@@\n-other\n+patched\n*** End Patch\n';
      const turns: ScriptedTurn[] = [
        { calls: [shell('rm victim.txt', 'c0')] },
        { calls: [shell('cat victim.txt', 'c1a'), shell('cat other.txt', 'c1b')] },
        { calls: [shell('rm victim.txt', 'c2')] },
        { calls: [shell('rm other.txt', 'c3')] },
        { text: 'done' },
        { calls: [shell('ls', 'c5')] },
        { calls: [{ name: 'apply_patch', arguments: patch, custom: true, id: 'c6' }] },
        { text: 'done' },
        { calls: [shell('cat other.txt', 'c8')] },
        { text: 'done' },
      ];
      let setup: ReturnType<typeof setUp> | undefined;
      const server = await startScriptedOpenAI((_body, index) => {
        exists[index] = { victim: existsSync(join(setup!.work, 'victim.txt')), other: existsSync(join(setup!.work, 'other.txt')) };
        return turns[index] ?? { text: 'done' };
      });
      try {
        setup = setUp({ 'victim.txt': 'keep me\n', 'other.txt': 'other\n' }, server);
        const run = await runCodex(setup);
        expect(run.signal, run.stderr.slice(-3000)).toBeNull();
        const { requests } = server;
        expect(requests.length, run.stderr.slice(-3000)).toBe(10);

        // (a) the write before any read: refused, the model sees why, the file is still there.
        const refusal = toolOutput(requests[1]!, 'c0') ?? '';
        expect(refusal).toMatch(/^Command blocked by PreToolUse hook: /);
        expect(refusal).toContain('FSM_BLOCKED');
        expect(refusal).toContain('no-target');
        expect(refusal).toMatch(/\. Command: rm victim\.txt$/);
        expect(exists[1]).toEqual({ victim: true, other: true });

        // (b) read, then the same write: admitted and run.
        expect(toolOutput(requests[2]!, 'c1a')).toMatch(/Process exited with code 0[\s\S]*keep me/);
        expect(toolOutput(requests[3]!, 'c2')).toMatch(/Process exited with code 0/);
        expect(exists[3]).toEqual({ victim: false, other: true });

        // (c) a second write before a read verified the first: refused.
        const second = toolOutput(requests[4]!, 'c3') ?? '';
        expect(second).toMatch(/^Command blocked by PreToolUse hook: .*FSM_BLOCKED/);
        expect(second).toContain('unverified-write');

        // (d) the stop while the write is unverified: the reason comes back as a user message.
        const stop = userTexts(requests[5]!).at(-1) ?? '';
        expect(stop).toMatch(/^<hook_prompt [^>]*>[\s\S]*FSM_BLOCKED[\s\S]*<\/hook_prompt>$/);
        expect(stop).toContain('unverified-write');

        // After the verifying `ls`, the patch of a file read before is admitted; the stop then waits for its own verification.
        expect(toolOutput(requests[7]!, 'c6')).toMatch(/^Exit code: 0[\s\S]*Success/);
        expect(exists[7]).toEqual({ victim: false, other: true });
        expect(userTexts(requests[8]!).at(-1)).toMatch(/<hook_prompt[\s\S]*FSM_BLOCKED[\s\S]*other\.txt/);
        expect(toolOutput(requests[9]!, 'c8')).toContain('patched');
        expect(run.stdout.trim().split('\n').at(-1)).toBe('done');

        // The session is on disk under PULSE_SAFETY_STATE_DIR (Codex has no SessionEnd).
        expect(readdirSync(setup.state, { recursive: true }).filter((f) => String(f).endsWith('.json'))).toHaveLength(1);
      } finally {
        await server.close();
      }
    },
    RUN_TIMEOUT_MS + 30_000,
  );

  it(
    'decides a parallel batch of three reads and a write exactly as the in-process guard decides it',
    async () => {
      const batch = [shell('cat a.txt', 'p0'), shell('cat b.txt', 'p1'), shell('ls sub', 'p2'), shell('rm c.txt', 'p3')];
      const server = await startScriptedOpenAI([{ calls: batch }, { text: 'done' }]);
      try {
        const setup = setUp({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n', 'sub/d.txt': 'd\n' }, server);
        const run = await runCodex(setup);
        expect(run.signal, run.stderr.slice(-3000)).toBeNull();
        expect(server.requests.length, run.stderr.slice(-3000)).toBe(2);
        const seen = batch.map((call) => (toolOutput(server.requests[1]!, call.id) ?? '').startsWith('Command blocked by PreToolUse hook'));

        // The in-process guard with the hooks' tool (`Bash`), the same catalog and folder. Codex runs a
        // call's PreToolUse, the call, then its PostToolUse, each call on its own: the write's target is
        // none of the reads', so their order cannot change its decision.
        const classify = createCallClassifier(builtinCatalogs.codex);
        const guard = createSessionGuard();
        const expected = batch.map((call) => {
          const args = { command: call.arguments.cmd };
          const decision = guard.check({ id: call.id, name: 'Bash', args, ...classify('Bash', args, { cwd: setup.work }) });
          return !decision.allowed;
        });
        expect(expected).toEqual([false, false, false, true]);
        expect(seen).toEqual(expected);
        expect(existsSync(join(setup.work, 'c.txt'))).toBe(true);
      } finally {
        await server.close();
      }
    },
    RUN_TIMEOUT_MS + 30_000,
  );
});
