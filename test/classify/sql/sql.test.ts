/**
 * SQL classification: real-world statements in both dialects, the tricks a
 * text matcher would fall for, input that must fail closed, and the memo.
 *
 * Spec: DESIGN.md §5.5 (SQL is parsed; a batch is its worst statement), §5.1
 * and §5.2 (tables as targets), §5.6 (destructive writes).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import sqlFunctions from '../../../src/catalogs/sql-functions.json' with { type: 'json' };
import { clearSqlMemo, classifySql, MAX_SQL_BYTES, SQL_MEMO_CAPACITY, sqlMemoStats } from '../../../src/classify/sql/index.js';
import { POSTGRES_POLICY } from '../../../src/classify/sql/function-policy.js';
import { classifyPgStatement } from '../../../src/classify/sql/postgres.js';
import { postgresCases, sqliteCases, unknownPlaceCases, type SqlCase } from './cases.js';
import { unknownPlace } from '../../../machines/safety.targets.js';

const label = (c: SqlCase) => `${c.sql}${c.note === undefined ? '' : ` (${c.note})`}`;

describe.each([
  ['postgres', postgresCases],
  ['sqlite', sqliteCases],
] as const)('%s statements', (_dialect, cases) => {
  it.each(cases.map((c) => [label(c), c] as const))('%s', (_label, c) => {
    const result = classifySql(c.sql, { dialect: c.dialect });
    const unknown = unknownPlaceCases.has(`${c.dialect}\0${c.sql}`) ? [unknownPlace(result.reason!)] : [];
    expect({ kind: result.kind, targets: result.targets, destructive: result.destructive }).toEqual({
      kind: c.kind,
      targets: [...c.tables.map((t) => `table:${t}`), ...unknown].sort(),
      destructive: c.destructive,
    });
  });
});

describe('the table of cases', () => {
  it('holds at least 60 statements in each dialect, reads and writes alike', () => {
    expect(postgresCases.length).toBeGreaterThanOrEqual(60);
    expect(sqliteCases.length).toBeGreaterThanOrEqual(45);
    for (const cases of [postgresCases, sqliteCases]) {
      expect(cases.some((c) => c.kind === 'read')).toBe(true);
      expect(cases.some((c) => c.kind === 'write' && c.destructive)).toBe(true);
    }
  });
});

describe('the default dialect', () => {
  it('is Postgres: SHOW, which SQLite lacks, is a read', () => {
    expect(classifySql('SHOW search_path').kind).toBe('read');
  });
});

describe('reasons', () => {
  it('name a side-effecting function', () => {
    expect(classifySql("SELECT setval('s', 1)").reason).toBe("sql: function 'setval' has side effects");
  });

  it('name a function that is not known to be read-only', () => {
    expect(classifySql('SELECT archive_user(1)').reason).toBe("sql: function 'archive_user' is not known to be read-only");
  });

  it('say a quoted, case-different function name is not the builtin', () => {
    expect(classifySql('SELECT "NOW"()').kind).toBe('write');
  });

  it('name a row lock', () => {
    expect(classifySql('SELECT * FROM t FOR UPDATE').reason).toMatch(/locks rows/);
  });
});

describe('operators (Postgres)', () => {
  it('a builtin operator keeps a SELECT a read', () => {
    expect(classifySql("SELECT a || 'x' FROM t WHERE tags @> ARRAY['x'] AND b ~* 'y'").kind).toBe('read');
  });

  it('an operator not on the list makes a write (it may run any function)', () => {
    expect(classifySql('SELECT a ### b FROM t').kind).toBe('write');
  });

  it('an operator qualified with a schema other than pg_catalog makes a write', () => {
    expect(classifySql('SELECT 1 OPERATOR(myschema.+) 2').kind).toBe('write');
  });

  it('an operator qualified with pg_catalog is the builtin', () => {
    expect(classifySql('SELECT 1 OPERATOR(pg_catalog.+) 2').kind).toBe('read');
  });
});

describe('texts that read differently to another reader fail closed', () => {
  it('Postgres: a backslash in a plain string literal (standard_conforming_strings off would end the string early)', () => {
    expect(classifySql("SELECT '\\', '; DROP TABLE t; --'").kind).toBe('write');
  });

  it('Postgres: a backslash in an E string is unambiguous and stays a read', () => {
    expect(classifySql("SELECT E'a\\nb'").kind).toBe('read');
  });

  it("SQLite: a backslash (node-sql-parser reads \\' as an escaped quote, SQLite does not)", () => {
    expect(classifySql("SELECT '\\'; DROP TABLE t; SELECT '", { dialect: 'sqlite' }).kind).toBe('write');
  });

  it('SQLite: # (a comment to node-sql-parser, a parameter to SQLite)', () => {
    expect(classifySql('SELECT 1 +\n#x; DROP TABLE t\n 2', { dialect: 'sqlite' }).kind).toBe('write');
  });

  it('SQLite: block comments do not nest, so what follows the first */ is a statement', () => {
    const result = classifySql('/* /* */ DROP TABLE t; /* */', { dialect: 'sqlite' });
    expect(result).toMatchObject({ kind: 'write', destructive: true, targets: ['table:t'] });
  });

  it('SQLite: a $ (dollar quotes in other dialects, a parameter in SQLite)', () => {
    expect(classifySql('SELECT $$; DROP TABLE t; $$', { dialect: 'sqlite' }).kind).toBe('write');
  });
});

