/**
 * Shared sessions in Redis (src/store/redis-store.ts): the versioned store suite
 * against a real redis-server, the key layout and TTL, the Lua script
 * surviving a script flush, and failing closed when Redis cannot be reached
 * or holds something that is not a session.
 *
 * Redis: `PULSE_SAFETY_REDIS_URL` (CI), else a redis-server of our own on a
 * free loopback port, else skipped saying why; under CI=true a missing Redis
 * fails (test/support/redis.ts). Every test uses a key prefix of its own and
 * deletes its keys.
 */
import type { Redis } from 'ioredis';
import { Redis as RedisClient } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { GateDecidedEvent } from '../../machines/safety.types.js';
import { createRedisSnapshotStore } from '../../src/store/redis-store.js';
import { createSharedSessionStore } from '../../src/store/shared-session-store.js';

import {
  client,
  deletePrefix,
  freePort,
  hasRedisServer,
  redisPlan,
  redisSkipNote,
  startRedis,
  testPrefix,
  type RedisServer,
} from '../support/redis.js';
import { describeVersionedStore } from '../support/versioned-store-suite.js';
import { SessionStoreError } from '../../src/errors/session-store-error.js';
import { SnapshotError } from '../../src/errors/snapshot-error.js';

const plan = redisPlan();
const skipNote = redisSkipNote(plan);
const skip = skipNote !== '';
const READ = { name: 'get_order', kind: 'read' as const };
const WRITE = { name: 'cancel_order', kind: 'write' as const };

let server: RedisServer | undefined;
let redis: Redis;
beforeAll(async () => {
  if (skip) return;
  server = await startRedis(plan);
  redis = client(server.url);
  await redis.ping();
});
afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
});

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describeVersionedStore(
  `Redis${skipNote}`,
  {
    ttlMs: 2000,
    corruptsVersions: true,
    async namespace(ttlMs) {
      const keyPrefix = testPrefix('suite');
      return {
        open: () => createRedisSnapshotStore(redis, { keyPrefix, ttlMs }),
        now: Date.now,
        advance: sleep,
        async corruptVersion(sessionId) {
          await redis.hset(keyPrefix + sessionId, 'v', 'seven', 's', '{"v":2,"state":"RESOLVING"}');
        },
        dispose: () => deletePrefix(redis, keyPrefix),
      };
    },
  },
  skip,
);

describe.skipIf(skip)(`the Redis snapshot store${skipNote}`, () => {
  let keyPrefix: string;
  const store = (options: { ttlMs?: number } = {}) => createRedisSnapshotStore(redis, { keyPrefix, ...options });
  beforeAll(() => {
    keyPrefix = testPrefix('redis');
  });
  afterEach(async () => deletePrefix(redis, keyPrefix));

  it('keeps a session as a hash under the prefix: the version, the snapshot, and a time to live', async () => {
    const result = (await store({ ttlMs: 60_000 }).compareAndSet('chat', null, '{"v":2,"state":"RESOLVING"}', Date.now())) as {
      version: number;
    };
    expect(await redis.hgetall(`${keyPrefix}chat`)).toEqual({ v: String(result.version), s: '{"v":2,"state":"RESOLVING"}' });
    const ttl = await redis.pttl(`${keyPrefix}chat`);
    expect(ttl > 0 && ttl <= 60_000).toBe(true);
  });

  it('sets no time to live with ttlMs Infinity', async () => {
    await store({ ttlMs: Infinity }).compareAndSet('chat', null, '{}', Date.now());
    expect(await redis.pttl(`${keyPrefix}chat`)).toBe(-1);
  });

  it('still compares and sets after Redis forgot its scripts (EVALSHA falls back to EVAL)', async () => {
    const sessions = store();
    const first = (await sessions.compareAndSet('chat', null, '{"a":1}', Date.now())) as { version: number };
    await redis.script('FLUSH');
    expect(await sessions.compareAndSet('chat', first.version, '{"a":2}', Date.now())).toEqual({
      committed: true,
      version: first.version + 1,
    });
  });

  it('refuses a stored snapshot that is not JSON with a SnapshotError naming the session', async () => {
    await redis.hset(`${keyPrefix}chat`, 'v', '5', 's', '{"v":2,"sta');
    const sessions = createSharedSessionStore({ store: store() });
    await expect(sessions.session('chat').check(READ)).rejects.toThrow(SnapshotError);
    await expect(sessions.session('chat').check(READ)).rejects.toThrow(/^session "chat": snapshot: \(root\): not valid JSON/);
  });

  it('refuses a session hash without its snapshot with a SnapshotError', async () => {
    await redis.hset(`${keyPrefix}chat`, 'v', '5');
    await expect(store().load('chat')).rejects.toBeInstanceOf(SnapshotError);
  });

  it('refuses a session hash without its version on compare-and-set, and leaves it as it is', async () => {
    await redis.hset(`${keyPrefix}chat`, 's', '{"v":2,"state":"VERIFYING"}');
    await expect(store().compareAndSet('chat', null, '{}', Date.now())).rejects.toThrow(
      /^stored version: the session's hash has no version/,
    );
    await expect(store().compareAndSet('chat', 7, '{}', Date.now())).rejects.toBeInstanceOf(SnapshotError);
    expect(await redis.hgetall(`${keyPrefix}chat`)).toEqual({ s: '{"v":2,"state":"VERIFYING"}' });
  });

  it('a live gate whose session lost its version refuses the next call with a SnapshotError, never starting it again', async () => {
    const sessions = createSharedSessionStore({ store: store() });
    const gate = sessions.session('chat');
    await gate.check({ id: 'r', ...READ });
    await gate.record({ id: 'r', ...READ }, 'success');
    await gate.check({ id: 'w', ...WRITE });
    await gate.record({ id: 'w', ...WRITE }, 'success');
    expect((await gate.finalAnswer()).allowed).toBe(false);
    await redis.hdel(`${keyPrefix}chat`, 'v');
    await expect(gate.finalAnswer()).rejects.toBeInstanceOf(SnapshotError);
    await expect(gate.check({ id: 'w2', ...WRITE })).rejects.toBeInstanceOf(SnapshotError);
    expect(await redis.hget(`${keyPrefix}chat`, 'v')).toBeNull();
  });

  it('refuses a key of another type with a SnapshotError, on load and on compare-and-set', async () => {
    await redis.set(`${keyPrefix}chat`, 'not a hash');
    await expect(store().load('chat')).rejects.toThrow(/holds another type of value/);
    await expect(store().compareAndSet('chat', null, '{}', Date.now())).rejects.toBeInstanceOf(SnapshotError);
  });

  it('refuses something that is not an ioredis client', () => {
    expect(() => createRedisSnapshotStore({} as never)).toThrow(TypeError);
  });

  it('leaves the application’s client open on close', async () => {
    const sessions = store();
    await sessions.close();
    expect(await redis.ping()).toBe('PONG');
  });
});

