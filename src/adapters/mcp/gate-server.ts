/**
 * Gating an `McpServer` in process (`gateMcpServer`): each tool's callback is
 * wrapped as it is registered, so every call is checked before it runs and
 * its outcome recorded after (`runGated`), as the proxy does.
 *
 * The wrapping is a class (`ServerGate`) because the wrapped callbacks, the
 * patched `update` of each tool and the patched `connect` share one tool book,
 * guard source and set of registered tools; `gateMcpServer` checks the
 * server and is its thin factory.
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants"; DESIGN.md §4 (MCP annotations).
 */
import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolRequestSchema, ErrorCode, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { normalizeObjectSchema } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import { toJsonSchemaCompat } from '@modelcontextprotocol/sdk/server/zod-json-schema-compat.js';
import { builtinCatalogs, parseCatalog } from '../../classify/catalog/index.js';
import { AdapterConfigError } from '../common.js';
import { isRecord } from '../../util/own.js';
import { ANSWER_META_KEY, type AnswerState, type McpGateOptions } from './gate-options.js';
import {
  sessionAnswer,
  callIdOf,
  errorWithAnswer,
  messageOf,
  runGated,
  unknownAnswer,
  withAnswer,
  type ServerExtra,
} from './gated-call.js';
import { guardSource, strictnessOf, type GuardSource } from './guard-source.js';
import { scriptArguments, targetArguments, ToolBook, type ScriptArguments, type TargetArgument } from './tool-book.js';

const WHERE = 'gateMcpServer';

/** A tool registered on a gated `McpServer`. */
interface Holder {
  name: string;
  annotations: unknown;
  inputSchema: unknown;
  outputSchema: unknown;
  tool?: RegisteredTool;
}

/**
 * The target arguments of a registered tool's input schema (a Zod shape or
 * object), and its command, code or query argument (`scriptArguments`), read
 * from the JSON schema the SDK lists for it (`targetArguments`); none when it
 * cannot be converted.
 */
function registeredTargets(inputSchema: unknown): { targets: Record<string, TargetArgument>; script?: ScriptArguments } {
  try {
    const object = normalizeObjectSchema(inputSchema as Parameters<typeof normalizeObjectSchema>[0]);
    if (object === undefined) return { targets: {} };
    const schema = toJsonSchemaCompat(object, { strictUnions: true, pipeStrategy: 'input' });
    const script = scriptArguments(schema);
    return { targets: targetArguments(schema), ...(script === undefined ? {} : { script }) };
  } catch {
    return { targets: {} };
  }
}

type ToolCallback = (...params: unknown[]) => CallToolResult | Promise<CallToolResult>;

/** A low-level request handler, as `Server.setRequestHandler` takes it. */
type CallHandler = (request: unknown, extra: ServerExtra | undefined) => unknown;

const GATED = Symbol.for('pulse-safety-fsm/mcp.gated');

/**
 * Refuses a server that cannot be gated safely.
 * @throws AdapterConfigError when it is no `McpServer`, is already gated, or already has tools.
 */
function assertGatable(server: McpServer): void {
  if (typeof server?.registerTool !== 'function' || typeof server.connect !== 'function') {
    throw new AdapterConfigError('mcp', `${WHERE}: expected an McpServer`);
  }
  if ((server as { [GATED]?: true })[GATED]) throw new AdapterConfigError('mcp', `${WHERE}: this server is already gated`);
  // A defensive look at the SDK's registry (not public API): tools registered before would run ungated.
  const registry = (server as unknown as { _registeredTools?: unknown })._registeredTools;
  if (isRecord(registry) && Object.keys(registry).length > 0) {
    throw new AdapterConfigError(
      'mcp',
      `${WHERE}: tools are already registered (${Object.keys(registry).slice(0, 8).join(', ')}); gate the server before registering its tools, so that none runs ungated`,
    );
  }
}

/** The answer state of the session of `guard()` (which may throw: the state is then `UNKNOWN`). */
async function answerNow(guard: () => Parameters<typeof sessionAnswer>[0]): Promise<AnswerState> {
  try {
    return await sessionAnswer(guard());
  } catch (error) {
    return unknownAnswer(error);
  }
}

/** The gate of one `McpServer`: its tools as registered, and the wrapping of their callbacks. */
class ServerGate {
  private readonly guardFor: GuardSource;
  private readonly book: ToolBook;
  private readonly holders = new Set<Holder>();
  private readonly strict: boolean;

  /**
   * @throws AdapterConfigError when the guard options conflict.
   * @throws CatalogError when the catalog does not validate.
   */
  constructor(private readonly options: McpGateOptions) {
    this.guardFor = guardSource(options, WHERE);
    this.strict = strictnessOf(options, WHERE);
    this.book = new ToolBook(parseCatalog(options.catalog ?? builtinCatalogs.mcp), options.trusted ?? true);
  }

  /** Patches the server's tool registration, its `tools/call` handler, task tools and `connect`. */
  patch(server: McpServer): void {
    this.wrapCallHandler(server);
    this.wrapRegisterTool(server);
    this.wrapTool(server);
    const tasks = server.experimental.tasks as { registerToolTask: unknown };
    tasks.registerToolTask = () => {
      throw new AdapterConfigError(
        'mcp',
        `${WHERE}: task-based tools cannot be gated (their result arrives after the call returns, so its outcome could not be recorded); register the tool with registerTool`,
      );
    };
    const connect = server.connect.bind(server);
    server.connect = (async (transport: Transport) => {
      this.book.assertSomeRead(WHERE, 'this server');
      return connect(transport);
    }) as McpServer['connect'];
  }

