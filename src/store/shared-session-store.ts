/**
 * Sessions shared by many processes: the safety gates of chat sessions whose
 * calls may arrive at any replica of an agent service.
 *
 * Each decision (`check`, `record`, `finalAnswer`, `completeVerification`,
 * `reset`, `resetKeepProgress`) is ONE atomic compare-and-set of the
 * session's compact snapshot (`PersistedSnapshot`, src/guard/snapshot.ts) in a
 * `VersionedSnapshotStore`: the gate is restored from the snapshot at some
 * version (or a live gate kept from this process's last commit at that
 * version is reused), the call is applied, and the new snapshot is stored
 * only if the session is still at that version. When another process
 * committed first, the store answers with the session as it now is, and the
 * call is applied again to that (a bounded number of times). So the
 * decision a caller gets is always the one that was committed, every
 * session's history is one sequence of decisions, and no update is lost.
 *
 * The store is asynchronous (Redis is), so this API is too; the
 * synchronous `createSessionStore` (session-store.ts) stays for one process.
 * Shipped stores (versioned-stores.ts): `createMemoryVersionedStore` (tests,
 * one process), `createSqliteVersionedStore` (one database file, any number
 * of processes on one machine) and `createRedisSnapshotStore` (redis-store.ts: any
 * number of machines). A store that cannot be reached, or fails, rejects
 * with a `SessionStoreError` and no decision is returned: the gate fails
 * closed (do not run the call).
 *
 * Spec: ASSISTANT_SAFETY.md (a session's state, "The invariants");
 * DESIGN.md §3.7 (time as an input: the clock is injectable, epoch ms).
 */
import { assertKnownKeys } from '../util/known-keys.js';
import { MAX_TIME_MS } from '../../machines/safety.policy.js';
import type { GateDecidedEvent, RecoverySucceededEvent } from '../../machines/safety.types.js';
import { SessionStoreError } from '../errors/session-store-error.js';
import { SnapshotError } from '../errors/snapshot-error.js';
import {
  createSessionGuard,
  type Decision,
  type FinalAnswerDecision,
  type RecordResult,
  type SessionGuard,
  type ToolCall,
} from '../guard/session-guard.js';
import { validateSessionGuardOptions, type RaisedRecovery, type SessionGuardOptions } from '../guard/session-guard-options.js';
import { type PersistedSnapshot } from '../guard/snapshot.js';
import { isThenable } from '../util/thenable.js';
import { DEFAULT_IDLE_MS, evictIdleEntries } from './session-store.js';
import {
  createMemoryVersionedStore,
  type CompareAndSetResult,
  type VersionedSnapshot,
  type VersionedSnapshotStore,
} from './versioned-stores.js';

// The versioned stores are defined beside the shared session store and exported from here too.
export {
  createMemoryVersionedStore,
  createSqliteVersionedStore,
  firstSnapshotVersion,
  DEFAULT_SESSION_TTL_MS,
  type CompareAndSetResult,
  type PrunableVersionedSnapshotStore,
  type SqliteVersionedStoreOptions,
  type VersionedSnapshot,
  type VersionedSnapshotStore,
  type VersionedStoreOptions,
} from './versioned-stores.js';

/**
 * Options of `createSharedSessionStore`. Idle sessions expire by the
 * store's `ttlMs`, not an option here: Redis sets the TTL in the same script
 * that writes, and every process sharing a store must expire sessions alike.
 */
export interface SharedSessionStoreOptions {
  /** Where sessions live; default a new `createMemoryVersionedStore()` (this process only). */
  store?: VersionedSnapshotStore;
  /**
   * Keep a session's live gate in this process for this many milliseconds
   * after its last use, so the next call needs no load when no other
   * process changed the session (one round trip instead of two); default 15
   * minutes; 0 keeps none. A kept gate is never trusted: the compare-and-set
   * checks its version, and a stale one is replaced by the stored session.
   */
  idleMs?: number;
  /** The clock, epoch milliseconds; default `Date.now`. Read once per attempt: every event of an attempt has that time. */
  now?: () => number;
  /**
   * Options for every gate (classifier, strict failed writes, telemetry
   * hooks...). `onDecision`, `onRecovery` and `onRecoveryRaised` are called once per committed
   * call, after the commit: never for an attempt that lost a race.
   */
  guard?: Omit<SessionGuardOptions, 'now' | 'snapshot'>;
  /**
   * Attempts after the first when other processes commit first; default 8.
   * Then `SessionStoreError` code `conflict`. Retries follow at once, with
   * no backoff: each lost race means another call on the session committed,
   * so the sessions always make progress, and a retry starts from the
   * session the failed compare-and-set returned, with no extra round trip.
   */
  maxRetries?: number;
}

