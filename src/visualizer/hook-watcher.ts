/**
 * Watches the hook state directory for `pulse-safety serve --hooks` and
 * keeps the live hub's hook sessions in step with its files: a file added
 * or changed is read and shown, a file gone is removed, a file that cannot
 * be read is shown as unreadable.
 *
 * The store replaces a session file atomically (a temporary file renamed
 * over it), so directories are watched, not files: `fs.watch` on the state
 * directory and on each folder in it down to `HOOK_WATCH_DEPTH` levels (the
 * store keeps one folder per host), each watch on its own directory.
 * (Node 20's recursive `fs.watch` on Linux watches the files themselves and
 * loses a file once it is replaced by a rename: after the second replace it
 * reports nothing more.) Any event reads the directory again through the
 * store (`readHookSessions`), `HOOK_RESCAN_DELAY_MS` later so that a burst
 * of events is one read, and only the sessions whose file says something new
 * are sent on; the folders watched are brought up to date at the same time.
 * Where the directory cannot be watched (it does not exist yet, or
 * `fs.watch` fails or is refused on its file system) it is read every
 * `HOOK_POLL_INTERVAL_MS` and the watch tried again; while watched, it is
 * still read every ten intervals, for a change a watch missed, and watched
 * anew when the directory was removed or replaced.
 *
 * Nothing on disk stops the server: a read that throws is logged once
 * (`DropLog`) and the sessions shown stay as they were.
 */
