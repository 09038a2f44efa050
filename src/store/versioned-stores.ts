/**
 * Where shared sessions live: the `VersionedSnapshotStore` interface (a
 * session's snapshot text with a version, changed only by one atomic
 * compare-and-set), the rules every implementation keeps, and the two
 * shipped stores for one machine, in memory (`createMemoryVersionedStore`)
 * and in a SQLite database file (`createSqliteVersionedStore`); Redis is in
 * redis-store.ts. The shared session store (shared-session-store.ts) commits
 * every decision to one.
 *
 * Spec: ASSISTANT_SAFETY.md (a session's state); DESIGN.md §3.7 (time as an
 * input: the clock is injectable, epoch ms).
 */
import { randomInt } from 'node:crypto';
import { SessionStoreError } from '../errors/session-store-error.js';
import { SnapshotError } from '../errors/snapshot-error.js';
import { openSqliteTable } from './open-sqlite-table.js';

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
