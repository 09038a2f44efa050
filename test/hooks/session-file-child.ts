/**
 * A hook process for session-file.test.ts, bundled and spawned by it:
 * - `increment <dir> <id> <n>`: n read-modify-write increments of `stopBlocks`
 *   through `updateHookSession`, each also keeping a decision;
 * - `block <dir> <id> <bytes>`: takes the session's lock in `updateHookSession`,
 *   prints `locked` and blocks for good inside `update` (killed by the test);
 *   with bytes > 0 it instead writes a record whose snapshot is that many
 *   bytes long, printing `writing` first (killed mid-write by the test);
 * - `hold <dir> <id> <ms>`: holds the session's lock while alive (its event loop
 *   running and refreshing the lock), printing `locked`, for ms, then releases.
 */
import { acquireFileLock } from '../../src/util/file-lock.js';
import {
  HOOK_LOCK_REFRESH_MS,
  HOOK_LOCK_STALE_MS,
  sessionFilePath,
  updateHookSession,
  type HookSessionRecord,
} from '../../src/hooks/session-file.js';

const [mode, dir, sessionId, count] = process.argv.slice(2) as [string, string, string, string];
const host = 'claude-code';

function record(current: HookSessionRecord | null, at: number): HookSessionRecord {
  return {
    version: 1,
    host,
    sessionId,
    createdAt: current?.createdAt ?? at,
    updatedAt: at,
    snapshot: current?.snapshot ?? null,
    calls: current?.calls ?? {},
    decisions: [...(current?.decisions ?? []), { at, event: 'PreToolUse', tool: `pid ${process.pid}`, answer: 'allow' }],
    stopBlocks: (current?.stopBlocks ?? 0) + 1,
  };
}

async function main(): Promise<void> {
  if (mode === 'increment') {
    for (let i = 0; i < Number(count); i++) {
      await updateHookSession(dir, host, sessionId, (current) => ({ next: record(current, Date.now()), value: undefined }), {
        lockTimeoutMs: 60_000,
      });
    }
  } else if (mode === 'block') {
    const bytes = Number(count);
    await updateHookSession(dir, host, sessionId, (current) => {
      if (bytes > 0) {
        process.stdout.write('writing\n');
        return { next: { ...record(current, Date.now()), snapshot: 'x'.repeat(bytes) }, value: undefined };
      }
      process.stdout.write('locked\n');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); // blocks until killed
      return { next: null, value: undefined };
    });
  } else if (mode === 'hold') {
    const lock = await acquireFileLock(`${sessionFilePath(dir, host, sessionId)}.lock`, {
      timeoutMs: 10_000,
      staleMs: HOOK_LOCK_STALE_MS,
      refreshMs: HOOK_LOCK_REFRESH_MS,
    });
    process.stdout.write('locked\n');
    await new Promise((resolve) => setTimeout(resolve, Number(count)));
    await lock.release();
  }
  process.stdout.write('done\n');
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exitCode = 3;
});
