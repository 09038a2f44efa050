/**
 * The safety gate in a Vercel AI SDK loop (`generateText`), with the SDK's
 * own mock model playing a scripted conversation, so it runs offline:
 *
 *   node --import ./test/visualizer/support/ts-register.mjs examples/ai-sdk.ts
 *
 * In your app the model is a real one (e.g. `openai('gpt-5')`), the guard
 * comes from a session store, and the imports are `pulse-safety-fsm` and
 * `pulse-safety-fsm/ai-sdk`. Run by test/adapters/ai-sdk.example.test.ts.
 */
import { generateText, isStepCount, jsonSchema, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { createSessionGuard } from '../src/index.js';
import { withSafetyGate } from '../src/adapters/ai-sdk.js';

// Which tool reads and which writes (a catalog; `kinds: { ... }` works too).
const catalog = { name: 'ops', tools: { get_status: 'read', restart: 'write' } } as const;

const host = jsonSchema<{ host: string }>({ type: 'object', properties: { host: { type: 'string' } }, required: ['host'] });
const tools = {
  get_status: tool({ description: 'Status of a host', inputSchema: host, execute: async ({ host }) => `${host}: running` }),
  restart: tool({ description: 'Restart a host', inputSchema: host, execute: async ({ host }) => `${host}: restarted` }),
};

// A scripted model: it restarts before looking, then claims success before checking.
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
const call = (id: string, name: string) => ({
  content: [{ type: 'tool-call' as const, toolCallId: id, toolName: name, input: '{"host":"web-01"}' }],
  finishReason: { unified: 'tool-calls' as const, raw: undefined },
  usage,
  warnings: [],
});
const say = (text: string) => ({
  content: [{ type: 'text' as const, text }],
  finishReason: { unified: 'stop' as const, raw: undefined },
  usage,
  warnings: [],
});
const model = new MockLanguageModelV4({
  doGenerate: [
    call('c1', 'restart'),
    call('c2', 'get_status'),
    call('c3', 'restart'),
    say('Restarted web-01.'),
    call('c4', 'get_status'),
    say('web-01 was restarted and is running.'),
  ],
});

const guard = createSessionGuard(); // one per conversation
const safety = withSafetyGate({
  tools,
  guard,
  catalog,
  onStepEnd: (step) => {
    for (const result of step.toolResults) {
      const output = result.output as { ok?: boolean; error?: { code: string; state: string } } | string;
      const shown = typeof output === 'string' ? output : `refused: ${output.error?.code} in ${output.error?.state}`;
      console.log(`step ${step.stepNumber}: ${result.toolName} -> ${shown}`);
    }
    if (step.toolCalls.length === 0) console.log(`step ${step.stepNumber}: answer "${step.text}" -> ${safety.answer.state}`);
  },
});

const result = await generateText({ model, prompt: 'Restart web-01.', stopWhen: isStepCount(10), ...safety });

if (safety.answer.state !== 'allowed') {
  // E.g. the step limit ended the run on a refused answer: do not present it as done.
  console.log('no verified answer');
  process.exitCode = 1;
} else {
  console.log(`answer: ${result.text}`);
}
console.log(`session: ${guard.state}, refused answers: ${guard.context.finalAnswerBlocks}`);
