/**
 * The shell command table's format (DESIGN.md §5.5): the zod schemas of a
 * command's rule and of the whole table, the checks a schema cannot state,
 * `parseShellTable`, the shipped table (`src/catalogs/shell-commands.json`,
 * validated on load) and the JSON Schema editors check that file with
 * (`src/catalogs/shell-commands.schema.json`, generated from these schemas by
 * `shellTableJsonSchema`: `npm run shell-schema`).
 */
import { z } from 'zod';
import { CatalogError } from '../../errors/index.js';
import shellCommandsJson from '../../catalogs/shell-commands.json' with { type: 'json' };
import { deepestIssue } from '../../util/zod-issues.js';
import { deepFreeze } from '../../util/deep-freeze.js';

const optionName = z.string().regex(/^--?[^\s=-][^\s=]*$/, "must be an option: '-x', '--long' or '-long' (no spaces, no '=')");
const optionList = z.array(optionName);
const dryRunOption = z
  .string()
  .regex(/^--?[^\s=-][^\s=]*(=\S*)?$/, "must be an option, optionally with '=value': '-n', '--dry-run=client'");
const effectSchema = z
  .enum(['read', 'write', 'destructive', 'exports'])
  .describe(
    "what the option's value does: 'read' (nothing), 'write', 'destructive' (a destructive write), " +
      "'exports' (every later assignment is exported to programs' environment: a write, even in a dry run)",
  );
const optionSetName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "must be a set name: letters, digits, '.', '_', '-'");
const commandName = z.string().regex(/^[^\s/=]+$/, "must be a command name without spaces, '/' or '='");
const subcommandPattern = z
  .string()
  .regex(/^[^\s/=*]*\*[^\s/=*]*$/, "must be a subcommand name with one '*' (any characters, at least one): 'describe-*', '*'");

const scriptSchema = z
  .strictObject({
    language: z
      .enum(['sed', 'awk'])
      .describe("the script language; a script that can write or run programs ('w', 'e', 'system', '>', '|') is a write"),
    options: optionList
      .optional()
      .describe(
        "value options whose value is a script ('-e'); when none of them and no file option is given, the first operand is the script",
      ),
    fileOptions: optionList.optional().describe("value options naming a script file ('-f'): its content is unknown, so a write"),
  })
  .describe('the command runs a script given as an argument (sed, awk), judged by a small checker of that language');

const sqlSchema = z
  .strictObject({
    client: z
      .enum(['psql', 'sqlite3', 'mysql', 'duckdb'])
      .describe(
        "the client, which says how its SQL is read: 'psql' (PostgreSQL; backslash meta-commands), 'sqlite3' (SQLite; dot-commands), " +
          "'duckdb' (read by the PostgreSQL parser; dot-commands; COPY is a write), 'mysql' (read by the SQLite reader once comments, " +
          "backslashes and '#' are refused; SHOW/DESCRIBE of a name are reads)",
      ),
    commandOptions: optionList
      .optional()
      .describe("value options whose value is SQL the client runs before it exits ('psql -c', 'mysql -e'): judged as SQL"),
    initOptions: optionList
      .optional()
      .describe("value options whose value is SQL run before the client reads its input ('sqlite3 -cmd', 'mysql --init-command')"),
    fileOptions: optionList.optional().describe("value options naming a file of SQL ('psql -f'): its content is unknown, so a write"),
    noInputOptions: optionList.optional().describe("options with which the client reads no SQL ('psql -l' lists the databases)"),
    operands: z
      .enum(['database', 'database-then-sql'])
      .optional()
      .describe(
        "'database' (default): operands name the database (and user), not targets; " +
          "'database-then-sql': the first operand is a database file (a path target), the others SQL (sqlite3 db 'SELECT ...')",
      ),
    stdin: z
      .boolean()
      .optional()
      .describe(
        'without SQL given otherwise, it reads SQL from its input: judged when a here-document or here-string gives it, else a write',
      ),
  })
  .describe('the command runs SQL (a database client): its SQL is judged by the SQL classifier, and the tables it names are targets');

/** The kinds of place a rule's `place` names (see `placeSchema`). */
export const PLACE_KINDS = ['cwd', 'git', 'path', 'remote', 'process', 'service', 'container', 'k8s', 'unknown'] as const;

/** One of `PLACE_KINDS`. */
export type PlaceKind = (typeof PLACE_KINDS)[number];

