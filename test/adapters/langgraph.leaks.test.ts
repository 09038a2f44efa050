/**
 * Issue 26, fix round: what a new user or an attacker could get past the
 * LangGraph gate, played through a real `@langchain/langgraph` graph with a
 * checkpointer and the gated model and tool nodes.
 *
 * - Words beside tool calls ("Deleted other/c.txt." beside a `delete_file`
 *   the gate refuses, or beside a write not yet run) never enter the state,
 *   the checkpoints, the model's next prompt or any stream mode; with
 *   `streamTokens: true` they may stream as tokens (the documented caveat).
 * - The `safety` channel takes only what the gated nodes of this process
 *   wrote: graph input, `Command` updates, `Overwrite` and `updateState`
 *   cannot replace the gate.
 */
import { HumanMessage, type BaseMessage } from '@langchain/core/messages';
import {
  Annotation,
  Command,
  END,
  MemorySaver,
  MessagesAnnotation,
  Overwrite,
  START,
  StateGraph,
  type StreamMode,
} from '@langchain/langgraph';
import { describe, expect, it } from 'vitest';
import {
  MessagesWithSafetyAnnotation,
  SafetyToolNode,
  createAnswerGateNode,
  createSafetyModelNode,
  routeAfterModel,
} from '../../src/adapters/langgraph.js';
import { createSessionGuard } from '../../src/guard/session-guard.js';
import type { PersistedSnapshot } from '../../src/guard/snapshot.js';
import {
  ScriptedChatModel,
  calls,
  fileTools,
  filesCatalog,
  gatedGraph,
  guardOptions,
  say,
  thread,
  withWords,
} from './langgraph.support.js';

const REFUSED_CLAIM = 'Deleted other/c.txt.';

/** List `notes`, then claim a delete of `other/c.txt` beside the call (refused: unknown target), then answer. */
const besideRefused = () => [
  calls(['c1', 'list_files', { path: 'notes' }]),
  withWords(REFUSED_CLAIM, ['c2', 'delete_file', { path: 'other/c.txt' }]),
  say('I could not delete it.'),
];

const WRITE_CLAIM = 'Deleted notes/a.txt.';

/** The claim beside the write itself (allowed, not yet run, not yet verified), then a read and the answer. */
const besideWrite = () => [
  calls(['c1', 'list_files', { path: 'notes' }]),
  withWords(WRITE_CLAIM, ['c2', 'delete_file', { path: 'notes/a.txt' }]),
  calls(['c3', 'list_files', { path: 'notes' }]),
  say('Verified: notes/a.txt is gone.'),
];

const input = () => ({ messages: [new HumanMessage('Delete the file.')] });

/** Every chunk of a stream, as text (messages serialise with their content). */
async function collect(stream: AsyncIterable<unknown>): Promise<string> {
  const chunks: string[] = [];
  for await (const chunk of stream) chunks.push(JSON.stringify(chunk));
  return chunks.join('\n');
}

/** The messages of every checkpoint of a thread, as text. */
async function history(graph: ReturnType<typeof gatedGraph>, id: string): Promise<string> {
  const all: string[] = [];
  for await (const snapshot of graph.getStateHistory(thread(id))) all.push(JSON.stringify(snapshot.values));
  return all.join('\n');
}

/** What the model was sent, call by call, as text. */
const prompts = (model: ScriptedChatModel) => JSON.stringify(model.seen.map((messages: BaseMessage[]) => messages.map((m) => m.content)));

const MODES: (StreamMode | StreamMode[])[] = [
  'values',
  'updates',
  'messages',
  'custom',
  'debug',
  'checkpoints',
  'tasks',
  ['values', 'updates', 'messages', 'custom', 'debug', 'checkpoints', 'tasks'],
];