/** What `transact` committed: `fn`'s value, and where the session now stands. */
export interface Committed<T> {
  /** What `fn` returned on the committed attempt. */
  value: T;
  /** The session's version after the commit (the same as before when nothing changed). */
  version: number;
  /** Whether the snapshot changed (a new version was stored). */
  changed: boolean;
  /** Attempts made, 1 when no other process committed in between. */
  attempts: number;
  /** The time of the committed attempt, epoch ms: every event `fn` sent had it. */
  at: number;
}

/**
 * The gate of a shared session: `SessionGuard`'s methods, asynchronous.
 * Each call is one compare-and-set of the session (see `SharedSessionStore.transact`):
 * its answer is the decision committed, and it rejects with no decision
 * when the store cannot commit (`SessionStoreError`: do not run the call),
 * when the stored session does not validate (`SnapshotError` naming the
 * session), or on the `TypeError`s of `SessionGuard`.
 */
export interface SharedSessionGuard {
  /** The session id. */
  readonly sessionId: string;
  /** `SessionGuard.check`, committed. */
  check(call: ToolCall): Promise<Decision>;
  /** `SessionGuard.record(call, outcome?, options?)`, committed. */
  record(...args: Parameters<SessionGuard['record']>): Promise<RecordResult>;
  /** `SessionGuard.finalAnswer(text?)`, committed. */
  finalAnswer(text?: string): Promise<FinalAnswerDecision>;
  /** `SessionGuard.completeVerification`, committed. */
  completeVerification(): Promise<boolean>;
  /** `SessionGuard.reset`, committed. */
  reset(): Promise<void>;
  /** `SessionGuard.resetKeepProgress`, committed. */
  resetKeepProgress(): Promise<void>;
  /** The session as stored now (a fresh session's snapshot when none is stored); a load, no write. */
  getPersistedSnapshot(): Promise<PersistedSnapshot>;
}

/** The safety gates of sessions shared by many processes. */
export interface SharedSessionStore {
  /**
   * The gate of a session (no I/O until a method is called).
   * @throws TypeError when `sessionId` is not a non-empty string.
   */
  session(sessionId: string): SharedSessionGuard;
  /**
   * Runs `fn` on the session's gate as one atomic compare-and-set: the gate
   * is the stored session (or this process's live gate when its version is
   * still the stored one); when another process committed first, `fn` runs
   * again on the session as it now is, at most `maxRetries` more times.
   * Calls on one session from this process are queued, so they never race
   * each other. `fn` must be synchronous and only use the gate it is given
   * (it may run more than once; telemetry hooks fire only for the committed run).
   *
   * @throws SessionStoreError `unavailable` (store unreachable or failing), `conflict` (retries used up), `closed`.
   * @throws SnapshotError naming the session when the stored session does not validate.
   * @throws TypeError from `fn` (a malformed call), or when `fn` returns a promise; nothing is stored then.
   */
  transact<T>(sessionId: string, fn: (guard: SessionGuard) => T): Promise<Committed<T>>;
  /** Whether this process keeps the session's live gate. */
  has(sessionId: string): boolean;
  /** Live gates kept in this process. */
  readonly size: number;
  /** Drops every live gate idle for longer than `idleMs`; returns how many. Also done on every use. */
  sweep(): number;
  /** Forgets a session, here and in the store. */
  delete(sessionId: string): Promise<void>;
  /**
   * Closes: calls made before end as they would have, later calls reject
   * (`SessionStoreError` `closed`); then the live gates are dropped and the
   * store is closed.
   */
  close(): Promise<void>;
}

