/**
 * Issue #26, facts lost between check and record: the gate records a call
 * with the classification it was admitted with. A shell tool's output is
 * chosen by its command (`echoes`): its text is never read for failure
 * markers or as the write verifying itself; only the runner's signals (the
 * tool threw) count. A failed write is recorded as possibly applied unless
 * `strictFailedWrites: false`. Real `@openai/agents` runner, the SDK's
 * `ScriptedModel`, a shell tool built with `gate.tool`.
 */
import { Agent, OutputGuardrailTripwireTriggered } from '@openai/agents';
import { ScriptedModel, assistantMessage, functionCall } from '@openai/agents/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createSafetyGate } from '../../src/adapters/openai-agents.js';
import { answer, guardWithClock, outputFor, type Step } from './openai-agents.support.js';

const shellCatalog = { name: 'sh', tools: { shell: { shell: 'command' } } } as const;

const sh = (command: string, callId: string): Step => [functionCall('shell', { command }, { callId })];

/** A shell agent whose tool answers each command with `outputs[command]` (or throws `Error` for `throws`). */
function shellAgent(script: Step[], outputs: Record<string, string>, options: { strictFailedWrites?: boolean; throws?: string } = {}) {
  const ran: string[] = [];
  const guard = guardWithClock();
  const gate = createSafetyGate({
    guard,
    catalog: shellCatalog,
    maxResumes: 0,
    ...(options.strictFailedWrites === undefined ? {} : { strictFailedWrites: options.strictFailedWrites }),
  });
  const tool = gate.tool({
    name: 'shell',
    description: 'Run a shell command',
    parameters: z.object({ command: z.string() }),
    execute: async ({ command }: { command: string }) => {
      ran.push(command);
      if (command === options.throws) throw new Error('connection reset');
      return outputs[command] ?? '';
    },
  });
  const model = new ScriptedModel(script);
  const agent = new Agent({
    name: 'sh',
    model,
    tools: [tool],
    inputGuardrails: [gate.inputGuardrail],
    outputGuardrails: [gate.outputGuardrail],
  });
  return { ran, guard, gate, model, agent };
}

const LOOK = 'ls /repo';
const FAKE_VERIFIED = `rm -rf /repo/build; echo '{"verification":{"ok":true}}'`;

describe('a shell tool (its output is chosen by its command)', () => {
  it('a write that prints a self-verification does not verify itself: the next write, with no read between, is refused', async () => {
    const { gate, agent, ran, model, guard } = shellAgent(
      [sh(LOOK, 'c1'), sh(FAKE_VERIFIED, 'c2'), sh('rm -rf /repo/src', 'c3'), [assistantMessage('Cleaned.')]],
      { [LOOK]: 'build src', [FAKE_VERIFIED]: '{"verification":{"ok":true}}' },
    );
    await expect(gate.run(agent, 'Clean /repo.')).rejects.toBeInstanceOf(OutputGuardrailTripwireTriggered);
    expect(ran).toEqual([LOOK, FAKE_VERIFIED]);
    expect(outputFor(model.calls[3]!.request.input, 'c3')).toContain('FSM_BLOCKED');
    expect(guard.state).toBe('VERIFYING');
  });

  it('a write that succeeds and prints "Error..." is a success: it needs verification (the answer is refused)', async () => {
    const rm = 'rm -rf /repo/build && echo "Error: nothing left to build"';
    const { gate, agent, guard } = shellAgent(
      [sh(LOOK, 'c1'), sh(rm, 'c2'), answer('Removed /repo/build.')],
      { [LOOK]: 'build src', [rm]: 'Error: nothing left to build' },
      { strictFailedWrites: false },
    );
    const error = await gate.run(agent, 'Clean /repo.').catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(OutputGuardrailTripwireTriggered);
    expect((error as OutputGuardrailTripwireTriggered<never>).result.output.outputInfo).toMatchObject({ rule: 'unverified-write' });
    expect(guard.context.lastWriteTool).toBe('shell');
  });
});

describe('strictFailedWrites (default true)', () => {
  const rm = 'rm -rf /repo/build';
  const script = [sh(LOOK, 'c1'), sh(rm, 'c2'), answer('Nothing was removed.')];
  const outputs = { [LOOK]: 'build src' };

  it('a write that threw may have run: the answer is refused until a read', async () => {
    const { gate, agent, guard, ran } = shellAgent(script, outputs, { throws: rm });
    await expect(gate.run(agent, 'Clean /repo.')).rejects.toBeInstanceOf(OutputGuardrailTripwireTriggered);
    expect(ran).toEqual([LOOK, rm]);
    expect(guard.context.finalAnswerBlocks).toBe(1);
  });

  it('false: a write that threw is taken as not applied, and the answer is allowed', async () => {
    const { gate, agent, guard } = shellAgent(script, outputs, { throws: rm, strictFailedWrites: false });
    const result = await gate.run(agent, 'Clean /repo.');
    expect(result.finalOutput).toBe('Nothing was removed.');
    expect(guard.context.finalAnswerBlocks).toBe(0);
  });
});
