/**
 * The identity of a write for the `repeated-write` rule (issue 28): the same
 * key for the same tool called with the same arguments (whatever the order
 * of their keys, the case and padding of their strings), or for a script
 * tool on the same known places, so a write that failed or timed out and is
 * tried again is recognised. The machine keeps only the key (a hash), never the
 * arguments.
 *
 * Spec: issue 28 item 3 (a failed or ambiguous write repeated); DESIGN.md §3.8
 * (a failed write may have applied).
 */
import { createHash } from 'node:crypto';
import { isUnknownPlace } from '../../machines/safety.targets.js';

/** How deep `canonicalJson` follows nested arguments; deeper ones make the arguments unreadable. */
const MAX_DEPTH = 64;

/** Arguments that cannot be read whole: a cycle, a getter or proxy trap that throws, nesting past `MAX_DEPTH`. */
class UnreadableArguments extends Error {}

/**
 * The canonical JSON of a value (RFC 8785's idea, enough for equality):
 * object keys sorted by code unit, no whitespace, `undefined` members and
 * functions left out as `JSON.stringify` does, non-finite numbers as `null`,
 * a `toJSON` method honoured (dates).
 * @throws UnreadableArguments on a cycle, a throwing getter or trap, nesting past `MAX_DEPTH`, or a BigInt.
 */
function canonicalJson(value: unknown, depth: number, seen: Set<object>): string | undefined {
  if (depth > MAX_DEPTH) throw new UnreadableArguments('nested too deep');
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      // Trimmed and case-folded, as the catalogs compare keyed values: ' ABC123' and 'abc123' are one value.
      return JSON.stringify(value.trim().toLowerCase());
    case 'boolean':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'bigint':
      throw new UnreadableArguments('a BigInt');
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
  const object = value as Record<string, unknown>;
  if (typeof object.toJSON === 'function') return canonicalJson((object.toJSON as () => unknown)(), depth + 1, seen);
  if (seen.has(object)) throw new UnreadableArguments('a cycle');
  seen.add(object);
  try {
    if (Array.isArray(object)) {
      return `[${object.map((item) => canonicalJson(item, depth + 1, seen) ?? 'null').join(',')}]`;
    }
    const members: string[] = [];
    for (const key of Object.keys(object).sort()) {
      const member = canonicalJson(object[key], depth + 1, seen);
      // A member that says nothing (absent, null, an empty string) is left out: `note: ''` adds nothing to a call.
      if (member !== undefined && member !== 'null' && member !== '""') members.push(`${JSON.stringify(key)}:${member}`);
    }
    return `{${members.join(',')}}`;
  } finally {
    seen.delete(object);
  }
}

/**
 * The write key of a call: `<tool>#<sha256 hex of the canonical JSON of
 * [tool, args]>`, the tool name cut to its first 64 characters (the hash
 * covers the whole name). Arguments given as a JSON string (as many loops
 * record them) are parsed first, so `'{"a":1,"b":2}'` and `{ b: 2, a: 1 }`
 * give the same key; an unparsable string is compared as that string.
 *
 * String values are trimmed and case-folded, and members that say nothing
 * (null, an empty string) left out, so `' ABC123'` is `'abc123'` and an
 * added `note: ''` changes nothing. A write whose words are free text (a
 * shell, PowerShell or SQL tool, or a file write or edit: a tool whose
 * result echoes its arguments; `scriptTargets` given, its known targets) is
 * keyed by its tool and those places instead: `<tool>@<sha256 of the sorted
 * places>`, since a model rewords such a call on a retry (`rm -fr` for
 * `rm -rf`, a trailing slash, another `description`, other edit text);
 * unknown places `?/…` are left out, and one naming none is keyed by its
 * arguments. The tool name is
 * trimmed, as the catalogs read it.
 *
 * @returns the key, or undefined when the arguments are not given
 *   (`undefined`: a call checked by kind alone states nothing about which
 *   call it is), or cannot be read whole (a cycle, a getter or proxy trap
 *   that throws, nesting deeper than 64, a BigInt): then the call is never
 *   taken for another one. Never throws.
 */
export function writeKeyOf(tool: string, args: unknown, scriptTargets: readonly string[] = []): string | undefined {
  const name = tool.trim();
  const places = scriptTargets.filter((target) => !isUnknownPlace(target));
  if (places.length > 0) {
    const digest = createHash('sha256')
      .update(JSON.stringify([name, [...new Set(places)].sort()]))
      .digest('hex');
    return `${name.length > 64 ? name.slice(0, 64) : name}@${digest}`;
  }
  if (args === undefined) return undefined;
  let value: unknown = args;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value) as unknown;
    } catch {
      // not JSON: the string itself is the argument
    }
  }
  let canonical: string | undefined;
  try {
    canonical = canonicalJson([name, value], 0, new Set());
  } catch {
    return undefined; // unreadable arguments: no identity, never taken for another call
  }
  if (canonical === undefined) return undefined;
  const digest = createHash('sha256').update(canonical).digest('hex');
  return `${name.length > 64 ? name.slice(0, 64) : name}#${digest}`;
}