  /** The book's tools from the holders: each tool's current annotations and output schema. */
  private refresh(): void {
    this.book.replace(
      [...this.holders].map((holder) => ({
        name: holder.name,
        annotations: isRecord(holder.tool?.annotations ?? holder.annotations)
          ? ((holder.tool?.annotations ?? holder.annotations) as Record<string, unknown>)
          : {},
        hasOutputSchema: (holder.tool?.outputSchema ?? holder.outputSchema) != null,
        ...registeredTargets(holder.tool?.inputSchema ?? holder.inputSchema),
      })),
    );
  }

  /**
   * A tool's callback, gated under the tool's current name. What the
   * callback throws becomes the error result the SDK would make of it (its
   * message, `isError: true`), with the answer state in `_meta`: every result
   * carries it. A URL elicitation request (an `McpError` the SDK passes on as
   * such) is rethrown with the answer state in its `data._meta`.
   */
  private gated(holder: Holder, callback: ToolCallback): ToolCallback {
    return async (...params: unknown[]) => {
      const extra = params[params.length - 1] as ServerExtra | undefined;
      const args = params.length > 1 ? params[0] : undefined;
      const { guard, key } = this.guardFor(extra?.sessionId);
      try {
        return await runGated(
          {
            guard,
            session: key,
            id: () => callIdOf(extra),
            name: holder.name,
            args,
            book: this.book,
            onEvent: this.options.onEvent,
            strictFailedWrites: this.strict,
          },
          async () => callback(...params),
        );
      } catch (error) {
        if ((error as { code?: unknown }).code === ErrorCode.UrlElicitationRequired) throw error;
        const meta = (error as { data?: { _meta?: Record<string, unknown> } }).data?._meta;
        const answer = meta?.[ANSWER_META_KEY] as AnswerState | undefined;
        return withAnswer({ content: [{ type: 'text', text: messageOf(error) }], isError: true }, answer ?? (await answerNow(guard)));
      }
    };
  }

  /**
   * Wraps the `tools/call` handler the `McpServer` installs on its low-level
   * `server` (at its first tool's registration), so that the results it
   * makes itself carry the answer state too: a tool not found or disabled,
   * arguments that do not match the input schema (before the callback), an
   * output that does not match the output schema (after it). A result that
   * has it already (the gated callback's) is left as it is.
   */
  private wrapCallHandler(server: McpServer): void {
    const low = server.server;
    const setRequestHandler = low.setRequestHandler.bind(low) as (schema: unknown, handler: CallHandler) => void;
    low.setRequestHandler = ((schema: unknown, handler: CallHandler) =>
      setRequestHandler(schema, schema === CallToolRequestSchema ? this.answering(handler) : handler)) as typeof low.setRequestHandler;
  }

  private answering(handler: CallHandler): CallHandler {
    return async (request, extra) => {
      const guard = this.guardFor(extra?.sessionId).guard;
      let result: unknown;
      try {
        result = await handler(request, extra);
      } catch (error) {
        throw errorWithAnswer(error, await answerNow(guard));
      }
      if (!isRecord(result)) return result;
      const meta = result._meta;
      if (isRecord(meta) && meta[ANSWER_META_KEY] !== undefined) return result;
      return withAnswer(result as CallToolResult, await answerNow(guard));
    };
  }

  /** Keeps a registered tool gated through its `update` (also used by enable, disable and remove). */
  private watch(holder: Holder, tool: RegisteredTool): void {
    holder.tool = tool;
    this.holders.add(holder);
    // The SDK's own update, called back with the tool as `this` below.
    // eslint-disable-next-line @typescript-eslint/unbound-method
    const update = tool.update;
    tool.update = ((updates: Record<string, unknown>) => {
      const next =
        typeof updates.callback === 'function' ? { ...updates, callback: this.gated(holder, updates.callback as ToolCallback) } : updates;
      (update as (updates: Record<string, unknown>) => void)(next);
      if (typeof updates.name === 'string') holder.name = updates.name;
      if (updates.name === null) this.holders.delete(holder);
      this.refresh();
    }) as RegisteredTool['update'];
    this.refresh();
  }

  private wrapRegisterTool(server: McpServer): void {
    const registerTool = server.registerTool.bind(server) as (
      name: string,
      config: Record<string, unknown>,
      cb: ToolCallback,
    ) => RegisteredTool;
    server.registerTool = ((name: string, config: Record<string, unknown>, cb: ToolCallback) => {
      const holder: Holder = {
        name,
        annotations: config?.annotations,
        inputSchema: config?.inputSchema,
        outputSchema: config?.outputSchema,
      };
      const tool = registerTool(name, config, this.gated(holder, cb));
      this.watch(holder, tool);
      return tool;
    }) as McpServer['registerTool'];
  }

  /** The deprecated `tool()`: its callback is gated through the tool's `update` once registered. */
  private wrapTool(server: McpServer): void {
    const toolMethod = server.tool.bind(server) as (...args: unknown[]) => RegisteredTool;
    server.tool = ((...args: unknown[]) => {
      const tool = toolMethod(...args);
      const holder: Holder = {
        name: String(args[0]),
        annotations: tool.annotations,
        inputSchema: tool.inputSchema,
        outputSchema: tool.outputSchema,
      };
      tool.update({ callback: this.gated(holder, tool.handler as ToolCallback) as never });
      this.watch(holder, tool);
      return tool;
    }) as McpServer['tool'];
  }
}

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
  assertGatable(server);
  new ServerGate(options).patch(server);
  (server as T & { [GATED]?: true })[GATED] = true;
  return server;
}
