/**
 * A Redis for the tests: the one `PULSE_SAFETY_REDIS_URL` names (CI starts
 * one, see .ci/run); else, on a developer machine, a `redis-server` of our
 * own on a free loopback port when the binary is on the PATH; else the Redis
 * tests are skipped, saying why. Under `CI=true` a missing Redis fails them.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, connect } from 'node:net';
import { Redis } from 'ioredis';

/** How the Redis tests get a server. */
export type RedisPlan = { kind: 'url'; url: string } | { kind: 'spawn' } | { kind: 'missing'; reason: string };

/** Whether a `redis-server` binary is on the PATH. */
export function hasRedisServer(): boolean {
  return spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).status === 0;
}

/** Decided when the test file loads (so `describe.skipIf` can use it). */
export function redisPlan(): RedisPlan {
  const url = process.env.PULSE_SAFETY_REDIS_URL;
  if (url !== undefined && url !== '') return { kind: 'url', url };
  if (hasRedisServer()) return { kind: 'spawn' };
  return { kind: 'missing', reason: 'PULSE_SAFETY_REDIS_URL is not set and no redis-server is on the PATH' };
}

/** ' (skipped: ...)' for a test title when the Redis tests cannot run here and this is no CI run; '' otherwise. */
export function redisSkipNote(plan: RedisPlan): string {
  return plan.kind === 'missing' && process.env.CI !== 'true' ? ` (skipped: ${plan.reason})` : '';
}

/** A running Redis: its URL, and how to stop it (a no-op for one we did not start). */
export interface RedisServer {
  url: string;
  stop(): Promise<void>;
}

/** A loopback port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Whether a Redis answers PING on the port. */
function pings(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setTimeout(500, () => socket.destroy());
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      answer += chunk.toString('utf8');
      if (answer.includes('\r\n')) {
        socket.destroy();
        resolve(answer.startsWith('+PONG'));
      }
    });
    socket.on('error', () => resolve(false));
    socket.on('close', () => resolve(answer.startsWith('+PONG')));
  });
}

/**
 * The Redis of the plan, started when we start it (no persistence, loopback
 * only). Throws when there is none: under CI that fails the tests.
 */
export async function startRedis(plan: RedisPlan): Promise<RedisServer> {
  if (plan.kind === 'url') return { url: plan.url, stop: async () => {} };
  if (plan.kind === 'missing') {
    throw new Error(`CI=true and no Redis for the shared session store tests: ${plan.reason} (.ci/run starts one)`);
  }
  const port = await freePort();
  const child: ChildProcess = spawn(
    'redis-server',
    ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no', '--protected-mode', 'yes'],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (let i = 0; i < 100; i++) {
    if (await pings(port)) {
      return {
        url: `redis://127.0.0.1:${port}`,
        async stop() {
          child.kill('SIGTERM');
          await exited;
        },
      };
    }
    if (child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`redis-server did not start on port ${port}`);
}

/** A client that fails fast (one retry per command), as docs/sessions.md recommends. */
export function client(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: false });
}

/** A key prefix no other test run uses. */
export function testPrefix(what: string): string {
  return `pulse-safety-test:${what}:${randomUUID()}:`;
}

/** Deletes every key under the prefix. */
export async function deletePrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}
