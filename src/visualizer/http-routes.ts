/**
 * The visualizer's HTTP routes, as a table read top to bottom: the first
 * route whose method and path match answers; none is a 404. Before the
 * table, every request is checked for its Host (421 unless 127.0.0.1 or
 * localhost with the server's port) and, under `/api/`, for its Origin
 * (403; reads included, so another site's page gets nothing, not even an
 * answer to time). The routes and their JSON types: server.ts, protocol.ts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { RECOVERY_TTL_MS } from '../../machines/safety.policy.js';
import { TOOL_KINDS } from '../../machines/safety.types.js';
import { AUDIT_POLICIES, DEFAULT_AUDIT_POLICY, type AuditPolicy } from '../audit/audit.js';
import { AUTO_CATALOG } from '../audit/catalog-choice.js';
import { readTranscript, TRANSCRIPT_FORMATS, type TranscriptRun } from '../audit/transcripts/index.js';
import { TranscriptError } from '../errors/transcript-error.js';
import { HOST } from './address.js';
import { errorMessage, MAX_REPLAY_PAGE } from './bounds.js';
import { PAGE_CSS, PAGE_HTML } from './document.js';
import { HttpError } from './http-error.js';
import { pageScript } from './page-script.js';
import { CATALOG_NAMES, catalogView, PlaygroundCommandError, zodMessage } from './playground.js';
import type { ErrorResponse, InfoResponse, LogEntry, ReplaySettings } from './protocol.js';
import { readJsonBody } from './read-json-body.js';
import { send, SECURITY_HEADERS, sendJson } from './send.js';
import type { ServerState } from './server-state.js';

/** One request as a route sees it. */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  /** The request's method, `GET` for `HEAD` (Node's response sends HEAD's headers and drops the body). */
  method: string;
  /** The pattern's captures, raw (still percent-encoded): `params[0]` is the first group. */
  params: string[];
}

/** A route: `method` (`*` for any) and `pattern` (a path, or a RegExp over the whole path) that `handler` answers. */
interface Route {
  method: 'GET' | 'POST' | '*';
  pattern: string | RegExp;
  handler: (state: ServerState, exchange: Exchange) => void | Promise<void>;
}

const policyParam = z.enum(AUDIT_POLICIES as [AuditPolicy, ...AuditPolicy[]]);
const openSchema = z.strictObject({
  text: z.string(),
  source: z.string().trim().min(1).max(500),
  /** As the query's `catalog`: `auto`, a shipped catalog, or an opened catalog file's id. */
  catalog: z.string().max(200).optional(),
  policy: policyParam.optional(),
  strictFailedWrites: z.boolean().optional(),
});
const catalogFileSchema = z.strictObject({ text: z.string(), source: z.string().trim().min(1).max(500) });

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

/** What a query parameter may hold: a whole number in `min`..`max`, `fallback` when absent. */
interface IntegerRange {
  fallback: number;
  min: number;
  max: number;
}

/** The query parameter `name` as a whole number in its range. @throws HttpError 400 otherwise. */
function queryInteger(url: URL, name: string, range: IntegerRange): number {
  const raw = url.searchParams.get(name);
  if (raw === null) return range.fallback;
  const value = /^\d{1,15}$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= range.min && value <= range.max))
    throw new HttpError(400, `${name} must be a whole number from ${range.min} to ${range.max}`);
  return value;
}

/**
 * A replay's settings, each with `pulse-safety audit`'s default: `catalog`
 * `auto`, `policy` `full`, `strictFailedWrites` false.
 *
 * @throws HttpError 400 when the catalog is none the server knows, the
 *   policy none of `AUDIT_POLICIES`, or the flag neither `true` nor `false`.
 */
function replaySettings(
  state: ServerState,
  given: { catalog?: string | null; policy?: string | null; strictFailedWrites?: string | boolean | null },
): ReplaySettings {
  const catalog = given.catalog ?? AUTO_CATALOG;
  if (!state.knowsCatalog(catalog)) {
    throw new HttpError(
      400,
      `unknown catalog '${catalog.slice(0, 200)}'; use ${AUTO_CATALOG}, one of ${CATALOG_NAMES.join(', ')}, or an opened catalog file's id`,
    );
  }
  const policy = policyParam.safeParse(given.policy ?? DEFAULT_AUDIT_POLICY);
  if (!policy.success) throw new HttpError(400, `unknown policy; use one of ${AUDIT_POLICIES.join(', ')}`);
  const strict = given.strictFailedWrites ?? false;
  if (strict !== true && strict !== false && strict !== 'true' && strict !== 'false') {
    throw new HttpError(400, 'strictFailedWrites must be true or false');
  }
  return { catalog, policy: policy.data, strictFailedWrites: strict === true || strict === 'true' };
}

/** A replay's settings from the query (`?catalog=&policy=&strictFailedWrites=`); see `replaySettings`. */
function settingsOf(state: ServerState, url: URL): ReplaySettings {
  const query = url.searchParams;
  return replaySettings(state, {
    catalog: query.get('catalog'),
    policy: query.get('policy'),
    strictFailedWrites: query.get('strictFailedWrites'),
  });
}

