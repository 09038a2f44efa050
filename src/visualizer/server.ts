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
 * `POST /api/replays`, `GET /api/replays/:id`,
 * `GET /api/replays/:id/runs/:n[?from=<step>&limit=<n>]` (one page of steps),
 * `GET /api/live`, `GET /api/live/:sessionId`. Types: protocol.ts. Every
 * `GET` route answers `HEAD` too: the same status and headers, no body.
 *
 * Who may talk to it: requests must be addressed to 127.0.0.1 or localhost
 * (Host, against DNS rebinding). Every `/api/` request (GET included) and
 * the `/inspect` WebSocket accept a request without an Origin header (a
 * local program, e.g. `@statelyai/inspect` in Node) or with the server's own
 * origin (`http://127.0.0.1:<port>`, `http://localhost:<port>`) or one of
 * `allowedOrigins`; any other gets 403. The `/live` WebSocket is the page's
 * and takes only the server's own origin. Bounds on input and work: bounds.ts.
 *
 * Spec: ASSISTANT_SAFETY.md (the machine it shows); DESIGN.md §3.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AnyStateMachine } from 'xstate';
import { WebSocketServer, type WebSocket } from 'ws';
import { z } from 'zod';
import { safetyMachine } from '../../machines/safety.machine.js';
import { RECOVERY_TTL_MS } from '../../machines/safety.policy.js';
import { TOOL_KINDS } from '../../machines/safety.types.js';
import { auditRun } from '../audit/audit.js';
import { builtinCatalogs, createClassifier, type BuiltinCatalogName } from '../classify/catalog/index.js';
import { DEMO_SOURCE, demoRuns } from '../audit/demo.js';
import { chartOf, loadConfiguredMachine, PACKAGE_ROOT, readStatelyConfig, toDot } from '../charts/index.js';
import { readTranscript, type TranscriptRun } from '../audit/transcripts/index.js';
import {
  DropLog,
  errorMessage,
  jsonTextDepth,
  MAX_INSPECTION_BYTES,
  MAX_JSON_DEPTH,
  MAX_LIVE_CLIENT_BUFFER_BYTES,
  MAX_PLAYGROUND_SESSIONS,
  MAX_QUEUED_MESSAGES,
  MAX_REPLAY_PAGE,
  MAX_REPLAYS,
  MESSAGE_SLICE_MS,
} from './bounds.js';
import { ChartLayoutError, ChartRenderer } from './chart-layout.js';
import type { StreamedDefinition } from './definitions.js';
import { DEFAULT_PORT, HOST, parseOrigin } from './address.js';
import { PAGE_CSS, PAGE_HTML } from './document.js';
import { LiveHub } from './live.js';
import { CATALOG_NAMES, catalogView, PlaygroundCommandError, PlaygroundSession, zodMessage } from './playground.js';
import type { ChartResponse, ErrorResponse, InfoResponse, LiveMessage, LogEntry, ReplayResponse } from './protocol.js';
import { replayRun, runTotals, type ReplayRunTotals } from './replay.js';
import { TranscriptError } from '../errors/transcript-error.js';

/** Largest request body (a transcript file), bytes. */
export const MAX_BODY_BYTES = 32 * 1024 * 1024;
/**
 * Deepest nesting of arrays and objects a request body may have; deeper
 * bodies (which would overflow the stack when written back as JSON) are
 * refused with 400 before they are parsed.
 */
export const MAX_BODY_DEPTH = MAX_JSON_DEPTH;
/** Largest inspection message, bytes (bounds.ts; re-exported here, where it was first defined). */
export { MAX_INSPECTION_BYTES };

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
  /**
   * Origins besides the server's own that may use the HTTP API and stream
   * to `/inspect` from a browser, e.g. `http://localhost:5173` (scheme, host
   * and port; no path). The server sends no CORS headers, so a page on such
   * an origin can stream its actors, not read the API.
   */
  allowedOrigins?: string[];
  /**
   * Where the server logs what it dropped (one line, no newline, per kind of
   * drop); default standard error.
   */
  log?: (line: string) => void;
  /** The time limit of one chart layout, ms; default `CHART_LAYOUT_TIMEOUT_MS` (bounds.ts). */
  chartTimeoutMs?: number;
}

