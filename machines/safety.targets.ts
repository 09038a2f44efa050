/**
 * Targets as the safety machine compares them (DESIGN.md §5.3, §5.4): the
 * canonical form of a target string, whether one target touches another,
 * and the bounded, least-recently-established-first list of established
 * targets. Pure functions on strings; no I/O, no imports from src/.
 *
 * Target strings are those of src/classify/classification.ts (`pathTarget`,
 * `idTarget`, `tableTarget`, `unknownPlace`):
 * - a path: absolute (`/etc/nginx.conf`), home-relative (`~`, `~/notes`), or
 *   relative (`src/app.ts`, `.`), compared as written when no working
 *   directory made it absolute: `/a` and `a` are unrelated; `~user`, `~+`
 *   and `~-` (another user's home, the shell's own directories) are exact;
 * - an id `<argument>=<value>` (no `/` before the first `=`), e.g.
 *   `reservation_id=ABC123`;
 * - a URL with a scheme (`s3://bucket/prefix`), as written;
 * - a named place `<kind>:<name>`, `kind` one of `NAMED_KINDS`: `table:orders`,
 *   `git:<dir>` (the repository whose working directory is `<dir>`),
 *   `process:<name-or-pid>`, `service:<name>`, `container:<name>`,
 *   `k8s:<resource>/<name>`, `host:<host>:<path>` (a remote path);
 * - an unknown place `?/<hint>` (`unknownPlace`): a place known only when
 *   the call runs (`$DIR/`, `sh <stdin>`).
 * Ids, URLs and named places match only themselves, except that `<kind>:*`
 * is above every `<kind>:…` (`process:*` establishes and touches
 * `process:node`) and `k8s:<resource>/*` above every `k8s:<resource>/…`.
 * Paths match by segments: `/a/b` is under `/a`, `/ab` is not; `.` is above
 * every relative path that does not climb out of it. A path that climbs
 * above its root (`~/../x`, `../x`) is compared as an exact string: where it
 * leads is not known here. An unknown place is never established, equal to,
 * above or under anything, itself included.
 *
 * Spec: DESIGN.md §5.1 (target strings), §5.3 (validated target), §5.4
 * (verification, target-aware); issue 24 (unknown places, named kinds).
 */
import {
  LINKS_OVERFLOW,
  MAX_ESTABLISHED_TARGETS,
  MAX_LINKS,
  MAX_TARGETS_PER_EVENT,
  MAX_TARGET_LENGTH,
  UNKNOWN_PLACE,
} from './safety.policy.js';

/** How a canonical target is compared: as a path under a root, or as an exact string. */
type Root = '/' | '~' | '.' | 'exact';

export { UNKNOWN_PLACE };

/** The target is in a place not known (`UNKNOWN_PLACE`). */
export function isUnknownPlace(target: string): boolean {
  return target.startsWith(UNKNOWN_PLACE);
}

/** The longest hint an unknown place keeps (`unknownPlace`), characters. */
export const MAX_UNKNOWN_HINT_LENGTH = 120;

/**
 * The unknown place described by `hint` (issue 24): `?/<hint>`, the hint cut
 * to its first `MAX_UNKNOWN_HINT_LENGTH` characters; `?/` for an empty hint.
 * The hint is a short human-readable description of what is not known
 * (`$DIR/`, `sh <stdin>`, `./deploy.sh`), shown in a refusal. A write
 * naming an unknown place is refused (`unknown-target`) unless the user
 * confirmed it since the last write; such a place is never established nor
 * a verification target. Never throws (anything but a string is an empty hint).
 *
 * @example unknownPlace('$DIR/') === '?/$DIR/'
 */
export function unknownPlace(hint: string): string {
  const text = typeof hint === 'string' ? hint : '';
  return `${UNKNOWN_PLACE}${text.slice(0, MAX_UNKNOWN_HINT_LENGTH)}`;
}

/**
 * The kinds of named place `<kind>:<name>` (issue 24): exact strings, not
 * paths, except that `<kind>:*` is above every `<kind>:…` (and
 * `k8s:<resource>/*` above every `k8s:<resource>/…`).
 */
export const NAMED_KINDS: readonly string[] = ['table', 'git', 'process', 'service', 'container', 'k8s', 'host'];

/** `<kind>:` of a named place (`NAMED_KINDS`), or null. */
function namedKindOf(target: string): string | null {
  const colon = target.indexOf(':');
  if (colon <= 0) return null;
  const kind = target.slice(0, colon);
  return NAMED_KINDS.includes(kind) ? kind : null;
}

