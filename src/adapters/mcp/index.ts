/**
 * The MCP adapter, `pulse-safety-fsm/mcp`: the safety gate in front of any
 * Model Context Protocol server, and inside your own.
 *
 * - `createGatingProxy(upstreamClient, options)` returns a low-level MCP
 *   `Server` that forwards everything a transparent proxy must (tools,
 *   resources, prompts, completions, logging, progress and cancellation both
 *   ways, sampling, elicitation and roots requests from the server) and gates
 *   `tools/call`: each call is checked before it is forwarded and its outcome
 *   recorded after. `pulse-safety mcp-proxy` (src/cli/commands/mcp-proxy.ts)
 *   runs it over stdio or Streamable HTTP.
 * - `gateMcpServer(server, options)` gates the tools of an `McpServer` in
 *   process, by wrapping each tool's callback as it is registered.
 *
 * Tools are classified from their MCP annotations (DESIGN.md §4: a read only
 * when the server is trusted and says `readOnlyHint: true`; any other tool is
 * a write, destructive unless a trusted server says `destructiveHint: false`),
 * with a catalog's entries taking precedence; their targets from the
 * arguments their input schemas name as paths, URIs or ids (`ToolBook`,
 * `targetArguments`). The guard of a session may be synchronous
 * (`SessionGuard`) or shared by many processes (`SharedSessionGuard`).
 *
 * A proxy never sees the model's final answer; so the third invariant (no
 * final answer about an unverified change) cannot be enforced here. What the
 * gate would decide about an answer is exposed instead on every `tools/call`
 * result, under `_meta['pulse-safety/answer']` (`AnswerState`), for hosts
 * that want to hold an answer back.
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants", "Blocked calls and recovery";
 * DESIGN.md §3.8 (strict failed writes), §4 (MCP annotations), §5.6
 * (destructive writes), §5.7 (failures read from the result).
 *
 * This file is the subpath's surface: the pieces live beside it (the options
 * and events in `gate-options.ts`, the tools known in `tool-book.ts`, one
 * gated call in `gated-call.ts`, the guard of a session in `guard-source.ts`,
 * the proxy in `gating-proxy.ts`, the in-process gate in `gate-server.ts`).
 */
// Every parser loaded before this entry's classifiers are used (`classify/parsers.ts`).
import '../../classify/eager.js';
import { isRecord } from '../../util/own.js';
import { ANSWER_META_KEY, type AnswerState } from './gate-options.js';

export { AdapterConfigError } from '../common.js';
export { ANSWER_META_KEY, DEFAULT_SESSION_KEY } from './gate-options.js';
export type { AnswerState, GatingProxyOptions, McpGateEvent, McpGateOptions } from './gate-options.js';
export { callIdOf, refusalResult } from './gated-call.js';
export { createGatingProxy } from './gating-proxy.js';
export { gateMcpServer } from './gate-server.js';
export { ProcessGroupStdioTransport } from './stdio-upstream.js';

/**
 * The `AnswerState` a gated result carries, read back from its `_meta`
 * (for hosts); also from the `data` of a `tools/call` JSON-RPC error
 * (`answerStateOf(error.data)`), which carries it the same way. Undefined
 * when it has none or it is malformed.
 */
export function answerStateOf(result: unknown): AnswerState | undefined {
  const meta = isRecord(result) ? result._meta : undefined;
  const state = isRecord(meta) ? meta[ANSWER_META_KEY] : undefined;
  return isRecord(state) && typeof state.allowed === 'boolean' && typeof state.state === 'string'
    ? (state as unknown as AnswerState)
    : undefined;
}
