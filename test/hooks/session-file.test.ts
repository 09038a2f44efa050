/**
 * Hook sessions on disk (issue 25 item 2), with real processes: parallel
 * hook processes never lose an update, a hook killed with SIGKILL holding
 * the lock or mid-write leaves the last good record and its lock is taken
 * over within the stale bound, a live holder's lock is never taken, corrupt
 * files fail closed and stay until removed, and paths never hold the raw id.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  HOOK_LOCK_STALE_MS,
  HookStateError,
  MAX_HOOK_DECISIONS,
  hookStateDirectory,
  readHookSessions,
  removeHookSession,
  removeStaleHookSessions,
  sessionFilePath,
  updateHookSession,
  type HookSessionRecord,
} from '../../src/hooks/session-file.js';
import type { HookHost } from '../../src/hooks/types.js';

const CHILD_SOURCE = fileURLToPath(new URL('./session-file-child.ts', import.meta.url));
const HOST: HookHost = 'claude-code';

let scratch: string;
let child: string;
let stateDir: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'pulse-hook-sessions-'));
  child = join(scratch, 'session-file-child.mjs');
  await build({ entryPoints: [CHILD_SOURCE], outfile: child, bundle: true, platform: 'node', format: 'esm', logLevel: 'error' });
});

afterAll(() => {
  for (const process of children) process.kill('SIGKILL');
  rmSync(scratch, { recursive: true, force: true });
});

beforeEach(() => {
  stateDir = mkdtempSync(join(scratch, 'state-'));
});

function record(sessionId: string, patch: Partial<HookSessionRecord> = {}, host: HookHost = HOST): HookSessionRecord {
  return {
    version: 1,
    host,
    sessionId,
    createdAt: 1000,
    updatedAt: 2000,
    snapshot: null,
    calls: {},
    decisions: [],
    stopBlocks: 0,
    ...patch,
  };
}

const put = (sessionId: string, next: HookSessionRecord | null, host: HookHost = HOST) =>
  updateHookSession(stateDir, host, sessionId, () => ({ next, value: undefined }));

const get = (sessionId: string, host: HookHost = HOST) =>
  updateHookSession(stateDir, host, sessionId, (current) => ({ next: current, value: current }));

/** Starts the child hook process; resolves with its exit code and output. */
function run(args: string[]): {
  process: ChildProcess;
  exited: Promise<{ code: number | null; stdout: string; stderr: string }>;
  line: (text: string) => Promise<void>;
} {
  const process = spawn(globalThis.process.execPath, [child, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(process);
  let stdout = '';
  let stderr = '';
  const waiting: Array<{ text: string; resolve: () => void }> = [];
  process.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    for (const wait of waiting) if (stdout.split('\n').includes(wait.text)) wait.resolve();
  });
  process.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    process.on('close', (code) => resolve({ code, stdout, stderr })),
  );
  const line = (text: string) =>
    new Promise<void>((resolve, reject) => {
      if (stdout.split('\n').includes(text)) return resolve();
      waiting.push({ text, resolve });
      void exited.then(({ stderr }) => reject(new Error(`the child exited before "${text}": ${stderr}`)));
    });
  return { process, exited, line };
}

async function killed(child: ReturnType<typeof run>): Promise<void> {
  child.process.kill('SIGKILL');
  await child.exited;
}

async function stateError(promise: Promise<unknown>): Promise<HookStateError> {
  const error = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(error).toBeInstanceOf(HookStateError);
  return error as HookStateError;
}

