/**
 * The safety gate in a Vercel AI SDK loop (`streamText`), with the SDK's own
 * mock model playing a scripted conversation, so it runs offline:
 *
 *   node --import ./test/support/ts-register.mjs examples/ai-sdk.ts
 *
 * In your app the model is a real one (e.g. `openai('gpt-5')`), the guard
 * comes from a session store keyed by the conversation's id, and the imports
 * are `pulse-safety-fsm` and `pulse-safety-fsm/ai-sdk`. Run by
 * test/adapters/ai-sdk.example.test.ts.
 */
import { isStepCount, jsonSchema, smoothStream, streamText, tool } from 'ai';
import { MockLanguageModelV4, convertArrayToReadableStream } from 'ai/test';
import { createSessionStore } from '../src/index.js';
import { withSafetyGate } from '../src/adapters/ai-sdk.js';

// What each tool does, and which argument names the file it touches: a listing
// of `other` establishes `other`, never `notes/a.txt`.
const catalog = {
  name: 'files',
  tools: {
    list_files: { kind: 'resolve', targets: { path: 'path' } },
    delete_file: { kind: 'write', targets: { path: 'path' } },
  },
} as const;

const files = new Set(['notes/a.txt', 'notes/b.txt', 'other/c.txt']);
const path = jsonSchema<{ path: string }>({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] });
const tools = {
  list_files: tool({
    description: 'List the files under a directory',
    inputSchema: path,
    execute: async ({ path }) => [...files].filter((file) => file.startsWith(`${path}/`)).join(', ') || '(empty)',
  }),
  delete_file: tool({
    description: 'Delete a file',
    inputSchema: path,
    execute: async ({ path }) => (files.delete(path) ? `deleted ${path}` : `no such file: ${path}`),
  }),
};

// A scripted model: it deletes after listing the wrong directory, then claims success before checking.
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
const turn = (...parts: object[]) => ({
  stream: convertArrayToReadableStream([
    ...parts,
    { type: 'finish', finishReason: { unified: parts.some((p) => 'toolName' in p) ? 'tool-calls' : 'stop', raw: undefined }, usage },
  ] as never[]),
});
const callTool = (id: string, name: string, path: string) =>
  turn({ type: 'tool-call', toolCallId: id, toolName: name, input: JSON.stringify({ path }) });
const say = (text: string) =>
  turn({ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: text }, { type: 'text-end', id: 't' });
const model = new MockLanguageModelV4({
  doStream: [
    callTool('c1', 'list_files', 'other'),
    callTool('c2', 'delete_file', 'notes/a.txt'),
    callTool('c3', 'list_files', 'notes'),
    callTool('c4', 'delete_file', 'notes/a.txt'),
    say('Deleted notes/a.txt.'),
    callTool('c5', 'list_files', 'notes'),
    say('notes/a.txt is gone; notes/b.txt is left.'),
  ],
});

// One guard per conversation: the store keeps each conversation's session under its id.
const sessions = createSessionStore();
const conversationId = 'chat-42';

// The whole call's options, with the gate's beside them: your transform and callback run after the gate's.
const gated = withSafetyGate({
  model,
  prompt: 'Delete notes/a.txt.',
  stopWhen: isStepCount(10),
  experimental_transform: smoothStream({ delayInMs: null }),
  tools,
  getGuard: (id) => sessions.session(id),
  sessionKey: conversationId,
  catalog,
  onStepEnd: (step) => {
    for (const result of step.toolResults) {
      const output = result.output as { error?: { code: string; rule: string; target?: string } } | string;
      const shown = typeof output === 'string' ? output : `refused: ${output.error?.code}, ${output.error?.rule} (${output.error?.target})`;
      console.log(`step ${step.stepNumber}: ${result.toolName} ${JSON.stringify(result.input)} -> ${shown}`);
    }
    if (step.toolCalls.length === 0) console.log(`step ${step.stepNumber}: answer -> ${gated.answer.state}`);
  },
});

const result = streamText(gated);
let streamed = '';
for await (const text of result.textStream) streamed += text; // what the user sees
console.log(`streamed: ${streamed}`);

if (gated.answer.state !== 'allowed') {
  // E.g. the step limit ended the run on a refused answer: do not present it as done.
  console.log('no verified answer');
  process.exitCode = 1;
}
const session = sessions.session(conversationId);
console.log(`session: ${session.state}, refused answers: ${session.context.finalAnswerBlocks}`);
