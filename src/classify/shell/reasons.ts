/**
 * Every reason the shell classifier gives, as data keyed by id (the way
 * `machines/safety.policy.ts` keeps `TOOL_BLOCK_REASONS`): one place to read
 * and reword them, and ids the code names instead of inline templates. A
 * reason that names a command, an option or a limit is a function of it.
 *
 * The strings are what `Classification.reason` carries after `shell: `
 * (added by the part that carries them, `readPart`, `writePart`, or the
 * entry point): reports and tests compare them byte for byte.
 */

/** The shell classifier's reasons by id, without their `shell: ` prefix (DESIGN.md §5.5). */
export const SHELL_REASONS = Object.freeze({
  // --- bad input and the entry point -----------------------------------------
  'input-too-long': (limit: number) => `is longer than ${limit} bytes`,
  'input-nul': 'contains a NUL character',
  'input-lone-surrogate': 'contains a lone surrogate',
  'command-problem': (problem: string) => `the command ${problem}`,
  'command-empty': 'the command is empty',
  'command-not-string-or-array': 'the command is neither a string nor an array of strings',
  'argv-empty': 'the argv array is empty',
  'argv-too-many-words': (limit: number) => `the argv array has more than ${limit} words`,
  'argv-word-not-string': (index: number) => `argv[${index}] is not a string`,
  'argv-too-long': (limit: number) => `the argv array is longer than ${limit} bytes`,
  'argv-word-problem': (index: number, problem: string) => `argv[${index}] ${problem}`,
  'table-invalid': (message: string) => `the command table is not valid (${message})`,
  'nested-too-deep': (limit: number) => `the command is nested more than ${limit} levels deep`,
  'too-complex': (what: string) => `the command is too complex to judge (${what})`,
  'work-over-budget': (limit: number) => `more than ${limit} words, commands and expressions`,
  'cwd-too-long': (limit: number) => `a working directory longer than ${limit} characters`,
  'heredoc-line-cost': (limit: number) => `a here-document with a line whose expansions times its length pass ${limit}`,
  'not-judged': 'the command could not be judged',
  'runs-nothing': 'the command runs nothing',

  // --- parsing -------------------------------------------------------------------
  'too-hard-to-parse': 'the command is too hard to parse',
  'does-not-parse': 'the command does not parse',
  'parser-missing': (why: string) => `the command was not parsed: tree-sitter-bash ${why}`,
  'shells-nested-too-deep': (limit: number) => `shells nested more than ${limit} deep`,
  'inner-script-problem': (problem: string) => `the inner script ${problem}`,

  // --- here-documents read as bash reads them (heredoc.ts) ------------------------------
  'heredoc-delimiter': (raw: string) => `the here-document delimiter '${raw}' is one bash versions or the parser may read differently`,
  'heredoc-line': (raw: string) => `the line of the here-document '${raw}' does not end where a plain reading says`,
  'heredoc-unterminated': (raw: string) => `the here-document '${raw}' has no end line: bash reads it to the end of the script`,
  'heredoc-continuation': (raw: string) =>
    `the here-document '${raw}' has a line continuation, which bash joins before looking for its end`,
  'heredoc-differs': (raw: string) => `the here-document '${raw}' may end on another line for bash than for the parser`,
  'heredoc-unparsed': (raw: string) => `the here-document '${raw}' holds an expansion the parser did not read`,

  // --- code bash evaluates from text (parse.ts, `evaluatedCode`) -------------------
  'quoted-substitution':
    'a quoted string holds a command substitution bash may run (array subscripts in arithmetic, declare, read, test -v)',
  'ansi-c-substitution': 'an ANSI-C quoted string may spell a command substitution bash may run',
  'escaped-substitution':
    'a quoted or escaped word holds a command substitution bash may run (array subscripts in arithmetic, declare, read, test -v)',
  'arithmetic-for': 'an arithmetic for loop evaluates a variable, and with it any array subscript it holds',
  'array-subscript': 'an array subscript is evaluated arithmetically, variables and any subscript they hold included',
  'integer-declaration': 'an integer declaration (-i) evaluates its values arithmetically',
  'indirect-expansion': 'an indirect or prompt expansion runs whatever the variable holds',
  'unparsed-backtick': 'a backtick command substitution the parser read as text (inside a parameter expansion) runs a command',
  'substring-expansion': 'a substring expansion evaluates its offset arithmetically, variables included',
  'arithmetic-context': 'an arithmetic context evaluates a variable, and with it any array subscript it holds',
  let: '`let` evaluates its arguments arithmetically, variables and subscripts included',

  // --- variable names bash resolves when a command runs (names.ts) -------------------
  'dynamic-variable-name': (command: string, word: string) =>
    `'${command}' takes a variable name only known when it runs ('${word}'), which may assign or evaluate anything`,
  'evaluated-subscript': (command: string, word: string) =>
    `'${command}' takes the variable name '${word}', whose subscript bash evaluates (variables and command substitutions in it included)`,
  nameref: (command: string, option: string) =>
    `'${command} ${option}' makes a name reference: an assignment to it changes the variable it names`,
  'declaration-word': (command: string, word: string) => `'${command} ${word}' is not a declaration this classifier knows`,

  // --- statements, assignments, redirections ---------------------------------------
  'assignment-listed': (name: string) => `assigning ${name} can change what later commands run`,
  assignment: (name: string) => `assigning ${name} changes only the shell`,
  'assignment-inert': (name: string) => `${name} changes only how programs format what they print`,
  'assignment-environment': (name: string) =>
    `putting ${name} in the environment of programs can change what they run; the command table does not know it to be inert`,
  arithmetic: 'arithmetic changes only the shell',
  'shell-only': (name: string) => `'${name}' changes only the shell`,
  test: 'a test reads',
  'unknown-construct': (type: string) => `'${type}' is not a construct this classifier knows`,
  'redirect-without-command': 'a redirection without a command',
  'redirect-alone': 'a redirection alone',
  'words-after-compound-redirect': 'words after a redirection of a compound command',
  'input-redirect': 'an input redirection reads',
  'output-redirect': (target: string) => `output redirection to '${target}'`,
  'unknown-redirect': (operator: string) => `the redirection '${operator}' is not one this classifier knows`,
  'arguments-without-command': 'arguments without a command',

  // --- simple commands against the table --------------------------------------------
  'no-command': 'the command is only known when it runs',
  'dynamic-command-name': 'the command name is only known when it runs',
  'function-call': (name: string) => `'${name}' calls a function the script defines`,
  'program-by-path': (name: string) => `'${name}' runs a program by its path`,
  'unknown-command': (command: string) => `'${command}' is not a known read-only command`,
  'shows-information': (command: string) => `'${command}' only shows information`,
  'unknown-option': (command: string, option: string) => `'${command} ${option}' is not an option the command table knows to be read-only`,
  'runs-program': (command: string) => `'${command}' runs another program`,
  writes: (command: string) => `'${command}' writes`,
  'writes-even-dry-run': (command: string) => `'${command}' writes, even in a dry run`,
  'exports-assignments': (command: string) => `'${command}' exports every later assignment to the programs the shell runs`,
  destructive: (command: string) => `'${command}' is destructive`,
  'undecided-word': (command: string, word: string) =>
    `'${command}': '${word}' may be an option or an operand, which is only known when it runs`,
  'dynamic-arguments': (command: string) => `'${command}' has arguments only known when it runs`,
  'dynamic-arguments-destructive': (command: string) => `'${command}' has arguments only known when it runs, which may be destructive`,
  'dry-run': (command: string) => `'${command}' is a dry run`,
  'read-only': (command: string) => `'${command}' is read-only`,
  'dynamic-subcommand': (command: string) => `'${command}' gets its subcommand only when it runs`,
  'script-not-given': (command: string) => `'${command}' runs a script that is not on the command line`,
  'dynamic-script': (command: string) => `'${command}' runs a script only known when it runs`,
  'eval-nothing': (command: string) => `'${command}' runs nothing`,
  'dynamic-wrapped-command': (command: string) => `'${command}' runs a command only known when it runs`,
  'dynamic-command': (command: string) => `'${command}' gets its command only when it runs`,
  'alone-shows-information': (command: string) => `'${command}' alone only shows information`,
  'runs-command': (command: string) => `'${command}' runs another command`,
  'script-from-file': (command: string) => `'${command}' runs a script from a file`,
  'unsafe-script': (command: string) => `'${command}' runs a script that can write files or run programs`,
  'operands-write': (command: string, count: number) => `'${command}' with ${count === 1 ? 'an operand' : 'operands'} writes`,
  'writes-to': (command: string, target: string) => `'${command}' writes to '${target}'`,
  'curl-url-scheme': (command: string, url: string) =>
    `'${command}' sends to '${url}', which is not known to be an http or https URL (other schemes send bytes to services)`,
  'curl-write-out': (command: string) =>
    `'${command}' can write a file (%output{…}, or a format read from a file or only known when it runs)`,

  // --- SQL run by a database client (evaluate-sql.ts, sql-clients.ts) ---------------------
  'sql-judged': (command: string, reason: string) => `'${command}' runs SQL: ${reason}`,
  'sql-read': (command: string) => `'${command}' runs read-only SQL`,
  'sql-no-input': (command: string) => `'${command}' reads no SQL`,
  'sql-from-file': (command: string, file: string) => `'${command}' runs SQL from a file ('${file}'), whose content is not known`,
  'sql-dynamic': (command: string) => `'${command}' runs SQL only known when it runs`,
  'sql-stdin-unknown': (command: string) => `'${command}' reads SQL from its input, which is not known before it runs`,
  'sql-meta-command': (command: string, meta: string) => `'${command}' runs the client command '${meta}', not known to be read-only`,
  'sql-mysql-lexical': (command: string, what: string) => `'${command}' runs MySQL text with ${what}, which is not judged`,
  'sql-duckdb-copy': (command: string) => `'${command}' runs COPY, which may read or write files in DuckDB`,
});
