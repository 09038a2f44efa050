/**
 * `pulse-safety mcp-proxy`: the MCP gating proxy (src/adapters/mcp/) as a
 * command, for hosts configured with a server command line.
 *
 * ```
 * pulse-safety mcp-proxy [--catalog F] [--trust] [--no-strict-failed-writes]
 *     [--store sqlite:F] [--log decisions.jsonl] [--session KEY] [--timeout MS]
 *     -- <server command...>
 * pulse-safety mcp-proxy --listen 127.0.0.1:PORT [--max-sessions N]
 *     [--idle-timeout MS] --upstream URL [options]
 * ```
 *
 * The upstream server is a command started over stdio (after `--`) in a
 * process group of its own (`ProcessGroupStdioTransport`), or a Streamable
 * HTTP URL (`--upstream`); the proxy serves its client over stdio, or over
 * Streamable HTTP at `http://127.0.0.1:PORT/mcp` with `--listen` (one
 * upstream connection and one guard per `Mcp-Session-Id`, at most
 * `--max-sessions` at once, each closed after `--idle-timeout` ms without a
 * request; bound to 127.0.0.1 only, Host and Origin checked against DNS
 * rebinding).
 *
 * Lifetime: over stdio the proxy stops when its client closes stdin, on
 * SIGTERM or SIGINT, or when the upstream server goes away. When its client
 * leaves, the upstream's stdin is ended, then its process group gets SIGTERM
 * after 2 s and SIGKILL a second later; on a signal or a refusal to start,
 * the group gets SIGTERM at once and SIGKILL a second later (also for a
 * server still starting, which may never answer); a signal while
 * stopping hurries that along. The proxy waits for the group to be gone, so
 * no process is left behind. Exit codes: 0 stopped by its client or a
 * signal; 1 the upstream failed or went away; 2 bad arguments, catalog or
 * configuration (e.g. no upstream tool is a read without `--trust`: see
 * `AdapterConfigError`).
 *
 * The MCP SDK is an optional peer dependency: it is loaded when the command
 * runs, so the rest of the CLI works without it.
 */
import { appendFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CatalogError } from '../../errors/index.js';
import { createSessionStore, createSqliteStore, type SessionStore } from '../../store/session-store.js';
import type { GatingProxyOptions, McpGateEvent } from '../../adapters/mcp/index.js';
import { InputError, packageVersion, readCatalog, withDefaults, type CommandIo, type CommandSink } from '../io.js';

/** Exit codes of `pulse-safety mcp-proxy`. */
export const MCP_PROXY_EXIT = { stopped: 0, upstreamFailed: 1, badInput: 2 } as const;

/** How long shutdown waits for an upstream process to exit after it was asked to (the SDK escalates to SIGKILL within 4 s). */
const UPSTREAM_EXIT_WAIT_MS = 10_000;

/** The largest request body read before a session exists (the SDK transport's own default limit). */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** `--listen`: `127.0.0.1:PORT`, `:PORT` or `PORT` (0 picks a free port); any other host is refused. */
export function parseListen(value: string): number {
  const match = /^(?:(.*):)?(\d{1,5})$/.exec(value.trim());
  const host = match?.[1];
  const port = Number(match?.[2]);
  if (match === null || (host !== undefined && host !== '' && host !== '127.0.0.1') || !(port <= 65_535)) {
    throw new InvalidArgumentError('expected 127.0.0.1:PORT (the proxy binds to 127.0.0.1 only; PORT 0 picks a free one)');
  }
  return port;
}

/** `--upstream`: an http or https URL. */
export function parseUpstream(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('expected the URL of a Streamable HTTP MCP server, e.g. http://127.0.0.1:3001/mcp');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidArgumentError('expected an http: or https: URL');
  return url;
}

/** `--timeout`: a positive whole number of milliseconds. */
export function parseTimeout(value: string): number {
  const ms = Number(value);
  if (!/^\d+$/.test(value.trim()) || !(ms > 0) || ms > 2_147_483_647) {
    throw new InvalidArgumentError('expected a positive whole number of milliseconds');
  }
  return ms;
}

