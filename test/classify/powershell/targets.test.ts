/**
 * PowerShell targets for issue #24: processes and services as named places
 * (`process:<name-or-id>`, `service:<name>`), and a write that names no
 * place in an unknown place (`?/<hint>`), never without a target.
 *
 * Spec: DESIGN.md §5.1 (target strings), §5.3 (validated target).
 */
import { describe, expect, it } from 'vitest';
import { classifyPowerShell } from '../../../src/classify/powershell/index.js';

const CWD = 'C:\\proj';
const ps = (script: string) => classifyPowerShell(script, { cwd: CWD });

describe('processes', () => {
  it.each([
    ['Stop-Process -Name node', ['process:node']],
    ['Stop-Process -Id 12', ['process:12']],
    ['Stop-Process 12', ['process:12']],
    ['kill 12', ['process:12']],
    ['spps -Id 12,13', ['process:12', 'process:13']],
    ['Stop-Process -Name node -Force', ['process:node']],
    ['Get-Process node | Stop-Process', ['process:node']],
    ['Get-Process node | Where-Object { $_.CPU -gt 10 } | Stop-Process -Force', ['process:node']],
    ['Get-Process | Stop-Process', ['process:*']],
    ['Stop-Process -Name $env:VICTIM', ['?/$env:VICTIM']],
    ['Get-ChildItem | Stop-Process', ['?/Stop-Process (pipeline input)']],
  ])('%s is a write of %j', (script, targets) => {
    expect(ps(script)).toMatchObject({ kind: 'write', targets });
  });

  it.each([
    ['Get-Process', ['process:*']],
    ['Get-Process node', ['process:node']],
    ['Get-Process -Name node,npm', ['node', 'npm'].map((n) => `process:${n}`)],
    ['Get-Process -Id 12', ['process:12']],
    ['gps', ['process:*']],
    ['Get-Process -Name $env:X', []],
    ['Get-Process -ComputerName h node', []],
  ])('%s is a read establishing %j', (script, targets) => {
    expect(ps(script)).toMatchObject({ kind: 'read', targets });
  });

  it('a dry run is a read of nothing', () => {
    expect(ps('Stop-Process -Name node -WhatIf')).toMatchObject({ kind: 'read', targets: [] });
  });
});

describe('services', () => {
  it.each([
    ['Restart-Service nginx', ['service:nginx']],
    ['Stop-Service -Name nginx', ['service:nginx']],
    ['Start-Service -Name a,b', ['service:a', 'service:b']],
    ['Set-Service -Name X -StartupType Disabled', ['service:X']],
    ['Get-Service nginx | Restart-Service', ['service:nginx']],
    ['Stop-Service -DisplayName "My Svc"', ['?/Stop-Service -DisplayName "My Svc"']],
    ['Set-Service -ComputerName h -Name X -Status Stopped', ['?/Set-Service -ComputerName h']],
    ['Get-Process node | Restart-Service', ['?/Restart-Service (pipeline input)']],
  ])('%s is a write of %j', (script, targets) => {
    expect(ps(script)).toMatchObject({ kind: 'write', targets });
  });

  it.each([
    ['Get-Service', ['service:*']],
    ['Get-Service nginx', ['service:nginx']],
    ['Get-Service -Name nginx', ['service:nginx']],
    ['Get-Service -DisplayName "My Svc"', []],
    ['Get-Service -ComputerName h nginx', []],
  ])('%s is a read establishing %j', (script, targets) => {
    expect(ps(script)).toMatchObject({ kind: 'read', targets });
  });
});

