/**
 * `pulse-safety hook copilot` under the real Copilot CLI
 * (node_modules/.bin/copilot, npm @github/copilot), run offline against a
 * scripted model (test/support/scripted-openai-chat.ts) on 127.0.0.1 through
 * its BYOK provider (`COPILOT_PROVIDER_BASE_URL`). The hooks are camelCase
 * hooks in the user hooks directory (`~/.copilot/hooks/*.json`, HOME a
 * temporary directory), each running this repository's `pulse-safety` built
 * by `buildHookExecutable` as `node <build>/src/bin.js hook copilot`, with
 * `PULSE_SAFETY_STATE_DIR` a temporary directory.
 *
 * Cases (issue 25, "Tests with the real host"), in two Copilot runs that
 * go at the same time, each one scripted conversation:
 * - run 1: (a) `rm -rf ~/x` as the first call refused: the model gets the
 *   reason with FSM_BLOCKED, `~/x` stays; (b) `ls ~` then the `rm` admitted
 *   and `~/x` gone; (c) a second write (`touch ~/y`) before a verifying read
 *   refused and not run; (d) the stop refused while the write is unverified
 *   (Copilot sends the reason to the model as the next prompt), then allowed
 *   after `ls ~`; the session's file removed at the session's end.
 * - run 2: (e) a corrupt state file for the session (its id given with
 *   `--session-id`): `ls ~` allowed, `rm -rf ~/x` and the stop refused with
 *   HOOK_STATE_UNREADABLE, the file left as it was. The test then deletes the
 *   file so that the next stop is let through and the run ends.
 *
 * Under `CI=true` a missing binary fails; elsewhere the cases skip, saying
 * why. Slow by nature: Copilot starts its runtime and every tool call runs
 * two hook processes (each about 10 s on a 2-core machine at load 20): 2 to
 * 6 minutes there for the two runs side by side.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionFilePath } from '../../src/hooks/session-file.js';
import { REPO_ROOT, buildHookExecutable } from '../support/claude-code.js';
import { startScriptedChat, textOf, type ScriptedChat, type ScriptedChatStep } from '../support/scripted-openai-chat.js';

const COPILOT = join(REPO_ROOT, 'node_modules', '.bin', 'copilot');

type Plan = { kind: 'ready'; version: string } | { kind: 'missing'; reason: string };

function copilotPlan(): Plan {
  if (!existsSync(COPILOT)) return { kind: 'missing', reason: 'no Copilot CLI at node_modules/.bin/copilot (npm @github/copilot)' };
  const probe = spawnSync(COPILOT, ['--binary-version'], { encoding: 'utf8', timeout: 60_000 });
  const version = /(\d+\.\d+\.\d+)/.exec(probe.stdout ?? '')?.[1];
  if (probe.status !== 0 || version === undefined)
    return { kind: 'missing', reason: `copilot --binary-version failed (${probe.error?.message ?? probe.stderr?.trim() ?? probe.status})` };
  return { kind: 'ready', version };
}

const plan = copilotPlan();
const skip = plan.kind === 'missing' && process.env.CI !== 'true';
const skipNote = skip && plan.kind === 'missing' ? ` (skipped: ${plan.reason})` : '';

/** The camelCase events the hooks are declared for. */
const EVENTS = ['sessionStart', 'sessionEnd', 'preToolUse', 'postToolUse', 'postToolUseFailure', 'agentStop'];

/** One Copilot run's place: `home` (HOME, with `~/x/a.txt` and the hooks), `ws` (the working directory), `state` (the hook's state directory). */
interface Sandbox {
  root: string;
  home: string;
  ws: string;
  state: string;
}

/** What one run left to assert on. */
interface Run {
  box: Sandbox;
  sessionId: string;
  model: ScriptedChat;
  exitCode: number | null;
  output: string;
}

