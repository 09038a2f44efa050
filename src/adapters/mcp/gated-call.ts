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
import { createSessionGuard, type SessionGuard } from '../../guard/session-guard.js';
import { mayAnswer } from '../../guard/may-answer.js';
import type { FSMBlockedError } from '../../errors/index.js';
import { refusalText } from '../../guard/refusal-text.js';
import { admitCall, recordCall, uncheckedText, type AdapterGuard, type CallAdmission, type MaybePromise } from '../common.js';
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

/**
 * The answer state of a session now, with no side effect: `mayAnswer` on a
 * `SessionGuard`; on a `SharedSessionGuard`, on the session as stored now (one
 * load). Never throws or rejects: a session that cannot be read gives
 * `unknownAnswer` (the answer is refused).
 */
export function sessionAnswer(guard: AdapterGuard): MaybePromise<AnswerState> {
  try {
    if ('actor' in guard) return answerOf(guard);
    return guard.getPersistedSnapshot().then(
      (snapshot) => answerOf(createSessionGuard({ snapshot })),
      (error: unknown) => unknownAnswer(error),
    );
  } catch (error) {
    return unknownAnswer(error);
  }
}

function answerOf(guard: SessionGuard): AnswerState {
  const decision = mayAnswer(guard);
  const state = guard.state;
  if (decision.allowed) return { allowed: true, state };
  return { allowed: false, state, rule: decision.error.rule, reason: decision.error.reason, text: refusalText(decision.error) };
}

