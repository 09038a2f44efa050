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
 *   WebAssembly, so what it reads is what the server would run. Loaded once
 *   when this module is imported (top-level `await`).
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
 * What the text cannot show, and is therefore not seen: a view, rule, policy
 * or default that calls a side-effecting function when a table is read; a
 * user-defined cast or type input function; a function shadowing a builtin
 * through `search_path` ahead of `pg_catalog`.
 */
import { loadModule, parseSync, scanSync } from 'libpg-query';
import sqliteGrammar from 'node-sql-parser/build/sqlite.js';
import sqlFunctions from '../../catalogs/sql-functions.json' with { type: 'json' };
import type { Classification } from '../classification.js';
import { failClosed, normalizeTargets, tableTarget, worstOf } from '../classification.js';
import { isRecord } from '../../util/own.js';

/** Whether libpg-query's WebAssembly module loaded; when it did not, every Postgres text fails closed. */
const postgresParserLoaded = await loadModule().then(
  () => true,
  () => false,
);

/** The SQL dialects `classifySql` reads. */
export type SqlDialect = 'postgres' | 'sqlite';

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

// ---------------------------------------------------------------------------
// Function and operator policy (data: catalogs/sql-functions.json)

interface FunctionPolicy {
  dialect: SqlDialect;
  readOnly: ReadonlySet<string>;
  sideEffecting: ReadonlySet<string>;
  /** Read-only operator symbols; null when the tokens were already restricted to the dialect's operators. */
  operators: ReadonlySet<string> | null;
  /** Function names are case-insensitive (SQLite) rather than folded by the parser (Postgres). */
  foldCase: boolean;
}

const POSTGRES_POLICY: FunctionPolicy = {
  dialect: 'postgres',
  readOnly: new Set(sqlFunctions.postgres.readOnlyFunctions),
  sideEffecting: new Set(sqlFunctions.postgres.sideEffectingFunctions),
  operators: new Set(sqlFunctions.postgres.readOnlyOperators),
  foldCase: false,
};

const SQLITE_POLICY: FunctionPolicy = {
  dialect: 'sqlite',
  readOnly: new Set(sqlFunctions.sqlite.readOnlyFunctions),
  sideEffecting: new Set(sqlFunctions.sqlite.sideEffectingFunctions),
  operators: null,
  foldCase: true,
};

const SQLITE_PRAGMAS = {
  readOnly: new Set(sqlFunctions.sqlite.pragmas.readOnly),
  withArgument: new Set(sqlFunctions.sqlite.pragmas.withArgument),
  tableArgument: new Set(sqlFunctions.sqlite.pragmas.tableArgument),
};

/** Why calling the function named by `parts` (as the parser gives them) is not a read, or null when it is. */
function functionProblem(parts: readonly string[], policy: FunctionPolicy): string | null {
  const names = policy.foldCase ? parts.map((p) => p.toLowerCase()) : parts;
  const full = names.join('.');
  const builtin = names.length === 1 || (names.length === 2 && names[0] === 'pg_catalog' && policy.dialect === 'postgres');
  const name = names[names.length - 1] ?? '';
  if (builtin && policy.sideEffecting.has(name)) return `sql: function '${full}' has side effects`;
  if (builtin && policy.readOnly.has(name) && !policy.sideEffecting.has(name)) return null;
  return `sql: function '${full}' is not known to be read-only`;
}

/** Why applying the operator named by `parts` is not a read, or null when it is (keywords such as BETWEEN are grammar). */
function operatorProblem(parts: readonly string[], policy: FunctionPolicy): string | null {
  if (policy.operators === null) return null;
  const symbol = parts[parts.length - 1] ?? '';
  if (/^[A-Za-z_ ]+$/.test(symbol)) return null;
  const builtin = parts.length === 1 || (parts.length === 2 && parts[0] === 'pg_catalog');
  return builtin && policy.operators.has(symbol) ? null : `sql: operator '${parts.join('.')}' is not known to be read-only`;
}

// ---------------------------------------------------------------------------
// Shared helpers

