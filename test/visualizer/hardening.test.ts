/**
 * The visualizer server under hostile input, over real connections to a
 * real server on 127.0.0.1: inspection messages that used to take the
 * process down, origins that may not use it, and streamed definitions that
 * used to be kept forever or charted for minutes on the event loop.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket, type RawData } from 'ws';
import { initialSafetyContext } from '../../machines/safety.machine.js';
import { MAX_CHART_STATES, MAX_DEFINITION_BYTES, MAX_DEFINITIONS, MAX_INSPECTION_BYTES } from '../../src/visualizer/bounds.js';
import type { LiveMessage, LiveSessionDetail, LiveSessionSummary } from '../../src/visualizer/protocol.js';
import { startVisualizer, type VisualizerServer } from '../../src/visualizer/server.js';

/** How long a test waits for something the server should do at once (generous: a failure, not a speed check). */
const PATIENCE_MS = 10_000;

/** An HTTP request with any headers (fetch may not set Origin); the status and parsed JSON body. */
function http(
  server: VisualizerServer,
  method: string,
  path: string,
  options: { origin?: string; body?: unknown } = {},
): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (options.origin !== undefined) headers.Origin = options.origin;
    if (options.body !== undefined) headers['Content-Type'] = 'application/json';
    const req = request({ host: '127.0.0.1', port: server.port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON: the text
        }
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.on('error', reject);
    req.end(options.body === undefined ? undefined : JSON.stringify(options.body));
  });
}

/** Opens a WebSocket; resolves when open, rejects with the HTTP status of a refused upgrade. */
function connect(url: string, origin?: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, origin === undefined ? {} : { origin });
    socket.once('open', () => resolve(socket));
    socket.once('unexpected-response', (_req, res) => reject(new Error(`refused with ${res.statusCode}`)));
    socket.once('error', reject);
  });
}

/** The page's side of `/live`: every message the server pushes, and a way to wait for one. */
async function openPage(
  server: VisualizerServer,
): Promise<{ waitFor: (test: (m: LiveMessage) => boolean) => Promise<LiveMessage>; close: () => void }> {
  const socket = await connect(`ws://127.0.0.1:${server.port}/live`, `http://127.0.0.1:${server.port}`);
  const seen: LiveMessage[] = [];
  const waiters: { test: (m: LiveMessage) => boolean; resolve: (m: LiveMessage) => void }[] = [];
  socket.on('message', (data: RawData) => {
    const message = JSON.parse(data.toString()) as LiveMessage;
    seen.push(message);
    for (const waiter of [...waiters]) {
      if (waiter.test(message)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(message);
      }
    }
  });
  return {
    waitFor: (test) =>
      new Promise((resolve, reject) => {
        const found = seen.find(test);
        if (found) return resolve(found);
        const timer = setTimeout(() => reject(new Error('the page never got the message it waited for')), PATIENCE_MS);
        waiters.push({ test, resolve: (m) => (clearTimeout(timer), resolve(m)) });
      }),
    close: () => socket.terminate(),
  };
}

/** Sends one message on a fresh inspector connection and closes it once sent. */
async function sendOnce(server: VisualizerServer, data: string | Buffer): Promise<void> {
  const socket = await connect(server.inspectUrl);
  await new Promise<void>((resolve, reject) => socket.send(data, (error) => (error ? reject(error) : resolve())));
  socket.close();
}

/** What `@statelyai/inspect` sends when an application announces its safety actor. */
const safetyActor = (sessionId: string, snapshot: object = { status: 'active', value: 'RESOLVING', context: initialSafetyContext() }) =>
  JSON.stringify({ type: '@xstate.actor', sessionId, name: 'safety', definition: JSON.stringify({ id: 'safety' }), snapshot });

/** An `@xstate.actor` message of a machine with this definition. */
const machineActor = (sessionId: string, definition: object | string, snapshot: object = { status: 'active' }) =>
  JSON.stringify({
    type: '@xstate.actor',
    sessionId,
    definition: typeof definition === 'string' ? definition : JSON.stringify(definition),
    snapshot,
  });

/** A message whose snapshot value is nested `depth` objects deep (written as text: too deep to stringify). */
function deepValueMessage(depth: number): string {
  const message = JSON.stringify({
    type: '@xstate.actor',
    sessionId: 'deep',
    definition: JSON.stringify({ id: 'safety' }),
    snapshot: { value: 'HOLE' },
  });
  return message.replace('"HOLE"', '{"a":'.repeat(depth) + '"RESOLVING"' + '}'.repeat(depth));
}

