/**
 * The reader of Kiro CLI conversations (Kiro CLI, formerly Amazon Q
 * Developer CLI): the JSON that `/save <file>` writes, the conversation
 * state `{ conversation_id, history: [...], ... }`. Each history entry is
 * `{ user, assistant }` (or the older `[user, assistant]` pair): the user
 * message's `content` is `{ Prompt: { prompt } }`, `{ ToolUseResults: {
 * tool_use_results } }` or `{ CancelledToolUses: { prompt?, tool_use_results } }`
 * (each result `{ tool_use_id, content: [{ Text } | { Json }], status:
 * 'Success' | 'Error' }`); the assistant's is `{ Response: { content } }` or
 * `{ ToolUse: { content, tool_uses: [{ id, name, args }] } }`. Format: the
 * serde types `UserMessage`, `UserMessageContent`, `ToolUseResult`,
 * `AssistantMessage` and `AssistantToolUse` of github:aws/amazon-q-developer-cli
 * crates/chat-cli/src/cli/chat/message.rs (commit 01e5e3dceac0).
 *
 * Spec: ASSISTANT_SAFETY.md "Tool kinds"; DESIGN.md §5.7 (a failure read
 * from the result's status), §5.1 (the user message's working directory on
 * the calls that follow it).
 */
import { isRecord, own } from '../../util/own.js';
import { fail, ownString, parseArguments, StepBuilder, type Json, type ReaderContext } from './step-builder.js';
import type { ReadOptions, TranscriptRun } from './steps.js';

/** The catalog of Kiro CLI's tools. */
export const KIRO_CATALOG = 'kiro';

/** The two messages of a history entry, in either of its forms; null when it is neither. */
function entryOf(entry: unknown): { user: unknown; assistant: unknown } | null {
  if (Array.isArray(entry) && entry.length >= 1 && entry.length <= 2) return { user: entry[0], assistant: entry[1] };
  if (isRecord(entry) && (own(entry, 'user') !== undefined || own(entry, 'assistant') !== undefined)) {
    return { user: own(entry, 'user'), assistant: own(entry, 'assistant') };
  }
  return null;
}

/** True for a Kiro CLI (or Amazon Q Developer CLI) saved conversation. */
export function isKiroConversation(value: unknown): value is Json {
  if (!isRecord(value) || typeof own(value, 'conversation_id') !== 'string') return false;
  const history = own(value, 'history');
  return Array.isArray(history) && history.every((entry) => entryOf(entry) !== null);
}

/** A result block's text: `{ Text: s }` as is, `{ Json: v }` as JSON. */
function resultText(content: unknown): unknown {
  if (!Array.isArray(content)) return '';
  if (content.length === 1 && isRecord(content[0]) && own(content[0], 'Json') !== undefined) return own(content[0], 'Json');
  return content
    .map((block) => {
      if (!isRecord(block)) return '';
      const text = own(block, 'Text');
      if (typeof text === 'string') return text;
      const json = own(block, 'Json');
      return json === undefined ? '' : JSON.stringify(json);
    })
    .join('\n');
}

/** The user's side: a prompt (the user spoke) or the results of the tool uses before it. */
function readUser(user: unknown, at: ReaderContext): void {
  if (!isRecord(user)) return;
  const { out } = at;
  const env = own(user, 'env_context');
  const state = isRecord(env) ? own(env, 'env_state') : undefined;
  const cwd = isRecord(state) ? ownString(state, 'current_working_directory') : undefined;
  if (cwd !== undefined) out.cwd = cwd;
  const content = own(user, 'content');
  if (!isRecord(content)) return;
  const results = own(content, 'ToolUseResults') ?? own(content, 'CancelledToolUses');
  if (isRecord(results) && Array.isArray(own(results, 'tool_use_results'))) {
    const cancelled = own(content, 'CancelledToolUses') !== undefined;
    for (const result of own(results, 'tool_use_results') as unknown[]) {
      if (!isRecord(result)) continue;
      const id = ownString(result, 'tool_use_id');
      if (id === undefined) fail(at, 'a tool use result needs a string "tool_use_id"');
      // A cancelled tool use never ran; an Error status is a failure.
      const failed = cancelled || own(result, 'status') === 'Error';
      out.result(id as string, undefined, resultText(own(result, 'content')), failed ? { position: at.position, outcome: 'error' } : at);
    }
    if (cancelled && typeof own(results, 'prompt') === 'string') out.userTurn();
    return;
  }
  if (isRecord(own(content, 'Prompt'))) out.userTurn();
}

/** The assistant's side: a response (an answer) or tool uses (calls). */
function readAssistant(assistant: unknown, at: ReaderContext): void {
  if (!isRecord(assistant)) return;
  const { out } = at;
  const response = own(assistant, 'Response');
  if (isRecord(response)) {
    const text = own(response, 'content');
    if (typeof text === 'string' && text.trim() !== '') out.answer(text, at);
    return;
  }
  const toolUse = own(assistant, 'ToolUse');
  if (!isRecord(toolUse)) return;
  const uses = own(toolUse, 'tool_uses');
  if (!Array.isArray(uses)) fail(at, 'a ToolUse message needs a "tool_uses" array');
  (uses as unknown[]).forEach((use, i) => {
    const name = isRecord(use) ? own(use, 'name') : undefined;
    if (typeof name !== 'string') fail(at, `tool_uses[${i}] needs a string "name"`);
    const id = ownString(use as Json, 'id') ?? out.newId('tool_use');
    out.call(id, name as string, parseArguments(own(use as Json, 'args')), at);
  });
}

/** A saved conversation: one run, named by its `conversation_id`. */
export function readKiroConversation(value: Json, source: string, options: ReadOptions): TranscriptRun {
  const out = new StepBuilder(options);
  (own(value, 'history') as unknown[]).forEach((raw, i) => {
    const entry = entryOf(raw)!;
    const at = { out, source, position: `history ${i}` };
    readUser(entry.user, at);
    readAssistant(entry.assistant, at);
  });
  return { id: own(value, 'conversation_id') as string, reward: null, steps: out.finish(), catalog: KIRO_CATALOG };
}
