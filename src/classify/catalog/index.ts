/**
 * Tool-call classification: catalogs as data, compiled into classifiers that
 * never throw and fail closed to `write`.
 *
 * Spec: ASSISTANT_SAFETY.md "Tool kinds"; DESIGN.md §2 (the Pulse catalog),
 * §3.6 (`neutral`), §4 (tau-bench airline tools, MCP annotations).
 */
import { z } from 'zod';
import type { ToolKind } from '../../../machines/safety.types.js';
import { TOOL_KINDS } from '../../../machines/safety.types.js';
import { CatalogError } from '../../errors/index.js';
import pulseCatalog from '../../catalogs/pulse.json' with { type: 'json' };
import tauAirlineCatalog from '../../catalogs/tau-airline.json' with { type: 'json' };
import claudeCodeCatalog from '../../catalogs/claude-code.json' with { type: 'json' };
import geminiCliCatalog from '../../catalogs/gemini-cli.json' with { type: 'json' };
import codexCatalog from '../../catalogs/codex.json' with { type: 'json' };
import mcpCatalog from '../../catalogs/mcp.json' with { type: 'json' };
import isSafeRegex from 'safe-regex2';
import { classifyShellCommand, parseShellTable, shellTableSchema } from '../shell/index.js';
import { classifySql } from '../sql/index.js';
import {
  failClosed,
  idTarget,
  normalizeTargets,
  directoryOf,
  pathTarget,
  type CallClassifier,
  type CallContext,
  type Classification,
} from '../classification.js';
import { own } from '../../util/own.js';
import { deepestIssue } from '../../util/zod-issues.js';

/** Classifies one tool call: name and arguments (object, or a JSON string of one) to a kind. Never throws. */
export type Classifier = (name: string, args?: unknown) => ToolKind;

const kindSchema = z.enum(TOOL_KINDS as [ToolKind, ...ToolKind[]]);
const nameSchema = z.string().trim().min(1, 'must be a non-empty string');

/** Argument values longer than this are never matched against a pattern (they fall through to `fallback`). */
export const MAX_PATTERN_INPUT = 1024;

/**
 * Why a catalog pattern cannot be used, or null when it can: it must compile,
 * and must not be able to take exponential time (safe-regex2's star-height
 * check refuses a repeated group that repeats, such as `(a+)+`).
 */
