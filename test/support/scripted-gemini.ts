/**
 * A scripted model server speaking the Gemini API's `generateContent`
 * family (`POST /v1beta/models/<model>:streamGenerateContent?alt=sse`,
 * `:generateContent`, `:countTokens`), for tests that run the real Gemini
 * CLI against a model of their own (`GOOGLE_GEMINI_BASE_URL`): each
 * streamed request takes the next turn of the script (function calls, or a
 * text answer), and every request body is recorded, so a test can assert
 * what the model was sent (function responses, a hook's refusal, an
 * AfterAgent hook's new prompt). Non-streamed requests (the CLI's own
 * helper calls: routing, next-speaker checks) are answered with a neutral
 * JSON text and recorded apart. Binds 127.0.0.1 on a free port only.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One function call the scripted model makes. */
export interface GeminiCall {
  name: string;
  args: Record<string, unknown>;
}

/** One answer of the scripted model: its function calls (one batch), or a final text. */
export type GeminiTurn = { calls: GeminiCall[] } | { text: string };

/** The script: turns in order, or a function of the request and the turn's index. After the list ends, the text `done`. */
export type GeminiScript = GeminiTurn[] | ((body: GeminiRequest, index: number) => GeminiTurn);

/** One part of a Gemini content: text, a function call or a function response. */
export interface GeminiPart {
  text?: string;
  functionCall?: { id?: string; name: string; args?: unknown };
  functionResponse?: { id?: string; name: string; response?: Record<string, unknown> };
  [key: string]: unknown;
}

/** The parts of a `generateContent` request body the tests read. */
export interface GeminiRequest {
  contents?: { role?: string; parts?: GeminiPart[] }[];
  [key: string]: unknown;
}

/** A running scripted server. */
export interface ScriptedGeminiServer {
  /** The base URL for `GOOGLE_GEMINI_BASE_URL`: `http://127.0.0.1:<port>`. */
  readonly baseUrl: string;
  /** Every streamed request body (the agent's turns), in order of arrival. */
  readonly requests: GeminiRequest[];
  /** Every other request: method, path and body, for diagnosis. */
  readonly otherRequests: { path: string; body: unknown }[];
  /** Stops the server (idempotent). */
  close(): Promise<void>;
}

/** Every function response in `request`, in order (name and response object). */
export function functionResponses(request: GeminiRequest): { name: string; response: Record<string, unknown> }[] {
  return (request.contents ?? []).flatMap((content) =>
    (content.parts ?? []).flatMap((part) =>
      part.functionResponse ? [{ name: part.functionResponse.name, response: part.functionResponse.response ?? {} }] : [],
    ),
  );
}

/** The texts of the user-role contents of `request` (an AfterAgent hook's reason comes back as one). */
export function userTexts(request: GeminiRequest): string[] {
  return (request.contents ?? [])
    .filter((content) => content.role === 'user')
    .flatMap((content) => (content.parts ?? []).flatMap((part) => (typeof part.text === 'string' ? [part.text] : [])));
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

const USAGE = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 };

/** A `GenerateContentResponse` with `parts` as the model's content. */
function responseOf(parts: object[]): object {
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: USAGE,
    modelVersion: 'scripted',
  };
}

/**
 * Starts a scripted Gemini API server on 127.0.0.1 (a free port).
 * @throws when the port cannot be bound.
 */
export async function startScriptedGemini(script: GeminiScript): Promise<ScriptedGeminiServer> {
  const requests: GeminiRequest[] = [];
  const otherRequests: { path: string; body: unknown }[] = [];
  let turns = 0;
  const server = createServer((request, response) => {
    void (async () => {
      const path = (request.url ?? '').split('?')[0] ?? '';
      const text = await readBody(request);
      let body: unknown;
      try {
        body = text === '' ? null : JSON.parse(text);
      } catch {
        body = text;
      }
      if (request.method === 'POST' && path.endsWith(':streamGenerateContent')) {
        const turnBody = (body ?? {}) as GeminiRequest;
        requests.push(turnBody);
        const index = turns++;
        const turn = typeof script === 'function' ? script(turnBody, index) : (script[index] ?? { text: 'done' });
        const parts =
          'text' in turn ? [{ text: turn.text }] : turn.calls.map((call) => ({ functionCall: { name: call.name, args: call.args } }));
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(`data: ${JSON.stringify(responseOf(parts))}\r\n\r\n`);
        response.end();
        return;
      }
      otherRequests.push({ path: `${request.method} ${path}`, body });
      response.writeHead(200, { 'content-type': 'application/json' });
      if (path.endsWith(':countTokens')) {
        response.end(JSON.stringify({ totalTokens: 10 }));
      } else if (path.endsWith(':generateContent')) {
        // The CLI's helper calls ask for JSON (routing, next speaker): an answer that ends the turn.
        response.end(
          JSON.stringify(
            responseOf([
              {
                text: JSON.stringify({
                  reasoning: 'scripted',
                  next_speaker: 'user',
                  model_choice: 'flash',
                  complexity_reasoning: 'scripted',
                  complexity_score: 10,
                }),
              },
            ]),
          ),
        );
      } else {
        response.end('{}');
      }
    })().catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500);
      response.end(String(error));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    otherRequests,
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      })),
  };
}
