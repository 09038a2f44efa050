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
 *   are writes. A write names its place (issue #24): `.output F`, `.once F`,
 *   `.backup F`, `.save F`, `.clone F`, `.log F`, `.trace F` the file F (a
 *   path, in `paths`); `.import`, `.restore` and settings the database
 *   only; `.shell`, `.system`, `.output |cmd`, `.once |cmd` (or `-x`, `-e`),
 *   `.load`, `.ar`, `.cd`, `.open`, `.read` and any other an unknown place
 *   (`?/sqlite3 .shell …`). The rest is SQL: SQLite's, or for duckdb PostgreSQL's
 *   grammar (DuckDB's parser derives from it), with any `COPY` a write.
 * - mysql: no MySQL parser: a text with a comment (`/*!...*\/` runs in
 *   MySQL), a backslash (client commands, string escapes) or `#` is a write;
 *   `SHOW TABLES`, `SHOW DATABASES`, `DESCRIBE t`, `SHOW COLUMNS FROM t`,
 *   `SHOW CREATE TABLE t` alone are reads; the rest is read by the SQLite
 *   reader, so a MySQL-only function or statement is a write.
 */
import { unknownPlace } from '../../../machines/safety.targets.js';
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

/** Dot-commands that write the file their last argument names (sqlite3, duckdb); `|cmd` runs a program instead. */
const DOT_FILE_WRITES = new Set(['output', 'once', 'backup', 'save', 'clone', 'log', 'trace']);

/** Arguments of a file-writing dot-command that name no file: standard streams, `off`, `on`. */
const DOT_NO_FILE = new Set(['stdout', 'stderr', 'off', 'on']);

/** Dot-commands that change only the open database or the shell's settings: no place beyond the database. */
const DOT_DATABASE_WRITES = new Set(['import', 'restore', 'parameter', 'limit', 'timeout', 'prompt', 'nonce', 'filectrl', 'dbconfig']);

/**
 * What a client's text runs, judged (a `Classification`), with the files its
 * dot-commands write in `paths` (as written, for the caller to resolve
 * against the working directory).
 */
export type ClientText = Classification & { paths?: string[] };

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

function write(reason: string, targets: string[] = [], paths: string[] = []): ClientText {
  return { kind: 'write', targets, destructive: false, reason, ...(paths.length > 0 ? { paths } : {}) };
}

/** An argument of a dot-command without the quotes around it (`'|cat > x'` is `|cat > x`). */
function unquoted(text: string): string {
  const t = text.trim();
  return /^(['"]).*\1$/s.test(t) ? t.slice(1, -1) : t;
}

/**
 * The place a writing dot-command changes (issue #24): the file a
 * file-writing one names (`paths`), none for one that changes only the
 * database, else an unknown place named by the command (a program it runs,
 * a library it loads, a database or directory it moves to).
 */
function dotWrite(label: string, command: string, rest: string): ClientText {
  const reason = SHELL_REASONS['sql-meta-command'](label, `.${command}`);
  const unknown = () => write(reason, [unknownPlace(`${label} .${command} ${rest.trim()}`.trim())]);
  if (DOT_DATABASE_WRITES.has(command)) return write(reason);
  if (!DOT_FILE_WRITES.has(command)) return unknown();
  const whole = unquoted(rest);
  const args = whole === '' ? [] : whole.startsWith('|') || whole !== rest.trim() ? [whole] : rest.trim().split(/\s+/).map(unquoted);
  // `.once -x` / `-e` open a spreadsheet or editor; `|cmd` runs a program; the shell expands no `~`: not known.
  if (args.some((a) => a.startsWith('|') || a.startsWith('~') || a === '-x' || a === '-e')) return unknown();
  const file = args.filter((a) => !a.startsWith('-')).pop();
  if (file === undefined || file === '' || DOT_NO_FILE.has(file)) return write(reason);
  return write(reason, [], [file]);
}

/** SQL judged by the SQL classifier, its reason wrapped for the shell (`'psql' runs SQL: sql: ...`). */
function judgedSql(label: string, sql: string, dialect: 'postgres' | 'sqlite'): Classification {
  const result = classifySql(sql, { dialect });
  return { ...result, reason: SHELL_REASONS['sql-judged'](label, result.reason ?? '') };
}

/** A dot-command line (sqlite3, duckdb): read-only ones listed, with plain arguments. */
function dotCommand(label: string, line: string): ClientText {
  const text = line.trim().slice(1);
  const [command = '', ...args] = text.split(/\s+/);
  if (!DOT_READS.has(command) || !args.every((a) => PLAIN_ARGUMENT.test(a))) {
    return DOT_READS.has(command)
      ? write(SHELL_REASONS['sql-meta-command'](label, `.${command}`))
      : dotWrite(label, command, text.slice(command.length));
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
function dotInput(label: string, text: string, sql: (label: string, sql: string) => Classification): ClientText {
  const lines = text.split('\n');
  const parts: ClientText[] = lines.filter((line) => line.trim().startsWith('.')).map((line) => dotCommand(label, line));
  const rest = lines.filter((line) => !line.trim().startsWith('.')).join('\n');
  if (rest.trim() !== '') parts.push(sql(label, rest));
  const worst = worstOf(parts, read([], SHELL_REASONS['sql-no-input'](label)));
  const paths = parts.flatMap((part) => part.paths ?? []); // every part's files, as worstOf keeps every part's targets
  return paths.length > 0 ? { ...worst, paths } : worst;
}

/**
 * Judges one text a database client runs (DESIGN.md §5.5): `input` when it
 * is the client's input (a here-document: sqlite3 and duckdb then read
 * dot-commands line by line), else a command-line argument. Targets are
 * `table:<name>` and the unknown places of dot-commands; the files
 * dot-commands write are in `paths`; reasons are shell reasons, the SQL
 * classifier's inside.
 */
export function judgeClientText(sql: CompiledSql, label: string, text: string, input: boolean): ClientText {
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
