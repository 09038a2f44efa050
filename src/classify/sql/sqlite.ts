/**
 * SQLite (DESIGN.md §5.5): each statement's tokens (sqlite-lexer.ts) read
 * by `node-sql-parser`'s SQLite grammar, with `libpg-query` as a second
 * opinion for standard SQL that grammar lacks (`RETURNING`, a `WITH` before
 * `DELETE`, `ON CONFLICT ... DO`, `DROP INDEX`). `PRAGMA`,
 * `BEGIN`/`SAVEPOINT`/`RELEASE`, `EXPLAIN` and `CREATE TRIGGER`, which
 * node-sql-parser does not parse, are read from the tokens by their (small)
 * grammars. SQLite's identifiers are case-insensitive: names are folded.
 * Both parsers come from the parser registry (`../parsers.ts`); a statement
 * that needs one that is not loaded is a write.
 */
import type { parseSync } from 'libpg-query';
import { parserFailure, postgresParsing, sqliteParsing } from '../parsers.js';
import sqlFunctions from '../../catalogs/sql-functions.json' with { type: 'json' };
import type { Classification } from '../classification.js';
import { normalizeTargets, worstOf } from '../classification.js';
import { isRecord } from '../../util/own.js';
import { classification, errorMessage, failClosedSql, judge, newFacts, placedStatement, qualifiedName, type Facts } from './facts.js';
import { functionProblem, SQLITE_POLICY } from './function-policy.js';
import { classifyPgStatement } from './postgres.js';
import { SQL_REASONS } from './reasons.js';
import { explainPrefix, isCreateTrigger, isOp, isWord, lexSqlite, splitSqlite, SqliteLexError, type Token } from './sqlite-lexer.js';

/** The pragmas that only report: alone, or given an argument (`table_info(t)`, whose argument is a table). */
const SQLITE_PRAGMAS = {
  readOnly: new Set(sqlFunctions.sqlite.pragmas.readOnly),
  withArgument: new Set(sqlFunctions.sqlite.pragmas.withArgument),
  tableArgument: new Set(sqlFunctions.sqlite.pragmas.tableArgument),
};

/** A SQLite name as a target: SQLite's identifiers are case-insensitive, so folded. */
function sqliteName(...parts: (string | null | undefined)[]): string {
  return qualifiedName(parts).toLowerCase();
}

/** `PRAGMA [schema.]name [= value | (value)]`, judged from the pragma lists; anything else in a PRAGMA is a write. */
function classifyPragma(tokens: readonly Token[]): { result: Classification; parsed: boolean } {
  const parsed = (result: Classification) => ({ result, parsed: true });
  let i = 1;
  let schema: string | undefined;
  if (isOp(tokens[i + 1], '.') && (tokens[i]?.type === 'word' || tokens[i]?.type === 'quoted')) {
    schema = tokens[i]!.name;
    i += 2;
  }
  const nameToken = tokens[i];
  if (nameToken?.type !== 'word') return { result: failClosedSql(SQL_REASONS['pragma-without-name']), parsed: false };
  const name = nameToken.text.toLowerCase();
  i += 1;
  if (i === tokens.length) {
    return parsed(
      SQLITE_PRAGMAS.readOnly.has(name)
        ? classification('read', [], false, SQL_REASONS['pragma-reports'](name))
        : classification('write', [], false, SQL_REASONS['pragma-not-read-only'](name)),
    );
  }
  if (isOp(tokens[i], '=')) return parsed(classification('write', [], false, SQL_REASONS['pragma-sets'](name)));
  const argument = tokens[i + 1];
  const wellFormed =
    isOp(tokens[i], '(') &&
    isOp(tokens[i + 2], ')') &&
    i + 3 === tokens.length &&
    argument !== undefined &&
    ['word', 'quoted', 'string', 'number'].includes(argument.type);
  if (!wellFormed) return { result: failClosedSql(SQL_REASONS['pragma-malformed'](name)), parsed: false };
  if (!SQLITE_PRAGMAS.withArgument.has(name))
    return parsed(classification('write', [], false, SQL_REASONS['pragma-call-not-read-only'](name)));
  const value = argument.type === 'string' ? argument.text.slice(1, -1).replaceAll("''", "'") : argument.name;
  const tables = SQLITE_PRAGMAS.tableArgument.has(name) && value !== undefined ? [sqliteName(schema, value)] : [];
  return parsed(classification('read', tables, false, SQL_REASONS['pragma-call-reports'](name)));
}

