/**
 * A scripted model server speaking OpenAI's Responses API (`POST
 * /v1/responses`, streamed as server-sent events), for tests that run the
 * real Codex binary against a model of their own: each request the agent
 * sends takes the next turn of the script (function calls, or a text
 * answer), and every request body is recorded, so a test can assert what
 * the model was sent (the tool outputs, a hook's refusal, a stop hook's
 * prompt). Binds 127.0.0.1 on a free port only.
 *
 * Event shapes follow the Responses API's streaming events
 * (`response.created`, `response.output_item.done`, `response.completed`).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One function call the scripted model makes: `arguments` is JSON-encoded for the wire. */
export interface ScriptedCall {
  name: string;
  arguments: unknown;
  /** The call id; default `call_<turn>_<index>`. */
  id?: string;
  /** A freeform (custom) tool call such as Codex's `apply_patch`: `input` is sent as is instead of `arguments`. */
  custom?: boolean;
}

/** One answer of the scripted model: its function calls (run in one batch), or a final text. */
export type ScriptedTurn = { calls: ScriptedCall[] } | { text: string };

/**
 * The script: a list of turns taken in order, or a function of the request
 * body and the turn's index (0-based) that returns the turn. After the list
 * ends, every request is answered with the text `done`.
 */
export type Script = ScriptedTurn[] | ((body: ResponsesRequest, index: number) => ScriptedTurn);

/** The parts of a Responses request body the tests read. */
export interface ResponsesRequest {
  model?: string;
  input?: ResponsesInputItem[];
  tools?: { type: string; name?: string }[];
  [key: string]: unknown;
}

/** One item of a Responses request's `input`: messages, function calls and their outputs. */
export interface ResponsesInputItem {
  type?: string;
  role?: string;
  content?: unknown;
  call_id?: string;
  name?: string;
  arguments?: string;
  input?: string;
  output?: unknown;
  [key: string]: unknown;
}

/** A running scripted server. */
export interface ScriptedOpenAIServer {
  /** The base URL for an OpenAI-compatible provider: `http://127.0.0.1:<port>/v1`. */
  readonly baseUrl: string;
  /** Every `POST /v1/responses` body, in order of arrival. */
  readonly requests: ResponsesRequest[];
  /** Requests to other paths (method and path), for diagnosis. */
  readonly otherRequests: string[];
  /** Stops the server (idempotent). */
  close(): Promise<void>;
}

/** The text of a tool output item, whatever shape the agent sent it in (a string, or content parts). */
export function outputText(item: ResponsesInputItem): string {
  const output = item.output;
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return output.map((part: { text?: unknown }) => (typeof part?.text === 'string' ? part.text : '')).join('');
  if (output && typeof output === 'object' && typeof (output as { content?: unknown }).content === 'string') {
    return (output as { content: string }).content;
  }
  return JSON.stringify(output ?? null);
}

/** The output the agent sent back for call `callId` in `request`, or undefined. */
export function toolOutput(request: ResponsesRequest, callId: string): string | undefined {
  const item = (request.input ?? []).find(
    (entry) => (entry.type === 'function_call_output' || entry.type === 'custom_tool_call_output') && entry.call_id === callId,
  );
  return item === undefined ? undefined : outputText(item);
}

/** The texts of the user-role messages of `request` (a stop hook's prompt comes back as one). */
export function userTexts(request: ResponsesRequest): string[] {
  return (request.input ?? [])
    .filter((entry) => entry.type === 'message' && entry.role === 'user')
    .map((entry) =>
      typeof entry.content === 'string'
        ? entry.content
        : Array.isArray(entry.content)
          ? entry.content.map((part: { text?: unknown }) => (typeof part?.text === 'string' ? part.text : '')).join('')
          : '',
    );
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

/** The output items of one turn, in the Responses API's item shapes. */
function itemsOf(turn: ScriptedTurn, index: number): object[] {
  if ('text' in turn) {
    return [
      {
        type: 'message',
        id: `msg_${index}`,
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: turn.text, annotations: [] }],
      },
    ];
  }
  return turn.calls.map((call, i) => {
    const callId = call.id ?? `call_${index}_${i}`;
    if (call.custom === true) {
      return {
        type: 'custom_tool_call',
        id: `ctc_${index}_${i}`,
        status: 'completed',
        call_id: callId,
        name: call.name,
        input: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
      };
    }
    return {
      type: 'function_call',
      id: `fc_${index}_${i}`,
      status: 'completed',
      call_id: callId,
      name: call.name,
      arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
    };
  });
}

function sse(response: ServerResponse, event: string, data: object): void {
  response.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
}

/**
 * Starts a scripted Responses server on 127.0.0.1 (a free port).
 * @throws when the port cannot be bound.
 */
export async function startScriptedOpenAI(script: Script): Promise<ScriptedOpenAIServer> {
  const requests: ResponsesRequest[] = [];
  const otherRequests: string[] = [];
  let turns = 0;
  const server = createServer((request, response) => {
    void (async () => {
      const path = (request.url ?? '').split('?')[0];
      if (request.method !== 'POST' || !path?.endsWith('/responses')) {
        otherRequests.push(`${request.method} ${request.url}`);
        response.writeHead(path?.endsWith('/models') ? 200 : 404, { 'content-type': 'application/json' });
        response.end(path?.endsWith('/models') ? JSON.stringify({ object: 'list', data: [] }) : '{}');
        return;
      }
      const text = await readBody(request);
      let body: ResponsesRequest;
      try {
        body = JSON.parse(text) as ResponsesRequest;
      } catch {
        response.writeHead(400).end('bad json');
        return;
      }
      requests.push(body);
      const index = turns++;
      const turn: ScriptedTurn = typeof script === 'function' ? script(body, index) : (script[index] ?? { text: 'done' });
      const id = `resp_${index}`;
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      const base = { id, object: 'response', created_at: Math.floor(Date.now() / 1000), model: body.model ?? 'scripted' };
      sse(response, 'response.created', { response: { ...base, status: 'in_progress', output: [] } });
      const items = itemsOf(turn, index);
      items.forEach((item, outputIndex) => {
        sse(response, 'response.output_item.added', { output_index: outputIndex, item });
        sse(response, 'response.output_item.done', { output_index: outputIndex, item });
      });
      sse(response, 'response.completed', {
        response: {
          ...base,
          status: 'completed',
          output: items,
          usage: {
            input_tokens: 10,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: 5,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: 15,
          },
        },
      });
      response.end();
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
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    otherRequests,
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      })),
  };
}
