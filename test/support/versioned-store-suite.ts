/**
 * The tests every `VersionedSnapshotStore` passes (src/store/shared-session-store.ts):
 * run against the memory, SQLite (test/store/shared-session-store.test.ts) and Redis
 * (test/store/redis-store.test.ts) stores, on the store alone and through
 * `createSharedSessionStore` with two session stores standing for two
 * processes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createSharedSessionStore, type SharedSessionStore, type VersionedSnapshotStore } from '../../src/store/shared-session-store.js';
import { SessionStoreError } from '../../src/errors/session-store-error.js';
import { SnapshotError } from '../../src/errors/snapshot-error.js';

/** Sessions of one test, in a namespace of their own (a table, a file, a key prefix). */
export interface Namespace {
  /** Another handle onto the same sessions, as another process would open (the memory store: the same one). */
  open(): VersionedSnapshotStore;
  /** The clock the stores judge expiry by, for the session stores (Redis: real time). */
  now: () => number;
  /** Lets `ms` pass for expiry (a fake clock moved, or real time waited). */
  advance(ms: number): Promise<void>;
  /** Stores a record whose version is not a version (only when the backend says `corruptsVersions`). */
  corruptVersion(sessionId: string): Promise<void>;
  /** Closes what the namespace opened and forgets its sessions. */
  dispose(): Promise<void>;
}

/** A store under test. */
export interface Backend {
  /** The time to live the suite uses, ms: short for real-time stores. */
  ttlMs: number;
  /** Whether a record with a bad version can be written (not in memory, where the store makes every version). */
  corruptsVersions: boolean;
  /** A new, empty namespace whose stores expire sessions after `ttlMs`. */
  namespace(ttlMs: number): Promise<Namespace>;
}

const READ = { name: 'get_order', kind: 'read' as const };
const WRITE = { name: 'cancel_order', kind: 'write' as const };
const S1 = '{"v":2,"state":"RESOLVING"}';
const S2 = '{"v":2,"state":"RESOLVING","checksCalls":true}';
const S3 = '{"v":2,"state":"RESOLVING","anonSeq":1,"checksCalls":true}';

