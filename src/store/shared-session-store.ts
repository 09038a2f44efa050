/**
 * Sessions shared by many processes: the safety gates of chat sessions whose
 * calls may arrive at any replica of an agent service.
 *
 * Each decision (`check`, `record`, `finalAnswer`, `completeVerification`,
 * `reset`, `resetKeepProgress`) is ONE atomic compare-and-set of the
 * session's compact snapshot (`PersistedSnapshot`, src/snapshot.ts) in a
 * `VersionedSnapshotStore`: the gate is restored from the snapshot at some
 * version (or a live gate kept from this process's last commit at that
 * version is reused), the call is applied, and the new snapshot is stored
 * only if the session is still at that version. When another process
 * committed first, the store answers with the session as it now is, and the
 * call is applied again to that (a bounded number of times). So the
 * decision a caller gets is always the one that was committed, every
 * session's history is one sequence of decisions, and no update is lost.
 *
 * The store is asynchronous (Redis is), so this API is too; the
 * synchronous `createSessionStore` (src/store.ts) stays for one process.
 * Shipped stores: `createMemoryVersionedStore` (tests, one process),
 * `createSqliteVersionedStore` (one database file, any number of processes
 * on one machine) and `createRedisSnapshotStore` (src/redis-store.ts: any
 * number of machines). A store that cannot be reached, or fails, rejects
 * with a `SessionStoreError` and no decision is returned: the gate fails
 * closed (do not run the call).
 *
 * Spec: ASSISTANT_SAFETY.md (a session's state, "The invariants");
 * DESIGN.md §3.7 (time as an input: the clock is injectable, epoch ms).
 */
import { SessionStoreError } from '../errors/session-store-error.js';
import { randomInt } from 'node:crypto';
import { MAX_TIME_MS } from '../../machines/safety.policy.js';
import type { GateDecidedEvent, RecoverySucceededEvent } from '../../machines/safety.types.js';
import {
  createSessionGuard,
  type Decision,
  type FinalAnswerDecision,
  type RecordResult,
  type SessionGuard,
  type ToolCall,
} from '../guard/session-guard.js';
import { validateSessionGuardOptions, type SessionGuardOptions } from '../guard/session-guard-options.js';
import { type PersistedSnapshot } from '../guard/snapshot.js';
import { DEFAULT_IDLE_MS, evictIdleEntries, openSqliteTable } from './session-store.js';
import { SnapshotError } from '../errors/snapshot-error.js';
import { isThenable } from '../util/thenable.js';

// ---------------------------------------------------------------------------
// The versioned store interface

/** A session's snapshot text (`PersistedSnapshot` as JSON) and the version it was stored at. */
export interface VersionedSnapshot {
  snapshot: string;
  /** A positive safe integer; see `VersionedSnapshotStore` for how versions grow. */
  version: number;
}

/**
 * What `compareAndSet` did: stored (or found the same snapshot already
 * stored) at `version`, or nothing, because the session was not at the
 * expected version; then `current` is the session as it is (undefined:
 * absent or expired), so the caller can retry without another round trip.
 */
export type CompareAndSetResult = { committed: true; version: number } | { committed: false; current: VersionedSnapshot | undefined };

/**
 * Where shared sessions live: snapshot text with a version, by session id,
 * changed only by compare-and-set. Every method is one atomic operation of
 * the medium. Rules every implementation keeps (the shared test suite checks
 * them, test/support/versioned-store-suite.ts):
 *
 * - A new session (expected version null) is stored at a random first
 *   version (`firstSnapshotVersion()`), and each change adds 1. A session
 *   deleted or expired and created again starts from a fresh random
 *   version, so a process holding a version of the earlier session cannot
 *   overwrite the new one (the chance of a clash is 2^-47 per stale write).
 * - Storing the snapshot already stored writes nothing and keeps the
 *   version; it still refreshes the session's time to live.
 * - A session not stored for `ttlMs` expires: it is absent from then on.
 * - After `close`, every method rejects with `SessionStoreError` code `closed`.
 * - A medium that cannot be reached or fails rejects with `SessionStoreError`
 *   code `unavailable`; a stored record that is not a version and a text
 *   rejects with `SnapshotError`.
 */
