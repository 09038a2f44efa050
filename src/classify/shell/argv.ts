/**
 * One simple command given as words, its name looked up in the table
 * (DESIGN.md §5.5): a name only known when it runs, a function the script
 * defines, a program run by a path outside the trusted directories, and a
 * command not in the table are writes; `powershell`/`pwsh` go to the
 * PowerShell classifier; anything else is judged by its rule.
 */
import { posix } from 'node:path';
import { isPowerShellProgram, judgePowerShellFromShell } from '../powershell/from-shell.js';
import type { Cwds } from './cwd.js';
import { evaluateRule } from './evaluate-rule.js';
import { MAX_SHELL_NODE_DEPTH, TooDeep } from './limits.js';
import { judgeLn, noteBindMount } from './links.js';
import { variableNameProblem } from './names.js';
import { writePart } from './parts.js';
import { SHELL_REASONS } from './reasons.js';
import type { Argv, JudgeContext } from './words.js';

/**
 * Judges one simple command given as words (the first is the command name),
 * pushing its parts: the command table's rule for the name (DESIGN.md §5.5),
 * through wrappers to the command they run. `argv.unknownArgs`: more
 * arguments only known when it runs are appended (xargs).
 *
 * @throws TooDeep past `MAX_SHELL_NODE_DEPTH` (the entry point turns it into a write).
 */
export function judgeArgv(argv: Argv, cwds: Cwds, ctx: JudgeContext, depth: number): void {
  if (depth > MAX_SHELL_NODE_DEPTH) throw new TooDeep();
  const words = argv.words;
  const nameWord = words[0];
  if (nameWord === undefined) {
    ctx.parts.push(writePart([], false, SHELL_REASONS['no-command']));
    return;
  }
  if (nameWord.text === null || nameWord.pattern) {
    ctx.parts.push(writePart([], false, SHELL_REASONS['dynamic-command-name']));
    return;
  }
  let name = nameWord.text;
  if (ctx.functions.has(name)) {
    ctx.parts.push(writePart([], false, SHELL_REASONS['function-call'](name)));
    return;
  }
  const nameProblem = variableNameProblem(name, words.slice(1));
  if (nameProblem !== null) ctx.parts.push(writePart([], false, nameProblem)); // and judged on, for targets
  if (name.includes('/')) {
    const dir = posix.dirname(posix.normalize(name));
    if (!ctx.table.trusted.has(dir)) {
      ctx.parts.push(writePart([], false, SHELL_REASONS['program-by-path'](name)));
      return;
    }
    name = posix.basename(name);
  }
  if (name === 'ln' || name === 'link') {
    judgeLn(words.slice(1), cwds, ctx, name); // the link's source is resolved against the link's directory
    return;
  }
  if (name === 'mount') noteBindMount(words.slice(1), cwds, ctx); // a bind mount: DST leads elsewhere (mount is judged below)
  if (isPowerShellProgram(name)) {
    // PowerShell is never judged as POSIX shell: its command line goes to the PowerShell classifier.
    judgePowerShellFromShell(name, { words: words.slice(1), unknownArgs: argv.unknownArgs, cwds }, ctx, depth + 1);
    return;
  }
  const rule = ctx.table.commands.get(name);
  if (rule === undefined) {
    ctx.parts.push(writePart([], false, SHELL_REASONS['unknown-command'](name)));
    return;
  }
  evaluateRule(rule, {
    label: name,
    words: words.slice(1),
    cwds,
    ctx,
    depth: depth + 1,
    unknownArgs: argv.unknownArgs,
    targets: [],
    stdin: argv.stdin ?? null,
  });
  if (name === 'cp') judgeLn(words.slice(1), cwds, ctx, 'cp'); // cp -l, cp -s: the links it makes (after the copy, whose targets stay)
}