/** `--max-sessions`: a whole number of sessions, 1 or more. */
export function parseMaxSessions(value: string): number {
  const count = Number(value);
  if (!/^\d+$/.test(value.trim()) || !(count >= 1) || count > 100_000) {
    throw new InvalidArgumentError('expected a whole number of sessions, 1 or more');
  }
  return count;
}

/** Default bounds of the HTTP sessions (`--max-sessions`, `--idle-timeout`): each session keeps an upstream server running. */
export const HTTP_SESSION_DEFAULTS = { maxSessions: 16, idleTimeoutMs: 10 * 60_000 } as const;

/** `--store`: `memory` or `sqlite:<file>`. */
export function parseStore(value: string): { kind: 'memory' } | { kind: 'sqlite'; path: string } {
  if (value === 'memory') return { kind: 'memory' };
  if (value.startsWith('sqlite:') && value.length > 'sqlite:'.length) return { kind: 'sqlite', path: value.slice('sqlite:'.length) };
  throw new InvalidArgumentError('expected memory or sqlite:<file>');
}

interface McpProxyOptions {
  catalog: string;
  trust?: boolean;
  strictFailedWrites?: boolean;
  store: ReturnType<typeof parseStore>;
  log?: string;
  session: string;
  timeout: number;
  listen?: number;
  upstream?: URL;
  /** Over HTTP: the most sessions open (or opening) at once. */
  maxSessions: number;
  /** Over HTTP: a session with no request for this long (milliseconds) is closed, and its upstream with it. */
  idleTimeout: number;
}

/** The SDK's modules, loaded on first use (an optional peer dependency). */
async function loadSdk() {
  try {
    const [gate, client, clientHttp, serverStdio, serverHttp, types] = await Promise.all([
      import('../../adapters/mcp/index.js'),
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
      import('@modelcontextprotocol/sdk/server/stdio.js'),
      import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
      import('@modelcontextprotocol/sdk/types.js'),
    ]);
    return { gate, client, clientHttp, serverStdio, serverHttp, types };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND') {
      throw new InputError('mcp-proxy needs the MCP SDK, an optional peer dependency: npm i @modelcontextprotocol/sdk@^1.32');
    }
    throw error;
  }
}

type Sdk = Awaited<ReturnType<typeof loadSdk>>;

/** A connected upstream client, the end of its connection, and how to end it. */
interface Upstream {
  client: Client;
  /** Resolves when the connection has ended (for a stdio server: its process has exited). */
  closed: Promise<void>;
  /**
   * Ends it gracefully: an HTTP session is terminated; a stdio server's stdin
   * is ended, then its whole process group gets SIGTERM after 2 s and SIGKILL
   * a second later (`ProcessGroupStdioTransport.stop`). Waits for the end.
   */
  close(): Promise<void>;
  /**
   * Ends it now (a signal, a setup failure, an evicted session): a stdio
   * server's process group gets SIGTERM at once and SIGKILL a second later.
   * Waits as `close`.
   */
  terminate(): Promise<void>;
  /** A stdio server's process group gets SIGKILL at once (a second signal: stop without waiting). */
  kill(): void;
}

/** The environment a stdio upstream starts with: the proxy's own (the host configured it for the server). */
function inheritedEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

