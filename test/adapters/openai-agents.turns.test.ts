/**
 * Issue #26, the calls of one model response and the end of a turn on the
 * real `@openai/agents` runner (the SDK's `ScriptedModel`): the approval
 * preview takes every call of the response in order (a call with no
 * `needsApproval` runs as the SDK runs it; a call put to a human counts as
 * approved), so a call that would be refused after the ones before it is
 * refused to the model at once and nobody is asked; and an answer refused
 * under a `toolUseBehavior` that ends the run on a tool's output (the SDK
 * redacts the tripwire's `outputInfo`) resumes cleanly with the gate's words.
 */
import { Agent, type AgentInputItem, type ToolUseBehavior } from '@openai/agents';
import { ScriptedModel, functionCall } from '@openai/agents/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createSafetyGate } from '../../src/adapters/openai-agents.js';
import {
  answer,
  drain,
  filesAgent,
  filesCatalog,
  guardWithClock,
  list,
  outputFor,
  remove,
  textOf,
  type Step,
} from './openai-agents.support.js';

/** The files tools plus `write_file` (a write of its `path`, no approval), the delete asking for approval. */
function writeAndDeleteAgent(script: Step[]) {
  const log: string[] = [];
  const asked: string[] = [];
  const guard = guardWithClock();
  const gate = createSafetyGate({
    guard,
    catalog: { name: 'files', tools: { ...filesCatalog.tools, write_file: { kind: 'write', targets: { path: 'path' } } } },
  });
  const path = z.object({ path: z.string() });
  const tool = (name: string, extra: object = {}) => ({
    name,
    description: name,
    parameters: path,
    execute: async ({ path }: { path: string }) => {
      log.push(`${name} ${path}`);
      return `${name} ${path}: done`;
    },
    ...extra,
  });
  const tools = gate.tools([
    tool('list_files'),
    tool('write_file'),
    tool('delete_file', {
      needsApproval: async (_context: unknown, input: unknown) => {
        asked.push(JSON.stringify(input));
        return true;
      },
    }),
  ]);
  const model = new ScriptedModel(script);
  const agent = new Agent({
    name: 'files',
    model,
    tools,
    inputGuardrails: [gate.inputGuardrail],
    outputGuardrails: [gate.outputGuardrail],
  });
  return { log, asked, guard, gate, model, agent };
}

const write = (path: string, callId: string): Step => [functionCall('write_file', { path }, { callId })];

/** The output the gate's refusal gave a call, by its rule; undefined when the call was not refused. */
function ruleOf(input: string | AgentInputItem[], callId: string): string | undefined {
  return /FSM_BLOCKED.*\\"rule\\":\\"([a-z-]+)\\"/.exec(outputFor(input, callId) ?? '')?.[1];
}

