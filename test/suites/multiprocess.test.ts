/**
 * Sessions shared by several processes (ISSUE 13, item 5): worker processes
 * (test/support/shared-worker.ts) send interleaved checks, records and final
 * answers for the same sessions at once, through `createSharedSessionStore`
 * over one Redis (4 workers, 1,000 sessions) and over one SQLite file (2
 * workers). Each worker logs every committed call with the version it
 * committed at. Afterwards, per session:
 *
 * - no update was lost: the versions that changed the session follow each
 *   other with no gap and no repeat, and replaying the session's calls in
 *   commit order through one plain `createSessionGuard` gives every logged
 *   decision and the stored snapshot;
 * - no write was admitted while a write was in flight or after a successful
 *   write with no successful read recorded since (read-after-write).
 *
 * The call count and the time are bounded (each worker stops at its call
 * count or its deadline, the test kills stragglers).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSessionGuard, type SessionGuard } from '../../src/guard/session-guard.js';
import { createRedisSnapshotStore } from '../../src/store/redis-store.js';
import { createSqliteVersionedStore, type VersionedSnapshot, type VersionedSnapshotStore } from '../../src/store/shared-session-store.js';
import { client, deletePrefix, redisPlan, redisSkipNote, startRedis, testPrefix, type RedisServer } from '../support/redis.js';
import type { LogLine, WorkerConfig } from '../support/shared-worker.js';
import { transpileTree } from '../support/transpile.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const plan = redisPlan();
const redisSkip = redisSkipNote(plan);
const sqliteMissing = ((): string => {
  try {
    createRequire(import.meta.url)('better-sqlite3');
    return '';
  } catch {
    return ' (skipped: the optional dependency better-sqlite3 is not installed)';
  }
})();

/** Inside the project (test-output/ is ignored by git), so the workers resolve node_modules. */
const out = join(root, 'test-output', `multiprocess-${process.pid}`);
const tmp = mkdtempSync(join(tmpdir(), 'pulse-safety-multiprocess-'));
let worker = '';
beforeAll(() => {
  worker = transpileTree(root, join(root, 'test/support/shared-worker.ts'), out);
});
afterAll(() => {
  rmSync(out, { recursive: true, force: true });
  rmSync(tmp, { recursive: true, force: true });
});

/** A worker started: `ready` once it has set up its store, `done` with its log lines once it exits 0 (killed past `killAfterMs`). */
interface StartedWorker {
  ready: Promise<void>;
  go(): void;
  done: Promise<LogLine[]>;
}

/** Starts one worker, which makes no call before `go` (a start barrier, so the processes race). */
function startWorker(config: WorkerConfig, killAfterMs: number): StartedWorker {
  const child = spawn(process.execPath, [worker, JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let markReady = (): void => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    if (stdout.includes('\n')) markReady();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const done = new Promise<LogLine[]>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      markReady();
      if (code !== 0) {
        reject(new Error(`worker ${config.worker} exited with ${code ?? signal}:\n${stderr}`));
        return;
      }
      const lines = stdout
        .trim()
        .split('\n')
        .slice(1) // the ready line
        .map((line) => JSON.parse(line) as LogLine | { done: number });
      const last = lines.pop() as { done?: number };
      if (last.done !== lines.length) reject(new Error(`worker ${config.worker} logged ${lines.length} calls but made ${last.done}`));
      else resolve(lines as LogLine[]);
    });
  });
  return { ready, go: () => child.stdin.end('go\n'), done };
}

/** Runs workers together: each sets up, then all start their calls at once; resolves with every worker's log lines. */
async function runWorkers(configs: WorkerConfig[], killAfterMs: number): Promise<LogLine[][]> {
  const workers = configs.map((config) => startWorker(config, killAfterMs));
  await Promise.all(workers.map((w) => w.ready));
  for (const w of workers) w.go();
  return Promise.all(workers.map((w) => w.done));
}

/** What the checks found, per run: counts to show the run was not vacuous, and every violation. */
interface Findings {
  sessions: number;
  calls: number;
  retried: number;
  writesAdmitted: number;
  writesRefused: number;
  /** Violations (the first few of each, with their total). */
  lost: string[];
  mismatched: string[];
  unsafe: string[];
}

/** Notes a violation: the first five in full, then only counted. */
function note(list: string[], text: () => string): void {
  if (list.length < 5) list.push(text());
  else if (list.length === 5) list.push('and more');
}

/** Applies a logged call to a guard; the result as JSON, as the worker logged it. */
function apply(guard: SessionGuard, line: LogLine): string {
  if (line.op === 'check') return JSON.stringify(guard.check(line.call!));
  if (line.op === 'record') return JSON.stringify(guard.record(line.call!, line.outcome));
  return JSON.stringify(guard.finalAnswer());
}

