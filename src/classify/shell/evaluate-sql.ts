/**
 * A database client (DESIGN.md §5.5, §5.6): `psql -c '…'`, `psql <<'SQL'`,
 * `sqlite3 db 'SELECT …'`, `mysql -e '…'`, `duckdb -c '…'`. The SQL it runs,
 * from its command options, its operands or a here-document on its input,
 * is judged by the SQL classifier in the client's dialect (sql-clients.ts):
 * the tables it names are targets (`table:orders`), a write of it a write,
 * a destructive statement destructive. SQL from a file, SQL only known when
 * it runs, and input that is not a here-document or here-string (a pipe, a
 * file, the caller's input) are writes: their SQL is not known.
 */
import { unknownPlace } from '../../../machines/safety.targets.js';
import { resolveTargets } from './cwd.js';
import { ownPart, type Effects, type RuleCall } from './effects.js';
import { optionIn, type ParsedArgs } from './parse-args.js';
import { SHELL_REASONS } from './reasons.js';
import { judgeClientText } from './sql-clients.js';
import type { CompiledSql } from './table-compile.js';
import { show, type Word } from './words.js';

/** The texts a client runs from its options and operands; notes SQL files and reports whether it exits without reading input. */
function givenTexts(sql: CompiledSql, effects: Effects, args: ParsedArgs): { texts: (Word | undefined)[]; exits: boolean } {
  const texts: (Word | undefined)[] = [];
  let exits = false;
  for (const option of args.options) {
    if (optionIn(option, sql.files)) {
      effects.writes.push(SHELL_REASONS['sql-from-file'](effects.label, show(option.value)));
      effects.targets.push(unknownPlace(`${effects.label} SQL`));
      exits = true;
    }
    if (optionIn(option, sql.commands) || optionIn(option, sql.inits)) texts.push(option.value);
    if (optionIn(option, sql.commands) || optionIn(option, sql.noInput)) exits = true;
  }
  if (sql.sqlOperands && args.operands.length > 1) {
    texts.push(...args.operands.slice(1));
    exits = true;
  }
  return { texts, exits };
}

/** The database file a client opens (its first operand, with `sqlite3 db 'SQL'`), as a path target; none in memory or by URI. */
function databaseTarget(sql: CompiledSql, effects: Effects, args: ParsedArgs): void {
  const db = args.operands[0];
  if (!sql.sqlOperands || db?.text == null || db.pattern) return;
  if (db.text === '' || db.text === ':memory:' || /^[a-z][a-z0-9+.-]*:/i.test(db.text)) return;
  effects.targets.push(...resolveTargets(db.text, effects.here));
}

/** Judges one text into `effects`: its tables as targets, its write or destructive statement noted. */
function noteText(sql: CompiledSql, effects: Effects, text: string, input: boolean): void {
  const result = judgeClientText(sql, effects.label, text, input);
  effects.targets.push(...result.targets);
  for (const path of result.paths ?? []) effects.targets.push(...resolveTargets(path, effects.here)); // .output F, .backup F
  if (result.kind !== 'write') return;
  if (result.destructive) effects.destructives.push(result.reason ?? SHELL_REASONS.destructive(effects.label));
  else effects.writes.push(result.reason ?? SHELL_REASONS.writes(effects.label));
}

/**
 * Judges a database client (DESIGN.md §5.5): the SQL of its options and
 * operands, or else of its input when `call.stdin` knows it, each text as
 * the client reads it; then pushes its own part, a read when its rule is
 * read-only and no text, option or file makes it a write.
 */
export function evaluateSql(sql: CompiledSql, effects: Effects, args: ParsedArgs, call: RuleCall): void {
  const label = effects.label;
  databaseTarget(sql, effects, args);
  const { texts, exits } = givenTexts(sql, effects, args);
  for (const word of texts) {
    if (word?.text == null || word.pattern) effects.writes.push(SHELL_REASONS['sql-dynamic'](label));
    else noteText(sql, effects, word.text, false);
  }
  if (!exits) {
    const input = call.stdin ?? null;
    if (!sql.stdin || input === null) {
      // What SQL it reads is not known, nor which tables it changes: an unknown place (issue #24).
      effects.writes.push(SHELL_REASONS['sql-stdin-unknown'](label));
      effects.targets.push(unknownPlace(`${label} <stdin>`));
    } else noteText(sql, effects, input, true);
  }
  const reason = exits && texts.length === 0 ? SHELL_REASONS['sql-no-input'](label) : SHELL_REASONS['sql-read'](label);
  call.ctx.parts.push(ownPart(effects, 'read', reason));
}