function waitAtMost(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([promise.then(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]).finally(() =>
    clearTimeout(timer),
  );
}

/**
 * A connection being made that a signal may cancel (`probeUpstream`): the
 * stdio server's transport as soon as it exists (before its process is
 * spawned), so that its process group can be ended while it initializes.
 */
interface Cancellable {
  cancelled: boolean;
  transport?: { stop(options: { graceful: boolean }): Promise<void>; kill(): void };
}

/**
 * Connects a new upstream client: the server command over stdio, or the URL
 * over Streamable HTTP. `starting` is given the stdio transport before it
 * starts (`Cancellable`).
 */
async function connectUpstream(sdk: Sdk, command: string[], options: McpProxyOptions, starting?: Cancellable): Promise<Upstream> {
  const client = new sdk.client.Client(
    { name: 'pulse-safety-mcp-proxy', version: packageVersion() },
    // Declared for the client behind the proxy, which is not known yet: requests it cannot serve are answered with an error.
    { capabilities: { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } } },
  );
  const closed = new Promise<void>((resolve) => {
    client.onclose = () => resolve();
  });
  if (options.upstream !== undefined) {
    const http = new sdk.clientHttp.StreamableHTTPClientTransport(options.upstream);
    await client.connect(http);
    const close = async () => {
      await http.terminateSession().catch(() => {});
      await client.close().catch(() => {});
      await waitAtMost(closed, UPSTREAM_EXIT_WAIT_MS);
    };
    return { client, closed, close, terminate: close, kill: () => void client.close().catch(() => {}) };
  }
  const stdio = new sdk.gate.ProcessGroupStdioTransport({
    command: command[0]!,
    args: command.slice(1),
    env: inheritedEnv(),
  });
  if (starting !== undefined) starting.transport = stdio;
  try {
    await client.connect(stdio);
  } catch (error) {
    await stdio.stop({ graceful: false }); // started, then failed to initialize: nothing of it is left running
    throw error;
  }
  const stop = async (graceful: boolean): Promise<void> => {
    const stopping = stdio.stop({ graceful });
    void client.close().catch(() => {});
    await stopping;
    await waitAtMost(closed, UPSTREAM_EXIT_WAIT_MS);
  };
  return {
    client,
    closed,
    close: () => stop(true),
    terminate: () => stop(false),
    kill: () => stdio.kill(),
  };
}

/**
 * The proxy's SIGTERM and SIGINT handling, installed until `dispose`: the
 * first signal resolves `promise` (stop); while stopping, a signal calls
 * `hurry` with how many came (1: end the servers now, 2 and more: kill
 * them), so the proxy never dies of a signal with a server still running.
 */
