/**
 * A small PowerShell tokenizer, enough to classify a command line
 * (DESIGN.md §5.5): statements (split at `;`, `&&`, `||` and new lines),
 * pipelines (`|`), and each command's words, script blocks, commas and
 * redirections. It reads a deliberately small subset and throws `PsUnsure`
 * on anything else, so the caller can fail closed: subexpressions and
 * grouping (`$(…)`, `(…)`), `@(…)`, `@{…}`, splatting and here-strings (`@`
 * at the start of a word), backtick escapes, `<`, type literals (`[` at the
 * start of a word), `--%`, characters outside printable ASCII (PowerShell
 * takes typographic quotes and dashes for `'`, `"` and `-`), and variables
 * other than a few inert ones (`$env:NAME`, `$true`, `$false`, `$null`,
 * `$_`, `$PSItem`, `$HOME`, `$PWD`; a member read `.Name` after one, never
 * a call, an index or a subexpression), and variables the script assigned
 * one literal earlier, at its top level (`$d = 'C:\x'; Remove-Item $d`: the
 * value is put in their place; any other assignment to one is refused).
 *
 * No PowerShell parser is used: the one maintained JavaScript option is a
 * tree-sitter grammar with a native addon, and a tree that disagrees with
 * PowerShell's own parser is the kind of differential this classifier must
 * not have. What this tokenizer does not know, it refuses.
 */

import { POWERSHELL_REASONS } from './reasons.js';

/** Thrown when the tokenizer meets something it does not read; `reason` is one of `POWERSHELL_REASONS`. */
export class PsUnsure extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'PsUnsure';
  }
}

/** A word: a bare word, quoted strings and variables written together. */
export interface PsWord {
  type: 'word';
  /** The value when `dynamic` is false; otherwise the word as written (variables kept), for targets and messages. */
  text: string;
  /** Holds a variable: its value is only known when it runs. */
  dynamic: boolean;
  /** Any part of it was quoted. */
  quoted: boolean;
  /** A parameter (`-Name`, `-Name:value`): starts unquoted with `-` and a letter. */
  param: boolean;
  /** The word as written in the script. */
  raw: string;
}

/** A script block `{ … }`, its statements parsed. */
export interface PsBlock {
  type: 'block';
  statements: PsStatement[];
}

/** A comma (array elements) or `&` (the call operator at the start, a background job at the end). */
export interface PsOp {
  type: 'op';
  text: ',' | '&';
}

/** A redirection: `>`, `>>`, `2>`, `*>`… to a file (`target`), or `2>&1` to a stream (`target` null). */
export interface PsRedirect {
  type: 'redirect';
  text: string;
  target: PsWord | null;
}

/** One element of a command. */
export type PsElement = PsWord | PsBlock | PsOp | PsRedirect;

/** A command: its elements in order. */
export type PsCommand = PsElement[];

/** A statement: a pipeline of commands. */
export type PsStatement = PsCommand[];

/** How deep script blocks may nest. */
export const MAX_BLOCK_DEPTH = 8;

/** Variables whose value this classifier takes as inert data (lower case; `env:` variables too). */
const INERT_VARIABLES = new Set(['true', 'false', 'null', '_', 'psitem', 'home', 'pwd']);

type Raw = PsElement | { type: 'sep'; text: '|' | ';' | '&&' | '||' };

const WORD_END = new Set([' ', '\t', '\r', '\n', ';', '|', '&', ',', '(', ')', '{', '}', '<', '>']);

const REDIRECT = /^(\*|[1-6])?>>?(&[1-6])?/;

/**
 * A statement assigning a variable one literal (`$d = 'C:\x'`, `$n = 12`,
 * `$s = "text"` without `$` or a backtick), alone up to the end of its
 * statement. A bare word on the right would run a command; anything else
 * is not followed.
 */
