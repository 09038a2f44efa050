/**
 * The reader of chat messages: OpenAI chat (`tool_calls` and `tool`
 * messages, legacy `function_call` and `function` messages, paired by name
 * in order) and Anthropic messages (`tool_use` and `tool_result` blocks).
 * tau-bench runs and Claude Code session lines carry these messages.
 *
 * Spec: ASSISTANT_SAFETY.md "Tool kinds" (what a call is); DESIGN.md §5.7
 * (whether a call failed is read from its result).
 */
import { isRecord, own } from '../../util/own.js';
import { boundArguments, fail, ownString, parseArguments, textOf, type Json, type ReaderContext } from './step-builder.js';

/** OpenAI chat (tool_calls, tool, legacy function_call / function) and Anthropic (tool_use, tool_result) messages. */
export function readChatMessage(msg: Json, role: string, at: ReaderContext): void {
  const { out } = at;
  const content = own(msg, 'content');

  if (role === 'assistant') {
    let calls = 0;
    const toolCalls = own(msg, 'tool_calls');
    if (toolCalls !== undefined && toolCalls !== null) {
      if (!Array.isArray(toolCalls)) fail(at, '"tool_calls" must be an array');
      (toolCalls as unknown[]).forEach((call, i) => {
        const fn = isRecord(call) ? own(call, 'function') : undefined;
        const id = isRecord(call) ? own(call, 'id') : undefined;
        const name = isRecord(fn) ? own(fn, 'name') : undefined;
        if (typeof id !== 'string' || typeof name !== 'string') {
          fail(at, `tool_calls[${i}] needs a string "id" and "function.name"`);
        }
        out.call(id as string, name as string, parseArguments(own(fn as Json, 'arguments')), at);
        calls += 1;
      });
    }
    const functionCall = own(msg, 'function_call');
    if (functionCall !== undefined && functionCall !== null) {
      const name = isRecord(functionCall) ? own(functionCall, 'name') : undefined;
      if (typeof name !== 'string') fail(at, '"function_call" needs a string "name"');
      out.call(out.newId('function_call'), name as string, parseArguments(own(functionCall as Json, 'arguments')), at);
      calls += 1;
    }
    if (Array.isArray(content)) {
      content.forEach((block, i) => {
        if (!isRecord(block) || own(block, 'type') !== 'tool_use') return;
        const id = own(block, 'id');
        const name = own(block, 'name');
        if (typeof id !== 'string' || typeof name !== 'string') {
          fail(at, `content[${i}] (tool_use) needs a string "id" and "name"`);
        }
        out.call(id as string, name as string, boundArguments(own(block, 'input') ?? {}), at);
        calls += 1;
      });
    }
    const text = textOf(content);
    if (calls === 0 && text.trim() !== '') out.answer(text, at);
    return;
  }

  if (role === 'tool') {
    const id = own(msg, 'tool_call_id');
    if (typeof id !== 'string') fail(at, 'a tool message needs a string "tool_call_id"');
    out.result(id as string, ownString(msg, 'name'), msg, at);
    return;
  }

  if (role === 'function') {
    // OpenAI legacy functions: no ids; the result answers the oldest open call of its name.
    const name = own(msg, 'name');
    if (typeof name !== 'string') fail(at, 'a function message needs a string "name"');
    const id = out.openCallOf(name as string) ?? out.newId('function');
    out.result(id, name as string, msg, at);
    return;
  }

  if (role === 'user') {
    if (!Array.isArray(content)) {
      out.userTurn();
      return;
    }
    let spoke = false;
    content.forEach((block, i) => {
      if (!isRecord(block) || own(block, 'type') !== 'tool_result') {
        spoke = true;
        return;
      }
      const id = own(block, 'tool_use_id');
      if (typeof id !== 'string') fail(at, `content[${i}] (tool_result) needs a string "tool_use_id"`);
      out.result(id as string, undefined, block, at);
    });
    if (spoke) out.userTurn();
  }
  // system and developer text, and other roles, neither call tools nor answer.
}