/** The 404 of a request no route answers. */
function notFound(exchange: Exchange): HttpError {
  return new HttpError(404, `nothing at ${exchange.method} ${exchange.url.pathname}`);
}

/** `GET /`: the page. */
function page(_state: ServerState, { res }: Exchange): void {
  send(res, 200, 'text/html; charset=utf-8', PAGE_HTML);
}

/** `GET /favicon.ico`: none, without a 404 in the browser's console. */
function favicon(_state: ServerState, { res }: Exchange): void {
  res.writeHead(204, SECURITY_HEADERS);
  res.end();
}

/** `GET /assets/visualizer.css`: the page's style sheet. */
function styleSheet(_state: ServerState, { res }: Exchange): void {
  send(res, 200, 'text/css; charset=utf-8', PAGE_CSS);
}

/** `GET /assets/<name>.js`: one of the page's modules. @throws HttpError 404 when there is no such module. */
async function script(_state: ServerState, { res, url, params }: Exchange): Promise<void> {
  const text = await pageScript(params[0]!);
  if (text === null) throw new HttpError(404, `no asset ${url.pathname}`);
  send(res, 200, 'text/javascript; charset=utf-8', text);
}

/** `GET /api/info`: the machines, catalogs and kinds the page offers, and where to stream. */
function info(state: ServerState, { res }: Exchange): void {
  const body: InfoResponse = {
    machines: [...state.machines.values()].map((m) => ({ id: m.id, description: state.descriptions.get(m.id) ?? '' })),
    catalogs: CATALOG_NAMES.map(catalogView),
    kinds: [...TOOL_KINDS],
    inspectUrl: `ws://${HOST}:${state.access.port}/inspect`,
    hooksDirectory: state.hooksDirectory,
    recoveryTtlMs: RECOVERY_TTL_MS,
    formats: [...TRANSCRIPT_FORMATS],
    autoCatalog: AUTO_CATALOG,
    policies: [...AUDIT_POLICIES],
    defaultPolicy: DEFAULT_AUDIT_POLICY,
  };
  sendJson(res, 200, body);
}

/** `GET /api/charts/:machineId`: a machine's chart and its SVGs. */
async function chart(state: ServerState, { res, params }: Exchange): Promise<void> {
  sendJson(res, 200, await state.chart(pathSegment(params[0]!)));
}

/** `POST /api/playground`: a new playground session (201). */
async function openPlayground(state: ServerState, { req, res }: Exchange): Promise<void> {
  // The id is taken before the body is read: a request refused for its body still uses up its number (p1 refused, the next is p2).
  const id = state.nextPlaygroundId();
  const session = state.openPlayground(id, await readJsonBody(req));
  sendJson(res, 201, session.toResponse());
}

/**
 * `GET|POST /api/playground/:id`: a session, or one command applied to it.
 * Any other method finds the session first (404 when there is none), then
 * answers the 404 of no route.
 */
async function playgroundSession(state: ServerState, exchange: Exchange): Promise<void> {
  const { req, res, method, params } = exchange;
  const session = state.playgroundSession(pathSegment(params[0]!));
  if (method === 'GET') return sendJson(res, 200, session.toResponse());
  if (method !== 'POST') throw notFound(exchange);
  const command = await readJsonBody(req);
  let entry: LogEntry;
  try {
    entry = session.apply(command);
  } catch (error) {
    if (error instanceof PlaygroundCommandError) throw new HttpError(400, error.message);
    throw error;
  }
  sendJson(res, 200, session.toCommandResponse(entry));
}

/** `POST /api/catalogs`: opens a catalog file for replays (201), as `pulse-safety audit --catalog <file>` reads one. */
async function openCatalog(state: ServerState, { req, res }: Exchange): Promise<void> {
  const parsed = catalogFileSchema.safeParse(await readJsonBody(req));
  if (!parsed.success) throw new HttpError(400, zodMessage(parsed.error));
  sendJson(res, 201, state.openCatalog(parsed.data.source, parsed.data.text));
}

/** `POST /api/replays`: opens a transcript (201) and answers its summary under the settings given (the audit's defaults). */
async function openReplay(state: ServerState, { req, res }: Exchange): Promise<void> {
  const parsed = openSchema.safeParse(await readJsonBody(req));
  if (!parsed.success) throw new HttpError(400, zodMessage(parsed.error));
  const settings = replaySettings(state, parsed.data);
  let runs: TranscriptRun[];
  try {
    runs = readTranscript(parsed.data.text, parsed.data.source);
  } catch (error) {
    if (error instanceof TranscriptError) throw new HttpError(400, error.message);
    throw error;
  }
  if (runs.length === 0) throw new HttpError(400, `${parsed.data.source}: the transcript has no runs`);
  const id = state.openReplay(parsed.data.source, runs);
  sendJson(res, 201, state.replaySummary(id, settings));
}

