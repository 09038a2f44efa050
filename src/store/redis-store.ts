/**
 * Shared sessions in Redis: a `VersionedSnapshotStore` (versioned-stores.ts)
 * over the application's own ioredis client, for agent services with several
 * replicas behind a load balancer.
 *
 * One Redis hash per session, `<keyPrefix><session id>` with fields `v`
 * (the version, decimal) and `s` (the snapshot, compact JSON), and a time to
 * live (PX) refreshed by every decision, so idle sessions expire on their
 * own. A load is one `HMGET`; a compare-and-set is one Lua script (read the
 * version, compare, write, refresh the TTL), atomic in Redis, sent with
 * EVALSHA (ioredis `defineCommand`, which falls back to EVAL once after a
 * script flush). Each script touches one key, so it runs on Redis Cluster
 * too. On a lost race the script answers with the session as it is, so a
 * retry needs no extra round trip.
 *
 * Why ioredis: it is maintained by Redis (the company) beside node-redis,
 * and its `defineCommand` gives Lua scripts as named commands with the
 * EVALSHA cache handled, on a single node and on a cluster alike. The
 * library imports only its types: the application installs ioredis (an
 * optional peer dependency) and passes its client, with its own connection,
 * TLS, auth and retry settings.
 *
 * Failing closed: any error of the client (connection refused, a command
 * timed out, the offline queue flushed) rejects with `SessionStoreError` code
 * `unavailable`, and an operation that has not answered within `timeoutMs`
 * rejects the same way, so a check never hangs and never allows. A timed-out
 * compare-and-set may still reach Redis later (ioredis queues commands while
 * it reconnects): then the session may count a call as admitted that never
 * ran, which can only refuse more (e.g. a write in flight refuses the next
 * write) until its session is reset. Clients for this store are best made
 * with `maxRetriesPerRequest: 1` (or `enableOfflineQueue: false`) so that
 * they fail fast instead of queueing.
 *
 * Spec: ASSISTANT_SAFETY.md (a session's state); DESIGN.md §3.7.
 */
import {
  DEFAULT_SESSION_TTL_MS,
  firstSnapshotVersion,
  readStoredVersion,
  type CompareAndSetResult,
  type VersionedSnapshot,
  type VersionedSnapshotStore,
} from './versioned-stores.js';
import { SessionStoreError } from '../errors/session-store-error.js';
import { SnapshotError } from '../errors/snapshot-error.js';

/** Options of `createRedisSnapshotStore`. */
export interface RedisSnapshotStoreOptions {
  /** Prepended to the session id to make its key; default `pulse-safety:session:`. Give each deployment its own. */
  keyPrefix?: string;
  /** A session not stored for this many milliseconds expires (Redis PX); default 24 hours; Infinity: never. */
  ttlMs?: number;
  /** An operation not answered within this many milliseconds rejects (`SessionStoreError` `unavailable`); default 5000. */
  timeoutMs?: number;
}

/** The default key prefix. */
export const DEFAULT_REDIS_KEY_PREFIX = 'pulse-safety:session:';

/**
 * The compare-and-set, atomic in Redis.
 * KEYS[1]: the session's hash. ARGV: expected version ('' = absent), new
 * version, snapshot, TTL in ms ('' = none). Answers {1, version} when
 * stored (or the same snapshot was already stored: version kept, TTL
 * refreshed), {0} when the session is absent but was expected, {0, version,
 * snapshot} when it is at another version, {2} when the hash exists without
 * a version (never overwritten: it is no absent session, which would start
 * again in RESOLVING). Versions are compared as text and computed by the
 * caller (Lua numbers print large integers in exponent form).
 */
const COMPARE_AND_SET_LUA = `
local stored = redis.call('HMGET', KEYS[1], 'v', 's')
local version = stored[1]
if version == false then
  if redis.call('EXISTS', KEYS[1]) == 1 then return {2} end
  if ARGV[1] ~= '' then return {0} end
else
  if version ~= ARGV[1] then return {0, version, stored[2]} end
  if stored[2] == ARGV[3] then
    if ARGV[4] ~= '' then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
    return {1, version}
  end
end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 's', ARGV[3])
if ARGV[4] ~= '' then redis.call('PEXPIRE', KEYS[1], ARGV[4]) else redis.call('PERSIST', KEYS[1]) end
return {1, ARGV[2]}
`;

