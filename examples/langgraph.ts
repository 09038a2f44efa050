/**
 * The safety gate in a LangGraph.js agent graph, with a scripted chat model
 * (a `BaseChatModel` answering each call with the next message of its
 * script) playing the conversation, so it runs offline:
 *
 *   node --import ./test/support/ts-register.mjs examples/langgraph.ts
 *
 * In your app the model is a real chat model (e.g. `new ChatOpenAI(...)
 * .bindTools(tools)`), and the imports are `pulse-safety-fsm/langgraph`.
 * Run by test/adapters/langgraph.example.test.ts.
 */
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { tool } from '@langchain/core/tools';
import { END, MemorySaver, START, StateGraph } from '@langchain/langgraph';
import { z } from 'zod';
import { createSessionGuard } from '../src/index.js';
import { MessagesWithSafetyAnnotation, SafetyToolNode, createSafetyModelNode } from '../src/adapters/langgraph.js';

// What each tool does, with its targets: a listing reads the directory it names, a deletion writes its file.
const catalog = {
  name: 'files',
  tools: {
    list_files: { kind: 'read', targets: { path: 'path' } },
    delete_file: { kind: 'write', targets: { path: 'path' } },
  },
} as const;

const files = new Set(['notes/a.txt', 'notes/b.txt', 'other/c.txt']);
const schema = z.object({ path: z.string() });
const tools = [
  tool(async ({ path }) => [...files].filter((file) => file.startsWith(`${path}/`)).join(', ') || '(empty)', {
    name: 'list_files',
    description: 'List the files under a directory',
    schema,
  }),
  tool(async ({ path }) => (files.delete(path) ? `deleted ${path}` : `Error: no file ${path}`), {
    name: 'delete_file',
    description: 'Delete a file',
    schema,
  }),
];

// A scripted model: it looks in the wrong place, deletes, then claims success before checking.
class ScriptedChatModel extends BaseChatModel {
  private turn = 0;
  constructor(private readonly script: AIMessage[]) {
    super({});
  }
  _llmType(): string {
    return 'scripted';
  }
  async _generate(_messages: BaseMessage[]): Promise<ChatResult> {
    const message = this.script[this.turn++]!;
    return { generations: [{ text: String(message.content), message }] };
  }
}
const call = (id: string, name: string, path: string) => new AIMessage({ content: '', tool_calls: [{ id, name, args: { path } }] });
const model = new ScriptedChatModel([
  call('c1', 'list_files', 'other'),
  call('c2', 'delete_file', 'notes/a.txt'), // refused: nothing established notes/
  call('c3', 'list_files', 'notes'),
  call('c4', 'delete_file', 'notes/a.txt'),
  new AIMessage('Deleted notes/a.txt.'), // refused: no read since the deletion; never shown
  call('c5', 'list_files', 'notes'),
  new AIMessage('notes/a.txt is deleted; notes/b.txt is left.'),
]);

// The graph: the gated model node (its answer enters the graph only once the gate allows it) and the gated tools.
// The guard's snapshot lives in the state ('safety'), so the checkpointer keeps it per thread_id.
const graph = new StateGraph(MessagesWithSafetyAnnotation)
  .addNode('agent', createSafetyModelNode(model), { ends: ['tools', 'agent', END] })
  .addNode('tools', new SafetyToolNode(tools, { catalog }))
  .addEdge(START, 'agent')
  .addEdge('tools', 'agent')
  .compile({ checkpointer: new MemorySaver() });

const config = { configurable: { thread_id: 'chat-1' } };
const refusal = (text: string) => (JSON.parse(text) as { error: { code: string; rule: string } }).error;
for await (const update of await graph.stream(
  { messages: [new HumanMessage('Delete notes/a.txt.')] },
  { ...config, streamMode: 'updates' },
)) {
  for (const [node, change] of Object.entries(update)) {
    for (const message of (change as { messages?: BaseMessage[] } | undefined)?.messages ?? []) {
      const type = message.getType();
      const calls = (message as AIMessage).tool_calls?.map((c) => `${c.name} ${String(c.args.path)}`).join(', ');
      const text = String(message.content);
      const refused = type === 'tool' && text.includes('FSM_BLOCKED') ? refusal(text) : undefined;
      console.log(`${node}: ${calls ? `calls ${calls}` : refused ? `refused: ${refused.code} ${refused.rule}` : `${type} ${text}`}`);
    }
  }
}

const { values } = await graph.getState(config);
console.log(`final answer: ${String(values.messages.at(-1)?.content)}`);
const saved = createSessionGuard({ snapshot: values.safety }); // the guard as the checkpoint keeps it
console.log(`checkpointed session: ${saved.state}, refused answers: ${saved.context.finalAnswerBlocks}`);
