/**
 * A session store: the safety gates of many chat sessions, by session id.
 *
 * Two tiers. A pluggable `SnapshotStore` (snapshot-stores.ts: in memory, or
 * SQLite for a real deployment) keeps every session's persisted snapshot and is saved on every
 * decision, so it is the source of truth. In front of it, live sessions (an
 * XState actor each) are created on first use, restored from the snapshot
 * store when it has the session, and evicted from memory after an idle time;
 * the next use restores them exactly as they were.
 *
 * Everything is synchronous, as the guard is: a decision is durable in the
 * snapshot store before `check`, `record` or `finalAnswer` returns.
 *
 * Spec: ASSISTANT_SAFETY.md (a session's state); DESIGN.md §3.7 (time as an
 * input: the clock is injectable, epoch milliseconds; no timers).
 */
import { assertKnownKeys } from '../util/known-keys.js';
import { createSessionGuard, type SessionGuard } from '../guard/session-guard.js';
import { validateSessionGuardOptions, type SessionGuardOptions } from '../guard/session-guard-options.js';
import { SnapshotError } from '../errors/snapshot-error.js';
import { createMemoryStore, type SnapshotStore } from './snapshot-stores.js';

// The snapshot stores are defined beside the session store and exported from here too.
export { createMemoryStore, createSqliteStore, type SnapshotStore, type SqliteStoreOptions } from './snapshot-stores.js';

/** Options of `createSessionStore`. */
export interface SessionStoreOptions {
  /** Where snapshots are saved; default `createMemoryStore()`. */
  store?: SnapshotStore;
  /** Evict a live session from memory after this many milliseconds without use; default 15 minutes. */
  idleMs?: number;
  /** The clock of the store and of every guard in it, epoch milliseconds; default `Date.now`. */
  now?: () => number;
  /** Options for every guard (classifier, strict failed writes, telemetry hooks...). */
  guard?: Omit<SessionGuardOptions, 'now' | 'snapshot'>;
}

/** The safety gates of many sessions. */
export interface SessionStore {
  /**
   * The gate of a session: a handle whose every method acts on the session's
   * live guard, restoring it from the snapshot store first when it was
   * evicted, and saves the snapshot after every call that may change it.
   * Holding the handle across evictions is safe. `check`, `record`,
   * `finalAnswer`, `completeVerification`, `reset` and `resetKeepProgress`
   * save; sending events to `actor` directly bypasses the store.
   *
   * When a save throws, the live session is dropped (the next use restores
   * the last saved snapshot, as if the call had not been made) and the error
   * propagates: the call must not run.
   *
   * @throws TypeError when `sessionId` is not a non-empty string.
   * @throws SnapshotError (naming the session and the field) when the saved snapshot does not validate.
   */
  session(sessionId: string): SessionGuard;
  /** Whether the session is live in memory (not whether it is stored). */
  has(sessionId: string): boolean;
  /** Live sessions in memory. */
  readonly size: number;
  /** Evicts every live session idle for longer than `idleMs`; returns how many. Also done on every use. */
  sweep(): number;
  /** Forgets a session, in memory and in the snapshot store. */
  delete(sessionId: string): void;
  /** Drops every live session and closes the snapshot store. */
  close(): void;
}

/** The default idle time before a live session is evicted from memory: 15 minutes. */
export const DEFAULT_IDLE_MS = 15 * 60_000;

interface Live {
  guard: SessionGuard;
  lastUsed: number;
  /** The snapshot text last saved, to skip saving an unchanged session. */
  saved: string | undefined;
}

/**
 * Drops the live entries idle for more than `idleMs` at `at` (epoch ms) from
 * a map kept least recently used first, and says how many it dropped. Shared
 * by the session store and the shared session store.
 */
export function evictIdleEntries(live: Map<string, { lastUsed: number }>, at: number, idleMs: number): number {
  let count = 0;
  for (const [id, entry] of live) {
    if (at - entry.lastUsed <= idleMs) break; // the rest were used more recently
    live.delete(id);
    count += 1;
  }
  return count;
}

/**
 * The session store: live guards by session id, least recently used first,
 * in front of the snapshot store. A class, so the store's state lives in
 * its fields; `createSessionStore` validates the options and makes one.
 */
class Sessions implements SessionStore {
  /** Live sessions, least recently used first. */
  private readonly live = new Map<string, Live>();

  private readonly store: SnapshotStore;
  private readonly idleMs: number;
  private readonly now: () => number;
  private readonly guardOptions: Omit<SessionGuardOptions, 'now' | 'snapshot'>;

  constructor(options: Required<SessionStoreOptions>) {
    this.store = options.store;
    this.idleMs = options.idleMs;
    this.now = options.now;
    this.guardOptions = options.guard;
  }

