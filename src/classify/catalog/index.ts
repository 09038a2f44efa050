/**
 * Tool-call classification: catalogs as data, compiled into classifiers that
 * never throw and fail closed to `write`. This module is the surface: the
 * shipped catalogs, the classifiers built from a catalog or from the Pulse
 * catalog, and `--catalog auto`'s choice; the format lives in `schema.ts`,
 * the compiler in `compile.ts`.
 *
 * Spec: ASSISTANT_SAFETY.md "Tool kinds"; DESIGN.md §2 (the Pulse catalog),
 * §3.6 (`neutral`), §4 (tau-bench airline tools, MCP annotations).
 */
import type { ToolKind } from '../../../machines/safety.types.js';
import pulseCatalog from '../../catalogs/pulse.json' with { type: 'json' };
import tauAirlineCatalog from '../../catalogs/tau-airline.json' with { type: 'json' };
import claudeCodeCatalog from '../../catalogs/claude-code.json' with { type: 'json' };
import geminiCliCatalog from '../../catalogs/gemini-cli.json' with { type: 'json' };
import codexCatalog from '../../catalogs/codex.json' with { type: 'json' };
import mcpCatalog from '../../catalogs/mcp.json' with { type: 'json' };
import cursorCatalog from '../../catalogs/cursor.json' with { type: 'json' };
import copilotCatalog from '../../catalogs/copilot.json' with { type: 'json' };
import opencodeCatalog from '../../catalogs/opencode.json' with { type: 'json' };
import qwenCodeCatalog from '../../catalogs/qwen-code.json' with { type: 'json' };
import kiroCatalog from '../../catalogs/kiro.json' with { type: 'json' };
import type { CallClassifier, Classification } from '../classification.js';
import { compileCatalog, compileValidCatalog, compiledCatalogOf, type CompileOptions, type CompiledCatalog } from './compile.js';
import type { Catalog } from './schema.js';

export { catalogSchema, parseCatalog, catalogJsonSchema, type Catalog, type ToolRule } from './schema.js';
export { compileCatalog, kindFromMcpAnnotations, type Classifier, type CompileOptions, type CompiledCatalog } from './compile.js';

/** The catalogs shipped with the package, by name; `pulse` is the default. */
export const builtinCatalogs = {
  pulse: pulseCatalog as Catalog,
  'tau-airline': tauAirlineCatalog as Catalog,
  'claude-code': claudeCodeCatalog as Catalog,
  'gemini-cli': geminiCliCatalog as Catalog,
  codex: codexCatalog as Catalog,
  mcp: mcpCatalog as Catalog,
  cursor: cursorCatalog as Catalog,
  copilot: copilotCatalog as Catalog,
  opencode: opencodeCatalog as Catalog,
  'qwen-code': qwenCodeCatalog as Catalog,
  kiro: kiroCatalog as Catalog,
} as const satisfies Readonly<Record<string, Catalog>>;

/** The names of the shipped catalogs. */
export type BuiltinCatalogName = keyof typeof builtinCatalogs;

/**
 * A shipped catalog compiled without validating it again (`compileValidCatalog`):
 * the shipped catalogs are valid as shipped (the tests parse each one and
 * compare). For a process that runs no code of a user's that could change
 * them, such as a coding agent's hook, where validation would cost more than
 * the call (issue 25 item 7); elsewhere `compileCatalog` does the same work
 * and validates.
 */
export function compileShippedCatalog(name: BuiltinCatalogName, options: CompileOptions = {}): CompiledCatalog {
  return compileValidCatalog(builtinCatalogs[name], options);
}

/**
 * Builds the classifier of a catalog: `(name, args, context?) => { kind,
 * targets, destructive, reason? }` (DESIGN.md §5.1), what a session guard's
 * `classify` option takes: the catalog's kinds and the targets its rules
 * name. Never throws once built; `.kind` of its answer is the kind alone.
 *
 * @param catalog a `Catalog` object or any JSON value to validate as one.
 * @param options MCP annotations of unlisted tools, and whether to trust them.
 * @throws CatalogError when the catalog does not validate (at build time only).
 */
export function createCallClassifier(catalog: unknown, options: CompileOptions = {}): CallClassifier {
  return compileCatalog(catalog, options).classify;
}

/** The compiled default Pulse catalog, compiled on first use (a process that never uses it does not pay for it). */
let pulseCompiled: CompiledCatalog | undefined;

