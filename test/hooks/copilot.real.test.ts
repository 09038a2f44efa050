/**
 * The Copilot codec under the real Copilot CLI (node_modules/.bin/copilot,
 * npm @github/copilot), run offline against a scripted model on 127.0.0.1
 * through its BYOK provider (`COPILOT_PROVIDER_BASE_URL`): Copilot runs
 * command hooks of both of its configuration styles, each a small driver
 * that reads the payload with `codecForPayload`, decides by a fixed rule, and
 * answers with `copilotCodec.write`. The camelCase hooks are declared
 * `copilot`; the PascalCase ones are declared `claude-code`, as the hooks of
 * a `.claude/settings.json` would be, and must still be read as Copilot's.
 *
 * What it shows about the codec and the host (Copilot CLI 1.0.102):
 * every payload of both dialects is read, as Copilot's; a deny written for
 * the camelCase preToolUse and one written for the PascalCase PreToolUse
 * both stop the call, and the model gets the reason; an allow written as
 * silence lets the call run; a refused agentStop sends the reason back as
 * the next prompt, and the next stop comes back active; a command that
 * exited 1 comes back with its exit code in the text the gate reads.
 *
 * The gate itself (session state, the rules) is not in this test: it runs
 * the codec, the part this file's subject is, against the real host.
 * Under `CI=true` a missing binary fails; elsewhere the test skips, saying
 * why. Slow by nature: Copilot starts its runtime and every tool call runs
 * two hook processes: 1.5 minutes on an idle 2-core machine, 7.5 on a loaded one.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HookAnswer, HookOutput, HookPayload } from '../../src/hooks/types.js';
import { startScriptedChat, textOf, type ScriptedChat } from '../support/scripted-openai-chat.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
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

/** One line of a driver's log: what it read and answered, or why it could not read. */
interface Logged {
  declared: string;
  host: string;
  read?: HookPayload;
  answer?: HookAnswer;
  out?: HookOutput;
  error?: string;
}

const DENY_RM = 'FSM_BLOCKED: rm names a place not read yet; read it first (test rule)';
const DENY_EDIT = 'FSM_BLOCKED: edit refused by the PascalCase hook (test rule)';
const BLOCK_STOP = 'FSM_BLOCKED: the last change is unverified; read it back before you finish (test rule)';

/** The hook driver: reads a payload with the codec the payload picks, answers by the test's fixed rule. */
const DRIVER = `
import { appendFileSync, readFileSync } from 'node:fs';
import { codecForPayload } from './hosts.mjs';
const [declared, log] = process.argv.slice(2);
const raw = JSON.parse(readFileSync(0, 'utf8'));
const codec = codecForPayload(declared, raw);
let read;
try {
  read = codec.read(raw);
} catch (error) {
  appendFileSync(log, JSON.stringify({ declared, host: codec.host, error: String(error) }) + '\\n');
  process.exit(0);
}
let answer = { type: 'continue' };
const event = read.event;
if (event.type === 'tool.before') {
  const command = typeof event.call.input?.command === 'string' ? event.call.input.command : '';
  if (declared === 'copilot' && command.startsWith('rm ')) answer = { type: 'deny', code: 'FSM_BLOCKED', reason: ${JSON.stringify(DENY_RM)} };
  else if (declared === 'claude-code' && event.call.name === 'Edit') answer = { type: 'deny', code: 'FSM_BLOCKED', reason: ${JSON.stringify(DENY_EDIT)} };
  else answer = { type: 'allow' };
}
if (event.type === 'agent.stopping' && declared === 'copilot' && !event.active) answer = { type: 'block-stop', code: 'FSM_BLOCKED', reason: ${JSON.stringify(BLOCK_STOP)} };
const out = codec.write(answer, read.eventName);
appendFileSync(log, JSON.stringify({ declared, host: codec.host, read, answer, out }) + '\\n');
process.stdout.write(out.stdout);
process.exitCode = out.exitCode;
`;