interface Live {
  guard: SessionGuard;
  /** The snapshot text stored at `version`, which `guard` is in. */
  text: string;
  version: number;
  lastUsed: number;
}

/** Where an attempt starts from: the session at a version (null: absent), and a live gate in it when one is kept. */
interface Base {
  guard: SessionGuard | undefined;
  text: string | undefined;
  version: number | null;
  /** Read from the store for this call (a live gate kept from earlier is not). */
  fresh: boolean;
}

/** The session's id, checked: a non-empty string. @throws TypeError otherwise. */
function validId(sessionId: unknown): string {
  if (typeof sessionId !== 'string' || sessionId === '') {
    throw new TypeError(`session: the session id must be a non-empty string, got ${JSON.stringify(sessionId)}`);
  }
  return sessionId;
}

function closedError(): SessionStoreError {
  return new SessionStoreError('closed', 'the shared session store is closed');
}

/** Errors of the store, named and typed: `SessionStoreError` and `SnapshotError` (with the session) pass, others become `unavailable`. */
function storeError(error: unknown, what: string, sessionId: string): Error {
  if (error instanceof SessionStoreError) return error;
  if (error instanceof SnapshotError) return new SnapshotError(`session ${JSON.stringify(sessionId)}: ${error.message}`, error.path);
  const message = error instanceof Error ? error.message : String(error);
  return new SessionStoreError('unavailable', `the session store failed on ${what} of session ${JSON.stringify(sessionId)}: ${message}`, {
    cause: error,
  });
}

/** Where an attempt starts from when the session is read from the store: as stored (undefined: absent). */
function storedBase(stored: VersionedSnapshot | undefined): Base {
  return { guard: undefined, text: stored?.snapshot, version: stored?.version ?? null, fresh: true };
}

/** Calls the telemetry hooks of a committed attempt, in order; what they throw or reject is ignored. */
function fireHooks(hooks: readonly (() => unknown)[]): void {
  for (const hook of hooks) {
    try {
      const returned: unknown = hook();
      // An async hook's rejection is ignored too, rather than left unhandled (which would end the process).
      if (isThenable(returned)) Promise.resolve(returned).catch(() => undefined);
    } catch {
      // telemetry never changes or stops a decision
    }
  }
}

/**
 * The shared session store: this process's live gates and queues of calls
 * by session, in front of the versioned store every process shares. A
 * class, so the store's state lives in its fields; `createSharedSessionStore`
 * validates the options and makes one.
 */
class SharedSessions implements SharedSessionStore {
  private readonly store: VersionedSnapshotStore;
  private readonly idleMs: number;
  private readonly maxRetries: number;
  private readonly now: () => number;
  /** Every gate's options but the clock and the telemetry hooks, which `hooks` gives. */
  private readonly guardOptions: Omit<SessionGuardOptions, 'now' | 'snapshot' | 'onDecision' | 'onRecovery' | 'onRecoveryRaised'>;
  /** The clock and hooks of every gate: the time of the attempt running, and the hooks held until it commits. */
  private readonly hooks: Pick<SessionGuardOptions, 'now' | 'onDecision' | 'onRecovery' | 'onRecoveryRaised'>;
  /** Live gates, least recently used first. */
  private readonly live = new Map<string, Live>();
  /** Per session, the end of this process's queue of calls on it. */
  private readonly tails = new Map<string, Promise<void>>();
  private closed = false;
  /** The time of the attempt running `fn`, read by every gate's clock. */
  private attemptAt = 0;
  /** The hooks fired during the attempt running `fn`, to call once it commits. */
  private fired: (() => unknown)[] | undefined;

  constructor(options: Required<SharedSessionStoreOptions>) {
    this.store = options.store;
    this.idleMs = options.idleMs;
    this.maxRetries = options.maxRetries;
    this.now = options.now;
    const { onDecision, onRecovery, onRecoveryRaised, ...guardOptions } = options.guard;
    this.guardOptions = guardOptions;
    this.hooks = {
      now: () => this.attemptAt,
      ...(onDecision === undefined ? {} : { onDecision: (event: GateDecidedEvent) => this.fired?.push(() => onDecision(event)) }),
      ...(onRecovery === undefined ? {} : { onRecovery: (event: RecoverySucceededEvent) => this.fired?.push(() => onRecovery(event)) }),
      ...(onRecoveryRaised === undefined
        ? {}
        : { onRecoveryRaised: (event: RaisedRecovery) => this.fired?.push(() => onRecoveryRaised(event)) }),
    };
  }

