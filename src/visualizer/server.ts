/**
 * The visualizer's local server: binds 127.0.0.1 only, serves the page and
 * its assets from this package (no CDN, no network), runs playground
 * sessions on the real session guard, replays transcripts through the
 * audit, and relays sessions that applications stream with
 * `@statelyai/inspect` (`ws://127.0.0.1:<port>/inspect`) to the page
 * (`/live`).
 *
 * HTTP API (JSON): `GET /api/info`, `GET /api/charts/:machineId`,
 * `POST /api/playground`, `GET|POST /api/playground/:id`,
 * `POST /api/replays`, `GET /api/replays/:id`, `GET /api/replays/:id/runs/:n`,
 * `GET /api/live`. Types: protocol.ts.
 *
 * Spec: ASSISTANT_SAFETY.md (the machine it shows); DESIGN.md §3.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AnyStateMachine } from 'xstate';
import { WebSocketServer, type WebSocket } from 'ws';
import { z } from 'zod';
import { safetyMachine } from '../../machines/safety.machine.js';
import { RECOVERY_TTL_MS } from '../../machines/safety.policy.js';
import { TOOL_KINDS } from '../../machines/safety.types.js';
import { auditRun } from '../audit.js';
import { builtinCatalogs, createClassifier, type BuiltinCatalogName } from '../classifier.js';
import { DEMO_SOURCE, demoRuns } from '../demo.js';
import { chartOf, loadConfiguredMachine, PACKAGE_ROOT, readStatelyConfig, renderSvg, toDot } from '../export.js';
import { readTranscript, TranscriptError, type TranscriptRun } from '../transcripts.js';
import { DEFAULT_PORT } from './command.js';
import { PAGE_CSS, PAGE_HTML } from './document.js';
import { LiveHub } from './live.js';
import { CATALOG_NAMES, catalogView, PlaygroundCommandError, PlaygroundSession, zodMessage } from './playground.js';
import type { ChartResponse, InfoResponse, LiveMessage, ReplayResponse } from './protocol.js';
import { replayRun, runSummary } from './replay.js';

/** The only address the server binds. */
export const HOST = '127.0.0.1';
/** Largest request body (a transcript file), bytes. */
export const MAX_BODY_BYTES = 32 * 1024 * 1024;
/**
 * Deepest nesting of arrays and objects a request body may have; deeper
 * bodies (which would overflow the stack when written back as JSON) are
 * refused with 400 before any session sees them.
 */
export const MAX_BODY_DEPTH = 64;
/** Largest inspection message, bytes. */
export const MAX_INSPECTION_BYTES = 2 * 1024 * 1024;
const MAX_PLAYGROUND_SESSIONS = 50;
const MAX_REPLAYS = 10;

/** The port is taken by another program. */
export class PortInUseError extends Error {
  readonly port: number;
  constructor(port: number) {
    super(
      `port ${port} on ${HOST} is already in use; stop the program using it, or choose another port with --port <n> (--port 0 picks any free port)`,
    );
    this.name = 'PortInUseError';
    this.port = port;
  }
}

/** Options of `startVisualizer`. */
export interface VisualizerOptions {
  /** TCP port on 127.0.0.1; default `DEFAULT_PORT`; 0 picks a free port. */
  port?: number;
  /** The `stately.config.json` whose machines are charted; default the package's own. */
  configPath?: string;
  /** A transcript to open at start, served as replay id `opened`. */
  transcript?: { text: string; source: string };
}

/** A running visualizer. */
export interface VisualizerServer {
  /** `http://127.0.0.1:<port>/` */
  url: string;
  port: number;
  /** `ws://127.0.0.1:<port>/inspect`, for `createWebSocketInspector({ url })`. */
  inspectUrl: string;
  /** Stops the server and closes every connection. */
  close(): Promise<void>;
}

/** An HTTP error answered as `{ error }`. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), ...SECURITY_HEADERS });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value));
}

async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
    throw new HttpError(415, 'send the request body as application/json');
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, `the request body is larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw new HttpError(400, `the request body is not JSON: ${(error as Error).message}`);
  }
  if (jsonDepth(body, MAX_BODY_DEPTH) > MAX_BODY_DEPTH) {
    throw new HttpError(400, `the request body is nested more than ${MAX_BODY_DEPTH} arrays or objects deep`);
  }
  return body;
}

/**
 * The nesting depth of parsed JSON (a scalar is 0, `[]` and `{}` are 1),
 * counted without recursion and only up to `limit + 1`: a deeper value
 * answers `limit + 1` without being walked further.
 */
