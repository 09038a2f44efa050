/**
 * What a command's options do (DESIGN.md §5.5, §5.6), gathered into one
 * `Effects` object before the command's rule decides on its subcommand,
 * wrapped command or operands: the reasons it writes, runs another program
 * or is destructive, whether it is a dry run, the directory it works in and
 * its targets so far. `ownPart` makes the command's own part from them.
 */
import { unknownPlace } from '../../../machines/safety.targets.js';
import type { Classification } from '../classification.js';
import { joinDir, resolveTargets, union, type Cwds } from './cwd.js';
import { isDryRun, optionIn, type ParsedArgs, type ParsedOption } from './parse-args.js';
import { readPart, writePart } from './parts.js';
import { SHELL_REASONS } from './reasons.js';
import type { CompiledRule, Effect } from './table-compile.js';
import { show, type JudgeContext, type Word } from './words.js';

/** One command (or subcommand) being judged against its rule. */
export interface RuleCall {
  /** The command as reasons name it: its name and the subcommands chosen so far (`git stash`). */
  label: string;
  /** Its arguments, the words after its name. */
  words: Word[];
  cwds: Cwds;
  ctx: JudgeContext;
  depth: number;
  /** More arguments only known when it runs are appended (xargs). */
  unknownArgs: boolean;
  /** Targets it inherits: its parent command's path and directory options (`git -C d status`), its parent's place (`git:<dir>`). */
  targets: string[];
  /** Targets it inherits that count only when it writes: its parent's working directory (`npm install`: a `cwd` place). */
  writeTargets?: string[];
  /** The options of the commands it is a subcommand of, outermost first (`kubectl -n prod delete pod x`: `-n prod`). */
  options?: ParsedOption[];
  /** What it reads on its input when its redirections say so (a here-document's text); null or absent: not known. */
  stdin?: string | null;
}

/** What a command's options (and then its operands) do; reasons are `SHELL_REASONS` strings. */
export interface Effects {
  label: string;
  /** The rule is destructive when the command writes (`dd`, `shred`). */
  destructiveCommand: boolean;
  /** Why it writes; a dry run overrides them. */
  writes: string[];
  /** Why it runs another program (or writes, or exports assignments, whatever the dry run): a write even in a dry run. */
  execWrites: string[];
  /** Why it is destructive. */
  destructives: string[];
  /** A dry-run option was given last and nothing defeats it. */
  dry: boolean;
  /** The directories it works in (`git -C d`, `make -C d` move it). */
  here: Cwds;
  /** Its targets: inherited ones, then its path and directory options' values, its place (`place.ts`), then its operands. */
  targets: string[];
  /** Targets only when it writes: its working directory, for a rule whose place is `cwd` (`notePlace`). */
  writeTargets: string[];
  /** What the command is, for the unknown place a write without targets gets (`ownPart`): its words cut to 60 characters. */
  hint: string;
}

/** Whether anything so far makes the command more than a read of its own. */
export function hasOwnEffects(effects: Effects): boolean {
  return effects.writes.length > 0 || effects.destructives.length > 0 || effects.execWrites.length > 0;
}

/** An option's value effect (`optionValues`): by its value, or the worst one when the value is only known when it runs. */
function valueEffect(values: Map<string, Effect>, value: Word | undefined): Effect {
  const text = value?.text;
  if (text == null || value?.pattern) return [...values.values()].includes('destructive') ? 'destructive' : 'write';
  return values.get(text.trim().toUpperCase()) ?? values.get('*') ?? 'write';
}

/**
 * The hint of the unknown place an `unknownPlaceOptions` option names: the
 * command, the option, and its value up to the first `=` (the key of
 * `git -c alias.st=!cmd`, `tar --checkpoint-action=exec=…`), cut to 40 characters.
 */
function unknownOptionHint(label: string, option: ParsedOption): string {
  if (option.value === undefined) return `${label} ${option.given}`;
  const value = option.value.text === null ? show(option.value) : option.value.text.split('=')[0]!;
  return `${label} ${option.given} ${value.length > 40 ? `${value.slice(0, 40)}…` : value}`;
}

/** Notes whether one option runs another program, writes or is destructive, itself or by its value. */
function noteOption(rule: CompiledRule, option: ParsedOption, effects: Effects): void {
  const label = effects.label;
  if (optionIn(option, rule.exec)) effects.execWrites.push(SHELL_REASONS['runs-program'](`${label} ${option.name}`));
  if (optionIn(option, rule.dryRunWrite)) effects.execWrites.push(SHELL_REASONS['writes-even-dry-run'](`${label} ${option.name}`));
  if (optionIn(option, rule.exports)) effects.execWrites.push(SHELL_REASONS['exports-assignments'](`${label} ${option.name}`));
  if (optionIn(option, rule.write)) effects.writes.push(SHELL_REASONS.writes(`${label} ${option.name}`));
  if (optionIn(option, rule.destructiveOptions)) effects.destructives.push(SHELL_REASONS.destructive(`${label} ${option.name}`));
  const values = rule.optionValues.get(option.name);
  if (optionIn(option, rule.unknownPlace) && (values === undefined || valueEffect(values, option.value) !== 'read')) {
    effects.targets.push(unknownPlace(unknownOptionHint(label, option)));
  }
  if (values === undefined) return;
  const effect = valueEffect(values, option.value);
  const given = `${label} ${option.name} ${option.value?.text ?? '(expansion)'}`;
  if (effect === 'write') effects.writes.push(SHELL_REASONS.writes(given));
  if (effect === 'exports') effects.execWrites.push(SHELL_REASONS['exports-assignments'](given));
  if (effect === 'destructive') effects.destructives.push(SHELL_REASONS.destructive(given));
}