export interface VersionedSnapshotStore {
  /** The session's snapshot and version, or undefined when it is absent or expired. */
  load(sessionId: string): Promise<VersionedSnapshot | undefined>;
  /**
   * Stores `snapshot` if the session is at `expectedVersion` (null: absent),
   * as one atomic step. `at` is the time of the decision, epoch ms (stores
   * that keep a last-write time record it; Redis counts its TTL itself).
   */
  compareAndSet(sessionId: string, expectedVersion: number | null, snapshot: string, at: number): Promise<CompareAndSetResult>;
  /** Forgets the session. */
  delete(sessionId: string): Promise<void>;
  /** Releases what the store opened (a database); a client passed in by the application is left open. */
  close(): Promise<void>;
}

/** The default time to live of an idle shared session: 24 hours. */
export const DEFAULT_SESSION_TTL_MS = 24 * 60 * 60_000;

/** The highest first version: 2^47, leaving 2^53 - 2^47 changes before versions leave the safe integers. */
const FIRST_VERSION_LIMIT = 2 ** 47;

/** A random first version for a new session, in [1, 2^47) (crypto random). */
export function firstSnapshotVersion(): number {
  return randomInt(1, FIRST_VERSION_LIMIT);
}

/**
 * Reads a stored version: a positive safe integer, as a number or its
 * decimal text without leading zeros.
 * @throws SnapshotError (path `['version']`) otherwise.
 */
export function readStoredVersion(value: unknown): number {
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text === 'string' && /^[1-9][0-9]{0,15}$/.test(text) && Number.isSafeInteger(Number(text))) return Number(text);
  throw new SnapshotError(`stored version: expected a positive integer, got ${JSON.stringify(String(value)).slice(0, 60)}`, ['version']);
}

/** Checks a time to live: a positive number of milliseconds, or Infinity (never expire). */
function validTtl(ttlMs: unknown, where: string): number {
  if (typeof ttlMs !== 'number' || !(ttlMs > 0)) {
    throw new TypeError(`${where}: ttlMs must be a positive number of milliseconds (or Infinity), got ${String(ttlMs)}`);
  }
  return ttlMs;
}

function closedError(what: string): SessionStoreError {
  return new SessionStoreError('closed', `the ${what} is closed`);
}

/** Options of the memory and SQLite versioned stores. */
export interface VersionedStoreOptions {
  /** Forget a session not stored for this many milliseconds; default 24 hours (`DEFAULT_SESSION_TTL_MS`); Infinity: never. */
  ttlMs?: number;
  /** The clock that expiry is judged by, epoch ms; default `Date.now`. Give the session store's clock. */
  now?: () => number;
}

/** A versioned store that can also drop its expired sessions at once (memory and SQLite; Redis expires keys itself). */
export interface PrunableVersionedSnapshotStore extends VersionedSnapshotStore {
  /** Deletes every expired session; returns how many. */
  prune(): Promise<number>;
}

/**
 * A versioned store in a `Map`: for tests, and for several session stores
 * in one process. Asynchronous like the others (each call settles on a later
 * microtask), so code tested against it meets the same interleavings.
 *
 * @throws TypeError on a bad `ttlMs`.
 */
export function createMemoryVersionedStore(options: VersionedStoreOptions = {}): PrunableVersionedSnapshotStore {
  const ttlMs = validTtl(options.ttlMs ?? DEFAULT_SESSION_TTL_MS, 'createMemoryVersionedStore');
  const now = options.now ?? Date.now;
  const rows = new Map<string, { snapshot: string; version: number; at: number }>();
  let closed = false;
  function live(sessionId: string): { snapshot: string; version: number; at: number } | undefined {
    if (closed) throw closedError('memory versioned store');
    const row = rows.get(sessionId);
    if (row !== undefined && row.at + ttlMs <= now()) {
      rows.delete(sessionId);
      return undefined;
    }
    return row;
  }
  return {
    async load(sessionId) {
      const row = live(sessionId);
      return row === undefined ? undefined : { snapshot: row.snapshot, version: row.version };
    },
    async compareAndSet(sessionId, expectedVersion, snapshot, at) {
      const row = live(sessionId);
      if ((row?.version ?? null) !== expectedVersion) {
        return { committed: false, current: row === undefined ? undefined : { snapshot: row.snapshot, version: row.version } };
      }
      if (row !== undefined && row.snapshot === snapshot) {
        row.at = at;
        return { committed: true, version: row.version };
      }
      const version = row === undefined ? firstSnapshotVersion() : row.version + 1;
      rows.set(sessionId, { snapshot, version, at });
      return { committed: true, version };
    },
    async delete(sessionId) {
      if (closed) throw closedError('memory versioned store');
      rows.delete(sessionId);
    },
    async prune() {
      if (closed) throw closedError('memory versioned store');
      let count = 0;
      for (const id of [...rows.keys()]) if (live(id) === undefined) count += 1;
      return count;
    },
    async close() {
      closed = true;
      rows.clear();
    },
  };
}

