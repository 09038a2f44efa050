/**
 * What classifying a tool call yields beyond its kind: the resources it
 * touches and whether it is destructive. Shared by the catalog classifier,
 * the shell and SQL classifiers, the adapter, the audit and the visualizer.
 *
 * Spec: ASSISTANT_SAFETY.md "Tool kinds"; DESIGN.md §5.1 (a classified call
 * is more than a kind), §5.2 (targets come from the catalog), §5.6
 * (destructive writes).
 */
import type { ToolKind } from '../../machines/safety.types.js';
import { canonicalTarget, cutTarget, foldedTarget, isPathForm, isUnknownPlace, unknownPlace } from '../../machines/safety.targets.js';

export { UNKNOWN_PLACE, unknownPlace } from '../../machines/safety.targets.js';

/**
 * A classified tool call (DESIGN.md §5.1).
 *
 * - `kind`: the spec's kind (`neutral` for pure computation).
 * - `targets`: the resources the call touches, as normalized strings, sorted
 *   and without duplicates: a file path (`pathTarget`), an id
 *   `<argument>=<value>` (`idTarget`), a table `table:<name>` (`tableTarget`),
 *   a named place (`git:<dir>`, `process:<name>`, `service:<unit>`,
 *   `container:<name>`, `k8s:<resource>/<name>`, `host:<host>:<path>`), or an
 *   unknown place `?/<hint>` (`unknownPlace`: known only when the call runs,
 *   so only the user's confirmation admits a write to it). A write names
 *   none only when it is a call of a catalog tool that declares no targets,
 *   or of a kind-only classifier: it then follows the spec's session-wide
 *   rules (issue 24: a shell, PowerShell or SQL write always names a place).
 * - `destructive`: the write deletes or overwrites what cannot be had back
 *   (recursive or forced removal, `git push --force`, `DROP TABLE`, ...).
 *   Always false for a call that is not a write.
 * - `reason`: a short human-readable why, for reports (e.g.
 *   `shell: 'rm' is not a read-only command`); optional.
 * - `echoes`: true when the call's result is output its own arguments
 *   choose (a shell command's, a query's rows: `echo '{"verification":
 *   {"ok":true}}'` prints what it likes), so its result is never read as
 *   the write verifying itself (DESIGN.md §1, §5.8); optional, default false.
 * - `links`: canonical paths (as `pathTarget` gives them) of the symbolic
 *   links the call creates that lead out of their own directory (`ln -s ..
 *   repo/up` gives `repo/up`, resolved against the cwd when one is known).
 *   The machine keeps them for the session once the write is admitted
 *   (`SafetyContext.links`), and any later target at or under one is an
 *   unknown place (issue 24). Optional, default none; read on writes only.
 */
export interface Classification {
  kind: ToolKind;
  targets: string[];
  destructive: boolean;
  reason?: string;
  echoes?: boolean;
  links?: string[];
}

/**
 * Where a call runs, when the log or the host knows it: `cwd`, the working
 * directory (an absolute path) that relative paths are resolved against when
 * the call's own arguments name none.
 */
export interface CallContext {
  cwd?: string;
}

/** Classifies one tool call (name, arguments, where it runs) fully. Never throws; fails closed to a `write`. */
export type CallClassifier = (name: string, args?: unknown, context?: CallContext) => Classification;

/** The classification of anything that cannot be judged: a write, no targets, not known to be destructive. */
export function failClosed(reason: string): Classification {
  return { kind: 'write', targets: [], destructive: false, reason };
}

/**
 * The longest target string kept whole; a longer one is cut to its first
 * `MAX_TARGET_LENGTH` characters and a mark (`cutTarget`), so a model
 * cannot grow a session through a name, and two long targets that share
 * their first characters are never taken for one.
 */
export const MAX_TARGET_LENGTH = 512;

/**
 * The most targets one call may name. A classification keeps one more when
 * there are more (`normalizeTargets`), so the machine sees that the write
 * names too many and refuses it, instead of judging a cut list.
 */
export const MAX_TARGETS_PER_CALL = 32;

