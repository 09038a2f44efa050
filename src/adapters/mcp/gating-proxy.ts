/**
 * The gating MCP proxy: a low-level MCP `Server` that stands for the server
 * behind an upstream `Client`, forwards everything a transparent proxy must,
 * and gates `tools/call` (`runGated`). `pulse-safety mcp-proxy`
 * (src/cli/commands/mcp-proxy.ts) runs it over stdio or Streamable HTTP.
 *
 * The wiring is a class (`GatingProxy`) because every handler shares the
 * same few things: the two ends, the forwarding timeout, the tool book, the
 * guard source and the client's readiness; `createGatingProxy` is its thin
 * factory.
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants", "Blocked calls and recovery";
 * DESIGN.md §3.8 (strict failed writes), §4 (MCP annotations).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { DEFAULT_REQUEST_TIMEOUT_MSEC, type RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
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
  type ClientCapabilities,
  type ClientNotification,
  type ClientRequest,
  type ClientResult,
  type Implementation,
  type Progress,
  type ServerCapabilities,
  type ServerNotification,
  type ServerRequest,
  type ServerResult,
} from '@modelcontextprotocol/sdk/types.js';
import { builtinCatalogs, parseCatalog } from '../../classify/catalog/index.js';
import { AdapterConfigError } from '../common.js';
import { isRecord } from '../../util/own.js';
import type { GatingProxyOptions } from './gate-options.js';
import { callIdOf, runGated, type ServerExtra } from './gated-call.js';
import { guardSource, strictnessOf, type GuardSource } from './guard-source.js';
import { listAllTools, toolsOf, ToolBook } from './tool-book.js';

const WHERE = 'createGatingProxy';

/** The longest delay a Node timer accepts: requests from the server to the client wait for their own deadline, not the proxy's. */
const MAX_TIMER_MS = 2_147_483_647;

/** Requests the server may send the client, and the client capability each needs. */
const SERVER_TO_CLIENT = [
  [CreateMessageRequestSchema, 'sampling'],
  [ElicitRequestSchema, 'elicitation'],
  [ListRootsRequestSchema, 'roots'],
] as const;

/** The proxy's wiring between the client-facing `server` and the `upstream` client (see `createGatingProxy`). */
class GatingProxy {
  /** The proxy: the MCP server the client talks to. */
  readonly server: Server;
  private readonly capabilities: ServerCapabilities;
  /** Timeout of each request forwarded upstream on the client's behalf, milliseconds. */
  private readonly timeout: number;
  private readonly guardFor: GuardSource;
  private readonly strict: boolean;
  private readonly book: ToolBook;
  private readonly serverInfo: Implementation;
  /** Resolves when the client has initialized: nothing is sent to the client before. */
  private readonly ready: Promise<void>;
  private markReady: () => void = () => {};

  /**
   * @throws AdapterConfigError when `upstream` is no connected SDK `Client`,
   *   `timeoutMs` is out of range, or the guard options conflict.
   * @throws CatalogError when the catalog does not validate.
   */
  constructor(
    private readonly upstream: Client,
    private readonly options: GatingProxyOptions,
  ) {
    if (typeof upstream?.request !== 'function' || typeof upstream.getServerCapabilities !== 'function') {
      throw new AdapterConfigError('mcp', `${WHERE}: upstream must be an MCP SDK Client`);
    }
    const capabilities = upstream.getServerCapabilities();
    if (capabilities === undefined) {
      throw new AdapterConfigError('mcp', `${WHERE}: the upstream client is not connected; connect it to the MCP server first`);
    }
    const timeout = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MSEC;
    if (typeof timeout !== 'number' || !(timeout > 0) || timeout > MAX_TIMER_MS) {
      throw new AdapterConfigError('mcp', `${WHERE}: timeoutMs must be a positive number of milliseconds up to ${MAX_TIMER_MS}`);
    }
    this.capabilities = capabilities;
    this.timeout = timeout;
    this.guardFor = guardSource(options, WHERE);
    this.strict = strictnessOf(options, WHERE);
    this.book = new ToolBook(parseCatalog(options.catalog ?? builtinCatalogs.mcp), options.trusted === true);
    this.serverInfo = options.serverInfo ?? upstream.getServerVersion() ?? { name: 'pulse-safety-mcp-proxy', version: '0' };

    const { tasks: _tasks, ...advertised } = capabilities;
    const instructions = upstream.getInstructions();
    this.server = new Server(this.serverInfo, { capabilities: advertised, ...(instructions === undefined ? {} : { instructions }) });
    this.ready = new Promise<void>((resolve) => (this.markReady = resolve));
  }

  /** Reports an error of either end on the proxy's `onerror`, as set when it happens. */
  private readonly report = (error: unknown): void => this.server.onerror?.(error instanceof Error ? error : new Error(String(error)));

  /** Installs every handler, in an order where each is in place before anything can need it. */
  wire(): void {
    // Replaces the SDK's own handler, which only calls `oninitialized`: that stays the caller's to set.
    this.server.setNotificationHandler(InitializedNotificationSchema, () => {
      this.markReady();
      this.server.oninitialized?.();
    });
    // `tools/call` is gated whatever the upstream declares (without `tools`, in the fallback handler): never forwarded ungated.
    if (this.capabilities.tools) this.gateTools();
    if (this.capabilities.logging) this.forwardSetLevel();
    this.forwardUnknown();
    this.forwardServerRequests();
    this.closeTogether();
  }