describe('parallel hook processes', () => {
  it('8 processes × 25 read-modify-write increments lose no update', async () => {
    const runs = Array.from({ length: 8 }, () => run(['increment', stateDir, 'parallel', '25']));
    const results = await Promise.all(runs.map((one) => one.exited));
    for (const result of results) expect(result).toMatchObject({ code: 0, stderr: '' });
    const final = await get('parallel');
    expect(final?.stopBlocks).toBe(200);
    expect(final?.decisions).toHaveLength(MAX_HOOK_DECISIONS);
    expect(readdirSync(join(stateDir, HOST))).toEqual([basename(sessionFilePath(stateDir, HOST, 'parallel'))]);
  }, 120_000);

  it('8 processes waiting behind a dead lock take it over one at a time', async () => {
    // The case proper-lockfile 4.1.2 gets wrong (two waiters both taking over a stale lock).
    await put('dead-lock', record('dead-lock'));
    const lockPath = `${sessionFilePath(stateDir, HOST, 'dead-lock')}.lock`;
    writeFileSync(lockPath, 'a killed hook');
    const past = new Date(Date.now() - HOOK_LOCK_STALE_MS + 300);
    utimesSync(lockPath, past, past);
    const runs = Array.from({ length: 8 }, () => run(['increment', stateDir, 'dead-lock', '10']));
    const results = await Promise.all(runs.map((one) => one.exited));
    for (const result of results) expect(result).toMatchObject({ code: 0, stderr: '' });
    expect((await get('dead-lock'))?.stopBlocks).toBe(80);
    expect(readdirSync(join(stateDir, HOST)).filter((name) => name !== basename(sessionFilePath(stateDir, HOST, 'dead-lock')))).toEqual([]);
  }, 120_000);
});

describe('a hook killed with SIGKILL', () => {
  it('holding the lock: the next update gets the last good record once the lock is stale', async () => {
    await put('killed', record('killed', { stopBlocks: 7 }));
    const before = readFileSync(sessionFilePath(stateDir, HOST, 'killed'), 'utf8');
    const holder = run(['block', stateDir, 'killed', '0']);
    await holder.line('locked');
    await killed(holder);
    expect(readFileSync(sessionFilePath(stateDir, HOST, 'killed'), 'utf8')).toBe(before);
    // Waiting up to the stale bound and a margin is enough: a lock not taken over by then would time out.
    const seen = await updateHookSession(stateDir, HOST, 'killed', (current) => ({ next: current, value: current }), {
      lockTimeoutMs: HOOK_LOCK_STALE_MS + 3000,
    });
    expect(seen?.stopBlocks).toBe(7);
    expect(readdirSync(join(stateDir, HOST))).toEqual([basename(sessionFilePath(stateDir, HOST, 'killed'))]);
  }, 30_000);

  it('mid-write: the file is the last good record or the new one, never a part; leftovers are ignored, then collected', async () => {
    const path = sessionFilePath(stateDir, HOST, 'torn');
    const bytes = 64 * 1024 * 1024;
    let caughtMidWrite = false;
    for (let attempt = 0; attempt < 5 && !caughtMidWrite; attempt++) {
      await put('torn', record('torn', { stopBlocks: attempt }));
      const writer = run(['block', stateDir, 'torn', String(bytes)]);
      await writer.line('writing');
      // Kill as soon as the temporary file has some of the record but not all of it.
      for (;;) {
        await new Promise((resolve) => setImmediate(resolve));
        const partial = readdirSync(dirname(path))
          .filter((name) => name.endsWith('.tmp'))
          .map((name) => statSync(join(dirname(path), name), { throwIfNoEntry: false })?.size ?? 0)
          .find((size) => size > 0 && size < bytes);
        if (partial !== undefined) {
          caughtMidWrite = true;
          break;
        }
        if (writer.process.exitCode !== null) break;
      }
      await killed(writer);
      const after = await get('torn');
      expect(after === null ? null : after.stopBlocks).toBe(caughtMidWrite ? attempt : attempt + 1);
      expect(typeof after?.snapshot === 'string' ? (after.snapshot as string).length : 0).toBe(caughtMidWrite ? 0 : bytes);
    }
    expect(caughtMidWrite).toBe(true);
    const listed = await readHookSessions(stateDir);
    expect(listed.map((entry) => [entry.path, 'record' in entry])).toEqual([[path, true]]);
    expect(readdirSync(dirname(path)).some((name) => name.endsWith('.tmp'))).toBe(true);
    expect(await removeStaleHookSessions(stateDir, 0, Date.now() + 1)).toBe(1);
    expect(readdirSync(dirname(path))).toEqual([]);
  }, 120_000);
});

