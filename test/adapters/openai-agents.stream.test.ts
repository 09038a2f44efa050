/**
 * Issue #26, streaming: a refused final answer never reaches the user of a
 * streamed run. `gate.run(..., { stream: true })` holds a candidate final
 * answer until the answer gate allowed it; the SDK's own `run()` with
 * `stream: true` on a gated agent is refused before the model is called.
 * Real `@openai/agents` runner, the SDK's `ScriptedModel` (which streams
 * each scripted response as the SDK's stream events).
 */
import { GuardrailExecutionError, OutputGuardrailTripwireTriggered, run } from '@openai/agents';
import { describe, expect, it } from 'vitest';
import { AdapterConfigError } from '../../src/adapters/openai-agents.js';
import { assistantMessage } from '@openai/agents/testing';
import { answer, drain, filesAgent, list, remove, textOf, type Step } from './openai-agents.support.js';

const CLAIM = 'Deleted notes/a.txt.';

/** List, delete, claim (refused: unverified), list again, the verified answer. */
const SCENARIO = [
  list('notes', 'c1'),
  remove('notes/a.txt', 'c2'),
  answer(CLAIM),
  list('notes', 'c3'),
  answer('notes/a.txt is deleted; notes now lists b.txt.'),
];

describe("the SDK's run() with stream: true on a gated agent", () => {
  it('is refused before the model is called: no text reaches the user, the error names gate.run', async () => {
    const { agent, model, log } = filesAgent([answer(CLAIM)]);
    const streamed = await run(agent, 'Delete notes/a.txt.', { stream: true });
    const { events, thrown } = await drain(streamed);
    expect(textOf(events)).toBe('');
    expect(model.calls).toHaveLength(0);
    expect(log).toEqual([]);
    expect(thrown).toBeInstanceOf(GuardrailExecutionError); // the SDK's wrapper of what a guardrail threw
    const refusal = (thrown as GuardrailExecutionError).error;
    expect(refusal).toBeInstanceOf(AdapterConfigError);
    expect(refusal).toBeInstanceOf(TypeError);
    expect(refusal.message).toMatch(/run it with gate\.run\(agent, input, options\) \(stream: true included\)/);
  });

  it('is refused when not streamed too (the gate cannot tell), with the same fix', async () => {
    const { agent, model } = filesAgent([answer(CLAIM)]);
    await expect(run(agent, 'Delete notes/a.txt.')).rejects.toThrow(/gate\.run/);
    expect(model.calls).toHaveLength(0);
  });
});

describe('gate.run(..., { stream: true })', () => {
  it('never streams the refused claim; streams the allowed answer once the gate allowed it', async () => {
    const { gate, agent, model, log } = filesAgent(SCENARIO);
    const stream = await gate.run(agent, 'Delete notes/a.txt.', { stream: true });
    const { events, thrown } = await drain(stream);
    expect(thrown).toBeUndefined();
    expect(model.calls.every((call) => call.streamed)).toBe(true);
    expect(model.calls).toHaveLength(5);
    expect(log).toEqual(['list_files notes', 'delete_file notes/a.txt', 'list_files notes']);
    expect(textOf(events)).toBe('notes/a.txt is deleted; notes now lists b.txt.');
    expect(JSON.stringify(events)).not.toContain(CLAIM);
    expect(stream.finalOutput).toBe('notes/a.txt is deleted; notes now lists b.txt.');
  });

  it('gives toTextStream() the allowed answer alone, to a reader that started before it was decided; toStream() every event', async () => {
    const { gate, agent } = filesAgent(SCENARIO);
    const stream = await gate.run(agent, 'Delete notes/a.txt.', { stream: true });
    const reader = stream.toTextStream().getReader();
    let text = '';
    for (let chunk = await reader.read(); chunk.done !== true; chunk = await reader.read()) text += chunk.value;
    expect(text).toBe('notes/a.txt is deleted; notes now lists b.txt.');
    const events = stream.toStream().getReader();
    let count = 0;
    for (let event = await events.read(); event.done !== true; event = await events.read()) count += 1;
    expect(count).toBe((await drain(stream)).events.length);
  });

  it('still streams the calls as they happen (tool calls and their outputs are no answer)', async () => {
    const { gate, agent } = filesAgent(SCENARIO);
    const stream = await gate.run(agent, 'Delete notes/a.txt.', { stream: true });
    const { events } = await drain(stream);
    const items = events.filter((event) => event.type === 'run_item_stream_event').map((event) => event.name);
    expect(items).toEqual([
      'tool_called',
      'tool_output',
      'tool_called',
      'tool_output',
      'tool_called',
      'tool_output',
      'message_output_created',
    ]);
  });

  it('once maxResumes is spent: no text was shown, the stream throws the tripwire, completed resolves with the error', async () => {
    const { gate, agent, guard } = filesAgent([list('notes', 'c1'), remove('notes/a.txt', 'c2'), answer(CLAIM)], { maxResumes: 0 });
    const stream = await gate.run(agent, 'Delete notes/a.txt.', { stream: true });
    const { events, thrown } = await drain(stream);
    expect(thrown).toBeInstanceOf(OutputGuardrailTripwireTriggered);
    expect(textOf(events)).toBe('');
    expect(JSON.stringify(events)).not.toContain(CLAIM);
    await stream.completed;
    expect(stream.error).toBe(thrown);
    expect(stream.finalOutput).toBeUndefined();
    expect(guard.context.finalAnswerBlocks).toBe(1);
  });

  it('withholds text beside a tool call too: a claim made before the delete ran is never shown when the answer is refused', async () => {
    const claimAndDelete: Step = [assistantMessage(CLAIM), ...remove('notes/a.txt', 'c2')];
    const { gate, agent, log } = filesAgent([list('notes', 'c1'), claimAndDelete, answer('Done.')], { maxResumes: 0 });
    const stream = await gate.run(agent, 'Delete notes/a.txt.', { stream: true });
    const { events, thrown } = await drain(stream);
    expect(thrown).toBeInstanceOf(OutputGuardrailTripwireTriggered);
    expect(log).toEqual(['list_files notes', 'delete_file notes/a.txt']);
    expect(textOf(events)).toBe('');
    expect(JSON.stringify(events)).not.toContain(CLAIM);
    expect(events.some((event) => event.type === 'run_item_stream_event' && event.name === 'tool_output')).toBe(true);
  });

  it('shows text beside a tool call once the run ends with the change verified, in its order', async () => {
    const claimAndLook: Step = [assistantMessage(CLAIM), ...list('notes', 'c3')];
    const { gate, agent } = filesAgent([list('notes', 'c1'), remove('notes/a.txt', 'c2'), claimAndLook, answer(' Checked.')]);
    const stream = await gate.run(agent, 'Delete notes/a.txt.', { stream: true });
    const { events, thrown } = await drain(stream);
    expect(thrown).toBeUndefined();
    expect(textOf(events)).toBe(`${CLAIM} Checked.`);
  });

  it('leaves the session as the non-streamed run does: verified, one refused answer, nothing in flight', async () => {
    const { gate, agent, guard } = filesAgent(SCENARIO);
    const stream = await gate.run(agent, 'Delete notes/a.txt.', { stream: true });
    await stream.completed;
    expect(stream.error).toBeUndefined();
    expect(guard.state).toBe('READING');
    expect(guard.context.finalAnswerBlocks).toBe(1);
    expect(guard.context.inFlight).toEqual([]);
  });
});
