/**
 * The safety gate in a LangGraph.js agent graph, with a scripted chat model
 * (a `BaseChatModel` answering each call with the next message of its
 * script) playing the conversation, so it runs offline:
 *
 *   node --import ./test/visualizer/support/ts-register.mjs examples/langgraph.ts
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
import { MessagesWithSafetyAnnotation, SafetyToolNode, createAnswerGateNode, routeAfterModel } from '../src/adapters/langgraph.js';

// Which tool reads and which writes (a catalog; `kinds: { ... }` works too).
const catalog = { name: 'ops', tools: { get_status: 'read', restart: 'write' } } as const;

const schema = z.object({ host: z.string() });
const tools = [
  tool(async ({ host }) => `${host}: running`, { name: 'get_status', description: 'Status of a host', schema }),
  tool(async ({ host }) => `${host}: restarted`, { name: 'restart', description: 'Restart a host', schema }),
];

// A scripted model: it restarts before looking, then claims success before checking.
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
const call = (id: string, name: string) => new AIMessage({ content: '', tool_calls: [{ id, name, args: { host: 'web-01' } }] });
const model = new ScriptedChatModel([
  call('c1', 'restart'),
  call('c2', 'get_status'),
  call('c3', 'restart'),
  new AIMessage('Restarted web-01.'),
  call('c4', 'get_status'),
  new AIMessage('web-01 was restarted and is running.'),
]);

// The graph: the model, the gated tool node, and the answer gate on the no-tool-calls edge.
// The guard's snapshot lives in the state ('safety'), so the checkpointer keeps it per thread_id.
const graph = new StateGraph(MessagesWithSafetyAnnotation)
  .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }))
  .addNode('tools', new SafetyToolNode(tools, { catalog }))
  .addNode('answer_gate', createAnswerGateNode({ modelNode: 'agent' }), { ends: ['agent', END] })
  .addEdge(START, 'agent')
  .addConditionalEdges('agent', routeAfterModel(), ['tools', 'answer_gate'])
  .addEdge('tools', 'agent')
  .compile({ checkpointer: new MemorySaver() });

const config = { configurable: { thread_id: 'chat-1' } };
for await (const update of await graph.stream({ messages: [new HumanMessage('Restart web-01.')] }, { ...config, streamMode: 'updates' })) {
  for (const [node, change] of Object.entries(update)) {
    for (const message of (change as { messages?: BaseMessage[] } | undefined)?.messages ?? []) {
      const type = message.getType();
      if (type === 'remove') continue;
      const calls = (message as AIMessage).tool_calls?.map((c) => c.name).join(', ');
      const text = String(message.content);
      console.log(
        `${node}: ${calls ? `calls ${calls}` : `${type} ${text.includes('FSM_BLOCKED') && type === 'tool' ? 'refused: FSM_BLOCKED' : text}`}`,
      );
    }
  }
}

const { values } = await graph.getState(config);
console.log(`final answer: ${String(values.messages.at(-1)?.content)}`);
const saved = createSessionGuard({ snapshot: values.safety }); // the guard as the checkpoint keeps it
console.log(`checkpointed session: ${saved.state}, refused answers: ${saved.context.finalAnswerBlocks}`);