  /**
   * Lists the upstream's tools into the book (last: the handlers are in
   * place when the server, initialized, starts asking, e.g. for roots).
   * @throws AdapterConfigError when no upstream tool can be a read or resolve.
   */
  async learnTools(): Promise<void> {
    if (!this.capabilities.tools) return;
    this.book.replace(await listAllTools(this.upstream));
    this.book.assertSomeRead(WHERE, `the upstream server '${this.serverInfo.name}'`);
  }

  /** Options of a request forwarded upstream on behalf of the client: its cancellation, progress and our timeout. */
  private forwardOptions(params: unknown, extra: ServerExtra): RequestOptions {
    const meta = isRecord(params) ? params._meta : undefined;
    const token = isRecord(meta) ? meta.progressToken : undefined;
    const relay =
      typeof token === 'string' || typeof token === 'number'
        ? {
            onprogress: (progress: Progress) => {
              extra
                .sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken: token } })
                .catch(this.report);
            },
          }
        : {};
    return { signal: extra.signal, timeout: this.timeout, resetTimeoutOnProgress: true, ...relay };
  }

  /** `tools/list` forwarded upstream, its tools noted in the book. */
  private async listTools(params: unknown, extra: ServerExtra): Promise<ServerResult> {
    const result = await this.upstream.request(
      { method: 'tools/list', ...(params === undefined ? {} : { params }) } as ClientRequest,
      ResultSchema,
      this.forwardOptions(params, extra),
    );
    this.book.merge(toolsOf(result));
    return result as ServerResult;
  }

  /**
   * One `tools/call`, gated (`runGated`): checked in its session's guard,
   * forwarded upstream only when admitted, its outcome recorded.
   * @throws McpError (InvalidParams) when the request is no `tools/call` request (nothing is forwarded).
   */
  private async callTool(request: unknown, extra: ServerExtra): Promise<ServerResult> {
    const parsed = CallToolRequestSchema.safeParse(request);
    if (!parsed.success) throw new McpError(ErrorCode.InvalidParams, 'pulse-safety: a malformed tools/call request was not forwarded');
    const checked = parsed.data.params;
    // Forwarded as the client sent them (what the schema does not name, too): the proxy is transparent.
    const params = (request as { params: typeof checked }).params;
    const { guard, key } = this.guardFor(extra.sessionId);
    return runGated(
      {
        guard,
        session: key,
        id: () => callIdOf(extra),
        name: checked.name,
        args: checked.arguments,
        book: this.book,
        onEvent: this.options.onEvent,
        strictFailedWrites: this.strict,
      },
      () => this.upstream.request({ method: 'tools/call', params }, CallToolResultSchema, this.forwardOptions(params, extra)),
    );
  }

  /** `tools/list` forwarded (its tools noted), `tools/call` gated, and a changed tool list read again before the client hears of it. */
  private gateTools(): void {
    const { server, upstream, book } = this;
    server.setRequestHandler(ListToolsRequestSchema, (request, extra) => this.listTools(request.params, extra));
    server.setRequestHandler(CallToolRequestSchema, (request, extra) => this.callTool(request, extra));
    upstream.setNotificationHandler(ToolListChangedNotificationSchema, async (notification) => {
      try {
        book.replace(await listAllTools(upstream));
      } catch (error) {
        this.report(error); // the tools known so far stay; calls of new tools are writes until listed
      }
      await this.ready;
      await server.notification(notification);
    });
  }

  /** `logging/setLevel` forwarded, replacing the SDK's own handler: the upstream server filters its log messages. */
  private forwardSetLevel(): void {
    this.server.setRequestHandler(
      SetLevelRequestSchema,
      async (request, extra) =>
        (await this.upstream.request(
          { method: 'logging/setLevel', params: request.params },
          ResultSchema,
          this.forwardOptions(request.params, extra),
        )) as ServerResult,
    );
  }

  /**
   * Every other request and notification, both ways: what the proxy does not
   * handle, the other end does. Except `tools/call` (and `tools/list`, noted)
   * of an upstream that does not declare `tools`: gated all the same (fail
   * closed: a call of a tool not listed is a write).
   */
  private forwardUnknown(): void {
    const { server, upstream } = this;
    server.fallbackRequestHandler = async (request, extra) => {
      if (request.method === 'tools/call') return this.callTool(request, extra);
      if (request.method === 'tools/list') return this.listTools(request.params, extra);
      return (await upstream.request(
        { method: request.method, ...(request.params === undefined ? {} : { params: request.params }) } as ClientRequest,
        ResultSchema,
        this.forwardOptions(request.params, extra),
      )) as ServerResult;
    };
    server.fallbackNotificationHandler = async (notification) => {
      await upstream.notification(notification as ClientNotification);
    };
    upstream.fallbackNotificationHandler = async (notification) => {
      await this.ready;
      await server.notification(notification as ServerNotification);
    };
  }

  /** Sampling, elicitation and roots requests of the server, passed to the client once it has initialized, if it declared the capability. */
  private forwardServerRequests(): void {
    const { server, upstream } = this;
    for (const [schema, capability] of SERVER_TO_CLIENT) {
      try {
        upstream.setRequestHandler(schema, async (request, extra) => {
          await this.ready;
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
  }

  /** Errors of the upstream reported (unless it has a handler); closing either end closes the other. */
  private closeTogether(): void {
    const { server, upstream } = this;
    upstream.onerror ??= this.report;
    const upstreamOnClose = upstream.onclose;
    upstream.onclose = () => {
      upstreamOnClose?.();
      server.close().catch(this.report);
    };
    server.onclose = () => {
      upstream.close().catch(this.report);
    };
  }
}

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
  const proxy = new GatingProxy(upstream, options);
  proxy.wire();
  await proxy.learnTools();
  return proxy.server;
}
