/**
 * The shell classifier's hook for PowerShell (DESIGN.md §5.5): a simple
 * command whose program is `powershell`, `pwsh` (or `.exe`) is never judged
 * by the POSIX command table; its command line goes to the PowerShell
 * classifier, whose native programs come back to the shell's judge
 * (`ctx.steps.argv`) in the same context: the same table, work budget and
 * nesting bound.
 */
import { type Classification, failClosed, worstOf } from '../classification.js';
import type { Cwds } from '../shell/cwd.js';
import { MAX_SHELL_NESTING } from '../shell/limits.js';
import { staticWord, type JudgeContext, type Word } from '../shell/words.js';
import { judgePowerShellCommandLine } from './classify.js';
import { POWERSHELL_PROGRAMS } from './cli.js';
import type { NativeJudge } from './judge.js';
import { cwdOf, type PsCwd } from './paths.js';
import { POWERSHELL_REASONS as R } from './reasons.js';

/** Whether a program name (the last part of its path) starts PowerShell. */
export function isPowerShellProgram(name: string): boolean {
  return POWERSHELL_PROGRAMS.has(name.toLowerCase());
}

/** A shell directory in the PowerShell classifier's form: a relative one (after `cd d` from a place not known) is not known. */
function psCwdOf(cwd: string | null): PsCwd {
  if (cwd === null || cwd === '') return cwd;
  if (cwd.startsWith('~')) return cwd;
  const converted = cwdOf(cwd);
  return converted === '' ? null : converted;
}

/**
 * Judges `powershell …`/`pwsh …` found by the shell classifier, pushing
 * one part per directory the shell may be in (`call.cwds`). `unknownArgs`: more arguments
 * only known when it runs are appended (xargs): a write.
 */
export function judgePowerShellFromShell(
  program: string,
  call: { words: Word[]; unknownArgs: boolean; cwds: Cwds },
  ctx: JudgeContext,
  depth: number,
): void {
  const cwds = call.cwds;
  if (call.unknownArgs) {
    ctx.parts.push(failClosed(`powershell: ${R['cli-dynamic'](program)}`));
    return;
  }
  if (ctx.nesting + 1 > MAX_SHELL_NESTING) {
    ctx.parts.push(failClosed(`powershell: ${R['nested-too-deep'](MAX_SHELL_NESTING)}`));
    return;
  }
  const args = call.words.map((word) => (word.pattern ? null : word.text));
  const native: NativeJudge = (argv, dir) => {
    const sub: JudgeContext = { ...ctx, nesting: ctx.nesting + 1, parts: [] as Classification[] };
    ctx.steps.argv({ words: argv.map(staticWord), unknownArgs: false }, [dir], sub, depth + 1);
    return worstOf(sub.parts, failClosed(`powershell: ${R['native-unknown'](argv[0] ?? '')}`));
  };
  for (const cwd of cwds.length === 0 ? [null] : cwds) {
    ctx.parts.push(judgePowerShellCommandLine(program, args, psCwdOf(cwd), native));
  }
}
