/**
 * `pulse-safety serve --hooks` (src/visualizer/hook-watcher.ts,
 * hook-sessions.ts): coding agents' hook sessions, written to a real state
 * directory through the hook session store (`updateHookSession`), shown by
 * a real server as live sessions over its `/live` WebSocket and its HTTP
 * API: added, changed, removed, unreadable; watched with `fs.watch` and
 * polled where it is not.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { registerServeCommand } from '../../src/cli/commands/serve.js';
import { createSessionGuard, type SessionGuard } from '../../src/guard/session-guard.js';
import {
  readHookSessions,
  sessionFilePath,
  updateHookSession,
  type HookDecisionRecord,
  type HookSessionRecord,
} from '../../src/hooks/session-file.js';
import type { HookHost } from '../../src/hooks/types.js';
import { DropLog, MAX_HOOK_SESSIONS } from '../../src/visualizer/bounds.js';
import { hookSessionDetail } from '../../src/visualizer/hook-sessions.js';
import { HookSessionWatcher } from '../../src/visualizer/hook-watcher.js';
import type { LiveMessage, LiveSessionDetail, LiveSessionSummary } from '../../src/visualizer/protocol.js';
import { startVisualizer, type VisualizerServer } from '../../src/visualizer/server.js';

const T0 = 1_800_000_000_000;
const directories: string[] = [];

/** A fresh state directory, removed after the test file. */
function stateDirectory(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pulse-hooks-serve-'));
  directories.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of directories) rmSync(dir, { recursive: true, force: true });
});

/** A hook session as the gate keeps it: the guard's snapshot and the decisions so far. */
interface Session {
  host: HookHost;
  sessionId: string;
  cwd: string;
  guard: SessionGuard;
  decisions: HookDecisionRecord[];
  clock: number;
}

function newSession(sessionId: string, host: HookHost = 'claude-code'): Session {
  const session: Session = { host, sessionId, cwd: '/home/dev/project', guard: undefined as never, decisions: [], clock: T0 };
  session.guard = createSessionGuard({ now: () => session.clock });
  return session;
}

/** Writes the session through the store, as the hook does after each event. */
async function save(dir: string, session: Session): Promise<void> {
  await updateHookSession(dir, session.host, session.sessionId, (current) => {
    const next: HookSessionRecord = {
      version: 1,
      host: session.host,
      sessionId: session.sessionId,
      cwd: session.cwd,
      createdAt: current?.createdAt ?? session.clock,
      updatedAt: session.clock,
      snapshot: session.guard.getPersistedSnapshot(),
      calls: {},
      decisions: [...session.decisions],
      stopBlocks: session.decisions.filter((d) => d.answer === 'block-stop').length,
    };
    return { next, value: undefined };
  });
}

/** A call checked and recorded by the guard, logged as the hook logs it. */
function call(session: Session, id: string, name: string, kind: 'read' | 'write', target: string): void {
  session.clock += 1000;
  const decision = session.guard.check({ id, name, kind, targets: [target] });
  session.decisions.push({
    at: session.clock,
    event: 'PreToolUse',
    tool: name,
    answer: decision.allowed ? 'allow' : 'deny',
    ...(decision.allowed ? {} : { code: 'FSM_BLOCKED', rule: decision.error.rule, reason: decision.error.message }),
  });
  if (!decision.allowed) return;
  session.clock += 1000;
  session.guard.record({ id, name, kind }, 'success');
  session.decisions.push({ at: session.clock, event: 'PostToolUse', tool: name, answer: 'continue' });
}

/** The agent asks to stop, as the Stop hook decides it. */
function stop(session: Session): void {
  session.clock += 1000;
  const answer = session.guard.finalAnswer();
  session.decisions.push({
    at: session.clock,
    event: 'Stop',
    answer: answer.allowed ? 'continue' : 'block-stop',
    ...(answer.allowed ? {} : { code: 'FSM_BLOCKED', reason: answer.error.message }),
  });
}