const placeSchema = z
  .strictObject({
    kind: z
      .enum(PLACE_KINDS)
      .describe(
        "what the command changes (a write) or looks at (a read) besides its path operands: 'cwd' (its working directory, " +
          "`.` when none is known, and the directory of the `options`' values: make -f; a target only when it writes: package " +
          "managers, make, test runners, interpreters), 'git' " +
          "(`git:<dir>`, the repository of its working directory; `-C` moves it, the `options`' value replaces it), 'path' (a path " +
          "named by the operands or options below: dd of=, wget -O), 'remote' (the operands below as copy destinations: " +
          "`[user@]host:path` is `host:<user@host>:<path>`, a URL as written, else a local path), 'process' (`process:<name|pid>`), " +
          "'service' (`service:<unit>`, a `.service` suffix dropped), 'container' (`container:<name>`), 'k8s' (the first operand " +
          'is a resource type, or `type/name` operands: `k8s:<type>/<name>`, aliases normalised), ' +
          "'unknown' (it runs code that may change anything: an unknown place named by the command, `?/npm exec`, only when it writes)",
      ),
    names: z
      .enum(['none', 'operands', 'first', 'last', 'rest'])
      .optional()
      .describe(
        "which operands (after the rule's `skipOperands`) name places: 'none' (default), 'operands' (every one), 'first', 'last' " +
          "(a copy's destination), 'rest' (all but the first: split's PREFIX)",
      ),
    options: optionList.optional().describe("value options whose value names a place ('wget -O FILE', 'taskkill -IM NAME')"),
    prefixes: z
      .array(z.string().min(1))
      .optional()
      .describe("only operands starting with one of these name a place, the prefix cut off ('dd of=FILE')"),
    parent: z.boolean().optional().describe("the place is the directory holding the named path ('split IN PREFIX' writes beside PREFIX)"),
    sourceOptions: optionList
      .optional()
      .describe(
        "kind 'remote': with one of these options the other operands (the sources) are places too ('rsync --remove-source-files' deletes them)",
      ),
    paths: z
      .record(optionName, z.array(z.string().min(1)).min(1))
      .optional()
      .describe("options without a value that name fixed paths ('git config --global' writes '~/.gitconfig'), added to the place"),
    whenOptions: optionList
      .optional()
      .describe(
        "the place is named only when one of these options is given ('tar -x' extracts into its directory); a first operand of " +
          "letters holding a one-letter option's letter counts (tar's old style 'xf')",
      ),
    writeOnly: z
      .boolean()
      .optional()
      .describe("the place is a target only when the command writes ('unzip -l a.zip' lists, it does not read the directory)"),
    stdinCode: z
      .boolean()
      .optional()
      .describe(
        "kind 'cwd': with no script operand, or '-', the program runs code it reads from its input ('curl … | python3'): an " +
          'unknown place besides the working directory',
      ),
    unnamed: z
      .enum(['all', 'cwd', 'none', 'repository'])
      .optional()
      .describe(
        "the target when nothing names a place: 'all' (`<kind>:*`, default for process, service, container, k8s: `ps`, `docker ps`), " +
          "'cwd' (the working directory: wget, split), 'none' (default for path and remote: none, so a write gets an unknown place), " +
          "'repository' (the directory named after the first operand's last segment, '.git' dropped, under the working directory: " +
          'git clone URL)',
      ),
  })
  .describe(
    'the place a command changes or reads that its path operands do not name (issue #24: every write names its target): ' +
      'added to its targets (a `cwd` place only when it writes); a name only known when it runs is an unknown place (`?/…`)',
  );

const runSchema = z
  .strictObject({
    mode: z
      .enum(['argv', 'shell', 'eval', 'exec'])
      .optional()
      .describe(
        "how the command to run is found. 'argv' (default): the words after the wrapper's options (sudo, env, timeout, xargs). " +
          "'shell': with the option `shellOption`, the first operand is a shell script, parsed again (bash -c); without it, a write. " +
          "'eval': the operands joined by spaces are a shell script. " +
          "'exec': each option of `execOptions` starts a command that ends at ';' or at '{}' '+' (find -exec).",
      ),
    self: z
      .enum(['read', 'write'])
      .optional()
      .describe("what the wrapper itself does besides running the command (nohup writes nohup.out); default 'read'"),
    skipOperands: z.int().min(0).max(8).optional().describe('operands before the command that are not part of it (timeout DURATION)'),
    assignments: z.boolean().optional().describe('NAME=value operands before the command set its environment (env)'),
    unlessOptions: optionList.optional().describe('with one of these options nothing is run and it is a read (command -v)'),
    appendsArguments: z.boolean().optional().describe('the command gets more arguments only known when it runs (xargs)'),
    defaultCommand: z.array(commandName).min(1).optional().describe('the command run when none is given (xargs runs echo)'),
    replaceOptions: optionList
      .optional()
      .describe("options whose value (default '{}') the command's words contain, replaced by input only known when it runs (xargs -I)"),
    shellOption: optionName.optional().describe("mode 'shell': the option that makes the first operand a script; default '-c'"),
    execOptions: optionList.optional().describe("mode 'exec': the options that start a command"),
  })
  .describe('the command runs another command (a wrapper), which is judged in turn');