/** What a walk over one statement's tree found. */
interface Facts {
  /** Table names, as the parser resolved them (CTE names excluded). */
  tables: string[];
  /** Why the statement writes (nested data-modifying statements, row locks, SELECT INTO, ...). */
  writes: string[];
  /** Why a function or operator call is not a read. */
  calls: string[];
  /** A destructive part was seen (DROP, TRUNCATE, DELETE/UPDATE without WHERE, DROP COLUMN). */
  destructive: boolean;
}

function newFacts(): Facts {
  return { tables: [], writes: [], calls: [], destructive: false };
}

type Json = Record<string, unknown>;

function classification(kind: Classification['kind'], tables: readonly string[], destructive: boolean, reason: string): Classification {
  return {
    kind,
    targets: normalizeTargets(tables.map(tableTarget)),
    destructive: kind === 'write' && destructive,
    reason,
  };
}

/** The classification of a statement whose tree has been walked: a read when it is of a read-only type and nothing in it writes. */
function judge(facts: Facts, readOnlyType: boolean, what: string): Classification {
  if (!readOnlyType) return classification('write', facts.tables, facts.destructive, `sql: ${what} is not a read-only statement`);
  const why = facts.writes[0] ?? facts.calls[0];
  if (why !== undefined) return classification('write', facts.tables, facts.destructive, why);
  return classification('read', facts.tables, false, `sql: read-only ${what}`);
}

function errorMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.slice(0, 200);
}

// ---------------------------------------------------------------------------
// PostgreSQL (libpg-query's JSON tree: each node is `{ NodeType: fields }`;
// fields typed as a specific struct, such as RangeVar, are unwrapped)

/** `removeType`s of DROP whose objects are relations, reported as table targets. */
const DROPPED_RELATIONS = new Set(['OBJECT_TABLE', 'OBJECT_VIEW', 'OBJECT_MATVIEW', 'OBJECT_FOREIGN_TABLE', 'OBJECT_SEQUENCE']);

/** Transaction control that starts a transaction or marks a savepoint: changes nothing, reads nothing. */
const NEUTRAL_TRANSACTIONS = new Set(['TRANS_STMT_BEGIN', 'TRANS_STMT_START', 'TRANS_STMT_SAVEPOINT', 'TRANS_STMT_RELEASE']);

const DATA_MODIFYING = new Set(['InsertStmt', 'UpdateStmt', 'DeleteStmt', 'MergeStmt']);

function stringValues(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return list
    .map((item) => (isRecord(item) && isRecord(item.String) ? item.String.sval : undefined))
    .filter((s): s is string => typeof s === 'string');
}

/**
 * A qualified table name from its parts, joined with `.`; a part that holds
 * a `.` or a `"` is quoted (`"billing.invoices"`, one table, is not
 * `billing.invoices`, a table in a schema).
 */
function qualifiedName(parts: readonly unknown[]): string {
  return parts
    .filter((p): p is string => typeof p === 'string' && p !== '')
    .map((p) => (p.includes('.') || p.includes('"') ? `"${p.replaceAll('"', '""')}"` : p))
    .join('.');
}

function rangeVarName(fields: Json): string {
  return qualifiedName([fields.catalogname, fields.schemaname, fields.relname]);
}

/** CTE names a statement's WITH clause defines. */
function cteNames(withClause: unknown): string[] {
  if (!isRecord(withClause) || !Array.isArray(withClause.ctes)) return [];
  return withClause.ctes
    .map((cte) => (isRecord(cte) && isRecord(cte.CommonTableExpr) ? cte.CommonTableExpr.ctename : undefined))
    .filter((name): name is string => typeof name === 'string');
}

