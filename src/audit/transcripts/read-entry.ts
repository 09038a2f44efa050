/**
 * One entry of a conversation, read by the reader of its format: a chat
 * message, a Responses item, a Gemini content or session message, or a
 * Claude Code or Codex log line wrapping one of those. The `type` sets here
 * say which reader an entry goes to; format detection (`read-transcript.ts`)
 * tests the same sets.
 */
import { isRecord, own } from '../../util/own.js';
import { readChatMessage } from './chat-messages.js';
import { readGeminiContent, readGeminiSessionMessage } from './gemini.js';
import { readResponsesItem } from './responses.js';
import { fail, ownString, type Json, type ReaderContext } from './step-builder.js';

/** OpenAI Responses item types read as tool traffic or messages; other item types (reasoning, web search) are skipped. */
export const RESPONSES_TYPES = new Set([
  'message',
  'function_call',
  'function_call_output',
  'custom_tool_call',
  'custom_tool_call_output',
  'local_shell_call',
  'local_shell_call_output',
  'shell_call',
  'shell_call_output',
  'mcp_call',
]);
/** Gemini CLI session-file message types (`~/.gemini/tmp/<project>/chats/session-*.json`). */
const GEMINI_SESSION_TYPES = new Set(['user', 'gemini', 'info', 'error', 'warning']);
/** Codex rollout line types (`~/.codex/sessions/.../rollout-*.jsonl`). */
export const CODEX_LINE_TYPES = new Set(['session_meta', 'response_item', 'turn_context', 'event_msg', 'compacted']);

/**
 * Reads one entry of a conversation into `at.out`: a chat message, a Responses
 * item, a Gemini content or session message, or a Claude Code / Codex log
 * line wrapping one of those (`wrapped`: the entry came out of such a line,
 * and is not unwrapped again).
 */
export function readEntry(entry: unknown, at: ReaderContext, wrapped = false): void {
  if (!isRecord(entry)) fail(at, 'a message must be an object');
  const msg = entry as Json;
  const type = own(msg, 'type');
  const role = own(msg, 'role');

  // Log lines that wrap a message: Claude Code ({ type, message, cwd }) and Codex ({ type, payload }).
  if (!wrapped && (type === 'user' || type === 'assistant') && isRecord(own(msg, 'message'))) {
    if (own(msg, 'isApiErrorMessage') === true) return; // the client's own error text, not the model's
    const cwd = ownString(msg, 'cwd');
    if (cwd !== undefined) at.out.cwd = cwd;
    return readEntry(own(msg, 'message'), at, true);
  }
  if (!wrapped && typeof type === 'string' && CODEX_LINE_TYPES.has(type) && role === undefined) {
    const payload = own(msg, 'payload');
    if (isRecord(payload)) {
      const cwd = ownString(payload, 'cwd');
      if (cwd !== undefined && (type === 'session_meta' || type === 'turn_context')) at.out.cwd = cwd;
      if (type === 'response_item') readEntry(payload, at, true);
    }
    return;
  }

  if (typeof type === 'string' && RESPONSES_TYPES.has(type) && type !== 'message') return readResponsesItem(msg, type, at);
  if (Array.isArray(own(msg, 'parts'))) return readGeminiContent(msg, at);
  if (typeof type === 'string' && GEMINI_SESSION_TYPES.has(type) && role === undefined) return readGeminiSessionMessage(msg, type, at);
  if (typeof role !== 'string') {
    if (typeof type === 'string') return; // an item of a type no reader needs (reasoning, summaries, snapshots)
    fail(at, 'a message needs a string "role"');
  }
  readChatMessage(msg, role as string, at);
}
