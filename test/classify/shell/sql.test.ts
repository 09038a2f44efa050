/**
 * SQL run by database clients inside shell commands (DESIGN.md §5.5, §5.1,
 * §5.6): psql, sqlite3, mysql and duckdb, their SQL judged by the SQL
 * classifier in the client's dialect, the tables it names as targets, and
 * SQL whose text is not known (a file, a pipe, an expansion) a write.
 */
import { describe, expect, it } from 'vitest';
import { classifyShellCommand, parseShellTable } from '../../../src/classify/shell/index.js';

const judge = (command: string) => {
  const result = classifyShellCommand(command, { cwd: '/srv/app' });
  return { kind: result.kind, targets: result.targets, destructive: result.destructive, reason: result.reason };
};

describe('reads establish their tables', () => {
  it.each([
    ["psql -c 'SELECT * FROM orders'", ['table:orders']],
    ['psql -h db -U app -d shop -c "SELECT count(*) FROM public.orders WHERE total > 10"', ['table:public.orders']],
    ["psql postgres://db/shop --csv -X -c 'SELECT id FROM orders JOIN customers USING (id)'", ['table:customers', 'table:orders']],
    ["sqlite3 app.db 'SELECT name FROM users'", ['/srv/app/app.db', 'table:users']],
    ["sqlite3 -header -csv app.db 'SELECT * FROM users' 'SELECT * FROM orders'", ['/srv/app/app.db', 'table:orders', 'table:users']],
    ["mysql -u app -D shop -e 'SELECT * FROM orders'", ['table:orders']],
    ["duckdb -c 'SELECT count(*) FROM events'", ['table:events']],
    ["duckdb data.duckdb 'SELECT * FROM events'", ['/srv/app/data.duckdb', 'table:events']],
  ])('%s', (command, targets) => {
    expect(judge(command)).toMatchObject({ kind: 'read', targets: [...targets].sort(), destructive: false });
  });
});

describe('writes name their tables', () => {
  it('DELETE FROM t names table:t and is destructive without WHERE', () => {
    expect(judge("psql -c 'DELETE FROM orders'")).toMatchObject({ kind: 'write', targets: ['table:orders'], destructive: true });
  });

  it('a DELETE with WHERE is a plain write of its table', () => {
    expect(judge("sqlite3 app.db 'DELETE FROM users WHERE id = 1'")).toMatchObject({
      kind: 'write',
      targets: ['/srv/app/app.db', 'table:users'],
      destructive: false,
    });
  });

  it('the reason carries the SQL classifier reason', () => {
    expect(judge("psql -c 'UPDATE orders SET total = 0 WHERE id = 1'").reason).toBe(
      "shell: 'psql' runs SQL: sql: UpdateStmt is not a read-only statement",
    );
  });

  it.each([
    "psql -c 'SELECT t.fn FROM orders t'",
    "psql -c 'SELECT 1 FROM t WHERE 2 ### ANY (SELECT x FROM u)'",
    'psql -c "SELECT \'x\'::mytype"',
    "psql -c 'DROP TABLE orders'",
    "psql -c 'CALL archive()'",
    'psql -c "COPY orders TO PROGRAM \'sh\'"',
    "mysql -e 'DELETE FROM orders'",
    "mysql -e 'UPDATE t SET a = 1 WHERE id = 2'",
    'duckdb -c "COPY events TO \'out.csv\'"',
    'duckdb -c "SELECT * FROM read_csv(\'x.csv\')"',
    "sqlite3 app.db 'DROP TABLE users'",
  ])('%s is a write', (command) => {
    expect(judge(command).kind).toBe('write');
  });
});

describe('client commands', () => {
  it.each([
    ["sqlite3 app.db '.tables'", 'read'],
    ["sqlite3 app.db '.schema users'", 'read'],
    ["sqlite3 app.db '.dump users'", 'read'],
    ["sqlite3 app.db '.shell rm -rf ~'", 'write'],
    ["sqlite3 app.db '.system id'", 'write'],
    ["sqlite3 app.db '.output /tmp/x'", 'write'],
    ["sqlite3 app.db '.once /tmp/x'", 'write'],
    ["sqlite3 app.db '.save /tmp/x.db'", 'write'],
    ["sqlite3 app.db '.import x.csv t'", 'write'],
    ["sqlite3 app.db '.read x.sql'", 'write'],
    ["sqlite3 app.db '.tables `id`'", 'write'],
    ["psql -c '\\dt'", 'read'],
    ["psql -c '\\d+ orders'", 'read'],
    ["psql -c '\\! rm -rf ~'", 'write'],
    ["psql -c '\\o /tmp/x'", 'write'],
    ["psql -c '\\i x.sql'", 'write'],
    ["psql -c '\\d `id`'", 'write'],
    ["mysql -e 'SHOW TABLES'", 'read'],
    ["mysql -e 'DESCRIBE orders'", 'read'],
    ["mysql -e 'system rm -rf ~'", 'write'],
    ["mysql -e '\\! id'", 'write'],
    ["mysql -e '/*!50000 DROP TABLE t */ SELECT 1'", 'write'],
    ["mysql -e 'SELECT 1 # x'", 'write'],
  ])('%s is a %s', (command, kind) => {
    expect(judge(command).kind).toBe(kind);
  });

  it('.schema names its table', () => {
    expect(judge("sqlite3 app.db '.schema users'").targets).toEqual(['/srv/app/app.db', 'table:users']);
  });
});

