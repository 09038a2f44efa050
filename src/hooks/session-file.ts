/**
 * A coding agent's session on disk, between its hook processes: one JSON
 * file per host and session id under the user's state directory, changed by
 * one writer at a time (a lock file beside it) with an atomic replace, so
 * that parallel hooks never lose an update, a hook killed with `kill -9`
 * leaves the last good record, and a file that is corrupt, unreadable or of
 * the wrong shape fails closed (`HookStateError` `HOOK_STATE_UNREADABLE`,
 * the file left in place until `hook reset`).
 *
 * Layout: `<state dir>/<host>/<sha256(session id), 32 hex>.json` (mode
 * 0600, directories 0700); the lock is `<file>.lock`; a temporary file of an
 * interrupted write is `<file>.<random>.tmp`. Times are epoch milliseconds.
 *
 * Spec: issue 25 item 2 (sessions on disk, safe under parallel hooks and
 * crashes); design notes AGENT_HOOKS.md §1 (hosts run parallel tool calls'
 * hooks at once; Codex has no SessionEnd, hence `removeStaleHookSessions`).
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rm, stat, unlink } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { TOOL_KINDS, type ToolKind } from '../../machines/safety.types.js';
import { writeFileAtomic } from '../util/atomic-write.js';
import { acquireFileLock, FileLockError, type HeldFileLock } from '../util/file-lock.js';
import { HOOK_HOSTS, isHookHost, type HookAnswer, type HookHost } from './types.js';

/**
 * A tool call admitted by a before-tool hook and not yet recorded by its
 * after-tool hook, kept under its correlation key: the tool's `name`, its
 * classification (`kind`, `targets`), whether its result `echoes` its input,
 * the `catalog` that classified it, and when it was admitted (`at`, epoch ms).
 * `asked`: the gate answered `ask` (the user's confirmation is missing); when
 * the call then runs, the user approved it, and the approval is recorded as
 * the confirmation before the call itself.
 */
export interface HookCallRecord {
  name: string;
  kind: ToolKind;
  targets: string[];
  echoes: boolean;
  catalog: string;
  at: number;
  asked?: boolean;
}

/**
 * One decision of the gate, for `hook status` and the visualizer: when
 * (`at`, epoch ms), on which host event, for which tool, the answer's type,
 * and for a refusal its code, the machine's rule and the reason given.
 */
export interface HookDecisionRecord {
  at: number;
  event: string;
  tool?: string;
  answer: HookAnswer['type'];
  code?: string;
  rule?: string;
  reason?: string;
}

/**
 * A hook session as stored (format version 1):
 * - `host`, `sessionId`: whose session (the host's own id, kept in the file,
 *   never in its path); `cwd`, `transcriptPath` as the host last gave them;
 * - `createdAt`, `updatedAt`: epoch ms;
 * - `snapshot`: the guard's `PersistedSnapshot` (validated by the guard on
 *   restore, not here), null for a session with no decision yet;
 * - `calls`: calls in flight by correlation key;
 * - `decisions`: the last decisions, newest last, at most `MAX_HOOK_DECISIONS`;
 * - `stopBlocks`: consecutive refusals of the agent's stop.
 */
export interface HookSessionRecord {
  version: 1;
  host: HookHost;
  sessionId: string;
  cwd?: string;
  transcriptPath?: string;
  createdAt: number;
  updatedAt: number;
  snapshot: unknown;
  calls: Record<string, HookCallRecord>;
  decisions: HookDecisionRecord[];
  stopBlocks: number;
}

/** How many decisions a session keeps (`HookSessionRecord.decisions`); `updateHookSession` keeps the newest. */
export const MAX_HOOK_DECISIONS = 20;

/**
 * A takeover bound for the lock of a hook whose process died (epoch-ms age
 * of the lock file's mtime): a few seconds, well under the hosts' shortest
 * hook timeout (Copilot CLI's 30 s). A live holder refreshes its lock every
 * second, so it is never taken over.
 */
export const HOOK_LOCK_STALE_MS = 4000;

/** How often a hook holding a session's lock refreshes it (ms), well inside `HOOK_LOCK_STALE_MS`. */
export const HOOK_LOCK_REFRESH_MS = 1000;

/** How long `updateHookSession` waits for a session's lock by default (ms). */
export const DEFAULT_HOOK_LOCK_TIMEOUT_MS = 5000;

/**
 * A session's state cannot be used, and the hook fails closed (reads
 * allowed, writes and the stop refused):
 * - `HOOK_STATE_UNREADABLE`: the file at `path` is corrupt, unreadable, of
 *   the wrong shape, or another session's; it is left as it is until
 *   `removeHookSession` (`hook reset`);
 * - `HOOK_STATE_LOCKED`: the session's lock (`path` is the lock file) was not
 *   had in time, or was lost before the commit; nothing was written.
 * `cause` is the underlying error, when there is one.
 */
