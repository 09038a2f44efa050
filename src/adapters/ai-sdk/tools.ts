/**
 * The tool gate of the AI SDK adapter: every `execute` of a `ToolSet` checked
 * before it runs and its outcome recorded after, with the classification the
 * check made (DESIGN.md §6.3); and the approval screen: a call the gate would
 * refuse is refused at once, and nobody is asked to approve it.
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants", "Blocked calls and recovery";
 * DESIGN.md §3.1 (the stable code), §3.8 (failed writes), §5.6 (the user's
 * confirmation), §5.7 (failures), §6.3 (a fact of the check travels to the record).
 */
import type { ToolSet } from 'ai';
import type { FSMBlockedError } from '../../errors/index.js';
import { createSessionGuard, type SessionGuard } from '../../guard/session-guard.js';
import {
  admitCall,
  AdapterConfigError,
  andThen,
  assertSomeToolReads,
  createToolClassifier,
  isBlockedToolResult,
  isPromise,
  previewCall,
  recordApproval,
  recordCall,
  recordRejected,
  uncheckedText,
  type AdapterGuard,
  type CallAdmission,
  type CallOutcome,
  type ClassificationOptions,
  type MaybePromise,
  type ToolClassifier,
} from '../common.js';
import { ADAPTER, guardGetter, type GuardSourceOptions } from './guard-source.js';
import { refusedCallsOf, type RefusedCalls } from './refused-calls.js';

/** Options of `gateTools`: a guard source and a classification source (`catalog`, `kinds` or `classify`). */
export interface GateToolsOptions extends GuardSourceOptions, ClassificationOptions {
  /**
   * The tool result the model gets for a refused call; default
   * `error.toToolResult()` (`{ ok: false, error: { code: 'FSM_BLOCKED', rule, ... } }`,
   * the stable code the model can branch on, DESIGN.md §3.1).
   */
  refusal?: (error: FSMBlockedError) => unknown;
  /**
   * Record a write that threw as possibly applied (it needs a read to
   * verify it: a timeout or a cancelled call may have run); default true.
   * False follows the guard's own setting (DESIGN.md §3.8).
   */
  strictFailedWrites?: boolean;
}

type Execute = (input: unknown, options: { toolCallId: string; messages?: unknown }) => unknown;
type ToModelOutput = (options: { toolCallId: string; input: unknown; output: unknown }) => unknown;
type NeedsApproval = (input: unknown, options: { toolCallId: string }) => unknown;

/**
 * A gated `ToolSet` and its approval screen. `screen(name, input,
 * toolCallId, messages)` answers whether a human should be asked to approve
 * a call that asks for approval: true when the gate would let it run, or
 * when what it lacks is the user's confirmation (the approval gives it);
 * false for a call the gate would refuse anyway, which is then refused when
 * the SDK runs it, without a human asked. The calls of one step (the SDK
 * gives them the same `messages` array) are screened in order, each on the
 * session as the earlier ones leave it if approved and run: a second write
 * of the step is refused at once. Never rejects.
 */
export interface ToolGate<TOOLS extends ToolSet> {
  tools: TOOLS;
  /** The names of the gated tools (those with an `execute`). */
  gated: ReadonlySet<string>;
  screen(name: string, input: unknown, toolCallId: string | undefined, messages?: unknown): Promise<boolean>;
}

/** What every gated tool of a `ToolSet` shares. */
interface Gate {
  getGuard: () => AdapterGuard;
  classifier: ToolClassifier;
  refusal: (error: FSMBlockedError) => unknown;
  strictFailedWrites: boolean;
  /** Calls refused by the approval screen, by `toolCallId`, until the SDK runs them. */
  doomed: Map<string, FSMBlockedError>;
  /** The calls the gate refused (or could not check), for the stream gate of the session. */
  refused: RefusedCalls;
}