/** `BEGIN [DEFERRED|IMMEDIATE|EXCLUSIVE] [TRANSACTION]`, `SAVEPOINT name`, `RELEASE [SAVEPOINT] name`; null for anything else. */
function classifySqliteTransaction(tokens: readonly Token[]): Classification | null {
  const neutral = (): Classification => classification('neutral', [], false, SQL_REASONS['transaction-neutral']);
  const isName = (t: Token | undefined): boolean => t?.type === 'word' || t?.type === 'quoted';
  if (isWord(tokens[0], 'BEGIN')) {
    let i = 1;
    if (isWord(tokens[i], 'DEFERRED', 'IMMEDIATE', 'EXCLUSIVE')) i += 1;
    if (isWord(tokens[i], 'TRANSACTION')) i += 1;
    return i === tokens.length ? neutral() : null;
  }
  if (isWord(tokens[0], 'SAVEPOINT')) return tokens.length === 2 && isName(tokens[1]) ? neutral() : null;
  if (isWord(tokens[0], 'RELEASE')) {
    const i = isWord(tokens[1], 'SAVEPOINT') ? 2 : 1;
    return tokens.length === i + 1 && isName(tokens[i]) ? neutral() : null;
  }
  return null;
}

/** node-sql-parser statement types that are reads. */
const SQLITE_AST_READ_TYPES = new Set(['select']);

/** node-sql-parser statement types other than `select`: each a write wherever it appears in a tree. */
const SQLITE_AST_STATEMENT_TYPES = new Set([
  'insert',
  'replace',
  'update',
  'delete',
  'create',
  'drop',
  'alter',
  'truncate',
  'rename',
  'attach',
  'call',
  'set',
  'use',
  'lock',
  'unlock',
  'transaction',
  'grant',
  'revoke',
  'load_data',
  'show',
  'desc',
  'exec',
  'execute',
  'declare',
  'deallocate',
  'prepare',
  'analyze',
]);

/** Walks every node of a node-sql-parser tree. */
function inspectSqliteAst(root: unknown): Facts {
  const facts = newFacts();
  const visit = (value: unknown, ctes: ReadonlySet<string>): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item, ctes);
      return;
    }
    if (!isRecord(value)) return;
    let scope = ctes;
    if (Array.isArray(value.with)) {
      const names = value.with
        .map((cte) => (isRecord(cte) && isRecord(cte.name) ? cte.name.value : isRecord(cte) ? cte.name : undefined))
        .filter((n): n is string => typeof n === 'string')
        .map((n) => n.toLowerCase());
      scope = new Set([...ctes, ...names]);
    }
    const type = value.type;
    if (type === 'function') {
      const name = value.name;
      const parts =
        isRecord(name) && Array.isArray(name.name) ? name.name.map((p: unknown) => (isRecord(p) ? p.value : undefined)) : [name];
      const problem = parts.every((p): p is string => typeof p === 'string')
        ? functionProblem(parts, SQLITE_POLICY)
        : SQL_REASONS['sqlite-function-call'];
      if (problem !== null) facts.calls.push(problem);
    } else if (type === 'aggr_func') {
      const problem = typeof value.name === 'string' ? functionProblem([value.name], SQLITE_POLICY) : SQL_REASONS['sqlite-aggregate-call'];
      if (problem !== null) facts.calls.push(problem);
    } else if (type === 'select') {
      if (
        value.into !== undefined &&
        value.into !== null &&
        (!isRecord(value.into) || value.into.position != null || value.into.expr != null)
      ) {
        facts.writes.push(SQL_REASONS['sqlite-select-into']);
      }
      if (value.for_update != null || value.locking_read != null) facts.writes.push(SQL_REASONS['sqlite-select-for-update']);
    } else if (typeof type === 'string' && SQLITE_AST_STATEMENT_TYPES.has(type)) {
      facts.writes.push(SQL_REASONS['not-read-only-statement'](type.toUpperCase()));
      if (type === 'drop' || type === 'truncate') facts.destructive = true;
      if ((type === 'delete' || type === 'update') && value.where == null) facts.destructive = true;
      if (
        type === 'alter' &&
        Array.isArray(value.expr) &&
        value.expr.some((e) => isRecord(e) && e.action === 'drop' && e.resource === 'column')
      ) {
        facts.destructive = true;
      }
    }
    if (typeof value.table === 'string' && 'db' in value && type === undefined) {
      const db = typeof value.db === 'string' ? value.db : null;
      if (db !== null || !scope.has(value.table.toLowerCase())) facts.tables.push(sqliteName(db, value.table));
    }
    for (const child of Object.values(value)) visit(child, scope);
  };
  visit(root, new Set());
  return facts;
}