/** Notes what a node of type `type` (its `fields`) contributes. */
function notePgNode(type: string, fields: Json, facts: Facts, policy: FunctionPolicy): void {
  if (type === 'FuncCall') {
    const problem = functionProblem(stringValues(fields.funcname), policy);
    if (problem !== null) facts.calls.push(problem);
  } else if (type === 'A_Expr') {
    const problem = operatorProblem(stringValues(fields.name), policy);
    if (problem !== null) facts.calls.push(problem);
  } else if (DATA_MODIFYING.has(type)) {
    facts.writes.push(`sql: ${type} modifies data`);
    if ((type === 'DeleteStmt' || type === 'UpdateStmt') && fields.whereClause === undefined) facts.destructive = true;
  } else if (type === 'SelectStmt') {
    if (fields.lockingClause !== undefined) facts.writes.push('sql: SELECT ... FOR UPDATE/SHARE locks rows');
    if (fields.intoClause !== undefined) facts.writes.push('sql: SELECT ... INTO creates a table');
  } else if (type === 'TruncateStmt' || type.startsWith('Drop')) {
    facts.destructive = true;
    if (type === 'DropStmt' && DROPPED_RELATIONS.has(String(fields.removeType)) && Array.isArray(fields.objects)) {
      for (const object of fields.objects) {
        const parts = isRecord(object) && isRecord(object.List) ? stringValues(object.List.items) : [];
        if (parts.length > 0) facts.tables.push(qualifiedName(parts));
      }
    }
  } else if (type === 'AlterTableCmd' && fields.subtype === 'AT_DropColumn') {
    facts.destructive = true;
  }
}

/** Walks every node under `root` (subqueries, CTEs, LATERAL, function arguments: nothing is skipped). */
function inspectPg(root: unknown, policy: FunctionPolicy): Facts {
  const facts = newFacts();
  const visit = (value: unknown, ctes: ReadonlySet<string>): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item, ctes);
      return;
    }
    if (!isRecord(value)) return;
    let scope = ctes;
    const defined = cteNames(value.withClause);
    if (defined.length > 0) scope = new Set([...ctes, ...defined]);
    if (typeof value.relname === 'string') {
      const qualified = value.schemaname !== undefined || value.catalogname !== undefined;
      if (qualified || !scope.has(value.relname)) facts.tables.push(rangeVarName(value));
    }
    for (const [key, child] of Object.entries(value)) {
      if (/^[A-Z]/.test(key) && isRecord(child)) notePgNode(key, child, facts, policy);
      // The table an INSERT, UPDATE, DELETE or MERGE changes is a table, never a CTE of the same name.
      if (DATA_MODIFYING.has(key) && isRecord(child) && isRecord(child.relation)) {
        const relation = isRecord(child.relation.RangeVar) ? child.relation.RangeVar : child.relation;
        if (typeof relation.relname === 'string') facts.tables.push(rangeVarName(relation));
      }
      visit(child, scope);
    }
  };
  visit(root, new Set());
  return facts;
}

/** EXPLAIN runs its statement when ANALYZE is given and not explicitly false. */
function explainAnalyzes(options: unknown): boolean {
  if (!Array.isArray(options)) return false;
  return options.some((option) => {
    const def = isRecord(option) && isRecord(option.DefElem) ? option.DefElem : undefined;
    if (def === undefined || def.defname !== 'analyze') return false;
    const arg = def.arg;
    if (arg === undefined) return true;
    if (isRecord(arg) && isRecord(arg.String)) return !['false', 'off', 'no', '0'].includes(String(arg.String.sval).toLowerCase());
    if (isRecord(arg) && isRecord(arg.Integer)) return (arg.Integer.ival ?? 0) !== 0;
    if (isRecord(arg) && isRecord(arg.Boolean)) return arg.Boolean.boolval === true;
    return true;
  });
}

