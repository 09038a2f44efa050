/**
 * Commands for the differential harness (test/suites/bash-differential.test.ts),
 * generated with fast-check from the command table's read rules
 * (`src/catalogs/shell-commands.json`): a read program, its subcommand, then
 * options picked from those the rule names and unknown ones, and operands,
 * mutated the ways bash and a static reading can disagree: glob characters,
 * quotes and backslashes inside option words, option values that are
 * command substitutions, here-documents with payload bodies and delimiters
 * bash reads after quote removal, parameter expansions that assign, prefix
 * assignments (`BASH_ENV=`, `GIT_*`), and joins (`;`, `&&`, `|`) with
 * payload commands. Payloads run `pwned` (a stub) or write outside the
 * throwaway directory (`/p`, `/etc/hostname`), so the sandbox sees them.
 *
 * Also which programs the sandbox runs for real and which are stubs
 * (`sandboxPrograms`), from the same table.
 */
import fc from 'fast-check';
import table from '../../src/catalogs/shell-commands.json' with { type: 'json' };
import type { SandboxPrograms } from './bash-sandbox.js';

type Rule = Record<string, unknown> & { read?: boolean; subcommands?: Record<string, Rule>; run?: unknown };

const commands = table.commands as unknown as Record<string, Rule | string>;

/** A command's rule, through the table's aliases (`"egrep": "grep"`). */
function ruleOf(name: string): Rule | undefined {
  const entry = commands[name];
  return typeof entry === 'string' ? ruleOf(entry) : entry;
}

/**
 * Payload program names: stubs whatever the table says, so that running one
 * is seen (`pwned` is in no table; the others are writes of the table).
 */
export const PAYLOAD_PROGRAMS = [
  'pwned',
  'rm',
  'touch',
  'mkdir',
  'cp',
  'mv',
  'chmod',
  'ln',
  'dd',
  'python',
  'python3',
  'node',
  'perl',
  'ruby',
  'psql',
  'mysql',
  'sqlite3',
  'wget',
  'nc',
  'ssh',
  'less',
  'more',
  'vi',
  'vim',
  'nano',
];

/** Shells are real: the classifier looks through `bash -c`, so what they run must be seen. */
const SHELLS = ['bash', 'sh', 'dash'];

/**
 * The sandbox's programs: every command of the table with a read form (the
 * command or one of its subcommands is a read: `yarn workspaces list`) and
 * the shells real, every other command of the table and every payload name
 * a stub.
 */
export function sandboxPrograms(): SandboxPrograms {
  const payloads = new Set(PAYLOAD_PROGRAMS);
  const real = new Set([...readForms().map((form) => form.words[0] ?? ''), ...SHELLS].filter((name) => !payloads.has(name)));
  const stubs = [...payloads, ...Object.keys(commands).filter((name) => !real.has(name) && !payloads.has(name))];
  return { real: [...real], stubs };
}

/** A read form of the table: the words that name it (program, subcommands) and its rule. */
export interface ReadForm {
  words: string[];
  rule: Rule;
}

/** Every read form of the table: each read command, and each read subcommand below a command. */
export function readForms(): ReadForm[] {
  const forms: ReadForm[] = [];
  const walk = (words: string[], rule: Rule): void => {
    if (rule.read === true) forms.push({ words, rule });
    for (const [sub, subRule] of Object.entries(rule.subcommands ?? {})) walk([...words, sub], subRule);
  };
  for (const name of Object.keys(commands)) {
    const rule = ruleOf(name);
    if (rule !== undefined) walk([name], rule);
  }
  return forms;
}

const OPTION = /^--?[^\s=-][^\s=]*(=\S*)?$/;
/** Fields whose options take a value (the table's current names, and any field named so). */
const VALUE_FIELD = /value|path|cwd|pattern|file/i;

