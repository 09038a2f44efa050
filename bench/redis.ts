/**
 * The Redis rows of the benchmark, in a process of their own (bench/run.ts
 * runs `node dist/bench/redis.js` and reads one JSON object from stdout):
 *
 * - check + record per tool call through `createSharedSessionStore` over
 *   `createRedisSnapshotStore`, one process, one session, calls one after
 *   another: with the live gate kept (one compare-and-set per decision, two
 *   round trips per call) and without it (`idleMs: 0`: a load and a
 *   compare-and-set per decision, four round trips), beside a bare
 *   `SET` + `GET` (two round trips) measured in the same run, interleaved;
 * - calls/s (check + record) with 4 processes × 16 calls in flight on 256
 *   sessions they all share (so a session's calls arrive at different
 *   processes, as behind a load balancer without sticky sessions), and on
 *   64 sessions of each process's own (sticky sessions: the live gate is
 *   always current), beside 4 processes × 16 bare `SET` + `GET` pairs in flight.
 *
 * Redis: `PULSE_SAFETY_REDIS_URL` when set, else a `redis-server` started on
 * a free loopback port when the binary is on the PATH, else
 * `{ "skipped": "<why>" }`. Keys live under a prefix of their own, deleted after.
 *
 * Worker mode (its own children): `node dist/bench/redis.js worker '<json>'`.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { createRedisSnapshotStore } from '../src/store/redis-store.js';
import { createSharedSessionStore, type SharedSessionStore } from '../src/store/shared-session-store.js';
import { deletePrefix, redisPlan, startRedis, type RedisServer } from '../test/support/redis.js';

const SELF = fileURLToPath(import.meta.url);
const READ = { name: 'get_order', kind: 'read' as const };
const PROCESSES = 4;
const LANES = 16;
const SHARED_SESSIONS = 256;
const CALLS_PER_PROCESS = 1000;

/**
 * What a worker does: `shared` calls (check + record) on sessions all workers
 * share, `own` calls on sessions of its own, or `bare` SET + GET pairs;
 * `calls` of them over `lanes` lanes.
 */
interface WorkerJob {
  url: string;
  prefix: string;
  kind: 'shared' | 'own' | 'bare';
  calls: number;
  lanes: number;
  sessions: number;
  seed: number;
}

/** What a worker reports: its timed window (epoch ms, after a warm-up) and the calls that needed a retry. */
interface WorkerReport {
  start: number;
  end: number;
  calls: number;
  retried: number;
}

/** The whole result, printed as JSON. */
export type RedisBench =
  | { skipped: string }
  | {
      server: 'url' | 'spawned';
      setGetUs: number;
      checkRecordUs: number;
      checkRecordNoLiveUs: number;
      processes: number;
      lanes: number;
      sessions: number;
      callsPerSec: number;
      ownCallsPerSec: number;
      setGetPerSec: number;
      retriedShare: number;
      /** The 1-minute load average when the rows were measured, and the CPUs: the figures depend on them. */
      loadAverage: number;
      cpus: number;
    };

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** One tool call through a shared session: check, then record. Returns whether either decision needed a retry. */
async function checkRecord(sessions: SharedSessionStore, session: string, id: string): Promise<boolean> {
  const checked = await sessions.transact(session, (guard) => guard.check({ id, ...READ }));
  const recorded = await sessions.transact(session, (guard) => guard.record({ id, ...READ }));
  return checked.attempts > 1 || recorded.attempts > 1;
}

/** µs per operation of each async function, median of interleaved batches (after a warm-up). */
async function timeInterleaved(fns: readonly ((i: number) => Promise<unknown>)[], calls: number, batches: number): Promise<number[]> {
  let i = 0;
  for (const fn of fns) for (let c = 0; c < calls; c++) await fn(i++);
  const samples: number[][] = fns.map(() => []);
  for (let b = 0; b < batches; b++) {
    for (const [f, fn] of fns.entries()) {
      const start = process.hrtime.bigint();
      for (let c = 0; c < calls; c++) await fn(i++);
      samples[f]!.push(Number(process.hrtime.bigint() - start) / 1000 / calls);
    }
  }
  return samples.map(median);
}