/** Options of `createSqliteVersionedStore`. */
export interface SqliteVersionedStoreOptions extends VersionedStoreOptions {
  /** SQLite's `synchronous` setting in WAL mode: `FULL` (default) survives power loss, `NORMAL` a killed process. */
  synchronous?: 'FULL' | 'NORMAL';
  /** Table name (letters, digits, underscores); default `safety_shared_sessions`. */
  table?: string;
  /** How long a write waits for another process's lock before failing, ms; default 5000. */
  busyTimeoutMs?: number;
}

/**
 * A versioned store in a SQLite database file (better-sqlite3, loaded on
 * first call), shared by every process that opens the same file on one
 * machine. One table `(id TEXT PRIMARY KEY, snapshot TEXT, version INTEGER,
 * updated_at INTEGER)` in WAL mode; a compare-and-set is one `BEGIN
 * IMMEDIATE` transaction (read the version, compare, write), so two
 * processes never both commit at one version. A process waiting for
 * another's lock blocks for up to `busyTimeoutMs`, then the call rejects
 * with `SessionStoreError` code `unavailable`.
 *
 * @param path the database file (created if absent); `:memory:` works but is not shared.
 * @throws Error when better-sqlite3 is not installed, or the database cannot be opened.
 * @throws TypeError on a bad table name, `synchronous`, `ttlMs` or `busyTimeoutMs`.
 */
export function createSqliteVersionedStore(path: string, options: SqliteVersionedStoreOptions = {}): PrunableVersionedSnapshotStore {
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new TypeError(`createSqliteVersionedStore: busyTimeoutMs must be a non-negative integer, got ${String(busyTimeoutMs)}`);
  }
  const ttlMs = validTtl(options.ttlMs ?? DEFAULT_SESSION_TTL_MS, 'createSqliteVersionedStore');
  const now = options.now ?? Date.now;
  const { db, table } = openSqliteTable('createSqliteVersionedStore', path, {
    table: options.table ?? 'safety_shared_sessions',
    synchronous: options.synchronous,
    timeoutMs: busyTimeoutMs,
    columns: 'id TEXT PRIMARY KEY, snapshot TEXT NOT NULL, version INTEGER NOT NULL, updated_at INTEGER NOT NULL',
    alternative: 'createMemoryVersionedStore() or createRedisSnapshotStore()',
  });
  type Row = { snapshot: unknown; version: unknown; updated_at: number };
  const select = db.prepare<[string], Row>(`SELECT snapshot, version, updated_at FROM ${table} WHERE id = ?`);
  const upsert = db.prepare<[string, string, number, number]>(
    `INSERT INTO ${table} (id, snapshot, version, updated_at) VALUES (?, ?, ?, ?) ` +
      'ON CONFLICT (id) DO UPDATE SET snapshot = excluded.snapshot, version = excluded.version, updated_at = excluded.updated_at',
  );
  const touch = db.prepare<[number, string]>(`UPDATE ${table} SET updated_at = ? WHERE id = ?`);
  const remove = db.prepare<[string]>(`DELETE FROM ${table} WHERE id = ?`);
  // Infinity is no SQLite value: with no TTL nothing expires.
  const prune = db.prepare<[number]>(`DELETE FROM ${table} WHERE updated_at <= ?`);
  let closed = false;

  /** The row as a versioned snapshot; undefined when absent or expired. */
  function current(sessionId: string): VersionedSnapshot | undefined {
    const row = select.get(sessionId);
    if (row === undefined || row.updated_at + ttlMs <= now()) return undefined;
    if (typeof row.snapshot !== 'string') {
      throw new SnapshotError(`stored snapshot: expected text, got ${row.snapshot === null ? 'null' : typeof row.snapshot}`, []);
    }
    return { snapshot: row.snapshot, version: readStoredVersion(row.version) };
  }

  const compareAndSet = db.transaction((sessionId: string, expected: number | null, snapshot: string, at: number): CompareAndSetResult => {
    const found = current(sessionId);
    if ((found?.version ?? null) !== expected) return { committed: false, current: found };
    if (found !== undefined && found.snapshot === snapshot) {
      touch.run(Math.trunc(at), sessionId);
      return { committed: true, version: found.version };
    }
    const version = found === undefined ? firstSnapshotVersion() : found.version + 1;
    upsert.run(sessionId, snapshot, version, Math.trunc(at));
    return { committed: true, version };
  });

  /** Runs a database step; its failures (busy past the timeout, I/O) become `SessionStoreError`s. */
  function run<T>(what: string, sessionId: string | undefined, step: () => T): Promise<T> {
    if (closed) return Promise.reject(closedError('SQLite versioned store'));
    try {
      return Promise.resolve(step());
    } catch (error) {
      if (error instanceof SnapshotError) return Promise.reject(error);
      const session = sessionId === undefined ? '' : ` of session ${JSON.stringify(sessionId)}`;
      return Promise.reject(
        new SessionStoreError('unavailable', `the SQLite session store failed on ${what}${session}: ${(error as Error).message}`, {
          cause: error,
        }),
      );
    }
  }

  return {
    load: (sessionId) => run('load', sessionId, () => current(sessionId)),
    compareAndSet: (sessionId, expected, snapshot, at) =>
      run('compare-and-set', sessionId, () => compareAndSet.immediate(sessionId, expected, snapshot, at)),
    delete: (sessionId) => run('delete', sessionId, () => void remove.run(sessionId)),
    prune: () => run('prune', undefined, () => (Number.isFinite(ttlMs) ? prune.run(now() - ttlMs).changes : 0)),
    async close() {
      if (closed) return;
      closed = true;
      db.close();
    },
  };
}