function patternProblem(source: string): string | null {
  try {
    new RegExp(source, 'u');
  } catch (error) {
    return `not a valid regular expression (${(error as Error).message})`;
  }
  if (!isSafeRegex(source)) {
    return 'the pattern could take exponential time (nested quantifiers); rewrite it without a repeated group that repeats';
  }
  // safe-regex2 checks star height only: a repeated group of alternatives that can match the same text, `(a|a)*`, is
  // exponential too. Refuse every repeated group that holds an alternation (a character class says the same safely).
  if (/\((?:[^()\\]|\\.)*\|(?:[^()\\]|\\.)*\)(?:[*+]|\{\d*,)/.test(source)) {
    return 'the pattern could take exponential time (a repeated group of alternatives); use a character class or an unrepeated group';
  }
  return null;
}

/** Patterns to kinds, each pattern checked by `patternProblem` (the issue's path names the pattern). */
const patternsSchema = z.record(z.string(), kindSchema).superRefine((patterns, ctx) => {
  for (const source of Object.keys(patterns)) {
    const problem = patternProblem(source);
    if (problem !== null) ctx.addIssue({ code: 'custom', path: [source], message: problem });
  }
});

/** MCP tool annotations (MCP spec, "Tool annotations"); only the hints the gate reads are typed. */
const annotationsSchema = z.looseObject({
  readOnlyHint: z.boolean().optional(),
  destructiveHint: z.boolean().optional(),
  idempotentHint: z.boolean().optional(),
  openWorldHint: z.boolean().optional(),
  title: z.string().optional(),
});

const RULE_KEYS = ['kind', 'argument', 'shell', 'sql', 'annotations'] as const;

/**
 * One tool's rule in object form (catalog format 2). Exactly one of `kind`,
 * `argument` (with `cases`, `patterns`, `fallback`), `shell`, `sql` or
 * `annotations` says how its kind is found; the rest add to it.
 */
const toolRuleSchema = z
  .strictObject({
    description: z.string().optional(),
    kind: kindSchema.optional().describe('A static kind.'),
    argument: nameSchema.optional().describe('Keyed: the argument whose value selects the kind.'),
    cases: z.record(z.string(), kindSchema).optional().describe('Keyed: argument value (trimmed, case-insensitive) to kind.'),
    patterns: patternsSchema
      .optional()
      .describe('Keyed: regular expressions (anchored to the whole value, case-insensitive) to kind, tried in order after `cases`.'),
    fallback: kindSchema.optional().describe('Keyed: the kind when no case or pattern matches; default `write`.'),
    shell: nameSchema.optional().describe('The argument holding a shell command (a script string, or an argv array).'),
    sql: nameSchema.optional().describe('The argument holding SQL.'),
    dialect: z.enum(['postgres', 'sqlite']).optional().describe('The SQL dialect; default `postgres`.'),
    annotations: annotationsSchema.optional().describe('MCP annotations the tool declares.'),
    trusted: z.boolean().optional().describe('Trust the annotations (a read only when trusted and `readOnlyHint: true`); default false.'),
    targets: z
      .record(nameSchema, z.enum(['path', 'id']))
      .optional()
      .describe('Argument name to the kind of target it holds: a file-system `path`, or an `id`.'),
    cwd: nameSchema.optional().describe("The argument holding the call's working directory (relative paths are made absolute against it)."),
    destructive: z.boolean().optional().describe('A write of this tool is destructive (DESIGN.md §5.6).'),
    selfVerifying: z
      .boolean()
      .optional()
      .describe("The tool's successful result reports the resulting state: it verifies itself (DESIGN.md §5.8)."),
    echoes: z
      .boolean()
      .optional()
      .describe(
        "The tool's result repeats what its arguments chose (an edit tool's snippet of the file it wrote): it is never read as the write verifying itself (shell and SQL tools always echo).",
      ),
    failure: z.array(nameSchema).optional().describe("Failure markers (result text prefixes) for this tool, added to the catalog's."),
  })
  .superRefine((rule, ctx) => {
    const given = RULE_KEYS.filter((key) => rule[key] !== undefined);
    const keyedParts = (['cases', 'patterns', 'fallback'] as const).filter((key) => rule[key] !== undefined);
    if (given.length === 0 && keyedParts.length > 0) {
      ctx.addIssue({ code: 'custom', path: ['argument'], message: `a rule with ${keyedParts.join(', ')} needs "argument"` });
      return;
    }
    if (given.length !== 1) {
      ctx.addIssue({
        code: 'custom',
        message:
          given.length === 0
            ? `needs exactly one of ${RULE_KEYS.join(', ')} (an unknown rule type?)`
            : `has ${given.join(' and ')}: a tool takes exactly one of ${RULE_KEYS.join(', ')}`,
      });
    }
    const misplaced = (keys: readonly (keyof typeof rule)[], owner: keyof typeof rule): void => {
      for (const key of keys) {
        if (rule[key] !== undefined && rule[owner] === undefined) {
          ctx.addIssue({ code: 'custom', path: [key], message: `only applies with "${owner}"` });
        }
      }
    };
    misplaced(['cases', 'patterns', 'fallback'], 'argument');
    misplaced(['dialect'], 'sql');
    misplaced(['trusted'], 'annotations');
    if (rule.argument !== undefined && rule.cases === undefined && rule.patterns === undefined) {
      ctx.addIssue({ code: 'custom', path: ['cases'], message: 'a keyed rule needs "cases" or "patterns"' });
    }
  });

/** The JSON schema of a catalog, as a zod schema (validated on load). Format 2: see `docs/catalogs.md` and `schema/catalog.schema.json`. */
export const catalogSchema = z.strictObject({
  $schema: z.string().optional().describe('The JSON Schema an editor completes the file with; ignored.'),
  name: nameSchema,
  description: z.string().optional(),
  source: z.string().optional().describe('Where the tool list comes from (URLs, repository paths, versions).'),
  failure: z
    .array(nameSchema)
    .optional()
    .describe('Failure markers (result text prefixes, e.g. `fatal:`) added to the defaults for every tool (DESIGN.md §5.7).'),
  commands: shellTableSchema
    .optional()
    .describe('The read-only shell command table for `shell` rules; default the shipped one (`src/catalogs/shell-commands.json`).'),
  tools: z
    .record(z.string(), z.union([kindSchema, toolRuleSchema]))
    .describe('Tool name (trimmed, case-sensitive) to a static kind or a rule.'),
  /**
   * How to judge a tool the catalog does not list. Absent: every unknown tool
   * is a write. Present: the named arguments' string values are split into
   * words; a write word anywhere makes a write, else a read word makes a read,
   * else a write. A tool name that looks like a listed one (the same but for
   * letter case or Unicode compatibility forms), or any name or value that is
   * not plain printable ASCII, is a write without looking at the words.
   */
  fallback: z
    .strictObject({
      arguments: z.array(nameSchema).min(1),
      writeWords: z.array(nameSchema),
      readWords: z.array(nameSchema),
    })
    .optional(),
});

/**
 * A classification catalog (the JSON shape of `src/catalogs/*.json`, format 2):
 * `{ name, description?, source?, failure?, commands?, tools: { [tool]: kind | rule }, fallback? }`,
 * a rule being `{ kind } | { argument, cases?, patterns?, fallback? } | { shell } | { sql, dialect? } | { annotations, trusted? }`
 * plus `targets`, `cwd`, `destructive`, `selfVerifying`, `failure`, `description`.
 */
export type Catalog = z.infer<typeof catalogSchema>;

/** One tool's rule in object form. */
export type ToolRule = z.infer<typeof toolRuleSchema>;

/** The catalogs shipped with the package, by name; `pulse` is the default. */
export const builtinCatalogs = {
  pulse: pulseCatalog as Catalog,
  'tau-airline': tauAirlineCatalog as Catalog,
  'claude-code': claudeCodeCatalog as Catalog,
  'gemini-cli': geminiCliCatalog as Catalog,
  codex: codexCatalog as Catalog,
  mcp: mcpCatalog as Catalog,
} as const satisfies Readonly<Record<string, Catalog>>;

/** The names of the shipped catalogs. */
export type BuiltinCatalogName = keyof typeof builtinCatalogs;

/** Arguments as a plain object: an object as is, a JSON string parsed, anything else none. */
function argumentsObject(args: unknown): object | null {
  let value = args;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return null;
    }
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : null;
}