describe('SQLite statements split as SQLite splits them', () => {
  it('a CREATE TRIGGER body runs to the END after its last ;', () => {
    const result = classifySql('CREATE TRIGGER tr AFTER INSERT ON t BEGIN DELETE FROM u; END; DROP TABLE v', { dialect: 'sqlite' });
    // The trigger names no table it reports: an unknown place beside the dropped table.
    expect(result).toMatchObject({
      kind: 'write',
      destructive: true,
      targets: ['?/sql: CREATE TRIGGER is not a read-only statement', 'table:v'],
    });
  });

  it('empty statements between semicolons are skipped', () => {
    expect(classifySql(';; SELECT 1 FROM t;;', { dialect: 'sqlite' }).kind).toBe('read');
  });
});

describe('bad input fails closed, never throws', () => {
  const writes: [string, unknown, object | undefined][] = [
    ['garbage', 'this is not sql at all', undefined],
    ['garbage (sqlite)', 'this is not sql at all', { dialect: 'sqlite' }],
    ['an unterminated string', "SELECT 'abc", undefined],
    ['an unterminated string (sqlite)', "SELECT 'abc", { dialect: 'sqlite' }],
    ['a 1 MB string', `SELECT ${'1+'.repeat(500_000)}1`, undefined],
    ['a 1 MB string (sqlite)', `SELECT ${'1+'.repeat(500_000)}1`, { dialect: 'sqlite' }],
    ['a NUL character hiding a statement', 'SELECT 1\0; DROP TABLE t', undefined],
    ['a NUL character (sqlite)', 'SELECT 1\0', { dialect: 'sqlite' }],
    ['a number', 42, undefined],
    ['null', null, undefined],
    ['undefined', undefined, undefined],
    ['an object', { sql: 'SELECT 1' }, undefined],
    ['an empty string', '', undefined],
    ['only a comment', '-- nothing', undefined],
    ['only a comment (sqlite)', '/* nothing */', { dialect: 'sqlite' }],
    ['an unknown dialect', 'SELECT 1', { dialect: 'oracle' }],
    ["nesting past the parser's depth", `SELECT ${'('.repeat(20_000)}1${')'.repeat(20_000)}`, undefined],
    ["nesting past the parser's depth (sqlite)", `SELECT ${'('.repeat(20_000)}1${')'.repeat(20_000)}`, { dialect: 'sqlite' }],
    ['non-ASCII outside quotes (sqlite)', 'SELECT * FROM tablé', { dialect: 'sqlite' }],
  ];

  it.each(writes)('%s is a write in an unknown place', (_name, sql, options) => {
    const result = classifySql(sql, options as never);
    expect(result).toMatchObject({ kind: 'write', targets: [unknownPlace(result.reason!)], destructive: false });
    expect(result.reason).toMatch(/^sql: /);
  });

  it('just over the byte limit is a write, though it would parse', () => {
    const sql = `SELECT 1 FROM t WHERE a = '${'x'.repeat(MAX_SQL_BYTES)}'`;
    expect(classifySql(sql).reason).toMatch(/longer than/);
  });

  it('the limit counts UTF-8 bytes, not characters', () => {
    expect(classifySql(`SELECT '${'é'.repeat(33_000)}'`).reason).toMatch(/longer than/);
  });

  it('multi-byte text under the limit is judged', () => {
    expect(classifySql(`SELECT '${'é'.repeat(32_000)}'`).kind).toBe('read');
  });

  it('options that are not an object are the defaults', () => {
    expect(classifySql('SELECT 1', null as never).kind).toBe('read');
  });

  it('arbitrary text never throws and always gives a kind (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), fc.constantFrom('postgres', 'sqlite'), (sql, dialect) => {
        const result = classifySql(sql, { dialect: dialect as 'postgres' | 'sqlite' });
        return ['read', 'write', 'neutral'].includes(result.kind) && Array.isArray(result.targets);
      }),
      { numRuns: 300 },
    );
  });

  it('SQL-looking text never throws (property)', () => {
    const word = fc.constantFrom(
      'SELECT',
      'FROM',
      't',
      '(',
      ')',
      ';',
      "'x'",
      '--',
      '/*',
      '*/',
      'DROP',
      'TABLE',
      ',',
      '*',
      'WHERE',
      '=',
      '1',
      '"q"',
      'WITH',
      'AS',
      'DELETE',
      'PRAGMA',
      'EXPLAIN',
      'END',
      'BEGIN',
      '\\',
      '$$',
    );
    fc.assert(
      fc.property(fc.array(word, { maxLength: 30 }), fc.constantFrom('postgres', 'sqlite'), (words, dialect) => {
        const result = classifySql(words.join(' '), { dialect: dialect as 'postgres' | 'sqlite' });
        return ['read', 'write', 'neutral'].includes(result.kind) && (result.kind === 'write' || !result.destructive);
      }),
      { numRuns: 300 },
    );
  });
});

