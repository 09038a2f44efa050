/**
 * The command table compiled for judging: each rule's option lists turned
 * into sets and maps, aliases pointing at their rule, the trusted
 * directories normalized, and what an argument only known when it runs could
 * make of a command (`sensitive`, `mayBeDestructive`). Compiled once per
 * table object (a WeakMap), since a table is validated and compiled on first
 * use and shared by every call after.
 */
import { posix } from 'node:path';
import {
  defaultShellTable,
  parseShellTable,
  withOptionSets,
  type PlaceKind,
  type OptionSet,
  type ShellCommandRule,
  type ShellTable,
} from './table-schema.js';

/** What an option's value does: nothing, a write, a destructive write. */
export type Effect = 'read' | 'write' | 'destructive' | 'exports';

/** A rule's `run` (see the table schema's `run`), compiled: how the wrapped command is found. */
export interface CompiledRun {
  mode: 'argv' | 'shell' | 'eval' | 'exec';
  selfWrites: boolean;
  skipOperands: number;
  assignments: boolean;
  unless: Set<string>;
  appendsArguments: boolean;
  replace: Set<string>;
  defaultCommand: string[] | null;
  shellOption: string;
  exec: Set<string>;
}

/** A rule's `sql` (see the table schema's `sql`), compiled: where the SQL a database client runs comes from. */
export interface CompiledSql {
  client: 'psql' | 'sqlite3' | 'mysql' | 'duckdb';
  commands: Set<string>;
  inits: Set<string>;
  files: Set<string>;
  noInput: Set<string>;
  /** The first operand is a database file, the others SQL. */
  sqlOperands: boolean;
  stdin: boolean;
}

/** A rule's `place` (see the table schema's `place`), compiled: the place it changes or reads besides its path operands. */
export interface CompiledPlace {
  kind: PlaceKind;
  names: 'none' | 'operands' | 'first' | 'last' | 'rest';
  options: Set<string>;
  prefixes: string[];
  parent: boolean;
  /** Kind `remote`: options with which the other operands (the sources) are places too (`sourceOptions`). */
  sources: Set<string>;
  /** Flags naming fixed paths (`paths`): option to paths. */
  paths: Map<string, string[]>;
  /** The place is named only with one of these options (`whenOptions`); null: always. */
  when: Set<string> | null;
  /** The place is a target only when the command writes (`writeOnly`). */
  writeOnly: boolean;
  /** Kind `cwd`: without a script operand (or with `-`) it runs code from its input (`stdinCode`). */
  stdinCode: boolean;
  unnamed: 'all' | 'cwd' | 'none' | 'repository';
}

/** A `subcommandPatterns` entry compiled: the text before and after its `*`, and its rule. */
export interface SubcommandPattern {
  prefix: string;
  suffix: string;
  rule: CompiledRule;
}