import { readdirSync, statSync, watch, type Dirent, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { readHookSessions } from '../hooks/session-file.js';
import { errorMessage, HOOK_POLL_INTERVAL_MS, HOOK_RESCAN_DELAY_MS, HOOK_WATCH_DEPTH, MAX_HOOK_SESSIONS, type DropLog } from './bounds.js';
import { hookSessionDetail, hookSessionId, type HookSessionEntry } from './hook-sessions.js';
import type { HookSessionInfo, LiveSessionDetail } from './protocol.js';

/** Where the watcher sends the sessions (the live hub). */
export interface HookSessionSink {
  /** A session shown or changed. */
  putHookSession(detail: LiveSessionDetail): void;
  /** A session whose file is gone (or no longer among the `MAX_HOOK_SESSIONS` newest). */
  removeHookSession(sessionId: string): void;
}

/** Options of `HookSessionWatcher`. */
export interface HookWatcherOptions {
  /** The hook state directory (`hookStateDirectory()`). */
  directory: string;
  /** Never use `fs.watch`, only read every `pollIntervalMs` (a file system where watching does not work, e.g. some network mounts). */
  poll?: boolean;
  /** How often to read the directory when it is not watched, ms; default `HOOK_POLL_INTERVAL_MS`. */
  pollIntervalMs?: number;
}

/** What the watcher is made of. */
export interface HookWatcherParts extends HookWatcherOptions {
  sink: HookSessionSink;
  drops: DropLog;
  /** The clock, epoch ms; default `Date.now`. */
  clock?: () => number;
  /** Reads the directory; default the store's `readHookSessions`. */
  read?: (directory: string) => Promise<HookSessionEntry[]>;
}

/** What one entry said when last read: its text (to tell a change), when it was first seen so, and what it showed. */
interface Seen {
  fingerprint: string;
  seenAt: number;
  hook: HookSessionInfo | null;
}

/** The fingerprint of an entry: the record's JSON, or the error's code and message. */
function fingerprintOf(entry: HookSessionEntry): string {
  if ('error' in entry) {
    const error = entry.error as { code?: unknown; message?: unknown } | null;
    return `error:${String(error?.code)}:${String(error?.message)}`;
  }
  return `record:${JSON.stringify(entry.record)}`;
}

/** The time an entry sorts by: its record's `updatedAt`, or when an unreadable one was first seen. */
function updatedAtOf(entry: HookSessionEntry, seen: Seen | undefined, now: number): number {
  if (!('error' in entry)) {
    const updatedAt = (entry.record as { updatedAt?: unknown }).updatedAt;
    if (typeof updatedAt === 'number' && Number.isFinite(updatedAt)) return updatedAt;
  }
  return seen?.seenAt ?? now;
}

/** Keeps a sink's hook sessions in step with the files of a hook state directory. */
export class HookSessionWatcher {
  /** The directory watched. */
  readonly directory: string;
  private readonly sink: HookSessionSink;
  private readonly drops: DropLog;
  private readonly clock: () => number;
  private readonly read: (directory: string) => Promise<HookSessionEntry[]>;
  private readonly pollOnly: boolean;
  private readonly pollIntervalMs: number;
  /** Sessions shown now, by live session id. */
  private readonly shown = new Map<string, Seen>();
  /** The watches, by directory: the state directory's first, then its folders'. */
  private readonly watchers = new Map<string, FSWatcher>();
  private pollTimer: NodeJS.Timeout | null = null;
  private rescanTimer: NodeJS.Timeout | null = null;
  private scanning: Promise<void> | null = null;
  private again = false;
  /** The inode of the directory watched, to notice it removed or replaced. */
  private inode: number | null = null;
  private polls = 0;
  private closed = false;

  constructor(parts: HookWatcherParts) {
    this.directory = parts.directory;
    this.sink = parts.sink;
    this.drops = parts.drops;
    this.clock = parts.clock ?? Date.now;
    this.read = parts.read ?? readHookSessions;
    this.pollOnly = parts.poll === true;
    this.pollIntervalMs = parts.pollIntervalMs ?? HOOK_POLL_INTERVAL_MS;
  }

  /** Whether `fs.watch` watches the directory now (else it is polled). */
  get watching(): boolean {
    return this.watchers.has(this.directory);
  }

  /** Hook sessions shown now. */
  get size(): number {
    return this.shown.size;
  }

  /** Reads the directory once (the sessions are shown when this resolves), then watches it. Never rejects. */
  async start(): Promise<void> {
    await this.scan();
    this.startWatching();
    this.schedulePoll();
  }

  /** Stops watching and polling; the sessions shown stay in the sink. */
  close(): void {
    this.closed = true;
    this.stopWatching();
    if (this.pollTimer !== null) clearTimeout(this.pollTimer);
    if (this.rescanTimer !== null) clearTimeout(this.rescanTimer);
    this.pollTimer = null;
    this.rescanTimer = null;
  }

  /** Reads the directory again now (after any read under way) and sends on what changed. Never rejects. */
  async scan(): Promise<void> {
    if (this.scanning !== null) {
      this.again = true;
      return this.scanning;
    }
    this.scanning = (async () => {
      do {
        this.again = false;
        await this.scanOnce();
      } while (this.again && !this.closed);
    })();
    try {
      await this.scanning;
    } finally {
      this.scanning = null;
    }
  }

  private async scanOnce(): Promise<void> {
    let entries: HookSessionEntry[];
    try {
      entries = await this.read(this.directory);
    } catch (error) {
      this.drops.report('hook state directory read', `${this.directory}: ${errorMessage(error)}`);
      return;
    }
    if (this.closed) return;
    const now = this.clock();
    const current = new Map<string, { entry: HookSessionEntry; fingerprint: string; updatedAt: number }>();
    for (const entry of entries) {
      try {
        const id = hookSessionId(this.directory, entry.path);
        const fingerprint = fingerprintOf(entry);
        const seen = this.shown.get(id);
        current.set(id, { entry, fingerprint, updatedAt: updatedAtOf(entry, seen?.fingerprint === fingerprint ? seen : undefined, now) });
      } catch (error) {
        this.drops.report('hook session entry', errorMessage(error));
      }
    }
    // The newest MAX_HOOK_SESSIONS are shown.
    const kept = new Set(
      [...current.entries()]
        .sort((a, b) => b[1].updatedAt - a[1].updatedAt)
        .slice(0, MAX_HOOK_SESSIONS)
        .map(([id]) => id),
    );
    if (current.size > kept.size) {
      this.drops.report(
        'hook sessions past the bound',
        `${current.size} session files; the ${MAX_HOOK_SESSIONS} most recently updated are shown`,
      );
    }
    for (const id of [...this.shown.keys()]) {
      if (kept.has(id)) continue;
      this.shown.delete(id);
      this.sink.removeHookSession(id);
    }
    for (const id of kept) {
      const { entry, fingerprint } = current.get(id)!;
      const seen = this.shown.get(id);
      if (seen?.fingerprint === fingerprint) continue;
      // A file that was read before and cannot be now still names its session.
      const detail = hookSessionDetail(this.directory, entry, now, seen?.hook ?? null);
      this.shown.set(id, { fingerprint, seenAt: now, hook: detail.hook });
      this.sink.putHookSession(detail);
    }
  }

  /** Reads the directory again `HOOK_RESCAN_DELAY_MS` from now, once for a burst of changes. */
  private scheduleRescan(): void {
    if (this.closed || this.rescanTimer !== null) return;
    this.rescanTimer = setTimeout(() => {
      this.rescanTimer = null;
      this.refreshWatches();
      void this.scan();
    }, HOOK_RESCAN_DELAY_MS);
  }

  /**
   * The poll, every `pollIntervalMs`: while the directory is not watched (or
   * the one watched was replaced or removed) it tries the watch again and
   * reads the directory; while it is watched, it reads it every tenth time.
   */
  private schedulePoll(): void {
    if (this.closed) return;
    this.pollTimer = setTimeout(() => {
      this.pollTimer = null;
      this.polls += 1;
      if (this.watching && this.inodeNow() !== this.inode) this.stopWatching();
      const watched = this.watching;
      if (!watched) this.startWatching();
      if (watched && this.polls % 10 !== 0) return this.schedulePoll();
      void this.scan().then(() => this.schedulePoll());
    }, this.pollIntervalMs);
    this.pollTimer.unref();
  }

  /** The inode of the state directory now, or null when it is gone. */
  private inodeNow(): number | null {
    try {
      return statSync(this.directory).ino;
    } catch {
      return null;
    }
  }

  /** Watches the state directory and its folders, when it can be watched; else leaves it to the poll. */
  private startWatching(): void {
    if (this.closed || this.pollOnly || this.watching) return;
    if (!this.watchDirectory(this.directory)) return;
    this.inode = this.inodeNow();
    this.refreshWatches();
  }

  /**
   * Brings the watches up to date with the folders of the state directory
   * down to `HOOK_WATCH_DEPTH` levels: new folders watched, gone ones let go.
   */
  private refreshWatches(): void {
    if (this.closed || !this.watching) return;
    const folders = new Set<string>();
    const walk = (dir: string, depth: number) => {
      if (depth > HOOK_WATCH_DEPTH) return;
      let entries: Dirent[];
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const entry of entries) {
        if (!entry.isDirectory()) continue;
        const folder = join(dir, entry.name);
        folders.add(folder);
        walk(folder, depth + 1);
      }
    };
    walk(this.directory, 1);
    for (const [dir, watcher] of this.watchers) {
      if (dir === this.directory || folders.has(dir)) continue;
      closeQuietly(watcher);
      this.watchers.delete(dir);
    }
    for (const folder of folders) if (!this.watchers.has(folder)) this.watchDirectory(folder);
  }

  /** Watches one directory (not recursively); false when it cannot be watched. */
  private watchDirectory(dir: string): boolean {
    try {
      const watcher = watch(dir, { persistent: false }, () => this.scheduleRescan());
      watcher.on('error', (error) => {
        // The directory was removed, or the watch failed: let it go; for the state directory, poll until it can be watched again.
        if (this.watchers.get(dir) !== watcher) return;
        closeQuietly(watcher);
        this.watchers.delete(dir);
        if (dir === this.directory) {
          this.drops.report('hook state directory watch', `${dir}: ${errorMessage(error)}`);
          this.stopWatching();
        }
        this.scheduleRescan();
      });
      this.watchers.set(dir, watcher);
      return true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') this.drops.report('hook state directory watch', `${dir}: ${errorMessage(error)}`);
      return false;
    }
  }

  private stopWatching(): void {
    for (const watcher of this.watchers.values()) closeQuietly(watcher);
    this.watchers.clear();
  }
}

/** Closes a watch; one that failed may throw on close, and is dropped either way. */
function closeQuietly(watcher: FSWatcher): void {
  try {
    watcher.close();
  } catch {
    // dropped either way
  }
}