describe('the lock', () => {
  it('a live holder keeps it past the stale bound: HOOK_STATE_LOCKED, nothing written; free again once released', async () => {
    await put('held', record('held', { stopBlocks: 1 }));
    const holder = run(['hold', stateDir, 'held', String(HOOK_LOCK_STALE_MS * 2 + 2000)]);
    await holder.line('locked');
    let called = false;
    const quick = await stateError(
      updateHookSession(stateDir, HOST, 'held', () => ((called = true), { next: null, value: 0 }), { lockTimeoutMs: 200 }),
    );
    expect(quick).toMatchObject({ code: 'HOOK_STATE_LOCKED', path: `${sessionFilePath(stateDir, HOST, 'held')}.lock` });
    const patient = await stateError(
      updateHookSession(stateDir, HOST, 'held', () => ((called = true), { next: null, value: 0 }), {
        lockTimeoutMs: HOOK_LOCK_STALE_MS * 2,
      }),
    );
    expect(patient.code).toBe('HOOK_STATE_LOCKED');
    expect(called).toBe(false);
    expect(await holder.exited).toMatchObject({ code: 0 });
    expect((await get('held'))?.stopBlocks).toBe(1);
  }, 30_000);

  it('an update that throws writes nothing, releases the lock and rethrows', async () => {
    await put('throws', record('throws', { stopBlocks: 3 }));
    const failure = new Error('the gate failed');
    await expect(
      updateHookSession(stateDir, HOST, 'throws', () => {
        throw failure;
      }),
    ).rejects.toBe(failure);
    const seen = await updateHookSession(stateDir, HOST, 'throws', (current) => ({ next: current, value: current }), { lockTimeoutMs: 0 });
    expect(seen?.stopBlocks).toBe(3);
  });
});

describe('a corrupt or unreadable file fails closed and stays until removed', () => {
  const cases: Array<[string, (path: string) => void]> = [
    ['garbage', (path) => writeFileSync(path, '\u0000\u00ff not json at all')],
    ['truncated JSON', (path) => writeFileSync(path, JSON.stringify(record('corrupt')).slice(0, 40))],
    ['valid JSON of the wrong shape', (path) => writeFileSync(path, JSON.stringify({ ...record('corrupt'), stopBlocks: -1 }))],
    ['an unknown field', (path) => writeFileSync(path, JSON.stringify({ ...record('corrupt'), allowAll: true }))],
    [
      'a call in flight under __proto__',
      (path) =>
        writeFileSync(
          path,
          JSON.stringify(record('corrupt')).replace(
            '"calls":{}',
            '"calls":{"__proto__":{"name":"Bash","kind":"write","targets":[],"echoes":false,"catalog":"claude-code","at":1}}',
          ),
        ),
    ],
    ['another session’s record', (path) => writeFileSync(path, JSON.stringify(record('someone else')))],
    ['a directory in its place', (path) => mkdirSync(join(path, 'inside'), { recursive: true })],
  ];
  for (const [name, corrupt] of cases) {
    it(name, async () => {
      const path = sessionFilePath(stateDir, HOST, 'corrupt');
      mkdirSync(dirname(path), { recursive: true });
      corrupt(path);
      const before = statSync(path).isDirectory() ? 'directory' : readFileSync(path, 'latin1');
      let called = false;
      const error = await stateError(updateHookSession(stateDir, HOST, 'corrupt', () => ((called = true), { next: null, value: 0 })));
      expect(error).toMatchObject({ code: 'HOOK_STATE_UNREADABLE', path });
      expect(called).toBe(false);
      expect(statSync(path).isDirectory() ? 'directory' : readFileSync(path, 'latin1')).toBe(before);
      const listed = await readHookSessions(stateDir);
      expect(listed).toHaveLength(1);
      expect((listed[0] as { error: HookStateError }).error.code).toBe('HOOK_STATE_UNREADABLE');
      expect(await removeHookSession(stateDir, HOST, 'corrupt')).toBe(true);
      expect(await get('corrupt')).toBeNull();
      expect(await removeHookSession(stateDir, HOST, 'corrupt')).toBe(false);
    });
  }

  const root = process.getuid?.() === 0;
  it.skipIf(root)('a file of mode 000 (skipped as root: root reads it whatever its mode)', async () => {
    await put('corrupt', record('corrupt'));
    const path = sessionFilePath(stateDir, HOST, 'corrupt');
    chmodSync(path, 0o000);
    expect(await stateError(get('corrupt'))).toMatchObject({ code: 'HOOK_STATE_UNREADABLE', path });
    expect(statSync(path).mode & 0o777).toBe(0);
    expect(await removeHookSession(stateDir, HOST, 'corrupt')).toBe(true);
    expect(await get('corrupt')).toBeNull();
  });
});

