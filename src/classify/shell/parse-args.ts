/**
 * A command's words split into options and operands by its rule's option
 * grammar (DESIGN.md §5.5): GNU style (`-abc` is `-a -b -c`, `--long=value`,
 * unambiguous `--lo` abbreviates `--long`) or single-dash style (find,
 * terraform), value options taking the next word or the rest of theirs, `--`
 * ending the options, and `find -exec ... ;` commands cut out.
 */
import type { CompiledRule } from './table-compile.js';
import { unknownPlace } from '../../../machines/safety.targets.js';
import { DYNAMIC, staticWord, type Word } from './words.js';

/** An option as parsed from a command's words. */
export interface ParsedOption {
  /** The option as written (without a value), e.g. `--dry`. */
  given: string;
  /** The option it is: the one it abbreviates when unambiguous, else as written. */
  name: string;
  /** Every option it may be (more than one for an ambiguous abbreviation). */
  names: string[];
  value: Word | undefined;
  /** For a short option without a value: the rest of its word (`-iXX`: `XX`), which some programs take as an optional value. */
  attached?: string;
}

/** A command's words sorted out by `parseArgs`. */
export interface ParsedArgs {
  options: ParsedOption[];
  operands: Word[];
  /** Index in `operands` where the operands after `--` start. */
  afterDoubleDash: number;
  /** Operands before the first option or expression word (find's starting points). */
  leading: number;
  /** With a stop at the first operand: that operand and every word after it. */
  rest: Word[];
  /** Options not named anywhere in the rule. */
  unknown: string[];
  /** A word only known when it runs may be an option. */
  uncertain: boolean;
  /** The first such word (a glob like `-o/p?` or `*`, an expansion), for the reason. */
  undecided?: Word;
  /** Commands started by exec options (find -exec ... ;). */
  execs: Word[][];
}

/**
 * Whether a glob's wildcards all come after the `=` of a long option
 * (`--glob=*.rs`): whatever it expands to is that option, with some value.
 */