/** A command's rule in the shell command table (see `shellTableSchema`). */
export interface ShellCommandRule {
  description?: string;
  read?: boolean;
  destructive?: boolean;
  optionStyle?: 'gnu' | 'single-dash';
  flags?: string[];
  valueOptions?: string[];
  twoValueOptions?: string[];
  optionalValueOptions?: string[];
  inertOptions?: boolean;
  optionsFirst?: boolean;
  globalOptions?: boolean;
  writeOptions?: string[];
  execOptions?: string[];
  dryRunWriteOptions?: string[];
  exportOptions?: string[];
  destructiveOptions?: string[];
  unknownPlaceOptions?: string[];
  dryRunOptions?: string[];
  optionValues?: Record<string, Record<string, 'read' | 'write' | 'destructive' | 'exports'>>;
  pathOptions?: string[];
  cwdOptions?: string[];
  infoOptions?: string[];
  operands?: 'paths' | 'after-double-dash' | 'leading' | 'none';
  skipOperands?: number;
  patternOptions?: string[];
  defaultPath?: string;
  maxOperands?: number;
  listOptions?: string[];
  ignoredOperandPrefixes?: string[];
  writesOperands?: boolean;
  assignsOperands?: boolean;
  destructiveOperandPrefixes?: string[];
  remoteOperands?: boolean;
  readLastOperands?: string[];
  anySubcommand?: boolean;
  script?: z.infer<typeof scriptSchema>;
  run?: z.infer<typeof runSchema>;
  sql?: z.infer<typeof sqlSchema>;
  place?: z.infer<typeof placeSchema>;
  use?: string[];
  subcommands?: Record<string, ShellCommandRule>;
  subcommandPatterns?: Record<string, ShellCommandRule>;
}