function jsonDepth(value: unknown, limit: number): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    if (depth + 1 > limit) return limit + 1;
    deepest = Math.max(deepest, depth + 1);
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return deepest;
}

/**
 * A path segment of the URL, percent-decoded.
 *
 * @throws HttpError 400 when the segment is not valid percent-encoded UTF-8.
 */
function pathSegment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new HttpError(400, `the path segment '${raw}' is not valid percent-encoded UTF-8`);
  }
}

/** This module's folder: `src/visualizer` (from source) or `dist/src/visualizer` (compiled). */
const HERE = fileURLToPath(new URL('.', import.meta.url));

/**
 * The page's JavaScript module `name` (e.g. `main.js`): the compiled file
 * next to this module (`npm run build`), or, running from source, the
 * TypeScript source transpiled by the TypeScript compiler.
 */
async function pageScript(name: string): Promise<string | null> {
  const compiled = join(HERE, 'page', name);
  if (existsSync(compiled)) return readFile(compiled, 'utf8');
  const source = join(HERE, 'page', name.replace(/\.js$/, '.ts'));
  if (!name.endsWith('.js') || !existsSync(source)) return null;
  const ts = (await import('typescript')).default;
  return ts.transpileModule(await readFile(source, 'utf8'), {
    fileName: source,
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ES2022, sourceMap: false },
  }).outputText;
}

const catalogParam = z.enum(CATALOG_NAMES as [BuiltinCatalogName, ...BuiltinCatalogName[]]);
const openSchema = z.strictObject({
  text: z.string(),
  source: z.string().trim().min(1).max(500),
  catalog: catalogParam.optional(),
});

/** Loads the machines of the config, the safety machine always included. */
async function loadMachines(configPath: string): Promise<Map<string, AnyStateMachine>> {
  const machines = new Map<string, AnyStateMachine>([[safetyMachine.id, safetyMachine as unknown as AnyStateMachine]]);
  const config = await readStatelyConfig(configPath);
  const root = join(configPath, '..');
  for (const entry of config.machines) {
    const machine = await loadConfiguredMachine(root, entry);
    machines.set(machine.id, machine);
  }
  return machines;
}

/**
 * Starts the visualizer on 127.0.0.1.
 *
 * @throws PortInUseError when the port is taken; Error when the config or a
 *   machine it lists cannot be loaded.
 */
