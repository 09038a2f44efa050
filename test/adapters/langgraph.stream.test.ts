/**
 * Issue 26, item 1: a refused final answer reaches no stream. The issue's
 * example (list `notes`, delete `notes/a.txt`, claim "Deleted notes/a.txt."
 * before any read: refused; list again; answer: allowed) played through a
 * real `@langchain/langgraph` graph with the gated model node, in every
 * stream mode (`values`, `updates`, `messages`, `custom`, `debug`, and
 * `streamEvents`). The scripted model streams its answers token by token
 * (and, for `custom`, writes each token to the custom stream), so a leak of
 * any token would show. A control graph (the model node of its own and the
 * answer gate after it) shows the same check catching the leak.
 */
import { HumanMessage } from '@langchain/core/messages';
import { END, MemorySaver, START, StateGraph, type StreamMode } from '@langchain/langgraph';
import { describe, expect, it } from 'vitest';
import { MessagesWithSafetyAnnotation, SafetyToolNode, createAnswerGateNode, routeAfterModel } from '../../src/adapters/langgraph.js';
import { createSessionGuard } from '../../src/guard/session-guard.js';
import { ScriptedChatModel, calls, fileTools, filesCatalog, gatedGraph, guardOptions, say, thread } from './langgraph.support.js';

const CLAIM = 'Deleted notes/a.txt.';
const ANSWER = 'Verified: notes/a.txt is gone.';

/** The conversation (a new copy per run: messages get ids in the state). */
const script = () => [
  calls(['c1', 'list_files', { path: 'notes' }]),
  calls(['c2', 'delete_file', { path: 'notes/a.txt' }]),
  say(CLAIM), // about an unverified change: refused
  calls(['c3', 'list_files', { path: 'notes' }]),
  say(ANSWER), // allowed
];

const input = () => ({ messages: [new HumanMessage('Delete notes/a.txt.')] });

/** Every chunk of a stream, as text (messages serialise with their content). */
async function collect(stream: AsyncIterable<unknown>): Promise<string[]> {
  const chunks: string[] = [];
  for await (const chunk of stream) chunks.push(JSON.stringify(chunk));
  return chunks;
}

async function streamed(mode: StreamMode, streamTokens?: boolean, model = new ScriptedChatModel(script(), mode === 'custom')) {
  const log: string[] = [];
  const graph = gatedGraph(model, fileTools(log), streamTokens === undefined ? {} : { model: { streamTokens } });
  const chunks = await collect(await graph.stream(input(), { ...thread(`stream-${mode}`), streamMode: mode }));
  const { values } = await graph.getState(thread(`stream-${mode}`));
  return { chunks, text: chunks.join('\n'), values, log, model };
}

