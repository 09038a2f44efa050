/**
 * The PowerShell classifier: a table of commands (reads, writes,
 * destructive writes, targets), what the tokenizer refuses, the
 * `powershell`/`pwsh` command line, and the shell classifier handing
 * PowerShell over (a script string and an argv array).
 *
 * Spec: DESIGN.md §5.1 (targets), §5.5 (commands are parsed), §5.6
 * (destructive writes).
 */
import { describe, expect, it } from 'vitest';
import { POWERSHELL_REASONS, classifyPowerShell, classifyPowerShellArgv } from '../../../src/classify/powershell/index.js';
import { classifyShellCommand } from '../../../src/classify/shell/index.js';
import { unknownPlace } from '../../../machines/safety.targets.js';

const CWD = 'C:\\proj';

interface Case {
  script: string;
  kind: 'read' | 'write';
  targets?: string[];
  destructive?: boolean;
  /** The reason, without `powershell: `, when the row checks it. */
  reason?: string;
}

const R = POWERSHELL_REASONS;

const cases: Case[] = [
  // reads
  { script: 'Get-ChildItem -Path C:\\repo', kind: 'read', targets: ['/C:/repo'] },
  { script: 'Get-ChildItem', kind: 'read', targets: ['/C:/proj'] },
  { script: 'gci -Recurse -Filter *.ts src', kind: 'read', targets: ['/C:/proj/src'] },
  { script: 'Get-Content -LiteralPath .\\a.txt -Tail 5', kind: 'read', targets: ['/C:/proj/a.txt'] },
  { script: 'type ~\\notes.md', kind: 'read', targets: ['~/notes.md'] },
  { script: 'Get-Item a,b', kind: 'read', targets: ['/C:/proj/a', '/C:/proj/b'] },
  { script: 'Select-String -Pattern TODO -Path src\\*.ts', kind: 'read', targets: ['/C:/proj/src/*.ts'] },
  { script: 'Select-String TODO notes.txt', kind: 'read', targets: ['/C:/proj/notes.txt'] },
  { script: 'Test-Path C:\\repo\\x', kind: 'read', targets: ['/C:/repo/x'] },
  { script: 'Get-Process | Sort-Object CPU -Descending | Select-Object -First 5', kind: 'read', targets: ['process:*'] },
  { script: 'Get-ChildItem | Where-Object { $_.Length -gt 100 } | Format-Table', kind: 'read' },
  { script: 'Get-ChildItem | ForEach-Object { $_.Name }', kind: 'read' },
  { script: 'Get-ChildItem | % { Get-Content $_.FullName }', kind: 'read' },
  { script: 'Get-Content a.txt 2>$null', kind: 'read', targets: ['/C:/proj/a.txt'] },
  { script: 'Get-Content a.txt 2>&1 | Out-String', kind: 'read' },
  { script: 'Write-Output "hello"; echo done', kind: 'read' },
  { script: '"hello"', kind: 'read', reason: R.expression },
  { script: 'ConvertFrom-Json \'{"a":1}\' | ConvertTo-Csv', kind: 'read' },
  { script: 'Get-ChildItem |\n  Measure-Object', kind: 'read' },
  { script: 'Get-ChildItem\n  | Remove-Item', kind: 'write', reason: R['empty-pipeline-element'] },
  { script: 'git status', kind: 'read' },
  { script: 'git.exe log -n 5 --oneline', kind: 'read' },
  { script: 'Set-Location C:\\repo', kind: 'read', reason: R['location-change']('Set-Location') },
  { script: 'Remove-Item x -WhatIf', kind: 'read', reason: R['dry-run']('Remove-Item') },
  { script: '# a comment\nGet-Date', kind: 'read' },
  { script: 'Get-Date -Format o', kind: 'read' },
  { script: 'Get-Module -ListAvailable', kind: 'read' },
  { script: 'Get-CimInstance Win32_OperatingSystem', kind: 'read' },
  { script: 'Get-WinEvent -LogName System -MaxEvents 5', kind: 'read' },
  { script: 'Get-Acl C:\\repo', kind: 'read', targets: ['/C:/repo'] },
  { script: 'Get-Process -ErrorAction SilentlyContinue | Where-Object Name -eq node', kind: 'read' },
  { script: 'Measure-Command { Get-ChildItem }', kind: 'read' },
  { script: 'Write-Output a b c', kind: 'read' },
  { script: 'Join-Path a b c', kind: 'read', targets: [] },
  { script: 'Resolve-Path src', kind: 'read', targets: ['/C:/proj/src'] },
  { script: 'Get-ChildItem | Format-List -Property *', kind: 'read' },
  { script: 'Get-Help Get-Item -Full', kind: 'read' },

  // writes
  { script: 'Remove-Item $env:WorkDir\\*', kind: 'write', targets: ['?/$env:WorkDir/*'], destructive: false },
  { script: 'Remove-Item x', kind: 'write', targets: ['/C:/proj/x'], destructive: false, reason: R['write-verb']('Remove-Item') },
  { script: 'iex (iwr http://x)', kind: 'write' },
  { script: 'iex "Remove-Item x"', kind: 'write', reason: R['write-verb']('iex') },
  { script: "Invoke-Expression 'rm x'", kind: 'write' },
  { script: 'Get-Content a.txt | Out-File b.txt', kind: 'write', targets: ['/C:/proj/b.txt'] },
  { script: 'Get-Content a.txt > out.txt', kind: 'write', targets: ['/C:/proj/out.txt'] },
  { script: 'Get-Content a.txt *>> log.txt', kind: 'write', targets: ['/C:/proj/log.txt'] },
  { script: '& "C:\\x.exe"', kind: 'write', reason: R['call-operator'] },
  { script: '. .\\script.ps1', kind: 'write', reason: R['dot-source'] },
  { script: '.\\build.ps1', kind: 'write', reason: R['program-by-path']('.\\build.ps1') },
  { script: 'ls; rm x', kind: 'write', targets: ['/C:/proj/x'] },
  { script: 'Get-Date && rm x', kind: 'write', targets: ['/C:/proj/x'] },
  { script: 'Get-ChildItem | Remove-Item', kind: 'write', targets: ['?/(pipeline input)'] },
  { script: 'Get-ChildItem | ForEach-Object { Remove-Item $_ }', kind: 'write' },
  { script: 'Get-ChildItem | ForEach-Object Delete', kind: 'write', reason: R['member-argument']('ForEach-Object') },
  { script: 'Set-Content -Path a.txt -Value x', kind: 'write', targets: ['/C:/proj/a.txt'] },
  { script: 'Add-Content log.txt "line"', kind: 'write', targets: ['/C:/proj/log.txt'] },
  { script: 'New-Item -ItemType Directory -Path C:\\repo -Name out', kind: 'write', targets: ['/C:/repo', '/C:/repo/out'] },
  { script: 'Copy-Item a.txt C:\\backup\\a.txt', kind: 'write', targets: ['/C:/backup/a.txt', '/C:/proj/a.txt'] },
  { script: 'Invoke-WebRequest http://x -OutFile C:\\tmp\\x.zip', kind: 'write', targets: ['/C:/tmp/x.zip'] },
  { script: 'Export-Csv -Path out.csv', kind: 'write', targets: ['/C:/proj/out.csv'] },
  { script: 'Stop-Process -Name node', kind: 'write' },
  { script: 'Start-Process notepad', kind: 'write' },
  { script: 'git push', kind: 'write' },
  { script: 'Get-Credential', kind: 'write' },
  { script: 'Get-Help Get-Item -Online', kind: 'write' },
  { script: 'Get-Date &', kind: 'write', reason: R.background },
  { script: 'cd C:\\x; rm y', kind: 'write', targets: ['?/y'] },
  { script: 'if ($true) { Get-Date }', kind: 'write' },
  { script: 'function f { rm x }', kind: 'write', reason: R.keyword('function') },
  { script: '$env:PATH = "C:\\evil"', kind: 'write' },
  { script: 'ls -la', kind: 'write', reason: R['unknown-parameter']('ls', '-la') },
  { script: 'Get-Content -Path { Remove-Item x; "a" }', kind: 'write' },
  { script: 'Remove-Item x -WhatIf:$false', kind: 'write' },
  { script: 'Sort-Object -Property $env:X', kind: 'write', reason: R['dynamic-argument']('Sort-Object') },
  { script: 'unknown-thing', kind: 'write' },
  { script: 'Microsoft.PowerShell.Management\\Remove-Item x', kind: 'write' },

  // a read is a known cmdlet with known parameters, not a verb
  {
    script: 'Get-WindowsUpdate -Install -AcceptAll -AutoReboot',
    kind: 'write',
    reason: R['unknown-command']('Get-WindowsUpdate'),
  },
  { script: 'Get-PackageProvider -Name NuGet -ForceBootstrap', kind: 'write', reason: R['unknown-command']('Get-PackageProvider') },
  { script: 'Find-Package -ForceBootstrap', kind: 'write', reason: R['unknown-command']('Find-Package') },
  { script: 'Get-WindowsUpdateLog', kind: 'write', reason: R['unknown-command']('Get-WindowsUpdateLog') },
  { script: 'Test-Connection example.com', kind: 'write', reason: R['unknown-command']('Test-Connection') },
  { script: 'Get-ChildItem -Bogus', kind: 'write', reason: R['unknown-parameter']('Get-ChildItem', '-Bogus') },
  { script: 'Get-Date now later', kind: 'write', reason: R['unknown-parameter']('Get-Date', '(operand)') },
  { script: 'Get-Process -OutVariable p', kind: 'write', reason: R['parameter-assigns']('Get-Process', '-OutVariable') },
  { script: 'Measure-Command { Remove-Item x }', kind: 'write', targets: ['/C:/proj/x'] },

  // a native program's argument: an unquoted wildcard pwsh expands outside Windows, cmd.exe syntax for a .cmd shim
  { script: 'sed -n p *', kind: 'write', reason: R['native-glob']('sed', '*') },
  { script: 'git diff *', kind: 'write', reason: R['native-glob']('git', '*') },
  { script: 'git log -- src/?.ts', kind: 'write', reason: R['native-glob']('git', 'src/?.ts') },
  { script: 'git log -- a[b]', kind: 'write', reason: R['native-glob']('git', 'a[b]') },
  { script: "git log -- a'*'", kind: 'write', reason: R['native-glob']('git', "a'*'") },
  { script: "git grep -e 'a.*b'", kind: 'read' },
  { script: "npm view 'react&calc' version", kind: 'write', reason: R['native-cmd-syntax']('npm', "'react&calc'") },
  { script: 'npm view "a|b" version', kind: 'write', reason: R['native-cmd-syntax']('npm', '"a|b"') },
  { script: "git log '--format=%H'", kind: 'write', reason: R['native-cmd-syntax']('git', "'--format=%H'") },
  { script: "npm view 'x^y'", kind: 'write' },
  { script: "npm view 'x>y'", kind: 'write' },

  // destructive
  { script: 'Remove-Item -Recurse -Force C:\\repo\\build', kind: 'write', targets: ['/C:/repo/build'], destructive: true },
  { script: 'rm -r build', kind: 'write', targets: ['/C:/proj/build'], destructive: true },
  { script: 'rd -rf build', kind: 'write', destructive: true },
  { script: 'Remove-Item build -Force', kind: 'write', destructive: true, reason: R.destructive('Remove-Item', '-Force') },
  { script: 'Format-Volume -DriveLetter D', kind: 'write', destructive: true },
];

