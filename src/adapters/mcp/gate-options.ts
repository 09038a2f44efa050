/**
 * The vocabulary the MCP gate's pieces share, and that its users see: the
 * options of `createGatingProxy` and `gateMcpServer`, the events they report,
 * and the answer state each gated result carries. Kept apart from `index.ts`
 * so that the proxy, the server gate and the gated call can import it
 * without importing the subpath that re-exports them.
 */
import type { BlockRule, SafetyState, ToolKind } from '../../../machines/safety.types.js';
import type { Implementation } from '@modelcontextprotocol/sdk/types.js';
import type { AdapterGuard } from '../common.js';

/** The `_meta` key under which every gated `tools/call` result carries the `AnswerState`. */
export const ANSWER_META_KEY = 'pulse-safety/answer';

/** The session key of connections whose transport has no session id (stdio, in-memory); see `McpGateOptions.sessionKey`. */
export const DEFAULT_SESSION_KEY = 'default';

/**
 * What `guard.finalAnswer()` would decide right now (from `mayAnswer`, no side
 * effect), as carried in `_meta['pulse-safety/answer']` of EVERY gated
 * `tools/call` result (refusals, calls the gate could not check and failed
 * calls included) and in `error.data._meta['pulse-safety/answer']` of a
 * `tools/call` answered with a JSON-RPC error. `rule`, `reason` and `text`
 * (the refusal in words for the model, `refusalText`) are present only when
 * the answer would be refused.
 */
export interface AnswerState {
  allowed: boolean;
  /**
   * The session's state after this call; `UNKNOWN` when the session could
   * not be read (no guard, a shared store that failed): the answer is then
   * refused (`allowed: false`, `reason` says why, no `rule`).
   */
  state: SafetyState | 'UNKNOWN';
  rule?: BlockRule;
  reason?: string;
  text?: string;
}

/**
 * One gate event, for logs (`pulse-safety mcp-proxy --log`): a `check` when a
 * call was decided, an `outcome` when its result was recorded. `at` is epoch
 * milliseconds; `session` the guard's session key; `id` the call id (the
 * JSON-RPC request id, as a string).
 */
export type McpGateEvent =
  | {
      type: 'check';
      at: number;
      session: string;
      id: string;
      tool: string;
      kind: ToolKind;
      targets: string[];
      destructive: boolean;
      allowed: boolean;
      /** The session's state after the check; `UNKNOWN` when it could not be read. */
      state: SafetyState | 'UNKNOWN';
      rule?: BlockRule;
      reason?: string;
    }
  | {
      type: 'outcome';
      at: number;
      session: string;
      id: string;
      tool: string;
      kind: ToolKind;
      outcome: 'success' | 'error';
      /** Why an `error`: the call threw, was cancelled or timed out (its message), or its result says so (absent). */
      thrown?: string;
      state: SafetyState | 'UNKNOWN';
      answer: AnswerState;
    };

/**
 * Options of `createGatingProxy` and `gateMcpServer`.
 *
 * The guard: one `guard` for a single session, or `getGuard(sessionKey)` for
 * many (e.g. `(key) => store.session(key)` with `createSessionStore`, or with
 * `createSharedSessionStore` for sessions shared by many processes); the key
 * is the transport's session id (the `Mcp-Session-Id` of Streamable HTTP), or
 * `sessionKey` when the transport has none. Neither: an in-memory session
 * store made here. A guard may be synchronous (`SessionGuard`) or
 * asynchronous (`SharedSessionGuard`, whose failures refuse the call).
 */
export interface McpGateOptions {
  /** The gate of the one session (not with `getGuard`). */
  guard?: AdapterGuard;
  /** The gate of a session by its key (not with `guard`); what it throws keeps that call from running. */
  getGuard?: (sessionKey: string) => AdapterGuard;
  /** The key of connections without a session id; default `DEFAULT_SESSION_KEY` (`'default'`). */
  sessionKey?: string;
  /**
   * The catalog whose entries override the tools' annotations (a `Catalog`
   * or any JSON value validated as one); default `builtinCatalogs.mcp`
   * (annotations only).
   */
  catalog?: unknown;
  /**
   * Trust the tools' annotations (DESIGN.md §4). Default false for the proxy
   * (a server is untrusted until you say so: every tool is then a write), true
   * for `gateMcpServer` (the annotations are your own).
   */
  trusted?: boolean;
  /**
   * A failed write counts as a write that may have applied (DESIGN.md §3.8),
   * needing a read before the next write; default true, because an MCP call
   * that timed out or was cancelled may well have run. Passed to every
   * record (`recordCall`), whatever the guard's own `strictFailedWrites`.
   */
  strictFailedWrites?: boolean;
  /** Called with every check and outcome (see `McpGateEvent`); exceptions it throws are ignored. */
  onEvent?: (event: McpGateEvent) => void;
}

/** Options of `createGatingProxy`. */
export interface GatingProxyOptions extends McpGateOptions {
  /**
   * Timeout of each request forwarded to the upstream server on the client's
   * behalf, milliseconds; default the SDK's 60 000. Progress notifications
   * reset it (the proxy's own `tools/list` requests use the SDK's default).
   * A `tools/call` that times out is recorded as failed (and, with strict
   * failed writes, a write so failed needs verification) and cancelled upstream.
   */
  timeoutMs?: number;
  /** The proxy's `serverInfo`; default the upstream server's own. */
  serverInfo?: Implementation;
}
