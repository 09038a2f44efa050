/**
 * The session store (src/store/session-store.ts): sessions by id, created on first use,
 * evicted from memory after an idle time, saved on every decision, in memory
 * or in SQLite; and a process killed mid-session.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SNAPSHOT_VERSION } from '../../src/guard/snapshot.js';
import { SnapshotError } from '../../src/errors/snapshot-error.js';
import { createSessionStore, type SessionStore } from '../../src/store/session-store.js';
import { createSharedSessionStore } from '../../src/store/shared-session-store.js';
import { createMemoryStore, createSqliteStore, type SnapshotStore } from '../../src/store/snapshot-stores.js';

const T0 = 1_700_000_000_000;
const MINUTE = 60_000;
const READ = 'pulse_metrics';
const WRITE = 'pulse_control';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** better-sqlite3 is optional: without it the SQLite tests are skipped, saying so. */
const sqliteMissing = ((): string => {
  try {
    createRequire(import.meta.url)('better-sqlite3');
    return '';
  } catch {
    return ' (skipped: the optional dependency better-sqlite3 is not installed)';
  }
})();
const tmp = mkdtempSync(join(tmpdir(), 'pulse-safety-store-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A session store on a clock the test moves by hand. */
function storeAt(store: SnapshotStore = createMemoryStore(), idleMs = 10 * MINUTE) {
  const clock = { t: T0 };
  const sessions = createSessionStore({ store, idleMs, now: () => clock.t });
  return { sessions, clock, store };
}

/** A snapshot store that records its calls. */
function spyStore(): SnapshotStore & { saves: [string, string, number][] } {
  const inner = createMemoryStore();
  const saves: [string, string, number][] = [];
  return {
    ...inner,
    saves,
    save(id, snapshot, at) {
      saves.push([id, snapshot, at]);
      inner.save(id, snapshot, at);
    },
  };
}

describe('the guard options of a store', () => {
  it('are checked when the store is created, a misspelled one refused by name', () => {
    expect(() => createSessionStore({ guard: { strictFailedWrite: true } as never })).toThrow(
      /^createSessionStore: guard: options\.strictFailedWrite is not an option/,
    );
  });

  it('refuses an option of the store it does not know (guardOptions for guard), by name', () => {
    expect(() => createSessionStore({ guardOptions: { strictFailedWrites: true } } as never)).toThrow(
      /^createSessionStore: options\.guardOptions is not an option \(the options are store, idleMs, now, guard\)/,
    );
    expect(() => createSharedSessionStore({ guardOptions: {} } as never)).toThrow(
      /^createSharedSessionStore: options\.guardOptions is not an option/,
    );
  });

  it('may not set now or snapshot, which the store sets itself', () => {
    expect(() => createSessionStore({ guard: { now: () => 0 } as never })).toThrow(/options\.now is not an option/);
  });
});

describe('sessions by id', () => {
  it('creates a session on first use, in RESOLVING', () => {
    const { sessions } = storeAt();
    expect(sessions.session('chat-1').state).toBe('RESOLVING');
    expect(sessions.has('chat-1')).toBe(true);
  });

  it('keeps sessions apart: a target in one is no target in another', () => {
    const { sessions } = storeAt();
    sessions.session('a').record({ name: READ });
    expect(sessions.session('a').check({ name: WRITE }).allowed).toBe(true);
    expect(sessions.session('b').check({ name: WRITE }).allowed).toBe(false);
  });

  it('hands out handles that act on the same session', () => {
    const { sessions } = storeAt();
    sessions.session('a').record({ name: READ });
    expect(sessions.session('a').state).toBe('READING');
  });

  it('refuses an empty or non-string session id', () => {
    const { sessions } = storeAt();
    expect(() => sessions.session('')).toThrow(TypeError);
    expect(() => sessions.session(42 as never)).toThrow(TypeError);
  });

  it('forgets a deleted session, in memory and in the snapshot store', () => {
    const { sessions, store } = storeAt();
    sessions.session('a').record({ name: READ });
    sessions.delete('a');
    expect(sessions.has('a')).toBe(false);
    expect(store.load('a')).toBeUndefined();
    expect(sessions.session('a').state).toBe('RESOLVING');
  });
});

describe('saving on every decision', () => {
  it('saves the snapshot after a check, with the time of the decision', () => {
    const store = spyStore();
    const { sessions } = storeAt(store);
    sessions.session('a').check({ id: 'r', name: READ });
    expect(store.saves).toHaveLength(1);
    expect(store.saves[0]![0]).toBe('a');
    expect(JSON.parse(store.saves[0]![1])).toMatchObject({
      v: SNAPSHOT_VERSION,
      state: 'RESOLVING',
      inFlight: [['id:r', READ, 'read', T0, null]],
    });
    expect(store.saves[0]![2]).toBe(T0);
  });

  it('saves after record, final answer, completeVerification and both resets', () => {
    const store = spyStore();
    const { sessions } = storeAt(store);
    const guard = sessions.session('a');
    guard.record({ name: READ });
    guard.record({ name: WRITE });
    guard.finalAnswer();
    guard.resetKeepProgress();
    guard.reset();
    expect(store.saves.map(([, snapshot]) => JSON.parse(snapshot).state)).toEqual([
      'READING',
      'VERIFYING',
      'VERIFYING',
      'READING',
      'RESOLVING',
    ]);
  });

  it('saves a new session on its first decision, even one that changed nothing', () => {
    const store = spyStore();
    const { sessions } = storeAt(store);
    sessions.session('a').finalAnswer();
    expect(store.saves.map(([id, snapshot]) => [id, snapshot])).toEqual([['a', `{"v":${SNAPSHOT_VERSION},"state":"RESOLVING"}`]]);
  });

  it('does not save again a decision that changed nothing', () => {
    const store = spyStore();
    const { sessions } = storeAt(store);
    sessions.session('a').record({ name: READ });
    sessions.session('a').finalAnswer();
    expect(store.saves).toHaveLength(1);
  });

  it('does not save a call refused as malformed', () => {
    const store = spyStore();
    const { sessions } = storeAt(store);
    expect(() => sessions.session('a').check(null as never)).toThrow(TypeError);
    expect(store.saves).toEqual([]);
  });

  it('drops the live session when a save fails, so the next use resumes the last saved decision', () => {
    const inner = createMemoryStore();
    let failing = false;
    const store: SnapshotStore = {
      ...inner,
      save(id, snapshot, at) {
        if (failing) throw new Error('disk full');
        inner.save(id, snapshot, at);
      },
    };
    const { sessions } = storeAt(store);
    const guard = sessions.session('a');
    guard.record({ name: READ });
    failing = true;
    expect(() => guard.check({ id: 'w', name: WRITE })).toThrow('disk full');
    failing = false;
    expect(guard.state).toBe('READING');
    expect(guard.context.inFlight).toEqual([]);
  });
});

describe('eviction after an idle time', () => {
  it('evicts a session idle for longer than idleMs from memory', () => {
    const { sessions, clock } = storeAt();
    sessions.session('a');
    clock.t += 10 * MINUTE + 1;
    expect(sessions.sweep()).toBe(1);
    expect(sessions.has('a')).toBe(false);
  });

  it('keeps a session used within idleMs', () => {
    const { sessions, clock } = storeAt();
    sessions.session('a');
    clock.t += 10 * MINUTE;
    expect(sessions.sweep()).toBe(0);
    expect(sessions.size).toBe(1);
  });

  it('counts idle time from the latest use, not from creation', () => {
    const { sessions, clock } = storeAt();
    const guard = sessions.session('a');
    clock.t += 6 * MINUTE;
    guard.check({ name: READ });
    clock.t += 6 * MINUTE;
    expect(sessions.sweep()).toBe(0);
  });

  it('evicts idle sessions on every use, without a sweep', () => {
    const { sessions, clock } = storeAt();
    sessions.session('a');
    sessions.session('b');
    clock.t += 11 * MINUTE;
    sessions.session('c');
    expect([sessions.has('a'), sessions.has('b'), sessions.size]).toEqual([false, false, 1]);
  });

  it('resumes an evicted session exactly as it was', () => {
    const { sessions, clock } = storeAt();
    const guard = sessions.session('a');
    guard.check({ id: 'r', name: READ });
    guard.record({ id: 'r', name: READ });
    guard.check({ id: 'w', name: WRITE });
    guard.record({ id: 'w', name: WRITE });
    const before = guard.getPersistedSnapshot();
    clock.t += 11 * MINUTE;
    sessions.sweep();
    expect(sessions.session('a').getPersistedSnapshot()).toEqual(before);
    expect(sessions.session('a').check({ id: 'w2', name: WRITE }).allowed).toBe(false);
  });

  it('lets a handle held across an eviction go on with the same session', () => {
    const { sessions, clock } = storeAt();
    const guard = sessions.session('a');
    guard.record({ name: WRITE });
    clock.t += 11 * MINUTE;
    sessions.sweep();
    expect(guard.state).toBe('VERIFYING');
    expect(sessions.has('a')).toBe(true);
  });

  it('refuses a negative idle time', () => {
    expect(() => createSessionStore({ idleMs: -1 })).toThrow(TypeError);
  });
});

describe('a stored snapshot that does not validate', () => {
  it('is refused with a SnapshotError naming the session and the field', () => {
    const store = createMemoryStore();
    store.save('a', JSON.stringify({ v: 1, state: 'READING', readAfterWrite: true, read: [READ, T0] }), T0);
    const { sessions } = storeAt(store);
    expect(() => sessions.session('a')).toThrow(SnapshotError);
    expect(() => sessions.session('a')).toThrow(/^session "a": snapshot: readAfterWrite: /);
  });
});

describe('the memory snapshot store', () => {
  it('prunes sessions last saved before a time', () => {
    const store = createMemoryStore();
    store.save('old', '{}', T0);
    store.save('new', '{}', T0 + MINUTE);
    expect(store.prune(T0 + 1)).toBe(1);
    expect([store.load('old'), store.load('new')]).toEqual([undefined, '{}']);
  });

  it('refuses use after close', () => {
    const store = createMemoryStore();
    store.close();
    expect(() => store.load('a')).toThrow(/closed/);
  });
});

describe.skipIf(sqliteMissing !== '')(`the SQLite snapshot store${sqliteMissing}`, () => {
  it('keeps sessions across closing and reopening the database', () => {
    const file = join(tmp, 'reopen.db');
    const first = storeAt(createSqliteStore(file));
    const guard = first.sessions.session('chat-1');
    guard.record({ name: READ });
    guard.record({ name: WRITE });
    first.sessions.close();
    const second = storeAt(createSqliteStore(file));
    expect(second.sessions.session('chat-1').state).toBe('VERIFYING');
    second.sessions.close();
  });

  it('replaces a session’s row on each save rather than adding rows', () => {
    const store = createSqliteStore(':memory:');
    store.save('a', 'one', T0);
    store.save('a', 'two', T0 + 1);
    expect(store.load('a')).toBe('two');
    expect(store.prune(T0 + 2)).toBe(1);
    store.close();
  });

  it('prunes rows last saved before a time', () => {
    const store = createSqliteStore(':memory:');
    store.save('old', '{}', T0);
    store.save('new', '{}', T0 + MINUTE);
    expect(store.prune(T0 + 1)).toBe(1);
    expect(store.load('new')).toBe('{}');
    store.close();
  });

  it('uses the table it is given', () => {
    const file = join(tmp, 'table.db');
    const store = createSqliteStore(file, { table: 'gates' });
    store.save('a', '{}', T0);
    store.close();
    const other = createSqliteStore(file, { table: 'safety_sessions' });
    expect(other.load('a')).toBeUndefined();
    other.close();
  });

  it('refuses a table name that is not an identifier', () => {
    expect(() => createSqliteStore(':memory:', { table: 'x; DROP TABLE y' })).toThrow(TypeError);
  });
});

// ---------------------------------------------------------------------------
// A process killed mid-session, and the library without better-sqlite3.

/** One step of a scripted run: a guard method of a session, with its arguments. */
type Step = { session: string; method: 'check' | 'record' | 'finalAnswer' | 'reset'; args: unknown[] };

const SCRIPT: Step[] = [
  { session: 'chat-1', method: 'check', args: [{ id: 'c1', name: WRITE, args: { action: 'restart' } }] },
  { session: 'chat-1', method: 'check', args: [{ id: 'c2', name: 'pulse_query' }] },
  { session: 'chat-1', method: 'record', args: [{ id: 'c2', name: 'pulse_query' }] },
  { session: 'chat-2', method: 'check', args: [{ id: 'd1', name: READ }] },
  { session: 'chat-1', method: 'check', args: [{ id: 'c3', name: WRITE, args: { action: 'restart' } }] },
  { session: 'chat-2', method: 'record', args: [{ id: 'd1', name: READ }] },
  { session: 'chat-1', method: 'check', args: [{ id: 'c4', name: READ }] },
  { session: 'chat-1', method: 'record', args: [{ id: 'c3', name: WRITE }] },
  { session: 'chat-2', method: 'check', args: [{ id: 'd2', name: WRITE }] },
  { session: 'chat-1', method: 'record', args: [{ id: 'c4', name: READ }] },
  { session: 'chat-1', method: 'check', args: [{ id: 'c5', name: WRITE }] },
  { session: 'chat-1', method: 'finalAnswer', args: [] },
  // killed here, at the latest: chat-1 VERIFYING with a pending recovery, chat-2 with a write in flight
  { session: 'chat-1', method: 'check', args: [{ id: 'c6', name: WRITE }] },
  { session: 'chat-2', method: 'record', args: [{ id: 'd2', name: WRITE }, 'error'] },
  { session: 'chat-1', method: 'check', args: [{ id: 'c7', name: READ }] },
  { session: 'chat-1', method: 'record', args: [{ id: 'c7', name: READ }] },
  { session: 'chat-1', method: 'finalAnswer', args: [] },
  { session: 'chat-2', method: 'check', args: [{ id: 'd3', name: WRITE }] },
  { session: 'chat-1', method: 'check', args: [{ id: 'c8', name: WRITE }] },
  { session: 'chat-1', method: 'record', args: [{ id: 'c8', name: WRITE }] },
  { session: 'chat-1', method: 'finalAnswer', args: [] },
];

/** The code both the child and the test run a step with: the result as JSON text. */
const STEP_RUNNER = `
export function runStep(sessions, step) {
  const guard = sessions.session(step.session);
  return JSON.stringify(guard[step.method](...step.args)) ?? 'undefined';
}
`;

const CHILD = `
import { createSessionStore, createSqliteStore } from './src/store/session-store.js';
import { runStep } from './run-step.mjs';
const [file, stepsJson, t0] = process.argv.slice(2);
const steps = JSON.parse(stepsJson);
let index = 0;
const sessions = createSessionStore({ store: createSqliteStore(file), now: () => Number(t0) + index * 1000 });
for (; index < steps.length; index++) process.stdout.write(runStep(sessions, steps[index]) + '\\n');
process.stdout.write('ready\\n');
setInterval(() => {}, 60_000); // mid-session, database open, until killed
`;

/** Transpiles a module and the project modules it imports (relative paths) into `out`. */
function transpileTree(entry: string, out: string, done = new Set<string>()): void {
  if (done.has(entry)) return;
  done.add(entry);
  const target = join(out, relative(root, entry));
  mkdirSync(dirname(target), { recursive: true });
  if (entry.endsWith('.json')) {
    copyFileSync(entry, target);
    return;
  }
  const source = readFileSync(entry, 'utf8');
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    fileName: entry,
  });
  writeFileSync(target.replace(/\.ts$/, '.js'), outputText);
  for (const [, specifier] of source.matchAll(/(?:from|import)\s+'(\.{1,2}\/[^']+)'/g)) {
    const resolved = join(dirname(entry), specifier!);
    transpileTree(resolved.endsWith('.json') ? resolved : resolved.replace(/\.js$/, '.ts'), out, done);
  }
}