/**
 * A file-system target, normalized (DESIGN.md §5.1): made absolute against
 * `cwd` when the path is relative and a `cwd` is given (absolute; a longer
 * one than `MAX_TARGET_LENGTH` is joined whole: only the result is cut),
 * then canonical as the machine keeps it (`canonicalTarget`: `.` and `..`
 * folded, `..` above `~` or `.` kept, so `~/../etc` is not `etc`; a
 * trailing slash dropped; past `MAX_TARGET_LENGTH` characters, cut). `~`
 * and `~/x` stay as written (the home directory is not known here).
 * Returns null for an empty path. A relative path with no working directory
 * that would read as a named place or an id (`table:users`, `order_id=A1`)
 * is an unknown place instead, so reading such a file never establishes the
 * table or the order.
 *
 * @example pathTarget('src/../b/', '/repo') === '/repo/b'
 */
export function pathTarget(path: string, cwd?: string): string | null {
  if (typeof path !== 'string' || path === '') return null;
  const home = path === '~' || path.startsWith('~/');
  const joined = !home && !path.startsWith('/') && typeof cwd === 'string' && cwd.startsWith('/') ? `${cwd}/${path}` : path;
  const target = canonicalTarget(joined);
  // A relative path with no working directory can spell a named place or an id (`table:users`, `./order_id=A1`):
  // it names neither, so it is an unknown place (a URL stays itself: it names what it says).
  if (isPathForm(target) || isUnknownPlace(target) || /^[a-z][a-z0-9+.-]*:\/\//i.test(target)) return target;
  return unknownPlace(`<relative path ${target.slice(0, 64)}>`);
}

/**
 * A working directory as paths are joined to it (`pathTarget`'s `cwd`):
 * folded as a target is, never cut (a cut directory would make `..` climb
 * from the wrong place). Null for an empty one.
 */
export function directoryOf(path: string): string | null {
  return typeof path === 'string' && path !== '' ? foldedTarget(path) : null;
}

/** An id target, `<argument>=<value>` with the value trimmed (DESIGN.md §5.1), e.g. `reservation_id=ABC123`. */
export function idTarget(argument: string, value: string): string {
  return canonicalTarget(`${argument}=${value.trim()}`);
}

/** A SQL table target, `table:<name>`: the name as the SQL parser resolved it (unquoted identifiers folded). */
export function tableTarget(name: string): string {
  return cutTarget(`table:${name}`);
}

/**
 * Targets sorted, without duplicates or empties. Past `MAX_TARGETS_PER_CALL`,
 * `MAX_TARGETS_PER_CALL + 1` are kept: enough for the machine to refuse a
 * write naming too many (a cut list could drop the one target never
 * established, such as `~`), bounded all the same.
 */
export function normalizeTargets(targets: Iterable<string | null | undefined>): string[] {
  const unique = new Set<string>();
  for (const target of targets) if (typeof target === 'string' && target !== '') unique.add(target);
  return [...unique].sort().slice(0, MAX_TARGETS_PER_CALL + 1);
}

/**
 * The worst of several classifications, for a command list or a SQL batch
 * (DESIGN.md §5.5: a batch is as dangerous as its most dangerous part):
 * `write` if any part writes, else `read` if any reads, else `resolve`, else
 * `user_input`, else `neutral`; the targets of every part; destructive if
 * any part is a destructive write; the first reason of a worst part. An
 * empty list gives `fallback`.
 */
export function worstOf(parts: readonly Classification[], fallback: Classification): Classification {
  if (parts.length === 0) return fallback;
  const order: ToolKind[] = ['write', 'read', 'resolve', 'user_input', 'neutral'];
  const kind = order.find((k) => parts.some((p) => p.kind === k)) ?? 'write';
  const reasons = parts.filter((p) => p.kind === kind && p.reason !== undefined).map((p) => p.reason!);
  return {
    kind,
    targets: normalizeTargets(parts.flatMap((p) => p.targets)),
    destructive: kind === 'write' && parts.some((p) => p.destructive),
    ...(reasons.length > 0 ? { reason: reasons[0] } : {}),
  };
}