describe('SQL on the input', () => {
  it('a quoted here-document is judged as SQL', () => {
    expect(judge("psql -d shop <<'SQL'\nSELECT * FROM orders;\nSQL")).toMatchObject({ kind: 'read', targets: ['table:orders'] });
  });

  it('a here-document that deletes is a write of its table', () => {
    expect(judge("psql <<'SQL'\nBEGIN;\nDELETE FROM orders;\nCOMMIT;\nSQL")).toMatchObject({
      kind: 'write',
      targets: ['table:orders'],
      destructive: true,
    });
  });

  it('an unquoted here-document without expansions is judged', () => {
    expect(judge('psql <<EOF\nSELECT 1 FROM t;\nEOF').kind).toBe('read');
  });

  it('an unquoted here-document with an expansion is not known: a write', () => {
    expect(judge('psql <<EOF\nSELECT * FROM $T;\nEOF').kind).toBe('write');
  });

  it('a here-string is judged', () => {
    expect(judge("psql <<< 'SELECT * FROM orders'")).toMatchObject({ kind: 'read', targets: ['table:orders'] });
    expect(judge("psql <<< 'DELETE FROM orders'").kind).toBe('write');
  });

  it('sqlite3 reads dot-commands from its input line by line', () => {
    expect(judge("sqlite3 app.db <<'EOF'\n.tables\nSELECT * FROM users;\nEOF").kind).toBe('read');
    expect(judge("sqlite3 app.db <<'EOF'\n.tables\n.shell id\nEOF").kind).toBe('write');
  });

  it('a psql meta-command inside input is a write', () => {
    expect(judge("psql <<'SQL'\nSELECT 1;\n\\! id\nSQL").kind).toBe('write');
  });

  it.each([
    ['a pipe', "echo 'SELECT 1' | psql"],
    ['a file', 'psql < dump.sql'],
    ['the caller input', 'psql -d shop'],
    ['a file option', 'psql -f migrate.sql'],
    ['sqlite3 without SQL', 'sqlite3 app.db'],
    ['sqlite3 -init', "sqlite3 -init x.sql app.db 'SELECT 1'"],
    ['mysql from a file', 'mysql shop < dump.sql'],
    ['a later file input overrides a here-document', "psql <<'SQL' < x.sql\nSELECT 1;\nSQL"],
  ])('%s is a write', (_name, command) => {
    expect(judge(command).kind).toBe('write');
  });

  it('psql -l reads no SQL and is a read', () => {
    expect(judge('psql -h db -l').kind).toBe('read');
  });
});

describe('SQL only known when it runs', () => {
  it.each([
    'psql -c "$QUERY"',
    'psql -c "SELECT * FROM $T"',
    'sqlite3 app.db "$(cat q.sql)"',
    'psql $URL -c "SELECT 1"',
    "psql -c 'SELECT 1' -o out.txt",
    "psql --unknown-option -c 'SELECT 1'",
    "mysql --pager=less -e 'SELECT 1'",
  ])('%s is a write', (command) => {
    expect(judge(command).kind).toBe('write');
  });

  it('a wrapper passes the here-document on (timeout psql <<SQL)', () => {
    expect(judge("timeout 10 psql <<'SQL'\nSELECT * FROM orders;\nSQL").kind).toBe('read');
  });
});

describe('the table field sql', () => {
  const table = (rule: object) => ({ commands: { q: { read: true, ...rule } }, trustedDirectories: [], nullDevices: [], variables: {} });

  it('its command, init and file options must take a value', () => {
    expect(() => parseShellTable(table({ sql: { client: 'psql', commandOptions: ['-c'] } }))).toThrow(
      /commands\.q\.sql\.-c: '-c' must also be listed in valueOptions/,
    );
  });

  it('a rule that runs SQL cannot also run a command', () => {
    expect(() => parseShellTable(table({ valueOptions: ['-c'], sql: { client: 'psql', commandOptions: ['-c'] }, run: {} }))).toThrow(
      /cannot also run a command/,
    );
  });

  it('a table of its own runs its client rule', () => {
    const custom = parseShellTable(table({ valueOptions: ['-c'], sql: { client: 'psql', commandOptions: ['-c'] } }));
    expect(classifyShellCommand("q -c 'SELECT * FROM t'", { table: custom })).toMatchObject({ kind: 'read', targets: ['table:t'] });
    expect(classifyShellCommand("q -c 'DELETE FROM t'", { table: custom })).toMatchObject({ kind: 'write', targets: ['table:t'] });
  });
});