const ruleShape = {
  description: z.string().optional().describe('what the command is, for readers of the table'),
  read: z
    .boolean()
    .optional()
    .describe('the command is read-only when none of its options or operands says otherwise; default false (a write)'),
  destructive: z
    .boolean()
    .optional()
    .describe('running it (as a write) is destructive: it deletes or overwrites what cannot be had back (dd, shred, git clean)'),
  optionStyle: z
    .enum(['gnu', 'single-dash'])
    .optional()
    .describe(
      "'gnu' (default): '-abc' is '-a -b -c', '--long=value', '--long value', unambiguous '--lo' abbreviates '--long'; " +
        "'single-dash': every word starting with '-' is one option, '--x' is '-x', '-x=value' (find, terraform)",
    ),
  flags: optionList
    .optional()
    .describe('read-only options without a value; an option the rule does not list anywhere makes the command a write'),
  valueOptions: optionList
    .optional()
    .describe(
      "options that take the next word as value ('-C dir'), also attached ('-Cdir', '--opt=value'): read-only unless " +
        'another field says otherwise (writeOptions, execOptions, optionValues, pathOptions …)',
    ),
  twoValueOptions: optionList.optional().describe("options that take the next two words ('jq --arg name value')"),
  optionalValueOptions: optionList
    .optional()
    .describe("read-only options whose value is optional and only ever attached ('date -Iseconds', '--color=always'), never the next word"),
  inertOptions: z
    .boolean()
    .optional()
    .describe(
      'no option the program has (in any version) writes, runs a program or sends data anywhere: a word only known when it runs ' +
        '(a glob like \'*.ts\', "$f") may then be an option without making a write. Every option the rule does not list is a ' +
        'write all the same; only words that cannot be told apart are let through',
    ),
  optionsFirst: z
    .boolean()
    .optional()
    .describe(
      "options end at the first operand, as with bash's builtins and POSIX getopt ('printf FORMAT \"$x\"'): a later word only known " +
        'when it runs is an operand, not an option',
    ),
  globalOptions: z
    .boolean()
    .optional()
    .describe("its options may also follow a subcommand ('kubectl get pods --kubeconfig x'): every subcommand takes them too"),
  writeOptions: optionList.optional().describe("options that make the command a write ('sed -i', 'sort -o'); a dry run overrides them"),
  execOptions: optionList
    .optional()
    .describe("options that make it run another program ('rsync -e', 'tar -I', 'rg --pre'): a write, even in a dry run"),
  dryRunWriteOptions: optionList
    .optional()
    .describe("options that write even in a dry run ('patch --dry-run -o FILE' still writes FILE): a write, even in a dry run"),
  exportOptions: optionList
    .optional()
    .describe(
      "options that export every later assignment to the environment of the programs run ('set -a', 'bash -a'): a write, even in a dry run",
    ),
  destructiveOptions: optionList.optional().describe("options that make it a destructive write ('rm -r', 'git push --force')"),
  unknownPlaceOptions: optionList
    .optional()
    .describe(
      'options that make what it changes a place only known when it runs (a remote daemon or host, a program it runs, a config ' +
        "key: 'docker -H', 'git -c alias.x=!cmd'): an unknown place, named by the option and its value's key; one with " +
        '`optionValues` only when its value is not a read',
    ),
  dryRunOptions: z
    .array(dryRunOption)
    .optional()
    .describe("options that make it only show what it would do, a read ('git clean -n', 'kubectl apply --dry-run=client')"),
  optionValues: z
    .record(optionName, z.record(z.string(), effectSchema))
    .optional()
    .describe(
      "value options whose value decides: option to { value (case-insensitive): effect }, '*' for any other value " +
        "('curl -X': GET read, DELETE destructive, '*' write); a value not listed and no '*' is a write",
    ),
  pathOptions: optionList.optional().describe("value options whose value is a path target ('sort -o FILE', 'tar -f ARCHIVE')"),
  cwdOptions: optionList
    .optional()
    .describe(
      "value options naming the directory the command works in ('git -C', 'make -C'): a target, and relative operands are resolved against it",
    ),
  infoOptions: optionList.optional().describe("options that, given alone, make it a read ('--version', '--help')"),
  operands: z
    .enum(['paths', 'after-double-dash', 'leading', 'none'])
    .optional()
    .describe(
      "which operands are path targets: 'paths' (default, all), 'after-double-dash' (only after '--'; before it they may be revisions), " +
        "'leading' (those before the first option or '(' '!' ',' ')': find's starting points), 'none'",
    ),
  skipOperands: z.int().min(0).max(8).optional().describe("leading operands that are not paths ('grep PATTERN', 'chmod MODE')"),
  patternOptions: optionList.optional().describe("value options that take the place of the skipped operands ('grep -e PATTERN')"),
  defaultPath: z.string().min(1).optional().describe("the path target when no path operand is given ('ls' lists '.')"),
  maxOperands: z
    .int()
    .min(0)
    .optional()
    .describe("more operands than this make it a write ('git branch NAME' creates a branch; 'uniq IN OUT' writes OUT)"),
  listOptions: optionList.optional().describe("options under which `maxOperands` does not apply ('git branch --list PATTERN')"),
  ignoredOperandPrefixes: z
    .array(z.string().min(1))
    .optional()
    .describe("operands starting with one of these do not count toward `maxOperands` ('date +%s')"),
  writesOperands: z.boolean().optional().describe('its path operands are written (tee): a write unless every one is a null device'),
  assignsOperands: z
    .boolean()
    .optional()
    .describe('its operands name shell variables it sets (read, let): an assignment to a listed variable is a write'),
  destructiveOperandPrefixes: z
    .array(z.string().min(1))
    .optional()
    .describe("an operand starting with one of these is destructive ('git push origin +main', ':branch')"),
  remoteOperands: z.boolean().optional().describe('operands like HOST:PATH or a URL are on another machine, not path targets (rsync, scp)'),
  anySubcommand: z
    .boolean()
    .optional()
    .describe(
      "a subcommand the table does not list may run any program (a user's alias: 'git x', 'git submodule foreach CMD'): besides " +
        'a write, an unknown place named by the command',
    ),
  readLastOperands: z
    .array(z.string().min(1))
    .optional()
    .describe("the command is a read when its last operand is one of these ('service NAME status'), unless its options say otherwise"),
  script: scriptSchema.optional(),
  run: runSchema.optional(),
  sql: sqlSchema.optional(),
  place: placeSchema.optional(),
  use: z
    .array(optionSetName)
    .optional()
    .describe("names of the table's `optionSets` whose lists are added to this rule's own ('git log' uses 'git-log-options')"),
};