describe('the function catalog', () => {
  it.each(['postgres', 'sqlite'] as const)('%s: no function is both read-only and side-effecting', (dialect) => {
    const readOnly = new Set(sqlFunctions[dialect].readOnlyFunctions);
    expect(sqlFunctions[dialect].sideEffectingFunctions.filter((f) => readOnly.has(f))).toEqual([]);
  });

  it.each(['postgres', 'sqlite'] as const)('%s: names are lower-case and listed once', (dialect) => {
    const names = [...sqlFunctions[dialect].readOnlyFunctions, ...sqlFunctions[dialect].sideEffectingFunctions];
    expect(names.filter((n) => n !== n.toLowerCase())).toEqual([]);
    expect(new Set(names).size).toBe(names.length);
  });

  it('SQLite: every pragma with a table argument is one that takes an argument', () => {
    const withArgument = new Set(sqlFunctions.sqlite.pragmas.withArgument);
    expect(sqlFunctions.sqlite.pragmas.tableArgument.filter((p) => !withArgument.has(p))).toEqual([]);
  });
});

describe('the memo', () => {
  beforeEach(() => clearSqlMemo());

  it('answers a repeated text from the memo', () => {
    classifySql('SELECT * FROM memo_t');
    classifySql('SELECT * FROM memo_t');
    expect(sqlMemoStats()).toEqual({ hits: 1, misses: 1, size: 1 });
  });

  it('keys by dialect as well as text', () => {
    classifySql('SELECT * FROM memo_t');
    classifySql('SELECT * FROM memo_t', { dialect: 'sqlite' });
    expect(sqlMemoStats()).toEqual({ hits: 0, misses: 2, size: 2 });
  });

  it('gives the same answer from the memo', () => {
    const first = classifySql('DELETE FROM memo_t');
    expect(classifySql('DELETE FROM memo_t')).toEqual(first);
  });

  it('hands out copies: changing a result does not change the next one', () => {
    const first = classifySql('SELECT * FROM memo_t');
    first.targets.push('table:other');
    first.kind = 'write';
    expect(classifySql('SELECT * FROM memo_t')).toMatchObject({ kind: 'read', targets: ['table:memo_t'] });
  });

  it('keeps at most its capacity, dropping the least recently used', () => {
    classifySql('SELECT 0');
    for (let i = 1; i <= SQL_MEMO_CAPACITY; i += 1) classifySql(`SELECT ${i}`);
    expect(sqlMemoStats().size).toBe(SQL_MEMO_CAPACITY);
    classifySql('SELECT 0');
    expect(sqlMemoStats().hits).toBe(0);
  });

  it('a lookup makes an entry recent again', () => {
    classifySql('SELECT 0');
    for (let i = 1; i < SQL_MEMO_CAPACITY; i += 1) classifySql(`SELECT ${i}`);
    classifySql('SELECT 0');
    classifySql(`SELECT ${SQL_MEMO_CAPACITY}`);
    classifySql('SELECT 0');
    expect(sqlMemoStats().hits).toBe(2);
  });

  it('clearSqlMemo empties it and zeroes the counters', () => {
    classifySql('SELECT 1');
    clearSqlMemo();
    expect(sqlMemoStats()).toEqual({ hits: 0, misses: 0, size: 0 });
  });
});

describe('what PostgreSQL runs besides the functions a statement names', () => {
  it('names attribute notation in the reason', () => {
    expect(classifySql('SELECT t.fn FROM orders t').reason).toBe(
      "sql: 't.fn' may call a function fn(t) (attribute notation): not proven a column, and fn is not a read-only function",
    );
  });

  it('names a cast to a type that is not a builtin', () => {
    expect(classifySql("SELECT 'x'::mytype").reason).toMatch(/type 'mytype' is not a builtin type/);
  });

  it('a node kind the walk does not know is a write, even in a SELECT', () => {
    const tree = { SelectStmt: { targetList: [{ ResTarget: { val: { SomeFutureExpr: { arg: 1 } } } }] } };
    expect(classifyPgStatement(tree, POSTGRES_POLICY)).toMatchObject({
      kind: 'write',
      reason: 'sql: a SomeFutureExpr node, which the classifier does not know',
    });
  });

  it('every node kind of the read cases is known (the list is not stale)', () => {
    const reads = postgresCases.filter((c) => c.kind === 'read').map((c) => classifySql(c.sql));
    expect(reads.filter((r) => /does not know/.test(r.reason ?? ''))).toEqual([]);
  });

  it('SQLite reads qualified columns as columns (no attribute notation there)', () => {
    expect(classifySql('SELECT t.fn FROM orders t', { dialect: 'sqlite' }).kind).toBe('read');
  });
});
