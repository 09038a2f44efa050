/**
 * Every reason the PowerShell classifier gives, as data keyed by id (as
 * `SHELL_REASONS` is for the shell classifier): one place to read and reword
 * them. A reason that names a command, a parameter or a word is a function of
 * it. The strings are what `Classification.reason` carries after
 * `powershell: `; tests compare them byte for byte.
 */

/** The PowerShell classifier's reasons by id, without their `powershell: ` prefix (DESIGN.md §5.5). */
export const POWERSHELL_REASONS = Object.freeze({
  // --- bad input and the entry point -----------------------------------------
  'not-a-string': 'the script is not a string',
  'script-empty': 'the script is empty',
  'script-too-long': (limit: number) => `the script is longer than ${limit} characters`,
  'nested-too-deep': (limit: number) => `PowerShell is nested more than ${limit} levels deep`,
  'not-judged': 'the script could not be judged',
  'runs-nothing': 'the script runs nothing',

  // --- the tokenizer: what it is not sure of ------------------------------------
  unsure: (what: string) => `${what} is not something this classifier parses`,
  'non-ascii': (code: number) => `the character U+${code.toString(16).toUpperCase().padStart(4, '0')} is not one this classifier reads`,
  'unclosed-quote': 'a quoted string is not closed',
  'unclosed-block': 'a script block is not closed',
  'variable-not-known': (name: string) => `the variable '${name}' is not one this classifier knows to be inert`,
  'word-after-block': 'a script block is written together with other text',

  // --- the powershell / pwsh command line ------------------------------------------
  'cli-no-command': (program: string) => `'${program}' without -Command starts a shell that reads its commands from elsewhere`,
  'cli-stdin': (program: string) => `'${program} -Command -' reads its script from standard input`,
  'cli-option': (program: string, option: string) => `'${program} ${option}' is not an option this classifier knows`,
  'cli-encoded': (program: string) => `'${program}' runs an encoded command`,
  'cli-file': (program: string) => `'${program}' runs a script file`,
  'cli-dynamic': (program: string) => `'${program}' has arguments only known when it runs`,

  // --- statements ----------------------------------------------------------------------
  'call-operator': "the call operator '&' runs a command or script",
  'dot-source': "dot-sourcing ('.') runs a script in the current scope",
  background: "'&' at the end runs the pipeline as a background job",
  keyword: (word: string) => `'${word}' starts a statement this classifier does not judge`,
  'expression-word': (word: string) => `'${word}' in an expression is not something this classifier judges`,
  expression: 'an expression only computes a value',
  'empty-pipeline-element': 'an empty element of a pipeline',
  'block-alone': 'a script block alone',
  'redirect-null': 'output redirected to $null',
  'redirect-stream': 'a stream merged into another',
  'redirect-file': (target: string) => `output redirection to '${target}'`,
  'redirect-no-target': 'a redirection without a file',

  // --- commands ----------------------------------------------------------------------------
  'dynamic-command-name': 'the command name is only known when it runs',
  'program-by-path': (name: string) => `'${name}' runs a program or script by its path`,
  'unknown-command': (name: string) => `'${name}' is not a known read-only cmdlet`,
  'read-verb': (name: string) => `'${name}' is read-only`,
  'write-verb': (name: string) => `'${name}' changes something`,
  destructive: (name: string, parameter: string) => `'${name} ${parameter}' is destructive`,
  'destructive-cmdlet': (name: string) => `'${name}' destroys what it is given (a disk, a partition, the recycle bin)`,
  'dry-run': (name: string) => `'${name} -WhatIf' is a dry run`,
  'location-change': (name: string) => `'${name}' changes only the current location`,
  'unknown-parameter': (name: string, parameter: string) => `'${name} ${parameter}' is not a parameter this classifier knows`,
  'parameter-assigns': (name: string, parameter: string) => `'${name} ${parameter}' assigns a variable this classifier does not follow`,
  'parameter-writes': (name: string, parameter: string) => `'${name} ${parameter}' writes or runs a program`,
  'dynamic-argument': (name: string) => `'${name}' has an argument only known when it runs`,
  'block-argument': (name: string) => `'${name}' runs a script block that is not read-only`,
  'member-argument': (name: string) => `'${name}' with a member name calls it on every input object`,
  'native-unknown': (name: string) => `'${name}' is a native program this classifier cannot judge`,
  'native-argument': (name: string, word: string) => `'${name}' gets an argument PowerShell may pass differently: ${word}`,
  'native-glob': (name: string, word: string) =>
    `'${name}' gets a wildcard not quoted, which pwsh outside Windows expands to file names (that may read as options): ${word}`,
  'native-cmd-syntax': (name: string, word: string) =>
    `'${name}' gets an argument cmd.exe reads as its own syntax when the program is a .cmd shim on Windows: ${word}`,
  'native-not-read': (name: string) => `'${name}' as a native program is not read-only`,
});