/** The fields of a rule that list options, which a named option set may hold (`optionSets`). */
const OPTION_LIST_FIELDS = [
  'flags',
  'valueOptions',
  'twoValueOptions',
  'optionalValueOptions',
  'writeOptions',
  'execOptions',
  'dryRunWriteOptions',
  'exportOptions',
  'destructiveOptions',
  'unknownPlaceOptions',
  'dryRunOptions',
  'pathOptions',
  'cwdOptions',
  'infoOptions',
  'patternOptions',
  'listOptions',
] as const;

/** A rule field that lists options (see `OPTION_LIST_FIELDS`). */
type OptionListField = (typeof OPTION_LIST_FIELDS)[number];

/**
 * A named, shared list of options (DESIGN.md §5.5): any of a rule's option
 * lists, added to every rule that names the set in its `use`. Sets are flat:
 * a set cannot use another.
 */
export type OptionSet = { description?: string } & Pick<ShellCommandRule, OptionListField>;

const optionSetSchema = z
  .strictObject({
    description: z.string().optional().describe('what the options are, for readers of the table'),
    ...(Object.fromEntries(OPTION_LIST_FIELDS.map((field) => [field, ruleShape[field]])) as Pick<typeof ruleShape, OptionListField>),
    use: z
      .never({ error: 'an option set cannot use another (sets are flat: list the options, or use both sets in the rule)' })
      .optional()
      .describe('not allowed: an option set cannot use another'),
  })
  .describe("named option lists that rules add to their own with `use` (git's log and diff options)");

/**
 * A rule with the lists of the option sets it `use`s added to its own (its
 * own come first), and without `use`; the rule itself when it uses none.
 * Subcommands are left as they are (each merges its own sets when compiled
 * or checked). DESIGN.md §5.5.
 *
 * @param sets the table's `optionSets` (a set the rule names but `sets` lacks
 *   adds nothing: `parseShellTable` refuses such a table first).
 */
export function withOptionSets(rule: ShellCommandRule, sets: Readonly<Record<string, OptionSet>>): ShellCommandRule {
  if (rule.use === undefined) return rule;
  const { use, ...merged } = rule;
  for (const name of use) {
    const set = Object.prototype.hasOwnProperty.call(sets, name) ? sets[name] : undefined;
    if (set === undefined) continue;
    for (const field of OPTION_LIST_FIELDS) {
      const list = set[field];
      if (list !== undefined) merged[field] = [...(merged[field] ?? []), ...list];
    }
  }
  return merged;
}

/** The zod schema of one command's rule; recursive through `subcommands`. */
export const shellCommandRuleSchema: z.ZodType<ShellCommandRule> = z
  .strictObject({
    ...ruleShape,
    get subcommands(): z.ZodOptional<z.ZodRecord<z.ZodString, z.ZodType<ShellCommandRule>>> {
      return z
        .record(commandName, shellCommandRuleSchema)
        .optional()
        .describe("subcommand (the first operand) to its rule ('git status'); an operand not listed is a write");
    },
    get subcommandPatterns(): z.ZodOptional<z.ZodRecord<z.ZodString, z.ZodType<ShellCommandRule>>> {
      return z
        .record(subcommandPattern, shellCommandRuleSchema)
        .optional()
        .describe(
          "subcommand name pattern to its rule ('aws ec2 describe-*'), for a subcommand not in `subcommands`; '*' stands for " +
            'one or more characters; the longest pattern that matches wins (then the first listed)',
        );
    },
  })
  .describe('how one command (or subcommand) is judged');

/**
 * The JSON schema of a shell command table (DESIGN.md §5.5), as a zod schema:
 *
 * ```
 * { description?, optionSets?: { [set]: option lists }, commands: { [name]: rule | "<other name>" },
 *   trustedDirectories, nullDevices, variables, inertVariables? }
 * ```
 *
 * A rule says whether the command is read-only and which options, option
 * values and operands make it a write or destructive, which operands are
 * paths, its subcommands (recursively), and whether it runs another command
 * (`run`). A string instead of a rule names another command with the same
 * rule (`"egrep": "grep"`). A rule's `use` names option sets whose lists are
 * added to its own (option lists many rules repeat, such as git's diff
 * options). Validated with `parseShellTable`.
 */
