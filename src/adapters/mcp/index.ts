/**
 * The MCP adapter, `pulse-safety-fsm/mcp`: the safety gate in front of any
 * Model Context Protocol server, and inside your own.
 *
 * - `createGatingProxy(upstreamClient, options)` returns a low-level MCP
 *   `Server` that forwards everything a transparent proxy must (tools,
 *   resources, prompts, completions, logging, progress and cancellation both
 *   ways, sampling, elicitation and roots requests from the server) and gates
 *   `tools/call`: each call is checked before it is forwarded and its outcome
 *   recorded after. `pulse-safety mcp-proxy` (src/adapters/mcp-command.ts)
 *   runs it over stdio or Streamable HTTP.
 * - `gateMcpServer(server, options)` gates the tools of an `McpServer` in
 *   process, by wrapping each tool's callback as it is registered.
 *
 * Tools are classified from their MCP annotations (DESIGN.md §4: a read only
 * when the server is trusted and says `readOnlyHint: true`; any other tool is
 * a write, destructive unless a trusted server says `destructiveHint: false`),
 * with a catalog's entries taking precedence (`compileCatalog(catalog, {
 * annotations, trusted })`, src/classifier.ts).
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
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { DEFAULT_REQUEST_TIMEOUT_MSEC, type RequestHandlerExtra, type RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  InitializedNotificationSchema,
  ListRootsRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ResultSchema,
  SetLevelRequestSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type ClientCapabilities,
  type ClientNotification,
  type ClientRequest,
  type ClientResult,
  type Implementation,
  type Progress,
  type ServerNotification,
  type ServerRequest,
  type ServerResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { BlockRule, SafetyState, ToolKind } from '../../../machines/safety.types.js';
import { sessionStateOf, type Decision, type SessionGuard, type ToolCall } from '../../guard/session-guard.js';
import { mayAnswer } from '../../guard/may-answer.js';
import type { Classification } from '../../classify/classification.js';
import { builtinCatalogs, compileCatalog, parseCatalog, type Catalog, type CompiledCatalog } from '../../classify/catalog/index.js';
import type { FSMBlockedError } from '../../errors/index.js';
import { refusalText } from '../../guard/refusal-text.js';
import { createSessionStore } from '../../store/session-store.js';
import { AdapterConfigError, recordCall, type ToolClassifier } from '../common.js';
import { isRecord } from '../../util/own.js';

export { AdapterConfigError };

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

type ServerExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** The longest delay a Node timer accepts: requests from the server to the client wait for their own deadline, not the proxy's. */
const MAX_TIMER_MS = 2_147_483_647;

/** How many `tools/list` pages are read at most (a server that pages forever is cut off). */
const MAX_TOOL_PAGES = 1_000;

