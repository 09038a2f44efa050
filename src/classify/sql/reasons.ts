/**
 * Every reason the SQL classifier gives, as data keyed by id (the way
 * `machines/safety.policy.ts` keeps `TOOL_BLOCK_REASONS`): one place to read
 * and reword them. A reason that names a statement, a function, a pragma or
 * a limit is a function of it.
 *
 * The strings are what `Classification.reason` carries after `sql: `,
 * added when the classification is made (`classification`, `failClosedSql`
 * in facts.ts): reports and tests compare them byte for byte. The `lex-*`
 * ones end `not read as SQLite: ...`.
 */

/** The SQL classifier's reasons by id, without their `sql: ` prefix (DESIGN.md §5.5). */
export const SQL_REASONS = Object.freeze({
  // --- the entry point --------------------------------------------------------
  'not-a-string': 'not a string',
  'unknown-dialect': (dialect: string) => `unknown dialect ${JSON.stringify(dialect)}`,
  'too-long': (limit: number) => `longer than ${limit} bytes`,
  nul: 'contains a NUL character',
  'not-judged': (message: string) => `could not be judged: ${message}`,
  'no-statement': 'no statement',
  'unreadable-statement': 'unreadable statement',

  // --- statements, either dialect ----------------------------------------------
  'not-read-only-statement': (statement: string) => `${statement} is not a read-only statement`,
  'read-only-statement': (statement: string) => `read-only ${statement}`,
  'function-side-effects': (name: string) => `function '${name}' has side effects`,
  'function-not-read-only': (name: string) => `function '${name}' is not known to be read-only`,
  'operator-not-read-only': (name: string) => `operator '${name}' is not known to be read-only`,
  'transaction-neutral': 'starting a transaction or setting or releasing a savepoint changes no data',
  'transaction-end': 'ending a transaction makes its writes durable or undoes them',

  // --- PostgreSQL ------------------------------------------------------------------
  'postgres-not-loaded': (why: string) => `the PostgreSQL parser ${why}`,
  'sqlite-parser-missing': (why: string) => `not parsed: the SQLite parser ${why}`,
  'postgres-does-not-parse': (message: string) => `does not parse as PostgreSQL: ${message}`,
  'ambiguous-backslash': 'a backslash in a plain string literal depends on standard_conforming_strings',
  'modifies-data': (type: string) => `${type} modifies data`,
  'select-locks-rows': 'SELECT ... FOR UPDATE/SHARE locks rows',
  'select-into-creates-table': 'SELECT ... INTO creates a table',
  'explain-without-analyze': 'EXPLAIN without ANALYZE does not run its statement',
  'copy-not-to-client': 'COPY FROM, or TO a file or program, is not a read-only statement',
  'type-not-builtin': (name: string) => `type '${name}' is not a builtin type (its input function or checks may be user code)`,
  'sample-method': (name: string) => `TABLESAMPLE method '${name}' is not a builtin`,
  'attribute-notation': (reference: string, name: string, qualifier: string) =>
    `'${reference}' may call a function ${name}(${qualifier}) (attribute notation): not proven a column, and ${name} is not a read-only function`,
  'unknown-node': (type: string) => `a ${type} node, which the classifier does not know`,

  // --- SQLite ------------------------------------------------------------------------
  'sqlite-not-read': (message: string) => `not read as SQLite: ${message}`,
  'lex-backslash': 'a backslash (read as an escape by the parser, not by SQLite)',
  'lex-unterminated-quote': 'an unterminated quote',
  'lex-malformed-blob': 'a malformed blob literal',
  'lex-malformed-number': 'a malformed number',
  'lex-malformed-parameter': (start: string) => `a malformed parameter at '${start}'`,
  'lex-unhandled-character': (character: string) => `the character ${JSON.stringify(character)}, which is not handled`,
  'sqlite-does-not-parse': 'does not parse as SQLite',
  'sqlite-does-not-parse-because': (message: string) => `does not parse as SQLite: ${message}`,
  'sqlite-explain': 'EXPLAIN does not run its statement',
  'sqlite-select-into': 'SELECT ... INTO writes',
  'sqlite-select-for-update': 'SELECT ... FOR UPDATE locks rows',
  'sqlite-function-call': 'a function call that is not read',
  'sqlite-aggregate-call': 'an aggregate call that is not read',
  'pragma-without-name': 'a PRAGMA without a name',
  'pragma-reports': (name: string) => `PRAGMA ${name} only reports`,
  'pragma-not-read-only': (name: string) => `PRAGMA ${name} is not known to be read-only`,
  'pragma-sets': (name: string) => `PRAGMA ${name} = ... sets a value`,
  'pragma-malformed': (name: string) => `PRAGMA ${name} is not read as a PRAGMA`,
  'pragma-call-not-read-only': (name: string) => `PRAGMA ${name}(...) is not known to be read-only`,
  'pragma-call-reports': (name: string) => `PRAGMA ${name}(...) only reports`,
});
