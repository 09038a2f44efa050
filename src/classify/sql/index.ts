/**
 * SQL classification: a SQL text parsed by a real parser and judged
 * statement by statement (DESIGN.md §5.5: "SQL is parsed the same way: a
 * `SELECT` without side-effecting functions is a read; every other
 * statement, and anything that does not parse, is a write; a batch is as
 * dangerous as its most dangerous statement"), with the tables it names as
 * targets (§5.1, §5.2) and its destructive statements flagged (§5.6).
 *
 * Parsers:
 * - PostgreSQL: `libpg-query`, the server's own parser compiled to
 *   WebAssembly, so what it reads is what the server would run. Loaded by
 *   the parser registry (`../parsers.ts`), not when this module is imported:
 *   the package's entry points load it, the hook when a call needs it; a
 *   text judged without it is a write.
 * - SQLite: `node-sql-parser` (its SQLite grammar), with `libpg-query` as a
 *   second opinion for standard SQL that grammar lacks (`RETURNING`, a `WITH`
 *   before `DELETE`, `ON CONFLICT ... DO`, `DROP INDEX`). Neither parser reads
 *   SQLite's lexical rules exactly (node-sql-parser takes `\'` for an escaped
 *   quote and `#` for a comment, Postgres nests block comments), so the text
 *   is first cut into tokens here by SQLite's rules, a subset of them: any
 *   character outside it fails closed, comments are dropped and parameters
 *   become `NULL` before a parser sees a statement, and statements are split
 *   at `;` here. `PRAGMA`, `BEGIN`/`SAVEPOINT`/`RELEASE`, `EXPLAIN` and
 *   `CREATE TRIGGER`, which node-sql-parser does not parse, are read from the
 *   tokens by their (small) grammars.
 *
 * Functions are judged from the data file `catalogs/sql-functions.json`: a
 * function is read-only only when it is on its dialect's read-only list;
 * anything else, user-defined functions included, makes the statement a
 * write. The text cannot tell what a user-defined function does, and a read
 * wrongly admitted is the failure this gate exists to prevent, so an unknown
 * function costs a read-after-write check rather than risking an unseen
 * write; the common builtins (`count`, `now`, `lower`, `json_extract`, ...)
 * are listed so ordinary queries stay reads.
 *
 * PostgreSQL also runs functions a statement does not name: attribute
 * notation (`t.fn` is `fn(t)` when `t` has no column `fn`), operators of
 * `ANY`/`ALL` subqueries and `ORDER BY ... USING`, a cast's type input
 * function, `TABLESAMPLE` methods; each is judged (postgres-nodes.ts), and a
 * node kind the walk does not know is a write. A qualified column the
 * statement does not prove a column (`SELECT o.id FROM orders o`) is
 * therefore a write.
 *
 * What the text cannot show, and is therefore not seen: a view, rule, policy
 * or default that calls a side-effecting function when a table is read; an
 * operator or cast of a user-defined type applied to a column of that type;
 * a function, type or operator shadowing a builtin through `search_path`
 * ahead of `pg_catalog`.
 *
 * This folder: `function-policy.ts` (functions and operators, from the data
 * file), `facts.ts` (what a walk found, and the classification it makes),
 * `postgres.ts`, `postgres-nodes.ts` (what PostgreSQL runs besides named
 * functions), `sqlite-lexer.ts` and `sqlite.ts` (each dialect's parse and
 * walk), `reasons.ts` (`SQL_REASONS`). This file is the surface:
 * `classifySql`, its input checks and the memo.
 */
import type { Classification } from '../classification.js';
import { createMemo } from '../../util/memo.js';
import { parserMisses } from '../parsers.js';
import { errorMessage, failClosedSql, withUnknownPlace } from './facts.js';
import type { SqlDialect } from './function-policy.js';
import { classifyPostgres } from './postgres.js';
import { SQL_REASONS } from './reasons.js';
import { classifySqlite } from './sqlite.js';

export type { SqlDialect } from './function-policy.js';

