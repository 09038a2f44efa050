/**
 * `pulse-safety hook claude-code` under the real Claude Code binary
 * (node_modules/.bin/claude), driven offline by a scripted model
 * (test/support/scripted-anthropic.ts) on 127.0.0.1: the hooks are in the
 * project's `.claude/settings.json` as `hook install` writes them, HOME and
 * the state directory are temporary, and each case asserts what the model
 * was shown (the `tool_result` of a refused call, a refused stop's feedback)
 * and what happened on disk.
 *
 * Cases (issue 25, "Tests with the real host"): a write before any read
 * refused; a read of the target then the write admitted; a second write
 * before a verifying read refused; the stop refused while a write is
 * unverified, then allowed after a read; a parallel batch of three reads and
 * a write decided as the in-process guard decides the same calls in the same
 * order; a hook killed mid-write and the next hook still consistent; a
 * corrupt state file failing closed.
 *
 * Under `CI=true` a missing binary fails; elsewhere the cases skip, saying why.
 * Slow by nature: every tool call starts a hook process.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinCatalogs, compileCatalog } from '../../src/classify/catalog/index.js';
import { createSessionGuard } from '../../src/guard/session-guard.js';
import { sessionFilePath, type HookSessionRecord } from '../../src/hooks/session-file.js';
import {
  REPO_ROOT,
  buildHookExecutable,
  claudePlan,
  claudeSandbox,
  claudeSkipNote,
  hookSettings,
  runClaude,
  type ClaudeSandbox,
} from '../support/claude-code.js';
import { installHookSettings, shellQuote } from '../../src/hooks/install.js';
import { startScriptedAnthropic, type ScriptedAnthropic, type ScriptedBlock, type ScriptedTurn } from '../support/scripted-anthropic.js';

const plan = claudePlan();
const skipNote = claudeSkipNote(plan);
const CASE_TIMEOUT_MS = 600_000;

let hookBin = '';
let removeBuild = (): void => {};

beforeAll(async () => {
  if (skipNote !== '') return;
  if (plan.kind === 'missing') throw new Error(`CI=true and Claude Code is missing: ${plan.reason}`);
  const build = await buildHookExecutable();
  hookBin = build.bin;
  removeBuild = build.remove;
}, 300_000);

afterAll(() => removeBuild());

/** A Bash tool call. */
function bash(id: string, command: string): ScriptedBlock {
  return { type: 'tool_use', id, name: 'Bash', input: { command, description: command } };
}

/**
 * The settings `pulse-safety hook install claude-code` writes into a new
 * project, running this build's hook: the events, matchers, timeouts and
 * `onFailure` a user gets (issue 25 "Done when").
 */
function installedSettings(sandbox: ClaudeSandbox): Record<string, unknown> {
  const command = `${shellQuote(process.execPath)} ${shellQuote(hookBin)} hook claude-code`;
  const edit = installHookSettings('claude-code', null, command, join(sandbox.project, '.claude', 'settings.json'));
  return JSON.parse(edit.text!) as Record<string, unknown>;
}

/** A final text turn. */
function say(text: string): ScriptedBlock[] {
  return [{ type: 'text', text }];
}

/** One scripted run: a sandbox whose HOME holds `x/a.txt`, the scripted model, Claude Code run to the end. */
async function scenario(
  script: (sandbox: ClaudeSandbox) => ScriptedTurn[],
  options: {
    settings?: (sandbox: ClaudeSandbox) => Record<string, unknown>;
    sessionId?: string;
    before?: (sandbox: ClaudeSandbox) => void;
    env?: (sandbox: ClaudeSandbox) => Record<string, string>;
  } = {},
) {
  const sandbox = claudeSandbox({});
  writeFileSync(
    join(sandbox.project, '.claude', 'settings.json'),
    JSON.stringify(options.settings?.(sandbox) ?? hookSettings(hookBin), null, 2),
  );
  mkdirSync(join(sandbox.home, 'x'));
  writeFileSync(join(sandbox.home, 'x', 'a.txt'), 'hello\n');
  options.before?.(sandbox);
  const model: ScriptedAnthropic = await startScriptedAnthropic({ script: script(sandbox), whenDone: say('Nothing more to do.') });
  try {
    const run = await runClaude({
      bin: plan.kind === 'ready' ? plan.bin : '',
      sandbox,
      baseUrl: model.url,
      ...(options.sessionId === undefined ? {} : { sessionId: options.sessionId }),
      ...(options.env === undefined ? {} : { env: options.env(sandbox) }),
    });
    return { sandbox, model, run };
  } finally {
    await model.close();
  }
}