/** Classifies one statement node (`{ NodeType: fields }`) of libpg-query's tree. */
function classifyPgStatement(node: unknown, policy: FunctionPolicy): Classification {
  const entry = isRecord(node) ? Object.entries(node)[0] : undefined;
  if (entry === undefined || !isRecord(entry[1])) return failClosed('sql: unreadable statement');
  const [type, fields] = entry;
  switch (type) {
    case 'ExplainStmt': {
      if (explainAnalyzes(fields.options)) return classifyPgStatement(fields.query, policy);
      // Planned, not run; the planner may still evaluate functions it takes for immutable.
      const facts = inspectPg(fields.query, policy);
      const why = facts.calls[0];
      return why !== undefined
        ? classification('write', facts.tables, false, why)
        : classification('read', facts.tables, false, 'sql: EXPLAIN without ANALYZE does not run its statement');
    }
    case 'TransactionStmt':
      return NEUTRAL_TRANSACTIONS.has(String(fields.kind))
        ? classification('neutral', [], false, 'sql: starting a transaction or setting or releasing a savepoint changes no data')
        : classification('write', [], false, 'sql: ending a transaction makes its writes durable or undoes them');
    case 'VariableShowStmt':
      return classification('read', [], false, 'sql: read-only SHOW');
    case 'SelectStmt':
      return judge(inspectPg(node, policy), true, 'SELECT');
    case 'CopyStmt': {
      const toClient = fields.is_from !== true && fields.is_program !== true && fields.filename === undefined;
      const facts = inspectPg(node, policy);
      if (!toClient) {
        return classification(
          'write',
          facts.tables,
          facts.destructive,
          'sql: COPY FROM, or TO a file or program, is not a read-only statement',
        );
      }
      return judge(facts, true, 'COPY TO STDOUT');
    }
    default:
      return judge(inspectPg(node, policy), false, type);
  }
}

/**
 * A plain string literal holding a backslash reads differently when the
 * server runs with `standard_conforming_strings = off` (the backslash then
 * escapes the quote), so one text could be a harmless SELECT to the parser
 * and a SELECT followed by a DROP to such a server.
 */
function hasAmbiguousBackslash(sql: string): boolean {
  if (!sql.includes('\\')) return false;
  return scanSync(sql).tokens.some((token) => token.text.startsWith("'") && token.text.includes('\\'));
}

function classifyPostgres(sql: string): Classification {
  if (!postgresParserLoaded) return failClosed('sql: the PostgreSQL parser did not load');
  let tree: ReturnType<typeof parseSync>;
  try {
    tree = parseSync(sql);
  } catch (error) {
    return failClosed(`sql: does not parse as PostgreSQL: ${errorMessage(error)}`);
  }
  if (hasAmbiguousBackslash(sql)) {
    return failClosed('sql: a backslash in a plain string literal depends on standard_conforming_strings');
  }
  const statements = (tree.stmts ?? []).map((raw) => classifyPgStatement(raw.stmt, POSTGRES_POLICY));
  return worstOf(statements, failClosed('sql: no statement'));
}

// ---------------------------------------------------------------------------
// SQLite: tokens by SQLite's rules (a subset; anything else fails closed)

interface Token {
  type: 'word' | 'quoted' | 'string' | 'number' | 'blob' | 'param' | 'op';
  /** The token as handed to a parser: quoted identifiers as "...", parameters as NULL. */
  text: string;
  /** For words and quoted identifiers: the identifier itself (unquoted). */
  name?: string;
}

/** Operators SQLite's tokenizer knows, longest first. */
const SQLITE_OPERATORS = [
  '->>',
  '->',
  '==',
  '<=',
  '>=',
  '<>',
  '!=',
  '<<',
  '>>',
  '||',
  '(',
  ')',
  ';',
  ',',
  '.',
  '+',
  '-',
  '*',
  '/',
  '%',
  '=',
  '<',
  '>',
  '&',
  '|',
  '~',
];

class SqliteLexError extends Error {}

/** A quoted body up to the closing `quote`, a doubled quote standing for one; returns [body, index after]. */
function readQuoted(sql: string, start: number, quote: string, doubled: boolean): [string, number] {
  let body = '';
  let i = start + 1;
  for (;;) {
    const end = sql.indexOf(quote, i);
    if (end < 0) throw new SqliteLexError('an unterminated quote');
    body += sql.slice(i, end);
    if (doubled && sql[end + 1] === quote) {
      body += quote;
      i = end + 2;
    } else {
      return [body, end + 1];
    }
  }
}

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

const WORD_START = /[A-Za-z_]/;
const WORD_CHAR = /[A-Za-z0-9_]/;
const NUMBER = /0[xX][0-9A-Fa-f]+|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?/y;
const NUMBERED_PARAMETER = /\?[0-9]*/y;
const NAMED_PARAMETER = /[:@][A-Za-z0-9_]+/y;

