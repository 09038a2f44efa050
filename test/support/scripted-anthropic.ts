/**
 * A scripted Anthropic Messages API for tests that run a real agent (Claude
 * Code) offline: an HTTP server on 127.0.0.1 (a free port) that answers
 * `POST /v1/messages` with the next turn of a script, streamed as
 * server-sent events (`message_start`, `content_block_start` / `_delta` /
 * `_stop`, `message_delta`, `message_stop`) or as one JSON message when the
 * request does not ask for a stream, and records every request it got, so a
 * test can assert what the model saw (a `tool_result` with `is_error` and
 * the hook's reason, a stop hook's feedback).
 *
 * Which requests are the agent's turns: those that offer tools (Claude Code
 * 2.1.332 sends its tool list with every turn of the main loop). A request
 * without tools (a side request: a title, a summary) gets a short text and
 * does not use up the script; `POST /v1/messages/count_tokens` gets a token
 * count; any other path gets `{}`. When the script runs out, every turn is
 * a final text (`whenDone`).
 *
 * Point Claude Code at it with `ANTHROPIC_BASE_URL=<url>`,
 * `ANTHROPIC_API_KEY=<anything>`, `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`.
 * Wire format: Anthropic's Messages API ("Streaming messages").
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A block of a scripted assistant turn: text, or a tool call (`id` defaults to `toolu_scripted_<n>`). */
export type ScriptedBlock =
  { type: 'text'; text: string } | { type: 'tool_use'; name: string; input: Record<string, unknown>; id?: string };

/** A request the server got: its path (with the query), method, headers and parsed JSON body (undefined when there was none or it was not JSON). */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: MessagesRequest | undefined;
  /** Whether it was one of the agent's turns (it offered tools), so it took the next turn of the script. */
  turn: boolean;
}

/** The parts of a Messages API request the server reads. */
export interface MessagesRequest {
  model?: string;
  stream?: boolean;
  tools?: { name: string }[];
  messages?: { role: string; content: string | ContentBlock[] }[];
  [field: string]: unknown;
}

/** A content block of a request's message (`text`, `tool_use`, `tool_result`, ...). */
export interface ContentBlock {
  type: string;
  text?: string;
  id?: string;
  tool_use_id?: string;
  is_error?: boolean;
  content?: string | ContentBlock[];
  [field: string]: unknown;
}

/** A turn of the script: its blocks, or a function of the request it answers (and its turn index, from 0). */
export type ScriptedTurn = ScriptedBlock[] | ((request: MessagesRequest, index: number) => ScriptedBlock[]);

/** Options of `startScriptedAnthropic`. */
export interface ScriptedAnthropicOptions {
  /** The agent's turns, in order. */
  script: ScriptedTurn[];
  /** The turn answered once the script ran out (default: the text `Done.`). */
  whenDone?: ScriptedBlock[];
}

/** What a test reads of a tool call's result as the model got it. */
export interface SeenToolResult {
  isError: boolean;
  /** The result's text (text blocks joined by newlines). */
  text: string;
}

/** A running scripted server. */
export interface ScriptedAnthropic {
  /** `http://127.0.0.1:<port>`: the `ANTHROPIC_BASE_URL`. */
  url: string;
  /** Every request, in the order they came. */
  readonly requests: readonly RecordedRequest[];
  /** The requests that were the agent's turns, in order. */
  turns(): RecordedRequest[];
  /** How many turns of the script were served (at most `script.length`). */
  served(): number;
  /** The result of the tool call `toolUseId` as the latest turn that carries it showed it to the model, or undefined. */
  toolResult(toolUseId: string): SeenToolResult | undefined;
  /** Every text the model was shown in turn `index` after the last assistant message of that turn (user text, tool results, system notes), joined. */
  textAfterLastAnswer(index: number): string;
  /** Stops the server (closing its connections). */
  close(): Promise<void>;
}

const DEFAULT_DONE: ScriptedBlock[] = [{ type: 'text', text: 'Done.' }];

/** The text of a message content (string, or its blocks' texts and tool results' texts, newline-joined). */
export function contentText(content: string | ContentBlock[] | undefined): string {
  if (content === undefined) return '';
  if (typeof content === 'string') return content;
  return content
    .map((block) => (typeof block.text === 'string' ? block.text : block.type === 'tool_result' ? contentText(block.content) : ''))
    .filter((text) => text !== '')
    .join('\n');
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function parseJson(text: string): MessagesRequest | undefined {
  if (text === '') return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as MessagesRequest) : undefined;
  } catch {
    return undefined;
  }
}

