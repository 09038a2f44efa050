/**
 * What the MCP gate knows of each tool: its name, annotations, the target
 * arguments its input schema names, and whether it declares an
 * `outputSchema`, read defensively from a `tools/list` (a hostile server's
 * list cannot throw here) or from a server's registrations; and the catalog
 * compiled with those, which classifies the calls. The proxy and the
 * in-process server gate each keep one `ToolBook`.
 *
 * Spec: DESIGN.md §4 (MCP annotations: trusted or not), §5.1-§5.4 (targets).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ToolKind } from '../../../machines/safety.types.js';
import type { Classification } from '../../classify/classification.js';
import { compileValidCatalog } from '../../classify/catalog/compile.js';
import type { Catalog, CompiledCatalog, ToolRule } from '../../classify/catalog/index.js';
import { kindFromMcpAnnotations } from '../../classify/catalog/compile.js';
import { unknownPlace } from '../../../machines/safety.targets.js';
import { AdapterConfigError, type ToolClassifier } from '../common.js';
import { isRecord } from '../../util/own.js';

/** How many `tools/list` pages are read at most (a server that pages forever is cut off). */
const MAX_TOOL_PAGES = 1_000;

/** What a target argument holds (a catalog rule's `targets`): a file-system path (or URI), or an id. */
export type TargetArgument = 'path' | 'id';

/** What the gate knows of one tool. */
export interface ToolInfo {
  name: string;
  annotations: Record<string, unknown>;
  hasOutputSchema: boolean;
  /** The arguments that name what a call touches, from the input schema (`targetArguments`); none: the spec's session-wide rule. */
  targets: Record<string, TargetArgument>;
  /** The argument holding a command, code or a query whose output the call chooses (`scriptArguments`); none when absent. */
  script?: ScriptArguments;
}

/**
 * A tool's argument holding a command, code or a query (`scriptArguments`):
 * the tool's output is what that argument chose (`echoes`), so it never
 * verifies the call, and its failure is read only from `isError`.
 */
export interface ScriptArguments {
  /** The argument's name, as the schema spells it. */
  argument: string;
  /** It holds a shell command (`command`, `cmd`, `script`, `shell`): judged by the shell classifier. */
  shell: boolean;
  /** The argument holding the command's working directory (`cwd`, `workdir`, `directory`...), shell only: its base directory, never a target. */
  cwd?: string;
}

/** How many input schema properties are looked at per tool (a hostile schema cannot make the book large). */
const MAX_SCHEMA_PROPERTIES = 64;

/** Argument names (snake_case, lower case) that hold a path or URI. */
const PATH_NAMES = new Set([
  'path',
  'paths',
  'file',
  'files',
  'filename',
  'file_name',
  'filepath',
  'filepaths',
  'uri',
  'uris',
  'source',
  'destination',
  'directory',
  'directories',
  'dir',
  'folder',
]);
/** Name endings (snake_case) of arguments that hold a path or URI: `file_path`, `target_dir`, `resource_uri`... */
const PATH_SUFFIXES = ['_path', '_paths', '_file', '_dir', '_directory', '_folder', '_uri', '_uris'];
/** Argument names that hold what is written or searched for, never where: their description may well mention a file. */
const CONTENT_NAMES = new Set([
  'content',
  'contents',
  'text',
  'body',
  'data',
  'message',
  'pattern',
  'patterns',
  'exclude_patterns',
  'query',
  'prompt',
  'code',
  'command',
  'script',
  'diff',
  'patch',
  'edits',
  'old_text',
  'new_text',
]);
/** Argument names (snake_case) that hold a shell command: the call is judged by the shell classifier. */
const SHELL_NAMES = ['command', 'cmd', 'script', 'shell'];
/** Argument names (snake_case) that hold code or a query: the output is what the call chose (`echoes`). */
const CODE_NAMES = ['code', 'sql', 'query', 'statement'];
/** Argument names (snake_case) of a shell command's working directory. */
const CWD_NAMES = new Set(['cwd', 'workdir', 'work_dir', 'working_dir', 'working_directory', 'directory', 'dir']);
/** A description that says the value is a path, file, directory or URI. */
const PATH_WORDS = /\b(?:paths?|files?|filenames?|directory|directories|folders?|uris?)\b/i;