/** A rule compiled: its option lists as sets, its subcommands compiled in turn. */
export interface CompiledRule {
  read: boolean;
  destructive: boolean;
  singleDash: boolean;
  /** Every option the rule names, for strictness and abbreviations. */
  known: Set<string>;
  /** Known long options (`--x`), for GNU abbreviations. */
  longs: string[];
  flags: Set<string>;
  value: Set<string>;
  twoValue: Set<string>;
  /** Options whose value is optional and only attached (`-Iseconds`, `--color=always`). */
  optionalValue: Set<string>;
  /** No option of the program writes: a word only known when it runs may be one (`inertOptions`). */
  inert: boolean;
  /** Options end at the first operand (`optionsFirst`). */
  optionsFirst: boolean;
  write: Set<string>;
  exec: Set<string>;
  /** Options that write even in a dry run (`dryRunWriteOptions`). */
  dryRunWrite: Set<string>;
  /** Options that export every later assignment (`exportOptions`). */
  exports: Set<string>;
  destructiveOptions: Set<string>;
  /** Options that make its place one only known when it runs (`unknownPlaceOptions`). */
  unknownPlace: Set<string>;
  dryRun: Set<string>;
  /** The option names of `dryRun` (without values). */
  dryRunNames: Set<string>;
  /** Options that write, run programs, are destructive or have values that decide. */
  risky: Set<string>;
  optionValues: Map<string, Map<string, Effect>>;
  path: Set<string>;
  cwd: Set<string>;
  info: Set<string>;
  operands: 'paths' | 'after-double-dash' | 'leading' | 'none';
  skip: number;
  pattern: Set<string>;
  defaultPath: string | null;
  maxOperands: number | null;
  list: Set<string>;
  ignoredPrefixes: string[];
  writesOperands: boolean;
  assignsOperands: boolean;
  destructivePrefixes: string[];
  remoteOperands: boolean;
  /** A subcommand it does not know may run any program (`anySubcommand`). */
  anySubcommand: boolean;
  /** Last operands that make it a read (`readLastOperands`). */
  readLast: Set<string>;
  script: { language: 'sed' | 'awk'; options: Set<string>; files: Set<string> } | null;
  run: CompiledRun | null;
  sql: CompiledSql | null;
  /** The place it changes or reads besides its path operands (`place`); null when the rule names none. */
  place: CompiledPlace | null;
  /** Its subcommands by name; an empty map when it has only `subcommandPatterns`; null when it has neither. */
  subcommands: Map<string, CompiledRule> | null;
  /** Its `subcommandPatterns`, longest first: a name matches when it is longer than both parts and has them at its ends. */
  subcommandPatterns: SubcommandPattern[];
  /** An argument only known when it runs could make it write. */
  sensitive: boolean;
  /** An argument only known when it runs could make it destructive. */
  mayBeDestructive: boolean;
}

/** A table compiled: rules by command name (aliases included), trusted directories, null devices, listed variables. */
export interface CompiledTable {
  id: number;
  /** The rules by command name (aliases give their rule), each compiled when first asked for (`lazyRules`). */
  commands: RuleLookup;
  trusted: Set<string>;
  nullDevices: Set<string>;
  variables: Map<string, Set<string>>;
  variablePrefixes: [string, Set<string>][];
  /** Variables known to be inert in programs' environment, and the prefixes of such (`LC_*` as `LC_`). */
  inertVariables: Set<string>;
  inertPrefixes: string[];
}

/** A subcommand's rule with its parent's options added (`globalOptions`: they may follow the subcommand). */
function withGlobalOptions(rule: ShellCommandRule, parent: ShellCommandRule): ShellCommandRule {
  const both = (
    key:
      | 'flags'
      | 'valueOptions'
      | 'writeOptions'
      | 'execOptions'
      | 'dryRunWriteOptions'
      | 'exportOptions'
      | 'pathOptions'
      | 'cwdOptions'
      | 'unknownPlaceOptions',
  ) => [...(parent[key] ?? []), ...(rule[key] ?? [])];
  return {
    ...rule,
    globalOptions: true,
    flags: both('flags'),
    valueOptions: both('valueOptions'),
    writeOptions: both('writeOptions'),
    execOptions: both('execOptions'),
    dryRunWriteOptions: both('dryRunWriteOptions'),
    exportOptions: both('exportOptions'),
    pathOptions: both('pathOptions'),
    cwdOptions: both('cwdOptions'),
    unknownPlaceOptions: both('unknownPlaceOptions'),
    optionValues: { ...parent.optionValues, ...rule.optionValues },
  };
}

const set = (list: string[] | undefined) => new Set(list ?? []);

/** A rule's `run`, compiled; null when the rule runs no other command. */
function compileRun(run: ShellCommandRule['run']): CompiledRun | null {
  if (run === undefined) return null;
  return {
    mode: run.mode ?? 'argv',
    selfWrites: run.self === 'write',
    skipOperands: run.skipOperands ?? 0,
    assignments: run.assignments === true,
    unless: set(run.unlessOptions),
    appendsArguments: run.appendsArguments === true,
    replace: set(run.replaceOptions),
    defaultCommand: run.defaultCommand ?? null,
    shellOption: run.shellOption ?? '-c',
    exec: set(run.execOptions),
  };
}