/** `table:` and the other named places, `<argument>=<value>` ids, URLs (`s3://bucket/key`) and unknown places are exact; everything else is a path. */
export function isPathForm(target: string): boolean {
  if (namedKindOf(target) !== null || isUnknownPlace(target) || /^[a-z][a-z0-9+.-]*:\/\//i.test(target)) return false;
  if (target.startsWith('/') || target === '~' || target.startsWith('~/')) return true;
  const equals = target.indexOf('=');
  return equals < 0 || target.slice(0, equals).includes('/');
}

/**
 * The mark a cut target ends with: `cutTarget` keeps the first
 * `MAX_TARGET_LENGTH` characters and this one, so a cut target is exactly
 * one that is longer than `MAX_TARGET_LENGTH` (`isCutTarget`).
 */
export const CUT_TARGET_MARK = '…';

/**
 * A target string of at most `MAX_TARGET_LENGTH` characters as it is; a
 * longer one cut to its first `MAX_TARGET_LENGTH` and `CUT_TARGET_MARK`.
 * Two long targets that differ only past the cut give the same cut target,
 * so a cut target stands for any target it could be cut from: it is never
 * established, equal to, or above anything (`isUnder`, `ancestorsOf`); only
 * a path above it, short enough to be kept whole, establishes or touches it.
 */
export function cutTarget(target: string): string {
  return target.length > MAX_TARGET_LENGTH ? target.slice(0, MAX_TARGET_LENGTH) + CUT_TARGET_MARK : target;
}

/** The target was cut (`cutTarget`): it is longer than `MAX_TARGET_LENGTH`. */
export function isCutTarget(target: string): boolean {
  return target.length > MAX_TARGET_LENGTH;
}

/**
 * The canonical form of a target string: for a path, empty and `.`
 * segments dropped, `..` folded (`/..` is `/`), a trailing `/` dropped, all
 * of it before the cut; ids and tables as they are; then cut (`cutTarget`:
 * past `MAX_TARGET_LENGTH` characters, the first ones and a mark).
 * Idempotent; never longer than `MAX_TARGET_LENGTH + 1`; never empty for a
 * non-empty input.
 *
 * @example canonicalTarget('/srv/./app//conf/') === '/srv/app/conf'
 * @example canonicalTarget('a/../..') === '..'
 */
export function canonicalTarget(raw: string): string {
  const folded = foldedTarget(raw);
  const cut = cutTarget(folded);
  // An id whose first `=` falls past the cut would read as a path: its cut keeps an `=` before the mark.
  if (cut !== folded && !isPathForm(folded) && isPathForm(cut)) return `${folded.slice(0, MAX_TARGET_LENGTH - 1)}=${CUT_TARGET_MARK}`;
  return cut;
}

/**
 * `canonicalTarget` before the cut: a path folded as `canonicalTarget`
 * folds it (on the whole string, so no `..` past a cut can climb out of
 * it; `..` above `~` or `.` kept), an id or table as it is. For a
 * directory that paths are joined to before they are cut (a working
 * directory): never cut it first.
 */
export function foldedTarget(target: string): string {
  if (!isPathForm(target)) return target;
  const root = target.startsWith('/') ? '/' : target === '~' || target.startsWith('~/') ? '~' : '.';
  const rest = root === '/' ? target.slice(1) : root === '~' ? target.slice(2) : target;
  const segments: string[] = [];
  for (const segment of rest.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment !== '..') segments.push(segment);
    else if (segments.length > 0 && segments[segments.length - 1] !== '..') segments.pop();
    else if (root !== '/') segments.push('..'); // climbs above `~` or `.`: kept, compared exactly
  }
  if (root === '/') return `/${segments.join('/')}`;
  if (root === '~') return segments.length === 0 ? '~' : `~/${segments.join('/')}`;
  return segments.length === 0 ? '.' : segments.join('/');
}

/** How a canonical target compares (see the module comment). */
function rootOf(target: string): Root {
  if (!isPathForm(target)) return 'exact';
  // `~user`, `~+`, `~-`: another user's home or the shell's own directories, nowhere known here.
  if (target.startsWith('~') && target !== '~' && !target.startsWith('~/')) return 'exact';
  if (target.startsWith('/')) return '/';
  if (target === '~' || target.startsWith('~/')) return target === '~/..' || target.startsWith('~/../') ? 'exact' : '~';
  return target === '..' || target.startsWith('../') ? 'exact' : '.';
}

