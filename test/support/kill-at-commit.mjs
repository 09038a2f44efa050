/**
 * A test knob for the hook tests: preloaded into a hook process
 * (`node --import <this file> <bin> hook <host>`), it kills that process
 * with SIGKILL in the middle of storing a session: the new state is in its
 * temporary file, cut to half its length, and not yet renamed over the
 * session file, and the session's lock is still held.
 *
 * It acts only while the file `PULSE_SAFETY_TEST_KILL_MARKER` names exists,
 * and removes it first, so exactly one hook process dies per marker. It
 * watches `rename` of `fs/promises` (how the session store replaces a file
 * atomically: temporary file, fsync, rename) for a target ending in `.json`
 * under `PULSE_SAFETY_STATE_DIR`. Without the marker it changes nothing.
 *
 * Test code only: nothing in the package loads it.
 */
import { existsSync, statSync, truncateSync, unlinkSync } from 'node:fs';
import fsPromises from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { resolve, sep } from 'node:path';

const marker = process.env.PULSE_SAFETY_TEST_KILL_MARKER;
const stateDir = process.env.PULSE_SAFETY_STATE_DIR;

if (marker && stateDir) {
  const root = resolve(stateDir) + sep;
  const rename = fsPromises.rename;
  fsPromises.rename = async function renameOrDie(from, to) {
    const target = resolve(String(to));
    if (target.startsWith(root) && target.endsWith('.json') && existsSync(marker)) {
      unlinkSync(marker);
      const size = statSync(from).size;
      truncateSync(from, Math.floor(size / 2));
      process.kill(process.pid, 'SIGKILL');
      await new Promise(() => {}); // SIGKILL is not caught: the process ends here
    }
    return rename.call(this, from, to);
  };
  syncBuiltinESMExports();
}
