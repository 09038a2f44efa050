/**
 * A PowerShell script, or a `powershell`/`pwsh` command line, classified
 * (DESIGN.md §5.5, §5.6): tokenized (`tokenize.ts`), its statements judged
 * into parts (`judge.ts`), the parts combined as the shell classifier
 * combines its own: the worst kind, the targets of the parts of that kind.
 * Native programs are judged by the caller's `NativeJudge` (the shell
 * command table); without one they are writes. Never throws.
 */
import { type Classification, failClosed, normalizeTargets, worstOf } from '../classification.js';
import { unknownPlace } from '../../../machines/safety.targets.js';
import { MAX_SHELL_COMMAND_BYTES } from '../shell/limits.js';
import { scriptOfCommandLine, type CliWord } from './cli.js';
import { judgeStatements, type NativeJudge, type PsContext } from './judge.js';
import type { PsCwd } from './paths.js';
import { POWERSHELL_REASONS as R } from './reasons.js';
import { PsUnsure, tokenizeScript } from './tokenize.js';

/** The longest script judged (characters); a longer one is a write. */
export const MAX_POWERSHELL_SCRIPT = MAX_SHELL_COMMAND_BYTES;

const MINOR = new Set([R.expression, R['redirect-stream']].map((reason) => `powershell: ${reason}`));

/** The parts combined: the worst kind, the targets of the parts of that kind, the reason of the part that tells most. */
function combine(parts: Classification[]): Classification {
  const worst = worstOf(parts, failClosed(`powershell: ${R['runs-nothing']}`));
  const result = worstOf(
    parts.filter((part) => part.kind === worst.kind),
    worst,
  );
  const telling =
    parts.find((part) => (result.destructive ? part.destructive : part.kind === result.kind && !MINOR.has(part.reason ?? ''))) ??
    parts.find((part) => part.kind === result.kind);
  if (telling?.reason !== undefined) result.reason = telling.reason;
  result.targets = normalizeTargets(result.targets);
  return result;
}

/**
 * Classifies a PowerShell script (see the module documentation) run in
 * `cwd` (target form, `paths.ts`), native programs judged by `native`.
 * A script that is not a string, empty, too long, or holding anything the
 * tokenizer does not read is a `write` in an unknown place (`placed`); so is
 * every write part that names no target (`judge.ts`).
 */
export function judgePowerShellScript(script: unknown, cwd: PsCwd, native: NativeJudge | null): Classification {
  return placed(judgeScript(script, cwd, native));
}

/**
 * A write that names no target given an unknown place hinted with its
 * reason (`?/powershell: the script is empty`): a PowerShell write is never
 * without a target (issue #24). Anything else as it is.
 */
function placed(result: Classification): Classification {
  if (result.kind !== 'write' || result.targets.length > 0) return result;
  return { ...result, targets: [unknownPlace(result.reason ?? 'powershell script')] };
}

function judgeScript(script: unknown, cwd: PsCwd, native: NativeJudge | null): Classification {
  try {
    if (typeof script !== 'string') return failClosed(`powershell: ${R['not-a-string']}`);
    if (script.length > MAX_POWERSHELL_SCRIPT) return failClosed(`powershell: ${R['script-too-long'](MAX_POWERSHELL_SCRIPT)}`);
    if (script.trim() === '') return failClosed(`powershell: ${R['script-empty']}`);
    const { statements, assigned } = tokenizeScript(script);
    const ctx: PsContext = { cwd, native, parts: [], assigned };
    judgeStatements(statements, ctx, 0);
    return combine(ctx.parts);
  } catch (error) {
    return failClosed(`powershell: ${error instanceof PsUnsure ? error.reason : R['not-judged']}`);
  }
}

/**
 * Classifies a `powershell`/`pwsh` command line: the script of its
 * `-Command` judged by `judgePowerShellScript`; anything else
 * (`scriptOfCommandLine`) a write.
 *
 * @param program the program as written (`pwsh`, `powershell.exe`).
 * @param args its arguments; null for one only known when it runs.
 */
export function judgePowerShellCommandLine(
  program: string,
  args: readonly CliWord[],
  cwd: PsCwd,
  native: NativeJudge | null,
): Classification {
  const found = scriptOfCommandLine(program, args);
  if ('write' in found) return placed(failClosed(`powershell: ${found.write}`));
  return judgePowerShellScript(found.script, cwd, native);
}
