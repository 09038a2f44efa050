/**
 * Shows that bash really runs a payload: a script run by `/bin/bash` in a
 * throwaway directory, and whether it made the file `marker` there. The
 * classifier tests run each escape through it before they expect a write.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The bash the tests run. */
export const BASH = '/bin/bash';

/** Whether the tests that run `BASH` run: always under `CI=true` (a missing bash fails them there), else when it is there. */
export const hasBash = existsSync(BASH) || process.env.CI === 'true';

/** Runs `script` with /bin/bash (as a file) in a new directory, `PATH` the system's; the names of the files it made there. */
export function bashMakes(script: string): Set<string> {
  const dir = mkdtempSync(join(tmpdir(), 'bash-marker-'));
  try {
    writeFileSync(join(dir, 's.sh'), script);
    try {
      execFileSync(BASH, ['s.sh'], { cwd: dir, stdio: 'ignore', timeout: 10_000, env: { PATH: '/usr/bin:/bin' } });
    } catch {
      // a failing script may still have run the payload
    }
    return new Set(readdirSync(dir).filter((name) => name !== 's.sh'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Whether `script`, run by `bashMakes`, made the file `marker`. */
export function bashMakesMarker(script: string): boolean {
  return bashMakes(script).has('marker');
}
