/**
 * Wrappers (DESIGN.md §5.5): commands that run another command, judged in
 * turn. One function per mode of the rule's `run`: `shell` (`bash -c`
 * parses its script again), `eval` (its operands joined are a script) and
 * `argv` (`sudo`, `env`, `timeout`, `xargs`: the words after its options).
 * The wrapper's own part is pushed only when it says more than a read.
 */
import { assignmentPart } from './assignment.js';
import { hasOwnEffects, ownPart, type Effects, type RuleCall } from './effects.js';
import { optionIn, type ParsedArgs } from './parse-args.js';
import { SHELL_REASONS } from './reasons.js';
import type { CompiledRule, CompiledRun } from './table-compile.js';
import { unknownPlace } from '../../../machines/safety.targets.js';
import { childShell } from './variables.js';
import { DYNAMIC, staticWord, type JudgeContext, type Word } from './words.js';

/** A rule that runs another command, in a mode other than `exec` (find -exec is a leaf's option). */
export type WrapperRule = CompiledRule & { run: CompiledRun };

/** `bash -c SCRIPT`: the script is parsed and judged in a child shell; without `-c`, or a script only known when it runs, a write. */
function evaluateShellWrapper(run: CompiledRun, effects: Effects, args: ParsedArgs, call: RuleCall): void {
  const { label, ctx } = call;
  const hasScript = args.options.some((option) => option.names.includes(run.shellOption));
  const script = args.rest[0];
  if (!hasScript || script === undefined) {
    effects.writes.push(SHELL_REASONS['script-not-given'](label));
    ctx.parts.push(ownPart(effects, 'write', ''));
    return;
  }
  if (script.text === null || script.pattern) {
    effects.writes.push(SHELL_REASONS['dynamic-script'](label));
    ctx.parts.push(ownPart(effects, 'write', ''));
    return;
  }
  if (hasOwnEffects(effects) || run.selfWrites)
    ctx.parts.push(ownPart(effects, run.selfWrites ? 'write' : 'read', SHELL_REASONS.writes(label)));
  ctx.steps.script(script.text, effects.here, { ...ctx, shell: childShell() }, call.depth + 1); // a child shell: none of our variables
}

/** `eval WORDS`: the words joined by spaces are a script, judged in a child shell. */
function evaluateEvalWrapper(effects: Effects, args: ParsedArgs, call: RuleCall): void {
  const { label, ctx } = call;
  if (call.unknownArgs || args.operands.some((w) => w.text === null)) {
    effects.writes.push(SHELL_REASONS['dynamic-script'](label));
    ctx.parts.push(ownPart(effects, 'write', ''));
    return;
  }
  if (args.operands.length === 0) {
    ctx.parts.push(ownPart(effects, 'read', SHELL_REASONS['eval-nothing'](label)));
    return;
  }
  ctx.steps.script(args.operands.map((w) => w.text).join(' '), effects.here, ctx, call.depth + 1);
}

/** `env X=1 cmd`: the assignments from `index` on, judged; returns the index of the command's first word. */
function skipAssignments(rest: Word[], index: number, effects: Effects, ctx: JudgeContext): number {
  for (; index < rest.length; index++) {
    const text = rest[index]!.text;
    const match = text === null ? null : /^([A-Za-z_][A-Za-z0-9_]*)=([\s\S]*)$/.exec(text);
    if (match === null) break;
    const part = assignmentPart(match[1]!, match[2]!, ctx, 'environment');
    if (part.kind === 'write') effects.writes.push(part.reason!.replace(/^shell: /, ''));
  }
  return index;
}

/** The hint of the arguments xargs reads from its input, when where they are is not known. */
const XARGS_INPUT = 'xargs <input>';

/**
 * The word standing for the arguments xargs reads (DESIGN.md §5.1): paths
 * under the pipeline producer's places when it printed them NUL-separated
 * and xargs takes them so (`find ROOT -print0 | xargs -0`); split at blanks
 * or newlines (`find ROOT | xargs`, `ls d | xargs`), a name may make any
 * word (`..`), so the places and an unknown place; from any other input
 * (`cat list | xargs`, `-a file`), an unknown place.
 */
