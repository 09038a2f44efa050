/**
 * The hook daemon (`pulse-safety hook serve`): one long-lived process that
 * answers hook events over HTTP, so a tool call costs a request instead of a
 * Node process. `POST /hook/<host>` with the host's payload as the body is
 * answered with status 200 and what `pulse-safety hook <host>` would print
 * on stdout (the codec's answer, also an empty body where the host reads
 * silence as "no decision"). The gate and the on-disk sessions are the
 * command hook's (`runHook`), so command hooks and the daemon can be mixed
 * on one session. The parsers are loaded once, at start.
 *
 * Bound to 127.0.0.1 only. A request whose Host header is not
 * `127.0.0.1:<port>` or `localhost:<port>`, or that carries an Origin header
 * (a web page: DNS rebinding), is refused with 403: no agent sends one.
 * What is addressed to a hook route and cannot be answered (a body over
 * `MAX_HOOK_PAYLOAD`, a body that does not arrive in time, an unknown host)
 * is answered 200 with a refusal of a write in the host's format: Claude
 * Code reads a non-2xx answer of an http hook as a non-blocking error, which
 * would let the call run.
 *
 * Spec: issue 25 item 7 (the optional daemon); AGENT_HOOKS.md §1.1 (http hooks).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadAllParsers } from '../classify/parsers.js';
import { codecOf } from './hosts/index.js';
import { lastResort } from './last-resort.js';
import { MAX_HOOK_PAYLOAD, runHook, type RunHookOptions } from './run.js';
import { isHookHost, type HookHost, type HookOutput } from './types.js';

/** The only address the daemon binds. */
export const HOOK_DAEMON_ADDRESS = '127.0.0.1';

/** The port `hook serve` listens on unless told otherwise. */
export const DEFAULT_HOOK_DAEMON_PORT = 4311;

/** How long a request's body may take to arrive, in ms, before it is answered with a refusal. */
export const HOOK_DAEMON_BODY_TIMEOUT_MS = 10_000;

/** Options of `startHookDaemon`. */
export interface HookDaemonOptions extends RunHookOptions {
  /** The port; 0 picks a free one (default `DEFAULT_HOOK_DAEMON_PORT`). */
  port?: number;
  /** The address; only `127.0.0.1` is accepted (the default). */
  host?: string;
  /** The body's deadline in ms (default `HOOK_DAEMON_BODY_TIMEOUT_MS`). */
  bodyTimeoutMs?: number;
}

/** A running daemon: the port it got, its URL, and how to stop it. */
export interface HookDaemon {
  port: number;
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** Stops accepting requests and resolves when the open ones are answered. */
  close(): Promise<void>;
}

/** An address `startHookDaemon` refuses to bind (anything but 127.0.0.1). */
export class HookDaemonAddressError extends Error {
  override readonly name = 'HookDaemonAddressError';
}

/** A refusal of a write for `host`'s before-tool event, with `detail` saying why. */
function refusal(host: HookHost, detail: string): HookOutput {
  try {
    return codecOf(host).write(
      {
        type: 'deny',
        code: 'HOOK_PAYLOAD_INVALID',
        reason: `This call was not run (HOOK_PAYLOAD_INVALID): the safety hook daemon could not read what the agent sent (${detail}), so it cannot tell a read from a change.`,
      },
      null,
    );
  } catch {
    return lastResort(host);
  }
}

function send(response: ServerResponse, status: number, body: string): void {
  if (response.headersSent) return;
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  });
  response.end(body);
}

/** Reads the body as UTF-8, or null when it is over `limit` bytes or does not arrive within `timeoutMs`. */
function readBody(request: IncomingMessage, limit: number, timeoutMs: number): Promise<{ text: string } | { error: string }> {
  return new Promise((resolve) => {
    const declared = Number(request.headers['content-length'] ?? NaN);
    if (Number.isFinite(declared) && declared > limit) {
      resolve({ error: `a payload over ${limit} bytes` });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (result: { text: string } | { error: string }): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(result);
    };
    const timer = setTimeout(() => finish({ error: `no whole payload within ${timeoutMs} ms` }), timeoutMs);
    request.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) finish({ error: `a payload over ${limit} bytes` });
      else chunks.push(chunk);
    });
    request.on('end', () => finish({ text: Buffer.concat(chunks).toString('utf8') }));
    request.on('error', (error) => finish({ error: `the request failed (${error.message})` }));
  });
}