describe('paths', () => {
  it('never hold the raw session id; ids that look like paths name files like any other', async () => {
    const ids = ['../../etc/passwd', '/etc/passwd', 'a/../../b', '..', 'C:\\Windows\\x', 'nul\u0000byte', 'ünïcode 💥'];
    for (const id of ids) {
      const path = sessionFilePath(stateDir, HOST, id);
      expect(dirname(path)).toBe(join(stateDir, HOST));
      expect(basename(path)).toMatch(/^[0-9a-f]{32}\.json$/);
      expect(path).not.toContain('passwd');
      await put(id, record(id, { stopBlocks: 1 }));
      expect((await get(id))?.sessionId).toBe(id);
    }
    expect(readdirSync(stateDir)).toEqual([HOST]);
    expect(new Set(readdirSync(join(stateDir, HOST))).size).toBe(ids.length);
    expect(() => sessionFilePath(stateDir, '../x' as HookHost, 'a')).toThrow(TypeError);
    expect(() => sessionFilePath(stateDir, HOST, '')).toThrow(TypeError);
  });

  it('files are 0600 and directories 0700', async () => {
    const nested = join(stateDir, 'nested');
    await updateHookSession(nested, 'codex', 's', () => ({ next: record('s', {}, 'codex'), value: undefined }));
    expect(statSync(join(nested, 'codex')).mode & 0o777).toBe(0o700);
    expect(statSync(nested).mode & 0o777).toBe(0o700);
    expect(statSync(sessionFilePath(nested, 'codex', 's')).mode & 0o777).toBe(0o600);
  });

  it('the state directory: PULSE_SAFETY_STATE_DIR, else XDG_STATE_HOME, else the home directory', () => {
    expect(hookStateDirectory({ PULSE_SAFETY_STATE_DIR: '/srv/state', XDG_STATE_HOME: '/x' })).toBe('/srv/state');
    expect(hookStateDirectory({ XDG_STATE_HOME: '/x/state', HOME: '/home/u' })).toBe(join('/x/state', 'pulse-safety-fsm'));
    if (process.platform !== 'win32') {
      expect(hookStateDirectory({ XDG_STATE_HOME: 'relative', HOME: '/home/u' })).toBe(
        join('/home/u', '.local', 'state', 'pulse-safety-fsm'),
      );
    }
  });
});