const LITERAL_ASSIGNMENT = /^\$([A-Za-z_][A-Za-z0-9_]*)[ \t]*=[ \t]*('(?:[^']|'')*'|"(?:[^"$`]|"")*"|-?\d+)(?=[ \t]*(?:;|\r|\n|$)|[ \t]+#)/;

/** Any assignment to a variable at the start of a statement: `$x = …`, `$x += …`, `$x++`. */
const ANY_ASSIGNMENT = /^\$([A-Za-z_][A-Za-z0-9_]*)[ \t]*(?:[-+*/%]?=|\?\?=|\+\+|--)/;

class Scanner {
  i = 0;
  /** Variables assigned one literal earlier in the script, at its top level (lower-case name to value). */
  readonly known = new Map<string, string>();
  constructor(readonly src: string) {}

  /**
   * At the start of a statement: a literal assignment at the top level
   * (`atTop`) is recorded in `known` and returned as the literal it
   * assigns (an expression, a read); any other assignment to a variable
   * the script assigned is refused (its value would no longer be known);
   * null when the statement is no assignment this scanner follows.
   */
  assignment(atTop: boolean): PsWord | null {
    const rest = this.src.slice(this.i);
    const literal = atTop ? LITERAL_ASSIGNMENT.exec(rest) : null;
    const name = literal?.[1]?.toLowerCase();
    if (literal !== null && name !== undefined && !INERT_VARIABLES.has(name)) {
      const written = literal[2]!;
      const value = written.startsWith("'")
        ? written.slice(1, -1).replaceAll("''", "'")
        : written.startsWith('"')
          ? written.slice(1, -1).replaceAll('""', '"')
          : written;
      this.known.set(name, value);
      this.i += literal[0].length;
      return { type: 'word', text: value, dynamic: false, quoted: true, param: false, raw: written };
    }
    const other = ANY_ASSIGNMENT.exec(rest);
    if (other !== null && this.known.has(other[1]!.toLowerCase())) {
      throw new PsUnsure(POWERSHELL_REASONS.unsure(`an assignment to $${other[1]} other than one literal at the top level`));
    }
    return null;
  }

  /** The characters are checked once, up front: printable ASCII, tab and line breaks only. */
  static check(src: string): void {
    for (let k = 0; k < src.length; k++) {
      const code = src.charCodeAt(k);
      if ((code < 32 && code !== 9 && code !== 10 && code !== 13) || code > 126) {
        throw new PsUnsure(POWERSHELL_REASONS['non-ascii'](code));
      }
    }
  }

  /**
   * `$name`, `$env:NAME`, with a member chain `.a.b`; `this.i` at the `$`.
   * Returns the text as written (`dynamic`), or the value of a variable the
   * script assigned one literal (`known`; not dynamic, no member read).
   */
  variable(inString: boolean): { text: string; dynamic: boolean } {
    const m = /^\$(?:(env):([A-Za-z0-9_]+)|([A-Za-z_][A-Za-z0-9_]*))/.exec(this.src.slice(this.i));
    if (m === null) throw new PsUnsure(POWERSHELL_REASONS['variable-not-known'](this.src.slice(this.i, this.i + 2)));
    const name = m[3];
    const value = name === undefined ? undefined : this.known.get(name.toLowerCase());
    if (value !== undefined) {
      this.i += m[0].length;
      const next = this.src[this.i];
      if (!inString && (next === '.' || next === '(' || next === '[' || next === '{')) {
        throw new PsUnsure(POWERSHELL_REASONS.unsure('a member, call, index or block after a variable'));
      }
      return { text: value, dynamic: false };
    }
    if (name !== undefined && !INERT_VARIABLES.has(name.toLowerCase())) throw new PsUnsure(POWERSHELL_REASONS['variable-not-known'](m[0]));
    this.i += m[0].length;
    let text = m[0];
    if (!inString) {
      const member = /^(?:\.[A-Za-z_][A-Za-z0-9_]*)+/.exec(this.src.slice(this.i));
      if (member !== null) {
        this.i += member[0].length;
        text += member[0];
      }
      const next = this.src[this.i];
      if (next === '(' || next === '[' || next === '{')
        throw new PsUnsure(POWERSHELL_REASONS.unsure('a call, index or block after a variable'));
    }
    return { text, dynamic: true };
  }

