/**
 * Sessions shared by many processes (src/store/shared-session-store.ts): the versioned
 * store suite on the memory and SQLite stores, and the shared session
 * store's own behaviour (retries, telemetry once per commit, failing closed,
 * one queue per session in a process), on the memory store.
 */
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSessionGuard, type ToolCall } from '../../src/guard/session-guard.js';
import { createSharedSessionStore, type SharedSessionStoreOptions } from '../../src/store/shared-session-store.js';
import {
  createMemoryVersionedStore,
  createSqliteVersionedStore,
  firstSnapshotVersion,
  readStoredVersion,
  type VersionedSnapshotStore,
} from '../../src/store/versioned-stores.js';
import type { GateDecidedEvent } from '../../machines/safety.types.js';
import { describeVersionedStore } from '../support/versioned-store-suite.js';
import { SessionStoreError } from '../../src/errors/session-store-error.js';

const T0 = 1_700_000_000_000;
const MINUTE = 60_000;
const READ: ToolCall = { name: 'get_order', kind: 'read' };
const WRITE: ToolCall = { name: 'cancel_order', kind: 'write' };

const sqliteMissing = ((): string => {
  try {
    createRequire(import.meta.url)('better-sqlite3');
    return '';
  } catch {
    return ' (skipped: the optional dependency better-sqlite3 is not installed)';
  }
})();
/** better-sqlite3 itself, for writing what the store never would. */
function database(file: string): BetterSqlite3.Database {
  // The test opens the store's file itself, with better-sqlite3's own types (a dev dependency here).
  const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
  return new Database(file);
}
const tmp = mkdtempSync(join(tmpdir(), 'pulse-safety-shared-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A clock the test moves by hand. */
function fakeClock(): { now: () => number; advance: (ms: number) => Promise<void> } {
  let t = T0;
  return { now: () => t, advance: async (ms) => void (t += ms) };
}

describeVersionedStore('memory', {
  ttlMs: 10 * MINUTE,
  corruptsVersions: false,
  async namespace(ttlMs) {
    const clock = fakeClock();
    const store = createMemoryVersionedStore({ ttlMs, now: clock.now });
    return {
      open: () => store,
      ...clock,
      corruptVersion: () => Promise.reject(new Error('not in memory')),
      dispose: () => store.close(),
    };
  },
});

let files = 0;
describeVersionedStore(
  `SQLite${sqliteMissing}`,
  {
    ttlMs: 10 * MINUTE,
    corruptsVersions: true,
    async namespace(ttlMs) {
      const clock = fakeClock();
      const file = join(tmp, `suite-${(files += 1)}.db`);
      const opened: VersionedSnapshotStore[] = [];
      return {
        open() {
          const store = createSqliteVersionedStore(file, { ttlMs, now: clock.now, synchronous: 'NORMAL' });
          opened.push(store);
          return store;
        },
        ...clock,
        async corruptVersion(sessionId) {
          const db = database(file);
          db.prepare('INSERT INTO safety_shared_sessions (id, snapshot, version, updated_at) VALUES (?, ?, ?, ?)').run(
            sessionId,
            '{"v":2,"state":"RESOLVING"}',
            'seven',
            clock.now(),
          );
          db.close();
        },
        async dispose() {
          for (const store of opened) await store.close();
        },
      };
    },
  },
  sqliteMissing !== '',
);

// ---------------------------------------------------------------------------
// The shared session store, on the memory store

function shared(options: SharedSessionStoreOptions = {}) {
  const clock = fakeClock();
  const store = options.store ?? createMemoryVersionedStore({ now: clock.now });
  return { sessions: createSharedSessionStore({ now: clock.now, ...options, store }), store, clock };
}

/** A store whose compare-and-set another process always wins: it changes the session first. */
function alwaysLosing(): VersionedSnapshotStore {
  const inner = createMemoryVersionedStore({ now: () => T0 });
  let n = 0;
  return {
    ...inner,
    async compareAndSet(id, _expected, _snapshot, at) {
      const current = await inner.load(id);
      n += 1;
      await inner.compareAndSet(id, current?.version ?? null, `{"v":2,"state":"RESOLVING","anonSeq":${n},"checksCalls":true}`, at);
      return { committed: false, current: await inner.load(id) };
    },
  };
}

/** A store that fails while `down` is set, as an unreachable database would. */
function flaky(): VersionedSnapshotStore & { down: boolean } {
  const inner = createMemoryVersionedStore({ now: () => T0 });
  const store = {
    down: false,
    load: (id: string) => (store.down ? Promise.reject(new Error('connect ECONNREFUSED')) : inner.load(id)),
    compareAndSet: (id: string, expected: number | null, snapshot: string, at: number) =>
      store.down ? Promise.reject(new Error('connect ECONNREFUSED')) : inner.compareAndSet(id, expected, snapshot, at),
    delete: (id: string) => inner.delete(id),
    close: () => inner.close(),
  };
  return store;
}

describe('the shared session store: decisions', () => {
  it('decides as a session guard, call for call', async () => {
    const { sessions } = shared();
    const reference = createSessionGuard({ now: () => T0 });
    const guard = sessions.session('chat');
    const calls: [string, () => unknown, () => Promise<unknown>][] = [
      ['check w', () => reference.check({ id: 'w', ...WRITE }), () => guard.check({ id: 'w', ...WRITE })],
      ['record r', () => reference.record({ id: 'r', ...READ }), () => guard.record({ id: 'r', ...READ })],
      ['check w2', () => reference.check({ id: 'w2', ...WRITE }), () => guard.check({ id: 'w2', ...WRITE })],
      ['record w2', () => reference.record({ id: 'w2', ...WRITE }), () => guard.record({ id: 'w2', ...WRITE })],
      ['answer', () => reference.finalAnswer(), () => guard.finalAnswer()],
      ['check w3', () => reference.check({ id: 'w3', ...WRITE }), () => guard.check({ id: 'w3', ...WRITE })],
      ['keep progress', () => reference.resetKeepProgress(), () => guard.resetKeepProgress()],
      ['complete', () => reference.completeVerification(), () => guard.completeVerification()],
      ['reset', () => reference.reset(), () => guard.reset()],
    ];
    const expected: [string, string][] = [];
    const got: [string, string][] = [];
    for (const [name, sync, async] of calls) {
      expected.push([name, JSON.stringify(sync())]);
      got.push([name, JSON.stringify(await async())]);
    }
    expect(got).toEqual(expected);
    expect(await guard.getPersistedSnapshot()).toEqual(reference.getPersistedSnapshot());
  });

  it('stores each decision before it answers', async () => {
    const { sessions, store } = shared();
    await sessions.session('chat').record(READ);
    expect(JSON.parse((await store.load('chat'))!.snapshot)).toMatchObject({ state: 'READING' });
  });

  it('gives a fresh session’s snapshot for a session never stored, and stores nothing', async () => {
    const { sessions, store } = shared();
    expect(await sessions.session('new').getPersistedSnapshot()).toEqual({ v: 3, state: 'RESOLVING' });
    expect(await store.load('new')).toBeUndefined();
  });

  it('reports the version, whether the snapshot changed, the attempts and the time of a commit', async () => {
    const { sessions } = shared();
    const first = await sessions.transact('chat', (guard) => guard.record(READ));
    const same = await sessions.transact('chat', (guard) => guard.finalAnswer());
    expect(first).toMatchObject({ changed: true, attempts: 1, at: T0 });
    expect(same).toMatchObject({ version: first.version, changed: false, attempts: 1 });
  });

  it('gives every event of a call the time the clock gave its attempt', async () => {
    const { sessions, clock } = shared();
    await clock.advance(5000);
    await sessions.session('chat').record(READ);
    expect((await sessions.session('chat').getPersistedSnapshot()).read).toEqual([READ.name, T0 + 5000]);
  });

  it('queues one process’s calls on a session, so they never race each other', async () => {
    const { sessions } = shared();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => sessions.transact('chat', (guard) => guard.check({ id: `r${i}`, ...READ }))),
    );
    expect(results.map((r) => r.attempts)).toEqual(Array(10).fill(1));
    expect(new Set(results.map((r) => r.version)).size).toBe(10);
  });

  it('keeps sessions apart', async () => {
    const { sessions } = shared();
    await sessions.session('a').record(READ);
    expect((await sessions.session('b').check(WRITE)).allowed).toBe(false);
  });

  it('forgets a deleted session, here and in the store', async () => {
    const { sessions, store } = shared();
    await sessions.session('a').record(READ);
    await sessions.delete('a');
    expect([sessions.has('a'), await store.load('a')]).toEqual([false, undefined]);
  });
});

