/**
 * The readers of Gemini: `Content` (Gemini CLI chat history and
 * checkpoints: `functionCall` and `functionResponse` parts) and Gemini CLI
 * session-file messages (`toolCalls` with their results and status).
 *
 * Spec: ASSISTANT_SAFETY.md "Tool kinds" (what a call is); DESIGN.md §5.7
 * (whether a call failed is read from its result, or here from its status).
 */
import { isRecord, own } from '../../util/own.js';
import { fail, ownString, parseArguments, textOf, type Json, type ReaderContext } from './step-builder.js';

/** Gemini `Content`: `{ role: 'user' | 'model', parts: [{ text } | { functionCall } | { functionResponse }] }`. */
export function readGeminiContent(content: Json, at: ReaderContext): void {
  const { out } = at;
  const parts = own(content, 'parts') as unknown[];
  const role = own(content, 'role');
  let calls = 0;
  let results = 0;
  let text = '';
  parts.forEach((part, i) => {
    if (!isRecord(part)) return;
    const call = own(part, 'functionCall');
    const response = own(part, 'functionResponse');
    if (call !== undefined) {
      const name = isRecord(call) ? own(call, 'name') : undefined;
      if (typeof name !== 'string') fail(at, `parts[${i}] (functionCall) needs a string "name"`);
      const id = ownString(call as Json, 'id') ?? out.newId('functionCall');
      out.call(id, name as string, parseArguments(own(call as Json, 'args')), at);
      calls += 1;
    } else if (response !== undefined) {
      const name = isRecord(response) ? own(response, 'name') : undefined;
      const givenId = isRecord(response) ? ownString(response, 'id') : undefined;
      if (typeof name !== 'string' && givenId === undefined) fail(at, `parts[${i}] (functionResponse) needs a string "name" or "id"`);
      const id =
        givenId !== undefined && out.nameOf(givenId) !== undefined
          ? givenId
          : ((typeof name === 'string' ? out.openCallOf(name) : null) ?? givenId ?? out.newId('functionResponse'));
      out.result(id, typeof name === 'string' ? name : undefined, part, at);
      results += 1;
    } else if (typeof own(part, 'text') === 'string' && own(part, 'thought') !== true) {
      text += own(part, 'text') as string;
    }
  });
  if (role === 'model') {
    if (calls === 0 && text.trim() !== '') out.answer(text, at);
  } else if (role === 'user' && results === 0 && text.trim() !== '') {
    out.userTurn();
  }
}

/**
 * A Gemini CLI session-file message: `{ type: 'user' | 'gemini' | 'info' | ..., content, toolCalls? }`,
 * each tool call `{ id, name, args, result: [parts], status: 'success' | 'error' | 'cancelled' }`.
 * A message's calls all come before their results: the model asked for them together.
 */
export function readGeminiSessionMessage(msg: Json, type: string, at: ReaderContext): void {
  const { out } = at;
  if (type === 'user') {
    out.userTurn();
    return;
  }
  if (type !== 'gemini') return; // info, warning and error messages are the client's, not the model's
  const toolCalls = own(msg, 'toolCalls');
  const records: { id: string; name: string; record: Json }[] = [];
  if (Array.isArray(toolCalls)) {
    toolCalls.forEach((record, i) => {
      const name = isRecord(record) ? own(record, 'name') : undefined;
      if (typeof name !== 'string') fail(at, `toolCalls[${i}] needs a string "name"`);
      const id = ownString(record as Json, 'id') ?? out.newId('toolCall');
      out.call(id, name as string, parseArguments(own(record as Json, 'args')), at);
      records.push({ id, name: name as string, record: record as Json });
    });
  }
  for (const { id, name, record } of records) {
    const status = own(record, 'status');
    const result = own(record, 'result') ?? own(record, 'resultDisplay');
    if (result === undefined && status !== 'success' && status !== 'error' && status !== 'cancelled') continue; // not finished when the file was written
    // 'cancelled': the user declined it, so it never ran.
    const failed = status === 'error' || status === 'cancelled';
    out.result(id, name, result, failed ? { position: at.position, outcome: 'error' } : at);
  }
  const text = textOf(own(msg, 'content'));
  if (records.length === 0 && text.trim() !== '') out.answer(text, at);
}