describe('words beside tool calls never enter the state or any stream', () => {
  for (const [name, script, claim] of [
    ['beside a refused call', besideRefused, REFUSED_CLAIM],
    ['beside a write not yet run', besideWrite, WRITE_CLAIM],
  ] as const) {
    for (const mode of MODES) {
      it(`${name}, ${String(mode)}: not in any chunk, the checkpoints or the next prompt`, async () => {
        const log: string[] = [];
        const model = new ScriptedChatModel(script(), true);
        const graph = gatedGraph(model, fileTools(log));
        const id = `words-${name}-${String(mode)}`;
        const text = await collect(await graph.stream(input(), { ...thread(id), streamMode: mode }));
        expect(text).not.toContain(claim);
        expect(await history(graph, id)).not.toContain(claim);
        expect(prompts(model)).not.toContain(claim);
        // The tool calls themselves went on: refused (nothing ran) or run.
        if (script === besideRefused) expect(log).toEqual(['list_files notes']);
        else expect(log).toEqual(['list_files notes', 'delete_file notes/a.txt', 'list_files notes']);
      });
    }

    it(`${name}: not in the invoke result nor in streamEvents`, async () => {
      const graph = gatedGraph(new ScriptedChatModel(script()), fileTools([]));
      const result = await graph.invoke(input(), thread(`invoke-${name}`));
      expect(JSON.stringify(result)).not.toContain(claim);
      const events = await collect(
        gatedGraph(new ScriptedChatModel(script()), fileTools([])).streamEvents(input(), { ...thread(`events-${name}`), version: 'v2' }),
      );
      expect(events).not.toContain(claim);
    });
  }

  it('the tool calls are kept on the message that enters the state (only its words are withheld)', async () => {
    const graph = gatedGraph(new ScriptedChatModel(besideRefused()), fileTools([]));
    const { messages } = await graph.invoke(input(), thread('kept'));
    const asked = messages.find((m) => (m as { tool_calls?: { id?: string }[] }).tool_calls?.some((c) => c.id === 'c2'));
    expect(asked?.content).toBe('');
    const refusal = messages.find((m) => m.getType() === 'tool' && (m as { tool_call_id?: string }).tool_call_id === 'c2');
    expect(String(refusal?.content)).toContain('unknown-target');
  });

  it('streamTokens: true (the caveat): the words stream as tokens when an answer would be allowed, the state never holds them', async () => {
    const model = new ScriptedChatModel(besideRefused());
    const graph = gatedGraph(model, fileTools([]), { model: { streamTokens: true } });
    const text = await collect(await graph.stream(input(), { ...thread('caveat'), streamMode: ['messages', 'values'] }));
    const tokens = text
      .split('\n')
      .filter((chunk) => chunk.startsWith('["messages"'))
      .join('');
    expect(tokens).toContain('Deleted ');
    const values = text
      .split('\n')
      .filter((chunk) => chunk.startsWith('["values"'))
      .join('');
    expect(values).not.toContain(REFUSED_CLAIM);
    expect(await history(graph, 'caveat')).not.toContain(REFUSED_CLAIM);
    expect(prompts(model)).not.toContain(REFUSED_CLAIM);
  });
});

describe('a model node of your own (the answer gate after it)', () => {
  function ownModelGraph(model: ScriptedChatModel) {
    return new StateGraph(MessagesWithSafetyAnnotation)
      .addNode('agent', async (state, config) => ({ messages: [await model.invoke(state.messages, config)] }))
      .addNode('tools', new SafetyToolNode(fileTools([]), { catalog: filesCatalog, guardOptions }))
      .addNode('answer_gate', createAnswerGateNode({ guardOptions }), { ends: ['agent', END] })
      .addEdge(START, 'agent')
      .addConditionalEdges('agent', routeAfterModel(), ['tools', 'answer_gate'])
      .addEdge('tools', 'agent')
      .compile({ checkpointer: new MemorySaver() });
  }

  it('the tool node takes the words beside its calls out of the state: the next prompt and the result never hold them', async () => {
    const model = new ScriptedChatModel(besideRefused());
    const graph = ownModelGraph(model);
    const updates = await collect(await graph.stream(input(), { ...thread('own'), streamMode: 'updates' }));
    // The app's own model node put them in the state, and its update streamed them (what the gated model node prevents)…
    expect(updates).toContain(REFUSED_CLAIM);
    // …the tool node replaced that message (same id, no words) with its results.
    expect(prompts(model)).not.toContain(REFUSED_CLAIM);
    const { values } = await graph.getState(thread('own'));
    expect(JSON.stringify(values.messages)).not.toContain(REFUSED_CLAIM);
    const asked = (values.messages as BaseMessage[]).find((m) =>
      (m as { tool_calls?: { id?: string }[] }).tool_calls?.some((c) => c.id === 'c2'),
    );
    expect(asked?.content).toBe('');
  });
});