function xargsInput(args: ParsedArgs, ctx: JudgeContext): Word {
  const input = ctx.pipeInput ?? null;
  ctx.pipeInput = null; // taken: commands it runs do not read the pipe's paths
  const fromFile = args.options.some((option) => ['-a', '--arg-file'].some((name) => option.names.includes(name)));
  const nul = args.options.some((option) => ['-0', '--null'].some((name) => option.names.includes(name)));
  if (input === null || fromFile) return { text: null, optionLike: true, pattern: false, hint: XARGS_INPUT };
  const places = input.nul && nul ? input.places : [...input.places, unknownPlace(`${XARGS_INPUT} split at blanks`)];
  return { text: null, optionLike: true, pattern: false, hint: XARGS_INPUT, places };
}

/**
 * The command a wrapper runs: its words from `index`, its default command;
 * for xargs (`appendsArguments`) the arguments it reads appended, or put
 * where its replace marker is (`xargs -I R`: a word that is R; a word
 * holding R among other text is not known).
 */
function wrappedCommand(run: CompiledRun, args: ParsedArgs, index: number, ctx: JudgeContext): Word[] {
  let inner = args.rest.slice(index);
  if (inner.length === 0 && run.defaultCommand !== null) inner = run.defaultCommand.map(staticWord);
  const input = run.appendsArguments ? xargsInput(args, ctx) : null;
  let replaced = false;
  for (const option of args.options) {
    if (!optionIn(option, run.replace)) continue;
    replaced = true;
    // xargs -I R: words holding R get input only known when it runs.
    const marker = option.value === undefined ? option.attached || '{}' : option.value.text;
    inner = inner.map((w) =>
      marker === null || w.text === null ? DYNAMIC : w.text === marker && input !== null ? input : w.text.includes(marker) ? DYNAMIC : w,
    );
  }
  if (input !== null && !replaced && inner.length > 0) inner = [...inner, input];
  return inner;
}

/** `sudo cmd`, `timeout 5 cmd`, `env X=1 cmd`, `xargs cmd`: skip operands and assignments, then judge the command. */
function evaluateArgvWrapper(rule: WrapperRule, effects: Effects, args: ParsedArgs, call: RuleCall): void {
  const { label, ctx } = call;
  const run = rule.run;
  let index = run.skipOperands;
  if (args.rest.slice(0, index).some((w) => w.text === null || w.pattern)) {
    // `timeout $T cmd`: an unquoted expansion may be several words, so which word is the command is not known
    effects.writes.push(SHELL_REASONS['dynamic-wrapped-command'](label));
    ctx.parts.push(ownPart(effects, 'write', ''));
    return;
  }
  if (run.assignments) index = skipAssignments(args.rest, index, effects, ctx);
  const inner = wrappedCommand(run, args, index, ctx);
  if (inner.length === 0) {
    if (call.unknownArgs) effects.writes.push(SHELL_REASONS['dynamic-command'](label));
    ctx.parts.push(
      ownPart(
        effects,
        rule.read ? 'read' : 'write',
        rule.read ? SHELL_REASONS['alone-shows-information'](label) : SHELL_REASONS.writes(label),
      ),
    );
    return;
  }
  if (run.selfWrites || hasOwnEffects(effects) || effects.targets.length > 0) {
    const reason = run.selfWrites ? SHELL_REASONS.writes(label) : SHELL_REASONS['runs-command'](label);
    ctx.parts.push(ownPart(effects, run.selfWrites ? 'write' : 'read', reason));
  }
  // xargs reads its own input; the command it runs does not get it.
  const stdin = run.appendsArguments ? null : (call.stdin ?? null);
  ctx.steps.argv({ words: inner, unknownArgs: call.unknownArgs || run.appendsArguments, stdin }, effects.here, ctx, call.depth + 1);
}

/**
 * Judges a wrapper (DESIGN.md §5.5): with one of its `unless` options it
 * runs nothing and only shows information (`command -v`); else by its
 * `run` mode, the command it runs judged in turn.
 */
export function evaluateWrapper(rule: WrapperRule, effects: Effects, args: ParsedArgs, call: RuleCall): void {
  const run = rule.run;
  if (args.options.some((option) => optionIn(option, run.unless))) {
    call.ctx.parts.push(ownPart(effects, 'read', SHELL_REASONS['shows-information'](call.label)));
    return;
  }
  if (run.mode === 'shell') evaluateShellWrapper(run, effects, args, call);
  else if (run.mode === 'eval') evaluateEvalWrapper(effects, args, call);
  else evaluateArgvWrapper(rule, effects, args, call);
}