/** What the tokenizer does not read: each a write, whatever the command. */
const refused: [string, string][] = [
  ['Get-Item $(Remove-Item x)', 'a subexpression'],
  ['Get-Item @(1)', 'an array'],
  ['Get-Item @args', 'splatting'],
  ['Get-Item `$x', 'a backtick escape'],
  ['Get-Item "a`nb"', 'a backtick in a string'],
  ["Get-Item @'\nx\n'@", 'a here-string'],
  ['Get-Item "$(rm x)"', 'a subexpression in a string'],
  ['Get-Item $x', 'a variable not known'],
  ['Get-Item $env:X.Substring(1)', 'a method call'],
  ['Get-Item [IO.File]::Delete("x")', 'a type literal'],
  ['Get-Item x < y', 'input redirection'],
  ['git --% status', 'the stop-parsing token'],
  ['Get-Item \u2018x\u2019', 'typographic quotes'],
  ['Remove-Item \u2013Recurse x', 'an en dash'],
  ['Get-Item "x', 'an unclosed string'],
  ['Get-ChildItem | % { $_.Name', 'an unclosed block'],
  ['{ Remove-Item x }.Invoke()', 'a block with a member call'],
  ['git log {a}', 'a block passed to a native program'],
];

describe('classifyPowerShell', () => {
  it.each(cases)('$script', (row) => {
    const result = classifyPowerShell(row.script, { cwd: CWD });
    expect(result.kind, JSON.stringify(result)).toBe(row.kind);
    if (row.targets !== undefined) expect(result.targets).toEqual(row.targets);
    if (row.destructive !== undefined) expect(result.destructive).toBe(row.destructive);
    if (row.reason !== undefined) expect(result.reason).toBe(`powershell: ${row.reason}`);
  });

  it.each(refused)('refuses %j (%s)', (script) => {
    const result = classifyPowerShell(script, { cwd: CWD });
    // A write in an unknown place, hinted with why (issue #24: never without a target).
    expect(result.kind).toBe('write');
    expect(result.targets).toEqual([script === 'git log {a}' ? unknownPlace('git log {…}') : unknownPlace(result.reason!)]);
  });

  it('fails closed on bad input, without throwing', () => {
    for (const bad of [undefined, null, 42, {}, '', '   ', 'x'.repeat(70_000)]) {
      expect(classifyPowerShell(bad).kind).toBe('write');
    }
  });

  it('resolves POSIX paths against a POSIX working directory (pwsh outside Windows)', () => {
    expect(classifyPowerShell('Get-Content src/a.ts', { cwd: '/repo' }).targets).toEqual(['/repo/src/a.ts']);
    expect(classifyPowerShell('Remove-Item \\tmp\\x', { cwd: 'D:\\w' }).targets).toEqual(['/D:/tmp/x']);
    expect(classifyPowerShell('Remove-Item C:x', { cwd: CWD }).targets).toEqual(['?/C:x']);
    expect(classifyPowerShell('Remove-Item \\\\server\\share\\x', { cwd: CWD }).targets).toEqual(['?///server/share/x']);
  });

  it('judges an alias that is a native program outside Windows both ways', () => {
    // `sort -o f` is the native sort writing f on pwsh for Linux.
    expect(classifyPowerShell('sort -o out.txt', { cwd: '/repo' }).kind).toBe('write');
  });
});

