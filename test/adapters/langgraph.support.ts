/**
 * What the LangGraph adapter's tests share: a scripted chat model (a
 * `BaseChatModel` of `@langchain/core` that answers each call with the next
 * `AIMessage` of its script, and streams it token by token when LangGraph
 * asks for tokens; the fake chat models of `@langchain/core/utils/testing`
 * answer with one fixed message or text only), the file tools of the
 * issue's example (listing and deleting, classified with targets), and a
 * graph built with the gated model node.
 */
import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, AIMessageChunk, type BaseMessage } from '@langchain/core/messages';
import { ChatGenerationChunk, type ChatResult } from '@langchain/core/outputs';
import { tool } from '@langchain/core/tools';
import { MemorySaver, START, StateGraph, END, getWriter } from '@langchain/langgraph';
import { z } from 'zod';
import {
  MessagesWithSafetyAnnotation,
  SafetyToolNode,
  createSafetyModelNode,
  type SafetyModelNodeOptions,
  type SafetyToolNodeOptions,
} from '../../src/adapters/langgraph.js';

/** A chat model that plays a script: one AIMessage per call; what it was sent is kept. */
export class ScriptedChatModel extends BaseChatModel {
  readonly seen: BaseMessage[][] = [];
  private next = 0;

  /** `custom`: each token is also written to LangGraph's custom stream (`getWriter()`), as a model wrapper reporting progress would. */
  constructor(
    private readonly script: AIMessage[],
    private readonly custom = false,
  ) {
    super({});
  }

  _llmType(): string {
    return 'scripted';
  }

  private take(messages: BaseMessage[]): AIMessage {
    this.seen.push(messages);
    const message = this.script[this.next];
    this.next += 1;
    if (message === undefined) throw new Error(`the script has no answer for call ${this.next}`);
    return message;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const message = this.take(messages);
    const text = typeof message.content === 'string' ? message.content : '';
    if (this.custom) this.write(text);
    return { generations: [{ text, message }] };
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    _options: unknown,
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const message = this.take(messages);
    // Its words first, token by token (a reply calling tools may have words beside its calls), then its calls.
    const text = typeof message.content === 'string' ? message.content : '';
    for (const word of text.split(/(?<= )/).filter((token) => token !== '')) {
      if (this.custom) this.write(word);
      const chunk = new ChatGenerationChunk({ text: word, message: new AIMessageChunk({ content: word }) });
      await runManager?.handleLLMNewToken(word, undefined, undefined, undefined, undefined, { chunk });
      yield chunk;
    }
    const calls = message.tool_calls ?? [];
    if (calls.length > 0) {
      const tool_call_chunks = calls.map((call, index) => ({
        id: call.id,
        name: call.name,
        args: JSON.stringify(call.args),
        index,
        type: 'tool_call_chunk' as const,
      }));
      yield new ChatGenerationChunk({ text: '', message: new AIMessageChunk({ content: '', tool_call_chunks }) });
    }
  }

  private write(text: string): void {
    let writer: ((chunk: unknown) => void) | undefined;
    try {
      writer = getWriter() as ((chunk: unknown) => void) | undefined;
    } catch {
      writer = undefined;
    }
    writer?.({ token: text });
  }
}

/** A model turn calling tools: `[id, name, args]`; `withWords` gives it words beside its calls. */
export const calls = (...list: [id: string, name: string, args: Record<string, unknown>][]) =>
  new AIMessage({ content: '', tool_calls: list.map(([id, name, args]) => ({ id, name, args, type: 'tool_call' as const })) });
/** A model turn with words beside its tool calls (`[id, name, args]`). */
export const withWords = (words: string, ...list: [id: string, name: string, args: Record<string, unknown>][]) =>
  new AIMessage({ content: words, tool_calls: list.map(([id, name, args]) => ({ id, name, args, type: 'tool_call' as const })) });
/** A model turn answering in words. */
export const say = (text: string) => new AIMessage({ content: text });

import { filesCatalog } from '../fixtures/files-catalog.js';

export { filesCatalog };

/** The file tools over an in-memory tree; what ran is logged. */
export function fileTools(log: string[], files = new Set(['notes/a.txt', 'notes/b.txt', 'other/c.txt'])) {
  const schema = z.object({ path: z.string() });
  return [
    tool(
      async ({ path }) => {
        log.push(`list_files ${path}`);
        return [...files].filter((file) => file.startsWith(`${path}/`)).join('\n') || '(empty)';
      },
      { name: 'list_files', description: 'List the files under a directory', schema },
    ),
    tool(
      async ({ path }) => {
        log.push(`delete_file ${path}`);
        files.delete(path);
        return `deleted ${path}`;
      },
      { name: 'delete_file', description: 'Delete a file', schema },
    ),
  ];
}

let clock = 1_000;
/** A clock for the guards (epoch ms, one per call). */
export const guardOptions = { now: () => (clock += 1) };

/** The gated graph: the gated model node and the gated tool node (`toolNode`), a checkpointer. */
export function gatedGraph(
  model: ScriptedChatModel,
  tools: ConstructorParameters<typeof SafetyToolNode>[0],
  options: { tool?: Partial<SafetyToolNodeOptions>; model?: SafetyModelNodeOptions; interruptBefore?: 'tools'[] } = {},
) {
  const shared =
    options.tool?.getGuard === undefined
      ? { guardOptions: options.tool?.guardOptions ?? guardOptions }
      : { getGuard: options.tool.getGuard };
  const toolNode = new SafetyToolNode(tools, { catalog: filesCatalog, guardOptions, ...options.tool });
  const graph = new StateGraph(MessagesWithSafetyAnnotation)
    .addNode('agent', createSafetyModelNode(model, { ...shared, ...options.model }), { ends: ['tools', 'agent', END] })
    .addNode('tools', toolNode)
    .addEdge(START, 'agent')
    .addEdge('tools', 'agent')
    .compile({
      checkpointer: new MemorySaver(),
      ...(options.interruptBefore === undefined ? {} : { interruptBefore: options.interruptBefore }),
    });
  return Object.assign(graph, { toolNode });
}

/** A run's config on a thread. */
export const thread = (id: string) => ({ configurable: { thread_id: id } });
