/**
 * A scripted model behind the OpenAI Chat Completions API, on 127.0.0.1, for
 * tests that run a real agent binary offline (Copilot CLI's BYOK provider:
 * `COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:<port>/v1`). Each request gets
 * the next scripted turn (tool calls or text), streamed as server-sent events
 * when the request asks for a stream; every request's messages are kept so a
 * test can assert what the model was shown (a refused call's tool message, a
 * refused stop's follow-up).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted call of a tool: its name and arguments. */
export interface ScriptedCall {
  name: string;
  args: Record<string, unknown>;
}

/** One model turn: tool calls, or a text answer. */
export type ScriptedChatTurn = { calls: ScriptedCall[] } | { text: string };

/**
 * One entry of a script: a turn, or a function called when the request for
 * that turn arrives (after the hooks of the previous turn have answered),
 * returning the turn; a test uses it to look at disk between turns.
 */
export type ScriptedChatStep = ScriptedChatTurn | (() => ScriptedChatTurn);

/** A chat message as the agent sent it. */
export interface ChatMessage {
  role: string;
  content?: unknown;
  tool_call_id?: string;
  tool_calls?: unknown[];
}

/** A running scripted model. */
export interface ScriptedChat {
  /** The base URL to give the agent, ending in `/v1`. */
  baseUrl: string;
  /** The messages of every completion request, in order. */
  requests: ChatMessage[][];
  /** The tool definitions of the first request that had some. */
  tools: unknown[];
  close(): Promise<void>;
}

/** The text of a message's content (a string, or the text parts of an array). */
export function textOf(message: ChatMessage): string {
  if (typeof message.content === 'string') return message.content;
  if (Array.isArray(message.content)) {
    return message.content
      .map((part: unknown) => (typeof part === 'object' && part !== null && 'text' in part ? String((part as { text: unknown }).text) : ''))
      .join('');
  }
  return '';
}

/**
 * Starts the model. Requests past the end of `script` get `whenDone`'s text.
 * A step that is a function is called when its request arrives.
 * Binds 127.0.0.1 on a free port.
 */
export async function startScriptedChat(options: { script: ScriptedChatStep[]; whenDone?: string }): Promise<ScriptedChat> {
  const requests: ChatMessage[][] = [];
  const tools: unknown[] = [];
  let turn = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      if (req.method === 'GET' && (req.url ?? '').endsWith('/models')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: [{ id: 'gpt-4.1', object: 'model' }] }));
        return;
      }
      let parsed: { messages?: ChatMessage[]; tools?: unknown[]; stream?: boolean } = {};
      try {
        parsed = JSON.parse(body) as typeof parsed;
      } catch {
        res.writeHead(400).end();
        return;
      }
      requests.push(parsed.messages ?? []);
      if (tools.length === 0 && Array.isArray(parsed.tools)) tools.push(...parsed.tools);
      const entry = options.script[turn] ?? { text: options.whenDone ?? 'Done.' };
      const step: ScriptedChatTurn = typeof entry === 'function' ? entry() : entry;
      const n = ++turn;
      const toolCalls =
        'calls' in step
          ? step.calls.map((call, i) => ({
              id: `call_${n}_${i}`,
              type: 'function',
              function: { name: call.name, arguments: JSON.stringify(call.args) },
            }))
          : undefined;
      const finish = toolCalls === undefined ? 'stop' : 'tool_calls';
      const base = { id: `chatcmpl-${n}`, created: 1, model: 'gpt-4.1' };
      const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
      if (parsed.stream === true) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        const delta =
          toolCalls === undefined
            ? { role: 'assistant', content: 'text' in step ? step.text : '' }
            : { role: 'assistant', tool_calls: toolCalls.map((call, index) => ({ index, ...call })) };
        res.write(
          `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`,
        );
        res.write(
          `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: finish }], usage })}\n\n`,
        );
        res.end('data: [DONE]\n\n');
        return;
      }
      const message =
        toolCalls === undefined
          ? { role: 'assistant', content: 'text' in step ? step.text : '' }
          : { role: 'assistant', content: null, tool_calls: toolCalls };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finish }], usage }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    tools,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