function messageOf(error: unknown): string {
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
 * The `AnswerState` a gated result carries, read back from its `_meta`
 * (for hosts); undefined when it has none or it is malformed.
 */
export function answerStateOf(result: unknown): AnswerState | undefined {
  const meta = isRecord(result) ? result._meta : undefined;
  const state = isRecord(meta) ? meta[ANSWER_META_KEY] : undefined;
  return isRecord(state) && typeof state.allowed === 'boolean' && typeof state.state === 'string'
    ? (state as unknown as AnswerState)
    : undefined;
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

/** A guard's setting for failed writes, read from its session without a copy (and without creating its actor); false when it cannot be read. */
function isStrict(guard: SessionGuard): boolean {
  try {
    // A store's session handle is no guard of its own: its (copied) context says the same.
    return (sessionStateOf(guard)?.context ?? guard.context).strictFailedWrites === true;
  } catch {
    return false;
  }
}

function notStrictMessage(where: string): string {
  return (
    `${where}: the guard does not treat a failed write as possibly applied, but an MCP call that timed out or was ` +
    "cancelled may have run. Create it with strictFailedWrites: true (createSessionGuard, or the session store's " +
    'guard options), or pass strictFailedWrites: false to the gate to accept that'
  );
}

/** Resolves the guard of a session: the options' `guard`, `getGuard`, or a store made here. */
type GuardSource = (sessionId: string | undefined) => { guard: SessionGuard; key: string };

/**
 * @throws AdapterConfigError on both or malformed guard sources, a bad
 *   `sessionKey`, or a `guard` that is not strict while strictness is asked for.
 */
function guardSource(options: McpGateOptions, where: string): GuardSource {
  const strict = options.strictFailedWrites ?? true;
  if (typeof strict !== 'boolean') throw new AdapterConfigError('mcp', `${where}: strictFailedWrites must be a boolean`);
  const fallbackKey = options.sessionKey ?? DEFAULT_SESSION_KEY;
  if (typeof fallbackKey !== 'string' || fallbackKey === '') {
    throw new AdapterConfigError('mcp', `${where}: sessionKey must be a non-empty string`);
  }
  if (options.guard !== undefined && options.getGuard !== undefined) {
    throw new AdapterConfigError('mcp', `${where}: give either guard or getGuard, not both`);
  }
  if (options.guard !== undefined) {
    const guard = options.guard;
    if (typeof guard?.check !== 'function' || typeof guard.record !== 'function') {
      throw new AdapterConfigError('mcp', `${where}: guard must be a SessionGuard (createSessionGuard or a session store's session)`);
    }
    if (strict && !isStrict(guard)) throw new AdapterConfigError('mcp', notStrictMessage(where));
    return (sessionId) => ({ guard, key: sessionId ?? fallbackKey });
  }
  let get: (key: string) => SessionGuard;
  if (options.getGuard !== undefined) {
    if (typeof options.getGuard !== 'function')
      throw new AdapterConfigError('mcp', `${where}: getGuard must be a function of the session key`);
    get = options.getGuard;
  } else {
    const store = createSessionStore({ guard: { strictFailedWrites: strict } });
    get = (key) => store.session(key);
  }
  return (sessionId) => {
    const key = sessionId ?? fallbackKey;
    const guard = get(key);
    if (strict && !isStrict(guard)) throw new AdapterConfigError('mcp', notStrictMessage(where));
    return { guard, key };
  };
}

/** What the gate knows of one tool. */
interface ToolInfo {
  name: string;
  annotations: Record<string, unknown>;
  hasOutputSchema: boolean;
}

/** The tools of a `tools/list` result, read defensively (a hostile server's list cannot throw here). */
function toolsOf(result: unknown): ToolInfo[] {
  const tools = isRecord(result) && Array.isArray(result.tools) ? result.tools : [];
  const found: ToolInfo[] = [];
  for (const tool of tools) {
    if (!isRecord(tool) || typeof tool.name !== 'string') continue;
    found.push({
      name: tool.name,
      annotations: isRecord(tool.annotations) ? tool.annotations : {},
      hasOutputSchema: tool.outputSchema !== undefined && tool.outputSchema !== null,
    });
  }
  return found;
}

/**
 * The tools the gate knows, and the catalog compiled with their annotations
 * (recompiled on the next use after a change): the adapters' `ToolClassifier`.
 */
class ToolBook implements ToolClassifier {
  private tools = new Map<string, ToolInfo>();
  private compiledCatalog: CompiledCatalog | null = null;

  constructor(
    private readonly catalog: Catalog,
    /** The tools' annotations, and the self-verification their results report, are trusted. */
    readonly trusted: boolean,
  ) {}

  /** Replaces every tool (a full `tools/list`, or the registrations of a server). */
  replace(tools: readonly ToolInfo[]): void {
    this.tools = new Map(tools.map((tool) => [tool.name, tool]));
    this.compiledCatalog = null;
  }

  /** Adds or updates tools (one page of a `tools/list`). */
  merge(tools: readonly ToolInfo[]): void {
    for (const tool of tools) this.tools.set(tool.name, tool);
    if (tools.length > 0) this.compiledCatalog = null;
  }

  private get compiled(): CompiledCatalog {
    this.compiledCatalog ??= compileCatalog(this.catalog, {
      annotations: Object.fromEntries([...this.tools.values()].map((tool) => [tool.name, tool.annotations])),
      trusted: this.trusted,
    });
    return this.compiledCatalog;
  }

  classify(name: string, args: unknown): Classification {
    return this.compiled.classify(name, args);
  }

  failureMarkers(name: string): readonly string[] {
    return this.compiled.failureMarkers(name);
  }

  isSelfVerifying(name: string): boolean {
    return this.compiled.isSelfVerifying(name);
  }

  /** A refusal may carry `structuredContent`: the tool is known and declares no `outputSchema`. */
  structuredRefusal(name: string): boolean {
    const tool = this.tools.get(name);
    return tool !== undefined && !tool.hasOutputSchema;
  }

  /**
   * The tool can be a read or resolve: so classified without arguments, or
   * its catalog rule depends on the arguments (keyed, shell or SQL).
   */
  mayRead(name: string): boolean {
    const kind = this.compiled.kindOf(name, {});
    if (kind === 'read' || kind === 'resolve') return true;
    const entry = Object.entries(this.catalog.tools).find(([listed]) => listed.trim() === name.trim())?.[1];
    return typeof entry === 'object' && (entry.argument !== undefined || entry.shell !== undefined || entry.sql !== undefined);
  }

  /**
   * @throws AdapterConfigError when there are tools and none can be a
   *   read or resolve: the session could never establish a target.
   */
  assertSomeRead(where: string, subject: string): void {
    if (this.tools.size === 0) return;
    const names = [...this.tools.keys()];
    if (names.some((name) => this.mayRead(name))) return;
    const listed = names.slice(0, 8).join(', ') + (names.length > 8 ? ', ...' : '');
    const why = this.trusted
      ? 'none declares readOnlyHint: true'
      : 'their annotations are not trusted (trust them with --trust or trusted: true, and a tool with readOnlyHint: true is a read)';
    throw new AdapterConfigError(
      'mcp',
      `${where}: none of the ${names.length} tools of ${subject} (${listed}) is a read or resolve: ${why}. ` +
        'The session could never establish a target, so every write would be refused. ' +
        `Name the read tools in a catalog (--catalog, or the catalog option; catalog '${this.catalog.name}' lists none of them).`,
    );
  }
}

/** One tools/call to gate. */
interface GatedCall {
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
async function runGated(call: GatedCall, run: () => Promise<CallToolResult>): Promise<CallToolResult> {
  const { guard, book } = call;
  const classification = book.classify(call.name, call.args);
  const toolCall: ToolCall = {
    id: call.id,
    name: call.name,
    args: call.args,
    kind: classification.kind,
    targets: classification.targets,
    destructive: classification.destructive,
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

/** Reads every page of the upstream's `tools/list` (the SDK's default timeout per page). */
async function listAllTools(upstream: Client): Promise<ToolInfo[]> {
  const tools: ToolInfo[] = [];
  const cursors = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_TOOL_PAGES; page += 1) {
    const result = await upstream.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, ResultSchema);
    tools.push(...toolsOf(result));
    const next = (result as { nextCursor?: unknown }).nextCursor;
    if (typeof next !== 'string' || cursors.has(next)) break;
    cursors.add(next);
    cursor = next;
  }
  return tools;
}

/** Requests the server may send the client, and the client capability each needs. */
const SERVER_TO_CLIENT = [
  [CreateMessageRequestSchema, 'sampling'],
  [ElicitRequestSchema, 'elicitation'],
  [ListRootsRequestSchema, 'roots'],
] as const;

/**
 * A gating proxy: an MCP `Server` (the SDK's low-level one, not connected)
 * that stands for the server behind `upstream` and gates its `tools/call`.
 *
 * Forwarded both ways, transparently: `tools/list` (and
 * `notifications/tools/list_changed`, after which the tools are classified
 * again), resources (list, templates, read, subscribe, unsubscribe, updates),
 * prompts, completions, `logging/setLevel` and log messages, progress (the
 * client's progress token kept) and cancellation (a cancelled request is
 * cancelled upstream), and the server's requests to the client (sampling,
 * elicitation, roots; answered with MethodNotFound when the client did not
 * declare the capability), plus any request or notification the SDK does
 * not know. The proxy advertises the upstream's capabilities, server info and
 * instructions, except `tasks`: a task-augmented call would return before
 * the tool ran, so its outcome could not be recorded. Requests from the
 * server to the client wait until the client has initialized.
 *
 * Each `tools/call` is classified (the catalog's entry, else the tool's
 * annotations; unknown tools are writes), checked under its JSON-RPC id
 * (`extra.requestId`) in the guard of its session, and, when admitted,
 * forwarded; its outcome is recorded with `outcomeOf` (an `isError` result,
 * a thrown, cancelled or timed-out call is an error). A refused call returns
 * `refusalResult` and never reaches the server. Every result carries the
 * answer state under `_meta['pulse-safety/answer']`.
 *
 * The proxy takes over the upstream client's notification and
 * server-to-client request handlers. Closing either side closes the other
 * (the proxy sets `server.onclose` and chains `upstream.onclose`). Create
 * the proxy as soon as the client is connected: a request the server sends
 * before (e.g. for roots, on initialization) is answered MethodNotFound by
 * the SDK.
 *
 * @param upstream an SDK `Client`, connected (so its tools can be listed).
 *   For sampling, elicitation and roots to pass, it must declare those
 *   capabilities (the CLI's client declares all three).
 * @throws AdapterConfigError when `upstream` is not connected, the guard
 *   options conflict, or no upstream tool can be a read or resolve.
 * @throws CatalogError when the catalog does not validate.
 */
export async function createGatingProxy(upstream: Client, options: GatingProxyOptions = {}): Promise<Server> {
  const where = 'createGatingProxy';
  if (typeof upstream?.request !== 'function' || typeof upstream.getServerCapabilities !== 'function') {
    throw new AdapterConfigError('mcp', `${where}: upstream must be an MCP SDK Client`);
  }
  const capabilities = upstream.getServerCapabilities();
  if (capabilities === undefined) {
    throw new AdapterConfigError('mcp', `${where}: the upstream client is not connected; connect it to the MCP server first`);
  }
  const timeout = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MSEC;
  if (typeof timeout !== 'number' || !(timeout > 0) || timeout > MAX_TIMER_MS) {
    throw new AdapterConfigError('mcp', `${where}: timeoutMs must be a positive number of milliseconds up to ${MAX_TIMER_MS}`);
  }
  const guardFor = guardSource(options, where);
  const book = new ToolBook(parseCatalog(options.catalog ?? builtinCatalogs.mcp), options.trusted === true);
  const serverInfo = options.serverInfo ?? upstream.getServerVersion() ?? { name: 'pulse-safety-mcp-proxy', version: '0' };

  const { tasks: _tasks, ...advertised } = capabilities;
  const instructions = upstream.getInstructions();
  const server = new Server(serverInfo, { capabilities: advertised, ...(instructions === undefined ? {} : { instructions }) });
  const report = (error: unknown): void => server.onerror?.(error instanceof Error ? error : new Error(String(error)));

  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  // Replaces the SDK's own handler, which only calls `oninitialized`: that stays the caller's to set.
  server.setNotificationHandler(InitializedNotificationSchema, () => {
    markReady();
    server.oninitialized?.();
  });

  /** Options of a request forwarded upstream on behalf of the client: its cancellation, progress and our timeout. */
  function forwardOptions(params: unknown, extra: ServerExtra): RequestOptions {
    const meta = isRecord(params) ? params._meta : undefined;
    const token = isRecord(meta) ? meta.progressToken : undefined;
    const relay =
      typeof token === 'string' || typeof token === 'number'
        ? {
            onprogress: (progress: Progress) => {
              extra.sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken: token } }).catch(report);
            },
          }
        : {};
    return { signal: extra.signal, timeout, resetTimeoutOnProgress: true, ...relay };
  }

  if (capabilities.tools) {
    server.setRequestHandler(ListToolsRequestSchema, async (request, extra) => {
      const result = await upstream.request(
        { method: 'tools/list', params: request.params },
        ResultSchema,
        forwardOptions(request.params, extra),
      );
      book.merge(toolsOf(result));
      return result as ServerResult;
    });
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const { name, arguments: args } = request.params;
      let resolved: { guard: SessionGuard; key: string };
      try {
        resolved = guardFor(extra.sessionId);
      } catch (error) {
        throw new McpError(ErrorCode.InternalError, `pulse-safety: ${messageOf(error)}; the call was not run`);
      }
      return runGated(
        { guard: resolved.guard, session: resolved.key, id: callIdOf(extra), name, args, book, onEvent: options.onEvent },
        () =>
          upstream.request({ method: 'tools/call', params: request.params }, CallToolResultSchema, forwardOptions(request.params, extra)),
      );
    });
    upstream.setNotificationHandler(ToolListChangedNotificationSchema, async (notification) => {
      try {
        book.replace(await listAllTools(upstream));
      } catch (error) {
        report(error); // the tools known so far stay; calls of new tools are writes until listed
      }
      await ready;
      await server.notification(notification);
    });
  }
  if (capabilities.logging) {
    // Replaces the SDK's own handler: the upstream server filters its log messages.
    server.setRequestHandler(
      SetLevelRequestSchema,
      async (request, extra) =>
        (await upstream.request(
          { method: 'logging/setLevel', params: request.params },
          ResultSchema,
          forwardOptions(request.params, extra),
        )) as ServerResult,
    );
  }
  server.fallbackRequestHandler = async (request, extra) =>
    (await upstream.request(
      { method: request.method, ...(request.params === undefined ? {} : { params: request.params }) } as ClientRequest,
      ResultSchema,
      forwardOptions(request.params, extra),
    )) as ServerResult;
  server.fallbackNotificationHandler = async (notification) => {
    await upstream.notification(notification as ClientNotification);
  };

  upstream.fallbackNotificationHandler = async (notification) => {
    await ready;
    await server.notification(notification as ServerNotification);
  };
  for (const [schema, capability] of SERVER_TO_CLIENT) {
    try {
      upstream.setRequestHandler(schema, async (request, extra) => {
        await ready;
        const declared = server.getClientCapabilities() as ClientCapabilities | undefined;
        if (declared?.[capability] === undefined) {
          throw new McpError(ErrorCode.MethodNotFound, `the client behind the pulse-safety gating proxy does not support ${capability}`);
        }
        return (await server.request(request as ServerRequest, ResultSchema, {
          signal: extra.signal,
          timeout: MAX_TIMER_MS,
        })) as ClientResult;
      });
    } catch {
      // The upstream client did not declare this capability: the SDK answers such requests with an error itself.
    }
  }

  upstream.onerror ??= report;
  const upstreamOnClose = upstream.onclose;
  upstream.onclose = () => {
    upstreamOnClose?.();
    server.close().catch(report);
  };
  server.onclose = () => {
    upstream.close().catch(report);
  };

  // Listed last: the handlers above are in place when the server, initialized, starts asking (e.g. for roots).
  if (capabilities.tools) {
    book.replace(await listAllTools(upstream));
    book.assertSomeRead(where, `the upstream server '${serverInfo.name}'`);
  }
  return server;
}