/** One SQLite statement's tokens, judged; `parsed` false when no parser read it (then a write). */
function classifySqliteStatement(tokens: readonly Token[]): { result: Classification; parsed: boolean } {
  const explain = explainPrefix(tokens);
  if (explain > 0) {
    const inner = classifySqliteStatement(tokens.slice(explain));
    if (!inner.parsed) return inner;
    const result: Classification = {
      kind: 'read',
      targets: inner.result.targets,
      destructive: false,
      reason: `sql: ${SQL_REASONS['sqlite-explain']}`,
    };
    return { result, parsed: true };
  }
  if (isWord(tokens[0], 'PRAGMA')) return classifyPragma(tokens);
  const transaction = classifySqliteTransaction(tokens);
  if (transaction !== null) return { result: transaction, parsed: true };
  if (isCreateTrigger(tokens)) {
    return { result: classification('write', [], false, SQL_REASONS['not-read-only-statement']('CREATE TRIGGER')), parsed: true };
  }
  const text = tokens.map((t) => t.text).join(' ');
  const sqliteParser = sqliteParsing();
  if (sqliteParser === null) return { result: failClosedSql(SQL_REASONS['sqlite-parser-missing'](parserFailure('sqlite'))), parsed: false };
  let ast: unknown;
  try {
    ast = sqliteParser.astify(text, { database: 'sqlite' });
  } catch {
    ast = undefined;
  }
  if (ast !== undefined) {
    const nodes = Array.isArray(ast) ? ast : [ast];
    if (nodes.length !== 1 || !isRecord(nodes[0])) return { result: failClosedSql(SQL_REASONS['unreadable-statement']), parsed: false };
    const type = String(nodes[0].type);
    return { result: judge(inspectSqliteAst(nodes[0]), SQLITE_AST_READ_TYPES.has(type), type.toUpperCase()), parsed: true };
  }
  // Standard SQL node-sql-parser's SQLite grammar lacks (RETURNING, WITH before DML, ON CONFLICT DO, DROP INDEX).
  const pg = postgresParsing();
  if (pg === null) return { result: failClosedSql(SQL_REASONS['sqlite-does-not-parse']), parsed: false };
  let tree: ReturnType<typeof parseSync>;
  try {
    tree = pg.parseSync(text);
  } catch (error) {
    return { result: failClosedSql(SQL_REASONS['sqlite-does-not-parse-because'](errorMessage(error))), parsed: false };
  }
  const statements = tree.stmts ?? [];
  if (statements.length !== 1) return { result: failClosedSql(SQL_REASONS['unreadable-statement']), parsed: false };
  const result = classifyPgStatement(statements[0]!.stmt, SQLITE_POLICY);
  return {
    result: { ...result, targets: normalizeTargets(result.targets.map((t) => t.toLowerCase())) },
    parsed: true,
  };
}

/**
 * Classifies a SQLite text, statement by statement, as the worst of them
 * (DESIGN.md §5.5). Fails closed on text the lexer does not read, a statement
 * no parser reads, or no statement.
 */
export function classifySqlite(sql: string): Classification {
  let tokens: Token[];
  try {
    tokens = lexSqlite(sql);
  } catch (error) {
    if (error instanceof SqliteLexError) return failClosedSql(SQL_REASONS['sqlite-not-read'](error.message));
    throw error;
  }
  const statements = splitSqlite(tokens).map((statement) => placedStatement(classifySqliteStatement(statement).result));
  return worstOf(statements, failClosedSql(SQL_REASONS['no-statement']));
}