/** A rule's `sql`, compiled; null when the rule runs no SQL. */
function compileSql(sql: ShellCommandRule['sql']): CompiledSql | null {
  if (sql === undefined) return null;
  return {
    client: sql.client,
    commands: set(sql.commandOptions),
    inits: set(sql.initOptions),
    files: set(sql.fileOptions),
    noInput: set(sql.noInputOptions),
    sqlOperands: sql.operands === 'database-then-sql',
    stdin: sql.stdin === true,
  };
}

/** A rule's `place`, compiled with its defaults; null when the rule names none. */
function compilePlace(place: ShellCommandRule['place']): CompiledPlace | null {
  if (place === undefined) return null;
  const pathLike = place.kind === 'path' || place.kind === 'remote' || place.kind === 'cwd';
  return {
    kind: place.kind,
    names: place.names ?? 'none',
    options: set(place.options),
    prefixes: place.prefixes ?? [],
    parent: place.parent === true,
    sources: set(place.sourceOptions),
    paths: new Map(Object.entries(place.paths ?? {})),
    when: place.whenOptions === undefined ? null : set(place.whenOptions),
    writeOnly: place.writeOnly === true,
    stdinCode: place.stdinCode === true,
    unnamed: place.unnamed ?? (pathLike ? 'none' : 'all'),
  };
}

/** `optionValues` as option to { value upper-cased and trimmed (or `*`): effect }. */
function compileOptionValues(rule: ShellCommandRule): Map<string, Map<string, Effect>> {
  const optionValues = new Map<string, Map<string, Effect>>();
  for (const [option, values] of Object.entries(rule.optionValues ?? {})) {
    optionValues.set(
      option,
      new Map(Object.entries(values).map(([value, effect]) => [value === '*' ? '*' : value.trim().toUpperCase(), effect])),
    );
  }
  return optionValues;
}

/** Every option the rule names anywhere (`dryRunNames`: its dry-run options without their values). */
function knownOptions(rule: ShellCommandRule, dryRunNames: string[]): Set<string> {
  const run = rule.run;
  return new Set<string>([
    ...(rule.flags ?? []),
    ...(rule.valueOptions ?? []),
    ...(rule.twoValueOptions ?? []),
    ...(rule.optionalValueOptions ?? []),
    ...(rule.writeOptions ?? []),
    ...(rule.execOptions ?? []),
    ...(rule.dryRunWriteOptions ?? []),
    ...(rule.exportOptions ?? []),
    ...(rule.destructiveOptions ?? []),
    ...dryRunNames,
    ...Object.keys(rule.optionValues ?? {}),
    ...(rule.pathOptions ?? []),
    ...(rule.cwdOptions ?? []),
    ...(rule.infoOptions ?? []),
    ...(rule.patternOptions ?? []),
    ...(rule.listOptions ?? []),
    ...(run?.unlessOptions ?? []),
    ...(rule.sql?.noInputOptions ?? []),
    ...(run?.execOptions ?? []),
    ...(run?.replaceOptions ?? []),
    ...(run?.shellOption !== undefined ? [run.shellOption] : run?.mode === 'shell' ? ['-c'] : []),
  ]);
}

/** A subcommand's rule compiled, with the parent's options under `globalOptions`. */
function compileSubcommand(sub: ShellCommandRule, parent: ShellCommandRule, sets: OptionSets): CompiledRule {
  return compileRule(parent.globalOptions === true ? withGlobalOptions(sub, parent) : sub, sets);
}

/** The subcommands' rules, compiled; an empty map when there are only patterns; null when there are none. */
function compileSubcommands(rule: ShellCommandRule, sets: OptionSets): Map<string, CompiledRule> | null {
  if (rule.subcommands === undefined && rule.subcommandPatterns === undefined) return null;
  return new Map(Object.entries(rule.subcommands ?? {}).map(([name, sub]) => [name, compileSubcommand(sub, rule, sets)]));
}