/** The option names a rule mentions (not its subcommands'), and which of them take a value. */
export function optionsOf(rule: Rule): { flags: string[]; valued: string[] } {
  const all = new Set<string>();
  const valued = new Set<string>();
  const visit = (value: unknown, field: string): void => {
    if (typeof value === 'string') {
      if (OPTION.test(value)) {
        const name = value.replace(/=.*$/, '');
        all.add(name);
        if (VALUE_FIELD.test(field)) valued.add(name);
      }
    } else if (Array.isArray(value)) {
      for (const item of value) visit(item, field);
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, inner] of Object.entries(value)) {
        if (OPTION.test(key)) {
          all.add(key);
          if (field === 'optionValues' || VALUE_FIELD.test(field)) valued.add(key);
        }
        visit(inner, field === '' ? key : field);
      }
    }
  };
  for (const [field, value] of Object.entries(rule)) {
    if (field !== 'subcommands' && field !== 'description') visit(value, field);
  }
  return { flags: [...all].filter((name) => !valued.has(name)), valued: [...valued] };
}

/** Option values and operands: files inside and outside the directory, revisions, URLs, payloads. */
const VALUES = [
  'a.txt',
  'data.json',
  '.',
  '1',
  'HEAD',
  'origin',
  'main',
  '/p',
  '/p?',
  '/etc/hostname',
  '/etc/host?ame',
  'pwned',
  '$(pwned)',
  '`pwned`',
  'file:///etc/hostname',
  'payload.sh',
  'payload.awk',
];
const OPERANDS = [
  'a.txt',
  'b.txt',
  'data.json',
  'data.yaml',
  '.',
  '/etc/hostname',
  'HEAD',
  'origin',
  'main',
  '--',
  '-',
  'file:///etc/hostname',
  '*.txt',
  '~',
];
const UNKNOWN_LONG = [
  'output',
  'exec',
  'upload-pack',
  'receive-pack',
  'in-place',
  'pager',
  'config',
  'run',
  'command',
  'compress-program',
  'pre',
  'toolexec',
  'python',
  'eval',
  'script',
  'write',
  'outfile',
  'log-file',
  'dump',
  'hook',
];
const UNKNOWN_SHORT = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'.split('');

/** An option word: known or unknown, with its value attached or as the next word. */
function optionWords(rule: Rule): fc.Arbitrary<string[]> {
  const { flags, valued } = optionsOf(rule);
  const value = fc.constantFrom(...VALUES);
  const choices: fc.Arbitrary<string[]>[] = [
    fc.tuple(fc.constantFrom(...UNKNOWN_SHORT), fc.option(value, { nil: undefined })).map(([c, v]) => [`-${c}${v ?? ''}`]),
    fc
      .tuple(fc.constantFrom(...UNKNOWN_LONG), fc.option(value, { nil: undefined }))
      .map(([n, v]) => [v === undefined ? `--${n}` : `--${n}=${v}`]),
  ];
  if (flags.length > 0) choices.push(fc.constantFrom(...flags).map((flag) => [flag]));
  if (valued.length > 0) {
    choices.push(
      fc.tuple(fc.constantFrom(...valued), value, fc.boolean()).map(([option, v, attached]) => {
        if (!attached) return [option, v];
        return [option.startsWith('--') ? `${option}=${v}` : `${option}${v}`];
      }),
    );
  }
  return fc.oneof(...choices);
}

/** One argument: options mostly, operands sometimes. */
function argumentWords(rule: Rule): fc.Arbitrary<string[]> {
  return fc.oneof({ weight: 3, arbitrary: optionWords(rule) }, { weight: 1, arbitrary: fc.constantFrom(...OPERANDS).map((w) => [w]) });
}

/** Ways to write one word so that bash reads it as before, or as a glob, or with a substitution. */
function mutateWord(word: string): fc.Arbitrary<string> {
  const at = fc.nat({ max: Math.max(0, word.length) });
  return fc.oneof(
    fc.constant(word),
    at.map((i) => `${word.slice(0, i)}?${word.slice(i + 1)}`),
    at.map((i) => `${word.slice(0, i)}*${word.slice(i)}`),
    at.map((i) => `${word.slice(0, i)}[${word.charAt(i) || 'x'}]${word.slice(i + 1)}`),
    at.map((i) => `${word.slice(0, i)}\\${word.slice(i)}`),
    at.map((i) => `${word.slice(0, i)}'${word.slice(i)}'`),
    at.map((i) => `"${word.slice(0, i)}"${word.slice(i)}`),
    fc.constant(`${word}$(pwned)`),
    fc.constant(`${word}\${X:=$(pwned)}`),
    fc.constant(`$'${word}'`),
  );
}