/**
 * SQLite's tokens of `sql`: whitespace and comments dropped (a block comment
 * does not nest and may run to the end, as in SQLite). Refuses (throws
 * SqliteLexError) a backslash anywhere, `#`, `$`, non-ASCII outside quotes,
 * and any character SQLite's tokenizer would not accept.
 */
function lexSqlite(sql: string): Token[] {
  if (sql.includes('\\')) throw new SqliteLexError('a backslash (read as an escape by the parser, not by SQLite)');
  const tokens: Token[] = [];
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    const rest = sql.slice(i, i + 3);
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f') {
      i += 1;
    } else if (rest.startsWith('--')) {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? sql.length : end + 1;
    } else if (rest.startsWith('/*')) {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 2;
    } else if (c === "'") {
      const [, next] = readQuoted(sql, i, "'", true);
      tokens.push({ type: 'string', text: sql.slice(i, next) });
      i = next;
    } else if ((c === 'x' || c === 'X') && sql[i + 1] === "'") {
      const [body, next] = readQuoted(sql, i + 1, "'", false);
      if (!/^(?:[0-9A-Fa-f]{2})*$/.test(body)) throw new SqliteLexError('a malformed blob literal');
      tokens.push({ type: 'blob', text: sql.slice(i, next) });
      i = next;
    } else if (c === '"' || c === '`' || c === '[') {
      const [body, next] = c === '[' ? readQuoted(sql, i, ']', false) : readQuoted(sql, i, c, true);
      tokens.push({ type: 'quoted', text: quoteIdentifier(body), name: body });
      i = next;
    } else if (WORD_START.test(c)) {
      let end = i + 1;
      while (end < sql.length && WORD_CHAR.test(sql[end]!)) end += 1;
      const word = sql.slice(i, end);
      tokens.push({ type: 'word', text: word, name: word });
      i = end;
    } else if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(sql[i + 1] ?? ''))) {
      NUMBER.lastIndex = i;
      const match = NUMBER.exec(sql)!;
      const end = i + match[0].length;
      if (end < sql.length && WORD_CHAR.test(sql[end]!)) throw new SqliteLexError('a malformed number');
      tokens.push({ type: 'number', text: match[0] });
      i = end;
    } else if (c === '?' || c === ':' || c === '@') {
      const pattern = c === '?' ? NUMBERED_PARAMETER : NAMED_PARAMETER;
      pattern.lastIndex = i;
      const match = pattern.exec(sql);
      if (match === null) throw new SqliteLexError(`a malformed parameter at '${c}'`);
      tokens.push({ type: 'param', text: 'NULL' });
      i += match[0].length;
    } else {
      const op = SQLITE_OPERATORS.find((o) => sql.startsWith(o, i));
      if (op === undefined) throw new SqliteLexError(`the character ${JSON.stringify(c)}, which is not handled`);
      tokens.push({ type: 'op', text: op });
      i += op.length;
    }
  }
  return tokens;
}

function isWord(token: Token | undefined, ...words: string[]): boolean {
  return token?.type === 'word' && words.includes(token.text.toUpperCase());
}

function isOp(token: Token | undefined, op: string): boolean {
  return token?.type === 'op' && token.text === op;
}

/** Leading `EXPLAIN [QUERY PLAN]`: how many tokens it takes (0 when absent). */
function explainPrefix(tokens: readonly Token[]): number {
  if (!isWord(tokens[0], 'EXPLAIN')) return 0;
  return isWord(tokens[1], 'QUERY') && isWord(tokens[2], 'PLAN') ? 3 : 1;
}

function isCreateTrigger(tokens: readonly Token[]): boolean {
  const start = explainPrefix(tokens);
  if (!isWord(tokens[start], 'CREATE')) return false;
  const next = isWord(tokens[start + 1], 'TEMP', 'TEMPORARY') ? start + 2 : start + 1;
  return isWord(tokens[next], 'TRIGGER');
}

/**
 * Statements at `;`, as SQLite's `sqlite3_complete` splits them: inside
 * `CREATE TRIGGER` only the `;` after `; END` ends the statement.
 */
