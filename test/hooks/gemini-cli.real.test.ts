/**
 * Gemini CLI 0.61.0's own binary, run headless (`gemini -p --yolo`) against
 * a scripted model on 127.0.0.1 (`GOOGLE_GEMINI_BASE_URL`), with
 * `pulse-safety hook gemini-cli` as its SessionStart, SessionEnd,
 * BeforeTool, AfterTool and AfterAgent hook in the user's settings (a
 * temporary HOME). The tests assert what the model was sent and what is
 * left on disk.
 *
 * Each run of the binary takes 1–5 min on a heavily loaded 2-core machine (every hook is a Node process: 13 s each at load 28). Under
 * `CI=true` a missing binary fails; elsewhere it skips, saying why.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinCatalogs, createCallClassifier, createSessionGuard } from '../../src/index.js';
import { agentBinary, bundleHookCommand, isolatedEnv, runToEnd, UNDER_CI, type Finished } from '../support/hook-hosts.js';
import {
  functionResponses,
  startScriptedGemini,
  userTexts,
  type GeminiScript,
  type GeminiRequest,
  type ScriptedGeminiServer,
} from '../support/scripted-gemini.js';

const gemini = agentBinary('gemini');
const RUN_TIMEOUT_MS = 600_000;

describe('gemini-cli binary', () => {
  it('is installed (a missing binary fails under CI)', () => {
    if (gemini.missing !== undefined && !UNDER_CI) return; // skipped below, saying why
    expect(gemini.missing).toBeUndefined();
  });
});

if (gemini.missing !== undefined && !UNDER_CI) console.warn(`skipping the Gemini CLI real-binary tests: ${gemini.missing}`);

describe.skipIf(gemini.missing !== undefined && !UNDER_CI)('Gemini CLI 0.61.0 with pulse-safety hook gemini-cli', () => {
  let hook: string;
  const dirs: string[] = [];

  beforeAll(async () => {
    hook = await bundleHookCommand('hook-gemini-cli', 'gemini-cli');
  }, 120_000);

  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /**
   * A temporary HOME with the hook in ~/.gemini/settings.json, the work
   * folder trusted, and the state directory; `events` the hooked events.
   */
  function setUp(files: Record<string, string>, events: string[]) {
    const root = mkdtempSync(join(tmpdir(), 'pulse-gemini-'));
    dirs.push(root);
    const home = join(root, 'home');
    const work = join(root, 'work');
    const state = join(root, 'state');
    mkdirSync(join(home, '.gemini'), { recursive: true });
    mkdirSync(work);
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(join(work, name, '..'), { recursive: true });
      writeFileSync(join(work, name), text);
    }
    // Gemini CLI lets a call through when its hook times out (default 60 s): the hook's timeout is generous, as `hook install` should set it.
    const entry = { name: 'pulse-safety', type: 'command', command: hook, timeout: 300_000 };
    const settings = {
      security: { auth: { selectedType: 'gemini-api-key' } },
      general: { disableAutoUpdate: true, disableUpdateNag: true },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      hooks: Object.fromEntries(events.map((event) => [event, [{ ...(event.endsWith('Tool') ? { matcher: '.*' } : {}), hooks: [entry] }]])),
    };
    writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify(settings, null, 2));
    writeFileSync(join(home, '.gemini', 'trustedFolders.json'), JSON.stringify({ [work]: 'TRUST_FOLDER' }));
    return { home, work, state };
  }

  async function runGemini(setup: { home: string; work: string; state: string }, server: ScriptedGeminiServer): Promise<Finished> {
    const env = isolatedEnv(setup.home, {
      GEMINI_API_KEY: 'scripted-test-key',
      GOOGLE_GEMINI_BASE_URL: server.baseUrl,
      GEMINI_CLI_NO_RELAUNCH: 'true',
      PULSE_SAFETY_STATE_DIR: setup.state,
    });
    return runToEnd(gemini.path!, ['-p', 'tidy the folder', '--yolo', '--output-format', 'json'], {
      cwd: setup.work,
      env,
      timeoutMs: RUN_TIMEOUT_MS,
    });
  }

  /** The function responses a request sent back for the previous turn's calls (the last user content's). */
  function lastResponses(request: GeminiRequest) {
    const last = [...(request.contents ?? [])].reverse().find((content) => content.role === 'user');
    return (last?.parts ?? []).flatMap((part) => (part.functionResponse ? [part.functionResponse] : []));
  }

  it(
    'refuses a write before any read, admits it after the read, refuses a second write and the stop until a verifying read',
    async () => {
      const setup = setUp({ 'victim.txt': 'keep me\n', 'other.txt': 'other\n' }, [
        'SessionStart',
        'SessionEnd',
        'BeforeTool',
        'AfterTool',
        'AfterAgent',
      ]);
      const exists: Record<number, { victim: boolean; other: boolean }> = {};
      const turns: GeminiScript = [
        { calls: [{ name: 'run_shell_command', args: { command: 'rm victim.txt' } }] },
        {
          calls: [
            { name: 'read_file', args: { file_path: 'victim.txt' } },
            { name: 'read_file', args: { file_path: 'other.txt' } },
          ],
        },
        { calls: [{ name: 'run_shell_command', args: { command: 'rm victim.txt' } }] },
        { calls: [{ name: 'run_shell_command', args: { command: 'rm other.txt' } }] },
        { text: 'done' },
        { calls: [{ name: 'list_directory', args: { dir_path: '.' } }] },
        { text: 'done' },
      ];
      const server = await startScriptedGemini((_body, index) => {
        exists[index] = { victim: existsSync(join(setup.work, 'victim.txt')), other: existsSync(join(setup.work, 'other.txt')) };
        return turns[index] ?? { text: 'done' };
      });
      try {
        const run = await runGemini(setup, server);
        expect(run.signal, run.stderr.slice(-2000)).toBeNull();
        const { requests } = server;
        expect(requests.length, run.stderr.slice(-2000)).toBe(7);

        // (a) the write before any read: refused, the model sees why, the file is still there.
        const [refused] = lastResponses(requests[1]!);
        expect(refused?.name).toBe('run_shell_command');
        const refusal = String(refused?.response?.error);
        expect(refusal).toMatch(/^Tool execution blocked: /);
        expect(refusal).toContain('FSM_BLOCKED');
        expect(refusal).toContain('no-target');
        expect(exists[1]).toEqual({ victim: true, other: true });

        // (b) read, then the same write: admitted and run.
        expect(lastResponses(requests[2]!).map((r) => r.response?.error)).toEqual([undefined, undefined]);
        expect(lastResponses(requests[3]!)[0]?.response?.error).toBeUndefined();
        expect(exists[3]).toEqual({ victim: false, other: true });

        // (c) a second write before a read verified the first: refused, the file stays.
        const second = String(lastResponses(requests[4]!)[0]?.response?.error);
        expect(second).toMatch(/^Tool execution blocked: .*FSM_BLOCKED/);
        expect(second).toContain('unverified-write');
        expect(existsSync(join(setup.work, 'other.txt'))).toBe(true);

        // (d) the stop while the write is unverified: the reason comes back as the next prompt.
        const stopReason = userTexts(requests[5]!).at(-1) ?? '';
        expect(stopReason).toContain('FSM_BLOCKED');
        expect(stopReason).toContain('unverified-write');
        // ... after the verifying read the stop is allowed: no further request, the answer is given.
        expect(lastResponses(requests[6]!)[0]?.response?.error).toBeUndefined();
        expect(JSON.parse(run.stdout)).toMatchObject({ response: expect.stringContaining('done') });
        expect(functionResponses(requests[6]!).map((r) => r.name)).toEqual([
          'run_shell_command',
          'read_file',
          'read_file',
          'run_shell_command',
          'run_shell_command',
          'list_directory',
        ]);
        // The hook kept the session under PULSE_SAFETY_STATE_DIR, and SessionEnd removed it.
        expect(existsSync(setup.state)).toBe(true);
        expect(readdirSync(setup.state, { recursive: true }).filter((f) => String(f).endsWith('.json'))).toEqual([]);
      } finally {
        await server.close();
      }
    },
    RUN_TIMEOUT_MS + 30_000,
  );

  it(
    'decides a parallel batch of three reads and a write exactly as the in-process guard decides it',
    async () => {
      const setup = setUp({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'sub/c.txt': 'c\n' }, [
        'SessionStart',
        'BeforeTool',
        'AfterTool',
        'AfterAgent',
      ]);
      const batch = [
        { name: 'read_file', args: { file_path: 'a.txt' } },
        { name: 'read_file', args: { file_path: 'b.txt' } },
        { name: 'list_directory', args: { dir_path: 'sub' } },
        { name: 'run_shell_command', args: { command: 'rm a.txt' } },
      ];
      const server = await startScriptedGemini([{ calls: batch }, { text: 'done' }]);
      try {
        const run = await runGemini(setup, server);
        expect(run.signal, run.stderr.slice(-2000)).toBeNull();
        expect(server.requests.length, run.stderr.slice(-2000)).toBe(2);
        const seen = lastResponses(server.requests[1]!).map((r) => ({ name: r.name, blocked: typeof r.response?.error === 'string' }));

        // The in-process guard, the same catalog and folder: Gemini CLI runs every BeforeTool of a batch before any tool.
        const classify = createCallClassifier(builtinCatalogs['gemini-cli']);
        const guard = createSessionGuard();
        const expected = batch.map((call, i) => {
          const judged = classify(call.name, call.args, { cwd: setup.work });
          const decision = guard.check({ id: `c${i}`, name: call.name, args: call.args, ...judged });
          return { name: call.name, blocked: !decision.allowed };
        });
        expect(expected.map((d) => d.blocked)).toEqual([false, false, false, true]);
        expect(seen).toEqual(expected);
        expect(existsSync(join(setup.work, 'a.txt'))).toBe(true);
      } finally {
        await server.close();
      }
    },
    RUN_TIMEOUT_MS + 30_000,
  );
});
