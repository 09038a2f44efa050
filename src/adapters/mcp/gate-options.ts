/**
 * The vocabulary the MCP gate's pieces share, and that its users see: the
 * options of `createGatingProxy` and `gateMcpServer`, the events they report,
 * and the answer state each gated result carries. Kept apart from `index.ts`
 * so that the proxy, the server gate and the gated call can import it
 * without importing the subpath that re-exports them.
 */
import type { BlockRule, SafetyState, ToolKind } from '../../../machines/safety.types.js';
import type { Implementation } from '@modelcontextprotocol/sdk/types.js';
import type { SessionGuard } from '../../guard/session-guard.js';

/** The `_meta` key under which every gated `tools/call` result carries the `AnswerState`. */
export const ANSWER_META_KEY = 'pulse-safety/answer';

/** The session key of connections whose transport has no session id (stdio, in-memory); see `McpGateOptions.sessionKey`. */
export const DEFAULT_SESSION_KEY = 'default';

/**
 * What `guard.finalAnswer()` would decide right now (from `mayAnswer`, no side
 * effect), as carried in `_meta['pulse-safety/answer']` of each gated result.
 * `rule`, `reason` and `text` (the refusal in words for the model,
 * `refusalText`) are present only when the answer would be refused.
 */
export interface AnswerState {
  allowed: boolean;
  /** The session's state after this call. */
  state: SafetyState;
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
      state: SafetyState;
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
      state: SafetyState;
      answer: AnswerState;
    };

/**
 * Options of `createGatingProxy` and `gateMcpServer`.
 *
 * The guard: one `guard` for a single session, or `getGuard(sessionKey)` for
 * many (e.g. `(key) => store.session(key)` with `createSessionStore`); the key
 * is the transport's session id (the `Mcp-Session-Id` of Streamable HTTP), or
 * `sessionKey` when the transport has none. Neither: an in-memory session
 * store made here, with `strictFailedWrites` as below.
 */
export interface McpGateOptions {
  /** The gate of the one session (not with `getGuard`). */
  guard?: SessionGuard;
  /** The gate of a session by its key (not with `guard`). */
  getGuard?: (sessionKey: string) => SessionGuard;
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
   * A failed write counts as a write that may have applied (DESIGN.md §3.8);
   * default true, because an MCP call that timed out or was cancelled may
   * well have run. Applies to guards made here; a guard given must match it,
   * so pass false to accept one that is not strict. A `guard` is checked at
   * wrap time (an `AdapterConfigError`); a guard from `getGuard` at each call
   * (the call is then not run, and its MCP error says why).
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
