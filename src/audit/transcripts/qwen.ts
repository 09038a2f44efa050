/**
 * Qwen Code's chat recording (a fork of Gemini CLI): one JSON object a
 * line, `{ uuid, parentUuid, sessionId, timestamp, type: 'user' |
 * 'assistant' | 'tool_result' | 'system', subtype?, cwd, version, message?,
 * toolCallResult? }`, where `message` is a Gemini `Content` (`{ role, parts }`:
 * `functionCall` parts on the assistant's lines, `functionResponse` parts on
 * `tool_result` lines) and `toolCallResult.status` is the call's outcome
 * (`success`, `error`, `cancelled`). Format: the `ChatRecord` interface of
 * github:QwenLM/qwen-code packages/core/src/services/chatRecordingService.ts
 * (commit 015346f1d5d7); files under `~/.qwen/projects/<project>/chats/`.
 * User and assistant lines are read like Gemini CLI content (`gemini.ts`);
 * this module reads the `tool_result` lines.
 *
 * Spec: DESIGN.md §5.7 (a failure read from the recorded status, else from
 * the result).
 */
import { isRecord, own } from '../../util/own.js';
import { ownString, type Json, type ReaderContext } from './step-builder.js';

/** The catalog of Qwen Code's tools. */
export const QWEN_CATALOG = 'qwen-code';

/** True for a line of a Qwen Code chat recording: a Gemini `Content` (`parts`) wrapped in `message`, or a `tool_result` line. */
export function isQwenLine(value: Json, type: string): boolean {
  const message = own(value, 'message');
  if (isRecord(message) && Array.isArray(own(message, 'parts'))) return true;
  return type === 'tool_result' && (isRecord(own(value, 'toolCallResult')) || isRecord(message));
}

/** A `tool_result` line: each `functionResponse` part is the result of the call of its id (or, without one, the oldest open call of its name). */
export function readQwenToolResult(line: Json, at: ReaderContext): void {
  const { out } = at;
  const record = own(line, 'toolCallResult');
  const status = isRecord(record) ? own(record, 'status') : undefined;
  const failed = status === 'error' || status === 'cancelled';
  const message = own(line, 'message');
  const parts = isRecord(message) ? own(message, 'parts') : undefined;
  const responses = Array.isArray(parts) ? parts.filter((part) => isRecord(part) && isRecord(own(part, 'functionResponse'))) : [];
  if (responses.length === 0 && isRecord(record)) {
    // No content recorded: the call's id and outcome are in the record alone.
    const id = ownString(record, 'callId');
    if (id !== undefined)
      out.result(
        id,
        undefined,
        own(record, 'error') ?? own(record, 'resultDisplay') ?? '',
        failed ? { position: at.position, outcome: 'error' } : at,
      );
    return;
  }
  for (const part of responses as Json[]) {
    const response = own(part, 'functionResponse') as Json;
    const name = ownString(response, 'name');
    const given = ownString(response, 'id') ?? (isRecord(record) ? ownString(record, 'callId') : undefined);
    const id =
      given !== undefined && out.nameOf(given) !== undefined
        ? given
        : ((name === undefined ? null : out.openCallOf(name)) ?? given ?? out.newId('functionResponse'));
    out.result(id, name, part, failed ? { position: at.position, outcome: 'error' } : at);
  }
}
