/**
 * The visualizer's WebSockets: applications' inspectors stream their actors
 * to `/inspect` (`@statelyai/inspect`), the live hub reads them, and the
 * page on `/live` is sent the sessions as they change. Both channels are
 * bounded: inspection messages are read a slice of time at a time and the
 * senders paused while the queue is full; a page that stops reading is
 * disconnected (bounds.ts).
 *
 * Who may connect: the upgrade must be addressed to 127.0.0.1 or localhost;
 * `/inspect` takes the origins `OriginPolicy.allows`, `/live` only the
 * server's own.
 */
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AnyStateMachine } from 'xstate';
import { WebSocketServer, type WebSocket } from 'ws';
import { HOST } from './address.js';
import {
  errorMessage,
  MAX_INSPECTION_BYTES,
  MAX_LIVE_CLIENT_BUFFER_BYTES,
  MAX_QUEUED_MESSAGES,
  MESSAGE_SLICE_MS,
  type DropLog,
} from './bounds.js';
import { LiveHub } from './live.js';
import type { OriginPolicy } from './origin-policy.js';
import type { LiveMessage } from './protocol.js';

/** Largest message the page may send on `/live`, bytes. */
const MAX_PAGE_MESSAGE_BYTES = 64 * 1024;

/** What `LiveSockets` is made of. */
export interface LiveSocketsParts {
  /** The configured machines by id, for the hub. */
  machines: ReadonlyMap<string, AnyStateMachine>;
  /** Where dropped messages, views and connections are counted and logged. */
  drops: DropLog;
  /** The Host and Origin checks of the server the sockets are upgraded from. */
  access: OriginPolicy;
}

