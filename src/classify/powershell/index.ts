/**
 * PowerShell commands classified (DESIGN.md §5.5, §5.6): what Codex on
 * Windows and other agents run through `powershell -Command …`/`pwsh`, or a
 * tool that takes a PowerShell script. A PowerShell command is never parsed
 * as POSIX shell. Reads are an allow-list (`cmdlets.ts`, `READ_CMDLETS`):
 * built-in cmdlets known to only read or compute (`Get-ChildItem`,
 * `Get-Content`, `Test-Path`, `Select-Object`, `Measure-Object`,
 * `Format-Table`, `ConvertTo-Json`, `Write-Output`, `ForEach-Object` whose
 * script block reads...), each with only the parameters known for it; a
 * verb proves nothing (`Get-WindowsUpdate -Install` is a module's cmdlet).
 * Also reads: `Set-Location` (a location change), a write cmdlet with
 * `-WhatIf` (a dry run), native programs the shell command table calls
 * reads (an argument holding a wildcard not quoted, which pwsh expands
 * outside Windows, or `&|<>^%`, which cmd.exe reads in a `.cmd` shim's
 * arguments, is a write), and expressions of literals and inert
 * variables. Everything else is a write: any other cmdlet, a parameter not
 * known, a common parameter that assigns a variable (`-OutVariable`), the
 * call operator `&`, dot-sourcing, unknown programs, a redirection to a
 * file, and anything the tokenizer does not read (`tokenize.ts`).
 * `Remove-Item` with `-Recurse`, `-Force` or a parameter not known is
 * destructive.
 *
 * Targets: `-Path`/`-LiteralPath` values and the positional path of path
 * cmdlets, resolved against the working directory (`paths.ts`: `C:\repo`
 * as `/C:/repo`; a path holding a variable in a place not known).
 * Processes and services are named places (`cmdlets.ts`, `PLACE_CMDLETS`):
 * `Stop-Process -Name node` / `kill 12` write `process:node` / `process:12`,
 * `Restart-Service X` and the other `*-Service` writes `service:X`;
 * `Get-Process` / `Get-Service` read `process:*` / `service:*`, or the
 * names they are given; `Get-Process node | Stop-Process` writes
 * `process:node`. A write part that names no target gets an unknown place
 * hinted with the command as written (`?/Invoke-WebRequest https://x`),
 * and a script not judged one hinted with why (`?/powershell: …`): a
 * PowerShell write is never without a target (issue #24).
 *
 * This folder: `tokenize.ts`, `judge.ts`, `cmdlets.ts` (the data),
 * `paths.ts`, `cli.ts` (the `powershell` command line), `classify.ts`,
 * `from-shell.ts` (the shell classifier's hook), `reasons.ts`
 * (`POWERSHELL_REASONS`). This file is the surface.
 *
 * Spec: DESIGN.md §5.1, §5.2, §5.5, §5.6.
 */
import { UNKNOWN_PLACE } from '../../../machines/safety.targets.js';
import type { Classification } from '../classification.js';
import { MAX_SHELL_NESTING } from '../shell/limits.js';
import { classifyShellCommand, type ShellTable } from '../shell/index.js';
import { judgePowerShellCommandLine, judgePowerShellScript } from './classify.js';
import type { NativeJudge } from './judge.js';
import { cwdOf } from './paths.js';
import { POWERSHELL_REASONS } from './reasons.js';

export { POWERSHELL_REASONS };

let active = 0;

/** Native programs judged by the shell classifier (`table`), relative targets in a place not known when the location is not. */
function shellJudge(table: ShellTable | undefined): NativeJudge {
  return (argv, dir) => {
    const verdict = classifyShellCommand(argv, { ...(table ? { table } : {}), ...(dir ? { cwd: dir } : {}) });
    if (dir !== null) return verdict;
    const targets = verdict.targets.map((t) => (t.startsWith('/') || t.startsWith('~') ? t : `${UNKNOWN_PLACE}${t}`));
    return { ...verdict, targets };
  };
}

function guarded(run: () => Classification): Classification {
  if (active >= MAX_SHELL_NESTING) {
    return {
      kind: 'write',
      targets: [],
      destructive: false,
      reason: `powershell: ${POWERSHELL_REASONS['nested-too-deep'](MAX_SHELL_NESTING)}`,
    };
  }
  active++;
  try {
    return run();
  } finally {
    active--;
  }
}

/**
 * Classifies a PowerShell script (see the module documentation): `read`
 * only when every command in it is a known read, else `write`; targets
 * normalized against `cwd` (`C:\repo` or `/repo`). Native programs are
 * judged by the shell classifier with `table` (default the shipped one).
 * Never throws: anything not understood is a `write`.
 *
 * @param script the PowerShell script (`"Get-ChildItem -Path C:\\repo"`).
 */
export function classifyPowerShell(script: unknown, options?: { cwd?: string; table?: ShellTable }): Classification {
  return guarded(() => judgePowerShellScript(script, cwdOf(options?.cwd), shellJudge(options?.table)));
}

/**
 * Classifies a `powershell`/`pwsh` command line given as argv
 * (`["powershell.exe", "-NoProfile", "-Command", "Get-ChildItem"]`): the
 * script of `-Command` by `classifyPowerShell`; `-File`,
 * `-EncodedCommand`, no command and unknown options are writes.
 */
export function classifyPowerShellArgv(argv: readonly string[], options?: { cwd?: string; table?: ShellTable }): Classification {
  return guarded(() => {
    const [program, ...args] = argv;
    if (typeof program !== 'string' || args.some((a) => typeof a !== 'string')) return judgePowerShellScript(undefined, '', null);
    return judgePowerShellCommandLine(program, args, cwdOf(options?.cwd), shellJudge(options?.table));
  });
}
