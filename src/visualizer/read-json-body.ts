/**
 * The JSON body of a request to the visualizer, read within bounds: its
 * type, its size and its nesting are checked before it is parsed.
 */
import type { IncomingMessage } from 'node:http';
import { jsonTextDepth, MAX_JSON_DEPTH } from './bounds.js';
import { HttpError } from './http-error.js';

/** Largest request body (a transcript file), bytes. */
export const MAX_BODY_BYTES = 32 * 1024 * 1024;
/**
 * Deepest nesting of arrays and objects a request body may have; deeper
 * bodies (which would overflow the stack when written back as JSON) are
 * refused with 400 before they are parsed.
 */
export const MAX_BODY_DEPTH = MAX_JSON_DEPTH;

/**
 * The request's body parsed as JSON; `{}` when it is empty or blank.
 *
 * @throws HttpError 415 when the body is not sent as `application/json` (so
 *   another site's form cannot post to the server); 413 past
 *   `MAX_BODY_BYTES`; 400 when nested deeper than `MAX_BODY_DEPTH` or not JSON.
 */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
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