/** A string argument's value, trimmed and lower-cased; null when missing or not a string. */
function argumentValue(args: object | null, name: string): string | null {
  if (args === null) return null;
  const value = own(args, name);
  return typeof value === 'string' ? value.trim().toLowerCase() : null;
}

/**
 * Validates a catalog (any JSON value) and returns it typed.
 *
 * @throws CatalogError naming the catalog (and `source`, e.g. a file path)
 *   and the first bad entry's path (e.g. `tools.Bash.patterns.(a+)+`: the
 *   pattern could take exponential time), or a name or case value listed twice.
 */
export function parseCatalog(input: unknown, source?: string): Catalog {
  const name = typeof input === 'object' && input !== null ? own(input, 'name') : undefined;
  const where = source ?? (typeof name === 'string' ? `'${name}'` : '(unnamed)');
  const result = catalogSchema.safeParse(input);
  if (!result.success) {
    const issue = deepestIssue(result.error.issues[0]!);
    const path = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
    throw new CatalogError(`catalog ${where}: ${path.join('.') || '(root)'}: ${issue.message}`, path);
  }
  // The table's own checks beyond its schema (aliases resolve, options used as values are value options).
  if (result.data.commands !== undefined) parseShellTable(result.data.commands, `of catalog ${where} (commands)`);
  const names = new Set<string>();
  for (const [tool, rule] of Object.entries(result.data.tools)) {
    if (names.has(tool.trim())) {
      throw new CatalogError(`catalog ${where}: tools.${tool}: the tool is listed twice (names are trimmed)`, ['tools', tool]);
    }
    names.add(tool.trim());
    if (typeof rule === 'string' || rule.cases === undefined) continue;
    const seen = new Set<string>();
    for (const value of Object.keys(rule.cases)) {
      const normal = value.trim().toLowerCase();
      if (seen.has(normal)) {
        throw new CatalogError(
          `catalog ${where}: tools.${tool}.cases.${value}: the value is listed twice (values are trimmed and case-insensitive)`,
          ['tools', tool, 'cases', value],
        );
      }
      seen.add(normal);
    }
  }
  return result.data;
}