export const shellTableSchema = z
  .strictObject({
    description: z.string().optional().describe('what the table is, for readers'),
    optionSets: z
      .record(optionSetName, optionSetSchema)
      .optional()
      .describe('named option lists shared by rules: a rule adds a set\'s lists to its own with `use: ["<name>"]`'),
    commands: z
      .record(commandName, z.union([commandName, shellCommandRuleSchema]))
      .describe('command name to its rule, or to the name of a command with the same rule; any other command is a write'),
    trustedDirectories: z
      .array(z.string().regex(/^\/\S*$/, 'must be an absolute directory'))
      .describe("a command run by a path in one of these directories ('/usr/bin/ls') is judged by its name; any other path is a write"),
    nullDevices: z.array(z.string().min(1)).describe("redirection targets that write nothing that stays ('/dev/null', '/dev/stderr')"),
    variables: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*\*?$/, "must be a variable name, or a prefix ending in '*'"), z.array(z.string()))
      .describe(
        "variables whose assignment can change which program runs or what it runs ('PATH', 'LD_*', 'GIT_*'): " +
          'an assignment (X=v cmd, env X=v, export, bare) is a write unless the value is listed (PAGER: ["cat"])',
      ),
    inertVariables: z
      .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*\*?$/, "must be a variable name, or a prefix ending in '*'"))
      .optional()
      .describe(
        "variables known to change nothing but how programs format what they print ('LANG', 'LC_*', 'NO_COLOR'): " +
          'put in the environment of programs (X=v cmd, export, env X=v, declare -x), any other variable is a write; default none',
      ),
  })
  .describe('the shell command table: which commands, subcommands and options are read-only, write or destructive');

/** A shell command table (the JSON shape of `src/catalogs/shell-commands.json`); see `shellTableSchema`. */
export type ShellTable = z.infer<typeof shellTableSchema>;

/** A table as a file holds it: the table, and the `$schema` key an editor reads, ignored. */
const shellTableFileSchema = shellTableSchema.extend({
  $schema: z.string().optional().describe('The JSON Schema an editor completes the file with; ignored.'),
});

/** Checks of a rule that a schema cannot state: options used by a field must be value options, and so on. */
function ruleProblems(
  given: ShellCommandRule,
  path: (string | number)[],
  sets: Readonly<Record<string, OptionSet>>,
): { path: (string | number)[]; message: string } | null {
  const missing = (given.use ?? []).findIndex((name) => !Object.prototype.hasOwnProperty.call(sets, name));
  if (missing >= 0) {
    return { path: [...path, 'use', missing], message: `no option set '${given.use![missing]}' in optionSets` };
  }
  const rule = withOptionSets(given, sets);
  const values = new Set([...(rule.valueOptions ?? []), ...(rule.twoValueOptions ?? [])]);
  const mustTakeValue: [keyof ShellCommandRule, string[]][] = [
    ['pathOptions', rule.pathOptions ?? []],
    ['cwdOptions', rule.cwdOptions ?? []],
    ['optionValues', Object.keys(rule.optionValues ?? {})],
    ['place', rule.place?.options ?? []],
  ];
  if (rule.script !== undefined) {
    mustTakeValue.push(['script', [...(rule.script.options ?? []), ...(rule.script.fileOptions ?? [])]]);
  }
  if (rule.sql !== undefined) {
    const sql = rule.sql;
    mustTakeValue.push(['sql', [...(sql.commandOptions ?? []), ...(sql.initOptions ?? []), ...(sql.fileOptions ?? [])]]);
  }
  for (const [field, options] of mustTakeValue) {
    for (const option of options) {
      if (!values.has(option)) {
        return { path: [...path, field, option], message: `'${option}' must also be listed in valueOptions (it takes a value)` };
      }
    }
  }
  if (rule.inertOptions === true) {
    const writing = (
      [
        'writeOptions',
        'execOptions',
        'dryRunWriteOptions',
        'exportOptions',
        'destructiveOptions',
        'optionValues',
        'script',
        'run',
        'sql',
      ] as const
    ).find((field) => rule[field] !== undefined);
    if (writing !== undefined) return { path: [...path, 'inertOptions'], message: `a rule with inertOptions cannot have ${writing}` };
  }
  if (rule.sql !== undefined && (rule.run !== undefined || rule.subcommands !== undefined || rule.script !== undefined)) {
    return { path: [...path, 'sql'], message: 'a rule that runs SQL cannot also run a command, a script or have subcommands' };
  }
  if (rule.run !== undefined && (rule.subcommands !== undefined || rule.subcommandPatterns !== undefined)) {
    return { path: [...path, 'run'], message: 'a rule cannot both run a command and have subcommands' };
  }
  if (rule.run?.mode === 'exec' && (rule.run.execOptions ?? []).length === 0) {
    return { path: [...path, 'run', 'execOptions'], message: "mode 'exec' needs at least one exec option" };
  }
  for (const field of ['subcommands', 'subcommandPatterns'] as const) {
    for (const [name, sub] of Object.entries(rule[field] ?? {})) {
      const problem = ruleProblems(sub, [...path, field, name], sets);
      if (problem !== null) return problem;
    }
  }
  return null;
}