function sandbox(hookBin: string): Sandbox {
  const root = mkdtempSync(join(tmpdir(), 'pulse-safety-copilot-'));
  const box = { root, home: join(root, 'home'), ws: join(root, 'ws'), state: join(root, 'state') };
  const hooksDir = join(box.home, '.copilot', 'hooks');
  for (const dir of [hooksDir, box.ws, box.state, join(box.home, 'x')]) mkdirSync(dir, { recursive: true });
  writeFileSync(join(box.home, 'x', 'a.txt'), 'hello\n');
  const command = `PULSE_SAFETY_STATE_DIR='${box.state}' '${process.execPath}' '${hookBin}' hook copilot`;
  writeFileSync(
    join(hooksDir, 'pulse-safety.json'),
    JSON.stringify({
      version: 1,
      hooks: Object.fromEntries(EVENTS.map((event) => [event, [{ type: 'command', bash: command, timeoutSec: 60 }]])),
    }),
  );
  return box;
}

/** Runs `copilot -p` in `box` against a scripted model playing `script`, to its end. */
async function runCopilot(box: Sandbox, sessionId: string, script: ScriptedChatStep[]): Promise<Run> {
  const model = await startScriptedChat({ script, whenDone: 'Nothing more.' });
  const child = spawn(COPILOT, ['-p', 'Clean up my home directory.', '--allow-all-tools', '--no-auto-update', '--session-id', sessionId], {
    cwd: box.ws,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: box.home,
      COPILOT_HOME: join(box.home, '.copilot'),
      // The runtime Copilot unpacks on first run, kept between runs of this test.
      COPILOT_CACHE_HOME: join(tmpdir(), 'pulse-safety-copilot-cache'),
      COPILOT_PROVIDER_BASE_URL: model.baseUrl,
      COPILOT_PROVIDER_API_KEY: 'test-key',
      COPILOT_MODEL: 'gpt-4.1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exitCode = await new Promise<number | null>((done) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 840_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      done(code);
    });
  });
  await model.close();
  return { box, sessionId, model, exitCode, output };
}

const bash = (command: string) => ({ calls: [{ name: 'bash', args: { command, description: command } }] });

/** The tool message the model got for the scripted turn `turn` (1-based). */
function toolMessage(run: Run, turn: number): string {
  for (const messages of run.model.requests) {
    const found = messages.find((message) => message.role === 'tool' && message.tool_call_id === `call_${turn}_0`);
    if (found !== undefined) return textOf(found);
  }
  return '';
}

/** The user prompts of the request for turn `turn` (1-based) that came after its last assistant message. */
function promptsBefore(run: Run, turn: number): string[] {
  const messages = run.model.requests[turn - 1] ?? [];
  const lastAnswer = messages.map((message) => message.role).lastIndexOf('assistant');
  return messages
    .slice(lastAnswer + 1)
    .filter((message) => message.role === 'user')
    .map(textOf);
}

let removeBuild = (): void => {};
let main: Run | undefined;
let corrupt: Run | undefined;
/** What disk held when a turn's request came (run 1). */
const seen = { xAfterRefusedRm: false, xAfterAdmittedRm: true, yAfterRefusedTouch: true };
/** The corrupt state file's content when the refused stop's follow-up came (run 2), and whether it was there. */
let corruptAfterStop: string | null = null;
const GARBAGE = '{"version":1,"host":"copilot","sess';

beforeAll(async () => {
  if (skip) return;
  if (plan.kind === 'missing') throw new Error(`CI=true and Copilot CLI is missing: ${plan.reason}`);
  const build = await buildHookExecutable();
  removeBuild = build.remove;

  const box1 = sandbox(build.bin);
  const box2 = sandbox(build.bin);
  const id2 = randomUUID();
  const path2 = sessionFilePath(box2.state, 'copilot', id2);
  mkdirSync(join(path2, '..'), { recursive: true });
  writeFileSync(path2, GARBAGE);

  [main, corrupt] = await Promise.all([
    runCopilot(box1, randomUUID(), [
      bash('rm -rf ~/x'),
      () => {
        seen.xAfterRefusedRm = existsSync(join(box1.home, 'x', 'a.txt'));
        return bash('ls ~');
      },
      bash('rm -rf ~/x'),
      () => {
        seen.xAfterAdmittedRm = existsSync(join(box1.home, 'x'));
        return bash('touch ~/y');
      },
      () => {
        seen.yAfterRefusedTouch = existsSync(join(box1.home, 'y'));
        return { text: 'Done, ~/x is removed.' };
      },
      bash('ls ~'),
      { text: 'Checked: ~/x is gone.' },
    ]),
    runCopilot(box2, id2, [
      bash('ls ~'),
      bash('rm -rf ~/x'),
      { text: 'Stopping.' },
      () => {
        corruptAfterStop = existsSync(path2) ? readFileSync(path2, 'utf8') : null;
        // The state file is taken away, so the next stop is let through and the run ends.
        rmSync(path2);
        return { text: 'Stopping again.' };
      },
    ]),
  ]);
}, 900_000);