describe('records', () => {
  it('an update sees null, then what was stored; next null deletes the file', async () => {
    expect(await get('life')).toBeNull();
    await put(
      'life',
      record('life', {
        cwd: '/p',
        transcriptPath: '/t.jsonl',
        calls: { toolu_1: { name: 'Bash', kind: 'write', targets: ['/p/x'], echoes: false, catalog: 'claude-code', at: 5 } },
      }),
    );
    const stored = await get('life');
    expect(stored).toEqual(
      record('life', {
        cwd: '/p',
        transcriptPath: '/t.jsonl',
        calls: { toolu_1: { name: 'Bash', kind: 'write', targets: ['/p/x'], echoes: false, catalog: 'claude-code', at: 5 } },
      }),
    );
    expect(stored?.calls.constructor).toBeUndefined();
    await put('life', null);
    expect(await get('life')).toBeNull();
    expect(readdirSync(join(stateDir, HOST))).toEqual([]);
  });

  it('keeps the newest MAX_HOOK_DECISIONS decisions; refuses an invalid record or another session’s, writing nothing', async () => {
    const decisions = Array.from({ length: 25 }, (_, at) => ({ at, event: 'PreToolUse', answer: 'allow' as const }));
    await put('limits', record('limits', { decisions }));
    expect((await get('limits'))?.decisions.map((decision) => decision.at)).toEqual(decisions.slice(-MAX_HOOK_DECISIONS).map((d) => d.at));
    await expect(put('limits', { ...record('limits'), stopBlocks: 1.5 })).rejects.toThrow(TypeError);
    await expect(put('limits', record('other'))).rejects.toThrow(/another host or session/);
    await expect(put('limits', { ...record('limits'), snapshot: undefined })).rejects.toThrow(/snapshot/);
    expect((await get('limits'))?.decisions).toHaveLength(MAX_HOOK_DECISIONS);
  });

  it('readHookSessions lists good and bad files of every host, ignoring leftovers and other names', async () => {
    expect(await readHookSessions(join(stateDir, 'missing'))).toEqual([]);
    await put('good', record('good', { stopBlocks: 2 }));
    await put('gemini', record('gemini', {}, 'gemini-cli'), 'gemini-cli');
    const bad = sessionFilePath(stateDir, 'codex', 'bad');
    mkdirSync(dirname(bad), { recursive: true });
    writeFileSync(bad, '{"version":1,');
    writeFileSync(`${sessionFilePath(stateDir, HOST, 'good')}.0123456789ab.tmp`, '{"half":');
    writeFileSync(join(stateDir, HOST, 'notes.txt'), 'x');
    mkdirSync(join(stateDir, 'not-a-host'));
    writeFileSync(
      join(stateDir, 'not-a-host', basename(sessionFilePath(stateDir, HOST, 'elsewhere'))),
      JSON.stringify(record('elsewhere')),
    );
    const listed = await readHookSessions(stateDir);
    const summary = listed.map((entry) =>
      'record' in entry ? { path: entry.path, id: entry.record.sessionId } : { path: entry.path, code: entry.error.code },
    );
    expect(summary).toEqual(
      [
        { path: sessionFilePath(stateDir, HOST, 'good'), id: 'good' },
        { path: sessionFilePath(stateDir, 'gemini-cli', 'gemini'), id: 'gemini' },
        { path: bad, code: 'HOOK_STATE_UNREADABLE' },
      ].sort((a, b) => (a.path < b.path ? -1 : 1)),
    );
  });

  it('removeStaleHookSessions removes sessions unused for the TTL (by updatedAt, or mtime when unreadable), keeping fresh and busy ones', async () => {
    const now = 10_000_000;
    await put('old', record('old', { updatedAt: now - 5000 }));
    await put('fresh', record('fresh', { updatedAt: now - 10 }));
    await put('busy', record('busy', { updatedAt: now - 5000 }));
    const corrupt = sessionFilePath(stateDir, HOST, 'corrupt-old');
    writeFileSync(corrupt, 'garbage');
    utimesSync(corrupt, new Date(now - 5000), new Date(now - 5000));
    const holder = run(['hold', stateDir, 'busy', '60000']);
    await holder.line('locked');
    expect(await removeStaleHookSessions(stateDir, 1000, now)).toBe(2);
    await killed(holder);
    const left = (await readHookSessions(stateDir)).map((entry) => ('record' in entry ? entry.record.sessionId : entry.path));
    expect(left.sort()).toEqual(['busy', 'fresh']);
  }, 30_000);
});