const CAMEL_EVENTS = ['sessionStart', 'sessionEnd', 'preToolUse', 'postToolUse', 'postToolUseFailure', 'agentStop'];
const PASCAL_EVENTS = ['SessionStart', 'SessionEnd', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'Stop'];

let dir = '';
let model: ScriptedChat | undefined;
let logged: Logged[] = [];
let exitCode: number | null = null;
let output = '';

beforeAll(async () => {
  if (skip) return;
  if (plan.kind === 'missing') throw new Error(`CI=true and Copilot CLI is missing: ${plan.reason}`);
  dir = mkdtempSync(join(tmpdir(), 'pulse-safety-copilot-'));
  const home = join(dir, 'home');
  const ws = join(dir, 'ws');
  const hooksDir = join(home, '.copilot', 'hooks');
  mkdirSync(hooksDir, { recursive: true });
  mkdirSync(join(ws, 'x'), { recursive: true });
  writeFileSync(join(ws, 'x', 'keep.txt'), 'keep\n');
  writeFileSync(join(ws, 'a.txt'), 'a\n');

  const { build } = await import('esbuild');
  await build({
    entryPoints: [join(REPO_ROOT, 'src', 'hooks', 'hosts', 'index.ts')],
    outfile: join(dir, 'hosts.mjs'),
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20.19',
    logLevel: 'error',
  });
  writeFileSync(join(dir, 'driver.mjs'), DRIVER);
  const log = join(dir, 'hooks.jsonl');
  const command = (declared: string): string => `'${process.execPath}' '${join(dir, 'driver.mjs')}' ${declared} '${log}'`;
  writeFileSync(
    join(hooksDir, 'camel.json'),
    JSON.stringify({
      version: 1,
      hooks: Object.fromEntries(CAMEL_EVENTS.map((event) => [event, [{ type: 'command', bash: command('copilot'), timeoutSec: 60 }]])),
    }),
  );
  writeFileSync(
    join(hooksDir, 'pascal.json'),
    JSON.stringify({
      version: 1,
      hooks: Object.fromEntries(PASCAL_EVENTS.map((event) => [event, [{ type: 'command', command: command('claude-code'), timeout: 60 }]])),
    }),
  );

  model = await startScriptedChat({
    script: [
      { calls: [{ name: 'bash', args: { command: `rm -rf ${join(ws, 'x')}`, description: 'remove x' } }] },
      { calls: [{ name: 'bash', args: { command: `ls ${ws}`, description: 'list' } }] },
      { calls: [{ name: 'edit', args: { path: join(ws, 'a.txt'), old_str: 'a', new_str: 'b' } }] },
      { calls: [{ name: 'bash', args: { command: 'false', description: 'fail' } }] },
      { text: 'All done.' },
      { text: 'Done after the follow-up.' },
    ],
    whenDone: 'Nothing more.',
  });
  const child = spawn(COPILOT, ['-p', 'Clean up the workspace.', '--allow-all-tools', '--no-auto-update'], {
    cwd: ws,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      COPILOT_HOME: join(home, '.copilot'),
      // The runtime Copilot unpacks on first run, kept between runs of this test.
      COPILOT_CACHE_HOME: join(tmpdir(), 'pulse-safety-copilot-cache'),
      COPILOT_PROVIDER_BASE_URL: model.baseUrl,
      COPILOT_PROVIDER_API_KEY: 'test-key',
      COPILOT_MODEL: 'gpt-4.1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  exitCode = await new Promise<number | null>((done) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 840_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      done(code);
    });
  });
  logged = existsSync(log)
    ? readFileSync(log, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Logged)
    : [];
}, 900_000);