describe('the shared session store: races and failures', () => {
  it('gives up with a conflict SessionStoreError after maxRetries lost races, with no decision', async () => {
    const decisions: GateDecidedEvent[] = [];
    const { sessions } = shared({ store: alwaysLosing(), maxRetries: 3, guard: { onDecision: (d) => decisions.push(d) } });
    const attempt = sessions.session('chat').check(READ);
    await expect(attempt).rejects.toMatchObject({ name: 'SessionStoreError', code: 'conflict' });
    await expect(attempt).rejects.toThrow(/committed first 4 times/);
    expect(decisions).toEqual([]);
  });

  it('calls the telemetry hooks once per committed decision, not per attempt', async () => {
    const clock = fakeClock();
    const store = createMemoryVersionedStore({ now: clock.now });
    const decisions: GateDecidedEvent[] = [];
    const one = createSharedSessionStore({ store, now: clock.now, guard: { onDecision: (d) => decisions.push(d) } });
    const two = createSharedSessionStore({ store, now: clock.now });
    await one.session('chat').record(READ);
    await two.session('chat').check({ id: 'w1', ...WRITE });
    const committed = await one.transact('chat', (guard) => guard.check({ id: 'w2', ...WRITE }));
    expect(committed.attempts).toBe(2);
    expect(decisions.map((d) => [d.tool, d.allowed])).toEqual([[WRITE.name, false]]);
  });

  it('ignores an async hook that rejects, as a plain guard does, instead of leaving the rejection unhandled', async () => {
    const unhandled: unknown[] = [];
    const listener = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', listener);
    try {
      const { sessions } = shared({
        guard: {
          onDecision: async () => {
            throw new Error('hook failed');
          },
          onRecovery: async () => {
            throw new Error('hook failed');
          },
        },
      });
      const gate = sessions.session('chat');
      expect((await gate.check({ id: 'w', ...WRITE })).allowed).toBe(false);
      await gate.check({ id: 'r', ...READ });
      await gate.record({ id: 'r', ...READ });
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', listener);
    }
  });

  it('rejects with an unavailable SessionStoreError, and no decision, when the store cannot be reached', async () => {
    const store = flaky();
    const decisions: GateDecidedEvent[] = [];
    const { sessions } = shared({ store, guard: { onDecision: (d) => decisions.push(d) } });
    await sessions.session('chat').record(READ);
    store.down = true;
    const attempt = sessions.session('chat').check(WRITE);
    await expect(attempt).rejects.toMatchObject({ name: 'SessionStoreError', code: 'unavailable' });
    await expect(attempt).rejects.toThrow(/compare-and-set of session "chat": connect ECONNREFUSED/);
    expect(decisions).toEqual([]);
  });

  it('goes on from the last stored decision once the store is back', async () => {
    const store = flaky();
    const { sessions } = shared({ store });
    await sessions.session('chat').record(READ);
    store.down = true;
    await expect(sessions.session('chat').check({ id: 'w', ...WRITE })).rejects.toBeInstanceOf(SessionStoreError);
    store.down = false;
    expect(sessions.has('chat')).toBe(false);
    expect((await sessions.session('chat').getPersistedSnapshot()).inFlight).toBeUndefined();
  });

  it('stores nothing for a malformed call, which rejects with the guard’s TypeError', async () => {
    const { sessions, store } = shared();
    await expect(sessions.session('chat').check(null as never)).rejects.toThrow(TypeError);
    expect(await store.load('chat')).toBeUndefined();
  });

  it('refuses a function that returns a promise, storing nothing', async () => {
    const { sessions, store } = shared();
    await expect(sessions.transact('chat', async (guard) => guard.check(READ))).rejects.toThrow(/must be synchronous/);
    expect(await store.load('chat')).toBeUndefined();
  });

  it('rejects calls after close with a closed SessionStoreError', async () => {
    const { sessions } = shared();
    await sessions.close();
    await expect(sessions.session('chat').check(READ)).rejects.toMatchObject({ code: 'closed' });
  });

  it('lets the calls made before close end as they would have', async () => {
    const { sessions } = shared();
    const under = sessions.session('chat').record(READ);
    await sessions.close();
    await expect(under).resolves.toEqual({});
  });
});