function signalled(hurry: (count: number) => void): { promise: Promise<void>; stopping(): void; dispose(): void } {
  let stop: () => void = () => {};
  const promise = new Promise<void>((resolve) => (stop = resolve));
  let stopping = false;
  let count = 0;
  const onSignal = (): void => {
    if (!stopping) {
      stopping = true;
      stop();
      return;
    }
    count += 1;
    hurry(count);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return {
    promise,
    stopping: () => {
      stopping = true;
    },
    dispose() {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    },
  };
}

/** The exit code and message of a failure to set up the gate. */
function setupFailure(sdk: Sdk, error: unknown, err: (text: string) => void): number {
  err(`pulse-safety mcp-proxy: ${(error as Error).message}\n`);
  return error instanceof sdk.gate.AdapterConfigError || error instanceof CatalogError
    ? MCP_PROXY_EXIT.badInput
    : MCP_PROXY_EXIT.upstreamFailed;
}

/** What serving the proxy needs: the SDK, the upstream (a command, or `options.upstream`), the gate's options, and where to write. */
interface ProxyContext {
  sdk: Sdk;
  /** The upstream server's command line; empty with `options.upstream`. */
  command: string[];
  options: McpProxyOptions;
  gateOptions: GatingProxyOptions;
  out: (text: string) => unknown;
  err: (text: string) => void;
}

/**
 * Over stdio: one client, one upstream, one session. A signal while the
 * upstream starts or is checked ends its process group at once (the server
 * may never answer) and the proxy exits 0.
 */
async function serveStdio(context: ProxyContext): Promise<number> {
  const { sdk, err } = context;
  const starting: Cancellable = { cancelled: false };
  let upstream: Upstream | undefined;
  let serving = false;
  const signals = signalled((count) => {
    if (count === 1) void (upstream?.terminate() ?? starting.transport?.stop({ graceful: false }));
    else if (upstream !== undefined) upstream.kill();
    else starting.transport?.kill();
  });
  void signals.promise.then(() => {
    if (serving) return;
    starting.cancelled = true;
    void starting.transport?.stop({ graceful: false });
  });
  try {
    try {
      upstream = await connectUpstream(sdk, context.command, context.options, starting);
    } catch (error) {
      if (starting.cancelled) return MCP_PROXY_EXIT.stopped;
      err(`pulse-safety mcp-proxy: cannot connect to the MCP server (${(error as Error).message})\n`);
      return MCP_PROXY_EXIT.upstreamFailed;
    }
    if (starting.cancelled) {
      await upstream.terminate(); // connected as the signal came: ended now
      return MCP_PROXY_EXIT.stopped;
    }
    let server: Server;
    try {
      server = await sdk.gate.createGatingProxy(upstream.client, context.gateOptions);
    } catch (error) {
      // Refused to start (e.g. no tool can read without --trust): the upstream's process group is ended now, not after a grace period.
      signals.stopping();
      await upstream.terminate();
      return starting.cancelled ? MCP_PROXY_EXIT.stopped : setupFailure(sdk, error, err);
    }
    if (starting.cancelled) {
      await upstream.terminate();
      return MCP_PROXY_EXIT.stopped;
    }
    serving = true;
    server.onerror = (error) => err(`pulse-safety mcp-proxy: ${error.message}\n`);
    const serverClosed = new Promise<void>((resolve) => {
      const proxyOnClose = server.onclose;
      server.onclose = () => {
        proxyOnClose?.();
        resolve();
      };
    });
    const stdinEnded = new Promise<void>((resolve) => {
      process.stdin.once('end', resolve);
      process.stdin.once('close', resolve);
    });
    await server.connect(new sdk.serverStdio.StdioServerTransport());

    const why = await Promise.race([
      stdinEnded.then(() => 'client' as const),
      serverClosed.then(() => 'client' as const),
      signals.promise.then(() => 'signal' as const),
      upstream.closed.then(() => 'upstream' as const),
    ]);
    signals.stopping();
    const ending = why === 'signal' ? upstream.terminate() : upstream.close();
    await server.close().catch(() => {});
    await ending;
    process.stdin.destroy();
    if (why === 'upstream') {
      err('pulse-safety mcp-proxy: the MCP server closed the connection\n');
      return MCP_PROXY_EXIT.upstreamFailed;
    }
    return MCP_PROXY_EXIT.stopped;
  } finally {
    signals.dispose();
  }
}

/** Reads a request body (at most `MAX_BODY_BYTES`) as JSON; undefined when it is not JSON or too long. */
async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}

function jsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/** One session of the HTTP proxy. */
interface HttpSession {
  server: Server;
  upstream: Upstream;
  transport: InstanceType<Sdk['serverHttp']['StreamableHTTPServerTransport']>;
  /** POST and DELETE requests of the session not yet answered: the session is idle only at 0. */
  active: number;
  /** The idle timer, armed while no request is active. */
  idle?: NodeJS.Timeout;
  closed: boolean;
}

/**
 * Checks the configuration once, before listening: the same mistake would
 * otherwise fail every session. Resolves to null when a gating proxy can be
 * set up on the upstream (or `cancel.cancelled` was set: a signal came);
 * else to the exit code, its message written to `err`. Every way it ends,
 * the probe's upstream (its whole process group) is ended: at once when
 * cancelled (the caller also stops `cancel.transport` when the signal comes).
 */
async function probeUpstream(context: ProxyContext, cancel: Cancellable): Promise<number | null> {
  const { sdk, err } = context;
  try {
    const probe = await connectUpstream(sdk, context.command, context.options, cancel);
    if (cancel.cancelled) {
      await probe.terminate(); // it was spawned after the signal's stop: ended now
      return null;
    }
    try {
      await sdk.gate.createGatingProxy(probe.client, context.gateOptions);
    } catch (error) {
      await probe.terminate();
      return cancel.cancelled ? null : setupFailure(sdk, error, err);
    }
    await (cancel.cancelled ? probe.terminate() : probe.close());
  } catch (error) {
    if (cancel.cancelled) return null;
    err(`pulse-safety mcp-proxy: cannot connect to the MCP server (${(error as Error).message})\n`);
    return MCP_PROXY_EXIT.upstreamFailed;
  }
  return null;
}

