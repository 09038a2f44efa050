/**
 * The `powershell` / `pwsh` command line (DESIGN.md §5.5): the script it
 * runs, found by its options. Only `-Command` (`-c`, or a prefix of it of
 * three letters or more) with a script on the command line is judged: the
 * rest of the arguments after it, joined by spaces, as PowerShell does.
 * `-File`, `-EncodedCommand`, a script from standard input (`-Command -`,
 * or no command at all), `-NoExit` and any option not known are writes.
 * A first operand without an option is the command for `powershell` and a
 * script file for `pwsh`.
 */
import { POWERSHELL_REASONS as R } from './reasons.js';

/** The programs that start PowerShell, lower case (compared without case). */
export const POWERSHELL_PROGRAMS: ReadonlySet<string> = new Set(['powershell', 'powershell.exe', 'pwsh', 'pwsh.exe']);

/** Options without a value that change nothing the script does to the world. */
const SWITCHES = new Set(['noprofile', 'nop', 'nologo', 'noninteractive', 'noni', 'sta', 'mta', 'noprofileloadtime']);

/** Options with a value that change nothing the script does to the world. */
const VALUE_OPTIONS = new Set(['executionpolicy', 'ep', 'ex', 'inputformat', 'if', 'outputformat', 'of', 'o', 'windowstyle', 'w']);

/** One argument of the command line: its text, or null when it is only known when it runs. */
export type CliWord = string | null;

/**
 * The script a `powershell`/`pwsh` command line runs, or `{ write }` with the
 * reason it is not judged.
 *
 * @param program the program's name as written (`pwsh`, `powershell.exe`).
 * @param args the arguments after it.
 */
export function scriptOfCommandLine(program: string, args: readonly CliWord[]): { script: string } | { write: string } {
  const pwsh = program.toLowerCase().startsWith('pwsh');
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === null || arg === undefined) return { write: R['cli-dynamic'](program) };
    const rest = args.slice(i + (arg.startsWith('-') ? 1 : 0));
    const name = arg.startsWith('-') ? arg.slice(1).toLowerCase() : null;
    const isCommand = name !== null && (name === 'c' || (name.length >= 3 && 'command'.startsWith(name)));
    if (isCommand || name === null) {
      if (name === null && pwsh) return { write: R['cli-file'](program) };
      if (rest.some((word) => word === null)) return { write: R['cli-dynamic'](program) };
      const script = rest.join(' ');
      if (script.trim() === '-') return { write: R['cli-stdin'](program) };
      if (script.trim() === '') return { write: R['cli-no-command'](program) };
      return { script };
    }
    if (SWITCHES.has(name)) continue;
    if (VALUE_OPTIONS.has(name) && i + 1 < args.length) {
      i++;
      continue;
    }
    if (name === 'f' || 'file'.startsWith(name)) return { write: R['cli-file'](program) };
    if (name === 'e' || name === 'ec' || 'encodedcommand'.startsWith(name)) return { write: R['cli-encoded'](program) };
    return { write: R['cli-option'](program, arg) };
  }
  return { write: R['cli-no-command'](program) };
}
