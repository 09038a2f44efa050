/**
 * What PostgreSQL may run besides the functions a statement names
 * (DESIGN.md §5.5): the node kinds of libpg-query's tree the walk knows,
 * the types a cast may name, the operators of `ANY`/`ALL` subqueries and of
 * `ORDER BY ... USING`, `TABLESAMPLE` methods, and attribute notation, where
 * `t.fn` is the call `fn(t)` when `t` has no column `fn`.
 *
 * Attribute notation: the text cannot tell `o.id` (a column) from `o.fn`
 * (PostgreSQL tries a column first, then a function of the row type; on a
 * real server `SELECT t.fn FROM orders t` ran `fn(orders)`). A qualified
 * column reference `q.name` is therefore a read only when the statement
 * itself proves `name` a column of `q` (every FROM item aliased `q` lists it:
 * a column alias list, `FROM orders o(id, total)`, or a subquery whose output
 * names it, `FROM (SELECT id FROM orders) o`), or when `name` is a read-only
 * builtin function (then the call is a read too). Anything else, the common
 * `SELECT o.id FROM orders o` included, is a write: the schema is not known,
 * and a read wrongly admitted is the failure this gate exists to prevent.
 * Writing the column unqualified (`SELECT id FROM orders o`) keeps a read.
 */
import sqlFunctions from '../../catalogs/sql-functions.json' with { type: 'json' };
import { isRecord } from '../../util/own.js';
import type { Json } from './facts.js';
import { functionProblem, operatorProblem, type FunctionPolicy } from './function-policy.js';
import { SQL_REASONS } from './reasons.js';

/** Types whose input functions and casts are builtins (`catalogs/sql-functions.json`). */
const BUILTIN_TYPES: ReadonlySet<string> = new Set(sqlFunctions.postgres.builtinTypes);

/** `TABLESAMPLE` methods PostgreSQL ships; any other is a function someone installed. */
const BUILTIN_SAMPLE_METHODS = new Set(['bernoulli', 'system']);

/**
 * Node kinds the walk knows (statements, clauses and expressions of reads,
 * and the data-modifying statements an `EXPLAIN` plans). Any other kind in a
 * tree makes the statement a write: a new kind may call something not judged.
 */
export const KNOWN_PG_NODES: ReadonlySet<string> = new Set([
  // values and lists
  'A_Const',
  'A_Star',
  'BitString',
  'Boolean',
  'Float',
  'Integer',
  'List',
  'Null',
  'String',
  'ParamRef',
  // statements
  'RawStmt',
  'SelectStmt',
  'ExplainStmt',
  'VariableShowStmt',
  'CopyStmt',
  'TransactionStmt',
  'InsertStmt',
  'UpdateStmt',
  'DeleteStmt',
  'MergeStmt',
  'OnConflictClause',
  'InferClause',
  'IndexElem',
  'MergeWhenClause',
  'MultiAssignRef',
  'CurrentOfExpr',
  'ReturningClause',
  'ReturningOption',
  // clauses
  'ResTarget',
  'RangeVar',
  'Alias',
  'JoinExpr',
  'RangeSubselect',
  'RangeFunction',
  'RangeTableSample',
  'RangeTableFunc',
  'RangeTableFuncCol',
  'ColumnDef',
  'TypeName',
  'WithClause',
  'CommonTableExpr',
  'CTESearchClause',
  'CTECycleClause',
  'SortBy',
  'WindowDef',
  'GroupingSet',
  'LockingClause',
  'IntoClause',
  'DefElem',
  // expressions
  'ColumnRef',
  'FuncCall',
  'A_Expr',
  'BoolExpr',
  'SubLink',
  'NullTest',
  'BooleanTest',
  'CaseExpr',
  'CaseWhen',
  'CoalesceExpr',
  'MinMaxExpr',
  'SQLValueFunction',
  'TypeCast',
  'CollateClause',
  'A_ArrayExpr',
  'A_Indices',
  'A_Indirection',
  'RowExpr',
  'GroupingFunc',
  'XmlExpr',
  'XmlSerialize',
  'SetToDefault',
  // SQL/JSON (builtins)
  'JsonFuncExpr',
  'JsonTable',
  'JsonTableColumn',
  'JsonTablePathSpec',
  'JsonValueExpr',
  'JsonOutput',
  'JsonReturning',
  'JsonFormat',
  'JsonArgument',
  'JsonObjectConstructor',
  'JsonArrayConstructor',
  'JsonArrayQueryConstructor',
  'JsonAggConstructor',
  'JsonObjectAgg',
  'JsonArrayAgg',
  'JsonKeyValue',
  'JsonParseExpr',
  'JsonScalarExpr',
  'JsonSerializeExpr',
  'JsonIsPredicate',
  'JsonBehavior',
]);

/** The `sval`s of a list of `{ String: { sval } }` nodes (a qualified name's parts); other items are left out. */
export function stringValues(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return list
    .map((item) => (isRecord(item) && isRecord(item.String) ? item.String.sval : undefined))
    .filter((s): s is string => typeof s === 'string');
}

/** Why naming the type of a `typeName` field (`names`, as the parser gives them) is not a read, or null for a builtin type. */
export function typeProblem(typeName: Json): string | null {
  const names = stringValues(typeName.names);
  const builtin = names.length === 1 || (names.length === 2 && names[0] === 'pg_catalog');
  const name = names[names.length - 1] ?? '';
  return builtin && BUILTIN_TYPES.has(name) ? null : SQL_REASONS['type-not-builtin'](names.join('.'));
}

