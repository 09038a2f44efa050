/**
 * `withSafetyGate`: the gate composed into the whole options of one
 * `generateText` / `streamText` call, so none of your options can replace
 * the gate's, and none of the gate's replaces yours.
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants"; DESIGN.md §3.1, §5.6.
 */
import type { Experimental_Steering, PrepareStepFunction, StepResult, StreamTextTransform, ToolApprovalConfiguration, ToolSet } from 'ai';
import { AdapterConfigError } from '../common.js';
import { createAnswerGate, type AnswerState, type GateAnswerOptions, type StepEndCallback } from './answer.js';
import { ADAPTER } from './guard-source.js';
import { gateTextStream } from './stream.js';
import { createToolGate, type GateToolsOptions, type ToolGate } from './tools.js';

/** The options that are the gate's own, taken out of what `withSafetyGate` returns. */
const GATE_KEYS = [
  'guard',
  'getGuard',
  'sessionKey',
  'catalog',
  'kinds',
  'classify',
  'refusal',
  'strictFailedWrites',
  'answerRefusal',
  'steering',
] as const;

type GateKey = (typeof GATE_KEYS)[number];

/**
 * The options of `withSafetyGate`: the whole options of your
 * `generateText` / `streamText` call (`model`, `prompt` or `messages`,
 * `tools`, `stopWhen`, ...) with the gate's own beside them (a guard source,
 * a classification source, `refusal`, `strictFailedWrites`,
 * `answerRefusal`, `steering`). The call's options the gate takes part in
 * are typed here; the others pass through untouched.
 */
export interface SafetyGateOptions<TOOLS extends ToolSet> extends GateToolsOptions, Omit<GateAnswerOptions<TOOLS>, 'onStepEnd'> {
  /** The call's model: `withSafetyGate` takes the whole call's options, never a part to spread. */
  model: unknown;
  tools: TOOLS;
  /** Your stream transforms: run after the gate's, so they see only text the gate let through. */
  experimental_transform?: StreamTextTransform<TOOLS> | StreamTextTransform<TOOLS>[];
  /** Your step callback: called after the gate's, with the SDK's step result. */
  onStepEnd?: StepEndCallback<TOOLS>;
  /** The SDK's deprecated name of `onStepEnd`: called too, after `onStepEnd`. */
  onStepFinish?: StepEndCallback<TOOLS>;
  /** Your `prepareStep`: its answer is kept, with the gate's steered refusal added back to `messages` if it left it out. */
  prepareStep?: PrepareStepFunction<TOOLS>;
  /** The call's approval configuration: a `user-approval` is screened by the gate first (see `gateTools`). */
  toolApproval?: ToolApprovalConfiguration<TOOLS, unknown>;
  /** The call's steering object, which the gate steers its refusals into (give this or `steering`). */
  experimental_steering?: Experimental_Steering;
}

/**
 * What `withSafetyGate` returns: your call's options with the gate composed
 * in and the gate's own options taken out; pass it to `generateText` or
 * `streamText` as it is. `answer` (not enumerable) tells how the run ended.
 */
export type SafetyGated<OPTIONS, TOOLS extends ToolSet> = Omit<
  OPTIONS,
  GateKey | 'tools' | 'onStepEnd' | 'onStepFinish' | 'experimental_transform' | 'experimental_steering'