/** `filePath`, `file-path`, `FILE_PATH` → `file_path`. */
function snakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[-\s]+/g, '_')
    .toLowerCase();
}

/** Whether a JSON schema's `type` admits a value that can name a target: a string, a number (ids), an array of them; unknown types do. */
function mayNameTarget(schema: Record<string, unknown>, type: TargetArgument): boolean {
  const types = Array.isArray(schema.type) ? (schema.type as unknown[]) : schema.type === undefined ? undefined : [schema.type];
  if (types === undefined) return true;
  const scalar = (t: unknown) => t === 'string' || (type === 'id' && (t === 'number' || t === 'integer'));
  if (types.some(scalar)) return true;
  if (!types.includes('array')) return false;
  const items = isRecord(schema.items) ? schema.items : {};
  return items.type === undefined || scalar(items.type) || (Array.isArray(items.type) && (items.type as unknown[]).some(scalar));
}

/**
 * The arguments of a tool that name what a call touches, from its input
 * schema (a JSON schema object; anything else names none), for servers
 * that say only what their tools are (annotations), not where they act:
 * - by name: `id`, `*_id` (and `*Id`, `ids`, `*_ids`) hold an id; `path`,
 *   `paths`, `file`, `uri`, `source`, `destination`, `directory` and names
 *   ending in `_path`, `_file`, `_dir`, `_directory`, `_uri` (or their
 *   camelCase forms) hold a path;
 * - by description: a string argument whose description mentions a path,
 *   file, directory, folder or URI holds a path, unless its name says it
 *   holds content (`content`, `text`, `data`, `pattern`, `query`...).
 * Only arguments whose schema type is a string (a number too, for ids), an
 * array of them, or not given. A read then establishes what it names (a
 * directory: everything under it), and a write is admitted only where the
 * session has read (DESIGN.md §5.3, §5.4); a write that gives none of its
 * target arguments is an unknown place, refused until the user confirms it.
 */
export function targetArguments(inputSchema: unknown): Record<string, TargetArgument> {
  const properties = isRecord(inputSchema) && isRecord(inputSchema.properties) ? inputSchema.properties : {};
  const found: [string, TargetArgument][] = [];
  for (const [name, schema] of Object.entries(properties).slice(0, MAX_SCHEMA_PROPERTIES)) {
    if (typeof name !== 'string' || name.trim() === '' || name.length > 128 || !isRecord(schema)) continue;
    const snake = snakeCase(name.trim());
    let type: TargetArgument | undefined;
    if (snake === 'id' || snake === 'ids' || snake.endsWith('_id') || snake.endsWith('_ids')) type = 'id';
    else if (PATH_NAMES.has(snake) || PATH_SUFFIXES.some((suffix) => snake.endsWith(suffix))) type = 'path';
    else if (!CONTENT_NAMES.has(snake) && typeof schema.description === 'string' && PATH_WORDS.test(schema.description)) type = 'path';
    if (type !== undefined && mayNameTarget(schema, type)) found.push([name, type]);
  }
  return Object.fromEntries(found);
}

/**
 * The argument of a tool holding a command, code or a query, from its input
 * schema (a JSON schema object; anything else has none): a string (or
 * array, or untyped) argument named `command`, `cmd`, `script` or `shell`
 * (a shell command, with its working-directory argument `cwd`, `workdir`,
 * `working_directory`, `directory` or `dir` when there is one), else one
 * named `code`, `sql`, `query` or `statement` (camelCase and other
 * spellings as `targetArguments` reads them). Such a tool's output is what
 * its arguments chose: it never verifies the call (DESIGN.md §5.8).
 */