// ---------------------------------------------------------------------------
// The shared session store

/**
 * Options of `createSharedSessionStore`. Idle sessions expire by the
 * store's `ttlMs`, not an option here: Redis sets the TTL in the same script
 * that writes, and every process sharing a store must expire sessions alike.
 */
export interface SharedSessionStoreOptions {
  /** Where sessions live; default a new `createMemoryVersionedStore()` (this process only). */
  store?: VersionedSnapshotStore;
  /**
   * Keep a session's live gate in this process for this many milliseconds
   * after its last use, so the next call needs no load when no other
   * process changed the session (one round trip instead of two); default 15
   * minutes; 0 keeps none. A kept gate is never trusted: the compare-and-set
   * checks its version, and a stale one is replaced by the stored session.
   */
  idleMs?: number;
  /** The clock, epoch milliseconds; default `Date.now`. Read once per attempt: every event of an attempt has that time. */
  now?: () => number;
  /**
   * Options for every gate (classifier, strict failed writes, telemetry
   * hooks...). `onDecision` and `onRecovery` are called once per committed
   * call, after the commit: never for an attempt that lost a race.
   */
  guard?: Omit<SessionGuardOptions, 'now' | 'snapshot'>;
  /**
   * Attempts after the first when other processes commit first; default 8.
   * Then `SessionStoreError` code `conflict`. Retries follow at once, with
   * no backoff: each lost race means another call on the session committed,
   * so the sessions always make progress, and a retry starts from the
   * session the failed compare-and-set returned, with no extra round trip.
   */
  maxRetries?: number;
}

/** What `transact` committed: `fn`'s value, and where the session now stands. */
export interface Committed<T> {
  /** What `fn` returned on the committed attempt. */
  value: T;
  /** The session's version after the commit (the same as before when nothing changed). */
  version: number;
  /** Whether the snapshot changed (a new version was stored). */
  changed: boolean;
  /** Attempts made, 1 when no other process committed in between. */
  attempts: number;
  /** The time of the committed attempt, epoch ms: every event `fn` sent had it. */
  at: number;
}

