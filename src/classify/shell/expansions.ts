/**
 * Brace expansion and globs before targets are compared (DESIGN.md §5.1,
 * §5.5): a word the shell expands stands for several paths, and a pattern
 * that can make `..`, `~` or `/` must not be taken for a name under the
 * directory written before it (`{.,x}.` makes `..`, `.?` and `.[.]` match
 * `..`). Plain brace alternatives are expanded to literal paths (which
 * `resolveTargets` folds, `..` included); a glob stands for the directory
 * before its first wildcard; a glob that may match `..` is a place not known.
 */

/** More words than this from one brace expansion: not expanded, a place not known. */
export const MAX_BRACE_WORDS = 64;

/** A glob's wildcard characters (bash's `*`, `?`, `[...]`, and extglob's `@(`, `!(`, `+(`). */
const WILDCARD = /[*?[]|[@!+]\(/;

/** Whether text holds an unquoted brace expansion bash would expand (`{a,b}`, `{1..3}`). */
function hasBraceExpansion(text: string): boolean {
  return /\{[^{}]*(,|\.\.)[^{}]*\}/.test(text);
}

/** The index of the `}` closing the `{` at `open`, or -1. */
function closingBrace(text: string, open: number): number {
  let level = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '{') level++;
    else if (text[i] === '}' && --level === 0) return i;
  }
  return -1;
}

/** The top-level comma-separated alternatives of a brace body (`a,{b,c}`: `a`, `{b,c}`). */
function alternatives(body: string): string[] {
  const out: string[] = [];
  let level = 0;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === '{') level++;
    else if (c === '}') level--;
    else if (c === ',' && level === 0) {
      out.push(body.slice(start, i));
      start = i + 1;
    }
  }
  out.push(body.slice(start));
  return out;
}

/** A sequence `{1..3}`, `{a..c}`, `{1..9..2}` as its words; null when the body is no sequence. */
function sequence(body: string): string[] | null {
  const numbers = /^(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?$/.exec(body);
  if (numbers !== null) {
    const from = Number(numbers[1]);
    const to = Number(numbers[2]);
    const step = Math.abs(Number(numbers[3] ?? 1)) || 1;
    if (Math.abs(to - from) / step > MAX_BRACE_WORDS) return null;
    const out: string[] = [];
    for (let n = from; from <= to ? n <= to : n >= to; n += from <= to ? step : -step) out.push(String(n));
    return out;
  }
  const letters = /^([A-Za-z])\.\.([A-Za-z])$/.exec(body);
  if (letters === null) return null;
  const from = letters[1]!.charCodeAt(0);
  const to = letters[2]!.charCodeAt(0);
  const out: string[] = [];
  for (let n = from; from <= to ? n <= to : n >= to; n += from <= to ? 1 : -1) out.push(String.fromCharCode(n));
  return out; // between `Z` and `a` bash makes `\`, `[`, `]`: globs, judged as such
}

/**
 * The words a brace expansion makes, in order (`src/{a,b}.ts`: `src/a.ts`,
 * `src/b.ts`; nested and sequences too); null when there are more than
 * `MAX_BRACE_WORDS`. Text without a brace expansion is returned alone.
 * Quoting must already be absent (the caller expands only unquoted words
 * without expansions).
 */
export function expandBraces(text: string): string[] | null {
  const out: string[] = [];
  const pending = [text];
  while (pending.length > 0) {
    const word = pending.pop()!;
    let expanded = false;
    for (let open = word.indexOf('{'); open !== -1; open = word.indexOf('{', open + 1)) {
      const close = closingBrace(word, open);
      if (close === -1) break;
      const body = word.slice(open + 1, close);
      const alts = sequence(body) ?? alternatives(body);
      if (alts.length < 2) continue; // `{x}` and `{}` stay as written
      const head = word.slice(0, open);
      const tail = word.slice(close + 1);
      for (let i = alts.length - 1; i >= 0; i--) pending.push(head + alts[i]! + tail);
      expanded = true;
      break;
    }
    if (!expanded) out.push(word);
    if (out.length + pending.length > MAX_BRACE_WORDS) return null;
  }
  return out;
}

/**
 * The directory a glob stands for: its segments before the first one with
 * a wildcard (`src/*.ts`: `src`; `*`: `.`; `/etc/*.d/x`: `/etc`). Null when
 * a wildcard segment may match `..` or `.` (it starts with `.`, or with a
 * bracket, or is an extglob: `.?`, `.[.]`, `.*`, `[.]*`, `@(..)`), or when
 * `dotglob` may be set: then the glob's paths are not known.
 */
export function globDirectory(pattern: string, dotglob: boolean): string | null {
  const segments = pattern.split('/');
  const first = segments.findIndex((segment) => WILDCARD.test(segment));
  if (first === -1) return pattern;
  for (const segment of segments.slice(first)) {
    if (!WILDCARD.test(segment)) continue;
    if (dotglob || /^[.[\\]/.test(segment) || /[@!+*?]\(/.test(segment)) return null;
  }
  const dir = segments.slice(0, first).join('/');
  if (first === 0) return '.';
  return dir === '' ? '/' : dir;
}

/**
 * The paths an unquoted word with globs or braces stands for (written, not
 * resolved: relative to the directory it is used in), or null when they are
 * not known: a brace expansion of too many words, a glob that may match `..`.
 * `{~,x}` makes `~` (the home directory: tilde expansion comes after brace
 * expansion); `{.,x}.` makes `..`, which `resolveTargets` folds.
 */
export function patternPlaces(text: string, dotglob: boolean): string[] | null {
  const words = hasBraceExpansion(text) ? expandBraces(text) : [text];
  if (words === null) return null;
  const places: string[] = [];
  for (const word of words) {
    const dir = WILDCARD.test(word) ? globDirectory(word, dotglob) : word;
    if (dir === null) return null;
    if (!places.includes(dir)) places.push(dir);
  }
  return places;
}

/** Whether a script may set `dotglob` or `globskipdots` (then any glob may match `.` and `..`). */
export function mayDotglob(source: string): boolean {
  return /\b(dotglob|globskipdots|GLOBIGNORE)\b/.test(source);
}