/**
 * Starts the daemon. Loads the parsers first (never rejects for a parser
 * that fails to load: its classifier then fails closed).
 *
 * @throws HookDaemonAddressError when `host` is not 127.0.0.1.
 * @throws Error (the listen error, e.g. `EADDRINUSE`) when the port cannot be had.
 */
export async function startHookDaemon(options: HookDaemonOptions = {}): Promise<HookDaemon> {
  const address = options.host ?? HOOK_DAEMON_ADDRESS;
  if (address !== HOOK_DAEMON_ADDRESS) {
    throw new HookDaemonAddressError(`the hook daemon binds ${HOOK_DAEMON_ADDRESS} only, not '${address}'`);
  }
  const bodyTimeoutMs = options.bodyTimeoutMs ?? HOOK_DAEMON_BODY_TIMEOUT_MS;
  const run: RunHookOptions = {
    ...(options.env === undefined ? {} : { env: options.env }),
    ...(options.stateDir === undefined ? {} : { stateDir: options.stateDir }),
    ...(options.now === undefined ? {} : { now: options.now }),
    ...(options.lockTimeoutMs === undefined ? {} : { lockTimeoutMs: options.lockTimeoutMs }),
  };
  await loadAllParsers();
  let port = options.port ?? DEFAULT_HOOK_DAEMON_PORT;

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const hostHeader = request.headers.host ?? '';
    if (![`${HOOK_DAEMON_ADDRESS}:${port}`, `localhost:${port}`].includes(hostHeader)) {
      send(response, 403, JSON.stringify({ error: `Host '${hostHeader}' is not this daemon (${HOOK_DAEMON_ADDRESS}:${port})` }));
      request.resume();
      return;
    }
    if (request.headers.origin !== undefined) {
      send(response, 403, JSON.stringify({ error: 'requests from web pages (with an Origin header) are refused' }));
      request.resume();
      return;
    }
    const match = /^\/hook\/([^/?#]+)\/?(?:\?.*)?$/.exec(request.url ?? '');
    if (match === null) {
      send(response, 404, JSON.stringify({ error: 'POST /hook/<host>' }));
      request.resume();
      return;
    }
    if (request.method !== 'POST') {
      response.setHeader('allow', 'POST');
      send(response, 405, JSON.stringify({ error: 'POST /hook/<host>' }));
      request.resume();
      return;
    }
    const name = decodeURIComponent(match[1]!);
    // An unknown host is a misconfigured hook: refused as a decision (Claude Code's format, the http hooks' host), never a non-2xx.
    const host: HookHost = isHookHost(name) ? name : 'claude-code';
    const body = await readBody(request, MAX_HOOK_PAYLOAD, bodyTimeoutMs);
    let output: HookOutput;
    if (!isHookHost(name)) output = refusal(host, `no host '${name}'`);
    else if ('error' in body) output = refusal(host, body.error);
    else output = await runHook(host, body.text, run);
    // What is left of a refused body is read and dropped (bounded by the server's request timeout), so the client reads the answer.
    if ('error' in body) request.resume();
    send(response, 200, output.stdout);
  };

  const server: Server = createServer((request, response) => {
    handle(request, response).catch(() => {
      const name = /^\/hook\/([^/?#]+)/.exec(request.url ?? '')?.[1];
      send(response, 200, lastResort(isHookHost(name) ? name : 'claude-code').stdout);
    });
  });
  server.requestTimeout = bodyTimeoutMs + 20_000;
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, address, () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://${address}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

/**
 * The command hook that forwards a payload to the daemon with `curl` and,
 * when the daemon does not answer (stopped, a non-2xx status), runs
 * `fallback` (the process hook) on the same payload, so a stopped daemon
 * never fails open. An empty 200 body passes through as an empty stdout.
 *
 * @param host the host whose route the payload goes to.
 * @param port the daemon's port.
 * @param fallback the process hook's command, e.g. `node …/bin.js hook codex`.
 */
export function daemonForwarderCommand(host: HookHost, port: number, fallback: string): string {
  return `p=$(cat); printf '%s' "$p" | curl -sf --max-time 20 --data-binary @- -H 'content-type: application/json' http://${HOOK_DAEMON_ADDRESS}:${port}/hook/${host} || printf '%s' "$p" | ${fallback}`;
}
