import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { runHook } from '../../src/hooks/run.js';
import { sessionFilePath } from '../../src/hooks/session-file.js';
import { formatHookStatus, hookStatus, resetAllHookSessions, resetHookSession, resetHookSessionFile } from '../../src/hooks/status.js';

const root = mkdtempSync(join(tmpdir(), 'pulse-safety-status-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let clock = Date.UTC(2026, 11, 2, 10, 0, 0);
const now = () => clock;

/** A Claude Code payload of `event` in session `session`. */
function claude(session: string, event: string, fields: Record<string, unknown> = {}): string {
  return JSON.stringify({ session_id: session, transcript_path: '/t/x.jsonl', cwd: '/repo', hook_event_name: event, ...fields });
}

async function hook(stateDir: string, payload: string): Promise<string> {
  clock += 1000;
  const output = await runHook('claude-code', payload, { stateDir, now, env: {} });
  expect(output.exitCode).toBe(0);
  return output.stdout;
}

describe('hook status on sessions made through runHook', () => {
  const stateDir = join(root, 'live');

  test('shows the host, id, cwd, state, the call in flight and the last decisions (a read moves the state once it ran)', async () => {
    await hook(stateDir, claude('s-1', 'SessionStart', { source: 'startup' }));
    const denied = await hook(
      stateDir,
      claude('s-1', 'PreToolUse', { tool_name: 'Bash', tool_input: { command: 'rm -rf /repo/build' }, tool_use_id: 'tu-1' }),
    );
    expect(denied).toContain('FSM_BLOCKED');
    await hook(
      stateDir,
      claude('s-1', 'PreToolUse', { tool_name: 'Bash', tool_input: { command: 'ls -la /repo/build' }, tool_use_id: 'tu-2' }),
    );

    const status = await hookStatus(stateDir);
    expect(status.unreadable).toEqual([]);
    expect(status.sessions).toHaveLength(1);
    const session = status.sessions[0]!;
    expect(session).toMatchObject({ host: 'claude-code', sessionId: 's-1', cwd: '/repo', state: 'RESOLVING', stopBlocks: 0 });
    expect(session.file).toBe(sessionFilePath(stateDir, 'claude-code', 's-1'));
    expect(session.inFlight).toEqual([expect.objectContaining({ key: 'id:tu-2', tool: 'Bash', kind: 'read', targets: ['/repo/build'] })]);
    const refusal = session.decisions.find((d) => d.answer === 'deny');
    expect(refusal).toMatchObject({ event: 'PreToolUse', tool: 'Bash', code: 'FSM_BLOCKED', rule: 'no-target' });
    expect(session.decisions.at(-1)).toMatchObject({ event: 'PreToolUse', tool: 'Bash', answer: 'allow' });

    const text = formatHookStatus(status);
    expect(text).toContain('claude-code s-1: RESOLVING');
    expect(text).toContain('in flight: Bash (read /repo/build)');
    expect(text).toMatch(/PreToolUse Bash \[no-target\] FSM_BLOCKED: deny/);
  });

  test('after the read ran and a write was admitted the state follows (WRITING, then VERIFYING once it ran), and --decisions bounds the list', async () => {
    await hook(
      stateDir,
      claude('s-1', 'PostToolUse', {
        tool_name: 'Bash',
        tool_input: { command: 'ls -la /repo/build' },
        tool_use_id: 'tu-2',
        tool_response: { stdout: 'a.txt', stderr: '' },
      }),
    );
    await hook(
      stateDir,
      claude('s-1', 'PreToolUse', { tool_name: 'Bash', tool_input: { command: 'rm -rf /repo/build' }, tool_use_id: 'tu-3' }),
    );
    const status = await hookStatus(stateDir, { decisions: 2 });
    const session = status.sessions[0]!;
    expect(session.state).toBe('WRITING');
    expect(session.inFlight.map((c) => c.tool)).toEqual(['Bash']);
    expect(session.decisions).toHaveLength(2);
    expect(session.decisions.at(-1)).toMatchObject({ tool: 'Bash', answer: 'allow' });
    await hook(
      stateDir,
      claude('s-1', 'PostToolUse', {
        tool_name: 'Bash',
        tool_input: { command: 'rm -rf /repo/build' },
        tool_use_id: 'tu-3',
        tool_response: { stdout: '', stderr: '' },
      }),
    );
    const after = (await hookStatus(stateDir)).sessions[0]!;
    expect(after.state).toBe('VERIFYING');
    expect(after.inFlight).toEqual([]);
    expect(formatHookStatus({ ...status, sessions: [after] })).toContain('no calls in flight');
  });

  test('a corrupt file is listed with its code, fails the session closed, and reset makes it fresh', async () => {
    const dir = join(root, 'corrupt');
    const file = sessionFilePath(dir, 'claude-code', 's-bad');
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, '{"version":1,"host":"claude-');
    const status = await hookStatus(dir);
    expect(status.sessions).toEqual([]);
    expect(status.unreadable).toEqual([expect.objectContaining({ file, code: 'HOOK_STATE_UNREADABLE' })]);
    expect(formatHookStatus(status)).toContain(`${file}: HOOK_STATE_UNREADABLE`);

    const refused = await hook(
      dir,
      claude('s-bad', 'PreToolUse', { tool_name: 'Bash', tool_input: { command: 'ls /repo' }, tool_use_id: 'r1' }),
    );
    expect(refused).toBe(''); // a read is still allowed (silence: the normal permission flow)
    const write = await hook(
      dir,
      claude('s-bad', 'PreToolUse', { tool_name: 'Bash', tool_input: { command: 'touch /repo/x' }, tool_use_id: 'w1' }),
    );
    expect(write).toContain('HOOK_STATE_UNREADABLE');

    expect(await resetHookSession(dir, 'claude-code', 's-bad')).toBe(true);
    expect(existsSync(file)).toBe(false);
    expect(await resetHookSession(dir, 'claude-code', 's-bad')).toBe(false);
    const fresh = await hook(
      dir,
      claude('s-bad', 'PreToolUse', { tool_name: 'Bash', tool_input: { command: 'touch /repo/x' }, tool_use_id: 'w2' }),
    );
    expect(fresh).toContain('FSM_BLOCKED');
    expect((await hookStatus(dir)).sessions.map((s) => s.sessionId)).toEqual(['s-bad']);
  });

  test('a file is reset by its path only inside the state directory; --all removes readable and corrupt ones', async () => {
    const dir = join(root, 'all');
    await hook(dir, claude('a', 'SessionStart'));
    await hook(dir, claude('b', 'SessionStart'));
    const corrupt = sessionFilePath(dir, 'codex', 'c');
    mkdirSync(dirname(corrupt), { recursive: true });
    writeFileSync(corrupt, 'not json');
    await expect(resetHookSessionFile(dir, join(root, 'elsewhere.json'))).rejects.toThrow(/not a session file/);
    await expect(resetHookSessionFile(dir, dir)).rejects.toThrow(/not a session file/);
    expect(await resetAllHookSessions(dir)).toBe(3);
    const status = await hookStatus(dir);
    expect(status.sessions).toEqual([]);
    expect(status.unreadable).toEqual([]);
  });

  test('values from a session file cannot forge lines or send escapes', async () => {
    const dir = join(root, 'hostile');
    await hook(dir, claude('x\n  forged line\u001b[2J', 'SessionStart'));
    const text = formatHookStatus(await hookStatus(dir));
    expect(text).not.toContain('\n  forged line');
    expect(text).not.toContain('\u001b');
  });
});