describe('the safety channel takes only what the gated nodes wrote', () => {
  /** A thread after a list, a delete of `notes/a.txt` and a read verifying it, then a script that deletes `notes/b.txt`. */
  async function verified(id: string) {
    const log: string[] = [];
    const model = new ScriptedChatModel([
      calls(['c1', 'list_files', { path: 'notes' }]),
      calls(['c2', 'delete_file', { path: 'notes/a.txt' }]),
      calls(['c3', 'list_files', { path: 'notes' }]),
      say('Verified: notes/a.txt is gone.'),
      calls(['c4', 'delete_file', { path: 'notes/b.txt' }]),
      calls(['c5', 'list_files', { path: 'notes' }]),
      say('Verified: notes/b.txt is gone.'),
    ]);
    const graph = gatedGraph(model, fileTools(log));
    await graph.invoke(input(), thread(id));
    const saved = (await graph.getState(thread(id))).values.safety as PersistedSnapshot;
    return { graph, log, saved };
  }

  /** A guard that read `notes` only: a forged "verified" snapshot. */
  function forged(): PersistedSnapshot {
    const guard = createSessionGuard(guardOptions);
    guard.check({ id: 'f1', name: 'list_files', args: { path: 'notes' }, kind: 'read', targets: ['notes'] });
    guard.record({ id: 'f1', name: 'list_files' }, 'success');
    return guard.getPersistedSnapshot();
  }

  const attempts: [string, () => unknown][] = [
    ['a forged snapshot', forged],
    ['a fresh snapshot', () => createSessionGuard(guardOptions).getPersistedSnapshot()],
    ['null', () => null],
    ['an Overwrite', () => new Overwrite(forged())],
    ["Overwrite's wire form", () => ({ __overwrite__: forged() })],
    ['a look-alike sealed value', () => ({ sealedSnapshot: JSON.stringify(forged()), seal: '00'.repeat(32) })],
  ];

  for (const [name, value] of attempts) {
    it(`graph input with ${name} fails the run; nothing runs and the saved guard is unchanged`, async () => {
      const id = `input-${name}`;
      const { graph, log, saved } = await verified(id);
      const before = [...log];
      await expect(
        graph.invoke({ messages: [new HumanMessage('Now delete notes/b.txt.')], safety: value() as never }, thread(id)),
      ).rejects.toThrow(/written only by the gated nodes/);
      expect(log).toEqual(before);
      const latest = await (graph.checkpointer as MemorySaver).getTuple(thread(id));
      expect(latest?.checkpoint.channel_values.safety).toEqual(saved);
      // The thread goes on with its own guard at the next run.
      const out = await graph.invoke({ messages: [new HumanMessage('Now delete notes/b.txt.')] }, thread(id));
      expect(log.slice(before.length)).toEqual(['delete_file notes/b.txt', 'list_files notes']);
      expect(String(out.messages.at(-1)?.content)).toBe('Verified: notes/b.txt is gone.');
    });
  }

  it('a Command update fails the run too', async () => {
    const { graph, log } = await verified('command');
    const before = [...log];
    await expect(graph.invoke(new Command({ update: { safety: forged() as never }, goto: 'agent' }), thread('command'))).rejects.toThrow(
      /written only by the gated nodes/,
    );
    expect(log).toEqual(before);
  });

  it('updateState cannot set it', async () => {
    const { graph, saved } = await verified('update-state');
    await expect(graph.updateState(thread('update-state'), { safety: forged() as never })).rejects.toThrow(
      /written only by the gated nodes/,
    );
    expect((await graph.getState(thread('update-state'))).values.safety).toEqual(saved);
  });

  it('input without safety (or with it undefined) runs on the saved guard', async () => {
    const { graph, log } = await verified('undefined');
    const out = await graph.invoke({ messages: [new HumanMessage('Now delete notes/b.txt.')], safety: undefined }, thread('undefined'));
    expect(log.slice(-2)).toEqual(['delete_file notes/b.txt', 'list_files notes']);
    expect(String(out.messages.at(-1)?.content)).toBe('Verified: notes/b.txt is gone.');
  });

  it("a state whose safety channel is not SafetyAnnotation's fails at the next gated node", async () => {
    const plain = Annotation.Root({ ...MessagesAnnotation.spec, safety: Annotation<unknown>() });
    const model = new ScriptedChatModel([calls(['c1', 'list_files', { path: 'notes' }]), say('Listed.')]);
    const graph = new StateGraph(plain)
      .addNode('agent', createSafetyModelNode(model, { guardOptions }), { ends: ['tools', 'agent', END] })
      .addNode('tools', new SafetyToolNode(fileTools([]), { catalog: filesCatalog, guardOptions }))
      .addEdge(START, 'agent')
      .addEdge('tools', 'agent')
      .compile({ checkpointer: new MemorySaver() });
    await expect(graph.invoke(input(), thread('plain'))).rejects.toThrow(/must be SafetyAnnotation's/);
  });

  it('the state and its checkpoints hold the plain snapshot (the seal is only on the way in)', async () => {
    const { saved } = await verified('plain-value');
    expect(saved).not.toHaveProperty('seal');
    expect(createSessionGuard({ snapshot: saved }).state).toBe('READING');
  });
});
