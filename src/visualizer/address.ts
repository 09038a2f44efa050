/**
 * Where the visualizer listens (127.0.0.1 and its default port) and which
 * browser origins it accepts besides its own (`VisualizerOptions.allowedOrigins`,
 * `--allow-origin`). Kept apart from server.ts so the CLI can check its options
 * without loading the server, and so the two never import each other.
 */

/** The only interface the visualizer binds: loopback, never a public address. */
export const HOST = '127.0.0.1';

/** The port `serve` and `demo` use unless told otherwise. */
export const DEFAULT_PORT = 4310;

/**
 * An origin as given to `allowedOrigins` or `--allow-origin`, normalised as
 * browsers send it in the Origin header (`new URL(origin).origin`: lower-case
 * host, default port left out), e.g. `http://localhost:5173`.
 *
 * @throws TypeError when it is not an http(s) origin: a scheme, a host, an
 *   optional port, and no path, query, fragment or credentials.
 */
export function parseOrigin(origin: string): string {
  let url: URL | null = null;
  try {
    url = new URL(origin);
  } catch {
    // reported below
  }
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:') || !/^https?:\/\/[^/@?#\\]+\/?$/i.test(origin)) {
    throw new TypeError(`'${origin}' is not an origin: give a scheme, host and port only, e.g. http://localhost:5173`);
  }
  return url.origin;
}
