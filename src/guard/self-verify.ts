/**
 * Write self-verification (DESIGN.md §1, the original's rule): a tool
 * result that reports its own effect checked. Pure and total.
 *
 * Spec: DESIGN.md §1 ("Write self-verification"), §5.8.
 */
import { ownSafely } from '../util/own.js';

/**
 * Whether a successful write's result says the write verified itself: the
 * result is an object, or a string whose text from its first `{` to the end
 * parses as one JSON object, and that object's `verification.ok` is the
 * boolean `true` (DESIGN.md §1).
 *
 * Not self-verifying: `"ok": "true"` (a string), `ok: false`, a missing
 * `verification` or `ok`, malformed JSON, text after the object, an array, or
 * anything that is neither a string nor an object. Getters are not run (only
 * own data properties are read). Never throws: JSON too deep for the parser
 * is no self-verification either. Text that spells `verification` neither
 * plainly nor with a `\u` escape is refused without parsing it (the common
 * result, read at the cost of a substring search).
 *
 * @example selfVerifies('{"verification": {"ok": true}}') === true
 * @example selfVerifies('done. {"verification": {"ok": "true"}}') === false
 */
export function selfVerifies(result: unknown): boolean {
  let value = result;
  if (typeof value === 'string') {
    const start = value.indexOf('{');
    if (start < 0) return false;
    // A JSON key reads `verification` only when spelled so, or with `\u` escapes (no other
    // JSON escape gives a letter): text with neither cannot verify, and is not parsed.
    if (!value.includes('verification', start) && !value.includes('\\u', start)) return false;
    try {
      value = JSON.parse(value.slice(start));
    } catch {
      return false; // malformed, text after the object, or nested past the parser's depth
    }
  }
  return ownSafely(ownSafely(value, 'verification'), 'ok') === true;
}
