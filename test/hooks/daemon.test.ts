/**
 * The hook daemon (src/hooks/daemon.ts) started for real on a free port of
 * 127.0.0.1: Claude Code payloads posted over HTTP, the session files on
 * disk shared with the command hook (mixing), the bounds and the loopback
 * checks, and the curl forwarder that `hook install --daemon` writes, with
 * the daemon stopped, falling back to the process hook (built with esbuild).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { daemonForwarderCommand, startHookDaemon, HookDaemonAddressError, type HookDaemon } from '../../src/hooks/daemon.js';
import { hookEventsOf, installedHooks, installHookSettings, uninstallHookSettings } from '../../src/hooks/install.js';
import { MAX_HOOK_PAYLOAD } from '../../src/hooks/run.js';
import { buildHookExecutable } from '../support/claude-code.js';

let stateDir: string;
let daemon: HookDaemon;
let built: Awaited<ReturnType<typeof buildHookExecutable>>;

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), 'pulse-daemon-'));
  daemon = await startHookDaemon({ port: 0, stateDir });
  built = await buildHookExecutable();
}, 120_000);

afterAll(async () => {
  await daemon?.close();
  built?.remove();
  rmSync(stateDir, { recursive: true, force: true });
});

/** A Claude Code before- or after-tool payload for a Bash command. */
function bash(session: string, id: string, command: string, event: 'PreToolUse' | 'PostToolUse' = 'PreToolUse'): string {
  return JSON.stringify({
    session_id: session,
    transcript_path: '/tmp/t.jsonl',
    cwd: '/home/dev/project',
    hook_event_name: event,
    tool_name: 'Bash',
    tool_input: { command },
    tool_use_id: id,
    ...(event === 'PostToolUse' ? { tool_response: { stdout: '', stderr: '', interrupted: false } } : {}),
  });
}

interface Reply {
  status: number;
  body: string;
}

/** Posts `body` to `path` of the daemon with the given extra headers (`host` replaces the Host header). */
function post(path: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: daemon.port,
        path,
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function decision(reply: Reply): { decision: string | undefined; reason: string } {
  const output = JSON.parse(reply.body) as { hookSpecificOutput?: { permissionDecision?: string; permissionDecisionReason?: string } };
  return { decision: output.hookSpecificOutput?.permissionDecision, reason: output.hookSpecificOutput?.permissionDecisionReason ?? '' };
}

/** Runs the process hook (the built `bin.js`) on `payload` with the daemon's state directory. */
function commandHook(payload: string): { stdout: string; status: number | null } {
  const result = spawnSync(process.execPath, [built.bin, 'hook', 'claude-code'], {
    input: payload,
    encoding: 'utf8',
    env: { ...process.env, PULSE_SAFETY_STATE_DIR: stateDir },
  });
  return { stdout: result.stdout, status: result.status };
}

/** Runs `bash -c command` with `input` on stdin, without blocking this process's event loop (the daemon answers in it). */
function bashC(command: string, input: string, env: NodeJS.ProcessEnv): Promise<{ stdout: string; status: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', command], { env, stdio: ['pipe', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.on('error', reject);
    child.on('close', (status) => resolve({ stdout, status }));
    child.stdin.end(input);
  });
}