/** The checks of the module comment, over every worker's log and the sessions as stored at the end. */
async function inspect(lines: LogLine[], store: VersionedSnapshotStore): Promise<Findings> {
  const bySession = new Map<string, LogLine[]>();
  for (const line of lines) bySession.set(line.s, [...(bySession.get(line.s) ?? []), line]);
  const found: Findings = {
    sessions: bySession.size,
    calls: lines.length,
    retried: lines.filter((l) => l.a > 1).length,
    writesAdmitted: 0,
    writesRefused: 0,
    lost: [],
    mismatched: [],
    unsafe: [],
  };
  for (const [session, calls] of bySession) {
    // Commit order: by version; a call that changed nothing comes after the one that made its version.
    calls.sort((a, b) => a.v - b.v || Number(b.ch) - Number(a.ch));
    const versions = calls.filter((c) => c.ch).map((c) => c.v);
    if (!calls[0]!.ch || versions.some((v, i) => v !== versions[0]! + i)) {
      note(found.lost, () => `${session}: the versions that changed it are not consecutive: ${versions.slice(0, 12).join(', ')}...`);
    }
    let at = 0;
    const guard = createSessionGuard({ now: () => at });
    const inFlightWrites = new Set<string>();
    let unverified = false;
    for (const call of calls) {
      at = call.at;
      const replayed = apply(guard, call);
      if (replayed !== call.r) {
        note(
          found.mismatched,
          () => `${session} v${call.v} ${call.op} ${JSON.stringify(call.call)}: logged ${call.r}, replayed ${replayed}`,
        );
      }
      const kind = call.call?.kind;
      if (call.op === 'check' && kind === 'write') {
        const allowed = (JSON.parse(call.r) as { allowed: boolean }).allowed;
        if (allowed && (inFlightWrites.size > 0 || unverified)) {
          note(
            found.unsafe,
            () =>
              `${session} v${call.v}: ${call.call!.id} admitted with ${inFlightWrites.size > 0 ? 'a write in flight' : 'a write unverified'}`,
          );
        }
        if (allowed) inFlightWrites.add(call.call!.id!);
        found[allowed ? 'writesAdmitted' : 'writesRefused'] += 1;
      } else if (call.op === 'record' && inFlightWrites.delete(call.call!.id!)) {
        if (call.outcome === 'success') unverified = true;
      } else if (call.op === 'record' && call.outcome === 'success' && (kind === 'read' || kind === 'resolve')) {
        unverified = false;
      }
    }
    const stored = await store.load(session);
    const replayed: VersionedSnapshot = { snapshot: JSON.stringify(guard.getPersistedSnapshot()), version: versions.at(-1)! };
    if (stored === undefined || stored.snapshot !== replayed.snapshot || stored.version !== replayed.version) {
      note(found.lost, () => `${session}: stored ${JSON.stringify(stored)}, replayed ${JSON.stringify(replayed)}`);
    }
  }
  return found;
}

/** What every run must show. */
function expectConsistent(found: Findings, sessions: number, calls: number): void {
  expect({ lost: found.lost, mismatched: found.mismatched, unsafe: found.unsafe }).toEqual({ lost: [], mismatched: [], unsafe: [] });
  expect([found.sessions, found.calls]).toEqual([sessions, calls]);
  // Not vacuous: processes lost races and retried, and the gate both admitted and refused writes.
  expect(found.retried).toBeGreaterThan(0);
  expect(found.writesAdmitted).toBeGreaterThan(0);
  expect(found.writesRefused).toBeGreaterThan(0);
}

describe.skipIf(redisSkip !== '')(`4 processes, 1,000 sessions in one Redis${redisSkip}`, () => {
  let server: RedisServer;
  let redis: Redis;
  const keyPrefix = testPrefix('multiprocess');
  beforeAll(async () => {
    server = await startRedis(plan);
    redis = client(server.url);
  });
  afterAll(async () => {
    if (redis !== undefined) {
      await deletePrefix(redis, keyPrefix);
      redis.disconnect();
    }
    await server?.stop();
  });

  it('loses no update and never admits a write without a verifying read', { timeout: 180_000 }, async () => {
    const sessions = 1000;
    const calls = 2500;
    const logs = await runWorkers(
      [0, 1, 2, 3].map((n) => ({
        backend: { kind: 'redis', url: server.url, keyPrefix },
        worker: n,
        sessions,
        hot: 20,
        calls,
        concurrency: 16,
        deadlineMs: 120_000,
      })),
      150_000,
    );
    const found = await inspect(logs.flat(), createRedisSnapshotStore(redis, { keyPrefix }));
    expectConsistent(found, sessions, 4 * calls);
  });
});

describe.skipIf(sqliteMissing !== '')(`2 processes, 1,000 sessions in one SQLite file${sqliteMissing}`, () => {
  it('loses no update and never admits a write without a verifying read', { timeout: 180_000 }, async () => {
    const file = join(tmp, 'shared.db');
    const sessions = 1000;
    const calls = 2000;
    const logs = await runWorkers(
      [0, 1].map((n) => ({ backend: { kind: 'sqlite', file }, worker: n, sessions, hot: 20, calls, concurrency: 16, deadlineMs: 120_000 })),
      150_000,
    );
    const store = createSqliteVersionedStore(file);
    const found = await inspect(logs.flat(), store);
    await store.close();
    expectConsistent(found, sessions, 2 * calls);
  });
});
