/**
 * The words of a tool-calling reply (`pulse-safety-fsm/langgraph`): text
 * beside tool calls is a claim about calls not yet run ("Deleted x."),
 * which the gate may refuse, so the gated nodes keep it out of the state
 * (issue 26).
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants" (no final answer about an unverified change).
 */
import { AIMessage, type BaseMessage } from '@langchain/core/messages';

/** True for a content part that carries words (a string, a `text` part, or any part with a string `text`). */
function isTextPart(part: unknown): boolean {
  if (typeof part === 'string') return true;
  if (typeof part !== 'object' || part === null) return false;
  const { type, text } = part as { type?: unknown; text?: unknown };
  return type === 'text' || typeof text === 'string';
}

/** True for a message whose content has words (a non-empty string, or a text part). */
export function hasWords(message: BaseMessage): boolean {
  const content = message.content as unknown;
  if (typeof content === 'string') return content !== '';
  return Array.isArray(content) && content.some(isTextPart);
}

/**
 * A tool-calling reply without its words: string content emptied, text
 * parts dropped; its tool calls, id, name, metadata and other parts
 * (e.g. a provider's reasoning parts) kept.
 */
export function withoutWords(message: BaseMessage): AIMessage {
  const content = message.content as unknown;
  const kept = Array.isArray(content) ? content.filter((part) => !isTextPart(part)) : '';
  const { tool_calls, invalid_tool_calls, id, name, additional_kwargs, response_metadata, usage_metadata } = message as AIMessage;
  return new AIMessage({
    content: kept as AIMessage['content'],
    tool_calls,
    invalid_tool_calls,
    additional_kwargs,
    response_metadata,
    ...(id === undefined ? {} : { id }),
    ...(name === undefined ? {} : { name }),
    ...(usage_metadata === undefined ? {} : { usage_metadata }),
  });
}
