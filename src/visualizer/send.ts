/**
 * Answers of the visualizer's HTTP server: every answer carries the same
 * security headers (a strict Content-Security-Policy, no sniffing, no
 * referrer, no caching), so the page runs only this package's own scripts.
 */
import type { ServerResponse } from 'node:http';

/** The headers of every HTTP answer. */
export const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

/** Answers `body` (UTF-8) as `type` with `status`, its length and the security headers. */
export function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), ...SECURITY_HEADERS });
  res.end(body);
}

/** Answers `value` as JSON with `status`. */
export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value));
}