/** How one listed tool is judged, compiled from its rule. */
interface CompiledTool {
  /** The classification from the arguments, before the tool's own targets are added. */
  judge(args: object | null, cwd: string | undefined): Classification;
  targets: readonly (readonly [argument: string, type: 'path' | 'id'])[];
  cwd: string | undefined;
  destructive: boolean;
  selfVerifying: boolean;
  failure: readonly string[];
  /** A shell or SQL tool: its result is output its arguments choose (`Classification.echoes`). */
  echoes: boolean;
}

/** Options of `compileCatalog` / `createCallClassifier`. */
export interface CompileOptions {
  /**
   * MCP annotations of tools the catalog does not list, by tool name (e.g.
   * from a server's `tools/list`); the catalog's own entries win.
   */
  annotations?: Readonly<Record<string, unknown>>;
  /** Trust those annotations (DESIGN.md §4); default false: every such tool is a write. */
  trusted?: boolean;
}

/**
 * A compiled catalog: the full classifier plus what the audit and the
 * adapters need to know about each tool. Every method is total (never throws).
 */
export interface CompiledCatalog {
  /** The catalog's name. */
  readonly name: string;
  /** The full classification of a call (DESIGN.md §5.1). */
  readonly classify: CallClassifier;
  /** The kind alone (the spec's `ClassifyToolCall`). */
  readonly kindOf: Classifier;
  /** The catalog lists this tool (trimmed name), or has annotations for it. */
  knows(name: string): boolean;
  /** The tool is marked `selfVerifying` (DESIGN.md §5.8). */
  isSelfVerifying(name: string): boolean;
  /** The failure markers a result of this tool is checked against, beyond the defaults: the catalog's, then the tool's. */
  failureMarkers(name: string): readonly string[];
}

/** Printable ASCII without spaces: the tool names the fallback is willing to judge. */
const PLAIN_ASCII = /^[\x21-\x7e]+$/;
/** Printable ASCII: the argument values the fallback is willing to judge by their words. */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** A tool name in compatibility form and lower case, to spot look-alikes of listed names. */
function foldName(name: string): string {
  return name.normalize('NFKC').toLowerCase();
}

/** Words of an argument value: split on anything but letters and digits. */
function wordsOf(value: string): string[] {
  return value.split(/[^\p{L}\p{N}]+/u).filter((word) => word !== '');
}

function ofKind(kind: ToolKind): Classification {
  return { kind, targets: [], destructive: false };
}

/**
 * The kind an MCP tool's annotations give (DESIGN.md §4): `read` only when
 * trusted and `readOnlyHint: true`; otherwise a write, destructive unless a
 * trusted server says `destructiveHint: false` (the hint defaults to true).
 */
function fromAnnotations(annotations: unknown, trusted: boolean): Classification {
  const kind = kindFromMcpAnnotations(annotations, { trusted });
  if (kind !== 'write') return ofKind(kind);
  const saysSafe = trusted && typeof annotations === 'object' && annotations !== null && own(annotations, 'destructiveHint') === false;
  return { kind: 'write', targets: [], destructive: !saysSafe, reason: trusted ? 'mcp: not read-only' : 'mcp: untrusted server' };
}