/** The worker: connects, warms up, says `ready`, waits for `go` on stdin, runs its calls, prints its report. */
async function worker(job: WorkerJob): Promise<void> {
  const redis = new Redis(job.url, { maxRetriesPerRequest: 1 });
  const sessions = createSharedSessionStore({ store: createRedisSnapshotStore(redis, { keyPrefix: job.prefix }), maxRetries: 100 });
  let n = 0;
  let retried = 0;
  let state = job.seed;
  const pick = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return job.kind === 'own' ? `p${job.seed}-s${state % job.sessions}` : `s${state % job.sessions}`;
  };
  const one = async (): Promise<void> => {
    const i = (n += 1);
    if (job.kind === 'bare') {
      await redis.set(`${job.prefix}bare:${job.seed}:${i % 64}`, 'x');
      await redis.get(`${job.prefix}bare:${job.seed}:${i % 64}`);
    } else if (await checkRecord(sessions, pick(), `p${job.seed}-${i}`)) {
      retried += 1;
    }
  };
  for (let w = 0; w < 100; w++) await one();
  process.stdout.write('ready\n');
  await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
  n = 0;
  retried = 0;
  const start = Date.now();
  let issued = 0;
  await Promise.all(
    Array.from({ length: job.lanes }, async () => {
      while (issued < job.calls) {
        issued += 1;
        await one();
      }
    }),
  );
  const end = Date.now();
  const report: WorkerReport = { start, end, calls: n, retried };
  process.stdout.write(`${JSON.stringify(report)}\n`);
  await sessions.close();
  redis.disconnect();
  process.stdin.destroy();
}

/** Runs `PROCESSES` workers at once (started together after their warm-up); their reports. */
async function workers(job: Omit<WorkerJob, 'seed'>): Promise<WorkerReport[]> {
  const children = Array.from({ length: PROCESSES }, (_, p) =>
    spawn(process.execPath, [SELF, 'worker', JSON.stringify({ ...job, seed: p + 1 })], { stdio: ['pipe', 'pipe', 'inherit'] }),
  );
  const outputs = children.map((child) => {
    let text = '';
    child.stdout.setEncoding('utf8');
    const ready = new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: string) => {
        text += chunk;
        if (text.includes('ready\n')) resolve();
      });
    });
    const exited = new Promise<WorkerReport>((resolve, reject) => {
      child.on('exit', (code) => {
        if (code !== 0) reject(new Error(`bench worker exited with ${code}`));
        else resolve(JSON.parse(text.split('\n').filter((line) => line.startsWith('{'))[0]!) as WorkerReport);
      });
    });
    return { ready, exited };
  });
  await Promise.all(outputs.map((o) => o.ready));
  for (const child of children) child.stdin.write('go\n');
  return Promise.all(outputs.map((o) => o.exited));
}

function throughput(reports: readonly WorkerReport[]): number {
  const calls = reports.reduce((sum, r) => sum + r.calls, 0);
  const window = Math.max(...reports.map((r) => r.end)) - Math.min(...reports.map((r) => r.start));
  return (calls / Math.max(window, 1)) * 1000;
}

async function main(): Promise<RedisBench> {
  const plan = redisPlan();
  if (plan.kind === 'missing') return { skipped: `no Redis: ${plan.reason}` };
  let started: RedisServer;
  try {
    started = await startRedis(plan);
  } catch (error) {
    return { skipped: (error as Error).message };
  }
  const server = { ...started, kind: plan.kind === 'url' ? ('url' as const) : ('spawned' as const) };
  const prefix = `pulse-safety-bench:${randomUUID()}:`;
  const redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
  try {
    const live = createSharedSessionStore({ store: createRedisSnapshotStore(redis, { keyPrefix: `${prefix}live:` }) });
    const cold = createSharedSessionStore({ store: createRedisSnapshotStore(redis, { keyPrefix: `${prefix}cold:` }), idleMs: 0 });
    await live.session('chat').record(READ);
    await cold.session('chat').record(READ);
    const [setGetUs, checkRecordUs, checkRecordNoLiveUs] = (await timeInterleaved(
      [
        async (i) => {
          await redis.set(`${prefix}bare`, String(i));
          await redis.get(`${prefix}bare`);
        },
        (i) => checkRecord(live, 'chat', `c${i}`),
        (i) => checkRecord(cold, 'chat', `c${i}`),
      ],
      200,
      11,
    )) as [number, number, number];
    const common = { url: server.url, prefix: `${prefix}shared:`, calls: CALLS_PER_PROCESS, lanes: LANES, sessions: SHARED_SESSIONS };
    const stored = await workers({ ...common, kind: 'shared' });
    const own = await workers({ ...common, kind: 'own', sessions: SHARED_SESSIONS / PROCESSES });
    const bare = await workers({ ...common, kind: 'bare' });
    const calls = stored.reduce((sum, r) => sum + r.calls, 0);
    return {
      server: server.kind,
      setGetUs,
      checkRecordUs,
      checkRecordNoLiveUs,
      processes: PROCESSES,
      lanes: LANES,
      sessions: SHARED_SESSIONS,
      callsPerSec: throughput(stored),
      ownCallsPerSec: throughput(own),
      setGetPerSec: throughput(bare),
      retriedShare: stored.reduce((sum, r) => sum + r.retried, 0) / calls,
      loadAverage: os.loadavg()[0]!,
      cpus: os.availableParallelism(),
    };
  } finally {
    await deletePrefix(redis, prefix).catch(() => {});
    redis.disconnect();
    await server.stop();
  }
}

if (process.argv[2] === 'worker') {
  worker(JSON.parse(process.argv[3]!) as WorkerJob).catch((error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    process.exit(1);
  });
} else {
  main().then(
    (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