/** Defines the suite for one store. */
export function describeVersionedStore(name: string, backend: Backend, skip = false): void {
  describe.skipIf(skip)(`${name}: the versioned store`, () => {
    let ns: Namespace;
    let store: VersionedSnapshotStore;
    const open = async (ttlMs = backend.ttlMs) => {
      ns = await backend.namespace(ttlMs);
      store = ns.open();
    };
    afterEach(async () => ns?.dispose());

    it('has no session before the first compare-and-set', async () => {
      await open();
      expect(await store.load('a')).toBeUndefined();
    });

    it('stores a new session at a positive integer version', async () => {
      await open();
      const result = await store.compareAndSet('a', null, S1, ns.now());
      expect(result.committed).toBe(true);
      const version = (result as { version: number }).version;
      expect(Number.isSafeInteger(version) && version > 0).toBe(true);
      expect(await store.load('a')).toEqual({ snapshot: S1, version });
    });

    it('stores a change at the expected version as the next version', async () => {
      await open();
      const first = (await store.compareAndSet('a', null, S1, ns.now())) as { version: number };
      expect(await store.compareAndSet('a', first.version, S2, ns.now())).toEqual({ committed: true, version: first.version + 1 });
      expect(await store.load('a')).toEqual({ snapshot: S2, version: first.version + 1 });
    });

    it('refuses a stale version and answers with the session as it is', async () => {
      await open();
      const first = (await store.compareAndSet('a', null, S1, ns.now())) as { version: number };
      await store.compareAndSet('a', first.version, S2, ns.now());
      expect(await store.compareAndSet('a', first.version, S3, ns.now())).toEqual({
        committed: false,
        current: { snapshot: S2, version: first.version + 1 },
      });
      expect(await store.load('a')).toEqual({ snapshot: S2, version: first.version + 1 });
    });

    it('refuses to create a session that exists', async () => {
      await open();
      const first = (await store.compareAndSet('a', null, S1, ns.now())) as { version: number };
      expect(await store.compareAndSet('a', null, S2, ns.now())).toEqual({
        committed: false,
        current: { snapshot: S1, version: first.version },
      });
    });

    it('refuses a version for a session that is absent', async () => {
      await open();
      expect(await store.compareAndSet('a', 7, S1, ns.now())).toEqual({ committed: false, current: undefined });
      expect(await store.load('a')).toBeUndefined();
    });

    it('keeps the version when the snapshot stored is the same', async () => {
      await open();
      const first = (await store.compareAndSet('a', null, S1, ns.now())) as { version: number };
      expect(await store.compareAndSet('a', first.version, S1, ns.now())).toEqual({ committed: true, version: first.version });
    });

    it('lets exactly one of many writers at one version commit', async () => {
      await open();
      const other = ns.open();
      const first = (await store.compareAndSet('a', null, S1, ns.now())) as { version: number };
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? store : other).compareAndSet('a', first.version, `{"writer":${i}}`, ns.now())),
      );
      expect(results.filter((r) => r.committed)).toHaveLength(1);
    });

    it('forgets a deleted session, and starts it again from another version', async () => {
      await open();
      const first = (await store.compareAndSet('a', null, S1, ns.now())) as { version: number };
      await store.delete('a');
      expect(await store.load('a')).toBeUndefined();
      const again = (await store.compareAndSet('a', null, S1, ns.now())) as { version: number };
      expect(again.version).not.toBe(first.version);
    });

    it('keeps sessions apart', async () => {
      await open();
      await store.compareAndSet('a', null, S1, ns.now());
      expect(await store.load('b')).toBeUndefined();
    });

    it('expires a session not stored for the time to live', async () => {
      await open();
      const first = (await store.compareAndSet('a', null, S1, ns.now())) as { version: number };
      await ns.advance(backend.ttlMs * 1.1 + 100);
      expect(await store.load('a')).toBeUndefined();
      expect(await store.compareAndSet('a', first.version, S2, ns.now())).toEqual({ committed: false, current: undefined });
    });

    it('counts the time to live from the latest compare-and-set, even one that changed nothing', async () => {
      await open();
      const first = (await store.compareAndSet('a', null, S1, ns.now())) as { version: number };
      await ns.advance(backend.ttlMs * 0.6);
      await store.compareAndSet('a', first.version, S1, ns.now());
      await ns.advance(backend.ttlMs * 0.6);
      expect(await store.load('a')).toEqual({ snapshot: S1, version: first.version });
    });

    it('rejects every call after close with a closed SessionStoreError', async () => {
      await open();
      const other = ns.open();
      await other.close();
      await expect(other.load('a')).rejects.toMatchObject({ name: 'SessionStoreError', code: 'closed' });
      await expect(other.compareAndSet('a', null, S1, ns.now())).rejects.toBeInstanceOf(SessionStoreError);
    });

    if (backend.corruptsVersions) {
      it('rejects a stored version that is not a positive integer with a SnapshotError', async () => {
        await open();
        await ns.corruptVersion('a');
        await expect(store.load('a')).rejects.toBeInstanceOf(SnapshotError);
      });
    }
  });

  describe.skipIf(skip)(`${name}: sessions shared by two processes`, () => {
    let ns: Namespace;
    /** Two session stores over one namespace: two processes. */
    let one: SharedSessionStore;
    let two: SharedSessionStore;
    const open = async () => {
      ns = await backend.namespace(backend.ttlMs);
      one = createSharedSessionStore({ store: ns.open(), now: ns.now });
      two = createSharedSessionStore({ store: ns.open(), now: ns.now });
    };
    afterEach(async () => {
      await one?.close();
      await two?.close();
      await ns?.dispose();
    });

    it('decides as one session: a read in one process establishes the target of a write in the other', async () => {
      await open();
      await one.session('chat').record(READ);
      expect((await two.session('chat').check({ id: 'w1', ...WRITE })).allowed).toBe(true);
    });

    it('refuses a second write before a verifying read, wherever the first one ran', async () => {
      await open();
      await one.session('chat').record(READ);
      await two.session('chat').check({ id: 'w1', ...WRITE });
      await two.session('chat').record({ id: 'w1', ...WRITE });
      const second = await one.session('chat').check({ id: 'w2', ...WRITE });
      expect(second.allowed ? null : second.error.rule).toBe('unverified-write');
    });

    it('applies a call again after losing the race, and returns the decision committed', async () => {
      await open();
      await one.session('chat').record(READ); // one keeps its live gate, in READING
      await two.session('chat').check({ id: 'w1', ...WRITE }); // the session moves on: a write in flight
      const committed = await one.transact('chat', (guard) => guard.check({ id: 'w2', ...WRITE }));
      expect([committed.attempts, committed.value.allowed]).toEqual([2, false]);
    });

    it('commits a call on a live gate still current in one attempt', async () => {
      await open();
      await one.session('chat').record(READ);
      const committed = await one.transact('chat', (guard) => guard.check({ id: 'r1', ...READ }));
      expect(committed.attempts).toBe(1);
    });

    it('judges a call on the stored session when the live gate is behind (an id recorded elsewhere)', async () => {
      await open();
      await one.session('chat').check({ id: 'r1', ...READ }); // one's live gate has r1 in flight
      await two.session('chat').record({ id: 'r1', ...READ });
      expect((await one.session('chat').check({ id: 'r1', ...READ })).allowed).toBe(true);
    });

    it('refuses a stored snapshot that does not validate with a SnapshotError naming the session, storing nothing', async () => {
      await open();
      const store = ns.open();
      const bad = JSON.stringify({ v: 2, state: 'READING', readAfterWrite: true, read: [READ.name, 0] });
      await store.compareAndSet('chat', null, bad, ns.now());
      const before = await store.load('chat');
      await expect(one.session('chat').check(READ)).rejects.toThrow(/^session "chat": snapshot: readAfterWrite: /);
      await expect(one.session('chat').check(READ)).rejects.toBeInstanceOf(SnapshotError);
      expect(await store.load('chat')).toEqual(before);
      await store.close();
    });

    it('starts an expired session again in RESOLVING', async () => {
      await open();
      await one.session('chat').record(READ);
      await ns.advance(backend.ttlMs * 1.1 + 100);
      expect((await two.session('chat').getPersistedSnapshot()).state).toBe('RESOLVING');
      expect((await one.session('chat').check({ id: 'w', ...WRITE })).allowed).toBe(false);
    });
  });
}