/** The `subcommandPatterns`, compiled, longest pattern first (a stable sort keeps the table's order among equals). */
function compileSubcommandPatterns(rule: ShellCommandRule, sets: OptionSets): SubcommandPattern[] {
  return Object.entries(rule.subcommandPatterns ?? {})
    .map(([pattern, sub]) => {
      const star = pattern.indexOf('*');
      return { prefix: pattern.slice(0, star), suffix: pattern.slice(star + 1), rule: compileSubcommand(sub, rule, sets) };
    })
    .sort((a, b) => b.prefix.length + b.suffix.length - (a.prefix.length + a.suffix.length));
}

/**
 * The rule of a subcommand name (DESIGN.md §5.5): the one `subcommands`
 * lists under that name, else that of the longest `subcommandPatterns`
 * entry it matches (`*` is one or more characters); undefined when none.
 */
export function subcommandRule(rule: CompiledRule, name: string): CompiledRule | undefined {
  const named = rule.subcommands?.get(name);
  if (named !== undefined) return named;
  return rule.subcommandPatterns.find(
    (p) => name.length > p.prefix.length + p.suffix.length && name.startsWith(p.prefix) && name.endsWith(p.suffix),
  )?.rule;
}

/** Sets what an argument only known when it runs could make of the command: `mayBeDestructive`, then `sensitive`. */
function markSensitivity(compiled: CompiledRule): void {
  compiled.mayBeDestructive =
    compiled.destructiveOptions.size > 0 ||
    compiled.destructivePrefixes.length > 0 ||
    [...compiled.optionValues.values()].some((values) => [...values.values()].includes('destructive'));
  compiled.sensitive =
    compiled.mayBeDestructive ||
    compiled.write.size > 0 ||
    compiled.exec.size > 0 ||
    compiled.dryRunWrite.size > 0 ||
    compiled.exports.size > 0 ||
    compiled.optionValues.size > 0 ||
    compiled.maxOperands !== null ||
    compiled.writesOperands ||
    compiled.assignsOperands ||
    compiled.script !== null ||
    compiled.run !== null ||
    compiled.sql !== null ||
    compiled.subcommands !== null ||
    !compiled.inert;
}

/** The table's named option sets (`optionSets`), by name. */
type OptionSets = Readonly<Record<string, OptionSet>>;

/** One rule of the table, compiled (its subcommands too), the lists of the option sets it uses added to its own first. */
function compileRule(given: ShellCommandRule, sets: OptionSets): CompiledRule {
  const rule = withOptionSets(given, sets);
  const dryRunNames = (rule.dryRunOptions ?? []).map((o) => o.split('=')[0]!);
  const known = knownOptions(rule, dryRunNames);
  const subcommands = compileSubcommands(rule, sets);
  const compiled: CompiledRule = {
    read: rule.read === true,
    destructive: rule.destructive === true,
    singleDash: rule.optionStyle === 'single-dash',
    known,
    longs: [...known].filter((o) => o.startsWith('--')),
    flags: set(rule.flags),
    value: set(rule.valueOptions),
    twoValue: set(rule.twoValueOptions),
    optionalValue: set(rule.optionalValueOptions),
    inert: rule.inertOptions === true,
    optionsFirst: rule.optionsFirst === true,
    write: set(rule.writeOptions),
    exec: set(rule.execOptions),
    dryRunWrite: set(rule.dryRunWriteOptions),
    exports: set(rule.exportOptions),
    destructiveOptions: set(rule.destructiveOptions),
    unknownPlace: set(rule.unknownPlaceOptions),
    dryRun: set(rule.dryRunOptions),
    dryRunNames: new Set(dryRunNames),
    risky: new Set([
      ...(rule.writeOptions ?? []),
      ...(rule.execOptions ?? []),
      ...(rule.dryRunWriteOptions ?? []),
      ...(rule.exportOptions ?? []),
      ...(rule.destructiveOptions ?? []),
      ...Object.keys(rule.optionValues ?? {}),
    ]),
    optionValues: compileOptionValues(rule),
    path: set(rule.pathOptions),
    cwd: set(rule.cwdOptions),
    info: set(rule.infoOptions),
    operands: rule.operands ?? 'paths',
    skip: rule.skipOperands ?? 0,
    pattern: set(rule.patternOptions),
    defaultPath: rule.defaultPath ?? null,
    maxOperands: rule.maxOperands ?? null,
    list: set(rule.listOptions),
    ignoredPrefixes: rule.ignoredOperandPrefixes ?? [],
    writesOperands: rule.writesOperands === true,
    assignsOperands: rule.assignsOperands === true,
    destructivePrefixes: rule.destructiveOperandPrefixes ?? [],
    remoteOperands: rule.remoteOperands === true,
    readLast: set(rule.readLastOperands),
    anySubcommand: rule.anySubcommand === true,
    script:
      rule.script === undefined
        ? null
        : { language: rule.script.language, options: set(rule.script.options), files: set(rule.script.fileOptions) },
    run: compileRun(rule.run),
    sql: compileSql(rule.sql),
    place: compilePlace(rule.place),
    subcommands,
    subcommandPatterns: compileSubcommandPatterns(rule, sets),
    sensitive: false,
    mayBeDestructive: false,
  };
  markSensitivity(compiled);
  return compiled;
}

