/**
 * The safety gate in a streamed OpenAI Agents JS run, with the SDK's own
 * scripted model (`ScriptedModel` from `@openai/agents/testing`) playing the
 * conversation, so it runs offline:
 *
 *   node --import ./test/support/ts-register.mjs examples/openai-agents.ts
 *
 * In your app the agent has a real model, and the imports are
 * `pulse-safety-fsm` and `pulse-safety-fsm/openai-agents`. Run by
 * test/adapters/openai-agents.example.test.ts.
 */
import { Agent, setTracingDisabled } from '@openai/agents';
import { ScriptedModel, assistantMessage, functionCall } from '@openai/agents/testing';
import { z } from 'zod';
import { createSessionStore } from '../src/index.js';
import { createSafetyGate } from '../src/adapters/openai-agents.js';

setTracingDisabled(true); // offline: no trace export

// Which tool reads and which writes, and the argument naming the place each touches:
// a listing of `other` establishes `other`, not `notes/a.txt`.
const catalog = {
  name: 'files',
  tools: {
    list_files: { kind: 'read', targets: { path: 'path' } },
    delete_file: { kind: 'write', targets: { path: 'path' }, destructive: true },
  },
} as const;

// One guard per conversation: the agent is built once and serves every chat.
const sessions = createSessionStore();
const gate = createSafetyGate<{ chatId: string }>({
  getGuard: (key) => sessions.session(key),
  sessionKey: (runContext) => runContext.context.chatId,
  catalog,
});

// gate.tools builds the SDK's tool() with the gate's guardrails and error functions.
const files = new Set(['notes/a.txt', 'notes/b.txt', 'other/c.txt']);
const path = z.object({ path: z.string() });
const tools = gate.tools([
  {
    name: 'list_files',
    description: 'List a directory',
    parameters: path,
    execute: async ({ path }) => [...files].filter((file) => file.startsWith(`${path}/`)).join(' '),
  },
  { name: 'delete_file', description: 'Delete a file', parameters: path, execute: async ({ path }) => `deleted: ${files.delete(path)}` },
]);

// A scripted model: it deletes after looking elsewhere, then claims success before checking.
const model = new ScriptedModel([
  [functionCall('list_files', { path: 'other' }, { callId: 'c1' })],
  [functionCall('delete_file', { path: 'notes/a.txt' }, { callId: 'c2' })],
  [functionCall('list_files', { path: 'notes' }, { callId: 'c3' })],
  [functionCall('delete_file', { path: 'notes/a.txt' }, { callId: 'c4' })],
  [assistantMessage('Deleted notes/a.txt.')],
  [functionCall('list_files', { path: 'notes' }, { callId: 'c5' })],
  [assistantMessage('notes/a.txt is deleted; notes holds b.txt.')],
]);

const agent = new Agent<{ chatId: string }>({
  name: 'files',
  instructions: 'You manage files.',
  model,
  tools,
  inputGuardrails: [gate.inputGuardrail], // refuses a run that did not go through gate.run
  outputGuardrails: [gate.outputGuardrail], // the final-answer gate
});

// Streamed through the gate: the refused claim is never shown; the run resumes with the refusal.
const stream = await gate.run(agent, 'Delete notes/a.txt.', { stream: true, context: { chatId: 'chat-1' } });
let text = '';
for await (const event of stream) {
  if (event.type === 'raw_model_stream_event' && event.data.type === 'output_text_delta') text += event.data.delta;
  if (event.type !== 'run_item_stream_event') continue;
  if (event.item.type === 'tool_call_item') {
    const call = event.item.rawItem as { callId?: string; name?: string; arguments?: string };
    console.log(`call ${call.callId}: ${call.name} ${call.arguments}`);
  }
  if (event.item.type === 'tool_call_output_item') {
    const output = String(event.item.output);
    const rule = /"rule":"([a-z-]+)"/.exec(output)?.[1];
    console.log(`  -> ${output.includes('FSM_BLOCKED') ? `refused: FSM_BLOCKED (${rule})` : output}`);
  }
}
console.log(`streamed text: ${JSON.stringify(text)}`);
console.log(`final output: ${stream.finalOutput}`);
const session = sessions.session('chat-1');
console.log(`session chat-1: ${session.state}, refused answers: ${session.context.finalAnswerBlocks}`);