/** The answer state when the session cannot be read (no guard, a store that fails): refused, state `UNKNOWN`. */
export function unknownAnswer(error: unknown): AnswerState {
  const reason = `the session could not be read (${messageOf(error).slice(0, 300)})`;
  return {
    allowed: false,
    state: 'UNKNOWN',
    reason,
    text: `Your final answer was not given: the safety gate could not check it (${reason}).`,
  };
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
  /** The session's guard; what it throws (the app's `getGuard` failed) keeps the call from running. */
  guard: () => AdapterGuard;
  /** The session key, for events. */
  session: string;
  /** The call id (`callIdOf`); what it throws keeps the call from running. */
  id: () => string;
  name: string;
  args: unknown;
  book: ToolBook;
  onEvent: McpGateOptions['onEvent'];
  /** A failed write counts as possibly applied (`recordCall`'s option); default true. */
  strictFailedWrites: boolean;
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

/** `_meta` with the answer state added (the rest kept). */
function metaWith(meta: unknown, answer: AnswerState): Record<string, unknown> {
  return { ...(isRecord(meta) ? meta : {}), [ANSWER_META_KEY]: answer };
}

/** The result with the session's answer state added to its `_meta`. */
export function withAnswer(result: CallToolResult, answer: AnswerState): CallToolResult {
  return { ...result, _meta: metaWith(result._meta, answer) };
}

/**
 * An error thrown for a `tools/call` that carries the answer state in its
 * JSON-RPC `error.data._meta['pulse-safety/answer']` (the SDK sends an error's
 * `code`, `message` and `data`): the same code and message, its data kept
 * when it is an object (or absent); other data is left as it is, without the
 * answer state.
 */
export function errorWithAnswer(error: unknown, answer: AnswerState): Error {
  const source = error instanceof Error ? error : new Error(String(error));
  const data = (source as { data?: unknown }).data;
  if (data !== undefined && !isRecord(data)) return source;
  const code = (source as { code?: unknown }).code;
  const carried = Object.assign(new Error(source.message), {
    name: source.name,
    code: typeof code === 'number' && Number.isSafeInteger(code) ? code : ErrorCode.InternalError,
    data: { ...(data ?? {}), _meta: metaWith(isRecord(data) ? data._meta : undefined, answer) },
  });
  return carried;
}

/** The result of a call that was not run because the gate could not check it: an error result naming why (`uncheckedText`). */
function notRun(name: string, failure: unknown, answer: AnswerState): CallToolResult {
  return withAnswer({ content: [{ type: 'text', text: uncheckedText(name, failure) }], isError: true }, answer);
}

/** Reports a call's check (`McpGateEvent` `check`): its classification, the decision, and the state after it. */
function emitCheck(call: GatedCall, id: string, admission: CallAdmission, after: AnswerState | undefined): void {
  if (call.onEvent === undefined) return;
  const { name } = call;
  const classification = admission.allowed ? admission.call : call.book.classify(name, call.args);
  emit(call.onEvent, {
    type: 'check',
    at: Date.now(),
    session: call.session,
    id,
    tool: name,
    kind: classification.kind ?? 'write',
    targets: [...(classification.targets ?? [])],
    destructive: classification.destructive === true,
    allowed: admission.allowed,
    state: after?.state ?? 'UNKNOWN',
    ...(admission.allowed
      ? {}
      : admission.error === null
        ? { reason: uncheckedText(name, admission.failure) }
        : { rule: admission.error.rule, reason: admission.error.reason }),
  });
}

/**
 * Checks a call (`admitCall`: classified by the book, kind, targets,
 * destructive), runs it when admitted, records its outcome (`recordCall`
 * with the admitted call's whole classification: `outcomeOf` the result, a
 * call that throws, is cancelled or times out is an `error`, a write so
 * failed possibly applied with `strictFailedWrites`; a trusted server's
 * output may verify its own write, `toolOutput`) and adds the answer state
 * to the result's `_meta`. Works with a synchronous or asynchronous guard.
 *
 * Every result carries the answer state: a refused call's (`refusalResult`,
 * not run), a call the gate could not check (no guard, no id, the guard
 * threw or rejected: an error result saying so, not run), and the call's own.
 * What `run` throws is rethrown with the answer state in its JSON-RPC
 * `error.data._meta` (`errorWithAnswer`), as is the error of a call that ran
 * but whose outcome could not be recorded (InternalError).
 */
export async function runGated(call: GatedCall, run: () => Promise<CallToolResult>): Promise<CallToolResult> {
  const { book, name } = call;
  let guard: AdapterGuard;
  try {
    guard = call.guard();
  } catch (error) {
    return notRun(name, error, unknownAnswer(error));
  }
  let id: string;
  try {
    id = call.id();
  } catch (error) {
    return notRun(name, error, await sessionAnswer(guard));
  }
  const admission = await admitCall({ guard, classifier: book, id, name, args: call.args });
  const after = call.onEvent === undefined && admission.allowed ? undefined : await sessionAnswer(guard);
  emitCheck(call, id, admission, after);
  if (!admission.allowed) {
    if (admission.error === null) return notRun(name, admission.failure, after!);
    return withAnswer(refusalResult(admission.error, book.structuredRefusal(name)), after!);
  }
  const admitted = admission.call;

  const settle = async (outcome: { threw: true; error: unknown } | { threw: false; result: CallToolResult }): Promise<AnswerState> => {
    let verdict: 'success' | 'error';
    try {
      // The record is made when recordCall is called (synchronously for a SessionGuard): before any other call's check that follows.
      verdict = await recordCall(
        guard,
        book,
        admitted,
        outcome.threw
          ? { threw: true }
          : {
              threw: false,
              result: outcome.result,
              content: book.trusted ? toolOutput(outcome.result) : undefined,
              // The MCP envelope's own failure flag: what counts for a tool whose output its arguments choose (`echoes`).
              failed: outcome.result.isError === true,
            },
        { strictFailedWrites: call.strictFailedWrites },
      );
    } catch (error) {
      throw errorWithAnswer(
        new McpError(ErrorCode.InternalError, `pulse-safety: the call ran but its outcome could not be recorded (${messageOf(error)})`),
        await sessionAnswer(guard),
      );
    }
    const answer = await sessionAnswer(guard);
    emit(call.onEvent, {
      type: 'outcome',
      at: Date.now(),
      session: call.session,
      id,
      tool: name,
      kind: admitted.kind ?? 'write',
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
    throw errorWithAnswer(error, await settle({ threw: true, error }));
  }
  return withAnswer(result, await settle({ threw: false, result }));
}