/** A page's `/live` connection: every message it was sent, and a wait for the session list or a session to say something. */
class LivePage {
  readonly messages: LiveMessage[] = [];
  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data: Buffer) => this.messages.push(JSON.parse(data.toString()) as LiveMessage));
  }

  static async open(server: VisualizerServer): Promise<LivePage> {
    const socket = new WebSocket(`ws://127.0.0.1:${server.port}/live`, { origin: `http://127.0.0.1:${server.port}` });
    const page = new LivePage(socket);
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    return page;
  }

  /** The latest session list. */
  list(): LiveSessionSummary[] {
    const lists = this.messages.filter((m): m is Extract<LiveMessage, { type: 'sessions' }> => m.type === 'sessions');
    return lists.at(-1)?.sessions ?? [];
  }

  /** The latest detail of a session. */
  detail(sessionId: string): LiveSessionDetail | undefined {
    return this.messages
      .filter((m): m is Extract<LiveMessage, { type: 'session' }> => m.type === 'session' && m.session.sessionId === sessionId)
      .at(-1)?.session;
  }

  /** Waits until the latest list satisfies `check`. */
  async untilList(check: (list: LiveSessionSummary[]) => boolean): Promise<LiveSessionSummary[]> {
    await vi.waitFor(() => expect(check(this.list())).toBe(true), { timeout: 15_000, interval: 20 });
    return this.list();
  }

  /** Waits until the latest detail of `sessionId` satisfies `check`. */
  async untilDetail(sessionId: string, check: (detail: LiveSessionDetail) => boolean): Promise<LiveSessionDetail> {
    await vi.waitFor(
      () => {
        const detail = this.detail(sessionId);
        expect(detail !== undefined && check(detail)).toBe(true);
      },
      { timeout: 15_000, interval: 20 },
    );
    return this.detail(sessionId)!;
  }

  close(): void {
    this.socket.close();
  }
}

const running: { server?: VisualizerServer; page?: LivePage }[] = [];
afterEach(async () => {
  for (const { server, page } of running.splice(0)) {
    page?.close();
    await server?.close();
  }
});

/** A server showing the hook sessions of `dir`, and a page connected to it. */
async function serve(dir: string, options: { poll?: boolean; pollIntervalMs?: number } = {}) {
  const log: string[] = [];
  // Unless a test polls, the poll is slower than any wait here: what the page sees, the watch saw.
  const hooks = { directory: dir, pollIntervalMs: 600_000, ...options };
  const server = await startVisualizer({ port: 0, hooks, log: (line) => log.push(line) });
  const page = await LivePage.open(server);
  running.push({ server, page });
  return { server, page, log };
}

async function getJson<T>(server: VisualizerServer, path: string): Promise<{ status: number; body: T }> {
  const response = await fetch(new URL(path, server.url));
  return { status: response.status, body: (await response.json()) as T };
}

/** The live session id of a session's file. */
function liveId(dir: string, session: Session): string {
  return `hook:${sessionFilePath(dir, session.host, session.sessionId).slice(dir.length + 1)}`;
}