/**
 * The gate of a shared session: `SessionGuard`'s methods, asynchronous.
 * Each call is one compare-and-set of the session (see `SharedSessionStore.transact`):
 * its answer is the decision committed, and it rejects with no decision
 * when the store cannot commit (`SessionStoreError`: do not run the call),
 * when the stored session does not validate (`SnapshotError` naming the
 * session), or on the `TypeError`s of `SessionGuard`.
 */
export interface SharedSessionGuard {
  /** The session id. */
  readonly sessionId: string;
  /** `SessionGuard.check`, committed. */
  check(call: ToolCall): Promise<Decision>;
  /** `SessionGuard.record(call, outcome?, options?)`, committed. */
  record(...args: Parameters<SessionGuard['record']>): Promise<RecordResult>;
  /** `SessionGuard.finalAnswer`, committed. */
  finalAnswer(): Promise<FinalAnswerDecision>;
  /** `SessionGuard.completeVerification`, committed. */
  completeVerification(): Promise<boolean>;
  /** `SessionGuard.reset`, committed. */
  reset(): Promise<void>;
  /** `SessionGuard.resetKeepProgress`, committed. */
  resetKeepProgress(): Promise<void>;
  /** The session as stored now (a fresh session's snapshot when none is stored); a load, no write. */
  getPersistedSnapshot(): Promise<PersistedSnapshot>;
}

/** The safety gates of sessions shared by many processes. */
export interface SharedSessionStore {
  /**
   * The gate of a session (no I/O until a method is called).
   * @throws TypeError when `sessionId` is not a non-empty string.
   */
  session(sessionId: string): SharedSessionGuard;
  /**
   * Runs `fn` on the session's gate as one atomic compare-and-set: the gate
   * is the stored session (or this process's live gate when its version is
   * still the stored one); when another process committed first, `fn` runs
   * again on the session as it now is, at most `maxRetries` more times.
   * Calls on one session from this process are queued, so they never race
   * each other. `fn` must be synchronous and only use the gate it is given
   * (it may run more than once; telemetry hooks fire only for the committed run).
   *
   * @throws SessionStoreError `unavailable` (store unreachable or failing), `conflict` (retries used up), `closed`.
   * @throws SnapshotError naming the session when the stored session does not validate.
   * @throws TypeError from `fn` (a malformed call), or when `fn` returns a promise; nothing is stored then.
   */
  transact<T>(sessionId: string, fn: (guard: SessionGuard) => T): Promise<Committed<T>>;
  /** Whether this process keeps the session's live gate. */
  has(sessionId: string): boolean;
  /** Live gates kept in this process. */
  readonly size: number;
  /** Drops every live gate idle for longer than `idleMs`; returns how many. Also done on every use. */
  sweep(): number;
  /** Forgets a session, here and in the store. */
  delete(sessionId: string): Promise<void>;
  /**
   * Closes: calls made before end as they would have, later calls reject
   * (`SessionStoreError` `closed`); then the live gates are dropped and the
   * store is closed.
   */
  close(): Promise<void>;
}

interface Live {
  guard: SessionGuard;
  /** The snapshot text stored at `version`, which `guard` is in. */
  text: string;
  version: number;
  lastUsed: number;
}

/** Where an attempt starts from: the session at a version (null: absent), and a live gate in it when one is kept. */
interface Base {
  guard: SessionGuard | undefined;
  text: string | undefined;
  version: number | null;
  /** Read from the store for this call (a live gate kept from earlier is not). */
  fresh: boolean;
}

/**
 * Creates a store of sessions shared by many processes (see
 * `SharedSessionStore`, and the module comment for the protocol).
 *
 * @example
 * import Redis from 'ioredis';
 * const sessions = createSharedSessionStore({ store: createRedisSnapshotStore(new Redis(url, { maxRetriesPerRequest: 1 })) });
 * const decision = await sessions.session(chatId).check({ id: call.id, name: call.name, args: call.args });
 * // a SessionStoreError (Redis down) rejects: do not run the call
 *
 * @throws TypeError when `idleMs` or `maxRetries` is not a non-negative number (an integer for `maxRetries`).
 */