  session(sessionId: string): SessionGuard {
    if (typeof sessionId !== 'string' || sessionId === '') {
      throw new TypeError(`session: the session id must be a non-empty string, got ${JSON.stringify(sessionId)}`);
    }
    this.use(sessionId);
    return this.handle(sessionId);
  }

  has(sessionId: string): boolean {
    return this.live.has(sessionId);
  }

  get size(): number {
    return this.live.size;
  }

  sweep(): number {
    return evictIdleEntries(this.live, this.clock(), this.idleMs);
  }

  delete(sessionId: string): void {
    this.live.delete(sessionId);
    this.store.delete(sessionId);
  }

  close(): void {
    this.live.clear();
    this.store.close();
  }

  private clock(): number {
    const at = this.now();
    if (typeof at !== 'number' || !Number.isFinite(at)) {
      throw new TypeError(`the session store's clock returned ${String(at)}, not a finite epoch-millisecond number`);
    }
    return at;
  }

  /** The live session, restored or created when absent; marked as just used. */
  private use(sessionId: string): Live {
    const at = this.clock();
    evictIdleEntries(this.live, at, this.idleMs);
    let session = this.live.get(sessionId);
    if (session === undefined) {
      const saved = this.store.load(sessionId);
      session = { guard: this.restore(sessionId, saved), lastUsed: at, saved };
    } else {
      this.live.delete(sessionId); // re-inserted below: most recently used last
      session.lastUsed = at;
    }
    this.live.set(sessionId, session);
    return session;
  }

  /**
   * A guard in the saved session (a new one when none is saved).
   * @throws SnapshotError naming the session when the saved snapshot does not validate.
   */
  private restore(sessionId: string, saved: string | undefined): SessionGuard {
    try {
      return createSessionGuard({ ...this.guardOptions, now: this.now, ...(saved === undefined ? {} : { snapshot: saved }) });
    } catch (error) {
      if (error instanceof SnapshotError) {
        throw new SnapshotError(`session ${JSON.stringify(sessionId)}: ${error.message}`, error.path);
      }
      throw error;
    }
  }

  /** Runs a guard method on the live session and saves the snapshot if it changed. */
  private act<T>(sessionId: string, method: (guard: SessionGuard) => T): T {
    const session = this.use(sessionId);
    const result = method(session.guard);
    const snapshot = JSON.stringify(session.guard.getPersistedSnapshot());
    if (snapshot !== session.saved) {
      try {
        this.store.save(sessionId, snapshot, session.lastUsed);
      } catch (error) {
        this.live.delete(sessionId); // not durable: the next use restores the last saved snapshot
        throw error;
      }
      session.saved = snapshot;
    }
    return result;
  }

  /** A stateless handle: every access goes through `use`, so it survives evictions. */
  private handle(sessionId: string): SessionGuard {
    const use = () => this.use(sessionId).guard;
    const act = <T>(method: (guard: SessionGuard) => T): T => this.act(sessionId, method);
    return {
      get state() {
        return use().state;
      },
      get phantomClaims() {
        return use().phantomClaims;
      },
      get context() {
        return use().context;
      },
      get actor() {
        return use().actor;
      },
      check: (call) => act((guard) => guard.check(call)),
      record: (call, outcome, options) => act((guard) => guard.record(call, outcome, options)),
      finalAnswer: (text) => act((guard) => guard.finalAnswer(text)),
      completeVerification: () => act((guard) => guard.completeVerification()),
      reset: () => act((guard) => guard.reset()),
      resetKeepProgress: () => act((guard) => guard.resetKeepProgress()),
      tick: () => act((guard) => guard.tick()),
      getPersistedSnapshot: () => use().getPersistedSnapshot(),
    };
  }
}

/**
 * Creates a session store (see `SessionStore`).
 *
 * @example
 * const sessions = createSessionStore({ store: createSqliteStore('safety.db') });
 * const guard = sessions.session(chatId);
 * const decision = guard.check({ id: call.id, name: call.name, args: call.args }); // saved
 *
 * @throws TypeError on an unknown option (`guardOptions` for `guard`), when `idleMs` is not a non-negative number, or on a bad guard option (`validateSessionGuardOptions`).
 */
export function createSessionStore(options: SessionStoreOptions = {}): SessionStore {
  assertKnownKeys(options, ['store', 'idleMs', 'now', 'guard'], 'createSessionStore');
  const store = options.store ?? createMemoryStore();
  const idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
  if (typeof idleMs !== 'number' || Number.isNaN(idleMs) || idleMs < 0) {
    throw new TypeError(`createSessionStore: idleMs must be a non-negative number of milliseconds, got ${String(idleMs)}`);
  }
  validateSessionGuardOptions(options.guard, 'createSessionStore: guard', ['now', 'snapshot']);
  return new Sessions({ store, idleMs, now: options.now ?? Date.now, guard: options.guard ?? {} });
}