describe('the shared session store: live gates', () => {
  it('keeps a session’s live gate after a commit', async () => {
    const { sessions } = shared();
    await sessions.session('a').record(READ);
    expect([sessions.has('a'), sessions.size]).toEqual([true, 1]);
  });

  it('keeps none with idleMs 0', async () => {
    const { sessions } = shared({ idleMs: 0 });
    await sessions.session('a').record(READ);
    expect(sessions.size).toBe(0);
  });

  it('drops a live gate idle for longer than idleMs', async () => {
    const { sessions, clock } = shared({ idleMs: MINUTE });
    await sessions.session('a').record(READ);
    await clock.advance(MINUTE + 1);
    expect(sessions.sweep()).toBe(1);
  });

  it('loads the stored session after dropping an idle gate, one attempt', async () => {
    const { sessions, clock } = shared({ idleMs: MINUTE });
    await sessions.session('a').record(READ);
    await clock.advance(MINUTE + 1);
    const committed = await sessions.transact('a', (guard) => guard.check(WRITE));
    expect([committed.attempts, committed.value.allowed]).toEqual([1, true]);
  });
});

describe('the shared session store: bad input', () => {
  it('refuses an empty or non-string session id', async () => {
    const { sessions } = shared();
    expect(() => sessions.session('')).toThrow(TypeError);
    await expect(sessions.transact(42 as never, () => 0)).rejects.toThrow(TypeError);
  });

  it('refuses a negative idle time and a fractional retry count', () => {
    expect(() => createSharedSessionStore({ idleMs: -1 })).toThrow(TypeError);
    expect(() => createSharedSessionStore({ maxRetries: 1.5 })).toThrow(TypeError);
  });

  it('refuses a time to live that is not positive', () => {
    expect(() => createMemoryVersionedStore({ ttlMs: 0 })).toThrow(TypeError);
  });
});

