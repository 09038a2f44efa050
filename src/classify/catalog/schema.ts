/**
 * The catalog format: the zod schema a catalog (the JSON of
 * `src/catalogs/*.json`, format 2) is validated by, the checks beyond it
 * that `parseCatalog` makes on load, and the JSON Schema generated from it
 * for editors. Kept apart from the compiler so that what a catalog may say
 * reads in one place.
 *
 * Spec: ASSISTANT_SAFETY.md "Tool kinds"; DESIGN.md §2 (the catalog format),
 * §4 (MCP annotations).
 */
import { z } from 'zod';
import type { ToolKind } from '../../../machines/safety.types.js';
import { TOOL_KINDS } from '../../../machines/safety.types.js';
import { CatalogError } from '../../errors/index.js';
import isSafeRegex from 'safe-regex2';
import { parseShellTable, shellTableSchema } from '../shell/index.js';
import { own } from '../../util/own.js';
import { deepestIssue } from '../../util/zod-issues.js';

const kindSchema = z.enum(TOOL_KINDS as [ToolKind, ...ToolKind[]]);
const nameSchema = z.string().trim().min(1, 'must be a non-empty string');

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

const RULE_KEYS = ['kind', 'argument', 'shell', 'powershell', 'sql', 'annotations'] as const;

/**
 * One tool's rule in object form (catalog format 2). Exactly one of `kind`,
 * `argument` (with `cases`, `patterns`, `fallback`), `shell`, `powershell`,
 * `sql` or `annotations` says how its kind is found; the rest add to it.
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
    powershell: nameSchema
      .optional()
      .describe('The argument holding a PowerShell script (never parsed as POSIX shell; src/classify/powershell/).'),
    sql: nameSchema.optional().describe('The argument holding SQL.'),
    dialect: z.enum(['postgres', 'sqlite']).optional().describe('The SQL dialect; default `postgres`.'),
    annotations: annotationsSchema.optional().describe('MCP annotations the tool declares.'),
    trusted: z.boolean().optional().describe('Trust the annotations (a read only when trusted and `readOnlyHint: true`); default false.'),
    targets: z
      .record(nameSchema, z.enum(['path', 'id', 'patch']))
      .optional()
      .describe(
        'Argument name to the kind of target it holds: a file-system `path` (a string), an `id` (a string, number or boolean: `order_id: 42` and `"42"` both name `order_id=42`), or a `patch` (an apply_patch envelope: every file its `*** Add/Update/Delete File:` and `*** Move to:` lines name is a path). Any other value, and a write given none of these arguments, is an unknown place (refused until confirmed). No `targets`: the spec\'s session-wide rule.',
      ),
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
  recoveryCodes: z
    .array(nameSchema)
    .optional()
    .describe(
      "Recoverable error codes a tool's result may raise (`error.code`, or the legacy `error_code`, e.g. `STRICT_RESOLUTION`): a failure carrying one opens a pending recovery for its tool, as a refusal of the gate does (issue 28). Default none.",
    ),
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
 * `{ name, description?, source?, failure?, recoveryCodes?, commands?, tools: { [tool]: kind | rule }, fallback? }`,
 * a rule being `{ kind } | { argument, cases?, patterns?, fallback? } | { shell } | { sql, dialect? } | { annotations, trusted? }`
 * plus `targets`, `cwd`, `destructive`, `selfVerifying`, `failure`, `description`.
 */
export type Catalog = z.infer<typeof catalogSchema>;

/** One tool's rule in object form. */
export type ToolRule = z.infer<typeof toolRuleSchema>;

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
