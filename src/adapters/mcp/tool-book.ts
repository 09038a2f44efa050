/**
 * What the MCP gate knows of each tool: its name, annotations and whether it
 * declares an `outputSchema`, read defensively from a `tools/list` (a hostile
 * server's list cannot throw here) or from a server's registrations; and the
 * catalog compiled with those annotations, which classifies the calls. The
 * proxy and the in-process server gate each keep one `ToolBook`.
 *
 * Spec: DESIGN.md §4 (MCP annotations: trusted or not).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Classification } from '../../classify/classification.js';
import { compileCatalog, type Catalog, type CompiledCatalog } from '../../classify/catalog/index.js';
import { AdapterConfigError, type ToolClassifier } from '../common.js';
import { isRecord } from '../../util/own.js';

/** How many `tools/list` pages are read at most (a server that pages forever is cut off). */
const MAX_TOOL_PAGES = 1_000;

/** What the gate knows of one tool. */
export interface ToolInfo {
  name: string;
  annotations: Record<string, unknown>;
  hasOutputSchema: boolean;
}

/** The tools of a `tools/list` result, read defensively (a hostile server's list cannot throw here). */
export function toolsOf(result: unknown): ToolInfo[] {
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
export class ToolBook implements ToolClassifier {
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

/** Reads every page of the upstream's `tools/list` (the SDK's default timeout per page). */
export async function listAllTools(upstream: Client): Promise<ToolInfo[]> {
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