function splitSqlite(tokens: readonly Token[]): Token[][] {
  const statements: Token[][] = [];
  let current: Token[] = [];
  for (const token of tokens) {
    if (isOp(token, ';')) {
      const openTrigger =
        isCreateTrigger(current) && !(isWord(current[current.length - 1], 'END') && isOp(current[current.length - 2], ';'));
      if (!openTrigger) {
        if (current.length > 0) statements.push(current);
        current = [];
        continue;
      }
    }
    current.push(token);
  }
  if (current.length > 0) statements.push(current);
  return statements;
}

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
  if (nameToken?.type !== 'word') return { result: failClosed('sql: a PRAGMA without a name'), parsed: false };
  const name = nameToken.text.toLowerCase();
  i += 1;
  if (i === tokens.length) {
    return parsed(
      SQLITE_PRAGMAS.readOnly.has(name)
        ? classification('read', [], false, `sql: PRAGMA ${name} only reports`)
        : classification('write', [], false, `sql: PRAGMA ${name} is not known to be read-only`),
    );
  }
  if (isOp(tokens[i], '=')) return parsed(classification('write', [], false, `sql: PRAGMA ${name} = ... sets a value`));
  const argument = tokens[i + 1];
  const wellFormed =
    isOp(tokens[i], '(') &&
    isOp(tokens[i + 2], ')') &&
    i + 3 === tokens.length &&
    argument !== undefined &&
    ['word', 'quoted', 'string', 'number'].includes(argument.type);
  if (!wellFormed) return { result: failClosed(`sql: PRAGMA ${name} is not read as a PRAGMA`), parsed: false };
  if (!SQLITE_PRAGMAS.withArgument.has(name))
    return parsed(classification('write', [], false, `sql: PRAGMA ${name}(...) is not known to be read-only`));
  const value = argument.type === 'string' ? argument.text.slice(1, -1).replaceAll("''", "'") : argument.name;
  const tables = SQLITE_PRAGMAS.tableArgument.has(name) && value !== undefined ? [sqliteName(schema, value)] : [];
  return parsed(classification('read', tables, false, `sql: PRAGMA ${name}(...) only reports`));
}

/** `BEGIN [DEFERRED|IMMEDIATE|EXCLUSIVE] [TRANSACTION]`, `SAVEPOINT name`, `RELEASE [SAVEPOINT] name`; null for anything else. */
function classifySqliteTransaction(tokens: readonly Token[]): Classification | null {
  const neutral = (): Classification =>
    classification('neutral', [], false, 'sql: starting a transaction or setting or releasing a savepoint changes no data');
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

const SqliteParser = sqliteGrammar.Parser;
const sqliteParser = new SqliteParser();

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
        : 'sql: a function call that is not read';
      if (problem !== null) facts.calls.push(problem);
    } else if (type === 'aggr_func') {
      const problem =
        typeof value.name === 'string' ? functionProblem([value.name], SQLITE_POLICY) : 'sql: an aggregate call that is not read';
      if (problem !== null) facts.calls.push(problem);
    } else if (type === 'select') {
      if (
        value.into !== undefined &&
        value.into !== null &&
        (!isRecord(value.into) || value.into.position != null || value.into.expr != null)
      ) {
        facts.writes.push('sql: SELECT ... INTO writes');
      }
      if (value.for_update != null || value.locking_read != null) facts.writes.push('sql: SELECT ... FOR UPDATE locks rows');
    } else if (typeof type === 'string' && SQLITE_AST_STATEMENT_TYPES.has(type)) {
      facts.writes.push(`sql: ${type.toUpperCase()} is not a read-only statement`);
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
      reason: 'sql: EXPLAIN does not run its statement',
    };
    return { result, parsed: true };
  }
  if (isWord(tokens[0], 'PRAGMA')) return classifyPragma(tokens);
  const transaction = classifySqliteTransaction(tokens);
  if (transaction !== null) return { result: transaction, parsed: true };
  if (isCreateTrigger(tokens)) {
    return { result: classification('write', [], false, 'sql: CREATE TRIGGER is not a read-only statement'), parsed: true };
  }
  const text = tokens.map((t) => t.text).join(' ');
  let ast: unknown;
  try {
    ast = sqliteParser.astify(text, { database: 'sqlite' });
  } catch {
    ast = undefined;
  }
  if (ast !== undefined) {
    const nodes = Array.isArray(ast) ? ast : [ast];
    if (nodes.length !== 1 || !isRecord(nodes[0])) return { result: failClosed('sql: unreadable statement'), parsed: false };
    const type = String(nodes[0].type);
    return { result: judge(inspectSqliteAst(nodes[0]), SQLITE_AST_READ_TYPES.has(type), type.toUpperCase()), parsed: true };
  }
  // Standard SQL node-sql-parser's SQLite grammar lacks (RETURNING, WITH before DML, ON CONFLICT DO, DROP INDEX).
  if (!postgresParserLoaded) return { result: failClosed('sql: does not parse as SQLite'), parsed: false };
  let tree: ReturnType<typeof parseSync>;
  try {
    tree = parseSync(text);
  } catch (error) {
    return { result: failClosed(`sql: does not parse as SQLite: ${errorMessage(error)}`), parsed: false };
  }
  const statements = tree.stmts ?? [];
  if (statements.length !== 1) return { result: failClosed('sql: unreadable statement'), parsed: false };
  const result = classifyPgStatement(statements[0]!.stmt, SQLITE_POLICY);
  return {
    result: { ...result, targets: normalizeTargets(result.targets.map((t) => t.toLowerCase())) },
    parsed: true,
  };
}

