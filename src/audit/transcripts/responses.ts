/**
 * The reader of OpenAI Responses API items (and Codex's, which are the
 * same): function, custom tool, shell and hosted MCP calls and their
 * outputs. Message items are read as chat messages.
 *
 * Spec: ASSISTANT_SAFETY.md "Tool kinds" (what a call is); DESIGN.md §5.7
 * (whether a call failed is read from its result).
 */
import { own } from '../../util/own.js';
import { boundArguments, fail, ownString, parseArguments, type Json, type ReaderContext } from './step-builder.js';

/** OpenAI Responses API items (and Codex's). Each call item needs a string `call_id` (or `id`). */
export function readResponsesItem(item: Json, type: string, at: ReaderContext): void {
  const { out } = at;
  const callId = ownString(item, 'call_id') ?? ownString(item, 'id');
  const needId = (): string => callId ?? fail(at, `a "${type}" item needs a string "call_id"`);
  switch (type) {
    case 'function_call':
    case 'custom_tool_call': {
      const id = needId();
      const name = own(item, 'name');
      if (typeof name !== 'string') fail(at, `a "${type}" item needs a string "name"`);
      const args = type === 'function_call' ? parseArguments(own(item, 'arguments')) : (own(item, 'input') ?? '');
      out.call(id, name as string, boundArguments(args), at);
      return;
    }
    case 'local_shell_call':
    case 'shell_call':
      out.call(needId(), type === 'local_shell_call' ? 'local_shell' : 'shell', boundArguments(own(item, 'action') ?? {}), at);
      return;
    case 'mcp_call': {
      // A hosted MCP call carries its own output or error.
      const id = needId();
      const name = own(item, 'name');
      if (typeof name !== 'string') fail(at, 'a "mcp_call" item needs a string "name"');
      out.call(id, name as string, parseArguments(own(item, 'arguments')), at);
      const error = own(item, 'error');
      const failed = error !== undefined && error !== null && error !== '';
      out.result(id, name as string, failed ? { error } : (own(item, 'output') ?? ''), at);
      return;
    }
    default: {
      // function_call_output, custom_tool_call_output, local_shell_call_output, shell_call_output
      const id = needId();
      out.result(id, undefined, type === 'shell_call_output' ? own(item, 'output') : item, at);
    }
  }
}
