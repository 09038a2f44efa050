/**
 * The visualizer server's answers and memory stay bounded, and what it is
 * sent is validated (issue 12 item 8, issue 14 items 6 and 9), over real
 * connections to a real server on 127.0.0.1: `HEAD` as `GET`, a validated
 * playground start time, bounded playground sessions, replay pages, replay
 * input errors as 400, slow `/live` pages disconnected, and two copies of
 * XState streaming through one inspector kept apart.
 */
import { createRequire } from 'node:module';
import { request } from 'node:http';
import { sep } from 'node:path';
import { createWebSocketInspector } from '@statelyai/inspect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { MAX_LIVE_CLIENT_BUFFER_BYTES, MAX_PLAYGROUND_SESSIONS, MAX_REPLAY_PAGE } from '../../src/visualizer/bounds.js';
import type { PlaygroundResponse, ReplayResponse, ReplayRunResponse } from '../../src/visualizer/protocol.js';
import { startVisualizer, type VisualizerServer } from '../../src/visualizer/server.js';

/** How long a test waits for something the server should do at once (generous: a failure, not a speed check). */
const PATIENCE_MS = 10_000;

let server: VisualizerServer;
beforeAll(async () => {
  server = await startVisualizer({ port: 0, log: () => {} });
});
afterAll(async () => {
  await server.close();
});

