/**
 * One text a database client runs, judged as that client reads it
 * (DESIGN.md §5.5): its own commands (psql's backslash meta-commands,
 * sqlite3's and duckdb's dot-commands, mysql's client commands) and the SQL
 * it sends, judged by the SQL classifier in the client's dialect. Each
 * client's own commands are allow-listed: any other is a write.
 *
 * - psql: a text holding a backslash is a meta-command (`\!` runs a shell,
 *   `\o` writes, `\i` runs a file; arguments in backquotes run programs); it
 *   is a read only when the whole text is one listing command (`\dt`,
 *   `\d+ orders`, `\l`) with plain arguments. Otherwise PostgreSQL SQL
 *   (psql's `:name` variables do not parse, so they are writes).
 * - sqlite3, duckdb: a text starting with `.` (a command-line argument) or a
 *   line starting with `.` (input) is a dot-command: `.tables`, `.schema`,
 *   `.dump`, `.indexes`, output settings are reads; `.shell`, `.system`,
 *   `.output`, `.once`, `.save`, `.import`, `.read`, `.open` and every other
 *   are writes. The rest is SQL: SQLite's, or for duckdb PostgreSQL's
 *   grammar (DuckDB's parser derives from it), with any `COPY` a write.
 * - mysql: no MySQL parser: a text with a comment (`/*!...*\/` runs in
 *   MySQL), a backslash (client commands, string escapes) or `#` is a write;
 *   `SHOW TABLES`, `SHOW DATABASES`, `DESCRIBE t`, `SHOW COLUMNS FROM t`,
 *   `SHOW CREATE TABLE t` alone are reads; the rest is read by the SQLite
 *   reader, so a MySQL-only function or statement is a write.
 */
import { tableTarget, worstOf, type Classification } from '../classification.js';
import { classifySql } from '../sql/index.js';
import { SHELL_REASONS } from './reasons.js';
import type { CompiledSql } from './table-compile.js';

/** psql meta-commands that only list or describe (`\d`, `\dt+`, `\l`, `\dn`, ...), and output toggles. */
const PSQL_READS = /^\\(d[tvimsfnuEDTpSxgoylbcOPRFLAC]*\+?S?|l\+?|dn\+?|conninfo|encoding|timing|x|z\+?|sf\+?|sv\+?)$/;

/** Dot-commands that only show or set output (sqlite3, duckdb). */
const DOT_READS = new Set([
  'tables',
  'schema',
  'fullschema',
  'indexes',
  'indices',
  'dump',
  'databases',
  'headers',
  'header',
  'mode',
  'timer',
  'show',
  'help',
  'nullvalue',
  'separator',
  'width',
  'echo',
  'changes',
  'stats',
  'print',
  'bail',
  'columns',
  'maxrows',
]);

/** Dot-commands whose argument names a table. */
const DOT_TABLE_ARGUMENT = new Set(['schema', 'dump', 'indexes', 'indices']);

/** Arguments of a read-only client command: plain names and patterns, no quotes, backquotes, pipes or redirections. */
const PLAIN_ARGUMENT = /^[A-Za-z0-9_.%*+,:-]+$/;

/** MySQL statements that only show: `SHOW TABLES`, `DESCRIBE t`, ... alone. */
const MYSQL_SHOWS =
  /^\s*(SHOW\s+(FULL\s+)?(TABLES|DATABASES|SCHEMAS)|SHOW\s+(FULL\s+)?(COLUMNS|FIELDS|INDEX|INDEXES|KEYS)\s+FROM\s+[A-Za-z0-9_.]+|SHOW\s+CREATE\s+TABLE\s+[A-Za-z0-9_.]+|DESC(RIBE)?\s+[A-Za-z0-9_.]+)\s*;?\s*$/i;

function read(targets: string[], reason: string): Classification {
  return { kind: 'read', targets, destructive: false, reason };
}

function write(reason: string): Classification {
  return { kind: 'write', targets: [], destructive: false, reason };
}

/** SQL judged by the SQL classifier, its reason wrapped for the shell (`'psql' runs SQL: sql: ...`). */
function judgedSql(label: string, sql: string, dialect: 'postgres' | 'sqlite'): Classification {
  const result = classifySql(sql, { dialect });
  return { ...result, reason: SHELL_REASONS['sql-judged'](label, result.reason ?? '') };
}