export class HookStateError extends Error {
  override readonly name = 'HookStateError';
  readonly code: 'HOOK_STATE_UNREADABLE' | 'HOOK_STATE_LOCKED';
  readonly path: string;
  constructor(code: HookStateError['code'], path: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.path = path;
  }
}

const time = z.number().int().nonnegative();

const callSchema = z.strictObject({
  name: z.string(),
  kind: z.enum(TOOL_KINDS as [ToolKind, ...ToolKind[]]),
  targets: z.array(z.string()),
  echoes: z.boolean(),
  catalog: z.string(),
  at: time,
  asked: z.boolean().optional(),
});

const decisionSchema = z.strictObject({
  at: time,
  event: z.string(),
  tool: z.string().optional(),
  answer: z.enum(['allow', 'deny', 'ask', 'block-stop', 'continue']),
  code: z.string().optional(),
  rule: z.string().optional(),
  reason: z.string().optional(),
});

const recordSchema = z.strictObject({
  version: z.literal(1),
  host: z.enum(HOOK_HOSTS),
  sessionId: z.string().min(1),
  cwd: z.string().optional(),
  transcriptPath: z.string().optional(),
  createdAt: time,
  updatedAt: time,
  snapshot: z.unknown().refine((value) => value !== undefined, 'required (null for a fresh session)'),
  calls: z.record(z.string(), callSchema),
  decisions: z.array(decisionSchema).max(MAX_HOOK_DECISIONS),
  stopBlocks: z.number().int().nonnegative(),
});

/**
 * Why `value` is not a session record (the first issue, with its path), or
 * null when it is one. A call key `__proto__` is refused: zod's record drops
 * it, and a call in flight must never be forgotten.
 */
function recordProblem(value: unknown): string | null {
  const parsed = recordSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return `${issue?.path.join('.') || 'record'}: ${issue?.message ?? 'invalid'}`;
  }
  const calls = (value as { calls: object }).calls;
  if (Object.keys(calls).length !== Object.keys(parsed.data.calls).length) return 'calls: a key zod cannot keep (__proto__)';
  return null;
}

/** The record with `calls` as an object without a prototype, so a key like `constructor` finds only a call. */
function withoutPrototype(record: HookSessionRecord): HookSessionRecord {
  return { ...record, calls: Object.assign(Object.create(null) as Record<string, HookCallRecord>, record.calls) };
}

const SESSION_FILE = /^[0-9a-f]{32}\.json$/;

/**
 * The state directory of hook sessions: `PULSE_SAFETY_STATE_DIR` when set,
 * else `$XDG_STATE_HOME/pulse-safety-fsm` (when that is absolute, as the XDG
 * spec requires), else `%LOCALAPPDATA%\pulse-safety-fsm` on Windows, else
 * `~/.local/state/pulse-safety-fsm`. Always absolute.
 */
export function hookStateDirectory(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PULSE_SAFETY_STATE_DIR) return resolve(env.PULSE_SAFETY_STATE_DIR);
  if (env.XDG_STATE_HOME && isAbsolute(env.XDG_STATE_HOME)) return join(env.XDG_STATE_HOME, 'pulse-safety-fsm');
  const home = env.HOME || homedir();
  if (process.platform === 'win32') return join(env.LOCALAPPDATA || join(home, 'AppData', 'Local'), 'pulse-safety-fsm');
  return join(home, '.local', 'state', 'pulse-safety-fsm');
}

/**
 * The file of the session `sessionId` of `host`: `<stateDir>/<host>/<the
 * first 32 hex digits of sha256(sessionId)>.json`. The raw id never appears
 * in the path, so an id like `../../etc/passwd` names a file like any other.
 * @throws TypeError when `host` is not one of `HOOK_HOSTS` or `sessionId` is empty.
 */
export function sessionFilePath(stateDir: string, host: HookHost, sessionId: string): string {
  if (!isHookHost(host)) throw new TypeError(`not a hook host: ${String(host)}`);
  if (typeof sessionId !== 'string' || sessionId === '') throw new TypeError('a hook session id must be a non-empty string');
  const digest = createHash('sha256').update(sessionId, 'utf8').digest('hex').slice(0, 32);
  return join(stateDir, host, `${digest}.json`);
}

function errorCode(error: unknown): string | undefined {
  return error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined;
}

function unreadable(path: string, why: string, cause?: unknown): HookStateError {
  return new HookStateError('HOOK_STATE_UNREADABLE', path, `hook session file ${path}: ${why}`, { cause });
}