/**
 * What the store uses of an ioredis client (`Redis` or `Cluster`), as a
 * structural type: the package's declarations then never name ioredis, an
 * optional peer an app without Redis does not install.
 */
export interface RedisClientLike {
  defineCommand(name: string, definition: { numberOfKeys?: number; lua: string }): void;
  hmget(key: string, ...fields: string[]): Promise<(string | null)[]>;
  del(...keys: string[]): Promise<number>;
}

/** The name the script is defined under on the client. */
const COMMAND = 'pulseSafetyCompareAndSet';

/** The script's ARGV (see `COMPARE_AND_SET_LUA`): expected version, new version, snapshot, TTL in ms. */
type CasArgv = [expected: string, next: string, snapshot: string, ttl: string];

/** The script as ioredis defines it on the client: KEYS[1], then the ARGV. */
type CasCommand = (key: string, ...argv: CasArgv) => Promise<unknown>;

/** The store's options, validated: the key prefix, the TTL as the script takes it ('' for none), the timeout in ms. */
interface RedisSettings {
  readonly keyPrefix: string;
  readonly ttl: string;
  readonly timeoutMs: number;
}

/** A stored record read from its two fields: both present, or neither. */
function readRecord(version: unknown, snapshot: unknown): VersionedSnapshot | undefined {
  if (version === null && snapshot === null) return undefined;
  if (typeof snapshot !== 'string') {
    throw new SnapshotError(`stored snapshot: the session's hash has a version but no snapshot text`, []);
  }
  return { snapshot, version: readStoredVersion(version) };
}

/**
 * The options, checked and defaulted.
 * @throws TypeError on a bad `keyPrefix` (not a string), `ttlMs` (not positive) or `timeoutMs` (not a positive integer).
 */
function redisSettings(options: RedisSnapshotStoreOptions): RedisSettings {
  const keyPrefix = options.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;
  if (typeof keyPrefix !== 'string') throw new TypeError('createRedisSnapshotStore: keyPrefix must be a string');
  const ttlMs = options.ttlMs ?? DEFAULT_SESSION_TTL_MS;
  if (typeof ttlMs !== 'number' || !(ttlMs > 0)) {
    throw new TypeError(`createRedisSnapshotStore: ttlMs must be a positive number of milliseconds (or Infinity), got ${String(ttlMs)}`);
  }
  const ttl = Number.isFinite(ttlMs) ? String(Math.max(1, Math.ceil(ttlMs))) : '';
  const timeoutMs = options.timeoutMs ?? 5000;
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0) {
    throw new TypeError(`createRedisSnapshotStore: timeoutMs must be a positive integer, got ${String(timeoutMs)}`);
  }
  return { keyPrefix, ttl, timeoutMs };
}

/**
 * What a failed Redis operation on `key` rejects with: the store's own
 * errors as they are; a `WRONGTYPE` answer (the key holds no hash) as a
 * `SnapshotError`; anything else (connection refused, the offline queue
 * flushed...) as `SessionStoreError` `unavailable`, with the error as cause.
 */