/** A path or directory option's value as a target; a directory option also moves where the command works. */
function noteOptionTarget(rule: CompiledRule, option: ParsedOption, effects: Effects): void {
  const value = option.value;
  const text = value?.text;
  if (text != null && !value!.pattern) effects.targets.push(...resolveTargets(text, effects.here));
  if (optionIn(option, rule.cwd)) {
    effects.here = text != null && !value!.pattern ? union(effects.here.map((cwd) => joinDir(cwd, text))) : [null];
  }
}

/** The most characters of a command an unknown place's hint keeps. */
const HINT_LENGTH = 60;

/** A command as an unknown place's hint names it: its words, cut; a shell reading its script from input is `sh <stdin>`. */
function placeHint(rule: CompiledRule, args: ParsedArgs, call: RuleCall): string {
  if (rule.run?.mode === 'shell' && !args.options.some((o) => o.names.includes(rule.run!.shellOption)) && args.rest.length === 0) {
    return `${call.label} <stdin>`;
  }
  const text = [call.label, ...call.words.map(show)].join(' ');
  return text.length > HINT_LENGTH ? `${text.slice(0, HINT_LENGTH)}…` : text;
}

/** Whether an option undoes a dry run: `--no-dry-run`, or an abbreviation of it. */
function defeatsDryRun(rule: CompiledRule, option: ParsedOption): boolean {
  return option.given.startsWith('--no-') && [...rule.dryRunNames].some((n) => `--no-${n.replace(/^-+/, '')}`.startsWith(option.given));
}

/**
 * What a command's options do under its rule (DESIGN.md §5.5, §5.6): an
 * option the rule does not list writes (the table lists what is known, and
 * only what it lists can be a read); exec, write and destructive
 * options and option values say so; the last dry-run option given decides
 * (`--dry-run=none` undoes it), `--no-dry-run` undoes it; path and directory
 * options add targets. An argument only known when it runs may be any option
 * (subcommands and wrappers look at their first operand themselves), so for
 * a rule whose options matter it runs a program and undoes a dry run.
 */
export function collectOptionEffects(rule: CompiledRule, args: ParsedArgs, call: RuleCall): Effects {
  const label = call.label;
  const effects: Effects = {
    label,
    destructiveCommand: rule.destructive,
    writes: [],
    execWrites: [],
    destructives: [],
    dry: false,
    here: call.cwds,
    targets: [...call.targets],
    writeTargets: [...(call.writeTargets ?? [])],
    hint: placeHint(rule, args, call),
  };
  let dryDefeated = false;
  if (args.unknown.length > 0) effects.execWrites.push(SHELL_REASONS['unknown-option'](label, args.unknown[0]!));
  for (const option of args.options) {
    noteOption(rule, option, effects);
    if (rule.dryRunNames.has(option.given)) effects.dry = isDryRun(option, rule); // the last one given wins: --dry-run=none
    if (defeatsDryRun(rule, option)) dryDefeated = true;
    if (optionIn(option, rule.cwd) || optionIn(option, rule.path)) noteOptionTarget(rule, option, effects);
  }
  const stops = rule.subcommands !== null || (rule.run !== null && rule.run.mode !== 'exec' && rule.run.mode !== 'eval');
  if ((args.uncertain || call.unknownArgs) && rule.sensitive && !stops) {
    effects.execWrites.push(
      args.undecided === undefined
        ? SHELL_REASONS['dynamic-arguments'](label)
        : SHELL_REASONS['undecided-word'](label, show(args.undecided)),
    );
    dryDefeated = true;
    if (rule.mayBeDestructive) effects.destructives.push(SHELL_REASONS['dynamic-arguments-destructive'](label));
  }
  if (dryDefeated) effects.dry = false;
  return effects;
}

/**
 * The command's own part: exec options write even in a dry run; a dry run
 * makes the rest a read. `base` is what the command is without its options,
 * `reason` why, when nothing in `effects` says more. A write names its
 * `writeTargets` too, and a write that names no target at all gets an
 * unknown place (`unknownPlace(effects.hint)`, issue #24): a shell write is
 * never without targets.
 */
export function ownPart(effects: Effects, base: 'read' | 'write', reason: string): Classification {
  const { dry, destructives, execWrites, writes } = effects;
  const destructive = !dry && (destructives.length > 0 || (effects.destructiveCommand && base === 'write'));
  if (execWrites.length > 0 || (!dry && (writes.length > 0 || base === 'write' || destructive))) {
    const why = destructive
      ? (destructives[0] ?? SHELL_REASONS.destructive(effects.label))
      : (execWrites[0] ?? (dry ? undefined : writes[0]) ?? reason);
    const targets = [...effects.targets, ...effects.writeTargets];
    return writePart(targets.length > 0 ? targets : [unknownPlace(effects.hint)], destructive, why);
  }
  return readPart(effects.targets, dry ? SHELL_REASONS['dry-run'](effects.label) : reason);
}
