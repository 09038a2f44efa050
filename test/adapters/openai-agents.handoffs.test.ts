/**
 * Issue #26, handoffs and agents as tools: `gate.run` (and
 * `gate.assertAgent`) checks every agent reachable through handoffs, each
 * with gated tools only and the gate's guardrails; an agent used as a tool
 * (`Agent.asTool`) is refused. A gated handoff is gated like the first
 * agent. Real `@openai/agents` runner and handoffs, the SDK's `ScriptedModel`.
 */
import { Agent, handoff, tool } from '@openai/agents';
import { ScriptedModel, assistantMessage, functionCall } from '@openai/agents/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AdapterConfigError } from '../../src/adapters/openai-agents.js';
import { answer, filesAgent, list, remove, type Step } from './openai-agents.support.js';

/** A call of the handoff to `helper`. */
const toHelper: Step = [functionCall('transfer_to_helper', {}, { callId: 'h1' })];

describe('a handoff to an agent with an ungated tool', () => {
  it('is refused before the run (AdapterConfigError naming the agent): the tool never runs', async () => {
    const { gate, agent, model } = filesAgent([list('notes', 'c1'), toHelper]);
    const ran: string[] = [];
    const rm = tool({
      name: 'rm',
      description: 'Remove a file',
      parameters: z.object({ path: z.string() }),
      execute: async ({ path }) => {
        ran.push(path);
        return 'ok';
      },
    });
    const helper = new Agent({
      name: 'helper',
      model: new ScriptedModel([[functionCall('rm', { path: 'notes/a.txt' }, { callId: 'h2' })], [assistantMessage('Deleted.')]]),
      tools: [rm],
    });
    agent.handoffs = [helper];
    const refusal = gate.run(agent, 'Delete notes/a.txt.');
    await expect(refusal).rejects.toThrow(AdapterConfigError);
    await expect(refusal).rejects.toThrow(/agent 'helper' \(a handoff of files\): function tool\(s\) 'rm' are not gated/);
    expect(() => gate.assertAgent(agent)).toThrow(/agent 'helper'/);
    expect(model.calls).toHaveLength(0);
    expect(ran).toEqual([]);
  });
});

describe('a handoff to an agent without the gate guardrails', () => {
  it('is refused when it lacks the answer guardrail, through handoff() and a handoff of a handoff too', async () => {
    const { gate, agent } = filesAgent([list('notes', 'c1'), toHelper]);
    const helper = new Agent({ name: 'helper', model: new ScriptedModel([]), tools: agent.tools, inputGuardrails: [gate.inputGuardrail] });
    agent.handoffs = [handoff(helper)];
    await expect(gate.run(agent, 'x')).rejects.toThrow(/agent 'helper' \(a handoff of files\): add gate\.outputGuardrail/);
    const deep = new Agent({ name: 'deep', model: new ScriptedModel([]), tools: agent.tools, inputGuardrails: [gate.inputGuardrail] });
    const middle = new Agent({
      name: 'middle',
      model: new ScriptedModel([]),
      tools: agent.tools,
      handoffs: [deep],
      inputGuardrails: [gate.inputGuardrail],
      outputGuardrails: [gate.outputGuardrail],
    });
    agent.handoffs = [middle];
    expect(() => gate.assertAgent(agent)).toThrow(/agent 'deep' \(a handoff of files -> middle\): add gate\.outputGuardrail/);
  });

  it('is refused when it lacks the run guardrail', () => {
    const { gate, agent } = filesAgent([]);
    agent.handoffs = [new Agent({ name: 'helper', model: new ScriptedModel([]), outputGuardrails: [gate.outputGuardrail] })];
    expect(() => gate.assertAgent(agent)).toThrow(/agent 'helper' \(a handoff of files\): add gate\.inputGuardrail/);
  });
});

describe('a handoff to a gated agent', () => {
  it("is gated as the first agent: its write after the first agent's listing runs, its unverified claim is refused", async () => {
    const { gate, agent, log } = filesAgent([list('notes', 'c1'), toHelper]);
    const helperModel = new ScriptedModel([
      remove('notes/a.txt', 'h2'),
      answer('Deleted notes/a.txt.'),
      list('notes', 'h3'),
      answer('notes/a.txt is gone.'),
    ]);
    const helper = new Agent({
      name: 'helper',
      model: helperModel,
      tools: agent.tools,
      inputGuardrails: [gate.inputGuardrail],
      outputGuardrails: [gate.outputGuardrail],
    });
    agent.handoffs = [helper];
    const result = await gate.run(agent, 'Delete notes/a.txt.');
    expect(log).toEqual(['list_files notes', 'delete_file notes/a.txt', 'list_files notes']);
    expect(result.finalOutput).toBe('notes/a.txt is gone.');
    expect(result.lastAgent?.name).toBe('helper');
    expect(JSON.stringify(helperModel.calls[2]!.request.input)).toMatch(/not verified|unverified|verif/i);
  });
});

describe('an agent used as a tool (Agent.asTool)', () => {
  it('is refused before the run, naming the tool and the agent that has it', async () => {
    const { gate, agent, model } = filesAgent([list('notes', 'c1')]);
    const helper = new Agent({ name: 'helper', model: new ScriptedModel([]), tools: agent.tools });
    agent.tools = [...agent.tools, helper.asTool({ toolName: 'ask_helper', toolDescription: 'Ask the helper' })];
    await expect(gate.run(agent, 'x')).rejects.toThrow(/agent 'files': tool\(s\) 'ask_helper' run another agent \(Agent\.asTool\)/);
    expect(model.calls).toHaveLength(0);
  });
});
