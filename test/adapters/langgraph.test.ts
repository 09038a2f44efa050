/**
 * The LangGraph.js adapter (src/adapters/langgraph.ts) in a real
 * `@langchain/langgraph` 1.7 `StateGraph` with a checkpointer (`MemorySaver`),
 * driven by a scripted chat model: a `BaseChatModel` of `@langchain/core`
 * that answers each call with the next `AIMessage` of its script (the fake
 * chat models of `@langchain/core/utils/testing` answer with one fixed
 * message, or text only). The graph, the prebuilt `ToolNode` under the
 * gate, the message reducer and the checkpointer are LangGraph's.
 *
 * The scenario every adapter test plays: a write before any read (refused,
 * the model sees the refusal), a read, the write, an answer (refused, the
 * loop goes on), a read, the answer (allowed).
 */
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { tool } from '@langchain/core/tools';
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createSessionGuard, type SessionGuard } from '../../src/guard/session-guard.js';
import { AdapterConfigError } from '../../src/adapters/common.js';
import {
  MessagesWithSafetyAnnotation,
  SafetyToolNode,
  createAnswerGateNode,
  routeAfterModel,
  type SafetyToolNodeOptions,
} from '../../src/adapters/langgraph.js';
import { createSharedSessionStore } from '../../src/store/shared-session-store.js';
import { createSessionStore } from '../../src/store/session-store.js';

const catalog = { name: 'test', tools: { get_status: 'read', restart: 'write' } } as const;

/** A chat model that plays a script: one AIMessage per call; what it was sent is kept. */
class ScriptedChatModel extends BaseChatModel {
  readonly seen: BaseMessage[][] = [];
  private next = 0;

  constructor(private readonly script: AIMessage[]) {
    super({});
  }

  _llmType(): string {
    return 'scripted';
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.seen.push(messages);
    const message = this.script[this.next];
    this.next += 1;
    if (message === undefined) throw new Error(`the script has no answer for call ${this.next}`);
    return { generations: [{ text: typeof message.content === 'string' ? message.content : '', message }] };
  }
}

const calls = (...list: [id: string, name: string][]) =>
  new AIMessage({
    content: '',
    tool_calls: list.map(([id, name]) => ({ id, name, args: { host: 'web-01' }, type: 'tool_call' as const })),
  });
const say = (text: string) => new AIMessage({ content: text });

/** The scenario's model turns (a new copy per run: messages get ids in the state). */
const scenario = () => [
  calls(['c1', 'restart']), // a write before any read: refused
  calls(['c2', 'get_status']), // a read: a target
  calls(['c3', 'restart']), // the write: admitted
  say('Restarted web-01.'), // an answer about an unverified change: refused
  calls(['c4', 'get_status']), // a read after the write: verified
  say('web-01 restarted and running.'), // the answer: allowed
];

/** The two tools; what ran is logged; the n-th get_status (from 1) does what `status` says. */
function makeTools(log: string[], status?: (n: number) => string) {
  let reads = 0;
  const schema = z.object({ host: z.string() });
  return [
    tool(
      async ({ host }) => {
        reads += 1;
        log.push(`get_status ${reads}`);
        return status === undefined ? `${host}: running` : status(reads);
      },
      { name: 'get_status', description: 'Read the status of a host', schema },
    ),
    tool(
      async ({ host }) => {
        log.push('restart');
        return `${host}: restart requested`;
      },
      { name: 'restart', description: 'Restart a host', schema },
    ),
  ];
}

let clock = 1_000;
const guardOptions = { now: () => (clock += 1) };

function buildGraph(model: ScriptedChatModel, tools: ReturnType<typeof makeTools>, gate: Partial<SafetyToolNodeOptions> = {}) {
  return new StateGraph(MessagesWithSafetyAnnotation)
    .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode('tools', new SafetyToolNode(tools, { catalog, guardOptions, ...gate }))
    .addNode('answer_gate', createAnswerGateNode({ guardOptions, ...(gate.getGuard === undefined ? {} : { getGuard: gate.getGuard }) }), {
      ends: ['agent', END],
    })
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', routeAfterModel(), ['tools', 'answer_gate'])
    .addEdge('tools', 'agent')
    .compile({ checkpointer: new MemorySaver() });
}

const thread = (id: string) => ({ configurable: { thread_id: id } });

function texts(messages: BaseMessage[]): string[] {
  return messages.map(
    (m) =>
      `${m.getType()}${m instanceof ToolMessage ? `[${m.status}]` : ''}: ${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}`,
  );
}

/** The guard a state's snapshot restores. */
function guardOf(values: Record<string, unknown>): SessionGuard {
  return createSessionGuard({ snapshot: values.safety });
}