describe('the powershell command line', () => {
  const line = (argv: string[]) => classifyPowerShellArgv(argv, { cwd: CWD });

  it('judges the script of -Command (and -c, and the rest of the arguments)', () => {
    expect(line(['powershell.exe', '-NoProfile', '-Command', 'Get-ChildItem'])).toMatchObject({ kind: 'read', targets: ['/C:/proj'] });
    expect(line(['pwsh', '-c', 'Remove-Item', '-Recurse', 'x'])).toMatchObject({
      kind: 'write',
      destructive: true,
      targets: ['/C:/proj/x'],
    });
    expect(line(['powershell', '-NoLogo', '-ExecutionPolicy', 'Bypass', '-Comm', 'Get-Date']).kind).toBe('read');
    expect(line(['powershell', 'Get-Date']).kind).toBe('read');
  });

  it.each([
    [['powershell', '-EncodedCommand', 'ZwBjAGkA'], R['cli-encoded']('powershell')],
    [['powershell', '-enc', 'ZwBjAGkA'], R['cli-encoded']('powershell')],
    [['powershell', '-e', 'ZwBjAGkA'], R['cli-encoded']('powershell')],
    [['pwsh', '-File', 'x.ps1'], R['cli-file']('pwsh')],
    [['pwsh', 'x.ps1'], R['cli-file']('pwsh')],
    [['pwsh', '-Command', '-'], R['cli-stdin']('pwsh')],
    [['pwsh'], R['cli-no-command']('pwsh')],
    [['pwsh', '-NoExit', '-c', 'Get-Date'], R['cli-option']('pwsh', '-NoExit')],
    [['pwsh', '/c', 'Get-Date'], R['cli-file']('pwsh')],
  ])('%j is a write', (argv, reason) => {
    expect(line(argv)).toMatchObject({ kind: 'write', reason: `powershell: ${reason}` });
  });
});

