/**
 * PostgreSQL (DESIGN.md §5.5): `libpg-query`, the server's own parser
 * compiled to WebAssembly, so what it reads is what the server would run;
 * loaded once when this module is imported (top-level `await`). Its JSON
 * tree (each node `{ NodeType: fields }`; fields typed as a specific struct,
 * such as RangeVar, are unwrapped) is walked whole for tables, writes and
 * calls. SQLite borrows this walk for standard SQL its own parser lacks.
 * The parser comes from the parser registry (`../parsers.ts`: loaded by the
 * package's entry points, or by the hook for the call in hand); when it is
 * not loaded, or failed to load, every text is a write.
 */
import type { parseSync } from 'libpg-query';
import { parserFailure, postgresParsing, type PostgresParsing } from '../parsers.js';
import type { Classification } from '../classification.js';
import { worstOf } from '../classification.js';
import { isRecord } from '../../util/own.js';
import {
  classification,
  errorMessage,
  failClosedSql,
  judge,
  newFacts,
  placedStatement,
  qualifiedName,
  withUnknownPlace,
  type Facts,
  type Json,
} from './facts.js';
import { functionProblem, operatorProblem, POSTGRES_POLICY, type FunctionPolicy } from './function-policy.js';
import { attributeProblem, pgNodeProblems, provenColumns, stringValues } from './postgres-nodes.js';
import { SQL_REASONS } from './reasons.js';

/** `removeType`s of DROP whose objects are relations, reported as table targets. */
const DROPPED_RELATIONS = new Set(['OBJECT_TABLE', 'OBJECT_VIEW', 'OBJECT_MATVIEW', 'OBJECT_FOREIGN_TABLE', 'OBJECT_SEQUENCE']);

/** Transaction control that starts a transaction or marks a savepoint: changes nothing, reads nothing. */
const NEUTRAL_TRANSACTIONS = new Set(['TRANS_STMT_BEGIN', 'TRANS_STMT_START', 'TRANS_STMT_SAVEPOINT', 'TRANS_STMT_RELEASE']);

/** Statement types that change rows. */
const DATA_MODIFYING = new Set(['InsertStmt', 'UpdateStmt', 'DeleteStmt', 'MergeStmt']);

/** A RangeVar's table name, qualified as written. */
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

/** What a walk over one statement judges by: the dialect's policy, and the columns the statement proves (postgres-nodes.ts). */
interface PgWalk {
  policy: FunctionPolicy;
  proven: ReadonlyMap<string, Set<string>>;
}

/** Notes what a node of type `type` (its `fields`) contributes. */
function notePgNode(type: string, fields: Json, facts: Facts, walk: PgWalk): void {
  const policy = walk.policy;
  facts.calls.push(...pgNodeProblems(type, fields, policy));
  if (type === 'ColumnRef' && policy.dialect === 'postgres') {
    const problem = attributeProblem(fields.fields, walk.proven, policy);
    if (problem !== null) {
      facts.calls.push(problem);
      (facts.attributes ??= []).push(problem);
    }
  } else if (type === 'FuncCall') {
    const problem = functionProblem(stringValues(fields.funcname), policy);
    if (problem !== null) facts.calls.push(problem);
  } else if (type === 'A_Expr') {
    const problem = operatorProblem(stringValues(fields.name), policy);
    if (problem !== null) facts.calls.push(problem);
  } else if (DATA_MODIFYING.has(type)) {
    facts.writes.push(SQL_REASONS['modifies-data'](type));
    if ((type === 'DeleteStmt' || type === 'UpdateStmt') && fields.whereClause === undefined) facts.destructive = true;
  } else if (type === 'SelectStmt') {
    if (fields.lockingClause !== undefined) facts.writes.push(SQL_REASONS['select-locks-rows']);
    if (fields.intoClause !== undefined) facts.writes.push(SQL_REASONS['select-into-creates-table']);
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
  const walk: PgWalk = { policy, proven: policy.dialect === 'postgres' ? provenColumns(root) : new Map() };
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
      if (/^[A-Z]/.test(key) && isRecord(child)) notePgNode(key, child, facts, walk);
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
export function classifyPgStatement(node: unknown, policy: FunctionPolicy): Classification {
  const entry = isRecord(node) ? Object.entries(node)[0] : undefined;
  if (entry === undefined || !isRecord(entry[1])) return failClosedSql(SQL_REASONS['unreadable-statement']);
  const [type, fields] = entry;
  switch (type) {
    case 'ExplainStmt': {
      if (explainAnalyzes(fields.options)) return classifyPgStatement(fields.query, policy);
      // Planned, not run; the planner may still evaluate functions it takes for immutable.
      const facts = inspectPg(fields.query, policy);
      const why = facts.calls[0];
      return why !== undefined
        ? withUnknownPlace(classification('write', facts.tables, false, why))
        : classification('read', facts.tables, false, SQL_REASONS['explain-without-analyze']);
    }
    case 'TransactionStmt':
      return NEUTRAL_TRANSACTIONS.has(String(fields.kind))
        ? classification('neutral', [], false, SQL_REASONS['transaction-neutral'])
        : classification('write', [], false, SQL_REASONS['transaction-end']);
    case 'VariableShowStmt':
      return classification('read', [], false, SQL_REASONS['read-only-statement']('SHOW'));
    case 'SelectStmt':
      return judge(inspectPg(node, policy), true, 'SELECT');
    case 'CopyStmt': {
      const toClient = fields.is_from !== true && fields.is_program !== true && fields.filename === undefined;
      const facts = inspectPg(node, policy);
      if (!toClient) {
        // Only COPY t FROM a server file changes just t; a program, or a file written, is a place not known.
        const result = classification('write', facts.tables, facts.destructive, SQL_REASONS['copy-not-to-client']);
        return fields.is_from === true && fields.is_program !== true ? result : withUnknownPlace(result);
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
function hasAmbiguousBackslash(sql: string, scanSync: PostgresParsing['scanSync']): boolean {
  if (!sql.includes('\\')) return false;
  return scanSync(sql).tokens.some((token) => token.text.startsWith("'") && token.text.includes('\\'));
}

/**
 * Classifies a PostgreSQL text, statement by statement, as the worst of them
 * (DESIGN.md §5.5). Fails closed when the parser is not loaded (or did not
 * load), the text does not parse, a plain string literal holds a backslash,
 * or there is no statement.
 */
export function classifyPostgres(sql: string): Classification {
  const pg = postgresParsing();
  if (pg === null) return failClosedSql(SQL_REASONS['postgres-not-loaded'](parserFailure('postgres')));
  let tree: ReturnType<typeof parseSync>;
  try {
    tree = pg.parseSync(sql);
  } catch (error) {
    return failClosedSql(SQL_REASONS['postgres-does-not-parse'](errorMessage(error)));
  }
  if (hasAmbiguousBackslash(sql, pg.scanSync)) {
    return failClosedSql(SQL_REASONS['ambiguous-backslash']);
  }
  const statements = (tree.stmts ?? []).map((raw) => placedStatement(classifyPgStatement(raw.stmt, POSTGRES_POLICY)));
  return worstOf(statements, failClosedSql(SQL_REASONS['no-statement']));
}