/** Options of `classifySql`. `dialect` defaults to `'postgres'`. */
export interface SqlOptions {
  dialect?: SqlDialect;
}

/** The longest SQL text judged, in UTF-8 bytes (64 KiB); a longer one is a write without parsing. */
export const MAX_SQL_BYTES = 64 * 1024;

/** How many classifications the memo keeps (least recently used dropped first). */
export const SQL_MEMO_CAPACITY = 1024;

/** The longest text the memo keeps, in UTF-16 code units; longer ones are classified on every call, so the memo stays within a few MiB. */
export const SQL_MEMO_MAX_TEXT = 8 * 1024;

/** Classifications by dialect and text, each kept frozen and handed out as a copy. */
const memo = createMemo<Readonly<Classification>>(SQL_MEMO_CAPACITY);

function copy(result: Readonly<Classification>): Classification {
  return { ...result, targets: [...result.targets] };
}

/** UTF-8 length of `text` in bytes, stopping early past the limit (no Buffer: runs in a browser too). */
function utf8Length(text: string): number {
  if (text.length > MAX_SQL_BYTES) return text.length;
  let bytes = 0;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code >= 0xd800 && code < 0xdc00 ? 4 : 3;
    if (code >= 0xd800 && code < 0xdc00 && i + 1 < text.length) i += 1;
  }
  return bytes;
}

/**
 * A write that names no target (text not judged, a batch of only `COMMIT`s)
 * given an unknown place hinted with its reason: a SQL write is never
 * without a target (issue #24). Anything else as it is.
 */
function placed(result: Classification): Classification {
  return result.kind === 'write' && result.targets.length === 0 ? withUnknownPlace(result) : result;
}

function classifyUncached(sql: string, dialect: SqlDialect): Classification {
  if (utf8Length(sql) > MAX_SQL_BYTES) {
    return placed(failClosedSql(SQL_REASONS['too-long'](MAX_SQL_BYTES)));
  }
  if (sql.includes('\0')) return placed(failClosedSql(SQL_REASONS.nul));
  return placed(dialect === 'sqlite' ? classifySqlite(sql) : classifyPostgres(sql));
}