describe('the hook daemon', () => {
  it('refuses a write before any read with FSM_BLOCKED, as a 200 with the deny', async () => {
    const reply = await post('/hook/claude-code', bash('s-refuse', 'w1', 'rm -rf ~/x'));
    expect(reply.status).toBe(200);
    const answer = decision(reply);
    expect(answer.decision).toBe('deny');
    expect(answer.reason).toContain('FSM_BLOCKED');
  });

  it('admits a read (an empty 200 body: no decision) and then the write', async () => {
    const read = await post('/hook/claude-code', bash('s-admit', 'r1', 'ls ~'));
    expect(read).toEqual({ status: 200, body: '' });
    expect((await post('/hook/claude-code', bash('s-admit', 'r1', 'ls ~', 'PostToolUse'))).status).toBe(200);
    expect(await post('/hook/claude-code', bash('s-admit', 'w1', 'rm -rf ~/x'))).toEqual({ status: 200, body: '' });
  });

  it('shares the session with the command hook: a write the daemon admitted is unverified for the process hook', async () => {
    await post('/hook/claude-code', bash('s-mix', 'r1', 'ls ~'));
    await post('/hook/claude-code', bash('s-mix', 'r1', 'ls ~', 'PostToolUse'));
    expect((await post('/hook/claude-code', bash('s-mix', 'w1', 'rm -rf ~/x'))).body).toBe('');
    await post('/hook/claude-code', bash('s-mix', 'w1', 'rm -rf ~/x', 'PostToolUse'));
    const second = commandHook(bash('s-mix', 'w2', 'rm -rf ~/y'));
    expect(second.status).toBe(0);
    expect(second.stdout).toContain('"permissionDecision":"deny"');
    expect(second.stdout).toContain('FSM_BLOCKED');
    // The process hook's verifying read is seen by the daemon: the next write is admitted there.
    expect(commandHook(bash('s-mix', 'r2', 'ls ~')).stdout).toBe('');
    commandHook(bash('s-mix', 'r2', 'ls ~', 'PostToolUse'));
    expect((await post('/hook/claude-code', bash('s-mix', 'w3', 'rm -rf ~/y'))).body).toBe('');
  });

  it('refuses a body over the bound as a decision, and keeps serving', async () => {
    const big = Buffer.alloc(MAX_HOOK_PAYLOAD + 1024, 0x20);
    const reply = await post('/hook/claude-code', big);
    expect(reply.status).toBe(200);
    expect(decision(reply).decision).toBe('deny');
    expect(decision(reply).reason).toContain('HOOK_PAYLOAD_INVALID');
    const after = await post('/hook/claude-code', bash('s-big', 'w1', 'rm -rf ~/x'));
    expect(decision(after).decision).toBe('deny');
    expect(decision(after).reason).toContain('FSM_BLOCKED');
  });

  it('answers an unknown host with a deny, never a non-2xx Claude Code would read as "go on"', async () => {
    const reply = await post('/hook/nosuch', bash('s-unknown', 'w1', 'rm -rf ~/x'));
    expect(reply.status).toBe(200);
    expect(decision(reply).decision).toBe('deny');
  });

  it('refuses a non-loopback Host and any Origin (DNS rebinding), and binds 127.0.0.1 only', async () => {
    const rebound = await post('/hook/claude-code', bash('s-host', 'r1', 'ls ~'), { host: `evil.example:${daemon.port}` });
    expect(rebound.status).toBe(403);
    const page = await post('/hook/claude-code', bash('s-host', 'r1', 'ls ~'), { origin: 'http://evil.example' });
    expect(page.status).toBe(403);
    const own = await post('/hook/claude-code', bash('s-host', 'r1', 'ls ~'), { host: `localhost:${daemon.port}` });
    expect(own).toEqual({ status: 200, body: '' });
    await expect(startHookDaemon({ port: 0, host: '0.0.0.0', stateDir })).rejects.toBeInstanceOf(HookDaemonAddressError);
  });

  it('the curl forwarder answers through the daemon, and with the daemon stopped the process hook still refuses a write', async () => {
    const fallback = `'${process.execPath}' '${built.bin}' hook claude-code`;
    const env = { ...process.env, PULSE_SAFETY_STATE_DIR: stateDir };
    const other = await startHookDaemon({ port: 0, stateDir });
    const command = daemonForwarderCommand('claude-code', other.port, fallback);
    // Through the daemon: a refusal, and the daemon's session file written (the process hook is never run: a deny from it would need its own refusal).
    const through = await bashC(command, bash('s-curl', 'w0', 'rm -rf ~/x'), {
      ...env,
      PULSE_SAFETY_STATE_DIR: '/nonexistent/pulse-no-fallback',
    });
    expect(through.status).toBe(0);
    expect(through.stdout).toContain('FSM_BLOCKED');
    const silent = await bashC(command, bash('s-curl', 'r1', 'ls ~'), env);
    expect(silent).toEqual({ stdout: '', status: 0 });
    await other.close();
    const down = await bashC(command, bash('s-curl', 'w1', 'rm -rf ~/x'), env);
    expect(down.status).toBe(0);
    expect(down.stdout).toContain('"permissionDecision":"deny"');
    expect(down.stdout).toContain('FSM_BLOCKED');
  });
});

describe('hook install --daemon', () => {
  it("writes Claude Code's http hook and the forwarder elsewhere, both recognised as ours by uninstall", () => {
    const url = 'http://127.0.0.1:4311/hook/claude-code';
    const claude = installHookSettings('claude-code', null, url, 'settings.json');
    const pre = (JSON.parse(claude.text!) as { hooks: Record<string, { hooks: Record<string, unknown>[] }[]> }).hooks.PreToolUse![0]!
      .hooks[0];
    expect(pre).toEqual({ type: 'http', url, timeout: expect.any(Number) as number, onFailure: 'block' });
    expect(installedHooks('claude-code', claude.text, 'settings.json')).toHaveLength(hookEventsOf('claude-code').length);
    expect(uninstallHookSettings('claude-code', claude.text, 'settings.json').text).toBeNull();

    const forwarder = daemonForwarderCommand('codex', 4311, `/usr/bin/node '/opt/pulse-safety-fsm/dist/src/bin.js' hook codex`);
    const codex = installHookSettings('codex', null, forwarder, 'hooks.json');
    expect(installedHooks('codex', codex.text, 'hooks.json').map((hook) => hook.command)).toEqual(
      hookEventsOf('codex').map(() => forwarder),
    );
    expect(uninstallHookSettings('codex', codex.text, 'hooks.json').text).toBeNull();
  });
});