/** The session's record on disk right now (null when there is none). */
function sessionRecord(sandbox: ClaudeSandbox, sessionId: string): HookSessionRecord | null {
  const path = sessionFilePath(sandbox.state, 'claude-code', sessionId);
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as HookSessionRecord) : null;
}

/** The session id Claude Code sent the scripted model (header `x-claude-code-session-id`). */
function sessionOf(model: ScriptedAnthropic): string {
  const id = model.turns()[0]?.headers['x-claude-code-session-id'];
  if (typeof id !== 'string') throw new Error('Claude Code sent no session id');
  return id;
}

describe.skipIf(skipNote !== '')(
  `Claude Code ${plan.kind === 'ready' ? plan.version : ''} with pulse-safety hook claude-code${skipNote}`,
  () => {
    it(
      '(a) with the settings `hook install` writes, rm -rf ~/x as the first call is refused: the model gets an error tool_result with FSM_BLOCKED and the read that clears it, and ~/x stays',
      async () => {
        const { sandbox, model, run } = await scenario(() => [[bash('toolu_rm', 'rm -rf ~/x')], say('I will stop here.')], {
          settings: installedSettings,
        });
        try {
          expect(run.exitCode).toBe(0);
          const seen = model.toolResult('toolu_rm');
          expect(seen?.isError).toBe(true);
          expect(seen?.text).toMatch(/^PreToolUse:Bash hook error: /);
          expect(seen?.text).toContain('FSM_BLOCKED');
          expect(seen?.text).toMatch(/It clears once .*(read|listed)/);
          expect(existsSync(join(sandbox.home, 'x', 'a.txt'))).toBe(true);
          expect(run.result?.permission_denials).toEqual([expect.objectContaining({ tool_use_id: 'toolu_rm', tool_name: 'Bash' })]);
          expect(run.result?.result).toBe('I will stop here.');
        } finally {
          sandbox.remove();
        }
      },
      CASE_TIMEOUT_MS,
    );

    it(
      '(b) with the settings `hook install` writes, ls ~ then rm -rf ~/x: the write is admitted and ~/x is gone; the session file is removed at the end',
      async () => {
        const { sandbox, model, run } = await scenario(
          () => [[bash('toolu_ls', 'ls ~')], [bash('toolu_rm', 'rm -rf ~/x')], [bash('toolu_ls2', 'ls ~')], say('Removed ~/x.')],
          { settings: installedSettings },
        );
        try {
          expect(run.exitCode).toBe(0);
          expect(model.toolResult('toolu_ls')).toEqual({ isError: false, text: 'x' });
          expect(model.toolResult('toolu_rm')?.isError).toBe(false);
          expect(existsSync(join(sandbox.home, 'x'))).toBe(false);
          expect(run.result?.result).toBe('Removed ~/x.');
          expect(sessionRecord(sandbox, sessionOf(model))).toBeNull();
        } finally {
          sandbox.remove();
        }
      },
      CASE_TIMEOUT_MS,
    );

    it(
      '(c) a second write before a verifying read is refused and does not run',
      async () => {
        const { sandbox, model } = await scenario(() => [
          [bash('toolu_ls', 'ls ~')],
          [bash('toolu_rm', 'rm -rf ~/x')],
          [bash('toolu_touch', 'touch ~/y')],
          [bash('toolu_ls2', 'ls ~')],
          say('Done.'),
        ]);
        try {
          expect(model.toolResult('toolu_rm')?.isError).toBe(false);
          const seen = model.toolResult('toolu_touch');
          expect(seen?.isError).toBe(true);
          expect(seen?.text).toContain('FSM_BLOCKED');
          expect(seen?.text).toMatch(/unverified-write|write-in-flight/);
          expect(existsSync(join(sandbox.home, 'y'))).toBe(false);
          expect(existsSync(join(sandbox.home, 'x'))).toBe(false);
        } finally {
          sandbox.remove();
        }
      },
      CASE_TIMEOUT_MS,
    );

    it(
      '(d) the stop is refused while the write is unverified (the model gets the reason as a new turn), then allowed after a read',
      async () => {
        const { sandbox, model, run } = await scenario(() => [
          [bash('toolu_ls', 'ls ~')],
          [bash('toolu_rm', 'rm -rf ~/x')],
          say('Done, ~/x is removed.'),
          [bash('toolu_ls2', 'ls ~')],
          say('Checked: ~/x is gone.'),
        ]);
        try {
          expect(run.exitCode).toBe(0);
          expect(model.served()).toBe(5);
          const feedback = model.textAfterLastAnswer(3);
          expect(feedback).toContain('Stop hook feedback');
          expect(feedback).toContain('FSM_BLOCKED');
          expect(feedback).toContain('unverified-write');
          expect(model.textAfterLastAnswer(4)).not.toContain('Stop hook');
          expect(run.result?.result).toBe('Checked: ~/x is gone.');
        } finally {
          sandbox.remove();
        }
      },
      CASE_TIMEOUT_MS,
    );

    it(
      '(e) a parallel batch of three reads and a write is decided as the in-process guard decides the same calls in the same order',
      async () => {
        let log: HookSessionRecord['decisions'] = [];
        const sessionId = randomUUID();
        const { sandbox, model } = await scenario(
          (box) => [
            [
              { type: 'tool_use', id: 'toolu_read', name: 'Read', input: { file_path: join(box.home, 'x', 'a.txt') } },
              { type: 'tool_use', id: 'toolu_glob', name: 'Glob', input: { pattern: '*', path: box.home } },
              { type: 'tool_use', id: 'toolu_grep', name: 'Grep', input: { pattern: 'hello', path: join(box.home, 'x') } },
              bash('toolu_rm', `rm -rf ${join(box.home, 'x')}`),
            ],
            () => {
              // Every hook of the batch has answered before Claude Code asks for the next turn.
              log = sessionRecord(box, sessionId)?.decisions ?? [];
              return say('Batch done.');
            },
          ],
          { sessionId },
        );
        try {
          const calls = {
            Read: { id: 'toolu_read', name: 'Read', args: { file_path: join(sandbox.home, 'x', 'a.txt') } },
            Glob: { id: 'toolu_glob', name: 'Glob', args: { pattern: '*', path: sandbox.home } },
            Grep: { id: 'toolu_grep', name: 'Grep', args: { pattern: 'hello', path: join(sandbox.home, 'x') } },
            Bash: { id: 'toolu_rm', name: 'Bash', args: { command: `rm -rf ${join(sandbox.home, 'x')}` } },
          };
          const toolEvents = log.filter((entry) => entry.event !== 'Stop');
          // Four checks and one record per admitted call: no update was lost to the parallel hooks.
          expect(
            toolEvents
              .filter((entry) => entry.event === 'PreToolUse')
              .map((entry) => entry.tool)
              .sort(),
          ).toEqual(['Bash', 'Glob', 'Grep', 'Read']);
          const admitted = toolEvents.filter((entry) => entry.event === 'PreToolUse' && entry.answer === 'allow').length;
          expect(toolEvents.filter((entry) => entry.event !== 'PreToolUse')).toHaveLength(admitted);

          const catalog = compileCatalog(builtinCatalogs['claude-code']);
          const guard = createSessionGuard({
            classify: (name, args) => catalog.classify(name, args, { cwd: sandbox.project }),
            selfVerifying: (name) => catalog.isSelfVerifying(name),
          });
          const inProcess = new Map<string, boolean>();
          for (const entry of toolEvents) {
            const call = calls[entry.tool as keyof typeof calls];
            if (entry.event === 'PreToolUse') {
              const decision = guard.check(call);
              inProcess.set(call.id, decision.allowed);
              expect(decision.allowed ? 'allow' : 'deny').toBe(entry.answer);
            } else {
              guard.record({ id: call.id, name: call.name }, model.toolResult(call.id)?.isError === true ? 'error' : 'success');
            }
          }
          for (const call of Object.values(calls)) {
            const seen = model.toolResult(call.id);
            const refusedByHook = seen?.text.includes('FSM_BLOCKED') === true;
            expect([call.id, !refusedByHook]).toEqual([call.id, inProcess.get(call.id)]);
            if (call.name !== 'Bash') expect([call.id, refusedByHook]).toEqual([call.id, false]);
          }
          expect(existsSync(join(sandbox.home, 'x'))).toBe(!inProcess.get('toolu_rm'));
        } finally {
          sandbox.remove();
        }
      },
      CASE_TIMEOUT_MS,
    );

    it(
      '(f) a before-tool hook killed mid-write: onFailure "block" refuses its call, the session keeps its last good state, the next hook decides on it',
      async () => {
        const preload = join(REPO_ROOT, 'test', 'support', 'kill-at-commit.mjs');
        const marker = (box: ClaudeSandbox): string => join(box.root, 'kill-next-commit');
        let existedAfterKill = false;
        let recordAfterKill: HookSessionRecord | null = null;
        let leftovers: string[] = [];
        const sessionId = randomUUID();
        const { sandbox, model, run } = await scenario(
          (box) => [
            [bash('toolu_ls', 'ls ~')],
            () => {
              writeFileSync(marker(box), 'armed');
              return [bash('toolu_rm_killed', 'rm -rf ~/x')];
            },
            () => {
              existedAfterKill = existsSync(join(box.home, 'x', 'a.txt'));
              recordAfterKill = sessionRecord(box, sessionId);
              leftovers = readdirSync(join(box.state, 'claude-code'));
              return [bash('toolu_rm', 'rm -rf ~/x')];
            },
            [bash('toolu_ls2', 'ls ~')],
            say('Removed and checked.'),
          ],
          {
            sessionId,
            settings: () =>
              hookSettings(hookBin, {
                preToolUse: {
                  type: 'command',
                  command: process.execPath,
                  args: ['--import', preload, hookBin, 'hook', 'claude-code'],
                  onFailure: 'block',
                },
              }),
            env: (box) => ({ PULSE_SAFETY_TEST_KILL_MARKER: marker(box) }),
          },
        );
        try {
          expect(run.exitCode).toBe(0);
          const killed = model.toolResult('toolu_rm_killed');
          expect(killed?.isError).toBe(true);
          expect(killed?.text).toContain('onFailure is "block"');
          expect(existedAfterKill).toBe(true);
          // The last good state: the `ls ~` admitted and recorded, nothing of the killed call.
          const record = recordAfterKill as HookSessionRecord | null;
          expect(record?.decisions.map((entry) => `${entry.event} ${entry.tool} ${entry.answer}`)).toEqual([
            'PreToolUse Bash allow',
            'PostToolUse Bash continue',
          ]);
          expect(Object.keys(record?.calls ?? {})).toEqual([]);
          // What the kill left: a half-written temporary file and the lock, never read as the session.
          expect(leftovers.some((name) => name.endsWith('.tmp'))).toBe(true);
          expect(model.toolResult('toolu_rm')?.isError).toBe(false);
          expect(existsSync(join(sandbox.home, 'x'))).toBe(false);
          expect(model.toolResult('toolu_ls2')?.isError).toBe(false);
        } finally {
          sandbox.remove();
        }
      },
      CASE_TIMEOUT_MS,
    );

    it(
      '(g) a corrupt state file: reads allowed, the write and the stop refused with HOOK_STATE_UNREADABLE, the file left as it is',
      async () => {
        const sessionId = randomUUID();
        const garbage = '{"version":1,"host":"claude-code","sess';
        const { sandbox, model, run } = await scenario(
          () => [[bash('toolu_ls', 'ls ~')], [bash('toolu_rm', 'rm -rf ~/x')], say('Stopping.'), say('Stopping again.')],
          {
            sessionId,
            before: (box) => {
              const path = sessionFilePath(box.state, 'claude-code', sessionId);
              mkdirSync(join(box.state, 'claude-code'), { recursive: true });
              writeFileSync(path, garbage);
            },
            env: () => ({ CLAUDE_CODE_STOP_HOOK_BLOCK_CAP: '2' }),
          },
        );
        try {
          expect(run.exitCode).toBe(0);
          expect(model.toolResult('toolu_ls')).toEqual({ isError: false, text: 'x' });
          const refused = model.toolResult('toolu_rm');
          expect(refused?.isError).toBe(true);
          expect(refused?.text).toContain('HOOK_STATE_UNREADABLE');
          expect(existsSync(join(sandbox.home, 'x', 'a.txt'))).toBe(true);
          const feedback = model.textAfterLastAnswer(3);
          expect(feedback).toContain('Stop hook feedback');
          expect(feedback).toContain('HOOK_STATE_UNREADABLE');
          expect(readFileSync(sessionFilePath(sandbox.state, 'claude-code', sessionId), 'utf8')).toBe(garbage);
        } finally {
          sandbox.remove();
        }
      },
      CASE_TIMEOUT_MS,
    );
  },
);
