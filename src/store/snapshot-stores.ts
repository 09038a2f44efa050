/**
 * Where a session store keeps every session's persisted snapshot: the
 * `SnapshotStore` interface (synchronous, durable once `save` returns), and
 * the two shipped stores, in memory (`createMemoryStore`) and in a SQLite
 * database file (`createSqliteStore`). The session store (session-store.ts)
 * saves to one on every decision, so it is the source of truth.
 *
 * Spec: ASSISTANT_SAFETY.md (a session's state); DESIGN.md §3.7 (time as an
 * input: each save carries the decision's time, epoch milliseconds).
 */
import { openSqliteTable } from './open-sqlite-table.js';
import { assertKnownKeys } from '../util/known-keys.js';

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
 * A snapshot store in a SQLite database file (better-sqlite3, loaded on
 * first call): the embedded default for a real deployment. One table
 * `(id TEXT PRIMARY KEY, snapshot TEXT, updated_at INTEGER)`, WAL journal,
 * one statement per save. One process should own a session at a time (the
 * session store caches live sessions in memory).
 *
 * @param path the database file (created if absent), or `:memory:`.
 * @throws Error when better-sqlite3 is not installed, or the database cannot be opened.
 * @throws TypeError on a bad table name, or an option it does not know.
 */
export function createSqliteStore(path: string, options: SqliteStoreOptions = {}): SnapshotStore {
  if (typeof options === 'object' && options !== null) assertKnownKeys(options, ['table', 'synchronous'], 'createSqliteStore');
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