/** A tool registered on a gated `McpServer`. */
interface Holder {
  name: string;
  annotations: unknown;
  outputSchema: unknown;
  tool?: RegisteredTool;
}

type ToolCallback = (...params: unknown[]) => CallToolResult | Promise<CallToolResult>;

const GATED = Symbol.for('pulse-safety-fsm/mcp.gated');

/**
 * Gates the tools of an `McpServer` in process: every tool registered after
 * this call (with `registerTool`, or the deprecated `tool`) is checked
 * before its callback runs and its outcome recorded after, exactly as the
 * proxy does (ids from the callback's `extra.requestId`; refusals as
 * `refusalResult`, without `structuredContent` for a tool with an
 * `outputSchema`; the answer state in each result's `_meta`). A tool's later
 * `update({ callback, annotations, outputSchema, name })` stays gated.
 *
 * Why wrap the callbacks: `McpServer` has no public hook around tool
 * execution, and the `tools/call` handler it installs on its low-level
 * `Server` cannot be reached without private fields. The callback given to
 * `registerTool` is the SDK's public seam: the tool's own annotations and
 * `outputSchema` are at hand there (no `tools/list` round trip to classify),
 * and its `extra` carries the request id. Annotations are trusted by default
 * here (they are your own). Task-based tools
 * (`server.experimental.tasks.registerToolTask`) are refused: their result
 * comes after the call returns, so the outcome could not be recorded.
 *
 * Returns the same server. Its `connect` throws an `AdapterConfigError`
 * when tools are registered and none can be a read or resolve.
 *
 * @throws AdapterConfigError when the server is already gated, already
 *   has tools (they would run ungated: gate it first), or the guard options conflict.
 * @throws CatalogError when the catalog does not validate.
 */
