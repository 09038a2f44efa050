/**
 * One worker process of the multi-process test (test/suites/multiprocess.test.ts):
 * sends interleaved checks, records and final answers for sessions shared
 * with the other workers, through `createSharedSessionStore` over Redis or
 * one SQLite file, and logs every committed call as a JSON line on stdout:
 * `{ s, op, call?, outcome?, at, v, ch, a, r }` (session, operation, the
 * call, the time of the committed attempt, the version committed, whether
 * the snapshot changed, the attempts, the result as JSON). The last line is
 * `{ "done": <calls> }`.
 *
 * Usage: node shared-worker.js '<json: WorkerConfig>'. Transpiled with its
 * imports by the test; not part of the library.
 */
import { Redis } from 'ioredis';
import type { ToolCall } from '../../src/guard/session-guard.js';
import { createRedisSnapshotStore } from '../../src/store/redis-store.js';
import { createSharedSessionStore, createSqliteVersionedStore, type VersionedSnapshotStore } from '../../src/store/shared-session-store.js';

/** What a worker does. */
export interface WorkerConfig {
  backend: { kind: 'redis'; url: string; keyPrefix: string } | { kind: 'sqlite'; file: string };
  /** This worker's number, 0-based: it names its call ids. */
  worker: number;
  /** Sessions `s0` .. `s<sessions-1>`, shared by all workers; each worker calls on all of them when `calls` >= 2 × `sessions`. */
  sessions: number;
  /** Sessions `s0` .. `s<hot-1>` get half of the calls, so workers meet on them. */
  hot: number;
  /** Calls this worker makes. */
  calls: number;
  /** Calls in flight at once in this worker. */
  concurrency: number;
  /** Stop early (and say so) past this many ms. */
  deadlineMs: number;
}

/** One committed call, as logged. */
export interface LogLine {
  s: string;
  op: 'check' | 'record' | 'answer';
  call?: ToolCall;
  outcome?: 'success' | 'error';
  at: number;
  v: number;
  ch: boolean;
  a: number;
  r: string;
}

/** A small seeded generator (mulberry32), so a run's calls can be told again. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TOOLS: ToolCall[] = [
  { name: 'find_order', kind: 'resolve' },
  { name: 'get_order', kind: 'read' },
  { name: 'get_order', kind: 'read' },
  { name: 'cancel_order', kind: 'write' },
  { name: 'update_address', kind: 'write' },
];

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2]!) as WorkerConfig;
  let started = Date.now();
  let redis: Redis | undefined;
  let store: VersionedSnapshotStore;
  if (config.backend.kind === 'redis') {
    redis = new Redis(config.backend.url, { maxRetriesPerRequest: 1 });
    store = createRedisSnapshotStore(redis, { keyPrefix: config.backend.keyPrefix, ttlMs: 10 * 60_000 });
  } else {
    store = createSqliteVersionedStore(config.backend.file, { synchronous: 'NORMAL', busyTimeoutMs: 20_000 });
  }
  const sessions = createSharedSessionStore({ store, maxRetries: 100 });
  const next = random(1 + config.worker * 7919);
  /** Calls this worker had admitted and not yet recorded, by session. */
  const admitted = new Map<string, ToolCall[]>();
  const out: string[] = [];
  let issued = 0;
  let cursor = 0;
  let done = 0;

  async function one(n: number): Promise<void> {
    // Half the calls on the hot sessions, at random; the other half on every session in turn, from this worker's own start.
    const s = `s${next() < 0.5 ? Math.floor(next() * config.hot) : (config.worker * 250 + cursor++) % config.sessions}`;
    const open = admitted.get(s) ?? [];
    const roll = next();
    let line: LogLine;
    if (open.length > 0 && roll < 0.5) {
      const call = open.splice(Math.floor(next() * open.length), 1)[0]!;
      const outcome = next() < 0.85 ? 'success' : 'error';
      const c = await sessions.transact(s, (guard) => guard.record(call, outcome));
      line = { s, op: 'record', call, outcome, at: c.at, v: c.version, ch: c.changed, a: c.attempts, r: JSON.stringify(c.value) };
    } else if (roll > 0.95) {
      const c = await sessions.transact(s, (guard) => guard.finalAnswer());
      line = { s, op: 'answer', at: c.at, v: c.version, ch: c.changed, a: c.attempts, r: JSON.stringify(c.value) };
    } else {
      const call = { id: `w${config.worker}-${n}`, ...TOOLS[Math.floor(next() * TOOLS.length)]! };
      const c = await sessions.transact(s, (guard) => guard.check(call));
      if (c.value.allowed) admitted.set(s, [...(admitted.get(s) ?? []), call]);
      line = { s, op: 'check', call, at: c.at, v: c.version, ch: c.changed, a: c.attempts, r: JSON.stringify(c.value) };
    }
    out.push(JSON.stringify(line));
    done += 1;
  }

  // A start barrier: say it is ready, then wait for the test's go, so every process starts its calls together and they race.
  process.stdout.write(`${JSON.stringify({ ready: config.worker })}\n`);
  await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
  process.stdin.pause();
  started = Date.now();

  async function lane(): Promise<void> {
    while (issued < config.calls && Date.now() - started < config.deadlineMs) {
      issued += 1;
      await one(issued);
    }
  }
  await Promise.all(Array.from({ length: config.concurrency }, lane));
  await sessions.close();
  redis?.disconnect();
  out.push(JSON.stringify({ done }));
  process.stdout.write(`${out.join('\n')}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