export function createSharedSessionStore(options: SharedSessionStoreOptions = {}): SharedSessionStore {
  const store = options.store ?? createMemoryVersionedStore({ ...(options.now === undefined ? {} : { now: options.now }) });
  const idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
  if (typeof idleMs !== 'number' || Number.isNaN(idleMs) || idleMs < 0) {
    throw new TypeError(`createSharedSessionStore: idleMs must be a non-negative number of milliseconds, got ${String(idleMs)}`);
  }
  const maxRetries = options.maxRetries ?? 8;
  if (!Number.isSafeInteger(maxRetries) || maxRetries < 0) {
    throw new TypeError(`createSharedSessionStore: maxRetries must be a non-negative integer, got ${String(maxRetries)}`);
  }
  const now = options.now ?? Date.now;
  validateSessionGuardOptions(options.guard, 'createSharedSessionStore: guard', ['now', 'snapshot']);
  const { onDecision, onRecovery, ...guardOptions } = options.guard ?? {};
  /** Live gates, least recently used first. */
  const live = new Map<string, Live>();
  /** Per session, the end of this process's queue of calls on it. */
  const tails = new Map<string, Promise<void>>();
  let closed = false;

  /** The time of the attempt running `fn`, read by every gate's clock; the hooks fired during it. */
  let attemptAt = 0;
  let fired: (() => unknown)[] | undefined;
  const hooks = {
    now: () => attemptAt,
    ...(onDecision === undefined ? {} : { onDecision: (event: GateDecidedEvent) => fired?.push(() => onDecision(event)) }),
    ...(onRecovery === undefined ? {} : { onRecovery: (event: RecoverySucceededEvent) => fired?.push(() => onRecovery(event)) }),
  };

  function clock(): number {
    const at = now();
    if (typeof at !== 'number' || !(Math.abs(at) <= MAX_TIME_MS)) {
      throw new TypeError(
        `the shared session store's clock returned ${String(at)}, not an epoch-millisecond number within ±${MAX_TIME_MS}`,
      );
    }
    return at;
  }

  const evictIdle = (at: number): number => evictIdleEntries(live, at, idleMs);

  function validId(sessionId: unknown): string {
    if (typeof sessionId !== 'string' || sessionId === '') {
      throw new TypeError(`session: the session id must be a non-empty string, got ${JSON.stringify(sessionId)}`);
    }
    return sessionId;
  }

  /** Errors of the store, named and typed: `SessionStoreError` and `SnapshotError` (with the session) pass, others become `unavailable`. */
  function storeError(error: unknown, what: string, sessionId: string): Error {
    if (error instanceof SessionStoreError) return error;
    if (error instanceof SnapshotError) return new SnapshotError(`session ${JSON.stringify(sessionId)}: ${error.message}`, error.path);
    const message = error instanceof Error ? error.message : String(error);
    return new SessionStoreError('unavailable', `the session store failed on ${what} of session ${JSON.stringify(sessionId)}: ${message}`, {
      cause: error,
    });
  }

  async function load(sessionId: string): Promise<VersionedSnapshot | undefined> {
    try {
      return await store.load(sessionId);
    } catch (error) {
      throw storeError(error, 'load', sessionId);
    }
  }

  /** A gate in the stored session (a new one when none is stored). */
  function build(sessionId: string, text: string | undefined): SessionGuard {
    try {
      return createSessionGuard({ ...guardOptions, ...hooks, ...(text === undefined ? {} : { snapshot: text }) });
    } catch (error) {
      if (error instanceof SnapshotError) throw new SnapshotError(`session ${JSON.stringify(sessionId)}: ${error.message}`, error.path);
      throw error;
    }
  }

  /** Queues `task` behind this process's earlier calls on the session. */
  function queued<T>(sessionId: string, task: () => Promise<T>): Promise<T> {
    const previous = tails.get(sessionId) ?? Promise.resolve();
    const result = previous.then(task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    tails.set(sessionId, tail);
    void tail.then(() => {
      if (tails.get(sessionId) === tail) tails.delete(sessionId);
    });
    return result;
  }

  async function attemptAll<T>(sessionId: string, fn: (guard: SessionGuard) => T): Promise<Committed<T>> {
    const kept = live.get(sessionId);
    live.delete(sessionId); // this call owns the live gate until it commits
    let base: Base;
    if (kept !== undefined && clock() - kept.lastUsed <= idleMs) {
      base = { guard: kept.guard, text: kept.text, version: kept.version, fresh: false };
    } else {
      const stored = await load(sessionId);
      base = { guard: undefined, text: stored?.snapshot, version: stored?.version ?? null, fresh: true };
    }
    for (let attempt = 1; attempt <= maxRetries + 1; attempt++) {
      const at = clock();
      evictIdle(at);
      const guard = base.guard ?? build(sessionId, base.text);
      let value: T;
      const hooksFired: (() => unknown)[] = [];
      attemptAt = at;
      fired = hooksFired;
      try {
        value = fn(guard);
      } catch (error) {
        if (base.fresh) throw error;
        // The live gate may be behind the store (an id still in flight here, recorded elsewhere): judge on the stored session.
        const stored = await load(sessionId);
        base = { guard: undefined, text: stored?.snapshot, version: stored?.version ?? null, fresh: true };
        attempt -= 1; // not a race lost
        continue;
      } finally {
        fired = undefined;
      }
      if (isThenable(value)) {
        throw new TypeError('transact: fn must be synchronous (it returned a promise); nothing was stored');
      }
      const text = JSON.stringify(guard.getPersistedSnapshot());
      let result: CompareAndSetResult;
      try {
        result = await store.compareAndSet(sessionId, base.version, text, at);
      } catch (error) {
        throw storeError(error, 'compare-and-set', sessionId);
      }
      if (result.committed) {
        if (idleMs > 0 && !closed) {
          live.delete(sessionId);
          live.set(sessionId, { guard, text, version: result.version, lastUsed: at });
        }
        for (const hook of hooksFired) {
          try {
            const returned: unknown = hook();
            // An async hook's rejection is ignored too, rather than left unhandled (which would end the process).
            if (isThenable(returned)) Promise.resolve(returned).catch(() => undefined);
          } catch {
            // telemetry never changes or stops a decision
          }
        }
        return { value, version: result.version, changed: text !== base.text, attempts: attempt, at };
      }
      base = { guard: undefined, text: result.current?.snapshot, version: result.current?.version ?? null, fresh: true };
    }
    throw new SessionStoreError(
      'conflict',
      `session ${JSON.stringify(sessionId)}: other processes committed first ${maxRetries + 1} times in a row; no decision was made`,
    );
  }

  function transact<T>(sessionId: string, fn: (guard: SessionGuard) => T): Promise<Committed<T>> {
    try {
      validId(sessionId);
      if (typeof fn !== 'function') throw new TypeError('transact: fn must be a function of the session gate');
      if (closed) throw closedError('shared session store');
    } catch (error) {
      return Promise.reject(error);
    }
    return queued(sessionId, () => attemptAll(sessionId, fn));
  }

  async function value<T>(sessionId: string, fn: (guard: SessionGuard) => T): Promise<T> {
    return (await transact(sessionId, fn)).value;
  }

  function handle(sessionId: string): SharedSessionGuard {
    return {
      sessionId,
      check: (call) => value(sessionId, (guard) => guard.check(call)),
      record: (...args) => value(sessionId, (guard) => guard.record(...args)),
      finalAnswer: () => value(sessionId, (guard) => guard.finalAnswer()),
      completeVerification: () => value(sessionId, (guard) => guard.completeVerification()),
      reset: () => value(sessionId, (guard) => guard.reset()),
      resetKeepProgress: () => value(sessionId, (guard) => guard.resetKeepProgress()),
      async getPersistedSnapshot() {
        if (closed) throw closedError('shared session store');
        const stored = await load(sessionId);
        return build(sessionId, stored?.snapshot).getPersistedSnapshot();
      },
    };
  }

  return {
    session(sessionId) {
      return handle(validId(sessionId));
    },
    transact,
    has: (sessionId) => live.has(sessionId),
    get size() {
      return live.size;
    },
    sweep: () => evictIdle(clock()),
    delete(sessionId) {
      try {
        validId(sessionId);
        if (closed) throw closedError('shared session store');
      } catch (error) {
        return Promise.reject(error);
      }
      return queued(sessionId, async () => {
        live.delete(sessionId);
        try {
          await store.delete(sessionId);
        } catch (error) {
          throw storeError(error, 'delete', sessionId);
        }
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...tails.values()]);
      live.clear();
      await store.close();
    },
  };
}