/** Reads a record from its text; `owner` names the session the file must belong to. */
function parseRecord(path: string, text: string, owner: { host: HookHost; sessionId: string } | null): HookSessionRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw unreadable(path, 'not JSON', error);
  }
  const problem = recordProblem(value);
  if (problem !== null) throw unreadable(path, `not a session record (${problem})`);
  const record = withoutPrototype(value as HookSessionRecord);
  const belongs =
    owner === null
      ? sessionFilePath(join(path, '..', '..'), record.host, record.sessionId) === path
      : record.host === owner.host && record.sessionId === owner.sessionId;
  if (!belongs) throw unreadable(path, 'the record belongs to another session');
  return record;
}

/**
 * The record in `path`, or null when there is no file; `owner` is the
 * session it must be (null: the one its path names).
 */
async function readRecord(path: string, owner: { host: HookHost; sessionId: string } | null): Promise<HookSessionRecord | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return null;
    throw unreadable(path, `cannot be read (${errorCode(error) ?? String(error)})`, error);
  }
  return parseRecord(path, text, owner);
}

/** Takes the session's lock, mapping its failures to `HOOK_STATE_LOCKED`. */
async function lockSession(path: string, timeoutMs: number): Promise<HeldFileLock> {
  const lockPath = `${path}.lock`;
  try {
    return await acquireFileLock(lockPath, { timeoutMs, staleMs: HOOK_LOCK_STALE_MS, refreshMs: HOOK_LOCK_REFRESH_MS });
  } catch (error) {
    const why =
      error instanceof FileLockError ? `not had within ${timeoutMs} ms` : `cannot be taken (${errorCode(error) ?? String(error)})`;
    throw new HookStateError('HOOK_STATE_LOCKED', lockPath, `hook session lock ${lockPath}: ${why}`, { cause: error });
  }
}

/** Validates the record an update returns, keeping its newest `MAX_HOOK_DECISIONS` decisions. */
function checkNext(next: HookSessionRecord, host: HookHost, sessionId: string): string {
  const trimmed = { ...next, decisions: Array.isArray(next.decisions) ? next.decisions.slice(-MAX_HOOK_DECISIONS) : next.decisions };
  const problem = recordProblem(trimmed);
  if (problem !== null) throw new TypeError(`updateHookSession: the new record is invalid (${problem})`);
  if (trimmed.host !== host || trimmed.sessionId !== sessionId) {
    throw new TypeError('updateHookSession: the new record names another host or session');
  }
  return `${JSON.stringify(trimmed)}\n`;
}

/**
 * Reads, changes and stores one session, one writer at a time: takes the
 * session's lock, reads the record (null when there is none), calls
 * `update`, then replaces the file atomically with `next` (or deletes it when
 * `next` is null), releases the lock and returns `value`. `next` is
 * validated first, its decisions cut to the newest `MAX_HOOK_DECISIONS`.
 * `update` must be synchronous and should be quick: others wait for it.
 * @throws HookStateError `HOOK_STATE_UNREADABLE` when the file is corrupt,
 *   unreadable, of the wrong shape or another session's (left as it is);
 *   `HOOK_STATE_LOCKED` when the lock was not had within `lockTimeoutMs`
 *   (default 5000) or was taken over before the commit (nothing written).
 * @throws whatever `update` throws (nothing written, the lock released);
 *   TypeError when `next` is not a valid record of this session.
 */
// eslint-disable-next-line max-params -- the signature the gate (gate.ts) is written against
export async function updateHookSession<T>(
  stateDir: string,
  host: HookHost,
  sessionId: string,
  update: (current: HookSessionRecord | null) => { next: HookSessionRecord | null; value: T },
  options: { lockTimeoutMs?: number } = {},
): Promise<T> {
  const path = sessionFilePath(stateDir, host, sessionId);
  await mkdir(join(stateDir, host), { recursive: true, mode: 0o700 });
  const lock = await lockSession(path, options.lockTimeoutMs ?? DEFAULT_HOOK_LOCK_TIMEOUT_MS);
  try {
    const current = await readRecord(path, { host, sessionId });
    const { next, value } = update(current);
    const text = next === null ? null : checkNext(next, host, sessionId);
    await lock.assertHeld().catch((error: unknown) => {
      throw new HookStateError('HOOK_STATE_LOCKED', lock.path, `hook session lock ${lock.path}: lost before the commit`, { cause: error });
    });
    if (text !== null) await writeFileAtomic(path, text, 0o600);
    else if (current !== null) await unlink(path);
    return value;
  } finally {
    await lock.release();
  }
}

