/**
 * One-line labels of steps and calls for the page's logs: the playground's
 * and the replay's log entries print call arguments the same way, cut at the
 * same length, so one call reads alike in both.
 */

/** Longest call arguments shown in a log label, characters (the ellipsis included). */
const MAX_ARGS_TEXT = 120;

/**
 * `text` on one line (each run of whitespace one space, trimmed), cut to at
 * most `max` characters, the last an ellipsis when cut: `short('a\n  b', 80)`
 * is `'a b'`.
 */
export function short(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/**
 * Call arguments as one line of compact JSON (a string as itself), at most
 * `MAX_ARGS_TEXT` characters; `''` when there are none. Never throws: a value
 * JSON cannot print (a BigInt, a cycle) is `(unprintable arguments)`.
 */
export function argsText(args: unknown): string {
  if (args === undefined) return '';
  try {
    return short(typeof args === 'string' ? args : (JSON.stringify(args) ?? ''), MAX_ARGS_TEXT);
  } catch {
    return '(unprintable arguments)';
  }
}