describe('writes that name no place', () => {
  it('a path from an environment variable is an unknown place hinted with it, never dropped', () => {
    expect(ps('Remove-Item $env:WorkDir\\*')).toMatchObject({ kind: 'write', targets: ['?/$env:WorkDir/*'] });
    expect(ps('Remove-Item -Recurse -Force "$env:WorkDir\\build"')).toMatchObject({ kind: 'write', targets: ['?/$env:WorkDir/build'] });
  });

  it.each([
    ['Invoke-WebRequest https://x.test/a', ['?/Invoke-WebRequest https://x.test/a']],
    ['deploy-app --prod', ['?/deploy-app --prod']],
    ['Clear-RecycleBin -Force', ['?/Clear-RecycleBin -Force']],
    ['Get-ChildItem; Start-Process notepad', ['?/Start-Process notepad']],
  ])('%s: a write in an unknown place hinted with the command', (script, targets) => {
    expect(ps(script)).toMatchObject({ kind: 'write', targets });
  });

  it('each write part without a place keeps its own unknown place beside the others’ targets', () => {
    expect(ps('Remove-Item C:\\proj\\a; Invoke-WebRequest https://x.test/a').targets).toEqual([
      '/C:/proj/a',
      '?/Invoke-WebRequest https://x.test/a',
    ]);
  });

  it.each([
    ['', '?/powershell: the script is empty'],
    ['Get-Item (Remove-Item x)', '?/powershell: a parenthesis (grouping or a subexpression) is not something this classifier parses'],
  ])('%j, not judged, is a write in an unknown place hinted with why', (script, target) => {
    expect(ps(script)).toMatchObject({ kind: 'write', targets: [target] });
  });

  it('a script that is not a string is a write in an unknown place', () => {
    expect(classifyPowerShell(42)).toMatchObject({ kind: 'write', targets: ['?/powershell: the script is not a string'] });
  });
});

describe('variables assigned one literal earlier in the script', () => {
  it.each([
    ["$d = 'C:\\x'; Remove-Item $d -Recurse", 'write', ['/C:/x']],
    ["$D = 'C:\\x'\nRemove-Item $d", 'write', ['/C:/x']],
    ['$d = \'C:\\x\' # where\nGet-ChildItem "$d\\sub"', 'read', ['/C:/x/sub']],
    ['$d = "C:\\it""s"; Remove-Item $d', 'write', ['/C:/it"s']],
    ["Get-Item x; $d = 'C:\\y'; Remove-Item $d", 'write', ['/C:/y']],
    ['$n = 12; Stop-Process -Id $n', 'write', ['process:12']],
    ["$d = 'a'", 'read', []],
  ])('%j resolves', (script, kind, targets) => {
    expect(ps(script)).toMatchObject({ kind, targets });
  });

  it.each([
    ["$d = 'C:\\x'; $d += '\\..\\..'; Remove-Item $d", 'an assignment to $d other than one literal at the top level'],
    ["$d = 'C:\\x'; 1 | % { $d = 'C:\\' }; Remove-Item $d", 'an assignment to $d other than one literal at the top level'],
    ["$d = 'C:\\x'; $d.Length", 'a member, call, index or block after a variable'],
  ])('%j is refused: %s', (script, what) => {
    const target = `?/powershell: ${what} is not something this classifier parses`;
    expect(ps(script)).toMatchObject({ kind: 'write', targets: [target] });
  });

  it.each([
    '$d = Get-Location; Remove-Item $d',
    "Remove-Item $d; $d = 'C:\\x'",
    '$d = "C:\\$env:X"; Remove-Item $d',
    "$d = 'C:\\x' | Out-Null; Remove-Item $d",
  ])('%j: a value not a lone literal, or a use before it, is not followed', (script) => {
    expect(ps(script)).toMatchObject({
      kind: 'write',
      targets: ["?/powershell: the variable '$d' is not one this classifier knows to be inert"],
    });
  });

  it('a write that may assign a session variable then names an unknown place (only when the script assigned one)', () => {
    expect(ps("$d = 'C:\\x'; Copy-Item a b -PassThru -OutVariable d; Remove-Item $d").targets).toEqual([
      '/C:/proj/a',
      '/C:/proj/b',
      '/C:/x',
      '?/Copy-Item -OutVariable',
    ]);
    expect(ps('Stop-Process -Name node -ov p').targets).toEqual(['process:node']);
    expect(ps('$x = 1; Copy-Item a b -wa SilentlyContinue').targets).toEqual(['/C:/proj/a', '/C:/proj/b']);
  });
});

describe('native programs the command table knows', () => {
  it('a package manager changes the project of its working directory', () => {
    expect(ps('npm install')).toMatchObject({ kind: 'write', targets: ['/C:/proj'] });
  });
});