const HEREDOC_BODIES = ['`pwned`', '$(pwned)', '${X:-$(pwned)}', '$((1+$(pwned)))', 'plain text', '\\`pwned\\`'];
/** Delimiter as written, and the line that ends the body for bash. */
const HEREDOC_DELIMITERS: [string, string][] = [
  ['EOF', 'EOF'],
  ["'EOF'", 'EOF'],
  ['"EOF"', 'EOF'],
  ['E"O"F', 'EOF'],
  ["E''OF", 'EOF'],
  ["$'EOF'", 'EOF'],
  ['\\EOF', 'EOF'],
  ['-EOF', 'EOF'],
];

/** A here-document on the command: body, delimiter, and sometimes a line after bash's end of body. */
const heredoc: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom(...HEREDOC_BODIES), fc.constantFrom(...HEREDOC_DELIMITERS), fc.boolean())
  .map(([body, [written, ends], trailing]) => {
    const after = trailing ? `\n${ends}\npwned\n${written.replace(/^-/, '')}` : `\n${ends}`;
    return ` <<${written}\n${body}${after}`;
  });

const ASSIGNMENTS = [
  'BASH_ENV=payload.sh',
  'ENV=payload.sh',
  'GIT_EXTERNAL_DIFF=pwned',
  'GIT_PAGER=pwned',
  'GIT_SSH_COMMAND=pwned',
  'GIT_DIR=/p',
  'GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=pwned',
  'PAGER=pwned',
  'LESSOPEN="|pwned %s"',
  'X=$(pwned)',
  'X=`pwned`',
  'LC_ALL=C',
  'TZ=UTC',
  'PATH=.',
  "SHELLOPTS=xtrace PS4='$(pwned)'",
];
const PAYLOADS = [
  'pwned',
  'rm -rf x',
  'touch /p',
  'python3 -c 1',
  'echo $(pwned)',
  'cat a.txt > /p',
  'sh -c pwned',
  'node -e 1',
  'perl -e 1',
];
const JOINS = ['; ', ' && ', ' || ', ' | ', '\n', ' & '];

/** A read form's command line: program, subcommands, up to four arguments, one of them perhaps mutated. */
function readCommand(forms: ReadForm[]): fc.Arbitrary<string> {
  return fc.constantFrom(...forms).chain((form) =>
    fc
      .array(argumentWords(form.rule), { maxLength: 4 })
      .chain((args) => {
        const words = [...form.words, ...args.flat()];
        const index = fc.nat({ max: words.length - 1 });
        return fc
          .tuple(fc.constant(words), index, fc.boolean())
          .chain(([ws, i, mutate]) => (mutate ? mutateWord(ws[i] ?? '').map((m) => ws.map((w, j) => (j === i ? m : w))) : fc.constant(ws)));
      })
      .map((words) => words.join(' ')),
  );
}

/** The value one time in `oneIn`, else undefined. */
function sometimes<T>(arbitrary: fc.Arbitrary<T>, oneIn: number): fc.Arbitrary<T | undefined> {
  return fc.oneof({ weight: oneIn - 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary });
}

/**
 * Generated commands: a read form, sometimes with a prefix assignment, a
 * here-document, or joined with a payload or a second read form.
 */
export function generatedCommands(forms: ReadForm[] = readForms()): fc.Arbitrary<string> {
  const read = readCommand(forms);
  return fc
    .tuple(
      read,
      sometimes(fc.constantFrom(...ASSIGNMENTS), 4),
      sometimes(heredoc, 4),
      sometimes(fc.tuple(fc.constantFrom(...JOINS), fc.oneof(fc.constantFrom(...PAYLOADS), read)), 3),
    )
    .map(([command, assignment, doc, join]) => {
      let line = assignment === undefined ? command : `${assignment} ${command}`;
      if (join !== undefined) line = `${line}${join[0]}${join[1]}`;
      if (doc === undefined) return line;
      // The operator ends the first line (on its last command); the body follows that line.
      const [first, ...rest] = line.split('\n');
      const [operator, ...body] = doc.split('\n');
      return [`${first ?? ''}${operator ?? ''}`, ...body, ...rest].join('\n');
    });
}