/**
 * The proxy over Streamable HTTP on 127.0.0.1: its HTTP server and its
 * sessions, a new upstream connection and gating proxy per client session
 * (`Mcp-Session-Id`), each with its own guard. Bounded: at most
 * `--max-sessions` sessions open or opening (an initialize past it is
 * answered 503 with a JSON-RPC error, and starts nothing), and a session
 * with no request for `--idle-timeout` ms is closed with its upstream (its
 * client then gets 404 Session not found, and may initialize again).
 */
class HttpProxy {
  /** Sessions by id, once their initialize request has been answered. */
  private readonly sessions = new Map<string, HttpSession>();
  /** Sessions whose initialize request is being answered. */
  private readonly pending = new Set<HttpSession>();
  /** Initialize requests whose upstream is being started (not yet in `pending`): they hold a place under the bound. */
  private starting = 0;
  /** The upstreams of those requests, being started or checked: `stop` and `hurry` end their process groups. */
  private readonly connecting = new Set<Cancellable>();
  private readonly http: HttpServer;

  /** @param port the port to listen on (0: a free one, then the one bound, from `listen`). */
  constructor(
    private readonly context: ProxyContext,
    private port: number,
  ) {
    this.http = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        context.err(`pulse-safety mcp-proxy: ${(error as Error).message}\n`);
        jsonRpcError(res, 500, -32603, 'Internal error');
      });
    });
  }

  /**
   * Listens on 127.0.0.1 and says where. Resolves to false when it cannot
   * (the port in use, no permission), the message written to `err`.
   */
  async listen(): Promise<boolean> {
    try {
      await new Promise<void>((resolve, reject) => {
        this.http.once('error', reject);
        this.http.listen(this.port, '127.0.0.1', () => resolve());
      });
    } catch (error) {
      this.context.err(
        `pulse-safety mcp-proxy: cannot listen on 127.0.0.1:${this.port} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})\n`,
      );
      return false;
    }
    this.port = (this.http.address() as { port: number }).port;
    this.context.out(`pulse-safety mcp-proxy: listening on http://127.0.0.1:${this.port}/mcp\n`);
    return true;
  }

  /** A signal while stopping: each session's upstream is ended now (the first), or killed (the second and later). */
  hurry(count: number): void {
    for (const session of this.open()) {
      if (count === 1) void session.upstream.terminate();
      else session.upstream.kill();
    }
    for (const starting of this.connecting) {
      if (count === 1) void starting.transport?.stop({ graceful: false });
      else starting.transport?.kill();
    }
  }

  /**
   * Stops listening, drops every connection, and ends every session: its
   * upstream at once, its server closed; an upstream still starting for an
   * initialize request is ended at once too. Waits for all of them.
   */
  async stop(): Promise<void> {
    this.http.close();
    this.http.closeAllConnections();
    const closing = this.open();
    const ending = closing.map((session) => session.upstream.terminate());
    for (const starting of this.connecting) {
      // Its request ends with 503 once the upstream's process group is gone.
      starting.cancelled = true;
      ending.push(starting.transport?.stop({ graceful: false }) ?? Promise.resolve());
    }
    await Promise.all(closing.map((session) => session.server.close().catch(() => {})));
    await Promise.all(ending);
  }

  /** Every session, open or opening. */
  private open(): HttpSession[] {
    return [...new Set([...this.sessions.values(), ...this.pending])];
  }

  /**
   * Runs one HTTP request of a session. A POST or DELETE keeps the session
   * from being idle until it is answered; a GET (the client's standing
   * stream for server messages) only counts when it is opened, so a client
   * that keeps that stream open but sends nothing is idle all the same.
   */
  private async serve(session: HttpSession, req: IncomingMessage, res: ServerResponse, body?: unknown): Promise<void> {
    if (req.method === 'GET') {
      this.armIdle(session);
      await session.transport.handleRequest(req, res, body);
      return;
    }
    session.active += 1;
    clearTimeout(session.idle);
    // 'close' comes once the response is sent, or its connection is gone.
    res.once('close', () => {
      session.active -= 1;
      this.armIdle(session);
    });
    await session.transport.handleRequest(req, res, body);
  }

  /** Arms the session's idle timer when no request of it is active: past `--idle-timeout`, the session and its upstream are closed. */
  private armIdle(session: HttpSession): void {
    clearTimeout(session.idle);
    if (session.active > 0 || session.closed) return;
    session.idle = setTimeout(() => {
      if (session.active > 0 || session.closed) return;
      this.context.err(
        `pulse-safety mcp-proxy: session ${session.transport.sessionId ?? '(initializing)'} closed after ${this.context.options.idleTimeout} ms idle\n`,
      );
      void session.upstream.terminate(); // its process group gets SIGTERM now, not after a grace period
      void session.server.close().catch(() => {});
    }, this.context.options.idleTimeout);
    session.idle.unref();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.refused(req, res)) return;
    const header = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(header) ? header[0] : header;
    if (sessionId !== undefined) {
      const session = this.sessions.get(sessionId);
      if (session === undefined) {
        jsonRpcError(res, 404, -32001, 'Session not found (it was ended, or closed after being idle): initialize a new one');
        return;
      }
      await this.serve(session, req, res);
      return;
    }
    if (req.method !== 'POST') {
      jsonRpcError(res, 400, -32000, 'Bad Request: no Mcp-Session-Id header');
      return;
    }
    const body = await readJson(req);
    if (!this.context.sdk.types.isInitializeRequest(body)) {
      jsonRpcError(res, 400, -32000, 'Bad Request: no Mcp-Session-Id header, and the body is not an initialize request');
      return;
    }
    const { maxSessions, idleTimeout } = this.context.options;
    if (this.open().length + this.starting >= maxSessions) {
      jsonRpcError(
        res,
        503,
        -32000,
        `pulse-safety mcp-proxy: too many sessions (${maxSessions} open, the --max-sessions bound): ` +
          `end one (DELETE /mcp with its Mcp-Session-Id) or wait until one has had no request for ${idleTimeout} ms (--idle-timeout)`,
      );
      return;
    }
    this.starting += 1;
    let started = false;
    try {
      await this.openSession(req, res, body, () => {
        started = true;
        this.starting -= 1;
      });
    } finally {
      if (!started) this.starting -= 1;
    }
  }

  /**
   * Answers a request that is not for this proxy, and says whether it did: a
   * Host other than 127.0.0.1 or localhost at its port, or a cross-origin
   * Origin, is refused (403: DNS rebinding, a web page), a path other than
   * `/mcp` not found (404).
   */
  private refused(req: IncomingMessage, res: ServerResponse): boolean {
    const port = this.port;
    const allowedHosts = [`127.0.0.1:${port}`, `localhost:${port}`];
    if (!allowedHosts.includes(req.headers.host ?? '')) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end('Forbidden: Host must be 127.0.0.1 or localhost\n');
      return true;
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !allowedHosts.some((host) => origin === `http://${host}`)) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end('Forbidden: cross-origin requests are not accepted\n');
      return true;
    }
    if (new URL(req.url ?? '/', `http://127.0.0.1:${port}`).pathname !== '/mcp') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: the MCP endpoint is /mcp\n');
      return true;
    }
    return false;
  }

  /**
   * A new session for an initialize request: its own upstream connection and
   * gating proxy, kept once the initialize succeeds. `held` is called once
   * the session is in `pending` (it counts under the bound from there).
   */
  private async openSession(req: IncomingMessage, res: ServerResponse, body: unknown, held: () => void): Promise<void> {
    const { sdk, err } = this.context;
    // Until the session is in `pending`, a stop finds its upstream here (a server that never answers is ended at once).
    const starting: Cancellable = { cancelled: false };
    this.connecting.add(starting);
    const shuttingDown = () => jsonRpcError(res, 503, -32000, 'pulse-safety mcp-proxy: shutting down');
    let upstream: Upstream;
    try {
      upstream = await connectUpstream(sdk, this.context.command, this.context.options, starting);
    } catch (error) {
      this.connecting.delete(starting);
      if (starting.cancelled) shuttingDown();
      else jsonRpcError(res, 502, -32603, `pulse-safety mcp-proxy: cannot connect to the MCP server (${(error as Error).message})`);
      return;
    }
    let server: Server;
    try {
      if (starting.cancelled) throw new Error('shutting down');
      server = await sdk.gate.createGatingProxy(upstream.client, this.context.gateOptions);
      if (starting.cancelled) throw new Error('shutting down');
    } catch (error) {
      this.connecting.delete(starting);
      await upstream.terminate();
      if (starting.cancelled) shuttingDown();
      else jsonRpcError(res, 500, -32603, `pulse-safety mcp-proxy: ${(error as Error).message}`);
      return;
    }
    server.onerror = (error) => err(`pulse-safety mcp-proxy: ${error.message}\n`);
    const transport = new sdk.serverHttp.StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.sessions.set(id, session);
      },
    });
    const session: HttpSession = { server, upstream, transport, active: 0, closed: false };
    this.pending.add(session);
    this.connecting.delete(starting);
    held();
    const proxyOnClose = server.onclose;
    server.onclose = () => {
      session.closed = true;
      clearTimeout(session.idle);
      proxyOnClose?.(); // closes the upstream connection
      this.pending.delete(session);
      if (transport.sessionId !== undefined) this.sessions.delete(transport.sessionId);
      void upstream.close();
    };
    await server.connect(transport);
    await this.serve(session, req, res, body);
    this.pending.delete(session);
    if (transport.sessionId === undefined) await server.close(); // the initialize failed: nothing to keep
  }
}