afterAll(() => {
  for (const run of [main, corrupt]) if (run !== undefined) rmSync(run.box.root, { recursive: true, force: true });
  removeBuild();
});

describe(`Copilot CLI ${plan.kind === 'ready' ? plan.version : ''} with pulse-safety hook copilot${skipNote}`, () => {
  it.skipIf(skip)('runs both conversations to their end', () => {
    expect(main?.exitCode, main?.output).toBe(0);
    expect(corrupt?.exitCode, corrupt?.output).toBe(0);
    expect(main?.model.requests.length).toBe(7);
    expect(corrupt?.model.requests.length).toBe(4);
  });

  it.skipIf(skip)('(a) rm -rf ~/x as the first call is refused: the model gets the reason with FSM_BLOCKED, and ~/x stays', () => {
    const run = main as Run;
    expect(toolMessage(run, 1)).toContain('FSM_BLOCKED');
    expect(toolMessage(run, 1)).toMatch(/It clears once .*(read|listed)/);
    expect(seen.xAfterRefusedRm).toBe(true);
  });

  it.skipIf(skip)('(b) ls ~ then rm -rf ~/x: the write is admitted and ~/x is gone', () => {
    const run = main as Run;
    expect(toolMessage(run, 2)).toMatch(/^x$/m);
    expect(toolMessage(run, 2)).not.toContain('FSM_BLOCKED');
    expect(toolMessage(run, 3)).not.toContain('FSM_BLOCKED');
    expect(seen.xAfterAdmittedRm).toBe(false);
  });

  it.skipIf(skip)('(c) a second write before a verifying read is refused and does not run', () => {
    const run = main as Run;
    expect(toolMessage(run, 4)).toContain('FSM_BLOCKED');
    expect(toolMessage(run, 4)).toMatch(/unverified-write|write-in-flight/);
    expect(seen.yAfterRefusedTouch).toBe(false);
    expect(existsSync(join(run.box.home, 'y'))).toBe(false);
  });

  it.skipIf(skip)(
    '(d) the stop is refused while the write is unverified (the reason comes as the next prompt), then allowed after a read',
    () => {
      const run = main as Run;
      const followUp = promptsBefore(run, 6).join('\n');
      expect(followUp).toContain('FSM_BLOCKED');
      expect(followUp).toContain('unverified-write');
      expect(toolMessage(run, 6)).not.toContain('FSM_BLOCKED');
      // The stop after the read was let through: no eighth request, and no refusal before the last answer.
      expect(promptsBefore(run, 7).join('\n')).not.toContain('FSM_BLOCKED');
      // The session's end removed its state.
      expect(existsSync(sessionFilePath(run.box.state, 'copilot', run.sessionId))).toBe(false);
    },
  );

  it.skipIf(skip)(
    '(e) a corrupt state file: the read allowed, the write and the stop refused with HOOK_STATE_UNREADABLE, the file left as it was',
    () => {
      const run = corrupt as Run;
      expect(toolMessage(run, 1)).toMatch(/^x$/m);
      expect(toolMessage(run, 1)).not.toContain('HOOK_STATE_UNREADABLE');
      expect(toolMessage(run, 2)).toContain('HOOK_STATE_UNREADABLE');
      expect(existsSync(join(run.box.home, 'x', 'a.txt'))).toBe(true);
      expect(promptsBefore(run, 4).join('\n')).toContain('HOOK_STATE_UNREADABLE');
      expect(corruptAfterStop).toBe(GARBAGE);
    },
  );
});
