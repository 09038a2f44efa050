/**
 * Tool-call classification: catalogs as data, compiled into classifiers that
 * never throw and fail closed to `write`.
 *
 * Spec: ASSISTANT_SAFETY.md "Tool kinds"; DESIGN.md §2 (the Pulse catalog),
 * §3.6 (`neutral`), §4 (tau-bench airline tools, MCP annotations).
 */
import { z } from 'zod';
import type { ToolKind } from '../machines/safety.types.js';
import { TOOL_KINDS } from '../machines/safety.types.js';
import { CatalogError } from './errors.js';
import pulseCatalog from './catalogs/pulse.json' with { type: 'json' };
import tauAirlineCatalog from './catalogs/tau-airline.json' with { type: 'json' };

/** Classifies one tool call: name and arguments (object, or a JSON string of one) to a kind. Never throws. */
export type Classifier = (name: string, args?: unknown) => ToolKind;

const kindSchema = z.enum(TOOL_KINDS as [ToolKind, ...ToolKind[]]);
const nameSchema = z.string().trim().min(1, 'must be a non-empty string');

const keyedToolSchema = z.strictObject({
  /** The argument whose value selects the kind. */
  argument: nameSchema,
  /** Argument value (trimmed, case-insensitive) to kind; any other value is a write. */
  cases: z.record(z.string(), kindSchema),
});