/** A flat machine of `n` states, each with two transitions to far-apart states (Graphviz lays it out slowly). */
function tangledMachine(id: string, n: number): object {
  const states: Record<string, object> = {};
  for (let i = 0; i < n; i++) states[`s${i}`] = { on: { a: `s${(i * 7 + 1) % n}`, b: `s${(i * 7 + 14) % n}` } };
  return { id, initial: 's0', states };
}

describe('one bad inspection message cannot stop the server', () => {
  let server: VisualizerServer;
  const lines: string[] = [];
  beforeAll(async () => {
    server = await startVisualizer({ port: 0, log: (line) => lines.push(line) });
  });
  afterAll(async () => {
    await server.close();
  });

  /** Sends `bad`, then a good safety session on another connection; the page must show the good one, and HTTP must answer. */
  async function survives(bad: string | Buffer, goodId: string): Promise<LiveSessionDetail> {
    const page = await openPage(server);
    try {
      await sendOnce(server, bad).catch(() => {}); // an oversized message closes its connection
      await sendOnce(server, safetyActor(goodId));
      const message = await page.waitFor((m) => m.type === 'session' && m.session.actorSessionId === goodId && m.session.view !== null);
      expect((await http(server, 'GET', '/api/info')).status).toBe(200);
      return (message as Extract<LiveMessage, { type: 'session' }>).session;
    } finally {
      page.close();
    }
  }

  it('drops an announced safety actor whose calls in flight are [null]', async () => {
    const bad = safetyActor('bad-in-flight', { value: 'READING', context: { ...initialSafetyContext(), inFlight: [null] } });
    const good = await survives(bad, 'good-1');
    expect(good.view!.state).toBe('RESOLVING');
    expect(server.stats().dropped['invalid safety snapshot']).toBeGreaterThanOrEqual(1);
  });

  it('drops a 159-byte announcement whose pending recoveries are { a: null }', async () => {
    const bad =
      '{"type":"@xstate.actor","sessionId":"bad-recover","definition":"{\\"id\\":\\"safety\\"}","snapshot":{"value":"READING","context":{"pendingRecoveries":{"a":null}}}}';
    await survives(bad, 'good-2');
    expect((await http(server, 'GET', '/api/live')).body as LiveSessionSummary[]).not.toContainEqual(
      expect.objectContaining({ actorSessionId: 'bad-recover' }),
    );
  });

  it('drops a snapshot value nested 5,000 deep', async () => {
    await survives(deepValueMessage(5_000), 'good-3');
    expect(server.stats().dropped['inspection message nested too deep']).toBeGreaterThanOrEqual(1);
  });

  it('drops an unknown machine whose context is nested 5,000 deep', async () => {
    const bad = machineActor('bad-context', { id: 'door' }, { value: 'closed', context: { x: 'HOLE' } }).replace(
      '"HOLE"',
      '['.repeat(5_000) + ']'.repeat(5_000),
    );
    await survives(bad, 'good-4');
  });

  it(`closes the connection of a message over ${MAX_INSPECTION_BYTES} bytes, and keeps serving`, async () => {
    const socket = await connect(server.inspectUrl);
    const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
    socket.send(JSON.stringify({ type: '@xstate.actor', sessionId: 'too-big', padding: 'x'.repeat(MAX_INSPECTION_BYTES) }));
    expect(await closed).toBe(1009);
    await survives('{}', 'good-5');
  });

  it('drops a binary message', async () => {
    await survives(Buffer.from(safetyActor('bad-binary')), 'good-6');
    expect(server.stats().dropped['binary inspection message']).toBeGreaterThanOrEqual(1);
  });

  it("reads a connection's close after the messages queued before it", async () => {
    const socket = await connect(server.inspectUrl);
    // Each message builds a 400-state machine, so the close arrives while most still wait in the queue.
    for (let i = 0; i < 200; i++) socket.send(machineActor(`queued-${i}`, tangledMachine(`queued${i}`, 400), { value: 's0' }));
    socket.close();
    await expect
      .poll(
        async () => ((await http(server, 'GET', '/api/live')).body as LiveSessionSummary[]).find((s) => s.actorSessionId === 'queued-199'),
        {
          timeout: PATIENCE_MS,
        },
      )
      .toMatchObject({ connected: false });
  });

  it('logs each kind of drop once, however many arrive', async () => {
    const bad = safetyActor('flood', { value: 'READING', context: { ...initialSafetyContext(), inFlight: [null] } });
    const before = server.stats().dropped['invalid safety snapshot'] ?? 0;
    const socket = await connect(server.inspectUrl);
    for (let i = 0; i < 200; i++) socket.send(bad);
    socket.close();
    await survives('{}', 'good-7');
    expect(server.stats().dropped['invalid safety snapshot']).toBe(before + 200);
    expect(lines.filter((line) => line.includes('dropped invalid safety snapshot'))).toHaveLength(1);
  });
});