describe('pulse-safety serve --hooks', () => {
  it('shows a session file written through the store as a live session, in the state its guard is in', async () => {
    const dir = stateDirectory();
    const session = newSession('4f1c-claude');
    call(session, 'toolu_1', 'Read', 'read', '/home/dev/project/a.txt');
    await save(dir, session);
    const { server, page } = await serve(dir);
    const id = liveId(dir, session);

    const [listed] = await page.untilList((list) => list.some((s) => s.sessionId === id));
    expect(listed).toMatchObject({
      sessionId: id,
      name: 'claude-code',
      label: 'claude-code hook · 4f1c-claude · /home/dev/project',
      machineId: 'safety',
      state: 'READING',
      events: 2,
      hook: { host: 'claude-code', hostSessionId: '4f1c-claude', cwd: '/home/dev/project', calls: [], stopBlocks: 0, unreadable: null },
    });
    const detail = await page.untilDetail(id, () => true);
    expect(detail.view).toMatchObject({ machineId: 'safety', state: 'READING', context: { lastReadTool: 'Read' } });
    expect(detail.view!.activeStateIds).toContain('safety.READING');
    expect(detail.log.map((e) => e.label)).toEqual(['PreToolUse Read → allow', 'PostToolUse Read → continue']);
    expect(detail.log[0]!.decision).toMatchObject({ subject: 'tool', allowed: true });
    expect(detail.log[1]!.decision).toBeNull();

    // The HTTP API says the same.
    const { status, body } = await getJson<LiveSessionDetail>(server, `/api/live/${encodeURIComponent(id)}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ sessionId: id, state: 'READING', view: { state: 'READING' } });
    expect((await getJson<{ hooksDirectory: string }>(server, '/api/info')).body.hooksDirectory).toBe(dir);
    expect(server.stats()).toMatchObject({ hookSessions: 1, hooksWatched: true });
  });

  it('follows the file as the hooks replace it, and removes the session when the file goes', async () => {
    const dir = stateDirectory();
    const { server, page } = await serve(dir);
    const session = newSession('s-follow');
    const id = liveId(dir, session);
    await save(dir, session);
    expect((await page.untilDetail(id, (d) => d.view?.state === 'RESOLVING')).log).toEqual([]);

    call(session, 'toolu_1', 'Read', 'read', '/home/dev/project/a.txt');
    await save(dir, session);
    await page.untilDetail(id, (d) => d.view?.state === 'READING');

    call(session, 'toolu_2', 'Edit', 'write', '/home/dev/project/a.txt');
    stop(session);
    call(session, 'toolu_3', 'Edit', 'write', '/home/dev/project/a.txt');
    await save(dir, session);
    const verifying = await page.untilDetail(id, (d) => d.view?.state === 'VERIFYING');
    expect(verifying.view!.activeStateIds).toContain('safety.VERIFYING');
    expect(verifying.view!.context).toMatchObject({ lastWriteTool: 'Edit', finalAnswerBlocks: 1 });
    expect(verifying.hook).toMatchObject({ stopBlocks: 1 });
    const refusedStop = verifying.log.find((e) => e.label === 'Stop → block-stop')!;
    expect(refusedStop.decision).toMatchObject({ subject: 'answer', allowed: false, code: 'FSM_BLOCKED' });
    const refusedWrite = verifying.log.at(-1)!;
    expect(refusedWrite.label).toBe('PreToolUse Edit → deny');
    expect(refusedWrite.decision).toMatchObject({ subject: 'tool', allowed: false, code: 'FSM_BLOCKED' });
    expect(refusedWrite.decision!.reason).toMatch(/\w/);

    call(session, 'toolu_4', 'Read', 'read', '/home/dev/project/a.txt');
    stop(session);
    await save(dir, session);
    const verified = await page.untilDetail(id, (d) => d.view?.state === 'READING');
    expect(verified.log.at(-1)).toMatchObject({ label: 'Stop → continue', decision: { subject: 'answer', allowed: true } });

    // SessionEnd: the store removes the file.
    await updateHookSession(dir, session.host, session.sessionId, () => ({ next: null, value: undefined }));
    await page.untilList((list) => !list.some((s) => s.sessionId === id));
    expect((await getJson(server, `/api/live/${encodeURIComponent(id)}`)).status).toBe(404);
    expect(server.stats().hookSessions).toBe(0);
  });

  it('shows a corrupt file as unreadable with its code, still naming its session, and recovers when it is good again', async () => {
    const dir = stateDirectory();
    const session = newSession('s-corrupt');
    call(session, 'toolu_1', 'Read', 'read', '/home/dev/project/a.txt');
    await save(dir, session);
    const { server, page } = await serve(dir);
    const id = liveId(dir, session);
    await page.untilDetail(id, (d) => d.view?.state === 'READING');

    const [entry] = await readHookSessions(dir);
    writeFileSync(entry!.path, '{"version":1,"host":"claude-c');
    const unreadable = await page.untilDetail(id, (d) => d.hook?.unreadable != null);
    expect(unreadable).toMatchObject({
      state: 'unreadable (HOOK_STATE_UNREADABLE)',
      label: 'claude-code hook · s-corrupt · /home/dev/project',
      machineId: null,
      view: null,
      log: [],
      hook: { host: 'claude-code', hostSessionId: 's-corrupt', unreadable: { code: 'HOOK_STATE_UNREADABLE' } },
    });
    expect(unreadable.hook!.unreadable!.message).not.toBe('');
    // The server still answers, and a good session written next to it is shown.
    const other = newSession('s-next');
    await save(dir, other);
    await page.untilList((list) => list.some((s) => s.sessionId === liveId(dir, other) && s.state === 'RESOLVING'));
    expect((await getJson<LiveSessionSummary[]>(server, '/api/live')).body.map((s) => s.sessionId).sort()).toEqual(
      [id, liveId(dir, other)].sort(),
    );

    // The store refuses to overwrite a corrupt file (the hook fails closed on it); once it is removed, the session starts again.
    await expect(save(dir, session)).rejects.toMatchObject({ code: 'HOOK_STATE_UNREADABLE' });
    rmSync(entry!.path);
    call(session, 'toolu_2', 'Edit', 'write', '/home/dev/project/a.txt');
    await save(dir, session);
    await page.untilDetail(id, (d) => d.hook?.unreadable === null && d.view?.state === 'VERIFYING');
  });

  it('shows a file whose snapshot the guard refuses as unreadable, never as a fresh session', async () => {
    const dir = stateDirectory();
    const session = newSession('s-bad-snapshot');
    await save(dir, session);
    const path = sessionFilePath(dir, session.host, session.sessionId);
    const [entry] = await readHookSessions(dir);
    const record = (entry as { record: HookSessionRecord }).record;
    writeFileSync(path, JSON.stringify({ ...record, snapshot: { v: 2, state: 'VERIFYING', readAfterWrite: 'yes' } }));
    const { page } = await serve(dir);
    const detail = await page.untilDetail(liveId(dir, session), () => true);
    expect(detail.view).toBeNull();
    expect(detail.state).toMatch(/^unreadable \(/);
    expect(detail.hook!.unreadable!.code).toMatch(/^[A-Z_]+$/);
  });

  it('polls a directory it does not watch, and one that does not exist yet', async () => {
    const dir = join(stateDirectory(), 'not-yet');
    const { server, page } = await serve(dir, { poll: true, pollIntervalMs: 50 });
    expect(server.stats().hooksWatched).toBe(false);
    const session = newSession('s-poll', 'gemini-cli');
    call(session, 'c1', 'read_file', 'read', '/home/dev/project/a.txt');
    mkdirSync(dir, { recursive: true });
    await save(dir, session);
    const [listed] = await page.untilList((list) => list.length === 1);
    expect(listed).toMatchObject({
      sessionId: liveId(dir, session),
      state: 'READING',
      label: 'gemini-cli hook · s-poll · /home/dev/project',
    });
    expect(server.stats().hooksWatched).toBe(false);
  });

  it('watches a directory once it is created', async () => {
    const dir = join(stateDirectory(), 'later');
    const { server, page } = await serve(dir, { pollIntervalMs: 50 });
    expect(server.stats().hooksWatched).toBe(false);
    mkdirSync(dir, { recursive: true });
    await vi.waitFor(() => expect(server.stats().hooksWatched).toBe(true), { timeout: 15_000, interval: 20 });
    const session = newSession('s-later');
    await save(dir, session);
    await page.untilList((list) => list.some((s) => s.sessionId === liveId(dir, session)));
  });

  it('removes the sessions of a state directory that is removed, and watches it again once it is back', async () => {
    const root = stateDirectory();
    const dir = join(root, 'state');
    mkdirSync(dir);
    const session = newSession('s-gone');
    await save(dir, session);
    const { server, page } = await serve(dir, { pollIntervalMs: 50 });
    await page.untilList((list) => list.length === 1);
    expect(server.stats().hooksWatched).toBe(true);
    rmSync(dir, { recursive: true });
    await page.untilList((list) => list.length === 0);
    mkdirSync(dir);
    await vi.waitFor(() => expect(server.stats().hooksWatched).toBe(true), { timeout: 15_000, interval: 20 });
    const again = newSession('s-back');
    await save(dir, again);
    await page.untilList((list) => list.length === 1 && list[0]!.actorSessionId === 's-back');
  });

  it('lists hook sessions beside streamed ones, newest first', async () => {
    const dir = stateDirectory();
    const old = newSession('s-old');
    old.clock = 1_000; // long ago: listed after a session streamed now
    await save(dir, old);
    const { server, page } = await serve(dir);
    const inspector = new WebSocket(server.inspectUrl);
    await new Promise((resolve, reject) => inspector.once('open', resolve).once('error', reject));
    const guard = createSessionGuard();
    inspector.send(
      JSON.stringify({
        type: '@xstate.actor',
        sessionId: 'x:0',
        name: 'app',
        definition: JSON.stringify({ id: 'safety' }),
        snapshot: { status: 'active', value: guard.state, context: guard.context },
      }),
    );
    const list = await page.untilList((l) => l.length === 2);
    expect(list.map((s) => [s.name, s.hook === null])).toEqual([
      ['app', true],
      ['claude-code', false],
    ]);
    inspector.close();
  });
});

describe('the hook state directory as untrusted input', () => {
  it('keeps the sessions shown when a read of the directory fails, and logs it once', async () => {
    const shown = new Map<string, LiveSessionDetail>();
    const lines: string[] = [];
    let fail = false;
    const watcher = new HookSessionWatcher({
      directory: '/nowhere',
      poll: true,
      sink: { putHookSession: (d) => shown.set(d.sessionId, d), removeHookSession: (id) => shown.delete(id) },
      drops: new DropLog((line) => lines.push(line)),
      read: () =>
        fail
          ? Promise.reject(new Error('EIO: i/o error'))
          : Promise.resolve([
              { path: '/nowhere/claude-code/a.json', error: Object.assign(new Error('locked'), { code: 'HOOK_STATE_LOCKED' }) as never },
            ]),
    });
    await watcher.scan();
    expect([...shown.values()].map((d) => d.state)).toEqual(['unreadable (HOOK_STATE_LOCKED)']);
    fail = true;
    await watcher.scan();
    await watcher.scan();
    expect(shown.size).toBe(1);
    expect(lines).toEqual([expect.stringContaining('dropped hook state directory read: /nowhere: Error: EIO: i/o error')]);
    watcher.close();
  });

  it(`shows the ${MAX_HOOK_SESSIONS} most recently updated sessions`, async () => {
    const shown = new Map<string, LiveSessionDetail>();
    const record = (n: number) => ({
      path: `/state/claude-code/${n}.json`,
      record: {
        version: 1,
        host: 'claude-code',
        sessionId: `s${n}`,
        createdAt: n,
        updatedAt: n,
        snapshot: null,
        calls: {},
        decisions: [],
        stopBlocks: 0,
      } as HookSessionRecord,
    });
    let count = MAX_HOOK_SESSIONS + 5;
    const watcher = new HookSessionWatcher({
      directory: '/state',
      poll: true,
      sink: { putHookSession: (d) => shown.set(d.sessionId, d), removeHookSession: (id) => shown.delete(id) },
      drops: new DropLog(() => {}),
      read: () => Promise.resolve(Array.from({ length: count }, (_, n) => record(n))),
    });
    await watcher.scan();
    expect(shown.size).toBe(MAX_HOOK_SESSIONS);
    expect(shown.has('hook:claude-code/4.json')).toBe(false);
    expect(shown.has('hook:claude-code/5.json')).toBe(true);
    count = 3;
    await watcher.scan();
    expect([...shown.keys()].sort()).toEqual(['hook:claude-code/0.json', 'hook:claude-code/1.json', 'hook:claude-code/2.json']);
    watcher.close();
  });

  it('reads each field of a record defensively: a record of another shape is unreadable, an unknown answer a refusal', () => {
    const base = {
      version: 1,
      host: 'claude-code',
      sessionId: 's',
      createdAt: T0,
      updatedAt: T0,
      snapshot: null,
      calls: {},
      decisions: [],
      stopBlocks: 0,
    };
    const bad = hookSessionDetail('/state', { path: '/state/claude-code/x.json', record: { ...base, decisions: [null] } as never }, T0);
    expect(bad).toMatchObject({ view: null, hook: { unreadable: { code: 'HOOK_STATE_UNREADABLE' } } });
    expect(bad.hook!.unreadable!.message).toContain('decisions.0');
    const odd = hookSessionDetail(
      '/state',
      {
        path: '/state/claude-code/y.json',
        record: { ...base, decisions: [{ at: T0, event: 'PreToolUse', tool: 'Bash', answer: 'maybe' }] } as never,
      },
      T0,
    );
    expect(odd.log[0]!.decision).toMatchObject({ subject: 'tool', allowed: false });
    const proto = hookSessionDetail(
      '/state',
      { path: '/state/claude-code/z.json', record: JSON.parse('{"__proto__":{"host":"x"}}') as never },
      T0,
    );
    expect(proto.view).toBeNull();
  });
});

describe('pulse-safety serve --hooks (the command)', () => {
  it('serves the hook sessions of the directory given, on the Live tab', async () => {
    const dir = stateDirectory();
    const session = newSession('s-cli');
    await save(dir, session);
    const sigint = process.listeners('SIGINT');
    const result = { out: '', err: '', code: 0 };
    const program = new Command('pulse-safety').exitOverride();
    registerServeCommand(program, { out: (t) => (result.out += t), err: (t) => (result.err += t), setExitCode: (c) => (result.code = c) });
    const running = program.parseAsync(['serve', '--port', '0', '--hooks', dir], { from: 'user' });
    await vi.waitFor(() => expect(result.out).toContain('press Ctrl+C'), { timeout: 15_000, interval: 20 });
    expect(result.out).toMatch(/^pulse-safety visualizer: http:\/\/127\.0\.0\.1:\d+\/\?mode=live$/m);
    expect(result.out).toContain(`hook sessions from ${dir} (watched), shown on the Live tab`);
    const url = /visualizer: (http:\/\/\S+?)\?mode=live/.exec(result.out)![1]!;
    const list = (await (await fetch(new URL('/api/live', url))).json()) as LiveSessionSummary[];
    expect(list.map((s) => s.actorSessionId)).toEqual(['s-cli']);
    // Stop it as Ctrl+C would: call only the listener the command added.
    for (const listener of process.listeners('SIGINT').filter((l) => !sigint.includes(l))) listener('SIGINT');
    await running;
    expect(result.code).toBe(0);
  });
});