/** The JSON schema of a catalog, as a zod schema (validated on load). */
export const catalogSchema = z.strictObject({
  name: nameSchema,
  description: z.string().optional(),
  /** Tool name (trimmed, case-sensitive) to a static kind or a keyed rule. */
  tools: z.record(z.string(), z.union([kindSchema, keyedToolSchema])),
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
 * A classification catalog (the JSON shape of `src/catalogs/*.json`):
 * `{ name, description?, tools: { [tool]: kind | { argument, cases: { [value]: kind } } }, fallback? }`.
 */
export type Catalog = z.infer<typeof catalogSchema>;

/** The catalogs shipped with the package, by name; `pulse` is the default. */
export const builtinCatalogs: Readonly<Record<'pulse' | 'tau-airline', Catalog>> = {
  pulse: pulseCatalog as Catalog,
  'tau-airline': tauAirlineCatalog as Catalog,
};

/** The names of the shipped catalogs. */
export type BuiltinCatalogName = keyof typeof builtinCatalogs;

type CompiledRule = { kind: ToolKind } | { argument: string; cases: Map<string, ToolKind> };

function ownValue(record: object, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(record, key) ? (record as Record<string, unknown>)[key] : undefined;
}

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
  const value = ownValue(args, name);
  return typeof value === 'string' ? value.trim().toLowerCase() : null;
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

/**
 * The most specific form of a zod issue: for a tool rule that matches neither
 * a kind nor a keyed rule (a union), the branch issue that got deepest into
 * the entry, its path joined to the union's (e.g. `tools.t.cases.get`).
 */
function deepestIssue(issue: z.core.$ZodIssue): { path: PropertyKey[]; message: string } {
  if (issue.code !== 'invalid_union') return issue;
  let best: { path: PropertyKey[]; message: string } | undefined;
  for (const inner of issue.errors.flat().map(deepestIssue)) {
    if (best === undefined || inner.path.length > best.path.length) best = inner;
  }
  return best === undefined ? issue : { path: [...issue.path, ...best.path], message: best.message };
}

/**
 * Validates a catalog (any JSON value) and returns it typed.
 *
 * @throws CatalogError naming the catalog (and `source`, e.g. a file path)
 *   and the first bad entry's path, or a case value listed twice.
 */
export function parseCatalog(input: unknown, source?: string): Catalog {
  const name = typeof input === 'object' && input !== null ? ownValue(input, 'name') : undefined;
  const where = source ?? (typeof name === 'string' ? `'${name}'` : '(unnamed)');
  const result = catalogSchema.safeParse(input);
  if (!result.success) {
    const issue = deepestIssue(result.error.issues[0]!);
    const path = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
    throw new CatalogError(`catalog ${where}: ${path.join('.') || '(root)'}: ${issue.message}`, path);
  }
  const names = new Set<string>();
  for (const [tool, rule] of Object.entries(result.data.tools)) {
    if (names.has(tool.trim())) {
      throw new CatalogError(
        `catalog ${where}: tools.${tool}: the tool is listed twice (names are trimmed)`,
        ['tools', tool],
      );
    }
    names.add(tool.trim());
    if (typeof rule === 'string') continue;
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

/**
 * Builds a classifier from a catalog (DESIGN.md §2): tool names are trimmed
 * and case-sensitive; argument values trimmed and case-insensitive; a keyed
 * tool whose argument is missing, not a string or not listed is a `write`;
 * an unknown tool follows the catalog's fallback, else is a `write`.
 *
 * The classifier never throws, whatever `name` and `args` are.
 *
 * @param catalog a `Catalog` object or any JSON value to validate as one.
 * @throws CatalogError when the catalog does not validate (at build time only).
 */
export function createClassifier(catalog: unknown): Classifier {
  const parsed = parseCatalog(catalog);
  const rules = new Map<string, CompiledRule>();
  for (const [tool, rule] of Object.entries(parsed.tools)) {
    rules.set(
      tool.trim(),
      typeof rule === 'string'
        ? { kind: rule }
        : {
            argument: rule.argument,
            cases: new Map(Object.entries(rule.cases).map(([value, kind]) => [value.trim().toLowerCase(), kind])),
          },
    );
  }
  const fallback = parsed.fallback && {
    /** Listed names folded to compatibility form and lower case: an unknown name equal to one impersonates it. */
    impersonated: new Set([...rules.keys()].map(foldName)),
    arguments: parsed.fallback.arguments,
    writeWords: new Set(parsed.fallback.writeWords.map((w) => w.toLowerCase())),
    readWords: new Set(parsed.fallback.readWords.map((w) => w.toLowerCase())),
  };

  const classify: Classifier = (name, args) => {
    const tool = typeof name === 'string' ? name.trim() : '';
    const rule = rules.get(tool);
    const argsObject = argumentsObject(args);
    if (rule !== undefined) {
      if ('kind' in rule) return rule.kind;
      const value = argumentValue(argsObject, rule.argument);
      return (value !== null && rule.cases.get(value)) || 'write';
    }
    if (fallback === undefined) return 'write';
    if (!PLAIN_ASCII.test(tool) || fallback.impersonated.has(foldName(tool))) return 'write';
    const values = fallback.arguments.map((argument) => argumentValue(argsObject, argument));
    // A look-alike value (full-width letters, homoglyphs) could hide a write word: fail closed.
    if (values.some((value) => value !== null && !PRINTABLE_ASCII.test(value))) return 'write';
    const words = values.flatMap((value) => (value === null ? [] : wordsOf(value)));
    if (words.some((word) => fallback.writeWords.has(word))) return 'write';
    if (words.some((word) => fallback.readWords.has(word))) return 'read';
    return 'write';
  };
  return (name, args) => {
    try {
      return classify(name, args);
    } catch {
      return 'write'; // args whose getters or proxy traps throw fail closed
    }
  };
}

/** Classifier of the default Pulse catalog. */
const pulseClassifier = createClassifier(builtinCatalogs.pulse);

/**
 * Classifies a tool call with the Pulse catalog (DESIGN.md §2), the Go
 * original's `ClassifyToolCall`. Never throws; unknown input is a `write`.
 *
 * @param name tool name (trimmed, case-sensitive).
 * @param args the call's arguments: an object, or its JSON string.
 */
export function classifyToolCall(name: string, args?: unknown): ToolKind {
  return pulseClassifier(name, args);
}

/**
 * The kind of an MCP tool from its annotations (DESIGN.md §4): `read` only
 * when the server is trusted and the tool says `readOnlyHint: true`; anything
 * else (untrusted server, missing or false hint, malformed annotations) is a
 * `write`. Never throws.
 */
export function kindFromMcpAnnotations(annotations: unknown, options: { trusted: boolean }): ToolKind {
  if (options?.trusted !== true || typeof annotations !== 'object' || annotations === null) return 'write';
  return ownValue(annotations, 'readOnlyHint') === true ? 'read' : 'write';
}