describe('SafetyToolNode and the answer gate: the scenario', () => {
  async function play() {
    const log: string[] = [];
    const model = new ScriptedChatModel(scenario());
    const graph = buildGraph(model, makeTools(log));
    const final = await graph.invoke({ messages: [new HumanMessage('Restart web-01.')] }, thread('t1'));
    return { log, model, graph, final };
  }

  it('runs only the admitted calls: the write before any read never ran', async () => {
    const { log } = await play();
    expect(log).toEqual(['get_status 1', 'restart', 'get_status 2']);
  });

  it('gives the model the refusal of the early write as an error ToolMessage with the stable code', async () => {
    const { model } = await play();
    const refusal = texts(model.seen[1]!).find((line) => line.startsWith('tool[error]'));
    expect(refusal).toContain('"code":"FSM_BLOCKED"');
    expect(refusal).toContain('"state":"RESOLVING"');
  });

  it('sends the refused answer back to the model as words, without the answer itself', async () => {
    const { model } = await play();
    const lines = texts(model.seen[4]!);
    expect(lines.at(-1)).toMatch(/^human: Your final answer was not given \(FSM_BLOCKED, rule unverified-write\)/);
    expect(lines).not.toContain('ai: Restarted web-01.');
  });

  it('ends on the allowed answer, the refused one gone from the state', async () => {
    const { final, model } = await play();
    expect(model.seen).toHaveLength(6);
    expect(texts(final.messages).at(-1)).toBe('ai: web-01 restarted and running.');
    expect(texts(final.messages)).not.toContain('ai: Restarted web-01.');
  });

  it('checkpoints the guard with the thread: verified, one refused answer counted', async () => {
    const { graph } = await play();
    const saved = guardOf((await graph.getState(thread('t1'))).values);
    expect(saved.state).toBe('READING');
    expect(saved.context.finalAnswerBlocks).toBe(1);
  });
});

describe("the guard is the thread's", () => {
  it('a later turn on the same thread keeps the target: its write is admitted at once', async () => {
    const log: string[] = [];
    const model = new ScriptedChatModel([...scenario(), calls(['c5', 'restart']), calls(['c6', 'get_status']), say('Done again.')]);
    const graph = buildGraph(model, makeTools(log));
    await graph.invoke({ messages: [new HumanMessage('Restart web-01.')] }, thread('t1'));
    await graph.invoke({ messages: [new HumanMessage('Once more.')] }, thread('t1'));
    expect(log.slice(3)).toEqual(['restart', 'get_status 3']);
  });

  it('another thread starts from RESOLVING: its write before a read is refused', async () => {
    const log: string[] = [];
    const model = new ScriptedChatModel([...scenario(), calls(['d1', 'restart']), say('Could not.')]);
    const graph = buildGraph(model, makeTools(log));
    await graph.invoke({ messages: [new HumanMessage('Restart web-01.')] }, thread('t1'));
    await graph.invoke({ messages: [new HumanMessage('Restart web-02.')] }, thread('t2'));
    expect(log.slice(3)).toEqual([]);
  });

  it('each checkpoint holds the guard as it was then (time travel restores the gate with the conversation)', async () => {
    const model = new ScriptedChatModel(scenario());
    const graph = buildGraph(model, makeTools([]));
    await graph.invoke({ messages: [new HumanMessage('Restart web-01.')] }, thread('t1'));
    const states: string[] = [];
    for await (const checkpoint of graph.getStateHistory(thread('t1'))) {
      if (checkpoint.values.safety !== undefined) states.push(guardOf(checkpoint.values).state);
    }
    const changes = states.reverse().filter((state, i, all) => i === 0 || all[i - 1] !== state);
    expect(changes).toEqual(['RESOLVING', 'READING', 'VERIFYING', 'READING']);
  });
});

describe('outcomes: the ToolMessage says how the call went', () => {
  const readAfterWrite = () => [
    calls(['c1', 'get_status']),
    calls(['c2', 'restart']),
    calls(['c3', 'get_status']),
    say('Done.'),
    say('Done!'),
  ];

  async function run(status: (n: number) => string) {
    const model = new ScriptedChatModel(readAfterWrite());
    const graph = buildGraph(model, makeTools([], status), {});
    // The model insists; the recursion limit ends the run before a third answer is asked for.
    const final = await graph
      .invoke({ messages: [new HumanMessage('go')] }, { ...thread('o1'), recursionLimit: 12 })
      .catch((error: unknown) => error);
    return { model, graph, final };
  }

  it('a read that throws (an error ToolMessage) does not verify the write', async () => {
    const { graph, model } = await run((n) => {
      if (n === 2) throw new Error('status service unavailable');
      return 'web-01: running';
    });
    expect(texts(model.seen[3]!).at(-1)).toMatch(/^tool\[error\]: Error: status service unavailable/);
    expect(guardOf((await graph.getState(thread('o1'))).values).state).toBe('VERIFYING');
  });

  it('a read whose content reports a failure does not verify it either', async () => {
    const { graph } = await run((n) => (n === 2 ? 'Error: host not found' : 'web-01: running'));
    expect(guardOf((await graph.getState(thread('o1'))).values).state).toBe('VERIFYING');
  });

  it('a read that succeeds does', async () => {
    const { graph } = await run(() => 'web-01: running');
    expect(guardOf((await graph.getState(thread('o1'))).values).state).toBe('READING');
  });
});