describe.skipIf(skip)(`an unreachable Redis${skipNote}`, () => {
  let deadPort: number;
  beforeAll(async () => {
    deadPort = await freePort(); // nothing listens on it
  });

  it('rejects a check with an unavailable SessionStoreError and makes no decision', async () => {
    const dead = new RedisClient(deadPort, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    dead.on('error', () => {});
    const decisions: GateDecidedEvent[] = [];
    const sessions = createSharedSessionStore({ store: createRedisSnapshotStore(dead), guard: { onDecision: (d) => decisions.push(d) } });
    const attempt = sessions.session('chat').check(WRITE);
    await expect(attempt).rejects.toBeInstanceOf(SessionStoreError);
    await expect(attempt).rejects.toMatchObject({ code: 'unavailable' });
    await expect(attempt).rejects.toThrow(/^the Redis session store could not be reached or failed on load of session "chat": /);
    expect(decisions).toEqual([]);
    dead.disconnect();
  });

  it('rejects after timeoutMs when the client queues commands while it reconnects, instead of hanging', async () => {
    const dead = new RedisClient(deadPort, '127.0.0.1'); // ioredis defaults: offline queue, 20 retries per command
    dead.on('error', () => {});
    const sessions = createSharedSessionStore({ store: createRedisSnapshotStore(dead, { timeoutMs: 200 }) });
    await expect(sessions.session('chat').check(WRITE)).rejects.toThrow(/did not answer load of session "chat" within 200 ms/);
    dead.disconnect();
  });

  it('fails the final answer closed too', async () => {
    const dead = new RedisClient(deadPort, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    dead.on('error', () => {});
    const sessions = createSharedSessionStore({ store: createRedisSnapshotStore(dead) });
    await expect(sessions.session('chat').finalAnswer()).rejects.toMatchObject({ name: 'SessionStoreError', code: 'unavailable' });
    dead.disconnect();
  });
});

describe.skipIf(skip || !hasRedisServer())(`a Redis that stops mid-session${skipNote}`, () => {
  it('rejects the next call (a compare-and-set on the live gate) with an unavailable SessionStoreError', async () => {
    const own = await startRedis({ kind: 'spawn' });
    const conn = new RedisClient(own.url, { maxRetriesPerRequest: 0, retryStrategy: () => 50 });
    conn.on('error', () => {});
    const sessions = createSharedSessionStore({ store: createRedisSnapshotStore(conn, { timeoutMs: 500 }) });
    await sessions.session('chat').record(READ);
    await own.stop();
    const attempt = sessions.session('chat').check({ id: 'w', ...WRITE });
    await expect(attempt).rejects.toMatchObject({ name: 'SessionStoreError', code: 'unavailable' });
    await expect(attempt).rejects.toThrow(/compare-and-set of session "chat"/);
    conn.disconnect();
  });
});