> & {
  tools: TOOLS;
  onStepEnd: (event: StepResult<TOOLS>) => Promise<void>;
  experimental_steering: Experimental_Steering;
  experimental_transform: StreamTextTransform<TOOLS>[];
  readonly answer: AnswerState;
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** The gate's refusals a `prepareStep` answer left out of its `messages`, added back (as the SDK tells a message sent: same content). */
function keepRefusals(result: unknown, steered: unknown, isRefusal: (message: unknown) => boolean): unknown {
  if (!isRecord(result) || !Array.isArray(result.messages) || !Array.isArray(steered)) return result;
  const sent = new Set((result.messages as unknown[]).map((message) => (isRecord(message) ? JSON.stringify(message.content) : '')));
  const missing = (steered as unknown[]).filter(
    (message) => isRefusal(message) && !sent.has(JSON.stringify((message as { content?: unknown }).content)),
  );
  return missing.length === 0 ? result : { ...result, messages: [...(result.messages as unknown[]), ...missing] };
}

type ApprovalStatus = undefined | string | { type?: unknown; reason?: unknown };

/** A call the SDK asks the approval status of: its tool, input and id, and the messages of its step. */
interface ScreenedCall {
  name: string;
  input: unknown;
  toolCallId: unknown;
  messages: unknown;
}

function asksUser(status: ApprovalStatus): boolean {
  return status === 'user-approval' || (isRecord(status) && status.type === 'user-approval');
}

/**
 * The call-level `toolApproval` with the gate's screen before each
 * `user-approval` of a gated tool: a call the gate would refuse gets
 * `not-applicable` (it is then refused when it runs, and nobody is asked).
 *
 * @throws AdapterConfigError when `toolApproval` is neither a function nor an object.
 */
function screenedApproval(toolApproval: unknown, gate: ToolGate<ToolSet>): unknown {
  if (toolApproval === undefined) return undefined;
  const screened = async (status: ApprovalStatus, call: ScreenedCall): Promise<ApprovalStatus> => {
    if (!asksUser(status) || !gate.gated.has(call.name)) return status;
    const toolCallId = typeof call.toolCallId === 'string' ? call.toolCallId : undefined;
    return (await gate.screen(call.name, call.input, toolCallId, call.messages)) ? status : 'not-applicable';
  };
  if (typeof toolApproval === 'function') {
    return async (args: { toolCall?: { toolName?: unknown; input?: unknown; toolCallId?: unknown }; messages?: unknown }) => {
      const status = (await (toolApproval as (args: unknown) => unknown)(args)) as ApprovalStatus;
      const call = args?.toolCall;
      const name = typeof call?.toolName === 'string' ? call.toolName : '';
      return screened(status, { name, input: call?.input, toolCallId: call?.toolCallId, messages: args?.messages });
    };
  }
  if (!isRecord(toolApproval)) {
    throw new AdapterConfigError(ADAPTER, 'withSafetyGate: `toolApproval` must be a function or an object of statuses by tool name');
  }
  const perTool: Record<string, unknown> = {};
  for (const [name, entry] of Object.entries(toolApproval)) {
    perTool[name] = async (input: unknown, options: { toolCallId?: unknown; messages?: unknown }) => {
      const status = (
        typeof entry === 'function' ? await (entry as (i: unknown, o: unknown) => unknown)(input, options) : entry
      ) as ApprovalStatus;
      return screened(status, { name, input, toolCallId: options?.toolCallId, messages: options?.messages });
    };
  }
  return perTool;
}

function asArray<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/**
 * The gate composed into the whole options of one `generateText` /
 * `streamText` call. Give it everything you would give the call, with the
 * gate's options beside it, and pass what it returns to the call as it is:
 *
 * - `tools`: gated (`gateTools`, with `refusal` and `strictFailedWrites`);
 * - `experimental_transform`: the gate's (`gateTextStream`) first, then
 *   yours (e.g. `smoothStream()`), which see only text the gate let through;
 * - `onStepEnd`: the gate's (`gateAnswer`), then yours, then your
 *   `onStepFinish` (the SDK would call only one of the two);
 * - `experimental_steering`: yours if given (the gate steers its refusals
 *   into it), else a new one;
 * - `prepareStep`: yours, with the gate's steered refusal added back when
 *   the `messages` it returns leave it out;
 * - `toolApproval`: yours, with the gate's screen before each
 *   `user-approval` (a call the gate would refuse is refused, nobody asked);
 * - everything else (`model`, `stopWhen`, `onChunk`, `onEnd`, ...) as given.
 *
 * Create one per call (a steering object serves one generation), for one
 * conversation: `guard`, or `getGuard` with that conversation's
 * `sessionKey`. `answer` (not enumerable) tells how the run ended.
 *
 * @example
 * const call = withSafetyGate({ model, messages, tools, stopWhen: isStepCount(10),
 *   experimental_transform: smoothStream(), getGuard: (id) => sessions.session(id), sessionKey: chatId, catalog });
 * const result = streamText(call);
 * // after the run: call.answer.state === 'allowed' when the last answer was let through
 *
 * @throws AdapterConfigError without `model` (the whole call's options are
 *   needed: a part spread into them could be replaced by what follows), when
 *   `steering` and `experimental_steering` are two objects, when
 *   `experimental_transform`, `onStepEnd`, `onStepFinish` or `prepareStep`
 *   is given but not a function (or an array of transforms), or as
 *   `gateTools` and `gateAnswer` do.
 * @throws CatalogError when the catalog does not validate.
 */
export function withSafetyGate<TOOLS extends ToolSet, OPTIONS extends SafetyGateOptions<TOOLS>>(
  options: OPTIONS & { tools: TOOLS },
): SafetyGated<OPTIONS, TOOLS> {
  if (!isRecord(options)) throw new AdapterConfigError(ADAPTER, 'withSafetyGate: give the call options as an object');
  if (options.model === undefined) {
    throw new AdapterConfigError(
      ADAPTER,
      "withSafetyGate takes the whole call's options (`model`, `prompt` or `messages`, `tools`, ... and the gate's), and " +
        'returns them with the gate composed in: no `model` was given. Pass the result to generateText / streamText as it is: ' +
        "options spread after it would replace the gate's",
    );
  }
  const { experimental_transform: transforms, onStepEnd, onStepFinish, prepareStep, toolApproval, experimental_steering } = options;
  for (const [key, value] of [
    ['onStepEnd', onStepEnd],
    ['onStepFinish', onStepFinish],
    ['prepareStep', prepareStep],
  ] as const) {
    if (value !== undefined && typeof value !== 'function')
      throw new AdapterConfigError(ADAPTER, `withSafetyGate: \`${key}\` must be a function`);
  }
  const userTransforms = asArray(transforms);
  if (userTransforms.some((transform) => typeof transform !== 'function')) {
    throw new AdapterConfigError(ADAPTER, 'withSafetyGate: `experimental_transform` must be a stream transform or an array of them');
  }
  if (options.steering !== undefined && experimental_steering !== undefined && options.steering !== experimental_steering) {
    throw new AdapterConfigError(ADAPTER, 'withSafetyGate: give `steering` or `experimental_steering` (the same object), not two');
  }

  const toolGate = createToolGate(options.tools, options);
  const userSteps = [onStepEnd, onStepFinish].filter((callback): callback is StepEndCallback<TOOLS> => callback !== undefined);
  const answerGate = createAnswerGate<TOOLS>({
    ...(options.guard === undefined ? {} : { guard: options.guard }),
    ...(options.getGuard === undefined ? {} : { getGuard: options.getGuard }),
    ...(options.sessionKey === undefined ? {} : { sessionKey: options.sessionKey }),
    ...(options.answerRefusal === undefined ? {} : { answerRefusal: options.answerRefusal }),
    ...((options.steering ?? experimental_steering) === undefined ? {} : { steering: options.steering ?? experimental_steering }),
    ...(userSteps.length === 0
      ? {}
      : {
          onStepEnd: async (event: StepResult<TOOLS>) => {
            for (const callback of userSteps) await callback(event);
          },
        }),
  });

  const composed: Record<string, unknown> = { ...options };
  for (const key of [...GATE_KEYS, 'onStepFinish']) delete composed[key];
  composed.tools = toolGate.tools;
  composed.onStepEnd = answerGate.gate.onStepEnd;
  composed.experimental_steering = answerGate.gate.experimental_steering;
  composed.experimental_transform = [gateTextStream<TOOLS>(options), ...userTransforms];
  if (prepareStep !== undefined) {
    composed.prepareStep = async (args: Parameters<PrepareStepFunction<TOOLS>>[0]) =>
      keepRefusals(await prepareStep(args), args?.experimental_steeringMessages, answerGate.isRefusal);
  }
  if (toolApproval !== undefined) composed.toolApproval = screenedApproval(toolApproval, toolGate as ToolGate<ToolSet>);
  Object.defineProperty(composed, 'answer', { enumerable: false, get: () => answerGate.gate.answer });
  return composed as SafetyGated<OPTIONS, TOOLS>;
}