/** Output column names a subquery proves: `AS name`, or a column reference's last name (`*` proves none). */
function outputNames(query: unknown): string[] {
  const select = isRecord(query) && isRecord(query.SelectStmt) ? query.SelectStmt : undefined;
  if (select === undefined) return [];
  if (select.op !== undefined && select.op !== 'SETOP_NONE') return outputNames({ SelectStmt: select.larg });
  if (!Array.isArray(select.targetList)) return [];
  return select.targetList.map((item): string => {
    const target = isRecord(item) && isRecord(item.ResTarget) ? item.ResTarget : {};
    if (typeof target.name === 'string') return target.name;
    const ref = isRecord(target.val) && isRecord(target.val.ColumnRef) ? target.val.ColumnRef : undefined;
    const fields = ref === undefined ? [] : stringValues(ref.fields);
    return ref !== undefined && Array.isArray(ref.fields) && fields.length === ref.fields.length ? (fields.at(-1) ?? '') : '';
  });
}

/** One FROM item's qualifier (its alias, or a table's name) and the columns the statement proves it has. */
function fromItem(type: string, fields: Json): [string, string[]] | null {
  const alias = isRecord(fields.alias) ? fields.alias : undefined;
  const aliasName = typeof alias?.aliasname === 'string' ? alias.aliasname : undefined;
  const listed = stringValues(alias?.colnames);
  if (type === 'RangeVar' && typeof fields.relname === 'string') return [aliasName ?? fields.relname, listed];
  if (aliasName === undefined) return null;
  if (type === 'RangeSubselect') return [aliasName, listed.length > 0 ? listed : outputNames(fields.subquery)];
  if (type === 'RangeFunction' || type === 'RangeTableFunc' || type === 'JsonTable') return [aliasName, listed];
  return null;
}

/**
 * The columns a statement proves for each qualifier its FROM items define:
 * a name defined more than once proves only what every definition proves.
 */
export function provenColumns(root: unknown): Map<string, Set<string>> {
  const proven = new Map<string, Set<string>>();
  const visit = (value: unknown, type: string | null): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item, null);
      return;
    }
    if (!isRecord(value)) return;
    const item = type === null ? null : fromItem(type, value);
    if (item !== null) {
      const [name, columns] = item;
      const before = proven.get(name);
      proven.set(name, new Set(before === undefined ? columns : columns.filter((c) => before.has(c))));
    }
    for (const [key, child] of Object.entries(value)) {
      visit(child, /^[A-Z]/.test(key) ? key : key === 'relation' ? 'RangeVar' : null);
    }
  };
  visit(root, null);
  return proven;
}

/**
 * Why a column reference (`fields`: its parts) may call a function through
 * attribute notation, or null: unqualified, `q.*`, a column the statement
 * proves for `q`, or a name on the read-only function list.
 */
export function attributeProblem(fields: unknown, proven: ReadonlyMap<string, Set<string>>, policy: FunctionPolicy): string | null {
  if (!Array.isArray(fields) || fields.length < 2) return null;
  const parts = stringValues(fields);
  if (parts.length !== fields.length) return null; // q.* (A_Star): every column, no call
  const name = parts[parts.length - 1]!;
  const qualifier = parts[parts.length - 2]!;
  if (proven.get(qualifier)?.has(name) === true) return null;
  if (functionProblem([name], policy) === null) return null;
  return SQL_REASONS['attribute-notation'](parts.join('.'), name, qualifier);
}

/**
 * What PostgreSQL runs for a node besides the functions it names: the
 * operator of an `ANY`/`ALL` subquery or `ORDER BY ... USING`, a cast's
 * type, a `TABLESAMPLE` method, a field taken from a row (`(t).fn`); an
 * unknown node kind. Returns the reasons (`SQL_REASONS` strings).
 */
export function pgNodeProblems(type: string, fields: Json, policy: FunctionPolicy): string[] {
  if (!KNOWN_PG_NODES.has(type)) return [SQL_REASONS['unknown-node'](type)];
  const problems: (string | null)[] = [];
  if (type === 'SubLink' && fields.operName !== undefined) problems.push(operatorProblem(stringValues(fields.operName), policy));
  if (type === 'SortBy' && fields.useOp !== undefined) problems.push(operatorProblem(stringValues(fields.useOp), policy));
  if (policy.dialect !== 'postgres') return problems.filter((p): p is string => p !== null);
  if (isRecord(fields.typeName)) problems.push(typeProblem(fields.typeName));
  if (type === 'RangeTableSample') {
    const method = stringValues(fields.method);
    const builtin = method.length === 1 || (method.length === 2 && method[0] === 'pg_catalog');
    if (!builtin || !BUILTIN_SAMPLE_METHODS.has(method.at(-1) ?? '')) problems.push(SQL_REASONS['sample-method'](method.join('.')));
  }
  if (type === 'A_Indirection') {
    for (const name of stringValues(fields.indirection)) {
      problems.push(functionProblem([name], policy) === null ? null : SQL_REASONS['attribute-notation'](`(...).${name}`, name, '...'));
    }
  }
  return problems.filter((p): p is string => p !== null);
}