/** An HTTP request; its status, headers and body text. */
function http(
  target: VisualizerServer,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = body === undefined ? {} : { 'Content-Type': 'application/json' };
    const req = request({ host: '127.0.0.1', port: target.port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

async function json<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const response = await http(server, method, path, body);
  return { status: response.status, body: JSON.parse(response.text) as T };
}

/** Waits until `test` holds, checking every 20 ms; fails after `PATIENCE_MS`. */
async function until(test: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + PATIENCE_MS;
  while (!(await test())) {
    if (Date.now() > deadline) throw new Error(`never happened: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const jsonl = (...lines: object[]) => lines.map((line) => JSON.stringify(line)).join('\n');

describe('HEAD is answered like GET (issue 12 item 8)', () => {
  it('answers HEAD on every GET route with the status and headers of GET, and no body', async () => {
    const created = await json<PlaygroundResponse>('POST', '/api/playground', {});
    const paths = [
      '/',
      '/favicon.ico',
      '/assets/visualizer.css',
      '/assets/main.js',
      '/api/info',
      '/api/charts/safety',
      `/api/playground/${created.body.id}`,
      '/api/replays/demo',
      '/api/replays/demo/runs/0',
      '/api/live',
      '/api/live/nothing',
      '/nothing',
    ];
    for (const path of paths) {
      const get = await http(server, 'GET', path);
      const head = await http(server, 'HEAD', path);
      const comparable = (headers: Record<string, unknown>) => {
        const { date: _date, ...rest } = headers;
        return rest;
      };
      expect({ path, status: head.status, headers: comparable(head.headers) }).toEqual({
        path,
        status: get.status,
        headers: comparable(get.headers),
      });
      expect(head.text, path).toBe('');
    }
  });
});

describe('playground sessions are validated and bounded (issue 14 item 9)', () => {
  it('answers a start time that is not a finite epoch-ms number within the time range with 400 and one line', async () => {
    for (const startAt of ['soon', 1e300, -9e15, true]) {
      const { status, body } = await json<{ error: string }>('POST', '/api/playground', { startAt });
      expect(status, String(startAt)).toBe(400);
      expect(body.error).toMatch(
        /^startAt: must be a finite number of epoch milliseconds within ±8640000000000000 \(the machine's time range, that of JavaScript dates\)$/,
      );
    }
  });

  it(`keeps ${MAX_PLAYGROUND_SESSIONS} sessions, evicting the least recently used`, async () => {
    const ids: string[] = [];
    for (let i = 0; i < MAX_PLAYGROUND_SESSIONS; i++) ids.push((await json<PlaygroundResponse>('POST', '/api/playground', {})).body.id);
    await json('POST', `/api/playground/${ids[0]}`, { type: 'answer' }); // the oldest is used again
    await json('POST', '/api/playground', {});
    expect(server.stats().playgroundSessions).toBe(MAX_PLAYGROUND_SESSIONS);
    expect((await http(server, 'GET', `/api/playground/${ids[0]}`)).status).toBe(200);
    expect((await http(server, 'GET', `/api/playground/${ids[1]}`)).status).toBe(404);
  });

  it("answers each command with its own log entry, so the answer does not grow with the session's log", async () => {
    const { body: created } = await json<PlaygroundResponse>('POST', '/api/playground', {});
    const sizes: number[] = [];
    for (let i = 0; i < 50; i++)
      sizes.push((await http(server, 'POST', `/api/playground/${created.id}`, { type: 'advanceClock', ms: 1 })).text.length);
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThan(50);
  });
});

describe('replays: input errors are 400, runs are paged (issue 14 items 6 and 9)', () => {
  it('answers a transcript whose clock step passes the range of dates with 400 and one line, as the CLI exits 2', async () => {
    const text = jsonl({ type: 'call', id: 'c', name: 'pulse_query' }, { type: 'clock', advanceMs: 9e15 });
    const { status, body } = await json<{ error: string }>('POST', '/api/replays', { text, source: 'clock.jsonl' });
    expect(status).toBe(400);
    expect(body.error).toBe('clock.jsonl: line 2: a clock step takes the audit clock past the range of dates (±8640000000000000 ms)');
  });

  it('answers 400, not 500, for a page of such a transcript opened at start', async () => {
    const text = jsonl({ type: 'call', id: 'c', name: 'pulse_query' }, { type: 'clock', advanceMs: 9e15 });
    const opened = await startVisualizer({ port: 0, log: () => {}, transcript: { text, source: 'clock.jsonl' } });
    try {
      const response = await http(opened, 'GET', '/api/replays/opened/runs/0');
      expect(response.status).toBe(400);
      expect(JSON.parse(response.text).error).toMatch(/^clock\.jsonl: line 2: a clock step takes the audit clock past the range of dates/);
    } finally {
      await opened.close();
    }
  });

  it('opens and replays what the CLI audits cleanly: arguments nested 5,000 deep, a tau-bench task_id with a broken toString', async () => {
    const deep = '['.repeat(5_000) + ']'.repeat(5_000);
    const transcripts = {
      'deep.json': JSON.stringify([{ role: 'assistant', tool_calls: [{ id: 'd', function: { name: 'x', arguments: deep } }] }]),
      'task.json': JSON.stringify([{ task_id: { toString: 1 }, reward: 1, traj: [{ role: 'assistant', content: 'hi' }] }]),
    };
    for (const [source, text] of Object.entries(transcripts)) {
      const opened = await json<ReplayResponse>('POST', '/api/replays', { text, source });
      expect(opened.status, source).toBe(201);
      expect((await http(server, 'GET', `/api/replays/${opened.body.id}/runs/0`)).status, source).toBe(200);
    }
  });

  it(`answers one run of a long transcript a page of at most ${MAX_REPLAY_PAGE} steps at a time`, async () => {
    const lines = Array.from({ length: 450 }, (_, i) => ({ type: 'call', id: `c${i}`, name: 'pulse_query' }));
    const opened = await json<ReplayResponse>('POST', '/api/replays', { text: jsonl(...lines), source: 'long.jsonl' });
    const first = await json<ReplayRunResponse>('GET', `/api/replays/${opened.body.id}/runs/0`);
    expect(first.body).toMatchObject({ from: 0, total: 450, nextFrom: MAX_REPLAY_PAGE });
    expect(first.body.frames).toHaveLength(MAX_REPLAY_PAGE);
    const last = await json<ReplayRunResponse>('GET', `/api/replays/${opened.body.id}/runs/0?from=400`);
    expect(last.body).toMatchObject({ from: 400, nextFrom: null });
    expect(last.body.frames.map((f) => f.index)).toEqual([...Array(50).keys()].map((i) => 400 + i));
  });

  it('answers a page position that is not a whole number in range with 400', async () => {
    for (const query of ['from=-1', 'from=abc', 'from=1e3', 'limit=0', `limit=${MAX_REPLAY_PAGE + 1}`, 'from=99999']) {
      expect((await http(server, 'GET', `/api/replays/demo/runs/0?${query}`)).status, query).toBe(400);
    }
  });
});

/** Opens a WebSocket with an Origin; resolves when open. */
function connect(url: string, origin?: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, origin === undefined ? {} : { origin });
    socket.once('open', () => resolve(socket));
    socket.once('error', reject);
  });
}

describe('backpressure on /live (issue 14 item 9)', () => {
  it(`disconnects a page that stops reading once more than ${MAX_LIVE_CLIENT_BUFFER_BYTES} bytes wait for it`, async () => {
    const slow = await connect(`ws://127.0.0.1:${server.port}/live`, `http://127.0.0.1:${server.port}`);
    // The page stops reading: nothing more is taken from its TCP connection.
    (slow as unknown as { _socket: { pause(): void } })._socket.pause();
    await until(() => server.stats().liveClients === 1, 'the page is connected');
    const app = await connect(server.inspectUrl);
    const context = { padding: 'x'.repeat(400_000) };
    app.send(
      JSON.stringify({
        type: '@xstate.actor',
        sessionId: 'big',
        definition: JSON.stringify({ id: 'big' }),
        snapshot: { value: 'idle', context },
      }),
    );
    let sent = 0;
    // Each snapshot makes the server push the session (about 400 kB) to every page.
    while (server.stats().liveClients > 0 && sent < 200) {
      app.send(
        JSON.stringify({ type: '@xstate.snapshot', sessionId: 'big', snapshot: { value: 'idle', context: { ...context, n: sent++ } } }),
      );
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    app.close();
    slow.terminate();
    expect(server.stats().liveClients).toBe(0);
    expect(server.stats().dropped['slow live page']).toBe(1);
  });
});

describe('backpressure on /live: a reading page', () => {
  it('keeps a page that reads connected through the same flood', async () => {
    const page = await connect(`ws://127.0.0.1:${server.port}/live`, `http://127.0.0.1:${server.port}`);
    let received = 0;
    page.on('message', () => received++);
    const app = await connect(server.inspectUrl);
    const context = { padding: 'x'.repeat(400_000) };
    app.send(
      JSON.stringify({
        type: '@xstate.actor',
        sessionId: 'big2',
        definition: JSON.stringify({ id: 'big2' }),
        snapshot: { value: 'idle', context },
      }),
    );
    for (let n = 0; n < 40; n++) {
      app.send(JSON.stringify({ type: '@xstate.snapshot', sessionId: 'big2', snapshot: { value: 'idle', context: { ...context, n } } }));
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await until(() => received >= 40, 'the page got the updates');
    expect(page.readyState).toBe(WebSocket.OPEN);
    app.close();
    page.close();
  });
});

describe('backpressure on /live: a new page', () => {
  it('is sent every session, one at a time as it reads, however much they hold in all', async () => {
    const target = await startVisualizer({ port: 0, log: () => {} });
    try {
      const app = await connect(target.inspectUrl);
      const context = { padding: 'x'.repeat(400_000) };
      const sessions = Math.ceil((3 * MAX_LIVE_CLIENT_BUFFER_BYTES) / 400_000);
      for (let i = 0; i < sessions; i++) {
        app.send(
          JSON.stringify({
            type: '@xstate.actor',
            sessionId: `s${i}`,
            definition: JSON.stringify({ id: 'big' }),
            snapshot: { value: 'idle', context },
          }),
        );
      }
      await until(() => target.stats().liveSessions === sessions, 'every session is kept');
      const page = await connect(`ws://127.0.0.1:${target.port}/live`, `http://127.0.0.1:${target.port}`);
      const greeted = new Set<string>();
      page.on('message', (data) => {
        const message = JSON.parse(String(data)) as { type: string; session?: { sessionId: string } };
        if (message.type === 'session') greeted.add(message.session!.sessionId);
      });
      await until(() => greeted.size === sessions || page.readyState !== WebSocket.OPEN, 'the greeting ends');
      expect({ greeted: greeted.size, open: page.readyState === WebSocket.OPEN }).toEqual({ greeted: sessions, open: true });
      app.close();
      page.close();
    } finally {
      await target.close();
    }
  });
});

/** A copy of XState of its own, as an application bundling a second copy has: its own module state, its own session ids. */
function separateXState(): typeof import('xstate') {
  const require = createRequire(import.meta.url);
  for (const key of Object.keys(require.cache)) if (key.includes(`${sep}node_modules${sep}xstate${sep}`)) delete require.cache[key];
  return require('xstate') as typeof import('xstate');
}

describe('two copies of XState in one application (issue 12 item 8)', () => {
  it('keeps their actors apart though both stream session id x:0 through one inspector', async () => {
    const copies = [separateXState(), separateXState()];
    const inspector = createWebSocketInspector({ url: server.inspectUrl });
    const actors = copies.map((xstate, i) =>
      xstate
        .createActor(
          xstate.createMachine({ id: `door${i}`, initial: 'closed', states: { closed: { on: { open: 'opened' } }, opened: {} } }),
          {
            inspect: inspector.inspect,
          },
        )
        .start(),
    );
    try {
      expect(actors.map((actor) => actor.sessionId)).toEqual(['x:0', 'x:0']);
      const doors = async () =>
        (await json<{ sessionId: string; machineId: string | null }[]>('GET', '/api/live')).body.filter((s) =>
          s.machineId?.startsWith('door'),
        );
      await until(async () => (await doors()).length >= 2, 'two door sessions');
      const sessions = await doors();
      expect(sessions.map((s) => s.machineId).sort()).toEqual(['door0', 'door1']);
      expect(new Set(sessions.map((s) => s.sessionId)).size).toBe(2);
    } finally {
      for (const actor of actors) actor.stop();
      inspector.stop();
    }
  });
});