function sendJson(response: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  response.end(body);
}

/** The assistant message of a turn, as the non-streaming API returns it. */
function message(id: string, model: string, blocks: ScriptedBlock[]): Record<string, unknown> {
  const content = blocks.map((block) =>
    block.type === 'text' ? { type: 'text', text: block.text } : { type: 'tool_use', id: block.id, name: block.name, input: block.input },
  );
  return {
    id,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: blocks.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 5 },
  };
}

/** Streams a turn as server-sent events, the way the Messages API does. */
function stream(response: ServerResponse, whole: Record<string, unknown>, blocks: ScriptedBlock[]): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const send = (type: string, data: Record<string, unknown>): void => {
    response.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  };
  send('message_start', { message: { ...whole, content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } } });
  blocks.forEach((block, index) => {
    if (block.type === 'text') {
      send('content_block_start', { index, content_block: { type: 'text', text: '' } });
      send('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } });
    } else {
      send('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
    }
    send('content_block_stop', { index });
  });
  send('message_delta', { delta: { stop_reason: whole.stop_reason, stop_sequence: null }, usage: { output_tokens: 5 } });
  send('message_stop', {});
  response.end();
}

/**
 * Starts a scripted Messages API on 127.0.0.1 (a free port). Each of the
 * agent's turns (a `POST /v1/messages` that offers tools) gets the next turn
 * of the script; tool calls without an id get `toolu_scripted_<n>`.
 */
export async function startScriptedAnthropic(options: ScriptedAnthropicOptions): Promise<ScriptedAnthropic> {
  const requests: RecordedRequest[] = [];
  let next = 0;
  let toolIds = 0;
  let messageIds = 0;

  const turnBlocks = (body: MessagesRequest): ScriptedBlock[] => {
    const step = options.script[next];
    const index = next;
    if (step === undefined) return options.whenDone ?? DEFAULT_DONE;
    next += 1;
    const blocks = typeof step === 'function' ? step(body, index) : step;
    return blocks.map((block) =>
      block.type === 'tool_use' && block.id === undefined ? { ...block, id: `toolu_scripted_${++toolIds}` } : block,
    );
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const path = request.url ?? '/';
    const body = parseJson(await readBody(request));
    const route = path.split('?')[0];
    const isTurn =
      request.method === 'POST' && route === '/v1/messages' && body !== undefined && Array.isArray(body.tools) && body.tools.length > 0;
    requests.push({ method: request.method ?? 'GET', path, headers: request.headers, body, turn: isTurn });
    if (request.method === 'POST' && route === '/v1/messages/count_tokens') return sendJson(response, 200, { input_tokens: 10 });
    if (request.method !== 'POST' || route !== '/v1/messages') return sendJson(response, 200, {});
    if (body === undefined)
      return sendJson(response, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'body is not a JSON object' } });
    const blocks = isTurn ? turnBlocks(body) : [{ type: 'text' as const, text: 'ok' }];
    const whole = message(`msg_scripted_${++messageIds}`, typeof body.model === 'string' ? body.model : 'scripted', blocks);
    if (body.stream === true) return stream(response, whole, blocks);
    return sendJson(response, 200, whole);
  };

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) sendJson(response, 500, { type: 'error', error: { type: 'api_error', message: String(error) } });
      else response.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  const turns = (): RecordedRequest[] => requests.filter((request) => request.turn);
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    turns,
    served: () => next,
    toolResult(toolUseId) {
      for (const request of turns().reverse()) {
        for (const entry of request.body?.messages ?? []) {
          if (typeof entry.content === 'string') continue;
          const block = entry.content.find((candidate) => candidate.type === 'tool_result' && candidate.tool_use_id === toolUseId);
          if (block !== undefined) return { isError: block.is_error === true, text: contentText(block.content) };
        }
      }
      return undefined;
    },
    textAfterLastAnswer(index) {
      const messages = turns()[index]?.body?.messages ?? [];
      const lastAnswer = messages.map((entry) => entry.role).lastIndexOf('assistant');
      return messages
        .slice(lastAnswer + 1)
        .map((entry) => contentText(entry.content))
        .join('\n');
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