export function scriptArguments(inputSchema: unknown): ScriptArguments | undefined {
  const properties = isRecord(inputSchema) && isRecord(inputSchema.properties) ? inputSchema.properties : {};
  const byName = new Map<string, string>();
  for (const [name, schema] of Object.entries(properties).slice(0, MAX_SCHEMA_PROPERTIES)) {
    if (typeof name !== 'string' || name.length > 128 || !isRecord(schema)) continue;
    const snake = snakeCase(name.trim());
    const types = Array.isArray(schema.type) ? (schema.type as unknown[]) : schema.type === undefined ? undefined : [schema.type];
    if (!byName.has(snake) && (types === undefined || types.includes('string') || types.includes('array'))) byName.set(snake, name);
  }
  const shell = SHELL_NAMES.find((name) => byName.has(name));
  if (shell !== undefined) {
    const cwd = [...byName.keys()].find((name) => CWD_NAMES.has(name));
    return { argument: byName.get(shell)!, shell: true, ...(cwd === undefined ? {} : { cwd: byName.get(cwd)! }) };
  }
  const code = CODE_NAMES.find((name) => byName.has(name));
  return code === undefined ? undefined : { argument: byName.get(code)!, shell: false };
}

/** The tools of a `tools/list` result, read defensively (a hostile server's list cannot throw here). */
export function toolsOf(result: unknown): ToolInfo[] {
  const tools = isRecord(result) && Array.isArray(result.tools) ? result.tools : [];
  const found: ToolInfo[] = [];
  for (const tool of tools) {
    if (!isRecord(tool) || typeof tool.name !== 'string') continue;
    let targets: Record<string, TargetArgument> = {};
    let script: ScriptArguments | undefined;
    try {
      targets = targetArguments(tool.inputSchema);
      script = scriptArguments(tool.inputSchema);
    } catch {
      // a schema whose getters throw names no target: the spec's session-wide rule for that tool
    }
    found.push({
      name: tool.name,
      annotations: isRecord(tool.annotations) ? tool.annotations : {},
      hasOutputSchema: tool.outputSchema !== undefined && tool.outputSchema !== null,
      targets,
      ...(script === undefined ? {} : { script }),
    });
  }
  return found;
}

/**
 * The tools the gate knows, and the catalog compiled with their annotations
 * and target arguments (recompiled on the next use after a change): the
 * adapters' `ToolClassifier`. A tool the catalog lists is judged by the
 * catalog alone; any other tool by its annotations (trusted or not) and the
 * target arguments of its input schema (`targetArguments`), a shell tool by
 * its command too (`scriptArguments`, `classify`).
 */
export class ToolBook implements ToolClassifier {
  private tools = new Map<string, ToolInfo>();
  private compiledCatalog: CompiledCatalog | null = null;
  /** The shell tools the catalog does not list, by trimmed name (`scriptArguments`): set with the compiled catalog. */
  private shellTools = new Map<string, ToolInfo>();

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