function isAsyncGeneratorFunction(fn: unknown): boolean {
  return Object.prototype.toString.call(fn) === '[object AsyncGeneratorFunction]';
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/**
 * Whether the user approved the call `toolCallId` in the messages the SDK
 * runs it with: the last message is a tool message whose first
 * `tool-approval-response` to a request of this call (one the SDK did not
 * answer automatically) has `approved: true`. That is how the SDK runs an
 * approved call: at the start of the next `generateText` / `streamText`,
 * from the app's messages. Total: anything else (or messages that cannot
 * be read) is no approval, so a call needing the user's confirmation is refused.
 */
export function approvedByUser(messages: unknown, toolCallId: string | undefined): boolean {
  try {
    return approvalIn(messages, toolCallId);
  } catch {
    return false;
  }
}

function approvalIn(messages: unknown, toolCallId: string | undefined): boolean {
  if (!Array.isArray(messages) || typeof toolCallId !== 'string' || toolCallId === '') return false;
  const last: unknown = messages.at(-1);
  if (!isRecord(last) || last.role !== 'tool' || !Array.isArray(last.content)) return false;
  const requests = new Set<unknown>();
  for (const message of messages) {
    if (!isRecord(message) || message.role !== 'assistant' || !Array.isArray(message.content)) continue;
    for (const part of message.content) {
      if (isRecord(part) && part.type === 'tool-approval-request' && part.toolCallId === toolCallId && part.isAutomatic !== true) {
        requests.add(part.approvalId);
      }
    }
  }
  const response = (last.content as unknown[]).find(
    (part) => isRecord(part) && part.type === 'tool-approval-response' && requests.has(part.approvalId),
  );
  return isRecord(response) && response.approved === true;
}

/** Whether the user's confirmation is what clears this refusal (an approval is one). */
function confirmationClears(error: FSMBlockedError): boolean {
  try {
    return error.toToolResult().error.clearedBy.includes('user_input');
  } catch {
    return false;
  }
}

/** A guard step that may throw or reject, as a `CallAdmission` that refuses on failure. */
function admitting(step: () => MaybePromise<CallAdmission>): MaybePromise<CallAdmission> {
  const refused = (failure: unknown): CallAdmission => ({ allowed: false, error: null, failure });
  try {
    const admission = step();
    return isPromise(admission) ? admission.then((a) => a, refused) : admission;
  } catch (failure) {
    return refused(failure);
  }
}

/**
 * A streaming tool's output passed on value by value; when it ends, the last
 * value is recorded as the call's result. One that throws, or that the
 * consumer stops early, is recorded as threw (it did not finish).
 */
async function* recordedStream(stream: AsyncIterable<unknown>, record: (outcome: CallOutcome) => unknown) {
  let last: unknown;
  let settled = false;
  try {
    for await (const value of stream) {
      last = value;
      yield value;
    }
    settled = true;
    await record({ threw: false, result: last });
  } finally {
    if (!settled) await record({ threw: true });
  }
}

/** One call the SDK asked a gated `execute` to run, and the refusal of the approval screen for it, if any. */
interface CallRequest {
  guard: AdapterGuard;
  input: unknown;
  execOptions: { toolCallId: string };
  screened: FSMBlockedError | undefined;
}

/**
 * The gated `execute` of the tool `name`: a call the user approved has its
 * approval recorded first (`recordApproval`, the user's confirmation), then
 * the call is checked (`admitCall`, id the SDK's `toolCallId`) and run with
 * its outcome recorded (`recordCall` with the admitted call), or refused.
 */
function gateExecute(name: string, original: Execute, gate: Gate): Execute {
  const { getGuard, classifier, refusal, strictFailedWrites, doomed, refused } = gate;
  /** Runs an admitted call and records its outcome; a refused one gives the refusal. */
  const proceed = (request: CallRequest, admission: CallAdmission): unknown => {
    const { guard, input, execOptions, screened } = request;
    const id = execOptions?.toolCallId;
    if (!admission.allowed) {
      refused.add(id); // the gate's own decision: the stream gate reads it, whatever `refusal` returns
      if (admission.error === null) throw new Error(uncheckedText(name, admission.failure), { cause: admission.failure });
      return refusal(admission.error);
    }
    const { call } = admission;
    // Refused by the approval screen, so nobody approved it: it never runs, even if the gate would now admit it.
    if (screened !== undefined) {
      refused.add(id);
      return andThen(recordRejected(guard, call), () => refusal(screened));
    }
    refused.clear(id);
    const record = (outcome: CallOutcome) => recordCall(guard, classifier, call, outcome, { strictFailedWrites });
    const fail = (error: unknown): MaybePromise<never> =>
      andThen(record({ threw: true }), () => {
        throw error;
      });
    let produced: unknown;
    try {
      produced = original(input, execOptions);
    } catch (error) {
      return fail(error);
    }
    if (isAsyncIterable(produced)) return recordedStream(produced, record);
    return Promise.resolve(produced).then(
      (result) => andThen(record({ threw: false, result }), () => result),
      (error: unknown) => fail(error),
    );
  };
  return (input, execOptions) => {
    const id = typeof execOptions?.toolCallId === 'string' ? execOptions.toolCallId : undefined;
    const screened = id === undefined ? undefined : doomed.get(id);
    if (id !== undefined) doomed.delete(id);
    const guard = getGuard();
    const admit = () => admitCall({ guard, classifier, id, name, args: input });
    // The user's approval is their confirmation: recorded before the call is checked.
    const admission = approvedByUser(execOptions?.messages, id) ? admitting(() => andThen(recordApproval(guard), admit)) : admit();
    const request: CallRequest = { guard, input, execOptions, screened };
    // A synchronous guard decides here, before any other call of the step goes on.
    if (!isPromise(admission)) return proceed(request, admission);
    // An asynchronous guard decides later; a streaming tool (an async generator function) stays one.
    if (isAsyncGeneratorFunction(original)) {
      return (async function* gatedLater() {
        const produced = proceed(request, await admission);
        if (isAsyncIterable(produced)) yield* produced;
        else yield await produced;
      })();
    }
    return admission.then((decided) => proceed(request, decided));
  };
}

/**
 * The tool with its gated `execute`; its `needsApproval`, if it asks, passes
 * the approval screen first; its own `toModelOutput`, if any, is not asked
 * about a refusal (the model gets it as JSON).
 */
function gatedTool(name: string, tool: object, execute: Execute, screen: ToolGate<ToolSet>['screen']): object {
  const { toModelOutput, needsApproval } = tool as { toModelOutput?: unknown; needsApproval?: unknown };
  return {
    ...tool,
    execute,
    ...(typeof toModelOutput === 'function'
      ? {
          toModelOutput: (args: { toolCallId: string; input: unknown; output: unknown }) =>
            isBlockedToolResult(args.output) ? { type: 'json', value: args.output } : (toModelOutput as ToModelOutput)(args),
        }
      : {}),
    ...(needsApproval === true || typeof needsApproval === 'function'
      ? {
          needsApproval: async (input: unknown, options: { toolCallId: string; messages?: unknown }) => {
            const asks = typeof needsApproval === 'function' ? await (needsApproval as NeedsApproval)(input, options) : true;
            return asks === true ? screen(name, input, options?.toolCallId, options?.messages) : false;
          },
        }
      : {}),
  };
}

/**
 * The approval screen of a tool gate (see `ToolGate.screen`): calls it
 * refuses are kept in `doomed` by `toolCallId`, refused when the SDK runs
 * them. The calls of one step are judged in order on a throwaway copy of the
 * session, each earlier one applied as approved and run.
 */
function createScreen(
  getGuard: () => AdapterGuard,
  classifier: ToolClassifier,
  doomed: Map<string, FSMBlockedError>,
): ToolGate<ToolSet>['screen'] {
  /** Per step (the `messages` array the SDK gives each of its calls): the session as the calls screened so far leave it. */
  const steps = new WeakMap<object, Promise<SessionGuard | undefined>>();

  /** A throwaway copy of the session as it is now; undefined when it cannot be made. */
  async function copyOfSession(): Promise<SessionGuard | undefined> {
    try {
      return createSessionGuard({ snapshot: await getGuard().getPersistedSnapshot() });
    } catch {
      return undefined;
    }
  }

  async function screen(name: string, input: unknown, toolCallId: string | undefined, messages?: unknown): Promise<boolean> {
    const step = typeof messages === 'object' && messages !== null ? messages : undefined;
    const before = (step === undefined ? undefined : steps.get(step)) ?? copyOfSession();
    let done: (session: SessionGuard | undefined) => void = () => undefined;
    if (step !== undefined) steps.set(step, new Promise((resolve) => (done = resolve)));
    const session = await before;
    try {
      return await screenOn(session, name, input, toolCallId);
    } finally {
      done(session);
    }
  }

  /**
   * The screen of one call on `session` (the step's copy; the guard itself
   * when no copy could be made). A call that will be asked about is applied
   * to the copy as approved and run, so the next call of the step is judged
   * after it.
   */
  async function screenOn(
    session: SessionGuard | undefined,
    name: string,
    input: unknown,
    toolCallId: string | undefined,
  ): Promise<boolean> {
    const preview = (guard: AdapterGuard): Promise<CallAdmission> =>
      Promise.resolve(previewCall({ guard, classifier, name, args: input })).catch((failure: unknown): CallAdmission => ({
        allowed: false,
        error: null,
        failure,
      }));
    let decision = await preview(session ?? getGuard());
    if (session !== undefined) {
      try {
        if (!decision.allowed && decision.error !== null && confirmationClears(decision.error)) {
          void recordApproval(session); // as it is recorded before the approved call is checked
          decision = await preview(session);
        }
        if (decision.allowed) {
          const admitted = admitCall({ guard: session, classifier, id: toolCallId, name, args: input });
          if (!isPromise(admitted) && admitted.allowed) {
            const { args: _args, ...classified } = admitted.call;
            session.record(classified, 'success');
          }
        }
      } catch {
        return true; // the copy cannot tell: the human is asked, and the call is still checked before it runs
      }
    }
    // Not known to be refused (the guard could not tell): the human is asked, and the call is still checked before it runs.
    if (decision.allowed || decision.error === null) return true;
    // Without a copy of the session, a refusal the approval clears is asked about (the approval gives the confirmation).
    if (session === undefined && confirmationClears(decision.error)) return true;
    if (typeof toolCallId !== 'string' || toolCallId === '') return true; // cannot be told apart when it runs: asked, then checked
    doomed.set(toolCallId, decision.error);
    return false;
  }

  return screen;
}

/**
 * The tool gate of `tools` (see `gateTools`), with its approval screen for
 * a call-level `toolApproval` (`withSafetyGate` uses it).
 *
 * @throws AdapterConfigError / CatalogError as `gateTools` does.
 */
export function createToolGate<TOOLS extends ToolSet>(tools: TOOLS, options: GateToolsOptions): ToolGate<TOOLS> {
  if (typeof tools !== 'object' || tools === null) throw new AdapterConfigError(ADAPTER, '`tools` must be a ToolSet object');
  const strict = options.strictFailedWrites ?? true;
  if (typeof strict !== 'boolean') throw new AdapterConfigError(ADAPTER, '`strictFailedWrites` must be a boolean');
  const getGuard = guardGetter(options);
  const classifier = createToolClassifier(options, ADAPTER);
  const gate: Gate = {
    getGuard,
    classifier,
    refusal: options.refusal ?? ((error: FSMBlockedError) => error.toToolResult()),
    strictFailedWrites: strict,
    doomed: new Map(),
    refused: refusedCallsOf(options),
  };

  const screen = createScreen(getGuard, classifier, gate.doomed);

  const gated: Record<string, unknown> = {};
  const names: string[] = [];
  for (const [name, tool] of Object.entries(tools)) {
    const execute = (tool as { execute?: unknown }).execute;
    if (typeof execute !== 'function') {
      gated[name] = tool;
      continue;
    }
    names.push(name);
    gated[name] = gatedTool(name, tool, gateExecute(name, execute as Execute, gate), screen);
  }
  assertSomeToolReads(names, classifier, ADAPTER);
  return { tools: gated as TOOLS, gated: new Set(names), screen };
}

/**
 * Wraps a `ToolSet` so every tool with an `execute` is gated: checked
 * before it runs (id: the SDK's `toolCallId`), its outcome recorded after
 * with the classification of the check. An `execute` that throws (or a
 * streaming one whose iteration throws or is abandoned) is recorded as
 * threw, which for a write means possibly applied (`strictFailedWrites`,
 * default true), and its error rethrown (the SDK makes it a `tool-error`);
 * a result is recorded as `recordCall` reads it (for a shell or SQL tool,
 * whose output its arguments chose, only a throw is a failure). A refused
 * call does not run; its tool result is `options.refusal(error)` (default
 * the structured `toToolResult()`), and a tool's own `toModelOutput` is not
 * asked about it. A call the guard cannot check (it threw) does not run
 * either: `execute` throws, and the model sees a tool error.
 *
 * A tool with `needsApproval`: the call is previewed before the SDK asks
 * for approval; one the gate would refuse is refused at once and nobody is
 * asked (unless the user's confirmation is what it lacks). The calls of one
 * step are previewed in order, each after the earlier ones as if approved
 * and run, so a second write of the step is refused at once. A refused
 * call's `toolCallId` is noted for `gateTextStream` on the same guard
 * source, whatever `refusal` returns. A call waiting
 * for approval is not checked nor recorded; when the user approves it, the
 * approval is recorded as their confirmation, then the call is checked; a
 * denied call never runs and nothing is recorded.
 *
 * Tools without `execute` (run by your app, or by the provider) are left as
 * they are: gate them yourself with the guard.
 *
 * @returns a new `ToolSet` with the same keys and tool properties.
 * @throws AdapterConfigError (at wrap time) without a classification or
 *   guard source, or when no gated tool can ever read or resolve.
 * @throws CatalogError when the catalog does not validate.
 */
export function gateTools<TOOLS extends ToolSet>(tools: TOOLS, options: GateToolsOptions): TOOLS {
  return createToolGate(tools, options).tools;
}