/** Runs `node` on a script; resolves with its stdout lines once `until` returns true, then SIGKILLs it. */
function runUntilKilled(args: string[], until: (lines: string[]) => boolean): Promise<{ lines: string[]; signal: string | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: string[] = [];
    let buffered = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      const parts = buffered.split('\n');
      buffered = parts.pop()!;
      lines.push(...parts);
      if (until(lines)) child.kill('SIGKILL');
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve({ lines, signal });
      else reject(new Error(`the child exited with ${code} before it was killed:\n${stderr}`));
    });
  });
}

/** The library transpiled under the temp dir (node_modules linked), for child processes; built once. */
const build = join(tmp, 'build');
let built = false;
function buildForChildren(): void {
  if (built) return;
  transpileTree(join(root, 'src/index.ts'), build);
  symlinkSync(join(root, 'node_modules'), join(build, 'node_modules'), 'dir');
  writeFileSync(join(build, 'run-step.mjs'), STEP_RUNNER);
  writeFileSync(join(build, 'child.mjs'), CHILD);
  built = true;
}

describe.skipIf(sqliteMissing !== '')(`a process killed mid-session${sqliteMissing}`, () => {
  beforeAll(buildForChildren);

  /** The whole script run without interruption, in memory: results and snapshots after each step. */
  async function uninterrupted(): Promise<{ results: string[]; snapshots: Record<string, unknown>[] }> {
    const { runStep } = (await import(pathToFileURL(join(build, 'run-step.mjs')).href)) as {
      runStep: (sessions: SessionStore, step: Step) => string;
    };
    let index = 0;
    const sessions = createSessionStore({ now: () => T0 + index * 1000 });
    const results: string[] = [];
    const snapshots: Record<string, unknown>[] = [];
    for (; index < SCRIPT.length; index++) {
      results.push(runStep(sessions, SCRIPT[index]!));
      snapshots.push({
        'chat-1': sessions.session('chat-1').getPersistedSnapshot(),
        'chat-2': sessions.session('chat-2').getPersistedSnapshot(),
      });
    }
    return { results, snapshots };
  }

  it.each([5, 9, 12])('decides exactly as an uninterrupted run after a SIGKILL following step %i', async (killAfter) => {
    const file = join(tmp, `killed-${killAfter}.db`);
    const child = await runUntilKilled([join(build, 'child.mjs'), file, JSON.stringify(SCRIPT.slice(0, killAfter)), String(T0)], (lines) =>
      lines.includes('ready'),
    );
    expect(child.signal).toBe('SIGKILL');
    const { runStep } = (await import(pathToFileURL(join(build, 'run-step.mjs')).href)) as {
      runStep: (sessions: SessionStore, step: Step) => string;
    };
    const reference = await uninterrupted();

    let index = killAfter;
    const reopened = createSessionStore({ store: createSqliteStore(file), now: () => T0 + index * 1000 });
    expect({
      'chat-1': reopened.session('chat-1').getPersistedSnapshot(),
      'chat-2': reopened.session('chat-2').getPersistedSnapshot(),
    }).toEqual(reference.snapshots[killAfter - 1]);
    const after: string[] = [];
    for (; index < SCRIPT.length; index++) after.push(runStep(reopened, SCRIPT[index]!));
    reopened.close();

    expect([...child.lines.slice(0, killAfter), ...after]).toEqual(reference.results);
  });
});

