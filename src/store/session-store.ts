/**
 * A session store: the safety gates of many chat sessions, by session id.
 *
 * Two tiers. A pluggable `SnapshotStore` (in memory, or SQLite for a real
 * deployment) keeps every session's persisted snapshot and is saved on every
 * decision, so it is the source of truth. In front of it, live sessions (an
 * XState actor each) are created on first use, restored from the snapshot
 * store when it has the session, and evicted from memory after an idle time;
 * the next use restores them exactly as they were.
 *
 * Everything is synchronous, as the guard is: a decision is durable in the
 * snapshot store before `check`, `record` or `finalAnswer` returns.
 *
 * Spec: ASSISTANT_SAFETY.md (a session's state); DESIGN.md §3.7 (time as an
 * input: the clock is injectable, epoch milliseconds; no timers).
 */
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { createSessionGuard, type SessionGuard } from '../guard/session-guard.js';
import { validateSessionGuardOptions, type SessionGuardOptions } from '../guard/session-guard-options.js';
import { SnapshotError } from '../errors/snapshot-error.js';

/**
 * Where persisted snapshots live: JSON text (`PersistedSnapshot`) by session
 * id. Implementations must be synchronous and durable once `save` returns,
 * as far as their medium allows.
 */
export interface SnapshotStore {
  /** The snapshot saved for the session, or undefined when there is none. */
  load(sessionId: string): string | undefined;
  /** Saves (inserts or replaces) the session's snapshot; `at` is the time of the decision, epoch ms. */
  save(sessionId: string, snapshot: string, at: number): void;
  /** Forgets the session. */
  delete(sessionId: string): void;
  /**
   * Forgets every session last saved before `before` (epoch ms): a retention
   * job. A forgotten session starts again from RESOLVING. Returns how many.
   */
  prune(before: number): number;
  /** Releases the medium (closes a database). Further calls throw. */
  close(): void;
}

/** Options of `createSessionStore`. */
export interface SessionStoreOptions {
  /** Where snapshots are saved; default `createMemoryStore()`. */
  store?: SnapshotStore;
  /** Evict a live session from memory after this many milliseconds without use; default 15 minutes. */
  idleMs?: number;
  /** The clock of the store and of every guard in it, epoch milliseconds; default `Date.now`. */
  now?: () => number;
  /** Options for every guard (classifier, strict failed writes, telemetry hooks...). */
  guard?: Omit<SessionGuardOptions, 'now' | 'snapshot'>;
}

/** The safety gates of many sessions. */
export interface SessionStore {
  /**
   * The gate of a session: a handle whose every method acts on the session's
   * live guard, restoring it from the snapshot store first when it was
   * evicted, and saves the snapshot after every call that may change it.
   * Holding the handle across evictions is safe. `check`, `record`,
   * `finalAnswer`, `completeVerification`, `reset` and `resetKeepProgress`
   * save; sending events to `actor` directly bypasses the store.
   *
   * When a save throws, the live session is dropped (the next use restores
   * the last saved snapshot, as if the call had not been made) and the error
   * propagates: the call must not run.
   *
   * @throws TypeError when `sessionId` is not a non-empty string.
   * @throws SnapshotError (naming the session and the field) when the saved snapshot does not validate.
   */
  session(sessionId: string): SessionGuard;
  /** Whether the session is live in memory (not whether it is stored). */
  has(sessionId: string): boolean;
  /** Live sessions in memory. */
  readonly size: number;
  /** Evicts every live session idle for longer than `idleMs`; returns how many. Also done on every use. */
  sweep(): number;
  /** Forgets a session, in memory and in the snapshot store. */
  delete(sessionId: string): void;
  /** Drops every live session and closes the snapshot store. */
  close(): void;
}

/** The default idle time before a live session is evicted from memory: 15 minutes. */
export const DEFAULT_IDLE_MS = 15 * 60_000;

/** A snapshot store in a `Map`: for tests, and for one process that may lose its sessions on exit. */
export function createMemoryStore(): SnapshotStore {
  const rows = new Map<string, { snapshot: string; at: number }>();
  let closed = false;
  function open(): Map<string, { snapshot: string; at: number }> {
    if (closed) throw new Error('the memory snapshot store is closed');
    return rows;
  }
  return {
    load: (sessionId) => open().get(sessionId)?.snapshot,
    save: (sessionId, snapshot, at) => void open().set(sessionId, { snapshot, at }),
    delete: (sessionId) => void open().delete(sessionId),
    prune(before) {
      let count = 0;
      for (const [id, row] of open()) {
        if (row.at < before) {
          rows.delete(id);
          count += 1;
        }
      }
      return count;
    },
    close() {
      closed = true;
      rows.clear();
    },
  };
}

