/**
 * One gated `tools/call`, as the proxy and the in-process server gate both
 * run it: the call's id, its check by the session's guard, the refusal
 * result of a refused call, the record of an admitted call's outcome, and
 * the answer state added to every result's `_meta`.
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants", "Blocked calls and recovery";
 * DESIGN.md §1, §5.8 (self-verifying writes), §5.7 (failures read from the result).
 */
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { ErrorCode, McpError, type CallToolResult, type ServerNotification, type ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Decision, SessionGuard, ToolCall } from '../../guard/session-guard.js';
import { mayAnswer } from '../../guard/may-answer.js';
import type { FSMBlockedError } from '../../errors/index.js';
import { refusalText } from '../../guard/refusal-text.js';
import { recordCall } from '../common.js';
import { isRecord } from '../../util/own.js';
import { ANSWER_META_KEY, type AnswerState, type McpGateEvent, type McpGateOptions } from './gate-options.js';
import type { ToolBook } from './tool-book.js';

/** The `extra` argument the MCP SDK gives a server's request handlers (and a registered tool's callback). */
export type ServerExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** An error's message, or the thrown value in words. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The call id of a `tools/call` handler: `extra.requestId` (the JSON-RPC id),
 * as a string. Never the request object's `id`: the parsed request has none,
 * and every call would be filed under `"undefined"`.
 * @throws McpError (InternalError) when `extra` carries no request id; the call must not run.
 */
export function callIdOf(extra: { requestId?: unknown } | undefined): string {
  const id = extra?.requestId;
  if ((typeof id === 'string' && id !== '') || (typeof id === 'number' && Number.isFinite(id))) return String(id);
  throw new McpError(ErrorCode.InternalError, 'pulse-safety: the tools/call request has no id (extra.requestId); the call was not run');
}

/** The answer state of a session now (`mayAnswer`: nothing about the session changes). */
function answerState(guard: SessionGuard): AnswerState {
  const decision = mayAnswer(guard);
  const state = guard.state;
  if (decision.allowed) return { allowed: true, state };
  return { allowed: false, state, rule: decision.error.rule, reason: decision.error.reason, text: refusalText(decision.error) };
}

/**
 * The `tools/call` result of a refused call: `isError: true`, its text the
 * structured refusal (`FSMBlockedError.toToolResult()` as JSON) then the
 * refusal in words (`refusalText`). `structuredContent` (the same object) only
 * when `structured` is true: a tool with an `outputSchema` gets none, since a
 * client validates structured content against that schema.
 */
export function refusalResult(error: FSMBlockedError, structured: boolean): CallToolResult {
  const blocked = error.toToolResult();
  return {
    content: [
      { type: 'text', text: JSON.stringify(blocked) },
      { type: 'text', text: refusalText(error) },
    ],
    isError: true,
    ...(structured ? { structuredContent: blocked as unknown as Record<string, unknown> } : {}),
  };
}

/** One tools/call to gate. */
export interface GatedCall {
  guard: SessionGuard;
  session: string;
  id: string;
  name: string;
  args: unknown;
  book: ToolBook;
  onEvent: McpGateOptions['onEvent'];
}

function emit(onEvent: McpGateOptions['onEvent'], event: McpGateEvent): void {
  if (onEvent === undefined) return;
  try {
    onEvent(event);
  } catch {
    // a log never changes or stops a decision
  }
}

/**
 * What a tool's result says it produced, for self-verification (DESIGN.md
 * §1, §5.8: a write whose output reports `verification.ok === true` verifies
 * itself): its `structuredContent`, else its first text block. Read only for
 * trusted servers: an untrusted one could otherwise waive the read-after-write
 * requirement of its own writes.
 */
function toolOutput(result: CallToolResult): unknown {
  if (isRecord(result.structuredContent)) return result.structuredContent;
  const text = Array.isArray(result.content) ? result.content.find((block) => block?.type === 'text') : undefined;
  return text?.type === 'text' ? text.text : undefined;
}

/** The result with the session's answer state added to its `_meta`. */
function withAnswer(result: CallToolResult, answer: AnswerState): CallToolResult {
  return { ...result, _meta: { ...(isRecord(result._meta) ? result._meta : {}), [ANSWER_META_KEY]: answer } };
}

/**
 * Checks a call (classified by the book: kind, targets, destructive), runs it
 * when admitted, records its outcome (`recordCall`: `outcomeOf` the result,
 * and a call that throws, is cancelled or times out is an `error`; a trusted
 * server's output may verify its own write, `toolOutput`) and adds the answer
 * state to the result. A refused call is not run: its result is
 * `refusalResult`.
 * @throws McpError when the guard cannot decide (a call id already in flight,
 *   a store that cannot save): the call is not run. Rethrows what `run` throws.
 */
export async function runGated(call: GatedCall, run: () => Promise<CallToolResult>): Promise<CallToolResult> {
  const { guard, book } = call;
  const classification = book.classify(call.name, call.args);
  const toolCall: ToolCall = {
    id: call.id,
    name: call.name,
    args: call.args,
    kind: classification.kind,
    targets: classification.targets,
    destructive: classification.destructive,
    ...(classification.links === undefined ? {} : { links: classification.links }),
  };
  let decision: Decision;
  try {
    decision = guard.check(toolCall);
  } catch (error) {
    throw new McpError(ErrorCode.InvalidRequest, `pulse-safety: ${messageOf(error)}; the call was not run`);
  }
  emit(call.onEvent, {
    type: 'check',
    at: Date.now(),
    session: call.session,
    id: call.id,
    tool: call.name,
    kind: decision.kind,
    targets: classification.targets,
    destructive: classification.destructive,
    allowed: decision.allowed,
    state: guard.state,
    ...(decision.allowed ? {} : { rule: decision.error.rule, reason: decision.error.reason }),
  });
  if (!decision.allowed) return withAnswer(refusalResult(decision.error, book.structuredRefusal(call.name)), answerState(guard));

  const settle = async (outcome: { threw: true; error: unknown } | { threw: false; result: CallToolResult }): Promise<AnswerState> => {
    let verdict: 'success' | 'error';
    try {
      // The record is made when recordCall is called (synchronously for a SessionGuard): before any other call's check that follows.
      verdict = await recordCall(
        guard,
        book,
        toolCall,
        outcome.threw
          ? { threw: true }
          : { threw: false, result: outcome.result, content: book.trusted ? toolOutput(outcome.result) : undefined },
      );
    } catch (error) {
      throw new McpError(ErrorCode.InternalError, `pulse-safety: the call ran but its outcome could not be recorded (${messageOf(error)})`);
    }
    const answer = answerState(guard);
    emit(call.onEvent, {
      type: 'outcome',
      at: Date.now(),
      session: call.session,
      id: call.id,
      tool: call.name,
      kind: decision.kind,
      outcome: verdict,
      ...(outcome.threw ? { thrown: messageOf(outcome.error) } : {}),
      state: answer.state,
      answer,
    });
    return answer;
  };
  let result: CallToolResult;
  try {
    result = await run();
  } catch (error) {
    await settle({ threw: true, error });
    throw error;
  }
  return withAnswer(result, await settle({ threw: false, result }));
}