describe('parallel tool calls in one message', () => {
  it('a read beside a write does not establish a target: the write is refused', async () => {
    const log: string[] = [];
    const model = new ScriptedChatModel([calls(['c1', 'get_status'], ['c2', 'restart']), say('Checked.')]);
    const graph = buildGraph(model, makeTools(log));
    const final = await graph.invoke({ messages: [new HumanMessage('go')] }, thread('p1'));
    expect(log).toEqual(['get_status 1']);
    expect(texts(final.messages).filter((line) => line.startsWith('tool[error]'))).toHaveLength(1);
  });

  it('a read beside the write does not verify it: the answer is refused', async () => {
    const model = new ScriptedChatModel([
      calls(['c1', 'get_status']),
      calls(['c2', 'restart'], ['c3', 'get_status']),
      say('Done.'),
      say('Done!'),
    ]);
    const graph = buildGraph(model, makeTools([]));
    await graph.invoke({ messages: [new HumanMessage('go')] }, { ...thread('p2'), recursionLimit: 8 }).catch(() => undefined);
    const saved = guardOf((await graph.getState(thread('p2'))).values);
    expect(saved.state).toBe('VERIFYING');
    expect(saved.context.finalAnswerBlocks).toBeGreaterThan(0);
  });
});

describe('guards from a session store by thread_id', () => {
  it('gates through getGuard(threadId), keeping nothing in the graph state', async () => {
    let t = 1_000;
    const sessions = createSessionStore({ now: () => (t += 1) });
    const model = new ScriptedChatModel(scenario());
    const graph = buildGraph(model, makeTools([]), { getGuard: (id) => sessions.session(id) });
    const final = await graph.invoke({ messages: [new HumanMessage('Restart web-01.')] }, thread('s1'));
    expect(sessions.session('s1').state).toBe('READING');
    expect(sessions.session('s1').context.finalAnswerBlocks).toBe(1);
    expect(final.safety).toBeUndefined();
  });

  it('gates through a shared store (an asynchronous guard), each decision committed to it', async () => {
    let t = 1_000;
    const sessions = createSharedSessionStore({ now: () => (t += 1) });
    const log: string[] = [];
    const model = new ScriptedChatModel(scenario());
    const graph = buildGraph(model, makeTools(log), { getGuard: (id) => sessions.session(id) });
    await graph.invoke({ messages: [new HumanMessage('Restart web-01.')] }, thread('s2'));
    expect(log).toEqual(['get_status 1', 'restart', 'get_status 2']);
    const saved = createSessionGuard({ snapshot: await sessions.session('s2').getPersistedSnapshot() });
    expect(saved.state).toBe('READING');
    expect(saved.context.finalAnswerBlocks).toBe(1);
  });

  it('refuses a Send fan-out when the snapshot lives in the state', async () => {
    const node = new SafetyToolNode(makeTools([]), { catalog });
    const send = { lg_tool_call: { id: 'c1', name: 'get_status', args: { host: 'web-01' } }, messages: [] };
    await expect(node.invoke(send, thread('x'))).rejects.toThrow(/Send fan-out of tool calls needs getGuard/);
  });
});

describe('a state without the safety channel', () => {
  it('fails the run instead of starting the gate afresh at every node', async () => {
    const model = new ScriptedChatModel(scenario());
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }))
      .addNode('tools', new SafetyToolNode(makeTools([]), { catalog }))
      .addNode('answer_gate', createAnswerGateNode(), { ends: ['agent', END] })
      .addEdge(START, 'agent')
      .addConditionalEdges('agent', routeAfterModel(), ['tools', 'answer_gate'])
      .addEdge('tools', 'agent')
      .compile();
    await expect(graph.invoke({ messages: [new HumanMessage('Restart web-01.')] })).rejects.toThrow(
      /holds no guard snapshot under 'safety'/,
    );
  });
});

describe('configuration errors at construction', () => {
  it('refuses tools of which none can read or resolve', () => {
    expect(() => new SafetyToolNode(makeTools([]), { kinds: { get_status: 'write', restart: 'write' } })).toThrow(AdapterConfigError);
  });

  it('refuses a node without a classification source', () => {
    expect(() => new SafetyToolNode(makeTools([]), {})).toThrow(/no classification source/);
  });
});
