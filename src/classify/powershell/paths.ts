/**
 * PowerShell paths as targets (DESIGN.md §5.1): Windows and POSIX paths in
 * one form, so that a target compares with the others by segments. A
 * backslash is a separator (PowerShell takes both on every platform); a
 * drive or provider path `C:\x`, `HKLM:\x` becomes `/C:/x`, `/HKLM:/x`
 * (drive letters upper-cased); `~` stays `~`. What cannot be placed is in a
 * place not known (`UNKNOWN_PLACE`, never established): a path holding a
 * variable (`$env:WorkDir\*`), a drive-relative path (`C:x`, `C:`), a UNC
 * path (`\\server\share`), and a relative path after the location changed
 * to somewhere not known.
 */
import { pathTarget } from '../classification.js';
import { UNKNOWN_PLACE } from '../../../machines/safety.targets.js';

/**
 * Where a PowerShell command runs: an absolute path in target form
 * (`/C:/repo`, `/home/me`), `''` when not given (relative paths stay
 * relative), or null when it cannot be known (after `Set-Location $x`).
 */
export type PsCwd = string | null;

const DRIVE = /^([A-Za-z][A-Za-z0-9]*):(.*)$/s;

/** A drive or provider path in target form, `/C:/x`; null when the path is not one (or is drive-relative: `undefined`). */
function drivePath(path: string): string | null | undefined {
  const m = DRIVE.exec(path);
  if (m === null) return null;
  const drive = m[1]!.length === 1 ? m[1]!.toUpperCase() : m[1]!;
  const rest = m[2]!;
  if (!rest.startsWith('/')) return undefined;
  return `/${drive}:${rest}`;
}

/** A working directory given by the caller (`C:\repo` or `/repo`) in target form; `''` when none or not absolute. */
export function cwdOf(cwd: string | undefined): string {
  if (cwd === undefined || cwd === '') return '';
  const path = cwd.replace(/\\/g, '/');
  const drive = drivePath(path);
  if (typeof drive === 'string') return drive;
  return path.startsWith('/') && !path.startsWith('//') ? path : '';
}

/**
 * A path as PowerShell would resolve it from `cwd`, as a target (`pathTarget`);
 * `dynamic` when it holds a variable. Null for an empty path.
 */
export function psPathTarget(text: string, dynamic: boolean, cwd: PsCwd): string | null {
  if (text === '') return null;
  const path = text.replace(/\\/g, '/');
  if (dynamic || path.startsWith('//')) return `${UNKNOWN_PLACE}${path}`;
  const drive = drivePath(path);
  if (drive === undefined) return `${UNKNOWN_PLACE}${path}`;
  if (drive !== null) return pathTarget(drive);
  if (path === '~' || path.startsWith('~/')) return pathTarget(path);
  if (path.startsWith('~')) return `${UNKNOWN_PLACE}${path}`;
  if (path.startsWith('/')) {
    // The root of the current drive on Windows.
    const root = cwd === null ? null : /^\/([A-Za-z]):\//.exec(`${cwd}/`);
    return pathTarget(root === null ? path : `/${root[1]}:${path}`);
  }
  if (cwd === null) return `${UNKNOWN_PLACE}${path}`;
  return pathTarget(path, cwd === '' ? undefined : cwd);
}