afterAll(async () => {
  await model?.close();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

/** The tool message the model got for the scripted turn `turn` (1-based), from the requests after it. */
function toolMessage(turn: number): string {
  for (const messages of model?.requests ?? []) {
    const found = messages.find((message) => message.role === 'tool' && message.tool_call_id === `call_${turn}_0`);
    if (found !== undefined) return textOf(found);
  }
  return '';
}

const entries = (declared: string, eventName: string): Logged[] =>
  logged.filter((entry) => entry.declared === declared && entry.read?.eventName === eventName);

describe(`Copilot CLI ${plan.kind === 'ready' ? plan.version : ''} runs the codec's hooks${skipNote}`, () => {
  it.skipIf(skip)('runs to the end, and every payload of both dialects is read as Copilot', () => {
    expect(exitCode, output).toBe(0);
    expect(logged.filter((entry) => entry.error !== undefined)).toEqual([]);
    expect(new Set(logged.map((entry) => entry.host))).toEqual(new Set(['copilot']));
    expect(entries('copilot', 'preToolUse').length).toBeGreaterThanOrEqual(3);
    expect(entries('claude-code', 'PreToolUse').length).toBeGreaterThanOrEqual(4);
  });

  it.skipIf(skip)("names tools in each dialect's vocabulary, all under the copilot catalog", () => {
    const names = (declared: string, eventName: string) =>
      entries(declared, eventName).map((entry) => (entry.read?.event.type === 'tool.before' ? entry.read.event.call.name : ''));
    // The PascalCase hooks run first, and once one denies, Copilot runs no later hook of the
    // event: the camelCase hook never sees the edit the PascalCase one refused.
    expect(names('copilot', 'preToolUse')).toEqual(['bash', 'bash', 'bash']);
    expect(names('claude-code', 'PreToolUse')).toEqual(['Bash', 'Bash', 'Edit', 'Bash']);
    for (const entry of [...entries('copilot', 'preToolUse'), ...entries('claude-code', 'PreToolUse')]) {
      expect(entry.read?.event).toMatchObject({ type: 'tool.before', call: { catalog: 'copilot' } });
    }
  });

  it.skipIf(skip)('a deny written for camelCase preToolUse stops the call, and the model gets the reason', () => {
    expect(toolMessage(1)).toContain(DENY_RM);
    expect(existsSync(join(dir, 'ws', 'x', 'keep.txt'))).toBe(true);
  });

  it.skipIf(skip)('a deny written for PascalCase PreToolUse (nested hookSpecificOutput) stops the call too', () => {
    expect(toolMessage(3)).toContain(DENY_EDIT);
    expect(readFileSync(join(dir, 'ws', 'a.txt'), 'utf8')).toBe('a\n');
  });

  it.skipIf(skip)('an allow written as silence lets the call run, and postToolUse comes back as tool.after with the text', () => {
    expect(toolMessage(2)).toContain('a.txt');
    const after = entries('copilot', 'postToolUse').map((entry) => entry.read?.event);
    expect(after[0]).toMatchObject({ type: 'tool.after', outcome: 'success', call: { name: 'bash' } });
    expect(String((after[0] as { result?: unknown }).result)).toContain('a.txt');
    // `false` exits 1: Copilot calls it a success, and its text carries the exit code.
    const failed = after.find((event) => event?.type === 'tool.after' && (event.call.input as { command?: string }).command === 'false');
    expect(String((failed as { result?: unknown } | undefined)?.result)).toMatch(/exit code 1/);
  });

  it.skipIf(skip)('a refused agentStop sends the reason back as the next prompt, and the next stop comes back active', () => {
    const stops = entries('copilot', 'agentStop');
    expect(stops.map((entry) => entry.read?.event)).toEqual([
      { type: 'agent.stopping', active: false },
      { type: 'agent.stopping', active: true },
    ]);
    expect(stops[0]?.out?.stdout).toContain('"decision":"block"');
    const prompts = (model?.requests ?? []).flatMap((messages) => messages.filter((message) => message.role === 'user').map(textOf));
    expect(prompts.some((text) => text.includes(BLOCK_STOP))).toBe(true);
    expect(entries('claude-code', 'Stop').map((entry) => entry.read?.event)).toEqual([
      { type: 'agent.stopping', active: false },
      { type: 'agent.stopping', active: true },
    ]);
  });
});