/** `GET /api/replays/:id[?catalog=&policy=&strictFailedWrites=]`: an open transcript's summary under those settings. */
function replaySummary(state: ServerState, { res, url, params }: Exchange): void {
  sendJson(res, 200, state.replaySummary(pathSegment(params[0]!), settingsOf(state, url)));
}

/** `GET /api/replays/:id/runs/:n[?catalog=&policy=&strictFailedWrites=&from=<step>&limit=<n>]`: one page of a run's steps. */
function replayRunPage(state: ServerState, { res, url, params }: Exchange): void {
  const id = pathSegment(params[0]!);
  const index = Number(params[1]);
  const run = state.replayRunOf(id, index);
  const settings = settingsOf(state, url);
  const page = {
    from: queryInteger(url, 'from', { fallback: 0, min: 0, max: Math.max(0, run.steps.length) }),
    limit: queryInteger(url, 'limit', { fallback: MAX_REPLAY_PAGE, min: 1, max: MAX_REPLAY_PAGE }),
  };
  sendJson(res, 200, state.replayPage({ id, index, run, settings, page }));
}

/** `GET /api/live`: the live sessions' summaries. */
function liveSessions(state: ServerState, { res }: Exchange): void {
  sendJson(res, 200, state.hub.sessions());
}

/** `GET /api/live/:sessionId`: one live session. @throws HttpError 404 when there is none. */
function liveSession(state: ServerState, { res, params }: Exchange): void {
  const session = state.hub.session(pathSegment(params[0]!));
  if (session === undefined) throw new HttpError(404, 'no such live session');
  sendJson(res, 200, session);
}

/** The routes, in the order they are tried. */
const ROUTES: readonly Route[] = [
  { method: 'GET', pattern: '/', handler: page },
  { method: 'GET', pattern: '/favicon.ico', handler: favicon },
  { method: 'GET', pattern: '/assets/visualizer.css', handler: styleSheet },
  { method: 'GET', pattern: /^\/assets\/([a-z][a-z0-9-]*\.js)$/, handler: script },
  { method: 'GET', pattern: '/api/info', handler: info },
  { method: 'GET', pattern: /^\/api\/charts\/([^/]+)$/, handler: chart },
  { method: 'POST', pattern: '/api/playground', handler: openPlayground },
  { method: '*', pattern: /^\/api\/playground\/([^/]+)$/, handler: playgroundSession },
  { method: 'POST', pattern: '/api/catalogs', handler: openCatalog },
  { method: 'POST', pattern: '/api/replays', handler: openReplay },
  { method: 'GET', pattern: /^\/api\/replays\/([^/]+)$/, handler: replaySummary },
  { method: 'GET', pattern: /^\/api\/replays\/([^/]+)\/runs\/(\d+)$/, handler: replayRunPage },
  { method: 'GET', pattern: '/api/live', handler: liveSessions },
  { method: 'GET', pattern: /^\/api\/live\/([^/]+)$/, handler: liveSession },
];

/** The captures of `pattern` over `path`, or null when it does not match. */
function matchPath(pattern: Route['pattern'], path: string): string[] | null {
  if (typeof pattern === 'string') return pattern === path ? [] : null;
  const match = pattern.exec(path);
  return match === null ? null : match.slice(1);
}

/**
 * Checks a request's Host and Origin, then answers it with the first route
 * that matches.
 *
 * @throws HttpError 421 for another Host; 403 for an `/api/` request from an
 *   origin the server does not accept; 404 when no route matches; any a route throws.
 */
async function route(state: ServerState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (!state.access.hostAllowed(req.headers.host)) throw new HttpError(421, 'this server answers only to 127.0.0.1 and localhost');
  const url = new URL(req.url ?? '/', `http://${HOST}:${state.access.port}`);
  const path = url.pathname;
  // HEAD is GET without a body: Node's response sends the headers (Content-Length included) and drops the body.
  const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET');
  // The API, reads included: another site's page gets nothing, not even an answer to time.
  if (path.startsWith('/api/') && !state.access.allows(req.headers.origin))
    throw new HttpError(403, state.access.forbidden(req.headers.origin!));
  for (const { method: wanted, pattern, handler } of ROUTES) {
    if (wanted !== '*' && wanted !== method) continue;
    const params = matchPath(pattern, path);
    if (params !== null) return handler(state, { req, res, url, method, params });
  }
  throw notFound({ req, res, url, method, params: [] });
}

/**
 * Answers one HTTP request. Never throws: a refusal is answered as
 * `{ error }` with its status, any other error as a 500, and a failure after
 * the headers went out destroys the connection.
 */
export function answerRequest(state: ServerState, req: IncomingMessage, res: ServerResponse): void {
  route(state, req, res).catch((error: unknown) => {
    if (res.headersSent) return res.destroy();
    if (error instanceof HttpError) return sendJson(res, error.status, { error: error.message } satisfies ErrorResponse);
    sendJson(res, 500, { error: `internal error: ${errorMessage(error)}` } satisfies ErrorResponse);
  });
}
