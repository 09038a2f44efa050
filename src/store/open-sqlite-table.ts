/**
 * `openSqliteTable`: the one way this library opens a SQLite table of
 * sessions (better-sqlite3, an optional dependency loaded on first use),
 * shared by the snapshot store and the versioned store on SQLite, so both
 * validate their options, journal and fail the same way.
 */
import { createRequire } from 'node:module';

/**
 * What this library uses of a better-sqlite3 prepared statement, as a
 * structural type: the package's declarations then never name
 * better-sqlite3, an optional peer dependency whose types a project without
 * it lacks (TS7016 under a strict `tsc` without `skipLibCheck`).
 */
interface SqliteStatement<P extends unknown[], R> {
  run(...params: P): { changes: number };
  get(...params: P): R | undefined;
}

/** A better-sqlite3 transaction function: called, or `.immediate` to begin with `BEGIN IMMEDIATE`. */
interface SqliteTransaction<A extends unknown[], R> {
  (...args: A): R;
  immediate(...args: A): R;
}

/** What this library uses of a better-sqlite3 `Database`, as a structural type (see `SqliteStatement`). */
interface SqliteDatabase {
  prepare<P extends unknown[] = [], R = unknown>(sql: string): SqliteStatement<P, R>;
  pragma(source: string): unknown;
  exec(source: string): unknown;
  transaction<A extends unknown[], R>(fn: (...args: A) => R): SqliteTransaction<A, R>;
  close(): unknown;
}

/** better-sqlite3's default export: `new Database(file, { timeout })` (timeout in ms). */
type SqliteDatabaseConstructor = new (path: string, options: { timeout?: number }) => SqliteDatabase;

/**
 * Opens a SQLite database for a session table (better-sqlite3, loaded on
 * first use, so the library works without it): the table name and the
 * `synchronous` setting validated, WAL journal, the table created from
 * `columns` when absent. Shared by `createSqliteStore` and
 * `createSqliteVersionedStore` (versioned-stores.ts).
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
): { db: SqliteDatabase; table: string } {
  const { table } = options;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(table)) {
    throw new TypeError(`${caller}: table must be letters, digits and underscores, got ${JSON.stringify(table)}`);
  }
  const synchronous = options.synchronous ?? 'FULL';
  if (synchronous !== 'FULL' && synchronous !== 'NORMAL') {
    throw new TypeError(`${caller}: synchronous must be 'FULL' or 'NORMAL', got ${JSON.stringify(synchronous)}`);
  }
  let Database: SqliteDatabaseConstructor;
  try {
    Database = createRequire(import.meta.url)('better-sqlite3') as SqliteDatabaseConstructor;
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