/** Options of `createSqliteStore`. */
export interface SqliteStoreOptions {
  /**
   * SQLite's `synchronous` setting (in WAL mode). `FULL`, the default, makes
   * each decision survive power loss; `NORMAL` survives a crashed or killed
   * process, and may lose the latest decisions on power loss.
   */
  synchronous?: 'FULL' | 'NORMAL';
  /** Table name (letters, digits, underscores); default `safety_sessions`. */
  table?: string;
}

/**
 * Opens a SQLite database for a session table (better-sqlite3, loaded on
 * first use, so the library works without it): the table name and the
 * `synchronous` setting validated, WAL journal, the table created from
 * `columns` when absent. Shared by `createSqliteStore` and
 * `createSqliteVersionedStore` (src/shared-store.ts).
 *
 * @param caller the public function's name, for messages.
 * @param alternative what to use without better-sqlite3, for the message.
 * @throws Error when better-sqlite3 is not installed, or the database cannot be opened.
 * @throws TypeError on a bad table name or `synchronous`.
 */
export function openSqliteTable(
  caller: string,
  path: string,
  options: { table: string; synchronous?: unknown; timeoutMs?: number; columns: string; alternative: string },
): { db: BetterSqlite3.Database; table: string } {
  const { table } = options;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(table)) {
    throw new TypeError(`${caller}: table must be letters, digits and underscores, got ${JSON.stringify(table)}`);
  }
  const synchronous = options.synchronous ?? 'FULL';
  if (synchronous !== 'FULL' && synchronous !== 'NORMAL') {
    throw new TypeError(`${caller}: synchronous must be 'FULL' or 'NORMAL', got ${JSON.stringify(synchronous)}`);
  }
  let Database: typeof BetterSqlite3;
  try {
    Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
  } catch (error) {
    throw new Error(
      `${caller} needs the optional dependency better-sqlite3 (npm i better-sqlite3@12); without it use ${options.alternative}`,
      { cause: error },
    );
  }
  const db = new Database(path, options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs });
  try {
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${synchronous}`);
    db.exec(`CREATE TABLE IF NOT EXISTS ${table} (${options.columns}) WITHOUT ROWID`);
  } catch (error) {
    db.close();
    throw error;
  }
  return { db, table };
}

/**
 * A snapshot store in a SQLite database file (better-sqlite3, loaded on
 * first call): the embedded default for a real deployment. One table
 * `(id TEXT PRIMARY KEY, snapshot TEXT, updated_at INTEGER)`, WAL journal,
 * one statement per save. One process should own a session at a time (the
 * session store caches live sessions in memory).
 *
 * @param path the database file (created if absent), or `:memory:`.
 * @throws Error when better-sqlite3 is not installed, or the database cannot be opened.
 * @throws TypeError on a bad table name.
 */
export function createSqliteStore(path: string, options: SqliteStoreOptions = {}): SnapshotStore {
  const { db, table } = openSqliteTable('createSqliteStore', path, {
    table: options.table ?? 'safety_sessions',
    synchronous: options.synchronous,
    columns: 'id TEXT PRIMARY KEY, snapshot TEXT NOT NULL, updated_at INTEGER NOT NULL',
    alternative: 'createMemoryStore() or a SnapshotStore of your own',
  });
  const load = db.prepare<[string], { snapshot: string }>(`SELECT snapshot FROM ${table} WHERE id = ?`);
  const save = db.prepare<[string, string, number]>(
    `INSERT INTO ${table} (id, snapshot, updated_at) VALUES (?, ?, ?) ` +
      'ON CONFLICT (id) DO UPDATE SET snapshot = excluded.snapshot, updated_at = excluded.updated_at',
  );
  const remove = db.prepare<[string]>(`DELETE FROM ${table} WHERE id = ?`);
  const prune = db.prepare<[number]>(`DELETE FROM ${table} WHERE updated_at < ?`);
  return {
    load: (sessionId) => load.get(sessionId)?.snapshot,
    save: (sessionId, snapshot, at) => void save.run(sessionId, snapshot, Math.trunc(at)),
    delete: (sessionId) => void remove.run(sessionId),
    prune: (before) => prune.run(before).changes,
    close: () => void db.close(),
  };
}

interface Live {
  guard: SessionGuard;
  lastUsed: number;
  /** The snapshot text last saved, to skip saving an unchanged session. */
  saved: string | undefined;
}

/**
 * Drops the live entries idle for more than `idleMs` at `at` (epoch ms) from
 * a map kept least recently used first, and says how many it dropped. Shared
 * by the session store and the shared session store.
 */
export function evictIdleEntries(live: Map<string, { lastUsed: number }>, at: number, idleMs: number): number {
  let count = 0;
  for (const [id, entry] of live) {
    if (at - entry.lastUsed <= idleMs) break; // the rest were used more recently
    live.delete(id);
    count += 1;
  }
  return count;
}

/**
 * Creates a session store (see `SessionStore`).
 *
 * @example
 * const sessions = createSessionStore({ store: createSqliteStore('safety.db') });
 * const guard = sessions.session(chatId);
 * const decision = guard.check({ id: call.id, name: call.name, args: call.args }); // saved
 *
 * @throws TypeError when `idleMs` is not a non-negative number.
 */
export function createSessionStore(options: SessionStoreOptions = {}): SessionStore {
  const store = options.store ?? createMemoryStore();
  const idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
  if (typeof idleMs !== 'number' || Number.isNaN(idleMs) || idleMs < 0) {
    throw new TypeError(`createSessionStore: idleMs must be a non-negative number of milliseconds, got ${String(idleMs)}`);
  }
  const now = options.now ?? Date.now;
  validateSessionGuardOptions(options.guard, 'createSessionStore: guard', ['now', 'snapshot']);
  const guardOptions = options.guard ?? {};
  /** Live sessions, least recently used first. */
  const live = new Map<string, Live>();

  function clock(): number {
    const at = now();
    if (typeof at !== 'number' || !Number.isFinite(at)) {
      throw new TypeError(`the session store's clock returned ${String(at)}, not a finite epoch-millisecond number`);
    }
    return at;
  }

  const evictIdle = (at: number): number => evictIdleEntries(live, at, idleMs);

  /** The live session, restored or created when absent; marked as just used. */
  function use(sessionId: string): Live {
    const at = clock();
    evictIdle(at);
    let session = live.get(sessionId);
    if (session === undefined) {
      const saved = store.load(sessionId);
      let guard: SessionGuard;
      try {
        guard = createSessionGuard({ ...guardOptions, now, ...(saved === undefined ? {} : { snapshot: saved }) });
      } catch (error) {
        if (error instanceof SnapshotError) {
          throw new SnapshotError(`session ${JSON.stringify(sessionId)}: ${error.message}`, error.path);
        }
        throw error;
      }
      session = { guard, lastUsed: at, saved };
    } else {
      live.delete(sessionId); // re-inserted below: most recently used last
      session.lastUsed = at;
    }
    live.set(sessionId, session);
    return session;
  }

  /** Runs a guard method on the live session and saves the snapshot if it changed. */
  function act<T>(sessionId: string, method: (guard: SessionGuard) => T): T {
    const session = use(sessionId);
    const result = method(session.guard);
    const snapshot = JSON.stringify(session.guard.getPersistedSnapshot());
    if (snapshot !== session.saved) {
      try {
        store.save(sessionId, snapshot, session.lastUsed);
      } catch (error) {
        live.delete(sessionId); // not durable: the next use restores the last saved snapshot
        throw error;
      }
      session.saved = snapshot;
    }
    return result;
  }

  /** A stateless handle: every access goes through `use`, so it survives evictions. */
  function handle(sessionId: string): SessionGuard {
    return {
      get state() {
        return use(sessionId).guard.state;
      },
      get context() {
        return use(sessionId).guard.context;
      },
      get actor() {
        return use(sessionId).guard.actor;
      },
      check: (call) => act(sessionId, (guard) => guard.check(call)),
      record: (call, outcome, options) => act(sessionId, (guard) => guard.record(call, outcome, options)),
      finalAnswer: () => act(sessionId, (guard) => guard.finalAnswer()),
      completeVerification: () => act(sessionId, (guard) => guard.completeVerification()),
      reset: () => act(sessionId, (guard) => guard.reset()),
      resetKeepProgress: () => act(sessionId, (guard) => guard.resetKeepProgress()),
      tick: () => act(sessionId, (guard) => guard.tick()),
      getPersistedSnapshot: () => use(sessionId).guard.getPersistedSnapshot(),
    };
  }

  return {
    session(sessionId) {
      if (typeof sessionId !== 'string' || sessionId === '') {
        throw new TypeError(`session: the session id must be a non-empty string, got ${JSON.stringify(sessionId)}`);
      }
      use(sessionId);
      return handle(sessionId);
    },
    has: (sessionId) => live.has(sessionId),
    get size() {
      return live.size;
    },
    sweep: () => evictIdle(clock()),
    delete(sessionId) {
      live.delete(sessionId);
      store.delete(sessionId);
    },
    close() {
      live.clear();
      store.close();
    },
  };
}
