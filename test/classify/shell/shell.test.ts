/**
 * The shell-command classifier: real agents' commands (the table in
 * `shell.cases.ts`), bad input, the memo, the command table's validation,
 * and the sed and awk script checkers.
 *
 * Spec: DESIGN.md §5.1 (targets), §5.5 (commands are parsed), §5.6
 * (destructive writes).
 */
import fc from 'fast-check';
import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CatalogError } from '../../../src/errors/index.js';
import {
  MAX_SHELL_COMMAND_BYTES,
  SHELL_MEMO_SIZE,
  isSafeAwkProgram,
  classifyShellCommand,
  clearShellMemo,
  defaultShellTable,
  parseShellTable,
  isSafeSedScript,
  shellMemoStats,
  shellTableSchema,
  type ShellTable,
} from '../../../src/classify/shell/index.js';
import { shellCases, type ShellCase } from './cases.js';

const CWD = '/repo';

/** A row's name: the command as one line. */
function label(command: ShellCase['command']): string {
  return typeof command === 'string' ? JSON.stringify(command) : `argv ${JSON.stringify(command)}`;
}

describe("real agents' shell commands (DESIGN §5.5, §5.6)", () => {
  it('the table has at least 200 commands', () => {
    expect(shellCases.length).toBeGreaterThanOrEqual(200);
  });

  it.each(shellCases.map((row) => [label(row.command), row] as const))('%s', (_name, row) => {
    const result = classifyShellCommand(row.command, { cwd: CWD });
    expect({ kind: result.kind, targets: result.targets, destructive: result.destructive }).toEqual({
      kind: row.kind,
      targets: [...row.targets].sort(),
      destructive: row.destructive ?? false,
    });
  });
});

describe('reasons', () => {
  it('a destructive write names the destructive option', () => {
    expect(classifyShellCommand('ls && rm -rf build').reason).toBe("shell: 'rm -r' is destructive");
  });

  it('an unknown command is named', () => {
    expect(classifyShellCommand('frobnicate --all').reason).toBe("shell: 'frobnicate' is not a known read-only command");
  });

  it('a command that does not parse says so', () => {
    expect(classifyShellCommand('echo "unterminated').reason).toBe('shell: the command does not parse');
  });

  it('a read names a command, not an assignment', () => {
    expect(classifyShellCommand('X=1; cat a').reason).toBe("shell: 'cat' is read-only");
  });

  it('an output redirection names its file', () => {
    expect(classifyShellCommand('echo hi > out.txt').reason).toBe("shell: output redirection to 'out.txt'");
  });
});

describe('working directory and targets', () => {
  it('without a cwd, relative paths stay relative', () => {
    expect(classifyShellCommand('rm -rf build ../x').targets).toEqual(['../x', 'build']);
  });

  it('a cwd with a trailing slash is normalized', () => {
    expect(classifyShellCommand('rm x', { cwd: '/repo/' }).targets).toEqual(['/repo/x']);
  });

  it('cd .. is followed', () => {
    expect(classifyShellCommand('cd .. && rm x', { cwd: '/repo/sub' }).targets).toEqual(['/repo/x']);
  });

  it('cd to an absolute path works without a cwd', () => {
    expect(classifyShellCommand('cd /srv/app && rm x').targets).toEqual(['/srv/app/x']);
  });

  it('cd inside a subshell does not leak', () => {
    expect(classifyShellCommand('(cd a); rm x', { cwd: CWD }).targets).toEqual(['/repo/x']);
  });

  it('cd inside a command substitution does not leak', () => {
    expect(classifyShellCommand('echo $(cd a); rm x', { cwd: CWD }).targets).toEqual(['/repo/x']);
  });

  it('a cd that may have failed leaves both directories', () => {
    expect(classifyShellCommand('cd a || true; rm x', { cwd: CWD }).targets).toEqual(['/repo/a/x', '/repo/x']);
  });

  it('a cwd that is not a string is ignored', () => {
    expect(classifyShellCommand('rm x', { cwd: 42 as unknown as string }).targets).toEqual(['x']);
  });

  it('more than 32 targets keep 33: one past the cap, so the gate sees too many and refuses', () => {
    const files = Array.from({ length: 40 }, (_, i) => `f${String(i).padStart(2, '0')}`);
    expect(classifyShellCommand(`rm ${files.join(' ')}`).targets).toHaveLength(33);
  });
});