function globInValueOnly(text: string): boolean {
  return /^--[^*?[{=]+=/.test(text);
}

/** The options a long option `--name` may be: itself when known, else the known options it abbreviates. */
function longCandidates(rule: CompiledRule, name: string): string[] {
  if (rule.known.has(name)) return [name];
  if (rule.singleDash) return [];
  return rule.longs.filter((long) => long.startsWith(name));
}

/** One pass over a command's words; each step reads one word (and the values it takes) and says where the next starts. */
class ArgsParser {
  readonly out: ParsedArgs = {
    options: [],
    operands: [],
    afterDoubleDash: Infinity,
    leading: Infinity,
    rest: [],
    unknown: [],
    uncertain: false,
    execs: [],
  };
  private readonly exec: Set<string> | null;

  constructor(
    private readonly rule: CompiledRule,
    private readonly words: Word[],
    private readonly stop: boolean,
  ) {
    this.exec = rule.run?.mode === 'exec' ? rule.run.exec : null;
  }

  parse(): ParsedArgs {
    for (let i = 0; i < this.words.length;) i = this.next(i);
    this.endLeading();
    return this.out;
  }

  /** Reads the word at `i`; returns the index of the next word to read (the end to stop). */
  private next(i: number): number {
    const word = this.words[i]!;
    if (this.out.afterDoubleDash !== Infinity) return this.operand(i, false);
    if (this.rule.optionsFirst && this.out.operands.length > 0) return this.operand(i, false);
    const text = word.text;
    const isOption = text !== null && (!word.pattern || globInValueOnly(text)) && text.length > 1 && text.startsWith('-');
    if (!isOption) return this.operand(i, true);
    if (text === '--') {
      this.out.afterDoubleDash = this.out.operands.length;
      this.endLeading();
      return i + 1;
    }
    if (!this.rule.flags.has(text)) this.endLeading();
    if (this.rule.singleDash || text.startsWith('--')) return this.longOption(text, i);
    return this.shortOptions(text, i);
  }

  /** An operand (`beforeDoubleDash`: not after `--`); with a stop, it and every word after it are the rest. */
  private operand(i: number, beforeDoubleDash: boolean): number {
    const word = this.words[i]!;
    if (beforeDoubleDash && word.optionLike) {
      this.out.uncertain = true;
      this.out.undecided ??= word;
    }
    if (this.stop) {
      this.out.rest = this.words.slice(i);
      return this.words.length;
    }
    if (beforeDoubleDash && word.text !== null && ['(', ')', '!', ','].includes(word.text)) this.endLeading();
    this.out.operands.push(word);
    return i + 1;
  }

  /** `--name`, `--name=value`, `--name value` (and every `-name` in single-dash style). */
  private longOption(text: string, i: number): number {
    const rule = this.rule;
    const eq = text.indexOf('=');
    let name = eq === -1 ? text : text.slice(0, eq);
    if (rule.singleDash && name.startsWith('--')) name = name.slice(1);
    if (this.exec?.has(name)) return this.execCommand(name, i);
    const word = this.words[i]!;
    let value: Word | undefined = eq === -1 ? undefined : { ...staticWord(text.slice(eq + 1)), pattern: word.pattern };
    const names = longCandidates(rule, name);
    const resolved = names.length === 1 ? names[0]! : name;
    if (value === undefined && names.length === 1 && (rule.value.has(resolved) || rule.twoValue.has(resolved))) {
      value = this.words[i + 1];
      this.shadow(value);
      i++;
      if (rule.twoValue.has(resolved)) {
        this.shadow(this.words[i + 1]);
        i++;
      }
    }
    this.addOption(name, resolved, names, value);
    return i + 1;
  }

  /** GNU short options: -abc is -a -b -c; a value option takes the rest of the word or the next word. */
  private shortOptions(text: string, i: number): number {
    const rule = this.rule;
    for (let j = 1; j < text.length; j++) {
      const name = `-${text[j]}`;
      const known = rule.known.has(name);
      if (rule.optionalValue.has(name)) {
        this.addOption(name, name, [name], j + 1 < text.length ? staticWord(text.slice(j + 1)) : undefined);
        break;
      }
      if (rule.value.has(name) || rule.twoValue.has(name)) {
        let value: Word | undefined;
        if (j + 1 < text.length) value = staticWord(text.slice(j + 1));
        else {
          value = this.words[i + 1];
          this.shadow(value);
          i++;
        }
        if (rule.twoValue.has(name)) {
          this.shadow(this.words[i + 1]);
          i++;
        }
        this.addOption(name, name, [name], value);
        break;
      }
      this.addOption(name, name, known ? [name] : [], undefined);
      this.out.options[this.out.options.length - 1]!.attached = text.slice(j + 1);
    }
    return i + 1;
  }

  /**
   * find -exec cmd args ; (or {} +): `{}` is a found path, not known now and
   * not an option, but under one of find's roots (the operands before the
   * expression, else `.`): its places. A word holding `{}` among other text
   * (`{}.bak`) is beside the found path, under the same roots, unless it climbs.
   */
  private execCommand(name: string, i: number): number {
    const words = this.words;
    const roots = this.out.operands.slice(0, Math.min(this.out.leading, this.out.operands.length));
    const places =
      roots.length === 0
        ? ['.']
        : roots.flatMap((root) => (root.text !== null ? [root.text] : (root.places ?? [unknownPlace(root.hint ?? '(expansion)')])));
    const found = (text: string): Word =>
      /(^|\/)\.\.(\/|$)/.test(text) ? { ...DYNAMIC, optionLike: false, hint: text } : { ...DYNAMIC, optionLike: false, hint: text, places };
    const inner: Word[] = [];
    let j = i + 1;
    for (; j < words.length; j++) {
      const w = words[j]!;
      if (w.text === ';') break;
      if (w.text === '+' && words[j - 1]?.text === '{}') break;
      inner.push(w.text !== null && w.text.includes('{}') ? found(w.text) : w);
    }
    this.out.execs.push(inner);
    this.out.options.push({ given: name, name, names: [name], value: undefined });
    return j + 1;
  }

  private endLeading(): void {
    if (this.out.leading === Infinity) this.out.leading = this.out.operands.length;
  }

  /**
   * Notes an option; one the rule does not list as written is unknown. An
   * abbreviation of a listed long option (`--dry` for `--dry-run`) is unknown
   * too: the program may have an option of exactly that name the table does
   * not list. Its candidates still count (`--forc` is as destructive as `--force`).
   */
  private addOption(given: string, name: string, names: string[], value: Word | undefined): void {
    this.out.options.push({ given, name, names, value });
    if (!this.rule.known.has(given.startsWith('--') && this.rule.singleDash ? given.slice(1) : given)) this.out.unknown.push(given);
  }

  /**
   * A value taken from the next word that is itself an option that writes:
   * the program may not take it as the value (an optional value, an option
   * the table mistakes for one taking a value), so it counts as that option too.
   */
  private shadow(value: Word | undefined): void {
    const text = value?.text;
    if (text == null || !text.startsWith('-')) return;
    const name = this.rule.singleDash || text.startsWith('--') ? text.split('=')[0]! : text.slice(0, 2);
    if (this.rule.risky.has(name)) this.out.options.push({ given: name, name, names: [name], value: undefined });
  }
}

/**
 * Splits a command's words into options and operands by the rule's option
 * grammar (DESIGN.md §5.5). With `stop`, the first operand ends the options
 * (a wrapper's command, a subcommand): it and every word after it are `rest`.
 */
export function parseArgs(rule: CompiledRule, words: Word[], stop: boolean): ParsedArgs {
  return new ArgsParser(rule, words, stop).parse();
}

/** Whether a parsed option is one of a set (any of its candidates, for an abbreviation). */
export function optionIn(option: ParsedOption, set: Set<string>): boolean {
  return option.names.some((name) => set.has(name));
}

/**
 * Whether an option makes a dry run: listed by name alone, or as
 * `name=value` with its value; written in full (an abbreviation could be
 * another option of the program the table does not know).
 */
export function isDryRun(option: ParsedOption, rule: CompiledRule): boolean {
  if (rule.dryRun.size === 0) return false;
  if (option.value === undefined) return rule.dryRun.has(option.given);
  return option.value.text !== null && rule.dryRun.has(`${option.given}=${option.value.text}`);
}