/**
 * Validates a shell command table (any JSON value) and returns it typed
 * (DESIGN.md §5.5). A `"$schema"` key (a string: the JSON Schema an editor
 * reads) is accepted and left out of the result.
 *
 * @param source where the table comes from, for the message (a file path).
 * @throws CatalogError naming the first bad entry by its path, e.g.
 *   `shell table: commands.sed.writeOptions.0: must be an option ...`, an
 *   alias to a command that is not a rule, an option a field uses that is
 *   not a value option (checked with the rule's option sets added), a `use`
 *   naming no set of `optionSets` (`commands.git.subcommands.log.use.0: no
 *   option set 'x' in optionSets`), or a set that uses another
 *   (`optionSets.x.use`).
 */
export function parseShellTable(input: unknown, source?: string): ShellTable {
  const where = source === undefined ? 'shell table' : `shell table ${source}`;
  const result = shellTableFileSchema.safeParse(input);
  if (!result.success) {
    const issue = deepestIssue(result.error.issues[0]!);
    const path = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p)) as (string | number)[];
    throw new CatalogError(`${where}: ${path.join('.') || '(root)'}: ${issue.message}`, path);
  }
  for (const [name, rule] of Object.entries(result.data.commands)) {
    if (typeof rule === 'string') {
      const target = Object.prototype.hasOwnProperty.call(result.data.commands, rule) ? result.data.commands[rule] : undefined;
      if (typeof target !== 'object') {
        throw new CatalogError(`${where}: commands.${name}: '${rule}' must be a command of the table with a rule (not another alias)`, [
          'commands',
          name,
        ]);
      }
      continue;
    }
    const problem = ruleProblems(rule, ['commands', name], result.data.optionSets ?? {});
    if (problem !== null) throw new CatalogError(`${where}: ${problem.path.join('.')}: ${problem.message}`, problem.path);
  }
  const { $schema: _schema, ...table } = result.data;
  return table;
}

/**
 * The shipped table's JSON without its `$schema` key: what `parseShellTable`
 * gives for it. It is not parsed on load (the schema would cost a fresh
 * process most of its start: issue 25 item 7); the tests check that parsing
 * the shipped file gives exactly this object, so it is valid as shipped.
 */
function shippedTable(json: unknown): ShellTable {
  const { $schema: _schema, ...table } = json as ShellTable & { $schema?: string };
  return table;
}

/**
 * The default shell command table, `src/catalogs/shell-commands.json`,
 * deeply frozen (copy it to derive another table). Valid as shipped: the
 * tests parse the file with `parseShellTable` and compare (`shippedTable`).
 */
export const defaultShellTable: ShellTable = deepFreeze(shippedTable(shellCommandsJson));

/**
 * The shell command table's format as a JSON Schema (draft 2020-12),
 * generated from `shellTableSchema` (plus the ignored `$schema` key), for
 * editors to complete and check `src/catalogs/shell-commands.json`
 * (`"$schema": "./shell-commands.schema.json"`). The shipped copy is
 * `src/catalogs/shell-commands.schema.json` (`npm run shell-schema` writes
 * it). What a JSON Schema cannot say (options a field uses must be value
 * options, aliases name a rule) is checked on load by `parseShellTable`.
 */
export function shellTableJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(shellTableFileSchema, { io: 'input', unrepresentable: 'any' }),
    title: 'pulse-safety-fsm shell command table',
  };
}