/** The compiled default Pulse catalog (`pulseCompiled`). */
function pulse(): CompiledCatalog {
  return (pulseCompiled ??= compileCatalog(builtinCatalogs.pulse));
}

/**
 * Classifies a tool call with the Pulse catalog (DESIGN.md §2), the Go
 * original's `ClassifyToolCall`. Never throws; unknown input is a `write`.
 *
 * @param name tool name (trimmed, case-sensitive).
 * @param args the call's arguments: an object, or its JSON string.
 */
export function classifyToolCall(name: string, args?: unknown): ToolKind {
  return pulse().kindOf(name, args);
}

/**
 * The Pulse catalog's recoverable error codes (`recoveryCodes`, issue 28):
 * `STRICT_RESOLUTION`. The session guard's default `recoveryCodes`.
 */
export function pulseRecoveryCodes(): readonly string[] {
  return pulse().recoveryCodes;
}

/**
 * Classifies a tool call fully with the Pulse catalog (DESIGN.md §5.1):
 * `{ kind, targets, destructive }`. Never throws; unknown input is a `write`.
 */
export function classifyCall(name: string, args?: unknown): Classification {
  return pulse().classify(name, args);
}

/**
 * The compiled catalog behind a session guard's classifier: the Pulse
 * catalog for `classifyCall` (the guard's default), the catalog of a
 * classifier `createCallClassifier` or `compileCatalog(...).classify` made;
 * undefined for any other classifier. Never throws.
 */
export function catalogOfClassifier(classify: unknown): CompiledCatalog | undefined {
  return classify === classifyCall ? pulse() : compiledCatalogOf(classify);
}

/** What `pickCatalog` chose, and how well it fits. */
export interface CatalogChoice<N extends string = BuiltinCatalogName> {
  name: N;
  /** Distinct tool names of the input the chosen catalog lists. */
  known: number;
  /** Distinct tool names in the input. */
  total: number;
  /** The other shipped catalogs that list as many of the names (a tie the strictest won); empty when none. */
  tiedWith: N[];
}

/**
 * How many of the names a catalog may let through as something other than a
 * write: the ones it lists as not writes by name alone, and, when it has a
 * catalog-wide `fallback` (which admits unlisted tools by the words of their
 * arguments), every name it does not list. Fewer is stricter.
 */
function permissiveness(catalog: Catalog, names: Set<string>): number {
  const compiled = compileCatalog(catalog);
  const listed = new Set(Object.keys(catalog.tools).map((tool) => tool.trim()));
  return [...names].filter((tool) => (listed.has(tool) ? compiled.kindOf(tool, {}) !== 'write' : catalog.fallback !== undefined)).length;
}

/**
 * `--catalog auto`: the shipped catalog that lists the most distinct tool
 * names of a transcript. On a tie the strictest candidate wins, the one that
 * may admit the fewest of the names (`permissiveness`: listed as no write,
 * or unlisted under a catalog-wide `fallback`), then the
 * earlier in `builtinCatalogs`' order, `pulse` first), and `tiedWith` names
 * the others; no names at all gives `pulse`. `candidates` (by name, in
 * order of preference on a full tie) are the shipped catalogs by default;
 * the first of them is the answer when none knows any name.
 *
 * @throws CatalogError when a candidate does not validate (only on a tie, where candidates are compiled).
 */
export function pickCatalog<N extends string = BuiltinCatalogName>(
  toolNames: Iterable<string>,
  candidates: Readonly<Record<N, Catalog>> = builtinCatalogs as unknown as Record<N, Catalog>,
): CatalogChoice<N> {
  const names = new Set([...toolNames].map((name) => name.trim()));
  const entries = Object.entries(candidates) as [N, Catalog][];
  const counts = entries.map(([name, catalog]) => {
    const listed = new Set(Object.keys(catalog.tools).map((tool) => tool.trim()));
    return { name, known: [...names].filter((tool) => listed.has(tool)).length };
  });
  const most = Math.max(...counts.map((c) => c.known));
  const tied = counts.filter((c) => c.known === most).map((c) => c.name);
  if (names.size === 0 || most === 0) return { name: entries[0]![0], known: 0, total: names.size, tiedWith: [] };
  let best = tied[0]!;
  if (tied.length > 1) {
    let least = Infinity;
    for (const name of tied) {
      const reads = permissiveness(candidates[name], names);
      if (reads < least) [best, least] = [name, reads];
    }
  }
  return { name: best, known: most, total: names.size, tiedWith: tied.filter((name) => name !== best) };
}
