/**
 * Issue #26, text beside tool calls and reasoning: text the model writes in
 * a response with tool calls is judged as an answer when it was written
 * (once the calls of that response settled), never released later because
 * the run's final answer was allowed; reasoning is held like text. Streamed
 * (events, `toTextStream()`) and not (`newItems`, `finalOutput`). Real
 * `@openai/agents` runner, the SDK's `ScriptedModel`.
 */
import type { RunStreamEvent } from '@openai/agents';
import { assistantMessage } from '@openai/agents/testing';
import { describe, expect, it } from 'vitest';
import { answer, drain, filesAgent, list, remove, textOf, type Step } from './openai-agents.support.js';

/** The text of the messages and reasoning of a run result's `newItems` (what the app renders). */
function shownText(items: readonly { type: string; rawItem: unknown }[]): string {
  return items
    .filter((item) => item.type === 'message_output_item' || item.type === 'reasoning_item')
    .map((item) => JSON.stringify(item.rawItem))
    .join('\n');
}

/** A reasoning item of a model response, saying `text`. */
function reasoning(text: string): Step[number] {
  return {
    type: 'reasoning',
    id: 'rs1',
    content: [{ type: 'input_text', text }],
    rawContent: [{ type: 'reasoning_text', text }],
  } as unknown as Step[number];
}

/** The streamed run of `script`: its released events, the text of `toTextStream()`, and the stream. */
async function streamed(script: Step[]) {
  const { gate, agent, log } = filesAgent(script);
  const stream = await gate.run(agent, 'Delete the file.', { stream: true });
  let text = '';
  const reader = stream.toTextStream().getReader();
  for (let chunk = await reader.read(); chunk.done !== true; chunk = await reader.read()) text += chunk.value;
  const { events, thrown } = await drain(stream);
  return { events, thrown, text, stream, log };
}

/** True when no released event carries `text`. */
const none = (events: readonly RunStreamEvent[], text: string) => !JSON.stringify(events).includes(text);

const REFUSED_CLAIM = 'Deleted other/c.txt.';

/** The model lists notes, then claims a delete of other/c.txt beside the call (refused: unknown target), then answers. */
const BESIDE_REFUSED: Step[] = [
  list('notes', 'c1'),
  [assistantMessage(REFUSED_CLAIM), reasoning('I deleted other/c.txt.'), ...remove('other/c.txt', 'c2')],
  answer('All done.'),
];

const CLAIM = 'Deleted notes/a.txt.';

/** The claim beside the delete (it runs; an answer right after it would be refused), then a listing, the verified answer. */
const BESIDE_WRITE: Step[] = [
  list('notes', 'c1'),
  [assistantMessage(CLAIM), ...remove('notes/a.txt', 'c2')],
  list('notes', 'c3'),
  answer('Verified gone.'),
];

describe('text beside a refused call', () => {
  it('streamed: never shown, though the final answer is allowed (events and toTextStream)', async () => {
    const { events, thrown, text, log } = await streamed(BESIDE_REFUSED);
    expect(thrown).toBeUndefined();
    expect(log).toEqual(['list_files notes']);
    expect(text).toBe('All done.');
    expect(textOf(events)).toBe('All done.');
    expect(none(events, REFUSED_CLAIM)).toBe(true);
    expect(none(events, 'I deleted other/c.txt.')).toBe(true);
    expect(events.some((event) => event.type === 'run_item_stream_event' && event.name === 'tool_output')).toBe(true);
  });

  it("not streamed: not in the result's newItems (nor history, output); finalOutput is the allowed answer", async () => {
    const { gate, agent, log } = filesAgent(BESIDE_REFUSED);
    const result = await gate.run(agent, 'Delete other/c.txt.');
    expect(log).toEqual(['list_files notes']);
    expect(result.finalOutput).toBe('All done.');
    expect(shownText(result.newItems)).toContain('All done.');
    expect(shownText(result.newItems)).not.toContain(REFUSED_CLAIM);
    expect(shownText(result.newItems)).not.toContain('I deleted other/c.txt.');
    expect(JSON.stringify(result.history)).not.toContain(REFUSED_CLAIM);
    expect(JSON.stringify(result.output)).not.toContain(REFUSED_CLAIM);
    // The run's state keeps it: the SDK resumes from it, and the model saw what it wrote.
    expect(JSON.stringify(result.state.toJSON())).toContain(REFUSED_CLAIM);
  });
});

