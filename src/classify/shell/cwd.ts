/**
 * Working-directory tracking (DESIGN.md §5.5): the directories a statement
 * may run in, how `cd` results combine across `&&`, `||`, `;` and branches,
 * and a path operand resolved against each of them to its targets (§5.1).
 * Pure functions of paths; the judge carries the directories along.
 */
import { posix } from 'node:path';
import { pathTarget } from '../classification.js';
import { foldedTarget, isUnknownPlace, UNKNOWN_PLACE, unknownPlace } from '../../../machines/safety.targets.js';
import type { Word } from './words.js';

/**
 * The directories a statement may run in: each a path (absolute, `~`-based,
 * or relative to the call's unknown working directory when none was given,
 * `''`), or null when it cannot be known.
 */
export type Cwds = readonly (string | null)[];

/** Where the shell may be after a statement that succeeded, and after one that failed. */
export interface Outcome {
  ok: Cwds;
  fail: Cwds;
}

/** Commands that can change the directory of the shell they run in, other than cd, pushd and popd. */
export const MAY_CHANGE_CWD = new Set(['eval', 'source', '.', 'command', 'builtin', 'exec']);

/** The outcome of a statement that leaves the shell where it was, whether it succeeds or not. */
export const same = (cwds: Cwds): Outcome => ({ ok: cwds, fail: cwds });

/** Distinct possibilities, at most four; more collapse to "unknown". */
export function union(...lists: Cwds[]): Cwds {
  const all = [...new Set(lists.flat())];
  return all.length > 4 ? [null] : all;
}

/** A directory joined to a path; null when it cannot be known. */
export function joinDir(cwd: string | null, dir: string): string | null {
  if (dir.startsWith('/')) return posix.normalize(dir);
  // Folded as a target is: `~/..` stays above `~` (posix.normalize would make `~/../etc` the relative `etc`).
  if (dir === '~' || dir.startsWith('~/')) return foldedTarget(dir);
  if (dir.startsWith('~')) return null; // ~user: another user's home
  if (cwd === null) return null;
  const joined = cwd === '' ? posix.normalize(dir) : posix.join(cwd, dir);
  if (cwd.startsWith('~') && !joined.startsWith('~')) return null;
  return joined;
}

/**
 * Kernel magic links (issue #24): a path through one of them leads wherever
 * a process's directory, root or descriptor is, not under the path written.
 * `/proc/self/…`, `/proc/thread-self/…`, `/proc/<pid>/{cwd,root,fd,fdinfo,exe,map_files}/…` (and under `task/<tid>/`),
 * `/dev/fd/…`, `/dev/stdin`, `/dev/stdout`, `/dev/stderr`.
 */
const KERNEL_LINK =
  /^\/proc\/(?:(?:self|thread-self)(?:\/|$)|[^/]+\/(?:task\/[^/]+\/)?(?:cwd|root|fd|fdinfo|exe|map_files)(?:\/|$))|^\/dev\/(?:fd(?:\/|$)|std(?:in|out|err)$)/;

/**
 * A path target as a place: one through a kernel magic link (`KERNEL_LINK`)
 * is an unknown place (`?/<path> (kernel link)`), never established; any
 * other as it is.
 */
export function throughKernelLinks(target: string): string {
  return KERNEL_LINK.test(target) ? unknownPlace(`${target} (kernel link)`) : target;
}

/**
 * A path operand's targets, one per possible directory (`pathTarget` of
 * each; none for `''` or `-`); one through a kernel magic link is an
 * unknown place (`throughKernelLinks`).
 */
export function resolveTargets(path: string, cwds: Cwds): string[] {
  if (path === '' || path === '-') return [];
  const out: string[] = [];
  for (const cwd of cwds) {
    // A relative path after a `cd` to a directory not known is in a place not known (never established or touched).
    const relative = !path.startsWith('/') && !path.startsWith('~');
    const joined = cwd === null ? (relative ? `${UNKNOWN_PLACE}${path}` : path) : (joinDir(cwd, path) ?? path);
    const target = pathTarget(joined);
    if (target !== null) out.push(throughKernelLinks(target));
  }
  return out;
}

/**
 * A path word's targets (DESIGN.md §5.1): a word known as written resolved
 * (`resolveTargets`); one only known when it runs, the places it stands for
 * resolved (a find root for `{}`, a glob's directory), or an unknown place
 * named by its hint (`?/$DIR/ (from the environment)`): never none.
 */
export function wordTargets(word: Word, cwds: Cwds): string[] {
  if (word.text !== null) return resolveTargets(word.text, cwds);
  if (word.places === undefined) return [unknownPlace(word.hint ?? '(expansion)')];
  return word.places.flatMap((place) => (isUnknownPlace(place) ? [place] : resolveTargets(place, cwds)));
}
