/**
 * The safety gate in an OpenAI Agents JS run, with the SDK's own scripted
 * model (`ScriptedModel` from `@openai/agents/testing`) playing the
 * conversation, so it runs offline:
 *
 *   node --import ./test/visualizer/support/ts-register.mjs examples/openai-agents.ts
 *
 * In your app the agent has a real model, the guard comes from a session
 * store, and the imports are `pulse-safety-fsm` and
 * `pulse-safety-fsm/openai-agents`. Run by test/adapters/openai-agents.example.test.ts.
 */
import { Agent, setTracingDisabled } from '@openai/agents';
import { ScriptedModel, assistantMessage, functionCall } from '@openai/agents/testing';
import { z } from 'zod';
import { createSessionGuard } from '../src/index.js';
import { createSafetyGate } from '../src/adapters/openai-agents.js';

setTracingDisabled(true); // offline: no trace export

// Which tool reads and which writes (a catalog; `kinds: { ... }` works too).
const catalog = { name: 'ops', tools: { get_status: 'read', restart: 'write' } } as const;

const guard = createSessionGuard(); // one per conversation
const gate = createSafetyGate({ guard, catalog });

// gate.tools builds the SDK's tool() with the gate's guardrails and error functions.
const parameters = z.object({ host: z.string() });
const tools = gate.tools([
  { name: 'get_status', description: 'Status of a host', parameters, execute: async ({ host }) => `${host}: running` },
  { name: 'restart', description: 'Restart a host', parameters, execute: async ({ host }) => `${host}: restarted` },
]);

// A scripted model: it restarts before looking, then claims success before checking.
const web01 = { host: 'web-01' };
const model = new ScriptedModel([
  [functionCall('restart', web01, { callId: 'c1' })],
  [functionCall('get_status', web01, { callId: 'c2' })],
  [functionCall('restart', web01, { callId: 'c3' })],
  [assistantMessage('Restarted web-01.')],
  [functionCall('get_status', web01, { callId: 'c4' })],
  [assistantMessage('web-01 was restarted and is running.')],
]);

const agent = new Agent({ name: 'ops', instructions: 'You operate hosts.', model, tools, outputGuardrails: [gate.outputGuardrail] });

// gate.run resumes the run with the refusal when the answer is refused.
const result = await gate.run(agent, 'Restart web-01.');

for (const item of result.history) {
  if (item.type === 'function_call') console.log(`call ${item.callId}: ${item.name}`);
  if (item.type === 'function_call_result') {
    const output = item.output as { text?: string };
    const text = output.text ?? '';
    console.log(`  -> ${text.includes('FSM_BLOCKED') ? 'refused: FSM_BLOCKED' : text}`);
  }
  if ('role' in item && item.role === 'assistant')
    console.log(`answer: ${JSON.stringify(item.content.map((part) => ('text' in part ? part.text : '')).join(''))}`);
  if ('role' in item && item.role === 'user' && typeof item.content === 'string') console.log(`user: ${item.content}`);
}
console.log(`final output: ${result.finalOutput}`);
console.log(`session: ${guard.state}, refused answers: ${guard.context.finalAnswerBlocks}`);