describe('text beside a write', () => {
  it('streamed: judged once the write ran (an answer then is refused): never shown, not even after the verified answer', async () => {
    const { events, thrown, text, log } = await streamed(BESIDE_WRITE);
    expect(thrown).toBeUndefined();
    expect(log).toEqual(['list_files notes', 'delete_file notes/a.txt', 'list_files notes']);
    expect(text).toBe('Verified gone.');
    expect(none(events, CLAIM)).toBe(true);
  });

  it('not streamed: not in newItems; the verified answer is', async () => {
    const { gate, agent } = filesAgent(BESIDE_WRITE);
    const result = await gate.run(agent, 'Delete notes/a.txt.');
    expect(result.finalOutput).toBe('Verified gone.');
    expect(shownText(result.newItems)).not.toContain(CLAIM);
    expect(shownText(result.newItems)).toContain('Verified gone.');
  });
});

describe('text beside a read that verifies the change', () => {
  it('is shown, streamed or not, in its order (an answer right after the read is allowed)', async () => {
    const script = (): Step[] => [
      list('notes', 'c1'),
      remove('notes/a.txt', 'c2'),
      [assistantMessage(CLAIM), ...list('notes', 'c3')],
      answer(' Checked.'),
    ];
    const { text } = await streamed(script());
    expect(text).toBe(`${CLAIM} Checked.`);
    const { gate, agent } = filesAgent(script());
    const result = await gate.run(agent, 'Delete notes/a.txt.');
    expect(shownText(result.newItems)).toContain(CLAIM);
  });
});

describe('text beside a call waiting for its approval', () => {
  it('is not shown when the stream stops on the approval request', async () => {
    const { gate, agent } = filesAgent(
      [list('notes', 'c1'), [assistantMessage(CLAIM), ...remove('notes/a.txt', 'c2')]],
      {},
      { approval: true },
    );
    const stream = await gate.run(agent, 'Delete notes/a.txt.', { stream: true });
    const { events, thrown } = await drain(stream);
    expect(thrown).toBeUndefined();
    expect(stream.result.interruptions.map((item) => item.name)).toEqual(['delete_file']);
    expect(none(events, CLAIM)).toBe(true);
    const plain = filesAgent([list('notes', 'c1'), [assistantMessage(CLAIM), ...remove('notes/a.txt', 'c2')]], {}, { approval: true });
    const result = await plain.gate.run(plain.agent, 'Delete notes/a.txt.');
    expect(result.interruptions).toHaveLength(1);
    expect(shownText(result.newItems)).not.toContain(CLAIM);
  });
});

describe('reasoning', () => {
  it('of a refused answer is never streamed (no reasoning_item_created, no delta with it)', async () => {
    const REASONING = 'Reasoning: notes/a.txt is deleted.';
    const { events, thrown, text } = await streamed([
      list('notes', 'c1'),
      remove('notes/a.txt', 'c2'),
      [reasoning(REASONING), assistantMessage('Hmm.')],
      list('notes', 'c3'),
      answer('Verified gone.'),
    ]);
    expect(thrown).toBeUndefined();
    expect(text).toBe('Verified gone.');
    expect(none(events, REASONING)).toBe(true);
    expect(events.some((event) => event.type === 'run_item_stream_event' && event.name === 'reasoning_item_created')).toBe(false);
  });

  it('of the allowed answer is shown with it', async () => {
    const { events } = await streamed([list('notes', 'c1'), [reasoning('Only a listing.'), assistantMessage('notes has a.txt.')]]);
    expect(events.some((event) => event.type === 'run_item_stream_event' && event.name === 'reasoning_item_created')).toBe(true);
    expect(textOf(events)).toBe('notes has a.txt.');
  });
});