describe('the library without better-sqlite3', () => {
  beforeAll(buildForChildren);

  it('works, and only createSqliteStore says it needs the optional dependency', () => {
    const blocker = join(build, 'no-sqlite.cjs');
    writeFileSync(
      blocker,
      `const Module = require('node:module');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === 'better-sqlite3') throw Object.assign(new Error("Cannot find module 'better-sqlite3'"), { code: 'MODULE_NOT_FOUND' });
  return resolve.call(this, request, ...rest);
};`,
    );
    const script = join(build, 'without-sqlite.mjs');
    writeFileSync(
      script,
      `import { createSessionStore, createSqliteStore } from './src/index.js';
const guard = createSessionStore().session('a');
guard.record({ name: 'pulse_metrics' });
process.stdout.write(guard.state + '\\n');
try { createSqliteStore(':memory:'); } catch (error) { process.stdout.write(error.message + '\\n'); }`,
    );
    const result = spawnSync(process.execPath, ['--require', blocker, script], { encoding: 'utf8' });
    expect(result.stderr).toBe('');
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe('READING');
    expect(lines[1]).toMatch(/^createSqliteStore needs the optional dependency better-sqlite3/);
  });
});

describe('a stored session records like a guard', () => {
  it('passes the result on: a self-verifying write verifies itself through the store', () => {
    const sessions = createSessionStore({ now: () => 1_700_000_000_000 });
    const guard = sessions.session('s');
    guard.check({ id: 'r', name: 'pulse_query' });
    guard.record({ id: 'r', name: 'pulse_query' });
    guard.check({ id: 'w', name: 'pulse_control' });
    guard.record({ id: 'w', name: 'pulse_control' }, 'success', { result: '{"verification": {"ok": true}}' });
    expect(guard.finalAnswer().allowed).toBe(true);
  });
});
