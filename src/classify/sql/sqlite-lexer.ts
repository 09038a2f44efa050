/**
 * SQLite's tokens (DESIGN.md §5.5): neither parser reads SQLite's lexical
 * rules exactly (node-sql-parser takes `\'` for an escaped quote and `#` for
 * a comment, Postgres nests block comments), so the text is cut into tokens
 * here by SQLite's rules, a subset of them: any character outside it fails
 * closed, comments are dropped, parameters become `NULL`, and statements are
 * split at `;` as `sqlite3_complete` splits them.
 */
import { SQL_REASONS } from './reasons.js';

/** One SQLite token. */
export interface Token {
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

/** Thrown by `lexSqlite` for text it does not read; its message is a `SQL_REASONS` string. */
export class SqliteLexError extends Error {}

/** A quoted body up to the closing `quote`, a doubled quote standing for one; returns [body, index after]. */
function readQuoted(sql: string, start: number, quote: string, doubled: boolean): [string, number] {
  let body = '';
  let i = start + 1;
  for (;;) {
    const end = sql.indexOf(quote, i);
    if (end < 0) throw new SqliteLexError(SQL_REASONS['lex-unterminated-quote']);
    body += sql.slice(i, end);
    if (doubled && sql[end + 1] === quote) {
      body += quote;
      i = end + 2;
    } else {
      return [body, end + 1];
    }
  }
}

/** An identifier quoted as the parsers read it: `"name"`, a `"` in it doubled. */
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
export function lexSqlite(sql: string): Token[] {
  if (sql.includes('\\')) throw new SqliteLexError(SQL_REASONS['lex-backslash']);
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
      if (!/^(?:[0-9A-Fa-f]{2})*$/.test(body)) throw new SqliteLexError(SQL_REASONS['lex-malformed-blob']);
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
      if (end < sql.length && WORD_CHAR.test(sql[end]!)) throw new SqliteLexError(SQL_REASONS['lex-malformed-number']);
      tokens.push({ type: 'number', text: match[0] });
      i = end;
    } else if (c === '?' || c === ':' || c === '@') {
      const pattern = c === '?' ? NUMBERED_PARAMETER : NAMED_PARAMETER;
      pattern.lastIndex = i;
      const match = pattern.exec(sql);
      if (match === null) throw new SqliteLexError(SQL_REASONS['lex-malformed-parameter'](c));
      tokens.push({ type: 'param', text: 'NULL' });
      i += match[0].length;
    } else {
      const op = SQLITE_OPERATORS.find((o) => sql.startsWith(o, i));
      if (op === undefined) throw new SqliteLexError(SQL_REASONS['lex-unhandled-character'](c));
      tokens.push({ type: 'op', text: op });
      i += op.length;
    }
  }
  return tokens;
}

/** Whether a token is a word, one of `words` (upper case) case-insensitively. */
export function isWord(token: Token | undefined, ...words: string[]): boolean {
  return token?.type === 'word' && words.includes(token.text.toUpperCase());
}

/** Whether a token is the operator `op`. */
export function isOp(token: Token | undefined, op: string): boolean {
  return token?.type === 'op' && token.text === op;
}

/** Leading `EXPLAIN [QUERY PLAN]`: how many tokens it takes (0 when absent). */
export function explainPrefix(tokens: readonly Token[]): number {
  if (!isWord(tokens[0], 'EXPLAIN')) return 0;
  return isWord(tokens[1], 'QUERY') && isWord(tokens[2], 'PLAN') ? 3 : 1;
}

/** Whether the tokens start `[EXPLAIN ...] CREATE [TEMP] TRIGGER`. */
export function isCreateTrigger(tokens: readonly Token[]): boolean {
  const start = explainPrefix(tokens);
  if (!isWord(tokens[start], 'CREATE')) return false;
  const next = isWord(tokens[start + 1], 'TEMP', 'TEMPORARY') ? start + 2 : start + 1;
  return isWord(tokens[next], 'TRIGGER');
}

/**
 * Statements at `;`, as SQLite's `sqlite3_complete` splits them: inside
 * `CREATE TRIGGER` only the `;` after `; END` ends the statement.
 */
export function splitSqlite(tokens: readonly Token[]): Token[][] {
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
