/**
 * Which functions and operators leave a statement a read (DESIGN.md §5.5),
 * per dialect, from the data file `catalogs/sql-functions.json`: a function
 * is read-only only when it is on its dialect's read-only list, so an
 * unknown function, user-defined ones included, makes the statement a write.
 */
import sqlFunctions from '../../catalogs/sql-functions.json' with { type: 'json' };
import { SQL_REASONS } from './reasons.js';

/** The SQL dialects `classifySql` reads. */
export type SqlDialect = 'postgres' | 'sqlite';

/** A dialect's read-only and side-effecting functions and read-only operators, and how it compares names. */
export interface FunctionPolicy {
  dialect: SqlDialect;
  readOnly: ReadonlySet<string>;
  sideEffecting: ReadonlySet<string>;
  /** Read-only operator symbols; null when the tokens were already restricted to the dialect's operators. */
  operators: ReadonlySet<string> | null;
  /** Function names are case-insensitive (SQLite) rather than folded by the parser (Postgres). */
  foldCase: boolean;
}

/** PostgreSQL's policy: names as the parser folds them, operators checked. */
export const POSTGRES_POLICY: FunctionPolicy = {
  dialect: 'postgres',
  readOnly: new Set(sqlFunctions.postgres.readOnlyFunctions),
  sideEffecting: new Set(sqlFunctions.postgres.sideEffectingFunctions),
  operators: new Set(sqlFunctions.postgres.readOnlyOperators),
  foldCase: false,
};

/** SQLite's policy: names case-insensitive; its lexer already admits only SQLite's operators. */
export const SQLITE_POLICY: FunctionPolicy = {
  dialect: 'sqlite',
  readOnly: new Set(sqlFunctions.sqlite.readOnlyFunctions),
  sideEffecting: new Set(sqlFunctions.sqlite.sideEffectingFunctions),
  operators: null,
  foldCase: true,
};

/** Why calling the function named by `parts` (as the parser gives them) is not a read (a `SQL_REASONS` string), or null when it is. */
export function functionProblem(parts: readonly string[], policy: FunctionPolicy): string | null {
  const names = policy.foldCase ? parts.map((p) => p.toLowerCase()) : parts;
  const full = names.join('.');
  const builtin = names.length === 1 || (names.length === 2 && names[0] === 'pg_catalog' && policy.dialect === 'postgres');
  const name = names[names.length - 1] ?? '';
  if (builtin && policy.sideEffecting.has(name)) return SQL_REASONS['function-side-effects'](full);
  if (builtin && policy.readOnly.has(name) && !policy.sideEffecting.has(name)) return null;
  return SQL_REASONS['function-not-read-only'](full);
}

/** Why applying the operator named by `parts` is not a read, or null when it is (keywords such as BETWEEN are grammar). */
export function operatorProblem(parts: readonly string[], policy: FunctionPolicy): string | null {
  if (policy.operators === null) return null;
  const symbol = parts[parts.length - 1] ?? '';
  if (/^[A-Za-z_ ]+$/.test(symbol)) return null;
  const builtin = parts.length === 1 || (parts.length === 2 && parts[0] === 'pg_catalog');
  return builtin && policy.operators.has(symbol) ? null : SQL_REASONS['operator-not-read-only'](parts.join('.'));
}