describe('versions', () => {
  it('starts new sessions at random safe integers below 2^47', () => {
    const versions = Array.from({ length: 100 }, firstSnapshotVersion);
    expect(versions.every((v) => Number.isSafeInteger(v) && v >= 1 && v < 2 ** 47)).toBe(true);
    expect(new Set(versions).size).toBe(100);
  });

  it('reads a stored version as decimal text without leading zeros', () => {
    expect(readStoredVersion('12')).toBe(12);
    expect(() => readStoredVersion('012')).toThrow(/stored version/);
    expect(() => readStoredVersion('1e3')).toThrow(/stored version/);
  });
});

describe.skipIf(sqliteMissing !== '')(`the SQLite versioned store${sqliteMissing}`, () => {
  it('prunes expired sessions', async () => {
    const clock = fakeClock();
    const store = createSqliteVersionedStore(join(tmp, 'prune.db'), { ttlMs: MINUTE, now: clock.now });
    await store.compareAndSet('old', null, '{}', clock.now());
    await clock.advance(MINUTE);
    await store.compareAndSet('new', null, '{}', clock.now());
    expect(await store.prune()).toBe(1);
    await store.close();
  });

  it('refuses a table name that is not an identifier', () => {
    expect(() => createSqliteVersionedStore(':memory:', { table: 'x; DROP TABLE y' })).toThrow(TypeError);
  });

  it('rejects with an unavailable SessionStoreError when another process holds the write lock too long', async () => {
    const file = join(tmp, 'locked.db');
    const store = createSqliteVersionedStore(file, { busyTimeoutMs: 0 });
    const holder = database(file);
    holder.exec('BEGIN IMMEDIATE');
    await expect(store.compareAndSet('a', null, '{}', T0)).rejects.toMatchObject({ name: 'SessionStoreError', code: 'unavailable' });
    holder.exec('ROLLBACK');
    holder.close();
    await store.close();
  });
});
