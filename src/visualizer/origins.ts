/**
 * Browser origins the visualizer server accepts besides its own
 * (`VisualizerOptions.allowedOrigins`, `--allow-origin`). Kept apart from
 * server.ts so the CLI can check its options without loading the server.
 */

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