function redisFailure(error: unknown, what: string, sessionId: string, key: string): Error {
  if (error instanceof SnapshotError || error instanceof SessionStoreError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (/\bWRONGTYPE\b/.test(message)) {
    return new SnapshotError(`stored session: the key ${JSON.stringify(key)} holds another type of value, not a session hash`, []);
  }
  return new SessionStoreError(
    'unavailable',
    `the Redis session store could not be reached or failed on ${what} of session ${JSON.stringify(sessionId)}: ${message}`,
    { cause: error },
  );
}

/**
 * The script's answer (see `COMPARE_AND_SET_LUA`) as a `CompareAndSetResult`.
 * @throws SessionStoreError `unavailable` on an answer the script never gives; SnapshotError on a hash without a version.
 */
function readCasReply(reply: unknown): CompareAndSetResult {
  if (!Array.isArray(reply) || (reply[0] !== 0 && reply[0] !== 1 && reply[0] !== 2)) {
    throw new SessionStoreError('unavailable', `the Redis compare-and-set answered ${JSON.stringify(reply)}`);
  }
  if (reply[0] === 2) throw new SnapshotError(`stored version: the session's hash has no version (field v)`, []);
  if (reply[0] === 1) return { committed: true, version: readStoredVersion(reply[1]) };
  return { committed: false, current: reply.length === 1 ? undefined : readRecord(reply[1], reply[2] ?? null) };
}

/**
 * The Redis store: the client, the script defined on it, and the settings.
 * A class, so a store holds its fields and no closure per method;
 * `createRedisSnapshotStore` checks the client and options and makes one.
 */
class RedisSnapshotStore implements VersionedSnapshotStore {
  private closed = false;

  constructor(
    private readonly client: RedisClientLike,
    private readonly cas: CasCommand,
    private readonly settings: RedisSettings,
  ) {}

  load(sessionId: string): Promise<VersionedSnapshot | undefined> {
    return this.run('load', sessionId, async () => {
      const [version, snapshot] = await this.client.hmget(this.settings.keyPrefix + sessionId, 'v', 's');
      return readRecord(version, snapshot);
    });
  }

  compareAndSet(sessionId: string, expectedVersion: number | null, snapshot: string, _at: number): Promise<CompareAndSetResult> {
    return this.run('compare-and-set', sessionId, async (): Promise<CompareAndSetResult> => {
      const next = expectedVersion === null ? firstSnapshotVersion() : expectedVersion + 1;
      const expected = expectedVersion === null ? '' : String(expectedVersion);
      return readCasReply(await this.cas(this.settings.keyPrefix + sessionId, expected, String(next), snapshot, this.settings.ttl));
    });
  }

  delete(sessionId: string): Promise<void> {
    return this.run('delete', sessionId, async () => void (await this.client.del(this.settings.keyPrefix + sessionId)));
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /** Runs one Redis operation with the timeout; the client's errors become `SessionStoreError`s (or `SnapshotError`s). */
  private run<T>(what: string, sessionId: string, operation: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new SessionStoreError('closed', 'the Redis snapshot store is closed'));
    const { keyPrefix, timeoutMs } = this.settings;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(
          new SessionStoreError(
            'unavailable',
            `the Redis session store did not answer ${what} of session ${JSON.stringify(sessionId)} within ${timeoutMs} ms`,
          ),
        );
      }, timeoutMs);
      timer.unref?.();
      let pending: Promise<T>;
      try {
        pending = operation();
      } catch (error) {
        pending = Promise.reject(error);
      }
      pending.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(redisFailure(error, what, sessionId, keyPrefix + sessionId));
        },
      );
    });
  }
}

/**
 * A versioned snapshot store in Redis, over the application's ioredis client
 * (a `Redis` or a `Cluster`). The client is not closed by `close()`.
 *
 * @example
 * import Redis from 'ioredis';
 * const redis = new Redis(process.env.REDIS_URL, { maxRetriesPerRequest: 1 });
 * const sessions = createSharedSessionStore({ store: createRedisSnapshotStore(redis, { keyPrefix: 'myapp:safety:' }) });
 *
 * @throws TypeError when `client` has no `defineCommand` (not an ioredis client), or on a bad
 *   `keyPrefix` (not a string), `ttlMs` (not positive) or `timeoutMs` (not a positive integer).
 */
export function createRedisSnapshotStore(client: RedisClientLike, options: RedisSnapshotStoreOptions = {}): VersionedSnapshotStore {
  if (typeof (client as { defineCommand?: unknown } | null)?.defineCommand !== 'function') {
    throw new TypeError('createRedisSnapshotStore: expected an ioredis client (Redis or Cluster)');
  }
  const settings = redisSettings(options);
  client.defineCommand(COMMAND, { numberOfKeys: 1, lua: COMPARE_AND_SET_LUA });
  const cas = (client as unknown as Record<string, CasCommand>)[COMMAND]!.bind(client);
  return new RedisSnapshotStore(client, cas, settings);
}