/** What a running visualizer keeps, for monitoring and tests. */
export interface VisualizerStats {
  /** Live sessions kept (at most `MAX_LIVE_SESSIONS`). */
  liveSessions: number;
  /** Streamed machine definitions kept (at most `MAX_DEFINITIONS`), and their total size in UTF-8 bytes. */
  definitions: number;
  definitionBytes: number;
  /** Pages connected to the `/live` WebSocket now. */
  liveClients: number;
  /** Playground sessions kept (at most `MAX_PLAYGROUND_SESSIONS`). */
  playgroundSessions: number;
  /** Inspection messages, views and connections dropped so far, by kind (`slow live page`: a page disconnected for not reading). */
  dropped: Record<string, number>;
}

/** A running visualizer. */
export interface VisualizerServer {
  /** `http://127.0.0.1:<port>/` */
  url: string;
  port: number;
  /** `ws://127.0.0.1:<port>/inspect`, for `createWebSocketInspector({ url })`. */
  inspectUrl: string;
  /** What the server keeps now, and what it dropped. */
  stats(): VisualizerStats;
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
  if (jsonTextDepth(text, MAX_BODY_DEPTH) > MAX_BODY_DEPTH) {
    throw new HttpError(400, `the request body is nested more than ${MAX_BODY_DEPTH} arrays or objects deep`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new HttpError(400, `the request body is not JSON: ${(error as Error).message}`);
  }
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
/** Runs whose totals (summary, refused steps) the server keeps for paging; the oldest goes. */
const MAX_KEPT_RUN_TOTALS = 2_000;

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
 * @throws PortInUseError when the port is taken; TypeError when an entry of
 *   `allowedOrigins` is not an origin; Error when the config or a machine it
 *   lists cannot be loaded.
 */
export async function startVisualizer(options: VisualizerOptions = {}): Promise<VisualizerServer> {
  const allowedOrigins = (options.allowedOrigins ?? []).map(parseOrigin);
  const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const drops = new DropLog(log);
  const renderer = new ChartRenderer({ timeoutMs: options.chartTimeoutMs });
  const configPath = options.configPath ?? join(PACKAGE_ROOT, 'stately.config.json');
  const machines = await loadMachines(configPath);
  const descriptions = new Map((await readStatelyConfig(configPath)).machines.map((m) => [m.id, m.description ?? '']));
  const charts = new Map<string, Promise<ChartResponse>>();
  // Charts of streamed definitions live as long as their definition.
  const streamedCharts = new WeakMap<StreamedDefinition, Promise<ChartResponse>>();
  const playground = new Map<string, PlaygroundSession>();
  const replays = new Map<string, { source: string; runs: TranscriptRun[] }>([['demo', { source: DEMO_SOURCE, runs: demoRuns() }]]);
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
  /** No Origin (a local program), the server's own, or an allowed one. */
  const originAllowed = (origin: string | undefined) =>
    origin === undefined || origins().includes(origin) || allowedOrigins.includes(origin);
  const forbiddenOrigin = (origin: string) =>
    `origin '${origin}' may not use this server: it accepts its own origin (${origins().join(', ')})${
      allowedOrigins.length ? `, ${allowedOrigins.join(', ')}` : ''
    } and programs that send no Origin; allow another with --allow-origin <origin>`;

  /** Lays out a machine's chart, both SVGs, in the layout worker. */
  function layout(machine: AnyStateMachine): Promise<ChartResponse> {
    return Promise.all([renderer.render(toDot(machine)), renderer.render(toDot(machine, { descriptions: false }))]).then(
      ([svg, compactSvg]) => ({ chart: chartOf(machine), svg, compactSvg }),
    );
  }

  async function chart(machineId: string): Promise<ChartResponse> {
    const machine = machines.get(machineId);
    const streamed = machine === undefined ? hub.definition(machineId) : undefined;
    if (machine === undefined && streamed === undefined) {
      throw new HttpError(404, `no machine '${machineId}': it is not configured, and no live session streams its definition now`);
    }
    let response = machine !== undefined ? charts.get(machineId) : streamedCharts.get(streamed!);
    if (response === undefined) {
      if (streamed !== undefined && streamed.machine === null) throw new HttpError(422, streamed.tooLarge ?? 'too large to chart');
      response = layout(machine ?? streamed!.machine!);
      if (machine !== undefined) charts.set(machineId, response);
      else streamedCharts.set(streamed!, response);
      // A layout that was busy can be tried again; one that failed otherwise is not redone.
      response.catch((error: unknown) => {
        if (!(error instanceof ChartLayoutError) || error.reason === 'busy' || error.reason === 'closed') {
          if (machine !== undefined) charts.delete(machineId);
          else streamedCharts.delete(streamed!);
        }
      });
    }
    try {
      return await response;
    } catch (error) {
      if (error instanceof ChartLayoutError)
        throw new HttpError(error.reason === 'busy' ? 503 : 422, `the chart of '${machineId}' cannot be drawn: ${error.message}`);
      throw error;
    }
  }

  /**
   * What the audit makes of a transcript, or of a page of one of its runs:
   * bad input the audit refuses (a clock step past the range of dates) is a
   * 400 with its one-line message, as the CLI's exit 2.
   */
  function audited<T>(work: () => T): T {
    try {
      return work();
    } catch (error) {
      if (error instanceof TranscriptError) throw new HttpError(400, error.message);
      throw error;
    }
  }

  // Each run's totals under a catalog, kept from the transcript's summary, so a page replays only up to its end.
  const runTotalsKept = new Map<string, ReplayRunTotals>();
  const keepTotals = (key: string, totals: ReplayRunTotals) => {
    runTotalsKept.delete(key);
    runTotalsKept.set(key, totals);
    if (runTotalsKept.size > MAX_KEPT_RUN_TOTALS) runTotalsKept.delete(runTotalsKept.keys().next().value!);
  };

  function replaySummary(id: string, catalog: BuiltinCatalogName): ReplayResponse {
    const replay = replays.get(id);
    if (replay === undefined) throw new HttpError(404, `no transcript '${id}' is open`);
    const classify = createClassifier(builtinCatalogs[catalog]);
    const runs = audited(() =>
      replay.runs.map((run, index) => {
        const totals = runTotals(run, index, auditRun(run, { classify }));
        keepTotals(`${id}/${index}/${catalog}`, totals);
        return totals.summary;
      }),
    );
    return { id, source: replay.source, runs };
  }

  /** A whole number in `min`..`max` from the query, `fallback` when absent. @throws HttpError 400 otherwise. */
  function queryInteger(url: URL, name: string, fallback: number, min: number, max: number): number {
    const raw = url.searchParams.get(name);
    if (raw === null) return fallback;
    const value = /^\d{1,15}$/.test(raw) ? Number(raw) : NaN;
    if (!(value >= min && value <= max)) throw new HttpError(400, `${name} must be a whole number from ${min} to ${max}`);
    return value;
  }

  function catalogOf(url: URL): BuiltinCatalogName {
    const parsed = catalogParam.safeParse(url.searchParams.get('catalog') ?? 'pulse');
    if (!parsed.success) throw new HttpError(400, `unknown catalog; use one of ${CATALOG_NAMES.join(', ')}`);
    return parsed.data;
  }

  /** A playground session, now the most recently used (the least recently used is evicted first). */
  function playgroundSession(id: string): PlaygroundSession {
    const session = playground.get(id);
    if (session === undefined) throw new HttpError(404, `no playground session '${id}'`);
    playground.delete(id);
    playground.set(id, session);
    return session;
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!hosts().includes(req.headers.host ?? '')) throw new HttpError(421, 'this server answers only to 127.0.0.1 and localhost');
    const url = new URL(req.url ?? '/', `http://${HOST}:${port}`);
    const path = url.pathname;
    // HEAD is GET without a body: Node's response sends the headers (Content-Length included) and drops the body.
    const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET');
    let match: RegExpExecArray | null;
    // The API, reads included: another site's page gets nothing, not even an answer to time.
    if (path.startsWith('/api/') && !originAllowed(req.headers.origin)) throw new HttpError(403, forbiddenOrigin(req.headers.origin!));

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
        session = new PlaygroundSession(`p${++sessionSeq}`, await readJsonBody(req));
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
        let entry: LogEntry;
        try {
          entry = session.apply(command);
        } catch (error) {
          if (error instanceof PlaygroundCommandError) throw new HttpError(400, error.message);
          throw error;
        }
        return sendJson(res, 200, session.toCommandResponse(entry));
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
      const page = {
        from: queryInteger(url, 'from', 0, 0, Math.max(0, run.steps.length)),
        limit: queryInteger(url, 'limit', MAX_REPLAY_PAGE, 1, MAX_REPLAY_PAGE),
      };
      const classify = createClassifier(builtinCatalogs[catalog]);
      const key = `${id}/${index}/${catalog}`;
      const totals = runTotalsKept.get(key) ?? audited(() => runTotals(run, index, auditRun(run, { classify, startAt: 0 })));
      keepTotals(key, totals);
      return sendJson(
        res,
        200,
        audited(() => replayRun(run, index, { classify, catalog, totals }, page)),
      );
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
      if (error instanceof HttpError) return sendJson(res, error.status, { error: error.message } satisfies ErrorResponse);
      sendJson(res, 500, { error: `internal error: ${errorMessage(error)}` } satisfies ErrorResponse);
    });
  });

  // WebSockets: applications' inspectors on /inspect, the page on /live.
  const inspectSockets = new WebSocketServer({ noServer: true, maxPayload: MAX_INSPECTION_BYTES });
  const pageSockets = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  let connectionSeq = 0;
  const changed = new Set<string>();
  let flushing = false;
  /**
   * Sends a page a message unless it has stopped reading: a page with more
   * than `MAX_LIVE_CLIENT_BUFFER_BYTES` waiting is terminated (its buffer
   * freed), counted as a `slow live page`; it reconnects by itself and is
   * sent the current state afresh. False when the page was dropped.
   */
  const sendToPage = (client: WebSocket, data: string): boolean => {
    if (client.readyState !== client.OPEN) return false;
    if (client.bufferedAmount + Buffer.byteLength(data) > MAX_LIVE_CLIENT_BUFFER_BYTES) {
      drops.report(
        'slow live page',
        `a page on /live had ${client.bufferedAmount} bytes unread (at most ${MAX_LIVE_CLIENT_BUFFER_BYTES}); it was disconnected`,
      );
      client.terminate();
      return false;
    }
    client.send(data);
    return true;
  };
  const broadcast = (message: LiveMessage) => {
    const data = JSON.stringify(message);
    for (const client of pageSockets.clients) sendToPage(client, data);
  };
  /** Sends the page every changed session; each step guarded, so one bad session cannot stop the others or the server. */
  const flush = () => {
    flushing = false;
    const ids = [...changed];
    changed.clear();
    try {
      broadcast({ type: 'sessions', sessions: hub.sessions() });
    } catch (error) {
      drops.report('live session list update', errorMessage(error));
    }
    for (const id of ids) {
      try {
        const session = hub.session(id);
        if (session) broadcast({ type: 'session', session });
      } catch (error) {
        drops.report('live session update', errorMessage(error));
      }
    }
  };
  const hub = new LiveHub(
    machines,
    (sessionId) => {
      changed.add(sessionId);
      if (flushing) return;
      flushing = true;
      setImmediate(flush);
    },
    Date.now,
    drops,
  );

  // Inspection messages are read from a queue, a slice of time at a time, so
  // a burst (ws emits every message of a TCP read at once) cannot hold the
  // event loop; while the queue is full, the sending connections are paused.
  // A connection's close is queued too, after its messages.
  const inbox: { connection: number; data: string | null }[] = [];
  const paused = new Set<WebSocket>();
  let reading = false;
  const readInbox = () => {
    const start = performance.now();
    while (inbox.length > 0 && performance.now() - start < MESSAGE_SLICE_MS) {
      const { connection, data } = inbox.shift()!;
      if (data === null) hub.disconnect(connection);
      else hub.receive(connection, data);
    }
    if (inbox.length <= MAX_QUEUED_MESSAGES / 2) {
      for (const socket of paused) socket.resume();
      paused.clear();
    }
    if (inbox.length > 0) setImmediate(readInbox);
    else reading = false;
  };
  const enqueue = (connection: number, data: string | null, socket: WebSocket) => {
    inbox.push({ connection, data });
    if (inbox.length >= MAX_QUEUED_MESSAGES && data !== null && !paused.has(socket)) {
      paused.add(socket);
      socket.pause();
    }
    if (!reading) {
      reading = true;
      setImmediate(readInbox);
    }
  };

  inspectSockets.on('connection', (socket: WebSocket) => {
    const connection = ++connectionSeq;
    socket.on('message', (data, isBinary) => {
      if (isBinary) return drops.report('binary inspection message', 'inspection messages are JSON text');
      // ws hands a text frame over as one Buffer under its default binaryType.
      // eslint-disable-next-line @typescript-eslint/no-base-to-string
      enqueue(connection, data.toString(), socket);
    });
    socket.on('close', () => {
      paused.delete(socket);
      enqueue(connection, null, socket);
    });
    socket.on('error', (error) => {
      drops.report('inspection connection', errorMessage(error)); // e.g. a message over MAX_INSPECTION_BYTES
      socket.terminate();
    });
  });
  // A new page gets the session list, then each session, the next one only
  // once the previous is handed to the network: a page that reads gets them
  // all, however large; one that does not stalls its own greeting.
  pageSockets.on('connection', (socket: WebSocket) => {
    socket.on('error', () => socket.terminate());
    let pending: string[] = [];
    const greetNext = (): void => {
      try {
        while (pending.length > 0 && socket.readyState === socket.OPEN) {
          const session = hub.session(pending.shift()!);
          if (session === undefined) continue; // evicted meanwhile
          const data = JSON.stringify({ type: 'session', session } satisfies LiveMessage);
          if (socket.bufferedAmount + Buffer.byteLength(data) > MAX_LIVE_CLIENT_BUFFER_BYTES && socket.bufferedAmount > 0) {
            pending.unshift(session.sessionId); // wait for what is buffered to go first
            return void setTimeout(greetNext, 100);
          }
          return socket.send(data, (error) => void (error ? undefined : greetNext()));
        }
      } catch (error) {
        drops.report('live page greeting', errorMessage(error));
      }
    };
    try {
      const sessions = hub.sessions();
      if (!sendToPage(socket, JSON.stringify({ type: 'sessions', sessions } satisfies LiveMessage))) return;
      pending = sessions.map((summary) => summary.sessionId);
      greetNext();
    } catch (error) {
      drops.report('live page greeting', errorMessage(error));
    }
  });

  /** Refuses a WebSocket upgrade with an HTTP status, then closes the connection. */
  const refuseUpgrade = (socket: Duplex, status: number, reason: string) => {
    const body = JSON.stringify({ error: reason });
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  };
  server.on('upgrade', (req, socket, head) => {
    socket.on('error', () => socket.destroy());
    const path = new URL(req.url ?? '/', `http://${HOST}`).pathname;
    const origin = req.headers.origin;
    if (!hosts().includes(req.headers.host ?? '')) return refuseUpgrade(socket, 421, 'this server answers only to 127.0.0.1 and localhost');
    if (path === '/inspect') {
      if (!originAllowed(origin)) return refuseUpgrade(socket, 403, forbiddenOrigin(origin!));
      return inspectSockets.handleUpgrade(req, socket, head, (ws) => inspectSockets.emit('connection', ws, req));
    }
    if (path === '/live') {
      if (origin === undefined || !origins().includes(origin)) {
        return refuseUpgrade(socket, 403, `the live channel is the visualizer page's own (${origins().join(', ')})`);
      }
      return pageSockets.handleUpgrade(req, socket, head, (ws) => pageSockets.emit('connection', ws, req));
    }
    refuseUpgrade(socket, 404, `no WebSocket at ${path}`);
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
    stats: () => ({ ...hub.stats(), liveClients: pageSockets.clients.size, playgroundSessions: playground.size, dropped: drops.counted() }),
    close: async () => {
      await renderer.close();
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