export async function startVisualizer(options: VisualizerOptions = {}): Promise<VisualizerServer> {
  const configPath = options.configPath ?? join(PACKAGE_ROOT, 'stately.config.json');
  const machines = await loadMachines(configPath);
  const descriptions = new Map((await readStatelyConfig(configPath)).machines.map((m) => [m.id, m.description ?? '']));
  const charts = new Map<string, Promise<ChartResponse>>();
  const playground = new Map<string, PlaygroundSession>();
  const replays = new Map<string, { source: string; runs: TranscriptRun[] }>([
    ['demo', { source: DEMO_SOURCE, runs: demoRuns() }],
  ]);
  if (options.transcript) {
    replays.set('opened', {
      source: options.transcript.source,
      runs: readTranscript(options.transcript.text, options.transcript.source),
    });
  }
  let sessionSeq = 0;
  let replaySeq = 0;
  let port = options.port ?? DEFAULT_PORT;

  const origins = () => [`http://${HOST}:${port}`, `http://localhost:${port}`];
  const hosts = () => [`${HOST}:${port}`, `localhost:${port}`];

  function chart(machineId: string): Promise<ChartResponse> {
    const machine = machines.get(machineId);
    if (machine === undefined) throw new HttpError(404, `no machine '${machineId}'`);
    let response = charts.get(machineId);
    if (response === undefined) {
      response = Promise.all([renderSvg(toDot(machine)), renderSvg(toDot(machine, { descriptions: false }))]).then(
        ([svg, compactSvg]) => ({ chart: chartOf(machine), svg, compactSvg }),
      );
      charts.set(machineId, response);
    }
    return response;
  }

  function replaySummary(id: string, catalog: BuiltinCatalogName): ReplayResponse {
    const replay = replays.get(id);
    if (replay === undefined) throw new HttpError(404, `no transcript '${id}' is open`);
    const classify = createClassifier(builtinCatalogs[catalog]);
    return {
      id,
      source: replay.source,
      runs: replay.runs.map((run, index) => runSummary(run, index, auditRun(run, { classify }))),
    };
  }

  function catalogOf(url: URL): BuiltinCatalogName {
    const parsed = catalogParam.safeParse(url.searchParams.get('catalog') ?? 'pulse');
    if (!parsed.success) throw new HttpError(400, `unknown catalog; use one of ${CATALOG_NAMES.join(', ')}`);
    return parsed.data;
  }

  function playgroundSession(id: string): PlaygroundSession {
    const session = playground.get(id);
    if (session === undefined) throw new HttpError(404, `no playground session '${id}'`);
    return session;
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!hosts().includes(req.headers.host ?? '')) throw new HttpError(421, 'this server answers only to 127.0.0.1 and localhost');
    const url = new URL(req.url ?? '/', `http://${HOST}:${port}`);
    const path = url.pathname;
    const method = req.method ?? 'GET';
    let match: RegExpExecArray | null;

    if (method === 'GET' && path === '/') return send(res, 200, 'text/html; charset=utf-8', PAGE_HTML);
    if (method === 'GET' && path === '/favicon.ico') {
      res.writeHead(204, SECURITY_HEADERS);
      return void res.end();
    }
    if (method === 'GET' && path === '/assets/visualizer.css') return send(res, 200, 'text/css; charset=utf-8', PAGE_CSS);
    if (method === 'GET' && (match = /^\/assets\/([a-z][a-z0-9-]*\.js)$/.exec(path))) {
      const script = await pageScript(match[1]!);
      if (script === null) throw new HttpError(404, `no asset ${path}`);
      return send(res, 200, 'text/javascript; charset=utf-8', script);
    }
    if (method === 'GET' && path === '/api/info') {
      const info: InfoResponse = {
        machines: [...machines.values()].map((m) => ({ id: m.id, description: descriptions.get(m.id) ?? '' })),
        catalogs: CATALOG_NAMES.map(catalogView),
        kinds: [...TOOL_KINDS],
        inspectUrl: `ws://${HOST}:${port}/inspect`,
        recoveryTtlMs: RECOVERY_TTL_MS,
      };
      return sendJson(res, 200, info);
    }
    if (method === 'GET' && (match = /^\/api\/charts\/([^/]+)$/.exec(path))) {
      return sendJson(res, 200, await chart(pathSegment(match[1]!)));
    }
    if (method === 'POST' && path === '/api/playground') {
      let session: PlaygroundSession;
      try {
        session = new PlaygroundSession(`p${++sessionSeq}`, (await readJsonBody(req)) as never);
      } catch (error) {
        if (error instanceof PlaygroundCommandError) throw new HttpError(400, error.message);
        throw error;
      }
      playground.set(session.id, session);
      if (playground.size > MAX_PLAYGROUND_SESSIONS) playground.delete(playground.keys().next().value!);
      return sendJson(res, 201, session.toResponse());
    }
    if ((match = /^\/api\/playground\/([^/]+)$/.exec(path))) {
      const session = playgroundSession(pathSegment(match[1]!));
      if (method === 'GET') return sendJson(res, 200, session.toResponse());
      if (method === 'POST') {
        const command = await readJsonBody(req);
        try {
          session.apply(command);
        } catch (error) {
          if (error instanceof PlaygroundCommandError) throw new HttpError(400, error.message);
          throw error;
        }
        return sendJson(res, 200, session.toResponse());
      }
    }
    if (method === 'POST' && path === '/api/replays') {
      const parsed = openSchema.safeParse(await readJsonBody(req));
      if (!parsed.success) throw new HttpError(400, zodMessage(parsed.error));
      let runs: TranscriptRun[];
      try {
        runs = readTranscript(parsed.data.text, parsed.data.source);
      } catch (error) {
        if (error instanceof TranscriptError) throw new HttpError(400, error.message);
        throw error;
      }
      if (runs.length === 0) throw new HttpError(400, `${parsed.data.source}: the transcript has no runs`);
      const id = `r${++replaySeq}`;
      replays.set(id, { source: parsed.data.source, runs });
      const user = [...replays.keys()].filter((key) => key.startsWith('r'));
      if (user.length > MAX_REPLAYS) replays.delete(user[0]!);
      return sendJson(res, 201, replaySummary(id, parsed.data.catalog ?? 'pulse'));
    }
    if (method === 'GET' && (match = /^\/api\/replays\/([^/]+)$/.exec(path))) {
      return sendJson(res, 200, replaySummary(pathSegment(match[1]!), catalogOf(url)));
    }
    if (method === 'GET' && (match = /^\/api\/replays\/([^/]+)\/runs\/(\d+)$/.exec(path))) {
      const id = pathSegment(match[1]!);
      const replay = replays.get(id);
      if (replay === undefined) throw new HttpError(404, `no transcript '${id}' is open`);
      const index = Number(match[2]);
      const run = replay.runs[index];
      if (run === undefined) throw new HttpError(404, `${replay.source} has no run ${index}`);
      const catalog = catalogOf(url);
      return sendJson(res, 200, replayRun(run, index, { classify: createClassifier(builtinCatalogs[catalog]), catalog }));
    }
    if (method === 'GET' && path === '/api/live') return sendJson(res, 200, hub.sessions());
    if (method === 'GET' && (match = /^\/api\/live\/([^/]+)$/.exec(path))) {
      const session = hub.session(pathSegment(match[1]!));
      if (session === undefined) throw new HttpError(404, 'no such live session');
      return sendJson(res, 200, session);
    }
    throw new HttpError(404, `nothing at ${method} ${path}`);
  }

  const server = createServer((req, res) => {
    route(req, res).catch((error: unknown) => {
      if (res.headersSent) return res.destroy();
      if (error instanceof HttpError) return sendJson(res, error.status, { error: error.message });
      sendJson(res, 500, { error: `internal error: ${(error as Error).message}` });
    });
  });

  // WebSockets: applications' inspectors on /inspect, the page on /live.
  const inspectSockets = new WebSocketServer({ noServer: true, maxPayload: MAX_INSPECTION_BYTES });
  const pageSockets = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  let connectionSeq = 0;
  const changed = new Set<string>();
  let flushing = false;
  const broadcast = (message: LiveMessage) => {
    const data = JSON.stringify(message);
    for (const client of pageSockets.clients) if (client.readyState === client.OPEN) client.send(data);
  };
  const hub = new LiveHub(machines, (sessionId) => {
    changed.add(sessionId);
    if (flushing) return;
    flushing = true;
    setImmediate(() => {
      flushing = false;
      broadcast({ type: 'sessions', sessions: hub.sessions() });
      for (const id of changed) {
        const session = hub.session(id);
        if (session) broadcast({ type: 'session', session });
      }
      changed.clear();
    });
  });

  inspectSockets.on('connection', (socket: WebSocket) => {
    const connection = ++connectionSeq;
    socket.on('message', (data, isBinary) => {
      if (!isBinary) hub.receive(connection, data.toString());
    });
    socket.on('close', () => hub.disconnect(connection));
    socket.on('error', () => socket.terminate());
  });
  pageSockets.on('connection', (socket: WebSocket) => {
    socket.send(JSON.stringify({ type: 'sessions', sessions: hub.sessions() } satisfies LiveMessage));
    for (const summary of hub.sessions()) {
      const session = hub.session(summary.sessionId);
      if (session) socket.send(JSON.stringify({ type: 'session', session } satisfies LiveMessage));
    }
    socket.on('error', () => socket.terminate());
  });

  const localOrigin = (origin: string | undefined) => {
    if (origin === undefined) return true; // a Node application's inspector sends no Origin
    try {
      return ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(origin).hostname);
    } catch {
      return false;
    }
  };
  server.on('upgrade', (req, socket, head) => {
    const path = new URL(req.url ?? '/', `http://${HOST}`).pathname;
    const origin = req.headers.origin;
    if (!hosts().includes(req.headers.host ?? '')) return socket.destroy();
    if (path === '/inspect' && localOrigin(origin)) {
      return inspectSockets.handleUpgrade(req, socket, head, (ws) => inspectSockets.emit('connection', ws, req));
    }
    if (path === '/live' && origin !== undefined && origins().includes(origin)) {
      return pageSockets.handleUpgrade(req, socket, head, (ws) => pageSockets.emit('connection', ws, req));
    }
    socket.destroy();
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      reject(error.code === 'EADDRINUSE' ? new PortInUseError(port) : error);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, HOST);
  });
  port = (server.address() as AddressInfo).port;

  return {
    url: `http://${HOST}:${port}/`,
    port,
    inspectUrl: `ws://${HOST}:${port}/inspect`,
    close: async () => {
      for (const client of [...inspectSockets.clients, ...pageSockets.clients]) client.terminate();
      inspectSockets.close();
      pageSockets.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
