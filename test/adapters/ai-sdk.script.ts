/**
 * The scripted conversations of the AI SDK adapter's tests: responses for the
 * SDK's own `MockLanguageModelV4` (`ai/test`), as `doGenerate` results or
 * `doStream` streams, and what the model was sent.
 */
import { jsonSchema, tool, type ModelMessage, type ToolSet } from 'ai';
import { MockLanguageModelV4, convertArrayToReadableStream } from 'ai/test';
import { createSessionGuard, type SessionGuard } from '../../src/guard/session-guard.js';
import type { SessionGuardOptions } from '../../src/guard/session-guard-options.js';

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** One part of a scripted model response. */
export type Part =
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'tool-call'; toolCallId: string; toolName: string; input: string };

/** The model says `text`. */
export const say = (text: string): Part => ({ type: 'text', text });

/** The model reasons `text` (a reasoning part, streamed as reasoning-start/delta/end). */
export const think = (text: string): Part => ({ type: 'reasoning', text });

/** The model calls `name` with `input` under the id `id`. */
export const call = (id: string, name: string, input: Record<string, unknown> = { host: 'web-01' }): Part => ({
  type: 'tool-call',
  toolCallId: id,
  toolName: name,
  input: JSON.stringify(input),
});

type MockOptions = NonNullable<ConstructorParameters<typeof MockLanguageModelV4>[0]>;
export type GenerateResult = Exclude<MockOptions['doGenerate'], ((...args: never[]) => unknown) | unknown[] | undefined>;
export type StreamResult = Exclude<MockOptions['doStream'], ((...args: never[]) => unknown) | unknown[] | undefined>;

/** One scripted model response (doGenerate), its finish reason from its content. */
export function step(...content: Part[]): GenerateResult {
  const calls = content.some((part) => part.type === 'tool-call');
  return { content, finishReason: { unified: calls ? 'tool-calls' : 'stop', raw: undefined }, usage, warnings: [] };
}

/** The same response as a stream (doStream): each text in two deltas, a reasoning in one, each part preceded by a raw chunk of it. */
export function streamed(...content: Part[]): StreamResult {
  const parts: unknown[] = [{ type: 'stream-start', warnings: [] }];
  content.forEach((part, i) => {
    parts.push({ type: 'raw', rawValue: { provider: part } });
    if (part.type === 'text') {
      const half = Math.ceil(part.text.length / 2);
      parts.push(
        { type: 'text-start', id: `t${i}` },
        { type: 'text-delta', id: `t${i}`, delta: part.text.slice(0, half) },
        { type: 'text-delta', id: `t${i}`, delta: part.text.slice(half) },
        { type: 'text-end', id: `t${i}` },
      );
    } else if (part.type === 'reasoning') {
      parts.push(
        { type: 'reasoning-start', id: `r${i}` },
        { type: 'reasoning-delta', id: `r${i}`, delta: part.text },
        { type: 'reasoning-end', id: `r${i}` },
      );
    } else {
      parts.push(part);
    }
  });
  const calls = content.some((part) => part.type === 'tool-call');
  parts.push({ type: 'finish', finishReason: { unified: calls ? 'tool-calls' : 'stop', raw: undefined }, usage });
  return { stream: convertArrayToReadableStream(parts) } as StreamResult;
}

/** A mock model answering `doGenerate` with the script, one response per step. */
export function generating(script: Part[][]): MockLanguageModelV4 {
  return new MockLanguageModelV4({ doGenerate: script.map((parts) => step(...parts)) });
}

/** A mock model answering `doStream` with the script, one response per step. */
export function streaming(script: Part[][]): MockLanguageModelV4 {
  return new MockLanguageModelV4({ doStream: script.map((parts) => streamed(...parts)) });
}

/** The scenario every adapter test plays. */
export const SCENARIO: Part[][] = [
  [call('c1', 'restart')], // a write before any read: refused
  [call('c2', 'get_status')], // a read: a target
  [call('c3', 'restart')], // the write: admitted
  [say('Restarted web-01.')], // an answer about an unverified change: refused
  [call('c4', 'get_status')], // a read after the write: verified
  [say('web-01 restarted and running.')], // the answer: allowed
];

/** The scenario's catalog: one read, one write, no targets. */
export const catalog = { name: 'test', tools: { get_status: 'read', restart: 'write' } } as const;

const hostInput = jsonSchema<{ host: string }>({ type: 'object', properties: { host: { type: 'string' } }, required: ['host'] });

/** The scenario's tools: what ran is logged; a tool can be told to fail. */
export function makeTools(log: string[], behaviour: { statusThrows?: boolean; statusResult?: unknown } = {}) {
  return {
    get_status: tool({
      description: 'Read the status of a host',
      inputSchema: hostInput,
      execute: async ({ host }, { toolCallId }) => {
        log.push(`get_status ${toolCallId}`);
        if (behaviour.statusThrows) throw new Error('status service unavailable');
        return behaviour.statusResult ?? `${host}: running`;
      },
    }),
    restart: tool({
      description: 'Restart a host',
      inputSchema: hostInput,
      execute: async ({ host }, { toolCallId }) => {
        log.push(`restart ${toolCallId}`);
        return `${host}: restart requested`;
      },
    }),
  } satisfies ToolSet;
}

/** A session guard with a clock of its own (epoch ms, one tick per reading). */
export function guardWithClock(options: SessionGuardOptions = {}): SessionGuard {
  let t = 1_000;
  return createSessionGuard({ now: () => (t += 1), ...options });
}

/** The text of every tool result and user message the model was sent at a call. */
export function seen(prompt: ModelMessage[]): string[] {
  const out: string[] = [];
  for (const message of prompt) {
    if (message.role === 'user') {
      for (const part of Array.isArray(message.content) ? message.content : [{ type: 'text', text: message.content }]) {
        if (part.type === 'text') out.push(`user: ${part.text}`);
      }
    }
    if (message.role === 'tool') {
      for (const part of message.content) {
        if (part.type === 'tool-result') out.push(`tool ${part.toolCallId}: ${JSON.stringify(part.output)}`);
      }
    }
  }
  return out;
}