function compileTool(rule: ToolKind | ToolRule, catalog: Catalog): CompiledTool {
  const base = {
    targets: [] as [string, 'path' | 'id'][],
    cwd: undefined,
    destructive: false,
    selfVerifying: false,
    failure: [],
    echoes: false,
  };
  if (typeof rule === 'string') return { ...base, judge: () => ofKind(rule) };
  const tool = {
    targets: Object.entries(rule.targets ?? {}),
    cwd: rule.cwd,
    destructive: rule.destructive === true,
    selfVerifying: rule.selfVerifying === true,
    failure: rule.failure ?? [],
    echoes: rule.shell !== undefined || rule.sql !== undefined || rule.echoes === true,
  };
  if (rule.kind !== undefined) {
    const kind = rule.kind;
    return { ...tool, judge: () => ofKind(kind) };
  }
  if (rule.argument !== undefined) {
    const argument = rule.argument;
    const cases = new Map(Object.entries(rule.cases ?? {}).map(([value, kind]) => [value.trim().toLowerCase(), kind]));
    const patterns = Object.entries(rule.patterns ?? {}).map(([source, kind]) => [new RegExp(`^(?:${source})$`, 'iu'), kind] as const);
    const fallback = rule.fallback ?? 'write';
    return {
      ...tool,
      judge: (args) => {
        const value = argumentValue(args, argument);
        if (value === null) return { ...ofKind('write'), reason: `argument '${argument}' is missing or not a string` };
        const kind =
          cases.get(value) ??
          (value.length <= MAX_PATTERN_INPUT ? patterns.find(([pattern]) => pattern.test(value))?.[1] : undefined) ??
          fallback;
        return ofKind(kind);
      },
    };
  }
  if (rule.shell !== undefined) {
    const argument = rule.shell;
    const table = catalog.commands;
    return {
      ...tool,
      judge: (args, cwd) => {
        const command = args === null ? undefined : own(args, argument);
        if (command === undefined) return failClosed(`shell: argument '${argument}' is missing`);
        return classifyShellCommand(command, { ...(table ? { table } : {}), ...(cwd ? { cwd } : {}) });
      },
    };
  }
  if (rule.sql !== undefined) {
    const argument = rule.sql;
    const dialect = rule.dialect ?? 'postgres';
    return {
      ...tool,
      judge: (args) => classifySql(args === null ? undefined : own(args, argument), { dialect }),
    };
  }
  const fromRule = fromAnnotations(rule.annotations, rule.trusted === true);
  return { ...tool, judge: () => fromRule };
}

/** The targets a tool's `targets` arguments name: strings, or arrays of strings (several targets). */
function argumentTargets(tool: CompiledTool, args: object | null, cwd: string | undefined): string[] {
  if (args === null) return [];
  const found: (string | null)[] = [];
  for (const [argument, type] of tool.targets) {
    const value = own(args, argument);
    const values = Array.isArray(value) ? value : [value];
    for (const item of values) {
      if (typeof item !== 'string' || item.trim() === '') continue;
      found.push(type === 'path' ? pathTarget(item.trim(), cwd) : idTarget(argument, item));
    }
  }
  return found.filter((target): target is string => target !== null);
}

/**
 * Compiles a catalog (DESIGN.md §2, §5): tool names are trimmed and
 * case-sensitive; argument values trimmed and case-insensitive; a keyed tool
 * whose argument is missing or not a string is a `write`, one whose value
 * matches no case or pattern takes the rule's `fallback` (default `write`);
 * a shell or SQL tool is judged by parsing its command (src/shell.ts,
 * src/sql.ts); an MCP tool by its annotations; an unknown tool follows the
 * catalog's word fallback, else is a `write`. Targets are the tool's
 * `targets` arguments (paths made absolute against its `cwd` argument) plus
 * what the command names. A write is destructive when the rule, the command
 * or the MCP annotations say so.
 *
 * @param catalog a `Catalog` object or any JSON value to validate as one.
 * @throws CatalogError when the catalog does not validate (at compile time only).
 */