/** A table's rules by command name: `get` the compiled rule (the same object every time), `has` whether the table lists the name. */
export interface RuleLookup {
  get(name: string): CompiledRule | undefined;
  has(name: string): boolean;
}

/**
 * The rules of a validated table, each compiled the first time its command
 * is looked up, then kept: a table has hundreds of rules and a call names a
 * few, so a process that judges one command (a coding agent's hook) compiles
 * only those. An alias gives its rule's compiled object.
 */
function lazyRules(valid: ShellTable): RuleLookup {
  const sets = valid.optionSets ?? {};
  const compiled = new Map<string, CompiledRule>();
  const get = (name: string): CompiledRule | undefined => {
    const cached = compiled.get(name);
    if (cached !== undefined) return cached;
    if (!Object.hasOwn(valid.commands, name)) return undefined;
    const rule = valid.commands[name]!;
    // An alias names a command with a rule (parseShellTable checks it): its rule's compiled object.
    const result = typeof rule === 'string' ? get(rule) : compileRule(rule, sets);
    if (result !== undefined) compiled.set(name, result);
    return result;
  };
  return { get, has: (name) => Object.hasOwn(valid.commands, name) };
}

let nextTableId = 1;
const compiledTables = new WeakMap<object, CompiledTable>();

/**
 * The compiled form of a table, validated first unless it is the default
 * table; cached per table object (do not change a table after its first use).
 *
 * @throws CatalogError when the table does not validate (`parseShellTable`).
 */
export function compileTable(table: ShellTable): CompiledTable {
  const cached = compiledTables.get(table);
  if (cached !== undefined) return cached;
  const valid = table === defaultShellTable ? table : parseShellTable(table);
  const rules = lazyRules(valid);
  const variables = new Map<string, Set<string>>();
  const variablePrefixes: [string, Set<string>][] = [];
  for (const [name, values] of Object.entries(valid.variables)) {
    if (name.endsWith('*')) variablePrefixes.push([name.slice(0, -1), new Set(values)]);
    else variables.set(name, new Set(values));
  }
  const compiled: CompiledTable = {
    id: nextTableId++,
    commands: rules,
    trusted: new Set(valid.trustedDirectories.map((d) => posix.normalize(d).replace(/(.)\/$/, '$1'))),
    nullDevices: new Set(valid.nullDevices),
    variables,
    variablePrefixes,
    inertVariables: new Set((valid.inertVariables ?? []).filter((name) => !name.endsWith('*'))),
    inertPrefixes: (valid.inertVariables ?? []).filter((name) => name.endsWith('*')).map((name) => name.slice(0, -1)),
  };
  compiledTables.set(table, compiled);
  return compiled;
}
