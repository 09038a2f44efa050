/**
 * The safety gate for the Vercel AI SDK (`ai` 7): `pulse-safety-fsm/ai-sdk`.
 *
 * - `withSafetyGate(options)`: the whole options of one `generateText` /
 *   `streamText` call with the gate composed in (src/adapters/ai-sdk/options.ts):
 *   your transforms, step callbacks, `prepareStep` and `toolApproval` run
 *   with the gate's, never instead of them.
 * - `gateTools(tools, options)`: every `execute` checked before it runs and
 *   its outcome recorded after with the check's classification; calls that
 *   ask for approval screened first (src/adapters/ai-sdk/tools.ts).
 * - `gateAnswer(options)`: an `onStepEnd` and an `experimental_steering`
 *   that gate the final answer (src/adapters/ai-sdk/answer.ts).
 * - `gateTextStream(options)`: a `streamText` transform under which no text
 *   reaches the reader before the gate allows it (src/adapters/ai-sdk/stream.ts).
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants", "Blocked calls and recovery";
 * DESIGN.md §3.1, §3.8, §5.6, §5.7, §6.3.
 */
// Every parser loaded before this entry's classifiers are used (`classify/parsers.ts`).
import '../classify/eager.js';

export { AdapterConfigError } from './common.js';
export { type GuardSourceOptions } from './ai-sdk/guard-source.js';
export { gateTools, type GateToolsOptions } from './ai-sdk/tools.js';
export { gateAnswer, type AnswerGate, type AnswerState, type GateAnswerOptions, type StepEndCallback } from './ai-sdk/answer.js';
export { gateTextStream } from './ai-sdk/stream.js';
export { withSafetyGate, type SafetyGated, type SafetyGateOptions } from './ai-sdk/options.js';