describe('who may use the server', () => {
  let server: VisualizerServer;
  const allowed = 'http://localhost:5173';
  beforeAll(async () => {
    server = await startVisualizer({ port: 0, allowedOrigins: [allowed] });
  });
  afterAll(async () => {
    await server.close();
  });
  const own = () => [`http://127.0.0.1:${server.port}`, `http://localhost:${server.port}`];

  it('refuses /inspect to a page on another localhost port', async () => {
    await expect(connect(server.inspectUrl, 'http://localhost:3000')).rejects.toThrow('refused with 403');
  });

  it('refuses /inspect to a page on another site', async () => {
    await expect(connect(server.inspectUrl, 'https://evil.example')).rejects.toThrow('refused with 403');
  });

  it('accepts /inspect from a program that sends no Origin (an application in Node)', async () => {
    (await connect(server.inspectUrl)).close();
  });

  it("accepts /inspect from the server's own origins and an allowed one", async () => {
    for (const origin of [...own(), allowed]) (await connect(server.inspectUrl, origin)).close();
  });

  it("keeps /live to the server's own page, an allowed origin included", async () => {
    await expect(connect(`ws://127.0.0.1:${server.port}/live`, allowed)).rejects.toThrow('refused with 403');
  });

  it('answers 403 to an API call from another origin, naming the origin', async () => {
    const response = await http(server, 'POST', '/api/playground', { origin: 'http://localhost:3000', body: {} });
    expect(response.status).toBe(403);
    expect((response.body as { error: string }).error).toMatch(/^origin 'http:\/\/localhost:3000' may not use this server/);
  });

  it('answers 403 to an API read from another origin too', async () => {
    expect((await http(server, 'GET', '/api/live', { origin: 'http://localhost:3000' })).status).toBe(403);
  });

  it("accepts API calls with no Origin, the server's own, or an allowed one", async () => {
    for (const origin of [undefined, ...own(), allowed]) {
      expect((await http(server, 'POST', '/api/playground', { origin, body: {} })).status, String(origin)).toBe(201);
    }
  });

  it('serves the page itself to any origin (it is static, and reads nothing)', async () => {
    expect((await http(server, 'GET', '/', { origin: 'http://localhost:3000' })).status).toBe(200);
  });

  it('refuses an allowed origin that is not an origin', async () => {
    await expect(startVisualizer({ port: 0, allowedOrigins: ['http://localhost:5173/app'] })).rejects.toThrow(
      "'http://localhost:5173/app' is not an origin",
    );
  });
});