describe('the gated model node: no stream mode shows the refused claim', () => {
  for (const [mode, streamTokens] of (['values', 'updates', 'messages', 'debug', 'checkpoints'] as const).flatMap(
    (mode) =>
      [
        [mode, undefined],
        [mode, true],
      ] as const,
  )) {
    it(`${mode}${streamTokens ? ' with streamTokens: true' : ''}: no chunk carries the claim; the allowed answer is streamed`, async () => {
      const { text, values, log } = await streamed(mode, streamTokens);
      expect(log).toEqual(['list_files notes', 'delete_file notes/a.txt', 'list_files notes']);
      expect(text).not.toContain('Deleted');
      expect(text).toContain('Verified:');
      expect(String(values.messages.at(-1)?.content)).toBe(ANSWER);
    });
  }

  it('custom: a model writing its tokens to the custom stream writes nothing there by default', async () => {
    const { chunks, values } = await streamed('custom');
    expect(chunks).toEqual([]);
    expect(String(values.messages.at(-1)?.content)).toBe(ANSWER);
  });

  it('custom with streamTokens: true: a model writing its tokens to the custom stream shows only the allowed answer', async () => {
    const { chunks, text } = await streamed('custom', true);
    expect(text).not.toContain('Deleted');
    // The allowed answer's tokens are written: its call may stream, the gate would allow an answer then.
    expect(chunks.map((chunk) => (JSON.parse(chunk) as { token: string }).token).join('')).toBe(ANSWER);
  });

  it("streamEvents (v2) by default: no event carries the claim, no model call is there (only the nodes' updates)", async () => {
    const graph = gatedGraph(new ScriptedChatModel(script()), fileTools([]));
    const events: { event: string; name: string; data: unknown }[] = [];
    for await (const event of graph.streamEvents(input(), { ...thread('events-default'), version: 'v2' })) events.push(event);
    const text = events.map((event) => JSON.stringify(event)).join('\n');
    expect(text).not.toContain('Deleted');
    expect(text).toContain('Verified:');
    expect(events.filter((event) => event.event === 'on_chat_model_start')).toHaveLength(0);
  });

  it('streamEvents (v2) with streamTokens: true: no event carries the claim, the model call that made it is not there at all', async () => {
    const model = new ScriptedChatModel(script());
    const graph = gatedGraph(model, fileTools([]), { model: { streamTokens: true } });
    const events: { event: string; name: string; data: unknown }[] = [];
    for await (const event of graph.streamEvents(input(), { ...thread('events'), version: 'v2' })) events.push(event);
    const text = events.map((event) => JSON.stringify(event)).join('\n');
    expect(text).not.toContain('Deleted');
    expect(text).toContain('Verified:');
    // Five model calls; the two made while an answer would be refused (after the write) run without callbacks.
    expect(events.filter((event) => event.event === 'on_chat_model_start')).toHaveLength(3);
  });

  it('messages with streamTokens: true: the allowed answer comes token by token when the gate would allow an answer as the model is called', async () => {
    const { chunks } = await streamed('messages', true);
    const tokens = chunks.map((chunk) => JSON.parse(chunk) as [{ kwargs: { content: unknown } }, { langgraph_node: string }]);
    const words = tokens.filter(([, meta]) => meta.langgraph_node === 'agent').map(([message]) => message.kwargs.content);
    expect(words.slice(-ANSWER.split(' ').length).join('')).toBe(ANSWER);
  });

  it('messages by default: the allowed answer comes whole, once the gate allowed it', async () => {
    const graph = gatedGraph(new ScriptedChatModel(script()), fileTools([]));
    const chunks = await collect(await graph.stream(input(), { ...thread('whole'), streamMode: 'messages' }));
    const answers = chunks.filter((chunk) => chunk.includes('Verified:'));
    expect(answers).toHaveLength(1);
    expect(answers[0]).toContain(ANSWER);
    expect(chunks.join('\n')).not.toContain('Deleted');
  });

  it('the model is told why and goes on; the refusal is counted in the checkpointed guard', async () => {
    const { model, values } = await streamed('values');
    const told = model.seen[3]!.at(-1)!;
    expect(told.getType()).toBe('human');
    expect(String(told.content)).toMatch(/^Your final answer was not given \(FSM_BLOCKED, rule unverified-write\)/);
    expect(model.seen[3]!.map((m) => String(m.content))).not.toContain(CLAIM);
    const saved = createSessionGuard({ snapshot: values.safety });
    expect(saved.state).toBe('READING');
    expect(saved.context.finalAnswerBlocks).toBe(1);
  });

  it("a tool-calling reply's words are withheld while an answer would be refused", async () => {
    const model = new ScriptedChatModel([
      calls(['c1', 'list_files', { path: 'notes' }]),
      calls(['c2', 'delete_file', { path: 'notes/a.txt' }]),
      Object.assign(calls(['c3', 'list_files', { path: 'notes' }]), { content: 'Deleted it; let me look.' }),
      say(ANSWER),
    ]);
    const graph = gatedGraph(model, fileTools([]));
    const text = (await collect(await graph.stream(input(), { ...thread('words'), streamMode: 'updates' }))).join('\n');
    expect(text).not.toContain('Deleted');
    expect(text).toContain('"name":"list_files"');
  });
});

describe('control: a model node of its own, the answer gate after it', () => {
  function controlGraph(model: ScriptedChatModel) {
    return new StateGraph(MessagesWithSafetyAnnotation)
      .addNode('agent', async (state, config) => ({ messages: [await model.invoke(state.messages, config)] }))
      .addNode('tools', new SafetyToolNode(fileTools([]), { catalog: filesCatalog, guardOptions }))
      .addNode('answer_gate', createAnswerGateNode({ guardOptions }), { ends: ['agent', END] })
      .addEdge(START, 'agent')
      .addConditionalEdges('agent', routeAfterModel(), ['tools', 'answer_gate'])
      .addEdge('tools', 'agent')
      .compile({ checkpointer: new MemorySaver() });
  }

  for (const mode of ['values', 'updates', 'messages', 'custom', 'debug', 'checkpoints'] as const) {
    it(`${mode}: streams the claim before the gate refuses it (what the gated model node prevents)`, async () => {
      const graph = controlGraph(new ScriptedChatModel(script(), mode === 'custom'));
      const text = (await collect(await graph.stream(input(), { ...thread(`control-${mode}`), streamMode: mode }))).join('\n');
      expect(text).toContain('Deleted');
    });
  }

  it('streamEvents: streams the claim too', async () => {
    const graph = controlGraph(new ScriptedChatModel(script()));
    const text = (await collect(graph.streamEvents(input(), { ...thread('control-events'), version: 'v2' }))).join('\n');
    expect(text).toContain('Deleted');
  });
});
