/**
 * The audit reads the session log the real Copilot CLI wrote
 * (node_modules/.bin/copilot, npm @github/copilot), run offline in prompt
 * mode against a scripted model on 127.0.0.1 through its BYOK provider
 * (`COPILOT_PROVIDER_BASE_URL`), in a HOME and COPILOT_HOME of the test's own.
 * The model lists the workspace, edits a file, runs a failing command, views
 * a missing file, tries an edit that cannot match, views the file back and
 * answers. The test finds the log Copilot wrote
 * (`$COPILOT_HOME/session-state/<sessionId>/events.jsonl`), reads it, and
 * audits it with `--catalog auto`.
 *
 * What it shows (Copilot CLI 1.0.102): the log is found where the reader
 * says; every call comes with the model's call id and the session's cwd;
 * a failed view and edit (`success: false`) and a command that exited 1
 * (recorded `success: true` with `shellExecution.exitCode: 1`) are failures;
 * the answer is read; the audit picks the copilot catalog from the format and
 * refuses the second edit, made while the first was unverified.
 *
 * Under `CI=true` a missing binary fails; elsewhere the test skips, saying
 * why. Slow by nature: Copilot starts its runtime and sends seven requests
 * (1.5 to 2.5 minutes on a 2-core machine).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTranscript, type TranscriptRun, type TranscriptStep } from '../../../src/audit/transcripts/index.js';
import { main } from '../../../src/cli/main.js';
import { startScriptedChat, type ScriptedChat } from '../../support/scripted-openai-chat.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
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

let dir = '';
let ws = '';
let model: ScriptedChat | undefined;
let exitCode: number | null = null;
let output = '';
let logs: string[] = [];

beforeAll(async () => {
  if (skip) return;
  if (plan.kind === 'missing') throw new Error(`CI=true and Copilot CLI is missing: ${plan.reason}`);
  dir = mkdtempSync(join(tmpdir(), 'pulse-safety-copilot-log-'));
  const home = join(dir, 'home');
  ws = join(dir, 'ws');
  mkdirSync(home, { recursive: true });
  mkdirSync(ws, { recursive: true });
  writeFileSync(join(ws, 'a.txt'), 'a\n');
  model = await startScriptedChat({
    script: [
      { calls: [{ name: 'bash', args: { command: `ls ${ws}`, description: 'list' } }] },
      { calls: [{ name: 'edit', args: { path: join(ws, 'a.txt'), old_str: 'a', new_str: 'b' } }] },
      { calls: [{ name: 'bash', args: { command: 'false', description: 'fail' } }] },
      { calls: [{ name: 'view', args: { path: join(ws, 'missing.txt') } }] },
      { calls: [{ name: 'edit', args: { path: join(ws, 'a.txt'), old_str: 'zzz', new_str: 'q' } }] },
      { calls: [{ name: 'view', args: { path: join(ws, 'a.txt') } }] },
      { text: 'a.txt now says b.' },
    ],
    whenDone: 'Nothing more.',
  });
  const copilotHome = join(home, '.copilot');
  const child = spawn(COPILOT, ['-p', 'Change a.txt to say b.', '--allow-all-tools', '--no-auto-update'], {
    cwd: ws,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      COPILOT_HOME: copilotHome,
      // The runtime Copilot unpacks on first run, kept between runs.
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
  const sessions = join(copilotHome, 'session-state');
  logs = existsSync(sessions)
    ? readdirSync(sessions)
        .map((id) => join(sessions, id, 'events.jsonl'))
        .filter((path) => existsSync(path))
    : [];
}, 900_000);

afterAll(async () => {
  await model?.close();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

/** A step in short: `call view`, `result view error`, `answer`. */
function brief(step: TranscriptStep): string {
  if (step.type === 'call') return `call ${step.name}`;
  if (step.type === 'result') return `result ${step.name} ${step.outcome}`;
  return step.type;
}

describe.skipIf(skip)(`the audit reads a real Copilot CLI session log${skipNote}`, () => {
  let run: TranscriptRun | undefined;

  it('Copilot ran the whole script and wrote one session log', () => {
    expect(exitCode, output).toBe(0);
    expect(model?.requests.length, output).toBe(7);
    expect(logs).toHaveLength(1);
    [run] = readTranscript(readFileSync(logs[0]!, 'utf8'), logs[0]!);
  });

  it('reads every call with its id and directory, the failures, and the answer', () => {
    expect(run).toMatchObject({ id: logs[0]!.split('/').at(-2), catalog: 'copilot' });
    expect(run!.steps.map(brief)).toEqual([
      'call bash',
      'result bash success',
      'call edit',
      'result edit success',
      'call bash',
      'result bash error',
      'call view',
      'result view error',
      'call edit',
      'result edit error',
      'call view',
      'result view success',
      'answer',
    ]);
    const calls = run!.steps.filter((step) => step.type === 'call');
    expect(calls.map((call) => call.id)).toEqual(['call_1_0', 'call_2_0', 'call_3_0', 'call_4_0', 'call_5_0', 'call_6_0']);
    expect(calls.every((call) => call.cwd === ws)).toBe(true);
    expect(calls[1]!.args).toEqual({ path: join(ws, 'a.txt'), old_str: 'a', new_str: 'b' });
    expect(run!.steps.at(-1)).toMatchObject({ type: 'answer', text: 'a.txt now says b.' });
  });

  it('audits it with the copilot catalog, refusing the edit made while the first was unverified', async () => {
    let out = '';
    let err = '';
    const code = await main(['audit', logs[0]!], { out: (t) => (out += t), err: (t) => (err += t) });
    expect(err).toBe('');
    expect(out).toContain("catalog auto: copilot, the log's format, knows 3 of 3 tool names");
    expect(out).toMatch(/would have been refused: write 'edit' on \S*a\.txt in VERIFYING \[unverified-write\]/);
    expect(out).toContain('6 calls, 1 would have been refused, ends in READING');
    expect(code).toBe(1);
  });
});