export function gateMcpServer<T extends McpServer>(server: T, options: McpGateOptions = {}): T {
  const where = 'gateMcpServer';
  if (typeof server?.registerTool !== 'function' || typeof server.connect !== 'function') {
    throw new AdapterConfigError('mcp', `${where}: expected an McpServer`);
  }
  const marked = server as T & { [GATED]?: true };
  if (marked[GATED]) throw new AdapterConfigError('mcp', `${where}: this server is already gated`);
  // A defensive look at the SDK's registry (not public API): tools registered before would run ungated.
  const registry = (server as unknown as { _registeredTools?: unknown })._registeredTools;
  if (isRecord(registry) && Object.keys(registry).length > 0) {
    throw new AdapterConfigError(
      'mcp',
      `${where}: tools are already registered (${Object.keys(registry).slice(0, 8).join(', ')}); gate the server before registering its tools, so that none runs ungated`,
    );
  }
  const guardFor = guardSource(options, where);
  const book = new ToolBook(parseCatalog(options.catalog ?? builtinCatalogs.mcp), options.trusted ?? true);
  const holders = new Set<Holder>();

  const refresh = (): void =>
    book.replace(
      [...holders].map((holder) => ({
        name: holder.name,
        annotations: isRecord(holder.tool?.annotations ?? holder.annotations)
          ? ((holder.tool?.annotations ?? holder.annotations) as Record<string, unknown>)
          : {},
        hasOutputSchema: (holder.tool?.outputSchema ?? holder.outputSchema) != null,
      })),
    );

  function gated(holder: Holder, callback: ToolCallback): ToolCallback {
    return async (...params: unknown[]) => {
      const extra = params[params.length - 1] as ServerExtra | undefined;
      const args = params.length > 1 ? params[0] : undefined;
      let resolved: { guard: SessionGuard; key: string };
      try {
        resolved = guardFor(extra?.sessionId);
      } catch (error) {
        throw new McpError(ErrorCode.InternalError, `pulse-safety: ${messageOf(error)}; the call was not run`);
      }
      return runGated(
        { guard: resolved.guard, session: resolved.key, id: callIdOf(extra), name: holder.name, args, book, onEvent: options.onEvent },
        async () => callback(...params),
      );
    };
  }

  /** Keeps a registered tool gated through its `update` (also used by enable, disable and remove). */
  function watch(holder: Holder, tool: RegisteredTool): void {
    holder.tool = tool;
    holders.add(holder);
    // The SDK's own update, called back with the tool as `this` below.
    // eslint-disable-next-line @typescript-eslint/unbound-method
    const update = tool.update;
    tool.update = ((updates: Record<string, unknown>) => {
      const next =
        typeof updates.callback === 'function' ? { ...updates, callback: gated(holder, updates.callback as ToolCallback) } : updates;
      (update as (updates: Record<string, unknown>) => void)(next);
      if (typeof updates.name === 'string') holder.name = updates.name;
      if (updates.name === null) holders.delete(holder);
      refresh();
    }) as RegisteredTool['update'];
    refresh();
  }

  const registerTool = server.registerTool.bind(server) as (
    name: string,
    config: Record<string, unknown>,
    cb: ToolCallback,
  ) => RegisteredTool;
  server.registerTool = ((name: string, config: Record<string, unknown>, cb: ToolCallback) => {
    const holder: Holder = { name, annotations: config?.annotations, outputSchema: config?.outputSchema };
    const tool = registerTool(name, config, gated(holder, cb));
    watch(holder, tool);
    return tool;
  }) as T['registerTool'];

  const toolMethod = server.tool.bind(server) as (...args: unknown[]) => RegisteredTool;
  server.tool = ((...args: unknown[]) => {
    const tool = toolMethod(...args);
    const holder: Holder = { name: String(args[0]), annotations: tool.annotations, outputSchema: tool.outputSchema };
    tool.update({ callback: gated(holder, tool.handler as ToolCallback) as never });
    watch(holder, tool);
    return tool;
  }) as T['tool'];

  const tasks = server.experimental.tasks as { registerToolTask: unknown };
  tasks.registerToolTask = () => {
    throw new AdapterConfigError(
      'mcp',
      `${where}: task-based tools cannot be gated (their result arrives after the call returns, so its outcome could not be recorded); register the tool with registerTool`,
    );
  };

  const connect = server.connect.bind(server);
  server.connect = (async (transport: Transport) => {
    book.assertSomeRead(where, 'this server');
    return connect(transport);
  }) as T['connect'];

  marked[GATED] = true;
  return server;
}