/** A dot-command line (sqlite3, duckdb): read-only ones listed, with plain arguments. */
function dotCommand(label: string, line: string): Classification {
  const [command = '', ...args] = line.trim().slice(1).split(/\s+/);
  if (!DOT_READS.has(command) || !args.every((a) => PLAIN_ARGUMENT.test(a))) {
    return write(SHELL_REASONS['sql-meta-command'](label, `.${command}`));
  }
  const tables = DOT_TABLE_ARGUMENT.has(command) && args[0] !== undefined && /^\w+$/.test(args[0]) ? [args[0].toLowerCase()] : [];
  return read(tables.map(tableTarget), SHELL_REASONS['read-only'](`${label} .${command}`));
}

/** A psql text: one listing meta-command, or SQL without backslashes. */
function psqlText(label: string, text: string): Classification {
  if (!text.includes('\\')) return judgedSql(label, text, 'postgres');
  const [command = '', ...args] = text.trim().split(/\s+/);
  if (!PSQL_READS.test(command) || !args.every((a) => PLAIN_ARGUMENT.test(a))) {
    return write(SHELL_REASONS['sql-meta-command'](label, command));
  }
  const tables = /^\\d\+?$/.test(command) && args[0] !== undefined && /^[\w.]+$/.test(args[0]) ? [args[0].toLowerCase()] : [];
  return read(tables.map(tableTarget), SHELL_REASONS['read-only'](`${label} ${command}`));
}

/** A duckdb SQL text: PostgreSQL's grammar, COPY refused (DuckDB's COPY TO writes files, even `TO STDOUT` is not PostgreSQL's). */
function duckdbSql(label: string, sql: string): Classification {
  if (/\bcopy\b/i.test(sql)) return write(SHELL_REASONS['sql-duckdb-copy'](label));
  return judgedSql(label, sql, 'postgres');
}

/** A mysql text: lexical features MySQL reads differently refused, SHOW/DESCRIBE alone read, the rest read as SQLite. */
function mysqlText(label: string, text: string): Classification {
  const refused: [RegExp, string][] = [
    [/\/\*/, 'a block comment'],
    [/--/, "'--'"],
    [/#/, "'#'"],
    [/\\/, 'a backslash'],
  ];
  for (const [pattern, what] of refused) if (pattern.test(text)) return write(SHELL_REASONS['sql-mysql-lexical'](label, what));
  if (MYSQL_SHOWS.test(text)) return read([], SHELL_REASONS['read-only'](`${label} SHOW`));
  return judgedSql(label, text, 'sqlite');
}

/** A text given as input (here-document): dot-command lines apart, the other lines one SQL text (sqlite3, duckdb). */
function dotInput(label: string, text: string, sql: (label: string, sql: string) => Classification): Classification {
  const lines = text.split('\n');
  const parts = lines.filter((line) => line.trim().startsWith('.')).map((line) => dotCommand(label, line));
  const rest = lines.filter((line) => !line.trim().startsWith('.')).join('\n');
  if (rest.trim() !== '') parts.push(sql(label, rest));
  return worstOf(parts, read([], SHELL_REASONS['sql-no-input'](label)));
}

/**
 * Judges one text a database client runs (DESIGN.md §5.5): `input` when it
 * is the client's input (a here-document: sqlite3 and duckdb then read
 * dot-commands line by line), else a command-line argument. Targets are
 * `table:<name>`; reasons are shell reasons, the SQL classifier's inside.
 */
export function judgeClientText(sql: CompiledSql, label: string, text: string, input: boolean): Classification {
  switch (sql.client) {
    case 'psql':
      return psqlText(label, text);
    case 'mysql':
      return mysqlText(label, text);
    case 'sqlite3':
    case 'duckdb': {
      const judge = sql.client === 'duckdb' ? duckdbSql : (l: string, s: string) => judgedSql(l, s, 'sqlite');
      if (input) return dotInput(label, text, judge);
      return text.startsWith('.') ? dotCommand(label, text) : judge(label, text);
    }
  }
}