function classifySqlite(sql: string): Classification {
  let tokens: Token[];
  try {
    tokens = lexSqlite(sql);
  } catch (error) {
    if (error instanceof SqliteLexError) return failClosed(`sql: not read as SQLite: ${error.message}`);
    throw error;
  }
  const statements = splitSqlite(tokens).map((statement) => classifySqliteStatement(statement).result);
  return worstOf(statements, failClosed('sql: no statement'));
}

// ---------------------------------------------------------------------------
// Memo and entry point

const memo = new Map<string, Readonly<Classification>>();
let memoHits = 0;
let memoMisses = 0;

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

function classifyUncached(sql: string, dialect: SqlDialect): Classification {
  if (utf8Length(sql) > MAX_SQL_BYTES) {
    return failClosed(`sql: longer than ${MAX_SQL_BYTES} bytes`);
  }
  if (sql.includes('\0')) return failClosed('sql: contains a NUL character');
  return dialect === 'sqlite' ? classifySqlite(sql) : classifyPostgres(sql);
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
 * Fails closed (`failClosed`: a write, no targets, not destructive) on: a
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
    if (typeof sql !== 'string') return failClosed('sql: not a string');
    const dialect = options?.dialect ?? 'postgres';
    if (dialect !== 'postgres' && dialect !== 'sqlite') return failClosed(`sql: unknown dialect ${JSON.stringify(String(dialect))}`);
    if (sql.length > SQL_MEMO_MAX_TEXT) return classifyUncached(sql, dialect);
    const key = `${dialect}\0${sql}`;
    const cached = memo.get(key);
    if (cached !== undefined) {
      memoHits += 1;
      memo.delete(key);
      memo.set(key, cached);
      return copy(cached);
    }
    memoMisses += 1;
    const result = classifyUncached(sql, dialect);
    memo.set(key, Object.freeze(copy(result)));
    if (memo.size > SQL_MEMO_CAPACITY) memo.delete(memo.keys().next().value!);
    return result;
  } catch (error) {
    return failClosed(`sql: could not be judged: ${errorMessage(error)}`);
  }
}

/** The memo's counters since the last `clearSqlMemo`: lookups answered from it, lookups classified, entries kept. */
export function sqlMemoStats(): { hits: number; misses: number; size: number } {
  return { hits: memoHits, misses: memoMisses, size: memo.size };
}

/** Empties the memo and zeroes its counters, for tests and measurements (classification is pure, so the memo never goes stale). */
export function clearSqlMemo(): void {
  memo.clear();
  memoHits = 0;
  memoMisses = 0;
}