/** Refuses a WebSocket upgrade with an HTTP status, then closes the connection. */
function refuseUpgrade(socket: Duplex, status: number, reason: string): void {
  const body = JSON.stringify({ error: reason });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** The `/inspect` and `/live` WebSockets of one server, and the live hub between them. */
export class LiveSockets {
  /** The sessions the inspectors stream. */
  readonly hub: LiveHub;
  private readonly drops: DropLog;
  private readonly access: OriginPolicy;
  private readonly inspectSockets = new WebSocketServer({ noServer: true, maxPayload: MAX_INSPECTION_BYTES });
  private readonly pageSockets = new WebSocketServer({ noServer: true, maxPayload: MAX_PAGE_MESSAGE_BYTES });
  private connectionSeq = 0;
  /** Sessions changed since the pages were last sent them. */
  private readonly changed = new Set<string>();
  private flushing = false;
  // Inspection messages are read from a queue, a slice of time at a time, so
  // a burst (ws emits every message of a TCP read at once) cannot hold the
  // event loop; while the queue is full, the sending connections are paused.
  // A connection's close is queued too, after its messages.
  private readonly inbox: { connection: number; data: string | null }[] = [];
  private readonly paused = new Set<WebSocket>();
  private reading = false;

  constructor(parts: LiveSocketsParts) {
    this.drops = parts.drops;
    this.access = parts.access;
    this.hub = new LiveHub(parts.machines, (sessionId) => this.sessionChanged(sessionId), Date.now, parts.drops);
    this.inspectSockets.on('connection', (socket: WebSocket) => this.inspector(socket));
    this.pageSockets.on('connection', (socket: WebSocket) => this.greet(socket));
  }

  /** Pages connected to `/live` now. */
  get pageClients(): number {
    return this.pageSockets.clients.size;
  }

  /**
   * Takes over an HTTP upgrade (the server's `upgrade` event): `/inspect`
   * for the origins the policy allows, `/live` for the server's own; any
   * other request is refused with 421, 403 or 404 and `{ error }`.
   */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    const path = new URL(req.url ?? '/', `http://${HOST}`).pathname;
    const origin = req.headers.origin;
    if (!this.access.hostAllowed(req.headers.host))
      return refuseUpgrade(socket, 421, 'this server answers only to 127.0.0.1 and localhost');
    if (path === '/inspect') {
      if (!this.access.allows(origin)) return refuseUpgrade(socket, 403, this.access.forbidden(origin!));
      return this.inspectSockets.handleUpgrade(req, socket, head, (ws) => this.inspectSockets.emit('connection', ws, req));
    }
    if (path === '/live') {
      if (!this.access.isOwn(origin)) {
        return refuseUpgrade(socket, 403, `the live channel is the visualizer page's own (${this.access.origins().join(', ')})`);
      }
      return this.pageSockets.handleUpgrade(req, socket, head, (ws) => this.pageSockets.emit('connection', ws, req));
    }
    refuseUpgrade(socket, 404, `no WebSocket at ${path}`);
  }

  /** Terminates every connection and closes both WebSocket servers. */
  close(): void {
    for (const client of [...this.inspectSockets.clients, ...this.pageSockets.clients]) client.terminate();
    this.inspectSockets.close();
    this.pageSockets.close();
  }

  /** Marks a session changed; the pages are sent the changes once the current turn of the event loop ends. */
  private sessionChanged(sessionId: string): void {
    this.changed.add(sessionId);
    if (this.flushing) return;
    this.flushing = true;
    setImmediate(this.flush);
  }

  /**
   * Sends a page a message unless it has stopped reading: a page with more
   * than `MAX_LIVE_CLIENT_BUFFER_BYTES` waiting is terminated (its buffer
   * freed), counted as a `slow live page`; it reconnects by itself and is
   * sent the current state afresh. False when the page was dropped.
   */
  private sendToPage(client: WebSocket, data: string): boolean {
    if (client.readyState !== client.OPEN) return false;
    if (client.bufferedAmount + Buffer.byteLength(data) > MAX_LIVE_CLIENT_BUFFER_BYTES) {
      this.drops.report(
        'slow live page',
        `a page on /live had ${client.bufferedAmount} bytes unread (at most ${MAX_LIVE_CLIENT_BUFFER_BYTES}); it was disconnected`,
      );
      client.terminate();
      return false;
    }
    client.send(data);
    return true;
  }

  private broadcast(message: LiveMessage): void {
    const data = JSON.stringify(message);
    for (const client of this.pageSockets.clients) this.sendToPage(client, data);
  }

  /** Sends the page every changed session; each step guarded, so one bad session cannot stop the others or the server. */
  private readonly flush = (): void => {
    this.flushing = false;
    const ids = [...this.changed];
    this.changed.clear();
    try {
      this.broadcast({ type: 'sessions', sessions: this.hub.sessions() });
    } catch (error) {
      this.drops.report('live session list update', errorMessage(error));
    }
    for (const id of ids) {
      try {
        const session = this.hub.session(id);
        if (session) this.broadcast({ type: 'session', session });
      } catch (error) {
        this.drops.report('live session update', errorMessage(error));
      }
    }
  };

  private readonly readInbox = (): void => {
    const start = performance.now();
    while (this.inbox.length > 0 && performance.now() - start < MESSAGE_SLICE_MS) {
      const { connection, data } = this.inbox.shift()!;
      if (data === null) this.hub.disconnect(connection);
      else this.hub.receive(connection, data);
    }
    if (this.inbox.length <= MAX_QUEUED_MESSAGES / 2) {
      for (const socket of this.paused) socket.resume();
      this.paused.clear();
    }
    if (this.inbox.length > 0) setImmediate(this.readInbox);
    else this.reading = false;
  };

  private enqueue(connection: number, data: string | null, socket: WebSocket): void {
    this.inbox.push({ connection, data });
    if (this.inbox.length >= MAX_QUEUED_MESSAGES && data !== null && !this.paused.has(socket)) {
      this.paused.add(socket);
      socket.pause();
    }
    if (!this.reading) {
      this.reading = true;
      setImmediate(this.readInbox);
    }
  }

  /** Wires an inspector's connection: its text messages and its close go to the queue, in order. */
  private inspector(socket: WebSocket): void {
    const connection = ++this.connectionSeq;
    socket.on('message', (data, isBinary) => {
      if (isBinary) return this.drops.report('binary inspection message', 'inspection messages are JSON text');
      // ws hands a text frame over as one Buffer under its default binaryType.
      // eslint-disable-next-line @typescript-eslint/no-base-to-string
      this.enqueue(connection, data.toString(), socket);
    });
    socket.on('close', () => {
      this.paused.delete(socket);
      this.enqueue(connection, null, socket);
    });
    socket.on('error', (error) => {
      this.drops.report('inspection connection', errorMessage(error)); // e.g. a message over MAX_INSPECTION_BYTES
      socket.terminate();
    });
  }

  // A new page gets the session list, then each session, the next one only
  // once the previous is handed to the network: a page that reads gets them
  // all, however large; one that does not stalls its own greeting.
  private greet(socket: WebSocket): void {
    socket.on('error', () => socket.terminate());
    let pending: string[] = [];
    const greetNext = (): void => {
      try {
        while (pending.length > 0 && socket.readyState === socket.OPEN) {
          const session = this.hub.session(pending.shift()!);
          if (session === undefined) continue; // evicted meanwhile
          const data = JSON.stringify({ type: 'session', session } satisfies LiveMessage);
          if (socket.bufferedAmount + Buffer.byteLength(data) > MAX_LIVE_CLIENT_BUFFER_BYTES && socket.bufferedAmount > 0) {
            pending.unshift(session.sessionId); // wait for what is buffered to go first
            return void setTimeout(greetNext, 100);
          }
          return socket.send(data, (error) => void (error ? undefined : greetNext()));
        }
      } catch (error) {
        this.drops.report('live page greeting', errorMessage(error));
      }
    };
    try {
      const sessions = this.hub.sessions();
      if (!this.sendToPage(socket, JSON.stringify({ type: 'sessions', sessions } satisfies LiveMessage))) return;
      pending = sessions.map((summary) => summary.sessionId);
      greetNext();
    } catch (error) {
      this.drops.report('live page greeting', errorMessage(error));
    }
  }
}
