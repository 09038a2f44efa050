/**
 * What a walk over one statement's tree found (`Facts`: tables, writes,
 * calls that are not reads, destructive parts) and how that becomes a
 * classification (DESIGN.md §5.1, §5.5, §5.6), for either dialect's walk.
 * Reasons stay `SQL_REASONS` strings until a classification is made here,
 * which adds their `sql: ` prefix.
 */
import { failClosed, normalizeTargets, tableTarget, type Classification } from '../classification.js';
import { unknownPlace } from '../../../machines/safety.targets.js';
import { SQL_REASONS } from './reasons.js';

/** What a walk over one statement's tree found. */
export interface Facts {
  /** Table names, as the parser resolved them (CTE names excluded). */
  tables: string[];
  /** Why the statement writes (nested data-modifying statements, row locks, SELECT INTO, ...). */
  writes: string[];
  /** Why a function or operator call is not a read. */
  calls: string[];
  /** A destructive part was seen (DROP, TRUNCATE, DELETE/UPDATE without WHERE, DROP COLUMN). */
  destructive: boolean;
  /** Those of `calls` that are a qualified column not proven one (attribute notation, `o.id`): almost always a column. */
  attributes?: string[];
}

/** Facts before a walk: nothing found. */
export function newFacts(): Facts {
  return { tables: [], writes: [], calls: [], destructive: false };
}

/** A node of a parser's JSON tree. */
export type Json = Record<string, unknown>;

/** A classification with `tables` as targets (`tableTarget`), destructive only when a write; `reason` a `SQL_REASONS` string. */
export function classification(
  kind: Classification['kind'],
  tables: readonly string[],
  destructive: boolean,
  reason: string,
): Classification {
  return {
    kind,
    targets: normalizeTargets(tables.map(tableTarget)),
    destructive: kind === 'write' && destructive,
    reason: `sql: ${reason}`,
  };
}

/** `failClosed` with a `SQL_REASONS` string: a write, no targets, not destructive. */
export function failClosedSql(reason: string): Classification {
  return failClosed(`sql: ${reason}`);
}

/**
 * A write with one more target: an unknown place (`unknownPlace`) hinted
 * with its reason (`?/sql: function 'f' is not known to be read-only`).
 */
export function withUnknownPlace(result: Classification): Classification {
  return { ...result, targets: normalizeTargets([...result.targets, unknownPlace(result.reason ?? 'sql')]) };
}

/**
 * A statement's write placed (issue #24: a SQL write is never without a
 * target): one naming no table gets an unknown place hinted with its reason
 * (`DO $$ … $$`, `VACUUM`, `SET`, `CHECKPOINT`), except the end of a
 * transaction (`COMMIT`, `ROLLBACK`), whose places are those of the writes
 * it ends (a batch of only such statements is placed by `classifySql`).
 * Anything else as it is.
 */
export function placedStatement(result: Classification): Classification {
  if (result.kind !== 'write' || result.targets.length > 0 || result.reason === `sql: ${SQL_REASONS['transaction-end']}`) return result;
  return withUnknownPlace(result);
}

/**
 * The classification of a statement whose tree has been walked: a read when
 * it is of a read-only type and nothing in it writes. A statement that
 * writes only because it calls a function or operator not known to be
 * read-only changes what that function changes, not (only) the tables it
 * names: its targets are the tables and an unknown place (`withUnknownPlace`).
 * A qualified column not proven one (attribute notation, `o.id`) alone adds
 * none: it is almost always a column, and a function of that name taking
 * the row would have had to be created first (a write itself).
 */
export function judge(facts: Facts, readOnlyType: boolean, what: string): Classification {
  if (!readOnlyType) return classification('write', facts.tables, facts.destructive, SQL_REASONS['not-read-only-statement'](what));
  const why = facts.writes[0] ?? facts.calls[0];
  if (why !== undefined) {
    const result = classification('write', facts.tables, facts.destructive, why);
    const calls = facts.calls.filter((call) => !(facts.attributes ?? []).includes(call));
    return facts.writes.length === 0 && calls.length > 0 ? withUnknownPlace(result) : result;
  }
  return classification('read', facts.tables, false, SQL_REASONS['read-only-statement'](what));
}

/** A thrown value's message for a reason: its first line, at most 200 characters. */
export function errorMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.slice(0, 200);
}

/**
 * A qualified table name from its parts, joined with `.`; a part that holds
 * a `.` or a `"` is quoted (`"billing.invoices"`, one table, is not
 * `billing.invoices`, a table in a schema).
 */
export function qualifiedName(parts: readonly unknown[]): string {
  return parts
    .filter((p): p is string => typeof p === 'string' && p !== '')
    .map((p) => (p.includes('.') || p.includes('"') ? `"${p.replaceAll('"', '""')}"` : p))
    .join('.');
}