describe('the shell classifier hands PowerShell over', () => {
  it('a script string: powershell -Command "…" is judged as PowerShell, never as POSIX shell', () => {
    expect(classifyShellCommand('powershell -Command "Remove-Item x"', { cwd: '/repo' })).toMatchObject({
      kind: 'write',
      targets: ['/repo/x'],
      reason: `powershell: ${R['write-verb']('Remove-Item')}`,
    });
    expect(classifyShellCommand('pwsh -NoProfile -c "Get-ChildItem -Path src"', { cwd: '/repo' })).toMatchObject({
      kind: 'read',
      targets: ['/repo/src'],
    });
    // `@(…)` is a word to bash; PowerShell runs it.
    expect(classifyShellCommand("pwsh -c 'Get-Item @(Remove-Item x)'").kind).toBe('write');
    expect(classifyShellCommand('/usr/bin/pwsh -c "Remove-Item -Recurse x"').destructive).toBe(true);
    expect(classifyShellCommand('pwsh -c "Get-Date" && rm y').kind).toBe('write');
  });

  it('a single-quoted script is judged by PowerShell alone, not as code bash may evaluate', () => {
    expect(classifyShellCommand(`pwsh -c 'Get-Content "$(Remove-Item x)"'`)).toMatchObject({
      kind: 'write',
      reason: expect.stringMatching(/^powershell: /),
    });
    // Elsewhere bash may evaluate it (a subscript of `read`, `declare`): still a write for bash's reason.
    expect(classifyShellCommand(`read 'a[$(rm x)]'`).reason).not.toMatch(/^powershell:/);
    expect(classifyShellCommand(`f() { read "$1"; }; f 'a[$(rm x)]'`).kind).toBe('write');
  });

  it('an argv array, as Codex sends it on Windows', () => {
    expect(classifyShellCommand(['powershell.exe', '-Command', 'Get-ChildItem'], { cwd: 'C:\\repo' })).toMatchObject({
      kind: 'read',
      targets: ['/C:/repo'],
    });
    expect(classifyShellCommand(['powershell.exe', '-NoProfile', '-Command', 'Remove-Item x'], { cwd: 'C:\\repo' })).toMatchObject({
      kind: 'write',
      targets: ['/C:/repo/x'],
    });
    expect(classifyShellCommand(['PowerShell.exe', '-EncodedCommand', 'abc']).kind).toBe('write');
  });

  it('a native program inside PowerShell goes back to the command table', () => {
    expect(classifyShellCommand(['pwsh', '-c', 'git status']).kind).toBe('read');
    expect(classifyShellCommand(['pwsh', '-c', 'git push --force']).kind).toBe('write');
    expect(classifyShellCommand(['pwsh', '-c', 'bash -c "rm -rf /"'])).toMatchObject({ kind: 'write', destructive: true });
  });

  it('a dynamic or appended argument is a write, and nesting is bounded', () => {
    expect(classifyShellCommand('pwsh -c "$X"').kind).toBe('write');
    expect(classifyShellCommand('echo x | xargs pwsh -c').kind).toBe('write');
    let script = 'Get-Date';
    for (let i = 0; i < 12; i++) script = `pwsh -c '${script.replace(/'/g, "''")}'`;
    expect(classifyShellCommand(['pwsh', '-c', script]).kind).toBe('write');
  });
});