/**
 * Every session file under `stateDir` (`<host>/<32 hex>.json` for each of
 * `HOOK_HOSTS`), read without the lock (writes replace files atomically):
 * its record, or the `HookStateError` `HOOK_STATE_UNREADABLE` it gives.
 * Sorted by path; a missing directory gives an empty list.
 */
export async function readHookSessions(
  stateDir: string,
): Promise<Array<{ path: string; record: HookSessionRecord } | { path: string; error: HookStateError }>> {
  const found: Array<{ path: string; record: HookSessionRecord } | { path: string; error: HookStateError }> = [];
  for (const path of await sessionFiles(stateDir)) {
    try {
      const record = await readRecord(path, null);
      if (record !== null) found.push({ path, record });
    } catch (error) {
      found.push({ path, error: error instanceof HookStateError ? error : unreadable(path, String(error), error) });
    }
  }
  return found;
}

/** Names in `<stateDir>/<host>` for each host, as whole paths; a missing directory gives none. */
async function hostEntries(stateDir: string): Promise<string[]> {
  const paths: string[] = [];
  for (const host of HOOK_HOSTS) {
    const dir = join(stateDir, host);
    const names = await readdir(dir).catch((error: unknown) => {
      if (errorCode(error) === 'ENOENT' || errorCode(error) === 'ENOTDIR') return [] as string[];
      throw error;
    });
    for (const name of names.sort()) paths.push(join(dir, name));
  }
  return paths;
}

async function sessionFiles(stateDir: string): Promise<string[]> {
  return (await hostEntries(stateDir)).filter((path) => SESSION_FILE.test(basename(path))).sort();
}

/**
 * Removes a session's file under its lock (`hook reset`), whatever it holds:
 * a corrupt file, or a directory in its place. True when there was one.
 * @throws HookStateError `HOOK_STATE_LOCKED` when the lock was not had in 5000 ms.
 * @throws TypeError for an unknown host or an empty session id.
 */
export async function removeHookSession(stateDir: string, host: HookHost, sessionId: string): Promise<boolean> {
  const path = sessionFilePath(stateDir, host, sessionId);
  await mkdir(join(stateDir, host), { recursive: true, mode: 0o700 });
  const lock = await lockSession(path, DEFAULT_HOOK_LOCK_TIMEOUT_MS);
  try {
    const existed = await stat(path).then(
      () => true,
      () => false,
    );
    await rm(path, { recursive: true, force: true });
    return existed;
  } finally {
    await lock.release();
  }
}

/** The age of a session file for the TTL: its record's `updatedAt`, else (unreadable) its mtime; null when gone. */
async function lastUse(path: string): Promise<number | null> {
  try {
    return (await readRecord(path, null))?.updatedAt ?? null;
  } catch {
    return stat(path).then(
      (info) => info.mtimeMs,
      () => null,
    );
  }
}

/** Removes one session file if it is still older than the TTL, under its lock; false when busy or fresh. */
async function removeIfStale(path: string, before: number): Promise<boolean> {
  let lock: HeldFileLock;
  try {
    lock = await acquireFileLock(`${path}.lock`, { timeoutMs: 0, staleMs: HOOK_LOCK_STALE_MS });
  } catch {
    return false; // in use: not stale
  }
  try {
    const at = await lastUse(path);
    if (at === null || at >= before) return false;
    await rm(path, { recursive: true, force: true });
    return true;
  } finally {
    await lock.release();
  }
}

/**
 * The retention job (Codex has no session end): removes every session whose
 * last use (`updatedAt`, or the file's mtime when it cannot be read) is more
 * than `olderThanMs` before `now` (epoch ms), each under its lock (a session
 * in use is kept), and the leftovers of killed hooks (temporary files,
 * moved-aside and orphaned lock files) older than that. Returns how many
 * sessions it removed.
 */
export async function removeStaleHookSessions(stateDir: string, olderThanMs: number, now: number): Promise<number> {
  const before = now - olderThanMs;
  let removed = 0;
  for (const path of await sessionFiles(stateDir)) {
    if (await removeIfStale(path, before)) removed++;
  }
  for (const path of await hostEntries(stateDir)) {
    if (/\.json\.lock$/.test(path)) {
      // A killed hook's lock: taken over (it is stale) and released, never unlinked blindly.
      await acquireFileLock(path, { timeoutMs: 0, staleMs: HOOK_LOCK_STALE_MS }).then(
        (lock) => lock.release(),
        () => undefined,
      );
    } else if (/\.json(\.[0-9a-f]+\.tmp|\.lock\.[0-9a-f]+\.stale)$/.test(path)) {
      const info = await stat(path).catch(() => null);
      if (info !== null && info.mtimeMs < before) await unlink(path).catch(() => undefined);
    }
  }
  return removed;
}