  /** A single-quoted string from `this.i` (at the quote); `''` is a quote. */
  single(): string {
    let out = '';
    for (this.i++; this.i < this.src.length; this.i++) {
      const c = this.src[this.i]!;
      if (c !== "'") out += c;
      else if (this.src[this.i + 1] === "'") {
        out += "'";
        this.i++;
      } else {
        this.i++;
        return out;
      }
    }
    throw new PsUnsure(POWERSHELL_REASONS['unclosed-quote']);
  }

  /** A double-quoted string from `this.i`; `""` is a quote; inert variables make it dynamic; a backtick or `$(` is refused. */
  double(): { text: string; dynamic: boolean } {
    let out = '';
    let dynamic = false;
    for (this.i++; this.i < this.src.length;) {
      const c = this.src[this.i]!;
      if (c === '`') throw new PsUnsure(POWERSHELL_REASONS.unsure('a backtick escape'));
      if (c === '$') {
        const variable = this.variable(true);
        out += variable.text;
        dynamic ||= variable.dynamic;
        continue;
      }
      if (c === '"') {
        if (this.src[this.i + 1] !== '"') {
          this.i++;
          return { text: out, dynamic };
        }
        this.i++;
      }
      out += c;
      this.i++;
    }
    throw new PsUnsure(POWERSHELL_REASONS['unclosed-quote']);
  }

  /** A word from `this.i`: bare text, quoted strings and variables written together. */
  word(): PsWord {
    const start = this.i;
    const first = this.src[start]!;
    if (first === '@') throw new PsUnsure(POWERSHELL_REASONS.unsure('@ (arrays, hash tables, splatting, here-strings)'));
    if (first === '[') throw new PsUnsure(POWERSHELL_REASONS.unsure('a type literal'));
    const param = first === '-' && /^[A-Za-z_?]/.test(this.src[start + 1] ?? '');
    let text = '';
    let dynamic = false;
    let quoted = false;
    while (this.i < this.src.length) {
      const c = this.src[this.i]!;
      if (WORD_END.has(c)) break;
      if (c === '`') throw new PsUnsure(POWERSHELL_REASONS.unsure('a backtick escape'));
      if (c === "'") {
        text += this.single();
        quoted = true;
      } else if (c === '"') {
        const part = this.double();
        text += part.text;
        dynamic ||= part.dynamic;
        quoted = true;
      } else if (c === '$') {
        const variable = this.variable(false);
        text += variable.text;
        dynamic ||= variable.dynamic;
      } else {
        text += c;
        this.i++;
      }
    }
    if (text === '--%') throw new PsUnsure(POWERSHELL_REASONS.unsure('the stop-parsing token --%'));
    return { type: 'word', text, dynamic, quoted, param, raw: this.src.slice(start, this.i) };
  }
}

