/**
 * The catalog an audit classifies with when none is named (`--catalog auto`,
 * the default of `pulse-safety audit` and of the visualizer's replay): the
 * catalog of the agent whose log format the reader recognised, else the
 * shipped catalog that knows the most tool names of the input. One function
 * for the command line and the visualizer, so both replay a transcript with
 * the same catalog.
 *
 * Spec: DESIGN.md §2 (catalogs), §4 (the agents' catalogs).
 */
import { builtinCatalogs, compileCatalog, pickCatalog, type BuiltinCatalogName, type Catalog } from '../classify/catalog/index.js';
import type { CompiledCatalog } from '../classify/catalog/index.js';
import type { TranscriptRun } from './transcripts/index.js';

/** The catalog choice that detects the catalog from the input. */
export const AUTO_CATALOG = 'auto';

/** What `autoCatalog` chose: the compiled catalog, its name, the report's label, and a warning when it fits badly. */
export interface AutoCatalogChoice {
  catalog: CompiledCatalog;
  name: BuiltinCatalogName;
  /** As the report heads it, e.g. `auto: claude-code, the log's format, knows 3 of 3 tool names`. */
  label: string;
  /** Set when the catalog knows fewer than half the tool names (the rest are judged as writes); else null. */
  warning: string | null;
}

/** The catalog every run's log format names, when they all name the same shipped one; else null. */
function formatCatalog(formats: ReadonlySet<string | undefined>): BuiltinCatalogName | null {
  if (formats.size !== 1) return null;
  const [format] = formats;
  return format !== undefined && Object.hasOwn(builtinCatalogs, format) ? (format as BuiltinCatalogName) : null;
}

/**
 * `--catalog auto`: the catalog of the agent whose log format the reader
 * recognised (`formats`: the `catalog` of every run; when all name the same
 * shipped one, issue 25 item 4: a Claude Code log whose calls are all MCP
 * tools is still a Claude Code log), else the shipped catalog that knows the
 * most of the tool names (`pickCatalog`); with a label for the report, and
 * a warning when it knows fewer than half of them.
 *
 * @param names the tool names of the input's calls.
 * @param formats the `catalog` hint of each run of the input (`TranscriptRun.catalog`, undefined for none).
 * @throws CatalogError only if a shipped catalog failed to validate (they are tested as shipped).
 */
export function autoCatalog(names: Iterable<string>, formats: ReadonlySet<string | undefined>): AutoCatalogChoice {
  const format = formatCatalog(formats);
  const choice =
    format === null ? pickCatalog(names) : pickCatalog(names, { [format]: builtinCatalogs[format] } as Record<BuiltinCatalogName, Catalog>);
  const how = format === null ? '' : ", the log's format";
  const tie = choice.tiedWith.length > 0 ? `; a tie with ${choice.tiedWith.join(', ')}, the strictest chosen` : '';
  const label = `${AUTO_CATALOG}: ${choice.name}${how}, knows ${choice.known} of ${choice.total} tool names${tie}`;
  const warning =
    choice.total > 0 && choice.known * 2 < choice.total
      ? `warning: catalog '${choice.name}' knows only ${choice.known} of the ${choice.total} tool names in the input; the others are judged as writes, or by the catalog's fallback where it has one (name a catalog with --catalog)`
      : null;
  return { catalog: compileCatalog(builtinCatalogs[choice.name]), name: choice.name, label, warning };
}

/** `autoCatalog` over runs in memory: their calls' tool names and their formats. */
export function autoCatalogOfRuns(runs: readonly TranscriptRun[]): AutoCatalogChoice {
  const names = new Set<string>();
  const formats = new Set<string | undefined>();
  for (const run of runs) {
    formats.add(run.catalog);
    for (const step of run.steps) if (step.type === 'call') names.add(step.name);
  }
  return autoCatalog(names, formats);
}