/**
 * The canonical target `child` is `parent` or under it (by path segments;
 * exact targets only equal themselves). Both must be canonical. A cut
 * target (`cutTarget`) is under no cut target, itself included: it stands
 * for any target it could be cut from; it is under a whole path its kept
 * characters are under.
 */
export function isUnder(child: string, parent: string): boolean {
  if (isCutTarget(parent) || isUnknownPlace(parent) || isUnknownPlace(child)) return false;
  if (child === parent) return true;
  const root = rootOf(parent);
  if (root === 'exact') return isWildcardAbove(child, parent);
  if (rootOf(child) !== root) return false;
  if (parent === '/' || parent === '.') return true; // every path of that root
  return child.startsWith(`${parent}/`);
}

/**
 * `parent` is a named place's wildcard above `child` (`child` not `parent`):
 * `<kind>:*` above every other `<kind>:…`, `k8s:<resource>/*` above every
 * other `k8s:<resource>/…`.
 */
function isWildcardAbove(child: string, parent: string): boolean {
  if (!parent.endsWith('*') || namedKindOf(parent) === null) return false;
  const kind = namedKindOf(parent)!;
  if (parent === `${kind}:*`) return child.startsWith(`${kind}:`);
  const name = parent.slice(kind.length + 1);
  return kind === 'k8s' && /^[^/*]+\/\*$/.test(name) && child.startsWith(parent.slice(0, -1));
}

/**
 * The wildcards above a named place, shortest first (`isWildcardAbove`):
 * `k8s:pod/x`: `k8s:*`, `k8s:pod/*`; `process:node`: `process:*`; none for
 * anything else. A wildcard's own wildcards are those above it.
 */
function wildcardsAbove(target: string): string[] {
  const kind = namedKindOf(target);
  if (kind === null) return [];
  const all = `${kind}:*`;
  if (target === all) return [];
  const out = [all];
  if (kind === 'k8s') {
    const name = target.slice(kind.length + 1);
    const slash = name.indexOf('/');
    if (slash > 0 && !name.slice(0, slash).includes('*')) {
      const resource = `${kind}:${name.slice(0, slash)}/*`;
      if (resource !== target && (!isCutTarget(target) || slash + kind.length + 3 <= MAX_TARGET_LENGTH)) out.push(resource);
    }
  }
  return out;
}

/** Two canonical targets touch: one is the other, or under it (DESIGN.md §5.4). */
export function touches(a: string, b: string): boolean {
  return isUnder(a, b) || isUnder(b, a);
}

/**
 * The canonical target itself and every target it is under (`/a/b`:
 * `/`, `/a`, `/a/b`; `a/b`: `.`, `a`, `a/b`; a named place: its wildcards
 * and itself, `k8s:pod/x`: `k8s:*`, `k8s:pod/*`, `k8s:pod/x`; another exact
 * target: itself; an unknown place: none),
 * shortest first. At most one per segment, so at most `MAX_TARGET_LENGTH / 2 + 1`.
 * A cut target (`cutTarget`): only the whole paths above it, not itself.
 */
export function ancestorsOf(target: string): string[] {
  const root = rootOf(target);
  const cut = isCutTarget(target);
  if (root === 'exact') {
    if (isUnknownPlace(target)) return [];
    const above = wildcardsAbove(target);
    return cut ? above : [...above, target];
  }
  const out: string[] = [root];
  if (target === root) return out;
  const start = root === '.' ? 0 : root.length + 1; // past `/` or `~/`
  for (let i = target.indexOf('/', start); i >= 0; i = target.indexOf('/', i + 1)) {
    if (i > 0) out.push(target.slice(0, i));
  }
  if (!cut) out.push(target);
  return out;
}

/**
 * Sets of established targets, by list: built once per list (the context's
 * arrays are never changed in place), and handed on by `establish` to the
 * list it makes from one, updated by the targets added and dropped, so a
 * lookup stays cheap however long the list.
 */
const setsOf = new WeakMap<readonly string[], Set<string>>();

function setOf(list: readonly string[]): ReadonlySet<string> {
  let set = setsOf.get(list);
  if (set === undefined) {
    set = new Set(list);
    setsOf.set(list, set);
  }
  return set;
}

/**
 * A canonical target is established by the list: it, or a target it is
 * under, is in it (DESIGN.md §5.3: a read of a directory establishes
 * everything under it). One set look-up per ancestor: the cost does not grow
 * with the list (its set is built once and kept while the list lives).
 */
export function isEstablished(established: readonly string[], target: string): boolean {
  if (established.length === 0) return false;
  const set = setOf(established);
  return ancestorsOf(target).some((ancestor) => set.has(ancestor));
}

/**
 * The established list after a successful resolve or read of `targets`:
 * each moved to the end (most recent), the least recently established
 * dropped past `MAX_ESTABLISHED_TARGETS`. Returns `established` itself when
 * nothing changes (no targets, or they are already the most recent, in
 * this order). The new list takes over the old one's look-up set, updated
 * (the old list's is rebuilt if it is ever asked again).
 */
/** A read of at most this many targets has each searched for in the list (`establish`); more, the list is filtered. */
const FEW_ADDED = 4;

export function establish(established: string[], targets: readonly string[]): string[] {
  const offset = established.length - targets.length;
  if (offset >= 0 && targets.every((target, i) => established[offset + i] === target)) return established;
  const adding = new Set(targets);
  const set = setsOf.get(established);
  let next: string[];
  if (adding.size <= FEW_ADDED) {
    // The common read (a target or two, often among the most recent): copy the list and take out the few
    // it moves, searched from the recent end (skipped when the list's set says it is not there), instead
    // of testing every entry.
    next = established.slice();
    // A list whose set holds as many targets as it has entries holds each once (the machine's always
    // do); one restored from elsewhere may hold one twice, and then every copy goes.
    const once = set !== undefined && set.size === established.length;
    for (const target of adding) {
      if (set !== undefined && !set.has(target)) continue;
      for (let at = next.lastIndexOf(target); at >= 0; at = once || at === 0 ? -1 : next.lastIndexOf(target, at - 1)) next.splice(at, 1);
    }
    for (const target of adding) next.push(target);
  } else {
    next = established.filter((target) => !adding.has(target)).concat([...adding]);
  }
  const excess = next.length - MAX_ESTABLISHED_TARGETS;
  const dropped = excess > 0 ? next.slice(0, excess) : [];
  if (excess > 0) next = next.slice(excess);
  if (set !== undefined) {
    setsOf.delete(established);
    // Added first, then dropped: a read of more targets than the list holds drops some of its own.
    for (const target of adding) set.add(target);
    for (const target of dropped) set.delete(target);
    setsOf.set(next, set);
  }
  return next;
}

/**
 * Some target of `reads` touches some target of `writes`: evidence about the
 * write (DESIGN.md §5.4). A write without known targets is touched by any
 * read, as in the spec.
 */
export function touchesAny(reads: readonly string[], writes: readonly string[]): boolean {
  if (writes.length === 0) return true;
  return reads.some((read) => writes.some((write) => touches(read, write)));
}

/** The targets common to every list (exact strings), in the first list's order. */
export function commonTargets(lists: readonly (readonly string[])[]): string[] {
  const [first = [], ...rest] = lists;
  return first.filter((target) => rest.every((list) => list.includes(target)));
}

/** Two target lists name the same targets (as sets). */
export function sameTargets(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((target) => b.includes(target));
}

/**
 * Reads a target list totally: anything but an array is none; only the first
 * `MAX_TARGETS_PER_EVENT` entries are read, and `overflow` says there were
 * more; entries that are not non-empty strings are skipped; the rest are
 * made canonical, without duplicates, in the order given. Never throws (an
 * array whose length or entries cannot be read is none). The result is
 * read-only (none is one shared frozen value): copy it before keeping it.
 */
export function readTargets(raw: unknown): { targets: readonly string[]; overflow: boolean } {
  if (raw === undefined) return NO_TARGETS; // the common case, without allocating
  const read = readBounded(raw, canonicalTarget);
  // Not an array, or a revoked proxy or a throwing getter: none.
  return read === undefined || read === null ? NO_TARGETS : { targets: read.values, overflow: read.overflow };
}

/**
 * The first `MAX_TARGETS_PER_EVENT` entries of an array that are non-empty
 * strings, each mapped by `keep` (null: dropped), without duplicates, in
 * order; `overflow` when the array holds more. Undefined when `raw` is not
 * an array; null when it cannot be read (a revoked proxy, a throwing
 * getter). Never throws unless `keep` does.
 */
function readBounded(raw: unknown, keep: (entry: string) => string | null): { values: string[]; overflow: boolean } | null | undefined {
  try {
    if (!Array.isArray(raw)) return undefined;
    const length = raw.length;
    const seen = new Set<string>();
    for (let i = 0; i < Math.min(length, MAX_TARGETS_PER_EVENT); i += 1) {
      const entry: unknown = raw[i];
      const kept = typeof entry === 'string' && entry !== '' ? keep(entry) : null;
      if (kept !== null) seen.add(kept);
    }
    return { values: [...seen], overflow: length > MAX_TARGETS_PER_EVENT };
  } catch {
    return null;
  }
}

/** No targets, shared (frozen: never changed by anyone). */
const NO_TARGETS: { targets: readonly string[]; overflow: boolean } = Object.freeze({ targets: Object.freeze([]), overflow: false });

// ---------------------------------------------------------------------------
// Symbolic links that lead out of their directory (issue 24).

/**
 * A target is an unknown place in a session that kept `links`: it is one
 * (`?/…`), or it is at or under one of the links (a path through a link that
 * leads out of its directory goes somewhere no target names). One set
 * look-up per ancestor, as `isEstablished`.
 */
export function isUnknownTarget(target: string, links: readonly string[] | undefined): boolean {
  return isUnknownPlace(target) || (links !== undefined && isEstablished(links, target));
}

/**
 * The unknown place a refusal names for `target` (`isUnknownTarget`): the
 * target itself when it is `?/…`, else the unknown place of a path through a
 * link (`unknownPlace`, hint `<path> (through a link)`).
 */
export function unknownPlaceOf(target: string): string {
  return isUnknownPlace(target) ? target : unknownPlace(`${target} (through a link)`);
}

/**
 * Reads a `links` value totally (`ToolRequestedEvent.links`): anything but an
 * array is none; entries that are not non-empty strings skipped; each made
 * canonical; only whole paths kept (ids, named and unknown places dropped: a
 * link is a path), a cut one replaced by the longest whole path above it
 * (fail closed: more is under it); a path climbing above its root
 * (`../x`) kept as it is. `overflow`: more than `MAX_TARGETS_PER_EVENT`
 * entries, or the array could not be read. Never throws.
 */
export function readLinks(raw: unknown): { links: readonly string[]; overflow: boolean } {
  if (raw === undefined) return NO_LINKS;
  const read = readBounded(raw, (entry) => {
    const link = canonicalTarget(entry);
    if (!isPathForm(link)) return null;
    if (!isCutTarget(link)) return link;
    const whole = ancestorsOf(link);
    return whole[whole.length - 1] ?? '/';
  });
  if (read === undefined) return NO_LINKS; // not an array: none
  // An array that could not be read (a revoked proxy, a throwing getter): fail closed.
  return read === null ? { links: [], overflow: true } : { links: read.values, overflow: read.overflow };
}

const NO_LINKS: { links: readonly string[]; overflow: boolean } = Object.freeze({ links: Object.freeze([]), overflow: false });

/**
 * The kept link list after an admitted write created `added` (canonical,
 * `readLinks`): each one not already at or under a kept link appended;
 * `LINKS_OVERFLOW` when `overflow` or past `MAX_LINKS` (fail closed: every
 * path an unknown place until Reset). Returns `kept` itself when nothing
 * changes. `kept` undefined means none. An overflowed list
 * (`isLinksOverflow`) stays as it is.
 */
export function keepLinks(kept: readonly string[] | undefined, added: readonly string[], overflow: boolean): readonly string[] | undefined {
  if (overflow) return LINKS_OVERFLOW;
  if (kept !== undefined && isLinksOverflow(kept)) return kept; // overflowed: stays so until Reset

  let next: string[] | undefined;
  for (const link of added) {
    const current = next ?? kept ?? [];
    if (current.length > 0 && isEstablished(current, link)) continue;
    next = [...current, link];
  }
  if (next === undefined) return kept;
  return next.length > MAX_LINKS ? LINKS_OVERFLOW : next;
}

/** The link list is `LINKS_OVERFLOW` (by content: a restored snapshot holds a copy). */
export function isLinksOverflow(links: readonly string[]): boolean {
  return links.length === LINKS_OVERFLOW.length && links.every((link, i) => link === LINKS_OVERFLOW[i]);
}
