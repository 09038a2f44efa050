/**
 * A lock between processes on one machine, held as a file: one holder at a
 * time, waited for up to a bound, and taken over from a holder that died
 * (`kill -9`) once the file has not been refreshed for `staleMs`.
 *
 * Why not proper-lockfile (4.1.2): its stale takeover is a stat, then a
 * remove, then a create; a waiter that saw the dead lock can remove the lock
 * another waiter has just created, and both go on as holders (open issue
 * moxystudio/node-proper-lockfile#121). Eight hook processes waiting behind a
 * killed holder reproduced two holders and a lost update in 1 of 20 rounds.
 * Here a takeover moves the dead lock aside by rename, which only one waiter
 * can do to a given file, checks that what it moved is the dead lock it saw
 * (same token and modification time), and puts anything else back with
 * `link`, which never replaces a lock taken meanwhile. A holder checks that
 * the lock is still its own (`assertHeld`) before it commits.
 *
 * Time is epoch milliseconds (`Date.now()`, compared with the file's mtime).
 * Spec: issue 25 item 2 (one writer at a time, bounded well under the hosts'
 * timeouts, safe under `kill -9`).
 */
import { randomBytes } from 'node:crypto';
import { link, open, readFile, rename, stat, unlink, utimes } from 'node:fs/promises';

/**
 * How to take a lock:
 * - `timeoutMs`: how long to wait for it before `FileLockError` `timeout`;
 * - `staleMs`: a lock file whose mtime is older than this is a dead holder's
 *   and is taken over;
 * - `refreshMs`: how often a holder refreshes its mtime (default a third of
 *   `staleMs`), so that a live holder is never taken over.
 */
export interface FileLockOptions {
  timeoutMs: number;
  staleMs: number;
  refreshMs?: number;
}

/** A lock held: `assertHeld` before committing, `release` always (in a `finally`). */
export interface HeldFileLock {
  /** The lock file's path. */
  readonly path: string;
  /**
   * Resolves when the lock file is still this holder's; rejects with
   * `FileLockError` `lost` when it was taken over (the holder stalled longer
   * than `staleMs`) or removed.
   */
  assertHeld(): Promise<void>;
  /** Stops refreshing and removes the lock file if it is still this holder's. Never rejects. */
  release(): Promise<void>;
}

/** Why a lock could not be had (`timeout`) or kept (`lost`). */
export class FileLockError extends Error {
  override readonly name = 'FileLockError';
  readonly code: 'timeout' | 'lost';
  readonly path: string;
  constructor(code: 'timeout' | 'lost', path: string, message: string) {
    super(message);
    this.code = code;
    this.path = path;
  }
}

interface SeenLock {
  token: string;
  mtimeMs: number;
}

function errorCode(error: unknown): string | undefined {
  return error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Creates the lock file with `token` as its content; false when it exists. */
async function tryCreate(path: string, token: string): Promise<boolean> {
  let handle;
  try {
    handle = await open(path, 'wx', 0o600);
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false;
    throw error;
  }
  try {
    await handle.writeFile(token);
  } finally {
    await handle.close();
  }
  return true;
}

/** The lock file's token and mtime, or null when it is gone. */
async function inspect(path: string): Promise<SeenLock | null> {
  try {
    const [info, token] = await Promise.all([stat(path), readFile(path, 'utf8')]);
    return { token, mtimeMs: info.mtimeMs };
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return null;
    throw error;
  }
}

/**
 * Takes over the dead lock `seen`: moves whatever is at `path` aside (one
 * waiter wins the rename), removes it when it is the dead lock, and links it
 * back otherwise (a live holder's lock, created after `seen` was read).
 */
async function breakStale(path: string, seen: SeenLock): Promise<void> {
  const aside = `${path}.${randomBytes(6).toString('hex')}.stale`;
  try {
    await rename(path, aside);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return;
    throw error;
  }
  const moved = await inspect(aside);
  if (moved !== null && (moved.token !== seen.token || moved.mtimeMs !== seen.mtimeMs)) {
    // A live lock: put it back, unless another waiter took the place meanwhile
    // (then its holder finds out in assertHeld and does not commit).
    await link(aside, path).catch((error: unknown) => {
      if (errorCode(error) !== 'EEXIST') throw error;
    });
  }
  await unlink(aside).catch(() => undefined);
}

function holdLock(path: string, token: string, options: FileLockOptions): HeldFileLock {
  let lost = false;
  const refreshMs = options.refreshMs ?? Math.max(1, Math.floor(options.staleMs / 3));
  const isMine = async () => (await inspect(path))?.token === token;
  const timer = setInterval(() => {
    void (async () => {
      if (!(await isMine())) lost = true;
      else {
        const now = new Date();
        await utimes(path, now, now);
      }
    })().catch(() => undefined);
  }, refreshMs);
  timer.unref();
  return {
    path,
    async assertHeld() {
      if (lost || !(await isMine())) {
        lost = true;
        throw new FileLockError('lost', path, `the lock ${path} was taken over or removed while held`);
      }
    },
    async release() {
      clearInterval(timer);
      try {
        if (await isMine()) await unlink(path);
      } catch {
        // Nothing to release, or it is another holder's now.
      }
    },
  };
}

/**
 * Takes the lock `path` (a file: create it exclusively, holding a random
 * token), waiting with a jittered backoff up to `timeoutMs`, and taking over
 * a lock whose mtime is older than `staleMs`. The holder refreshes the mtime
 * every `refreshMs` (an unref'd timer) until `release`.
 * @throws FileLockError `timeout` when the lock could not be had in time.
 * @throws the file system's error when the directory is missing or not writable.
 */
export async function acquireFileLock(path: string, options: FileLockOptions): Promise<HeldFileLock> {
  const token = `${process.pid}.${randomBytes(12).toString('hex')}`;
  const deadline = Date.now() + options.timeoutMs;
  for (let attempt = 0; ; attempt++) {
    if (await tryCreate(path, token)) return holdLock(path, token, options);
    const seen = await inspect(path);
    if (seen !== null && Date.now() - seen.mtimeMs > options.staleMs) {
      await breakStale(path, seen);
      continue;
    }
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      throw new FileLockError('timeout', path, `the lock ${path} was not had within ${options.timeoutMs} ms`);
    }
    if (seen !== null) await sleep(Math.min(remaining, 1 + Math.random() * Math.min(50, 2 + 2 * attempt)));
  }
}
