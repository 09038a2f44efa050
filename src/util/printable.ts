/**
 * Text from a transcript (tool names, run ids, arguments, file names) made
 * safe to print: control characters could forge report lines (a newline),
 * clear or repaint a terminal (escape sequences) or reorder what is shown
 * (bidirectional overrides). Every text output of the CLI passes such text
 * through `printable`.
 *
 * Hardening: a tool name is the model's choice, so a report must never let it
 * write anything but itself.
 */

/**
 * C0 and C1 controls, DEL, the line and paragraph separators, and the
 * bidirectional embedding, override and isolate characters.
 */
// eslint-disable-next-line no-control-regex -- control characters are exactly what this strips
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * `text` with every unsafe character written as an escape (`\n`, `\r`, `\t`,
 * else `\u001b`-style), so it prints as one inert line. Safe text is
 * returned unchanged.
 *
 * @example printable('a\n\u001b[2J') === 'a\\n\\u001b[2J'
 */
export function printable(text: string): string {
  return String(text).replace(UNSAFE, (c) => NAMED[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