/**
 * Classifies a SQL text (DESIGN.md §5.5, §5.1, §5.6): one statement or a
 * batch separated by `;`, as the `dialect`'s parser reads it (default
 * `'postgres'`).
 *
 * A statement is a `read` only when it is
 * - a `SELECT` (or `VALUES`, `TABLE t`), without `INTO`, without `FOR
 *   UPDATE/SHARE`, without a data-modifying statement anywhere in it (a
 *   `WITH d AS (DELETE ...)`), calling only functions on the dialect's
 *   read-only list (`catalogs/sql-functions.json`; `nextval`, `setval`,
 *   `pg_terminate_backend`, user-defined functions: writes) and, in Postgres,
 *   only operators on its list;
 * - `EXPLAIN` of a statement it does not run: without `ANALYZE` (Postgres;
 *   still a write if it names a function not on the list, since the planner
 *   may evaluate it), any `EXPLAIN [QUERY PLAN]` in SQLite; `EXPLAIN
 *   ANALYZE` runs its statement and is judged as that statement;
 * - `SHOW` (Postgres), `COPY ... TO STDOUT` of a read (Postgres);
 * - a `PRAGMA` that only reports (SQLite: `PRAGMA table_info(t)`,
 *   `PRAGMA journal_mode`; a pragma given a value is a write).
 * Starting a transaction or a savepoint (`BEGIN`, `START TRANSACTION`,
 * `SAVEPOINT`, `RELEASE`) is `neutral`: it neither reads nor changes data,
 * and as a read it would wrongly verify an earlier write. Ending one
 * (`COMMIT`, `ROLLBACK`, `END`) is a write: it makes writes durable or undoes
 * them. Every other statement (DML, DDL, `SET`, `CALL`, `DO`, `COPY FROM`,
 * `COPY TO` a file, `VACUUM`, `GRANT`, `LOCK`, `PREPARE`, `EXECUTE`,
 * `DECLARE`, `ATTACH`, `CREATE TRIGGER`, ...) is a write. A batch is the
 * `worstOf` its statements.
 *
 * Targets are the tables named anywhere in the text, as `table:<name>`
 * (`tableTarget`): schema-qualified names kept as `schema.name`; Postgres
 * names as its parser folds them (unquoted lower-cased, quoted kept); SQLite
 * names lower-cased (SQLite's identifiers are case-insensitive). Names a
 * `WITH` clause defines are not tables; functions in `FROM` are not tables.
 *
 * Destructive: `DROP` of anything, `TRUNCATE`, `DELETE` or `UPDATE` without
 * `WHERE` (also inside a CTE or `EXPLAIN ANALYZE`), `ALTER TABLE ... DROP
 * COLUMN`. A `DELETE` in a rule or function body being created counts too
 * (flagging more is the safe side).
 *
 * Targets of writes (issue #24: a SQL write is never without a target): a
 * statement that writes but names no table (`DO`, `VACUUM`, `SET`,
 * `CHECKPOINT`), one that writes only because it calls a function or
 * operator not known to be read-only (`SELECT f() FROM t`: its tables and
 * what `f` changes), `COPY` to or from a program and `COPY ... TO` a file
 * each add an unknown place (`?/sql: <reason>`, never established); ending a
 * transaction adds none (its places are those of the writes it ends), unless
 * the whole text names no target.
 *
 * Fails closed (a write in an unknown place hinted with why, not destructive) on: a
 * value that is not a string; more than `MAX_SQL_BYTES` UTF-8 bytes; a NUL
 * character (the parser would stop reading there); text that does not parse;
 * no statement at all. Postgres: a plain `'...'` literal holding a backslash
 * (read differently with `standard_conforming_strings = off`). SQLite: a
 * backslash anywhere; `#`, `$`, `::` or a non-ASCII character outside
 * quotes; a statement neither parser reads (`DETACH`, `REINDEX`, `VACUUM
 * INTO`, and reads using `INDEXED BY` or full-text `MATCH`).
 *
 * Results are memoized by dialect and text (LRU, `SQL_MEMO_CAPACITY`
 * entries, texts up to `SQL_MEMO_MAX_TEXT`); each call returns a fresh
 * object. Never throws.
 *
 * @param sql the SQL text; anything else is a write.
 * @param options `{ dialect }`: `'postgres'` (default) or `'sqlite'`; an
 *   unknown dialect is a write.
 */
export function classifySql(sql: unknown, options?: SqlOptions): Classification {
  try {
    if (typeof sql !== 'string') return placed(failClosedSql(SQL_REASONS['not-a-string']));
    const dialect = options?.dialect ?? 'postgres';
    if (dialect !== 'postgres' && dialect !== 'sqlite') return placed(failClosedSql(SQL_REASONS['unknown-dialect'](String(dialect))));
    if (sql.length > SQL_MEMO_MAX_TEXT) return classifyUncached(sql, dialect);
    const key = `${dialect}\0${sql}`;
    const cached = memo.get(key);
    if (cached !== undefined) return copy(cached);
    const misses = parserMisses();
    const result = classifyUncached(sql, dialect);
    // A result judged without a parser it needed (not loaded yet: `../parsers.ts`) is not kept: a loaded parser may judge otherwise.
    if (parserMisses() === misses) memo.set(key, Object.freeze(copy(result)));
    return result;
  } catch (error) {
    return placed(failClosedSql(SQL_REASONS['not-judged'](errorMessage(error))));
  }
}

/** The memo's counters since the last `clearSqlMemo`: lookups answered from it, lookups classified, entries kept. */
export function sqlMemoStats(): { hits: number; misses: number; size: number } {
  return memo.stats();
}

/** Empties the memo and zeroes its counters, for tests and measurements (classification is pure, so the memo never goes stale). */
export function clearSqlMemo(): void {
  memo.clear();
}