describe('streamed definitions are bounded', () => {
  let server: VisualizerServer;
  beforeAll(async () => {
    server = await startVisualizer({ port: 0, log: () => {} });
  });
  afterAll(async () => {
    await server.close();
  });

  /** Sends messages on one connection, then a marker session, and waits until the server has read them all. */
  async function stream(messages: string[], marker: string): Promise<void> {
    const page = await openPage(server);
    try {
      const socket = await connect(server.inspectUrl);
      for (const message of messages) socket.send(message);
      socket.send(safetyActor(marker));
      await page.waitFor((m) => m.type === 'sessions' && m.sessions.some((s) => s.actorSessionId === marker));
      socket.close();
    } finally {
      page.close();
    }
  }

  it(`keeps only the newest ${MAX_DEFINITIONS} of 3,000 streamed definitions`, async () => {
    const messages = Array.from({ length: 3_000 }, (_, i) =>
      machineActor(`x:${i}`, { id: `m${i}`, initial: 'a', states: { a: { on: { go: 'b' } }, b: {} } }),
    );
    await stream(messages, 'after-3000');
    expect((await http(server, 'GET', '/api/charts/m0')).status).toBe(404);
    expect((await http(server, 'GET', '/api/charts/m2999')).status).toBe(200);
    expect(((await http(server, 'GET', '/api/info')).body as { machines: { id: string }[] }).machines.map((m) => m.id)).toEqual(['safety']);
    expect(server.stats().definitions).toBe(MAX_DEFINITIONS);
  });

  it('refuses a machine whose eventless transitions loop, when an event steps into the loop, and keeps serving', async () => {
    // Two states that hand over to each other with no guard: XState's transition() alone would never return (issue 27).
    const loop = {
      id: 'pingpong',
      initial: 'idle',
      states: { idle: { on: { go: 'ping' } }, ping: { always: 'pong' }, pong: { always: ['ping'] } },
    };
    // A targetless eventless transition with an action ends (XState takes it once): stepped, not refused.
    const spin = { id: 'spin', initial: 'idle', states: { idle: { on: { go: 'busy' } }, busy: { always: { actions: 'tick' } } } };
    const messages = [
      machineActor('loop-session', loop, { status: 'active', value: 'idle' }),
      JSON.stringify({ type: '@xstate.event', sessionId: 'loop-session', event: { type: 'go' } }),
      machineActor('spin-session', spin, { status: 'active', value: 'idle' }),
      JSON.stringify({ type: '@xstate.event', sessionId: 'spin-session', event: { type: 'go' } }),
    ];
    await stream(messages, 'after-loop');
    const response = await http(server, 'GET', '/api/charts/pingpong');
    expect(response.status).toBe(422);
    expect((response.body as { error: string }).error).toMatch(/eventless \(always\) transitions, so they loop/);
    expect((await http(server, 'GET', '/api/charts/spin')).status).toBe(200);
    expect(server.stats().dropped['machine definition']).toBeGreaterThanOrEqual(1);
    expect((await http(server, 'GET', '/api/info')).status).toBe(200);
  });

  it('steps a machine whose eventless transitions end, with its chart', async () => {
    const chain = {
      id: 'chain',
      initial: 'a',
      states: { a: { on: { go: 'b' } }, b: { always: 'c' }, c: { always: { target: 'd' } }, d: {} },
    };
    await stream(
      [
        machineActor('chain-session', chain, { status: 'active', value: 'a' }),
        JSON.stringify({ type: '@xstate.event', sessionId: 'chain-session', event: { type: 'go' } }),
      ],
      'after-chain',
    );
    expect((await http(server, 'GET', '/api/charts/chain')).status).toBe(200);
  });

  it(`refuses a definition over ${MAX_DEFINITION_BYTES} bytes: its session has no chart`, async () => {
    const huge = { id: 'huge', initial: 'a', description: 'x'.repeat(MAX_DEFINITION_BYTES), states: { a: {} } };
    await stream([machineActor('huge-session', huge, { value: 'a' })], 'after-huge');
    const sessions = (await http(server, 'GET', '/api/live')).body as LiveSessionSummary[];
    expect(sessions.find((s) => s.actorSessionId === 'huge-session')).toMatchObject({ machineId: null, state: 'a' });
    expect((await http(server, 'GET', '/api/charts/huge')).status).toBe(404);
  });

  it(`answers "too large to chart" for a machine over ${MAX_CHART_STATES} states, without laying it out`, async () => {
    await stream([machineActor('big-session', tangledMachine('big', MAX_CHART_STATES + 100), { value: 's0' })], 'after-big');
    const response = await http(server, 'GET', '/api/charts/big');
    expect(response).toEqual({
      status: 422,
      body: { error: `the machine 'big' is too large to chart: more than ${MAX_CHART_STATES} states` },
    });
    expect((await http(server, 'GET', '/api/info')).status).toBe(200);
  });
});

describe('chart layout runs off the event loop, within a time limit', () => {
  it('answers other requests while a slow chart is laid out', async () => {
    const server = await startVisualizer({ port: 0 });
    try {
      expect((await http(server, 'GET', '/api/charts/safety')).status).toBe(200); // Graphviz loaded
      await sendOnce(server, machineActor('slow-session', tangledMachine('slow', 150), { value: 's0' }));
      await expect
        .poll(async () => (await http(server, 'GET', '/api/live')).body)
        .toContainEqual(expect.objectContaining({ machineId: 'slow' }));
      const slow = http(server, 'GET', '/api/charts/slow').catch(() => null); // laid out for many seconds, or stopped
      expect((await http(server, 'GET', '/api/info')).status).toBe(200);
      void slow;
    } finally {
      await server.close();
    }
  });

  it('stops a layout that passes its time limit, and lays out the next chart', async () => {
    const server = await startVisualizer({ port: 0, chartTimeoutMs: 200 });
    try {
      await sendOnce(server, machineActor('slow-session', tangledMachine('slow', 150), { value: 's0' }));
      await expect
        .poll(async () => (await http(server, 'GET', '/api/live')).body)
        .toContainEqual(expect.objectContaining({ machineId: 'slow' }));
      expect(await http(server, 'GET', '/api/charts/slow')).toEqual({
        status: 422,
        body: { error: "the chart of 'slow' cannot be drawn: laying out the chart took longer than 0.2 s, so it was stopped" },
      });
      await sendOnce(
        server,
        machineActor('door-session', { id: 'door', initial: 'closed', states: { closed: { on: { open: 'opened' } }, opened: {} } }),
      );
      await expect
        .poll(async () => (await http(server, 'GET', '/api/live')).body)
        .toContainEqual(expect.objectContaining({ machineId: 'door' }));
      expect((await http(server, 'GET', '/api/charts/door')).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});
