/**
 * Named option sets of the shell command table (`optionSets`, a rule's
 * `use`): a set's lists are added to the rule's own when the table is
 * compiled, so a rule that uses a set judges the set's options as if it
 * listed them; a `use` naming no set, or a set that uses another, is refused
 * on load with the path of the entry.
 *
 * Spec: DESIGN.md §5.5.
 */
import { describe, expect, it } from 'vitest';
import { CatalogError } from '../../../src/errors/index.js';
import { classifyShellCommand, defaultShellTable, parseShellTable, type ShellTable } from '../../../src/classify/shell/index.js';
import { withOptionSets, type ShellCommandRule } from '../../../src/classify/shell/table-schema.js';

/** The default table with `frob` set to `rule` and the given option sets added (a fresh object: compiled on its own). */
function tableWith(rule: ShellCommandRule, optionSets: Record<string, unknown>): ShellTable {
  return {
    ...defaultShellTable,
    optionSets: { ...defaultShellTable.optionSets, ...optionSets },
    commands: { ...defaultShellTable.commands, frob: rule },
  } as ShellTable;
}

const SETS = {
  'frob-output': {
    description: 'how frob prints',
    flags: ['--color', '-q'],
    valueOptions: ['--level', '--out'],
    writeOptions: ['--out'],
    pathOptions: ['--out'],
  },
  'frob-global': { flags: ['--verbose'], valueOptions: ['--config'] },
};

const kind = (command: string, table: ShellTable): string => classifyShellCommand(command, { table, cwd: '/repo' }).kind;

describe('option sets: a rule that uses a set judges its options as its own (DESIGN §5.5)', () => {
  const table = tableWith({ read: true, use: ['frob-output'], flags: ['--own'] }, SETS);

  it("the set's flags and value options are read-only options of the rule, beside the rule's own", () => {
    expect(kind('frob --color -q --own file', table)).toBe('read');
    expect(kind('frob --level 3 file', table)).toBe('read');
    expect(kind('frob --level=3 -q', table)).toBe('read');
  });

  it("the set's write option makes a write, and its path option's value is a target", () => {
    const result = classifyShellCommand('frob --out result.txt', { table, cwd: '/repo' });
    expect(result.kind).toBe('write');
    expect(result.targets).toContain('/repo/result.txt');
  });

  it('an option neither the rule nor its sets list is still a write', () => {
    expect(kind('frob --verbose', table)).toBe('write');
    expect(kind('frob --config x', table)).toBe('write');
  });

  it("a parent's sets reach its subcommands under globalOptions, and a subcommand's own sets add to them", () => {
    const nested = tableWith(
      { read: true, globalOptions: true, use: ['frob-global'], subcommands: { show: { read: true, use: ['frob-output'] } } },
      SETS,
    );
    expect(kind('frob show --verbose --config c --color', nested)).toBe('read');
    expect(kind('frob show --out x', nested)).toBe('write');
    expect(kind('frob --color show', nested)).toBe('write');
  });

  it('a rule without `use` is unchanged by withOptionSets; with it, the lists are merged and `use` dropped', () => {
    const plain: ShellCommandRule = { read: true, flags: ['-a'] };
    expect(withOptionSets(plain, SETS)).toBe(plain);
    expect(withOptionSets({ read: true, use: ['frob-global', 'frob-output'], flags: ['-a'] }, SETS)).toEqual({
      read: true,
      flags: ['-a', '--verbose', '--color', '-q'],
      valueOptions: ['--config', '--level', '--out'],
      writeOptions: ['--out'],
      pathOptions: ['--out'],
    });
  });
});

describe('option sets are checked on load (parseShellTable)', () => {
  it('a `use` naming no set is a CatalogError naming its path', () => {
    const table = tableWith({ read: true, subcommands: { show: { read: true, use: ['frob-output', 'frob-nope'] } } }, SETS);
    expect(() => parseShellTable(table)).toThrow(/commands\.frob\.subcommands\.show\.use\.1: no option set 'frob-nope' in optionSets/);
    try {
      parseShellTable(table);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(CatalogError);
      expect((error as CatalogError).path).toEqual(['commands', 'frob', 'subcommands', 'show', 'use', 1]);
    }
  });

  it('a `use` in a table without optionSets is refused too', () => {
    const table = { commands: { frob: { read: true, use: ['frob-output'] } }, trustedDirectories: [], nullDevices: [], variables: {} };
    expect(() => parseShellTable(table)).toThrow(/commands\.frob\.use\.0: no option set 'frob-output'/);
  });

  it('a set that uses another is refused (sets are flat)', () => {
    const table = tableWith(
      { read: true, use: ['frob-output'] },
      { ...SETS, 'frob-output': { ...SETS['frob-output'], use: ['frob-global'] } },
    );
    expect(() => parseShellTable(table)).toThrow(/optionSets\.frob-output\.use: an option set cannot use another/);
  });

  it("a set's path option must be a value option of every rule that uses it", () => {
    const table = tableWith({ read: true, use: ['bad'] }, { bad: { pathOptions: ['-o'] } });
    expect(() => parseShellTable(table)).toThrow(/commands\.frob\.pathOptions\.-o: '-o' must also be listed in valueOptions/);
    expect(parseShellTable(tableWith({ read: true, use: ['bad'], valueOptions: ['-o'] }, { bad: { pathOptions: ['-o'] } }))).toBeTruthy();
  });

  it('a set with a field that is not an option list is refused', () => {
    const table = tableWith({ read: true, use: ['bad'] }, { bad: { read: true } });
    expect(() => parseShellTable(table)).toThrow(/optionSets\.bad/);
  });

  it('inertOptions is checked with the sets added: a set may not bring a write option to an inert rule', () => {
    const table = tableWith({ read: true, inertOptions: true, use: ['frob-output'] }, SETS);
    expect(() => parseShellTable(table)).toThrow(/commands\.frob\.inertOptions: a rule with inertOptions cannot have writeOptions/);
  });
});

describe('the shipped option sets (git, gh)', () => {
  /** Every set name some rule of the shipped table uses. */
  function usedSets(): Set<string> {
    const used = new Set<string>();
    const walk = (rule: ShellCommandRule): void => {
      for (const name of rule.use ?? []) used.add(name);
      for (const sub of Object.values(rule.subcommands ?? {})) walk(sub);
    };
    for (const rule of Object.values(defaultShellTable.commands)) if (typeof rule === 'object') walk(rule);
    return used;
  }

  it('every shipped set is used by some rule', () => {
    const sets = Object.keys(defaultShellTable.optionSets ?? {});
    expect(sets.length).toBeGreaterThan(0);
    expect(sets.filter((name) => !usedSets().has(name))).toEqual([]);
  });

  it("git log, git diff and gh take their sets' options, and the sets' writes and programs stay writes", () => {
    const cases: [string, 'read' | 'write'][] = [
      ['git log --oneline --graph --stat -n 5', 'read'],
      ['git log --decorate-refs=main --follow -- src', 'read'],
      ['git diff --cached --name-only', 'read'],
      ['git diff --output=patch.diff', 'write'],
      ['git show --ext-diff HEAD', 'write'],
      ['git blame -L 1,5 --porcelain README.md', 'read'],
      ['gh pr list -R o/r --json number --jq .[].number', 'read'],
      ['gh pr view --web 12', 'write'],
      ['gh search prs --merged --owner o --limit 5', 'read'],
      ['gh variable get X --env prod', 'read'],
    ];
    for (const [command, expected] of cases) expect(kind(command, defaultShellTable), command).toBe(expected);
  });
});
