/**
 * The command table is an allow-list (issue: fail closed by construction):
 * for every read command and read subcommand of the shipped table, an
 * option the table does not list makes the command a write, long or short,
 * alone or beside a known option, and the reason names the option.
 *
 * Spec: DESIGN.md §5.5; ASSISTANT_SAFETY.md (reads are never blocked, so a
 * read must be proven read-only).
 */
import { describe, expect, it } from 'vitest';
import { classifyShellCommand, defaultShellTable } from '../../../src/classify/shell/index.js';
import { withOptionSets, type ShellCommandRule } from '../../../src/classify/shell/table-schema.js';

/** Every read rule of the table as the words that reach it (`git log`, `aws ec2 describe-pulse`), with the rule; aliases under their own names. */
function readRules(): { words: string[]; rule: ShellCommandRule }[] {
  const out: { words: string[]; rule: ShellCommandRule }[] = [];
  const walk = (words: string[], rule: ShellCommandRule): void => {
    if (rule.read === true) out.push({ words, rule });
    for (const [name, sub] of Object.entries(rule.subcommands ?? {})) walk([...words, name], sub);
    // A pattern (`describe-*`) is reached by a name it matches and no listed subcommand has.
    for (const [pattern, sub] of Object.entries(rule.subcommandPatterns ?? {})) walk([...words, pattern.replace('*', 'pulse')], sub);
  };
  for (const [name, entry] of Object.entries(defaultShellTable.commands)) {
    const rule = typeof entry === 'string' ? defaultShellTable.commands[entry] : entry;
    if (typeof rule === 'object') walk([name], rule);
  }
  return out;
}

/** Every option a rule lists anywhere (its option sets' too), so the made-up ones below are surely unknown. */
function listed(given: ShellCommandRule): Set<string> {
  const rule = withOptionSets(given, defaultShellTable.optionSets ?? {});
  return new Set(
    [
      rule.flags,
      rule.valueOptions,
      rule.twoValueOptions,
      rule.writeOptions,
      rule.execOptions,
      rule.destructiveOptions,
      rule.dryRunOptions?.map((o) => o.split('=')[0]!),
      rule.pathOptions,
      rule.cwdOptions,
      rule.infoOptions,
      rule.patternOptions,
      rule.listOptions,
      Object.keys(rule.optionValues ?? {}),
    ].flatMap((list) => list ?? []),
  );
}

/** A short option letter the rule does not list (upper-case letters and digits are seldom used). */
function unknownShort(rule: ShellCommandRule): string {
  const known = listed(rule);
  for (const c of 'QZYJKW987'.split('')) if (!known.has(`-${c}`)) return `-${c}`;
  throw new Error('no unknown short option left');
}

/**
 * Read rules whose options are judged outside the table, each with why it is
 * safe: the directory builtins change only the shell, and bash refuses an
 * option it does not know before changing anything.
 */
const JUDGED_ELSEWHERE: Record<string, string> = {
  cd: 'changes only the shell; an unknown option is an error (command.ts)',
  pushd: 'as cd',
  popd: 'as cd',
};

/** Rules that are writes for another reason whatever their options (the reason names that one). */
const WRITES_ANYWAY: Record<string, string> = {
  '[': "'[' needs its ']': the made-up command does not parse",
  let: 'evaluates its arguments arithmetically',
};

const rules = readRules().filter(({ words }) => !(words.join(' ') in JUDGED_ELSEWHERE));

describe('the command table is an allow-list: an option it does not list is a write', () => {
  it('the table has read rules to test', () => {
    expect(rules.length).toBeGreaterThan(500);
  });

  it.each(rules.map(({ words, rule }) => [words.join(' '), rule] as const))('%s with an unknown option', (label, rule) => {
    const singleDash = rule.optionStyle === 'single-dash';
    const long = singleDash ? '-pulse-unknown-option' : '--pulse-unknown-option';
    for (const option of [long, `${long}=x`, unknownShort(rule)]) {
      const result = classifyShellCommand(`${label} ${option}`, { cwd: '/repo' });
      expect(result.kind, `${label} ${option}: ${result.reason}`).toBe('write');
    }
    const result = classifyShellCommand(`${label} ${long}`, { cwd: '/repo' });
    if (!(label in WRITES_ANYWAY)) expect(result.reason).toContain(long);
  });
});