  session(sessionId: string): SharedSessionGuard {
    return this.handle(validId(sessionId));
  }

  transact<T>(sessionId: string, fn: (guard: SessionGuard) => T): Promise<Committed<T>> {
    try {
      validId(sessionId);
      if (typeof fn !== 'function') throw new TypeError('transact: fn must be a function of the session gate');
      if (this.closed) throw closedError();
    } catch (error) {
      return Promise.reject(error);
    }
    return this.queued(sessionId, () => this.attemptAll(sessionId, fn));
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

  delete(sessionId: string): Promise<void> {
    try {
      validId(sessionId);
      if (this.closed) throw closedError();
    } catch (error) {
      return Promise.reject(error);
    }
    return this.queued(sessionId, async () => {
      this.live.delete(sessionId);
      try {
        await this.store.delete(sessionId);
      } catch (error) {
        throw storeError(error, 'delete', sessionId);
      }
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.tails.values()]);
    this.live.clear();
    await this.store.close();
  }

  private clock(): number {
    const at = this.now();
    if (typeof at !== 'number' || !(Math.abs(at) <= MAX_TIME_MS)) {
      throw new TypeError(
        `the shared session store's clock returned ${String(at)}, not an epoch-millisecond number within ±${MAX_TIME_MS}`,
      );
    }
    return at;
  }

  private async load(sessionId: string): Promise<VersionedSnapshot | undefined> {
    try {
      return await this.store.load(sessionId);
    } catch (error) {
      throw storeError(error, 'load', sessionId);
    }
  }

  /** A gate in the stored session (a new one when none is stored). */
  private build(sessionId: string, text: string | undefined): SessionGuard {
    try {
      return createSessionGuard({ ...this.guardOptions, ...this.hooks, ...(text === undefined ? {} : { snapshot: text }) });
    } catch (error) {
      if (error instanceof SnapshotError) throw new SnapshotError(`session ${JSON.stringify(sessionId)}: ${error.message}`, error.path);
      throw error;
    }
  }

  /** Queues `task` behind this process's earlier calls on the session. */
  private queued<T>(sessionId: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(sessionId) ?? Promise.resolve();
    const result = previous.then(task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(sessionId, tail);
    void tail.then(() => {
      if (this.tails.get(sessionId) === tail) this.tails.delete(sessionId);
    });
    return result;
  }

  /**
   * The live gate kept for the session, as where the call starts from, when
   * it is not idle; undefined otherwise. Taken out of the live gates either
   * way: this call owns it until it commits.
   */
  private takeKept(sessionId: string): Base | undefined {
    const kept = this.live.get(sessionId);
    this.live.delete(sessionId);
    if (kept === undefined || this.clock() - kept.lastUsed > this.idleMs) return undefined;
    return { guard: kept.guard, text: kept.text, version: kept.version, fresh: false };
  }

  /** Runs `fn` on `guard` as the attempt at `at`: every gate's clock reads `at`, and the hooks it fires go to `fired`. */
  private apply<T>(guard: SessionGuard, fn: (guard: SessionGuard) => T, at: number, fired: (() => unknown)[]): T {
    this.attemptAt = at;
    this.fired = fired;
    try {
      return fn(guard);
    } finally {
      this.fired = undefined;
    }
  }

  /** `transact`'s attempts, in the session's queue: see `SharedSessionStore.transact`. */
  private async attemptAll<T>(sessionId: string, fn: (guard: SessionGuard) => T): Promise<Committed<T>> {
    let base = this.takeKept(sessionId) ?? storedBase(await this.load(sessionId));
    for (let attempt = 1; attempt <= this.maxRetries + 1; attempt++) {
      const at = this.clock();
      evictIdleEntries(this.live, at, this.idleMs);
      const guard = base.guard ?? this.build(sessionId, base.text);
      const fired: (() => unknown)[] = [];
      let value: T;
      try {
        value = this.apply(guard, fn, at, fired);
      } catch (error) {
        if (base.fresh) throw error;
        // The live gate may be behind the store (an id still in flight here, recorded elsewhere): judge on the stored session.
        base = storedBase(await this.load(sessionId));
        attempt -= 1; // not a race lost
        continue;
      }
      if (isThenable(value)) {
        throw new TypeError('transact: fn must be synchronous (it returned a promise); nothing was stored');
      }
      const text = JSON.stringify(guard.getPersistedSnapshot());
      let result: CompareAndSetResult;
      try {
        result = await this.store.compareAndSet(sessionId, base.version, text, at);
      } catch (error) {
        throw storeError(error, 'compare-and-set', sessionId);
      }
      if (result.committed) {
        if (this.idleMs > 0 && !this.closed) {
          this.live.delete(sessionId);
          this.live.set(sessionId, { guard, text, version: result.version, lastUsed: at });
        }
        fireHooks(fired);
        return { value, version: result.version, changed: text !== base.text, attempts: attempt, at };
      }
      base = storedBase(result.current);
    }
    throw new SessionStoreError(
      'conflict',
      `session ${JSON.stringify(sessionId)}: other processes committed first ${this.maxRetries + 1} times in a row; no decision was made`,
    );
  }

  private async value<T>(sessionId: string, fn: (guard: SessionGuard) => T): Promise<T> {
    return (await this.transact(sessionId, fn)).value;
  }

  /** A session's gate: every method one `transact` (no I/O until one is called). */
  private handle(sessionId: string): SharedSessionGuard {
    const value = <T>(fn: (guard: SessionGuard) => T): Promise<T> => this.value(sessionId, fn);
    return {
      sessionId,
      check: (call) => value((guard) => guard.check(call)),
      record: (...args) => value((guard) => guard.record(...args)),
      finalAnswer: (text) => value((guard) => guard.finalAnswer(text)),
      completeVerification: () => value((guard) => guard.completeVerification()),
      reset: () => value((guard) => guard.reset()),
      resetKeepProgress: () => value((guard) => guard.resetKeepProgress()),
      getPersistedSnapshot: async () => {
        if (this.closed) throw closedError();
        const stored = await this.load(sessionId);
        return this.build(sessionId, stored?.snapshot).getPersistedSnapshot();
      },
    };
  }
}

/**
 * Creates a store of sessions shared by many processes (see
 * `SharedSessionStore`, and the module comment for the protocol).
 *
 * @example
 * import Redis from 'ioredis';
 * const sessions = createSharedSessionStore({ store: createRedisSnapshotStore(new Redis(url, { maxRetriesPerRequest: 1 })) });
 * const decision = await sessions.session(chatId).check({ id: call.id, name: call.name, args: call.args });
 * // a SessionStoreError (Redis down) rejects: do not run the call
 *
 * @throws TypeError on an unknown option, when `idleMs` or `maxRetries` is not a non-negative number (an integer
 *   for `maxRetries`), or on a bad guard option (`validateSessionGuardOptions`).
 */
export function createSharedSessionStore(options: SharedSessionStoreOptions = {}): SharedSessionStore {
  assertKnownKeys(options, ['store', 'idleMs', 'now', 'guard', 'maxRetries'], 'createSharedSessionStore');
  const store = options.store ?? createMemoryVersionedStore({ ...(options.now === undefined ? {} : { now: options.now }) });
  const idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
  if (typeof idleMs !== 'number' || Number.isNaN(idleMs) || idleMs < 0) {
    throw new TypeError(`createSharedSessionStore: idleMs must be a non-negative number of milliseconds, got ${String(idleMs)}`);
  }
  const maxRetries = options.maxRetries ?? 8;
  if (!Number.isSafeInteger(maxRetries) || maxRetries < 0) {
    throw new TypeError(`createSharedSessionStore: maxRetries must be a non-negative integer, got ${String(maxRetries)}`);
  }
  validateSessionGuardOptions(options.guard, 'createSharedSessionStore: guard', ['now', 'snapshot']);
  return new SharedSessions({ store, idleMs, maxRetries, now: options.now ?? Date.now, guard: options.guard ?? {} });
}
