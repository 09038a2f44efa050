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
 * `GET /api/live`, `GET /api/live/:sessionId` (streamed sessions, and with
 * `hooks` the coding agents' hook sessions, id `hook:<file>`). Types: protocol.ts. Every
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
 * Here: the wiring (start, listen, close). The routes are a table in
 * http-routes.ts over the state in server-state.ts; the WebSockets and the
 * live hub are in live-sockets.ts; the Host and Origin checks in origin-policy.ts.
 *
 * Spec: ASSISTANT_SAFETY.md (the machine it shows); DESIGN.md §3.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { AnyStateMachine } from 'xstate';
import { safetyMachine } from '../../machines/safety.machine.js';
// Every parser loaded before the server classifies a call: the replay and the playground judge as the audit does.
import '../classify/eager.js';
import { loadConfiguredMachine, PACKAGE_ROOT, readStatelyConfig } from '../charts/index.js';
import { DEFAULT_PORT, HOST, parseOrigin } from './address.js';
import { DropLog } from './bounds.js';
import { ChartRenderer } from './chart-layout.js';
import { HookSessionWatcher, type HookWatcherOptions } from './hook-watcher.js';
import { answerRequest } from './http-routes.js';
import { LiveSockets } from './live-sockets.js';
import { OriginPolicy } from './origin-policy.js';
import { ServerState } from './server-state.js';

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
  /**
   * Show coding agents' hook sessions live from this hook state directory
   * (`pulse-safety serve --hooks`; `hookStateDirectory()` is the hooks'
   * default): each session file is a live session, updated when the file
   * changes, removed when it goes, shown as unreadable with its code when it
   * cannot be read (hook-watcher.ts). The directory need not exist yet.
   */
  hooks?: HookWatcherOptions;
}

/** What a running visualizer keeps, for monitoring and tests. */
export interface VisualizerStats {
  /** Live sessions kept (at most `MAX_LIVE_SESSIONS`). */
  liveSessions: number;
  /** Hook sessions shown (at most `MAX_HOOK_SESSIONS`; 0 without `hooks`). */
  hookSessions: number;
  /** Whether the hook state directory is watched with `fs.watch` now (false: polled, or no `hooks`). */
  hooksWatched: boolean;
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
 * One visualizer: its state, its WebSockets and the HTTP server that
 * carries both. `startVisualizer` makes one and starts it listening.
 */
class Visualizer {
  private readonly server: Server;
  private readonly state: ServerState;
  private readonly sockets: LiveSockets;
  private readonly drops: DropLog;
  private readonly hooks: HookSessionWatcher | null;

  private constructor(state: ServerState, sockets: LiveSockets, drops: DropLog, hooks: HookSessionWatcher | null) {
    this.state = state;
    this.sockets = sockets;
    this.drops = drops;
    this.hooks = hooks;
    this.server = createServer((req, res) => answerRequest(state, req, res));
    // WebSockets: applications' inspectors on /inspect, the page on /live.
    this.server.on('upgrade', (req, socket, head) => sockets.handleUpgrade(req, socket, head));
  }

  /**
   * A visualizer for `options`, not listening yet.
   *
   * @throws TypeError when an entry of `allowedOrigins` is not an origin;
   *   Error when the config or a machine it lists cannot be loaded;
   *   TranscriptError when `options.transcript` cannot be read.
   */
  static async create(options: VisualizerOptions): Promise<Visualizer> {
    const allowedOrigins = (options.allowedOrigins ?? []).map(parseOrigin);
    const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
    const drops = new DropLog(log);
    const renderer = new ChartRenderer({ timeoutMs: options.chartTimeoutMs });
    const configPath = options.configPath ?? join(PACKAGE_ROOT, 'stately.config.json');
    const machines = await loadMachines(configPath);
    const descriptions = new Map((await readStatelyConfig(configPath)).machines.map((m) => [m.id, m.description ?? '']));
    const access = new OriginPolicy(options.port ?? DEFAULT_PORT, allowedOrigins);
    const sockets = new LiveSockets({ machines, drops, access });
    const state = new ServerState({
      machines,
      descriptions,
      renderer,
      hub: sockets.hub,
      access,
      transcript: options.transcript,
      ...(options.hooks ? { hooksDirectory: options.hooks.directory } : {}),
    });
    const hooks = options.hooks ? new HookSessionWatcher({ ...options.hooks, sink: sockets.hub, drops }) : null;
    return new Visualizer(state, sockets, drops, hooks);
  }

  /** @throws PortInUseError when the port is taken; the server's error otherwise. */
  async listen(): Promise<void> {
    const { server, state } = this;
    const port = state.access.port;
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
    state.access.port = (server.address() as AddressInfo).port;
    // The hook sessions on disk are shown from the first request on.
    await this.hooks?.start();
  }

  stats(): VisualizerStats {
    return {
      ...this.state.hub.stats(),
      hooksWatched: this.hooks?.watching ?? false,
      liveClients: this.sockets.pageClients,
      playgroundSessions: this.state.playground.size,
      dropped: this.drops.counted(),
    };
  }

  async close(): Promise<void> {
    this.hooks?.close();
    await this.state.renderer.close();
    this.sockets.close();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  /** What the caller of `startVisualizer` holds: the addresses, and `stats` and `close` bound to this visualizer. */
  handle(): VisualizerServer {
    const port = this.state.access.port;
    return {
      url: `http://${HOST}:${port}/`,
      port,
      inspectUrl: `ws://${HOST}:${port}/inspect`,
      stats: () => this.stats(),
      close: () => this.close(),
    };
  }
}

/**
 * Starts the visualizer on 127.0.0.1.
 *
 * @throws PortInUseError when the port is taken; TypeError when an entry of
 *   `allowedOrigins` is not an origin; Error when the config or a machine it
 *   lists cannot be loaded.
 */
export async function startVisualizer(options: VisualizerOptions = {}): Promise<VisualizerServer> {
  const visualizer = await Visualizer.create(options);
  await visualizer.listen();
  return visualizer.handle();
}