describe('the calls of one response, one needing approval', () => {
  it('a write without approval, then a delete that asks: the write runs, the delete is refused at once, nobody is asked', async () => {
    const { gate, agent, model, log, asked, guard } = writeAndDeleteAgent([
      list('notes', 'c1'),
      [...write('notes/x.txt', 'w1'), ...remove('notes/a.txt', 'd1')],
      list('notes', 'c3'),
      answer('Wrote notes/x.txt; notes/a.txt was not deleted.'),
    ]);
    const result = await gate.run(agent, 'Write notes/x.txt and delete notes/a.txt.');
    expect(result.interruptions).toEqual([]);
    expect(log).toEqual(['list_files notes', 'write_file notes/x.txt', 'list_files notes']);
    expect(outputFor(model.calls[2]!.request.input, 'w1')).toContain('write_file notes/x.txt: done');
    expect(ruleOf(model.calls[2]!.request.input, 'd1')).toBe('unverified-write');
    expect(asked).toEqual(['{"path":"notes/a.txt"}']); // the tool's own policy; the human was not asked
    expect(result.finalOutput).toBe('Wrote notes/x.txt; notes/a.txt was not deleted.');
    expect(guard.context.inFlight).toEqual([]);
    expect(guard.state).toBe('READING');
  });

  it('streamed: the same, the delete refused at once and nobody asked', async () => {
    const { gate, agent, model, log, asked } = writeAndDeleteAgent([
      list('notes', 'c1'),
      [...write('notes/x.txt', 'w1'), ...remove('notes/a.txt', 'd1')],
      list('notes', 'c3'),
      answer('Wrote notes/x.txt; notes/a.txt was not deleted.'),
    ]);
    const stream = await gate.run(agent, 'Write notes/x.txt and delete notes/a.txt.', { stream: true });
    const { events, thrown } = await drain(stream);
    expect(thrown).toBeUndefined();
    expect(stream.result.interruptions).toEqual([]);
    expect(log).toEqual(['list_files notes', 'write_file notes/x.txt', 'list_files notes']);
    expect(ruleOf(model.calls[2]!.request.input, 'd1')).toBe('unverified-write');
    expect(asked).toEqual(['{"path":"notes/a.txt"}']);
    expect(textOf(events)).toBe('Wrote notes/x.txt; notes/a.txt was not deleted.');
  });

  it('a delete that asks, then a write without approval: the delete is asked, the write is refused at once and never runs', async () => {
    const { gate, agent, model, log, guard } = writeAndDeleteAgent([
      list('notes', 'c1'),
      [...remove('notes/a.txt', 'd1'), ...write('notes/x.txt', 'w1')],
      list('notes', 'c3'),
      answer('Deleted notes/a.txt; notes/x.txt was not written.'),
    ]);
    const first = await gate.run(agent, 'Delete notes/a.txt and write notes/x.txt.');
    expect(first.interruptions.map((item) => (item.rawItem as { callId?: string }).callId)).toEqual(['d1']);
    const refusal = first.newItems.find(
      (item) => item.type === 'tool_call_output_item' && (item.rawItem as { callId?: string }).callId === 'w1',
    );
    expect(String((refusal as { output?: unknown } | undefined)?.output)).toMatch(
      /FSM_BLOCKED.*"rule":"(write-in-flight|unverified-write)"/,
    );
    expect(log).toEqual(['list_files notes']);
    expect(guard.context.lastWriteTool).toBeNull();
    first.state.approve(first.interruptions[0]!);
    const result = await gate.run(agent, first.state);
    expect(log).toEqual(['list_files notes', 'delete_file notes/a.txt', 'list_files notes']);
    expect(outputFor(model.calls[2]!.request.input, 'd1')).toContain('delete_file notes/a.txt: done');
    expect(result.finalOutput).toBe('Deleted notes/a.txt; notes/x.txt was not written.');
    expect(guard.state).toBe('READING');
  });
});

describe('toolUseBehavior that ends the run on a tool output (the SDK redacts the tripwire)', () => {
  /** List, answer; then (second run) delete, list, answer. */
  const SCRIPT = [list('notes', 'c1'), answer('Listed.'), remove('notes/a.txt', 'c2'), list('notes', 'c3'), answer('notes/a.txt is gone.')];
  const BEHAVIOURS: { name: string; behaviour: ToolUseBehavior; final: string }[] = [
    { name: "'stop_on_first_tool'", behaviour: 'stop_on_first_tool', final: 'notes: a.txt b.txt' },
    { name: "{ stopAtToolNames: ['delete_file'] }", behaviour: { stopAtToolNames: ['delete_file'] }, final: 'notes/a.txt is gone.' },
  ];

  for (const { name, behaviour, final } of BEHAVIOURS) {
    for (const stream of [false, true]) {
      it(`${name}${stream ? ', streamed' : ''}: the delete's output as the answer is refused, the run resumes with the gate's words`, async () => {
        const { gate, agent, model, log, guard } = filesAgent(SCRIPT, {
          sessionKey: () => 'chat',
          answerRefusal: (error) => `REFUSED ${error.rule}`,
        });
        await gate.run(agent, 'List notes.');
        const stopping = agent.clone({ toolUseBehavior: behaviour });
        let finalOutput: unknown;
        if (stream) {
          const run = await gate.run(stopping, 'Delete notes/a.txt.', { stream: true });
          const { events, thrown } = await drain(run);
          expect(thrown).toBeUndefined();
          await run.completed;
          expect(run.error ?? undefined).toBeUndefined();
          expect(textOf(events)).toBe(behaviour === 'stop_on_first_tool' ? '' : final);
          finalOutput = run.finalOutput;
        } else {
          finalOutput = (await gate.run(stopping, 'Delete notes/a.txt.')).finalOutput;
        }
        expect(finalOutput).toBe(final);
        // The model was told, in the gate's words, after the delete's output was refused as the answer.
        const resumed = model.calls[3]!.request.input as AgentInputItem[];
        expect(resumed.at(-1)).toMatchObject({ role: 'user', content: expect.stringMatching(/^REFUSED [a-z-]+$/) });
        expect(log).toEqual(['list_files notes', 'delete_file notes/a.txt', 'list_files notes']);
        expect(guard.state).toBe('READING');
      });
    }
  }
});