  /**
   * The catalog with a rule for each known tool it does not list: the tool's
   * annotations (trusted as the book is) and its target arguments. A tool
   * the catalog lists by kind (`"read"`, `{ kind }`, `{ annotations }`)
   * without `targets` of its own gets its schema's target arguments too, so
   * that a read a catalog names establishes what it read; other rules
   * (keyed, shell, SQL) are the catalog's alone. A tool not listed with a
   * shell argument (`scriptArguments`) gets a shell rule (its working
   * directory argument no target), raised by its annotations in `classify`;
   * one with a code or query argument its annotations' rule with `echoes`.
   */
  private get compiled(): CompiledCatalog {
    if (this.compiledCatalog === null) {
      const byName = new Map([...this.tools.values()].map((tool) => [tool.name.trim(), tool]));
      const listed = new Set<string>();
      const rules: [string, ToolKind | ToolRule][] = [];
      for (const [name, rule] of Object.entries(this.catalog.tools)) {
        listed.add(name.trim());
        const targets = byName.get(name.trim())?.targets ?? {};
        const derived = Object.keys(targets).length > 0;
        if (derived && typeof rule === 'string') rules.push([name, { kind: rule, targets }]);
        else if (
          derived &&
          typeof rule === 'object' &&
          rule.targets === undefined &&
          (rule.kind !== undefined || rule.annotations !== undefined)
        )
          rules.push([name, { ...rule, targets }]);
        else rules.push([name, rule]);
      }
      const annotated: [string, ToolRule][] = [];
      this.shellTools = new Map();
      for (const tool of this.tools.values()) {
        if (listed.has(tool.name.trim())) continue;
        const script = tool.script;
        // A shell tool's working directory is the command's base directory, never a target.
        const named = Object.entries(tool.targets).filter(([argument]) => !(script?.shell === true && argument === script.cwd));
        const targets = named.length > 0 ? { targets: Object.fromEntries(named) } : {};
        if (script?.shell === true) {
          this.shellTools.set(tool.name.trim(), tool);
          annotated.push([tool.name, { shell: script.argument, ...(script.cwd === undefined ? {} : { cwd: script.cwd }), ...targets }]);
        } else {
          const annotations = tool.annotations as ToolRule['annotations'];
          annotated.push([
            tool.name,
            { annotations, trusted: this.trusted, ...targets, ...(script === undefined ? {} : { echoes: true }) },
          ]);
        }
      }
      // Validated already (the catalog) or built here: not validated again (a hostile server's annotations are read defensively).
      this.compiledCatalog = compileValidCatalog({ ...this.catalog, tools: Object.fromEntries([...annotated, ...rules]) });
    }
    return this.compiledCatalog;
  }

  /** The target arguments of a known tool (`targetArguments`); empty for a tool not known or naming none. */
  targetsOf(name: string): Record<string, TargetArgument> {
    return { ...(this.tools.get(name)?.targets ?? {}) };
  }

  /**
   * The catalog's classification; for a shell tool the catalog does not
   * list (`scriptArguments`), the shell classifier's judgement of its
   * command (the kind floor and the places the command names, relative ones
   * against its working-directory argument) raised by the tool's
   * annotations: annotations that do not make it a read (`readOnlyHint`
   * not true, or not trusted) make every call a write (on the command's
   * targets; none named: an unknown place) and destructive unless a trusted
   * `destructiveHint: false` says otherwise. Annotations never make a
   * command less of a write.
   */
  classify(name: string, args: unknown): Classification {
    const compiled = this.compiled;
    const judged = compiled.classify(name, args);
    const tool = typeof name === 'string' ? this.shellTools.get(name.trim()) : undefined;
    if (tool === undefined || kindFromMcpAnnotations(tool.annotations, { trusted: this.trusted }) !== 'write') return judged;
    let saysSafe = false;
    try {
      saysSafe = this.trusted && tool.annotations.destructiveHint === false;
    } catch {
      // annotations whose getters throw say nothing safe
    }
    const targets =
      judged.targets.length > 0 ? judged.targets : [unknownPlace(`${tool.name.slice(0, 64)} '${tool.script?.argument ?? ''}'`)];
    return {
      ...judged,
      kind: 'write',
      targets,
      destructive: judged.destructive || !saysSafe,
      reason: judged.kind === 'write' ? judged.reason : `mcp: not read-only (${judged.reason ?? judged.kind})`,
    };
  }

  failureMarkers(name: string): readonly string[] {
    return this.compiled.failureMarkers(name);
  }

  isSelfVerifying(name: string): boolean {
    return this.compiled.isSelfVerifying(name);
  }

  /** The catalog's recoverable error codes (`recoveryCodes`, issue 28). */
  get recoveryCodes(): readonly string[] {
    return this.catalog.recoveryCodes ?? [];
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
    const shellTool = this.shellTools.get(name.trim());
    if (shellTool !== undefined) return kindFromMcpAnnotations(shellTool.annotations, { trusted: this.trusted }) === 'read';
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