export function compileCatalog(catalog: unknown, options: CompileOptions = {}): CompiledCatalog {
  const parsed = parseCatalog(catalog);
  const tools = new Map<string, CompiledTool>();
  for (const [name, rule] of Object.entries(parsed.tools)) tools.set(name.trim(), compileTool(rule, parsed));
  const annotated = new Map<string, CompiledTool>();
  for (const [name, annotations] of Object.entries(options.annotations ?? {})) {
    if (tools.has(name.trim())) continue; // the catalog overrides the server
    annotated.set(
      name.trim(),
      compileTool({ annotations: annotations as ToolRule['annotations'], trusted: options.trusted === true }, parsed),
    );
  }
  const fallback = parsed.fallback && {
    /** Listed names folded to compatibility form and lower case: an unknown name equal to one impersonates it. */
    impersonated: new Set([...tools.keys()].map(foldName)),
    arguments: parsed.fallback.arguments,
    writeWords: new Set(parsed.fallback.writeWords.map((w) => w.toLowerCase())),
    readWords: new Set(parsed.fallback.readWords.map((w) => w.toLowerCase())),
  };
  const catalogFailure = parsed.failure ?? [];

  /** An unknown tool by the catalog's word fallback (DESIGN.md §2). */
  function byWords(tool: string, argsObject: object | null): ToolKind {
    if (fallback === undefined) return 'write';
    if (!PLAIN_ASCII.test(tool) || fallback.impersonated.has(foldName(tool))) return 'write';
    const values = fallback.arguments.map((argument) => argumentValue(argsObject, argument));
    // A look-alike value (full-width letters, homoglyphs) could hide a write word: fail closed.
    if (values.some((value) => value !== null && !PRINTABLE_ASCII.test(value))) return 'write';
    const words = values.flatMap((value) => (value === null ? [] : wordsOf(value)));
    if (words.some((word) => fallback.writeWords.has(word))) return 'write';
    if (words.some((word) => fallback.readWords.has(word))) return 'read';
    return 'write';
  }

  function lookup(name: unknown): CompiledTool | undefined {
    const tool = typeof name === 'string' ? name.trim() : '';
    return tools.get(tool) ?? annotated.get(tool);
  }

  function judge(name: string, args: unknown, context: CallContext | undefined): Classification {
    const tool = typeof name === 'string' ? name.trim() : '';
    const compiled = lookup(tool);
    const argsObject = argumentsObject(args);
    if (compiled === undefined) {
      const kind = byWords(tool, argsObject);
      return kind === 'write' ? failClosed(`'${tool.slice(0, 64)}' is not in catalog '${parsed.name}'`) : ofKind(kind);
    }
    const cwdValue = compiled.cwd !== undefined && argsObject !== null ? own(argsObject, compiled.cwd) : undefined;
    const given = typeof cwdValue === 'string' && cwdValue.trim() !== '' ? cwdValue.trim() : context?.cwd;
    const cwd = typeof given === 'string' && given !== '' ? (directoryOf(given) ?? undefined) : undefined;
    const judged = compiled.judge(argsObject, cwd);
    const targets = normalizeTargets([...judged.targets, ...argumentTargets(compiled, argsObject, cwd)]);
    const destructive = judged.kind === 'write' && (judged.destructive || compiled.destructive);
    return {
      kind: judged.kind,
      targets,
      destructive,
      ...(judged.reason === undefined ? {} : { reason: judged.reason }),
      ...(compiled.echoes ? { echoes: true as const } : {}),
    };
  }

  const classify: CallClassifier = (name, args, context) => {
    try {
      return judge(name, args, context);
    } catch {
      return failClosed('the call could not be read'); // args whose getters or proxy traps throw fail closed
    }
  };
  return {
    name: parsed.name,
    classify,
    kindOf: (name, args) => classify(name, args).kind,
    knows: (name) => lookup(name) !== undefined,
    isSelfVerifying: (name) => lookup(name)?.selfVerifying === true,
    failureMarkers: (name) => [...catalogFailure, ...(lookup(name)?.failure ?? [])],
  };
}

