/**
 * Who may talk to the visualizer: the Host a request is addressed to
 * (127.0.0.1 or localhost, against DNS rebinding) and the Origin it comes
 * from (none, the server's own, or one of `allowedOrigins`). The HTTP routes
 * and the WebSocket upgrades ask the same policy, so both refuse alike.
 */
import { HOST } from './address.js';

/** The Host and Origin checks of one server; `port` is the port it listens on (set once it does). */
export class OriginPolicy {
  /** The server's port; the requested one until the server listens, then the one it got. */
  port: number;
  private readonly allowedOrigins: readonly string[];

  /**
   * @param port the port requested (0 until the server knows the one it got).
   * @param allowedOrigins origins besides the server's own, normalised by `parseOrigin`.
   */
  constructor(port: number, allowedOrigins: readonly string[]) {
    this.port = port;
    this.allowedOrigins = allowedOrigins;
  }

  /** The server's own origins: `http://127.0.0.1:<port>`, `http://localhost:<port>`. */
  origins(): string[] {
    return [`http://${HOST}:${this.port}`, `http://localhost:${this.port}`];
  }

  /** Whether a request's Host header names this server (127.0.0.1 or localhost, with its port). */
  hostAllowed(host: string | undefined): boolean {
    return [`${HOST}:${this.port}`, `localhost:${this.port}`].includes(host ?? '');
  }

  /** Whether `origin` is one of the server's own (a request without Origin is not). */
  isOwn(origin: string | undefined): boolean {
    return origin !== undefined && this.origins().includes(origin);
  }

  /** No Origin (a local program), the server's own, or an allowed one. */
  allows(origin: string | undefined): boolean {
    return origin === undefined || this.origins().includes(origin) || this.allowedOrigins.includes(origin);
  }

  /** The error message for an `origin` that `allows` refuses. */
  forbidden(origin: string): string {
    return `origin '${origin}' may not use this server: it accepts its own origin (${this.origins().join(', ')})${
      this.allowedOrigins.length ? `, ${this.allowedOrigins.join(', ')}` : ''
    } and programs that send no Origin; allow another with --allow-origin <origin>`;
  }
}