describe('bad input fails closed, never throws', () => {
  const garbage: [string, unknown][] = [
    ['a number', 42],
    ['null', null],
    ['undefined', undefined],
    ['an object', { command: 'ls' }],
    ['a function', () => 'ls'],
    ['a symbol', Symbol('ls')],
    ['an empty array', []],
    ['an array with a number', ['ls', 1]],
    ['an array with a NUL', ['ls', 'a\0b']],
    ['an empty string', ''],
    ['blanks', '  \n\t '],
    ['a comment only', '# nothing here'],
  ];

  it.each(garbage)('%s is a write of one unknown place (issue #24: a shell write is never without targets)', (_name, input) => {
    expect(classifyShellCommand(input)).toMatchObject({ kind: 'write', targets: [expect.stringMatching(/^\?\//)], destructive: false });
  });

  it('a 1 MB string is a write, said to be too long', () => {
    const result = classifyShellCommand('ls '.repeat(350_000));
    expect(result).toMatchObject({ kind: 'write', reason: `shell: the command is longer than ${MAX_SHELL_COMMAND_BYTES} bytes` });
  });

  it('a string just over the limit in UTF-8 bytes is too long', () => {
    const result = classifyShellCommand(`echo ${'é'.repeat(MAX_SHELL_COMMAND_BYTES / 2)}`);
    expect(result.reason).toBe(`shell: the command is longer than ${MAX_SHELL_COMMAND_BYTES} bytes`);
  });

  it('a NUL byte is a write', () => {
    expect(classifyShellCommand('ls\0 -la')).toMatchObject({ kind: 'write', reason: 'shell: the command contains a NUL character' });
  });

  it('a lone high surrogate is a write', () => {
    expect(classifyShellCommand('echo \uD800')).toMatchObject({ kind: 'write', reason: 'shell: the command contains a lone surrogate' });
  });

  it('a lone low surrogate is a write', () => {
    expect(classifyShellCommand('echo \uDC00x').kind).toBe('write');
  });

  it('a surrogate pair (an emoji) is fine', () => {
    expect(classifyShellCommand('echo 😀').kind).toBe('read');
  });

  it('200 nested command substitutions are a write', () => {
    const nested = `echo ${'$('.repeat(200)}ls${')'.repeat(200)}`;
    expect(classifyShellCommand(nested)).toMatchObject({ kind: 'write', targets: [expect.stringMatching(/^\?\//)] });
  });

  it('20,000 nested subshells are a write', () => {
    expect(classifyShellCommand(`${'('.repeat(20_000)}ls${')'.repeat(20_000)}`).kind).toBe('write');
  });

  it('bash -c nested 12 deep is a write', () => {
    let command = 'ls';
    for (let i = 0; i < 12; i++) command = `bash -c ${JSON.stringify(command)}`;
    expect(classifyShellCommand(command)).toMatchObject({ kind: 'write', reason: 'shell: shells nested more than 8 deep' });
  });

  it('bash -c nested 6 deep is still judged', () => {
    let command = 'ls';
    for (let i = 0; i < 6; i++) command = `bash -c ${JSON.stringify(command)}`;
    expect(classifyShellCommand(command).kind).toBe('read');
  });

  it('a command with more than 10,000 parts is a write', () => {
    expect(classifyShellCommand(Array(6_000).fill('ls').join(' && '))).toMatchObject({ kind: 'write' });
  });

  it('an array whose elements throw is a write', () => {
    const hostile = new Proxy(['ls'], {
      get(target, key) {
        if (key === 'length' || key === Symbol.iterator) return Reflect.get(target, key);
        throw new Error('boom');
      },
    });
    expect(classifyShellCommand(hostile).kind).toBe('write');
  });

  it('options whose getters throw are a write', () => {
    const options = Object.defineProperty({}, 'table', {
      get() {
        throw new Error('boom');
      },
    });
    expect(classifyShellCommand('ls', options).kind).toBe('write');
  });

  const shellish = fc
    .array(
      fc.constantFrom(
        'ls',
        'rm',
        '-rf',
        'x',
        '&&',
        '||',
        '|',
        ';',
        '&',
        '$(',
        ')',
        '(',
        '{',
        '}',
        '"',
        "'",
        '`',
        '\\',
        '<<EOF',
        '\n',
        'EOF',
        '>',
        '>>',
        '2>&1',
        '<',
        'bash',
        '-c',
        'sudo',
        'xargs',
        'find',
        '-exec',
        '{}',
        '\\;',
        'cd',
        'for',
        'in',
        'do',
        'done',
        'if',
        'then',
        'fi',
        'X=1',
        '$X',
        '*',
        '#',
        'git',
        'push',
        '--force',
      ),
      { maxLength: 30 },
    )
    .map((tokens) => tokens.join(' '));

  it('random shell-like text never throws and yields a frozen read or write', () => {
    fc.assert(
      fc.property(fc.oneof(shellish, fc.string({ unit: 'binary', maxLength: 120 })), (command) => {
        const result = classifyShellCommand(command, { cwd: CWD });
        expect(['read', 'write']).toContain(result.kind);
        expect(Object.isFrozen(result) && Object.isFrozen(result.targets)).toBe(true);
        expect(result.destructive && result.kind !== 'write').toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('anything after rm -rf is still a destructive write, or a write that does not parse', () => {
    fc.assert(
      fc.property(shellish, (rest) => {
        const result = classifyShellCommand(`rm -rf build; ${rest}`);
        expect(result.kind).toBe('write');
        if (!result.destructive) expect(result.reason).toMatch(/does not parse|runs nothing|nested|more than/);
      }),
      { numRuns: 300 },
    );
  });
});

describe('the memo', () => {
  beforeEach(() => {
    clearShellMemo();
  });

  it('starts empty after clearShellMemo', () => {
    expect(shellMemoStats()).toEqual({ hits: 0, misses: 0, size: 0 });
  });

  it('a second classification of the same command is a hit', () => {
    classifyShellCommand('git status');
    classifyShellCommand('git status');
    expect(shellMemoStats()).toEqual({ hits: 1, misses: 1, size: 1 });
  });

  it('a hit returns the same frozen classification', () => {
    const first = classifyShellCommand('rm -rf build', { cwd: CWD });
    expect(classifyShellCommand('rm -rf build', { cwd: CWD })).toBe(first);
  });

  it('a classification is frozen, targets included', () => {
    const result = classifyShellCommand('rm -rf build', { cwd: CWD });
    expect(Object.isFrozen(result) && Object.isFrozen(result.targets)).toBe(true);
  });

  it('another cwd is another entry', () => {
    classifyShellCommand('rm x', { cwd: '/a' });
    expect(classifyShellCommand('rm x', { cwd: '/b' }).targets).toEqual(['/b/x']);
  });

  it('another table is another entry', () => {
    classifyShellCommand('ls');
    const table: ShellTable = { ...defaultShellTable, commands: { ...defaultShellTable.commands, ls: { read: false } } };
    expect(classifyShellCommand('ls', { table }).kind).toBe('write');
  });

  it('an argv array is memoized too', () => {
    classifyShellCommand(['ls', '-la']);
    classifyShellCommand(['ls', '-la']);
    expect(shellMemoStats().hits).toBe(1);
  });

  it('a string and the argv array of the same words are different entries', () => {
    classifyShellCommand('ls');
    classifyShellCommand(['ls']);
    expect(shellMemoStats()).toMatchObject({ hits: 0, size: 2 });
  });

  it(`keeps at most ${SHELL_MEMO_SIZE} entries`, () => {
    for (let i = 0; i < SHELL_MEMO_SIZE + 100; i++) classifyShellCommand(`echo ${i}`);
    expect(shellMemoStats().size).toBe(SHELL_MEMO_SIZE);
  });

  it('drops the least recently used entry first', () => {
    classifyShellCommand('echo first');
    for (let i = 0; i < SHELL_MEMO_SIZE - 1; i++) classifyShellCommand(`echo ${i}`);
    classifyShellCommand('echo first'); // used again: now the most recent
    classifyShellCommand('echo one more'); // evicts `echo 0`
    classifyShellCommand('echo first');
    expect(shellMemoStats().hits).toBe(2);
  });
});

describe('the command table (shellTableSchema)', () => {
  const withCommand = (name: string, rule: unknown) => ({
    ...defaultShellTable,
    commands: { ...defaultShellTable.commands, [name]: rule },
  });

  it('the shipped table validates', () => {
    expect(parseShellTable(defaultShellTable)).toEqual(defaultShellTable);
  });

  it('every field of a command rule is documented in the schema', () => {
    const json = z.toJSONSchema(shellTableSchema) as { $defs: Record<string, { properties: Record<string, { description?: string }> }> };
    const rule = Object.values(json.$defs)[0]!;
    const undocumented = Object.entries(rule.properties)
      .filter(([, field]) => !field.description)
      .map(([name]) => name);
    expect(undocumented).toEqual([]);
  });

  it('a bad option names the entry', () => {
    expect(() => parseShellTable(withCommand('sed', { read: true, writeOptions: ['i'] }))).toThrow(
      /shell table: commands\.sed\.writeOptions\.0: must be an option/,
    );
  });

  it('the error is a CatalogError with the path', () => {
    try {
      parseShellTable(withCommand('sed', { read: true, writeOptions: ['i'] }));
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(CatalogError);
      expect((error as CatalogError).path).toEqual(['commands', 'sed', 'writeOptions', 0]);
    }
  });

  it('a bad entry deep in subcommands names its whole path', () => {
    const git = { read: true, subcommands: { push: { read: false, destructiveOptions: ['force'] } } };
    expect(() => parseShellTable(withCommand('git', git))).toThrow(/commands\.git\.subcommands\.push\.destructiveOptions\.0/);
  });

  it('an unknown field names the entry', () => {
    expect(() => parseShellTable(withCommand('ls', { read: true, readonly: true }))).toThrow(/commands\.ls/);
  });

  it('an alias to a command that is not in the table names the alias', () => {
    expect(() => parseShellTable(withCommand('egrep2', 'nosuchgrep'))).toThrow(/commands\.egrep2: 'nosuchgrep' must be a command/);
  });

  it('an alias to an alias is refused', () => {
    expect(() => parseShellTable(withCommand('egrep2', 'egrep'))).toThrow(/commands\.egrep2/);
  });

  it('a path option that takes no value names the option', () => {
    expect(() => parseShellTable(withCommand('frob', { read: false, pathOptions: ['-o'] }))).toThrow(
      /commands\.frob\.pathOptions\.-o: '-o' must also be listed in valueOptions/,
    );
  });

  it('a rule that both runs a command and has subcommands is refused', () => {
    expect(() => parseShellTable(withCommand('frob', { read: true, run: {}, subcommands: {} }))).toThrow(/commands\.frob\.run/);
  });

  it('subcommandPatterns: a name no subcommand lists takes the rule of the longest pattern it matches', () => {
    const frob = {
      read: true,
      subcommands: { 'list-all': { read: false } },
      subcommandPatterns: { '*': { read: false }, 'list-*': { read: true, operands: 'none' as const, flags: ['--all'] } },
    };
    const table = parseShellTable(withCommand('frob', frob));
    expect(classifyShellCommand('frob list-things --all', { table, cwd: CWD }).kind).toBe('read');
    expect(classifyShellCommand('frob list-all', { table, cwd: CWD }).kind).toBe('write');
    expect(classifyShellCommand('frob list-', { table, cwd: CWD }).kind).toBe('write'); // '*' is at least one character
    expect(classifyShellCommand('frob delete-things', { table, cwd: CWD }).kind).toBe('write');
    expect(classifyShellCommand('frob list-things --force', { table, cwd: CWD }).kind).toBe('write');
  });

  it('a subcommand pattern without exactly one * is refused, and a bad rule under one names its path', () => {
    expect(() => parseShellTable(withCommand('frob', { read: true, subcommandPatterns: { list: { read: true } } }))).toThrow(
      /commands\.frob\.subcommandPatterns\.list/,
    );
    const bad = { read: true, subcommandPatterns: { 'get-*': { read: true, pathOptions: ['-o'] } } };
    expect(() => parseShellTable(withCommand('frob', bad))).toThrow(/commands\.frob\.subcommandPatterns\.get-\*\.pathOptions/);
  });

  it('a table that is not an object is refused', () => {
    expect(() => parseShellTable('ls')).toThrow(CatalogError);
  });

  it('the source is named in the message', () => {
    expect(() => parseShellTable({}, 'my-table.json')).toThrow(/^shell table my-table\.json: /);
  });

  it('a custom table decides: a command it lists as read-only is a read', () => {
    const table = parseShellTable(withCommand('frob', { read: true }));
    expect(classifyShellCommand('frob x', { table, cwd: CWD })).toMatchObject({ kind: 'read', targets: ['/repo/x'] });
  });

  it('a table that does not validate makes every command a write', () => {
    const table = { commands: { ls: { read: true } } } as unknown as ShellTable;
    expect(classifyShellCommand('ls', { table })).toMatchObject({ kind: 'write' });
  });
});

describe('sed scripts', () => {
  it.each([
    '1,20p',
    '/foo/,/bar/p',
    's/a/b/g',
    's|/usr|/opt|g',
    '$d',
    '/^#/d;s/x/y/2',
    '10q',
    ':a;N;$!ba;s/\\n/ /g',
    'y/abc/xyz/',
    '/x/{p;d}',
    '1i\\\nheader',
    'r other.txt',
    '0~3p',
    'b',
    'b end',
    '/x/b end\n:end',
    'v 4.2',
    's/[/]/x/g',
    's/[]/]/x/g',
    's/[^]/]/x/g',
    's/[[:alpha:]/]/x/g',
    's/[[.].]/]/x/g',
    's/[\\]/x/',
    '\\%[%]%p',
    's|[|]|x|g',
  ])('%j only prints', (script) => {
    expect(isSafeSedScript(script)).toBe(true);
  });

  it.each([
    'w out.txt',
    's/a/b/w out.txt',
    's/a/b/gw out',
    '1e date',
    's/x/date/e',
    '/x/W out',
    'b end;w out',
    'k',
    's/a/b',
    '/unterminated',
    ':a e touch pwned',
    'tx e touch pwned\n:x',
    ':x w out',
    '/x/b end w out\n:end',
    '/x/{ba}',
    'ba#x',
    ':',
    's/[/]*/touch pwned/e',
    's/[^/]/x/w out',
    '/[/b]/w out',
    's/[[:a::]]/x/;e date',
    's/[[:]/]/x/g',
    's/a/[/;e date',
    'y/a[/b]/;e date',
    's/a/b/ i w out',
    's/a/b/ \tg e',
    's/a\nb/c/',
  ])('%j may write or run: unsafe', (script) => {
    expect(isSafeSedScript(script)).toBe(false);
  });
});

describe('awk programs', () => {
  it.each(['{print $1}', 'NR>1 {s+=$3} END {print s}', '$3 > 100', '/err/ || /warn/', 'BEGIN{FS=":"} {print $1}'])(
    '%j only prints',
    (program) => {
      expect(isSafeAwkProgram(program)).toBe(true);
    },
  );

  it.each([
    '{print > "out"}',
    '{print $1 >> "log"}',
    'BEGIN{system("ls")}',
    '{print | "sort"}',
    '{"date" | getline d}',
    '@load "x"',
    '{printf "%s", $1 > $2}',
  ])('%j may write or run: unsafe', (program) => {
    expect(isSafeAwkProgram(program)).toBe(false);
  });
});