/**
 * Builds the full classifier of a catalog: `(name, args) => { kind, targets,
 * destructive }` (DESIGN.md §5.1). Never throws once built.
 *
 * @throws CatalogError when the catalog does not validate (at build time only).
 */
export function createCallClassifier(catalog: unknown, options: CompileOptions = {}): CallClassifier {
  return compileCatalog(catalog, options).classify;
}

/**
 * Builds the kind-only classifier of a catalog (DESIGN.md §2), as before
 * catalog format 2: the kind of `createCallClassifier`'s classification.
 * The classifier never throws, whatever `name` and `args` are.
 *
 * @param catalog a `Catalog` object or any JSON value to validate as one.
 * @throws CatalogError when the catalog does not validate (at build time only).
 */
export function createClassifier(catalog: unknown): Classifier {
  return compileCatalog(catalog).kindOf;
}

/** The compiled default Pulse catalog. */
const pulse = compileCatalog(builtinCatalogs.pulse);

/**
 * Classifies a tool call with the Pulse catalog (DESIGN.md §2), the Go
 * original's `ClassifyToolCall`. Never throws; unknown input is a `write`.
 *
 * @param name tool name (trimmed, case-sensitive).
 * @param args the call's arguments: an object, or its JSON string.
 */
export function classifyToolCall(name: string, args?: unknown): ToolKind {
  return pulse.kindOf(name, args);
}

/**
 * Classifies a tool call fully with the Pulse catalog (DESIGN.md §5.1):
 * `{ kind, targets, destructive }`. Never throws; unknown input is a `write`.
 */
export function classifyCall(name: string, args?: unknown): Classification {
  return pulse.classify(name, args);
}

/**
 * The kind of an MCP tool from its annotations (DESIGN.md §4): `read` only
 * when the server is trusted and the tool says `readOnlyHint: true`; anything
 * else (untrusted server, missing or false hint, malformed annotations) is a
 * `write`. Never throws.
 */
export function kindFromMcpAnnotations(annotations: unknown, options: { trusted: boolean }): ToolKind {
  if (options?.trusted !== true || typeof annotations !== 'object' || annotations === null) return 'write';
  try {
    return own(annotations, 'readOnlyHint') === true ? 'read' : 'write';
  } catch {
    return 'write';
  }
}

/** What `pickCatalog` chose, and how well it fits. */
export interface CatalogChoice {
  name: BuiltinCatalogName;
  /** Distinct tool names of the input the chosen catalog lists. */
  known: number;
  /** Distinct tool names in the input. */
  total: number;
}

/**
 * `--catalog auto`: the shipped catalog that lists the most distinct tool
 * names of a transcript (ties go to the earlier in `builtinCatalogs`' order,
 * `pulse` first; no names at all gives `pulse`).
 */
export function pickCatalog(toolNames: Iterable<string>): CatalogChoice {
  const names = new Set([...toolNames].map((name) => name.trim()));
  let best: CatalogChoice = { name: 'pulse', known: -1, total: names.size };
  for (const [name, catalog] of Object.entries(builtinCatalogs) as [BuiltinCatalogName, Catalog][]) {
    const listed = new Set(Object.keys(catalog.tools).map((tool) => tool.trim()));
    const known = [...names].filter((tool) => listed.has(tool)).length;
    if (known > best.known) best = { name, known, total: names.size };
  }
  return best;
}

/**
 * The catalog format as a JSON Schema (draft 2020-12), generated from
 * `catalogSchema`, for editors to complete and check catalog files
 * (`"$schema": "./catalog.schema.json"`). The shipped copy is
 * `src/catalogs/catalog.schema.json` (`pulse-safety catalog schema` prints
 * it). Rules a JSON Schema cannot say (exactly one rule type per tool, safe
 * patterns, names listed once) are checked on load by `parseCatalog`.
 */
export function catalogJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(catalogSchema, { io: 'input', unrepresentable: 'any' }),
    title: 'pulse-safety-fsm tool catalog',
  };
}