/** The raw elements and separators up to the end or the `}` closing a block. */
function scan(sc: Scanner, depth: number, inBlock: boolean): Raw[] {
  if (depth > MAX_BLOCK_DEPTH) throw new PsUnsure(POWERSHELL_REASONS.unsure('script blocks nested this deep'));
  const out: Raw[] = [];
  let glued = false; // the previous element ends right here, no space between
  while (sc.i < sc.src.length) {
    const c = sc.src[sc.i]!;
    const rest = sc.src.slice(sc.i, sc.i + 4);
    if (c === ' ' || c === '\t') {
      sc.i++;
      glued = false;
      continue;
    }
    if (c === '\r' || c === '\n') {
      sc.i++;
      glued = false;
      const last = out[out.length - 1];
      const continues = last !== undefined && ((last.type === 'sep' && last.text !== ';') || (last.type === 'op' && last.text === ','));
      if (!continues) out.push({ type: 'sep', text: ';' });
      continue;
    }
    if (c === '#' && !glued) {
      while (sc.i < sc.src.length && sc.src[sc.i] !== '\n' && sc.src[sc.i] !== '\r') sc.i++;
      continue;
    }
    if (c === '}') {
      if (!inBlock) throw new PsUnsure(POWERSHELL_REASONS.unsure('a closing brace without an opening one'));
      sc.i++;
      return out;
    }
    if (c === '{') {
      if (glued) throw new PsUnsure(POWERSHELL_REASONS['word-after-block']);
      sc.i++;
      out.push({ type: 'block', statements: split(scan(sc, depth + 1, true)) });
      glued = true;
      continue;
    }
    if (glued && out[out.length - 1]?.type === 'block' && !WORD_END.has(c)) throw new PsUnsure(POWERSHELL_REASONS['word-after-block']);
    glued = false;
    const redirect = REDIRECT.exec(sc.src.slice(sc.i, sc.i + 6));
    if (redirect !== null && (c === '>' || redirect[0].length > 1)) {
      sc.i += redirect[0].length;
      out.push({ type: 'redirect', text: redirect[0], target: null });
      continue;
    }
    if (rest.startsWith('&&') || rest.startsWith('||')) {
      out.push({ type: 'sep', text: rest.slice(0, 2) as '&&' | '||' });
      sc.i += 2;
    } else if (c === '|' || c === ';') {
      out.push({ type: 'sep', text: c });
      sc.i++;
    } else if (c === ',' || c === '&') {
      out.push({ type: 'op', text: c });
      sc.i++;
    } else if (c === '(' || c === ')') throw new PsUnsure(POWERSHELL_REASONS.unsure('a parenthesis (grouping or a subexpression)'));
    else if (c === '<') throw new PsUnsure(POWERSHELL_REASONS.unsure('< (input redirection or a block comment)'));
    else {
      const last = out[out.length - 1];
      const starts = last === undefined || (last.type === 'sep' && last.text === ';');
      const assigned = c === '$' && starts ? sc.assignment(depth === 0 && !inBlock) : null;
      out.push(assigned ?? sc.word());
      glued = true;
    }
  }
  if (inBlock) throw new PsUnsure(POWERSHELL_REASONS['unclosed-block']);
  return out;
}

/** Raw elements split into statements and pipelines; a redirection takes the word after it as its file. */
function split(raw: Raw[]): PsStatement[] {
  const statements: PsStatement[] = [];
  let pipeline: PsCommand[] = [];
  let command: PsCommand = [];
  const endStatement = () => {
    pipeline.push(command);
    if (pipeline.length > 1 || command.length > 0) statements.push(pipeline);
    pipeline = [];
    command = [];
  };
  for (let k = 0; k < raw.length; k++) {
    const item = raw[k]!;
    if (item.type === 'sep') {
      if (item.text === '|') {
        pipeline.push(command);
        command = [];
      } else endStatement();
    } else if (item.type === 'redirect' && !item.text.includes('&')) {
      const next = raw[k + 1];
      if (next?.type !== 'word') throw new PsUnsure(POWERSHELL_REASONS.unsure('a redirection without a file'));
      command.push({ ...item, target: next });
      k++;
    } else command.push(item);
  }
  endStatement();
  return statements;
}

/**
 * Tokenizes a PowerShell script into statements of pipelines of commands,
 * also telling whether it assigned a variable the tokenizer put values in place of
 * (`assigned`): a write that assigns session variables may then change one.
 *
 * @throws PsUnsure on anything outside the subset it reads (see the module documentation).
 */
export function tokenizeScript(src: string): { statements: PsStatement[]; assigned: boolean } {
  Scanner.check(src);
  const sc = new Scanner(src);
  const statements = split(scan(sc, 0, false));
  return { statements, assigned: sc.known.size > 0 };
}