/**
 * Over Streamable HTTP on 127.0.0.1 (`HttpProxy`), after checking the
 * configuration once; runs until SIGTERM or SIGINT.
 */
async function serveHttp(context: ProxyContext): Promise<number> {
  // The signals are handled from the start: a signal during the probe ends the probe's server (its process group) and the proxy.
  const probe: Cancellable = { cancelled: false };
  let proxy: HttpProxy | undefined;
  const signals = signalled((count) => {
    if (proxy !== undefined) proxy.hurry(count);
    else if (count === 1) void probe.transport?.stop({ graceful: false });
    else probe.transport?.kill();
  });
  try {
    void signals.promise.then(() => {
      if (proxy !== undefined) return;
      probe.cancelled = true;
      void probe.transport?.stop({ graceful: false });
    });
    const failure = await probeUpstream(context, probe);
    if (probe.cancelled) return MCP_PROXY_EXIT.stopped;
    if (failure !== null) return failure;
    proxy = new HttpProxy(context, context.options.listen!);
    if (!(await proxy.listen())) return MCP_PROXY_EXIT.badInput;
    await signals.promise;
    await proxy.stop();
    return MCP_PROXY_EXIT.stopped;
  } finally {
    signals.dispose();
  }
}

/** Runs the proxy until it stops; resolves to the exit code. */
async function runMcpProxy(command: string[], options: McpProxyOptions, io: CommandSink): Promise<number> {
  if (command.length === 0 && options.upstream === undefined) {
    throw new InputError('name the MCP server: a command after --, or --upstream <url>');
  }
  if (command.length > 0 && options.upstream !== undefined) {
    throw new InputError('give either a server command after -- or --upstream <url>, not both');
  }
  const catalog = readCatalog(options.catalog);
  const strict = options.strictFailedWrites ?? true;
  const sdk = await loadSdk();
  if (options.log !== undefined) {
    try {
      appendFileSync(options.log, '');
    } catch (error) {
      throw new InputError(
        `--log ${options.log}: cannot write the file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      );
    }
  }
  let store: SessionStore;
  try {
    store = createSessionStore({
      ...(options.store.kind === 'sqlite' ? { store: createSqliteStore(options.store.path) } : {}),
      guard: { strictFailedWrites: strict },
    });
  } catch (error) {
    throw new InputError(`--store: ${(error as Error).message}`);
  }
  const log = options.log;
  const gateOptions: GatingProxyOptions = {
    getGuard: (key) => store.session(key),
    sessionKey: options.session,
    catalog,
    trusted: options.trust === true,
    strictFailedWrites: strict,
    timeoutMs: options.timeout,
    ...(log === undefined ? {} : { onEvent: (event: McpGateEvent) => appendFileSync(log, `${JSON.stringify(event)}\n`) }),
  };
  try {
    const context: ProxyContext = { sdk, command, options, gateOptions, out: io.out, err: io.err };
    return options.listen === undefined ? await serveStdio(context) : await serveHttp(context);
  } finally {
    store.close();
  }
}

/** Adds `mcp-proxy` to a commander program. */
export function registerMcpProxyCommand(program: Command, io: CommandIo = {}): Command {
  const sink = withDefaults(io);
  program
    .command('mcp-proxy')
    .description(
      "gate an MCP server's tool calls: a transparent proxy (stdio, or Streamable HTTP with --listen) that refuses writes the safety rules forbid",
    )
    .argument(
      '[command...]',
      'the MCP server to start over stdio, after --, e.g. -- npx -y @modelcontextprotocol/server-filesystem ~/notes',
    )
    .option(
      '--catalog <name|path>',
      "a catalog whose entries override the tools' annotations: a shipped catalog's name or a JSON catalog file",
      'mcp',
    )
    .option('--trust', "trust the server's tool annotations (readOnlyHint: true makes a read; untrusted, every tool is a write)")
    .option('--strict-failed-writes', 'a failed, cancelled or timed-out write needs verification, as it may have applied (the default)')
    .option('--no-strict-failed-writes', "a failed write changes nothing (the spec's rule)")
    .addOption(
      new Option('--store <spec>', 'where sessions are kept: memory, or sqlite:<file> (needs better-sqlite3)')
        .argParser(parseStore)
        .default({ kind: 'memory' }, 'memory'),
    )
    .option('--log <file>', 'append every check and outcome to this JSON Lines file')
    .option('--session <key>', 'the session key of the stdio connection (with --store sqlite, the same key resumes the session)', 'stdio')
    .option('--timeout <ms>', 'timeout of each request forwarded to the server, reset by progress', parseTimeout, 60_000)
    .option(
      '--listen <127.0.0.1:port>',
      'serve Streamable HTTP at http://127.0.0.1:<port>/mcp instead of stdio (one guard per Mcp-Session-Id)',
      parseListen,
    )
    .option('--upstream <url>', 'the MCP server over Streamable HTTP, instead of a command', parseUpstream)
    .option(
      '--max-sessions <n>',
      'with --listen: the most client sessions at once (each keeps its own upstream server); past it, a new session is refused',
      parseMaxSessions,
      HTTP_SESSION_DEFAULTS.maxSessions,
    )
    .option(
      '--idle-timeout <ms>',
      'with --listen: a session with no request for this long is closed, and its upstream server with it',
      parseTimeout,
      HTTP_SESSION_DEFAULTS.idleTimeoutMs,
    )
    .action(async (command: string[], options: McpProxyOptions) => {
      try {
        sink.setExitCode(await runMcpProxy(command, options, sink));
      } catch (error) {
        if (error instanceof InputError || error instanceof CatalogError) {
          sink.err(`pulse-safety mcp-proxy: ${error.message}\n`);
          sink.setExitCode(MCP_PROXY_EXIT.badInput);
          return;
        }
        throw error;
      }
    });
  return program;
}
