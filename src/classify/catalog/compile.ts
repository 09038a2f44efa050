/**
 * The catalog compiler: a validated catalog turned into a classifier that
 * never throws and fails closed to `write`, with what the audit and the
 * adapters need to know of each tool (self-verifying, failure markers).
 * Each listed tool's rule is compiled once into a judge; an unknown tool
 * follows the catalog's word fallback, else is a write.
 *
 * Spec: DESIGN.md §2 (the catalog), §3.6 (`neutral`), §4 (MCP annotations),
 * §5 (targets, destructive writes, self-verifying tools).
 */
import type { ToolKind } from '../../../machines/safety.types.js';
import { classifyShellCommand, type ShellTable } from '../shell/index.js';
import { classifyPowerShell } from '../powershell/index.js';
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
import { isUnknownPlace, unknownPlace } from '../../../machines/safety.targets.js';
import { assertKnownKeys } from '../../util/known-keys.js';
import { patchFiles } from '../patch.js';
import { parseCatalog, type Catalog, type ToolRule } from './schema.js';

/** Classifies one tool call: name and arguments (object, or a JSON string of one) to a kind. Never throws. */
export type Classifier = (name: string, args?: unknown) => ToolKind;

/** Argument values longer than this are never matched against a pattern (they fall through to `fallback`). */
export const MAX_PATTERN_INPUT = 1024;

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

/** What a declared target argument holds: a path, an id, or a patch whose headers name paths (`src/classify/patch.ts`). */
type TargetType = 'path' | 'id' | 'patch';

/** How one listed tool is judged, compiled from its rule. */
interface CompiledTool {
  /** The classification from the arguments, before the tool's own targets are added. */
  judge(args: object | null, cwd: string | undefined): Classification;
  targets: readonly (readonly [argument: string, type: TargetType])[];
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
  /**
   * The recoverable error codes a result may raise (the catalog's
   * `recoveryCodes`, issue 28): a failure carrying one opens a pending
   * recovery for its tool. Empty when the catalog lists none.
   */
  readonly recoveryCodes: readonly string[];
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

/** A classification of `kind` alone: no target, not destructive. */
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

/**
 * A script tool's classification with no write left without a target
 * (issue #24: a shell, PowerShell or SQL write is never a tool without
 * targets): a write naming none gets an unknown place, `hint` saying what
 * (`unknownPlace`), so an unrelated read never admits it. Anything else as it is.
 */
function placed(judged: Classification, hint: string): Classification {
  return judged.kind === 'write' && judged.targets.length === 0 ? { ...judged, targets: [unknownPlace(hint)] } : judged;
}

/** What a script classifier takes besides the script: the catalog's command table and the call's working directory. */
type ScriptOptions = { table?: ShellTable; cwd?: string };

/**
 * A tool whose `argument` holds a script (a shell command, a PowerShell
 * script), judged by `classify` with the catalog's command table and the
 * call's working directory; a missing argument fails closed (`prefix: argument 'x' is missing`),
 * and a write naming no target gets an unknown place (`placed`).
 */
function scriptTool(
  tool: Omit<CompiledTool, 'judge'>,
  source: { argument: string; prefix: string; table: ShellTable | undefined },
  classify: (script: unknown, options: ScriptOptions) => Classification,
): CompiledTool {
  const { argument, prefix, table } = source;
  return {
    ...tool,
    judge: (args, cwd) => {
      const script = args === null ? undefined : own(args, argument);
      if (script === undefined) return placed(failClosed(`${prefix}: argument '${argument}' is missing`), `${prefix} <no '${argument}'>`);
      const judged = classify(script, { ...(table ? { table } : {}), ...(cwd ? { cwd } : {}) });
      return placed(judged, judged.reason ?? `${prefix} '${argument}'`);
    },
  };
}

/** One listed tool's rule (a static kind or a rule object) compiled into its judge; `catalog` gives a `shell` rule its command table. */
function compileTool(rule: ToolKind | ToolRule, catalog: Catalog): CompiledTool {
  const base = {
    targets: [] as [string, TargetType][],
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
    echoes: rule.shell !== undefined || rule.powershell !== undefined || rule.sql !== undefined || rule.echoes === true,
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
  const table = catalog.commands;
  if (rule.shell !== undefined) return scriptTool(tool, { argument: rule.shell, prefix: 'shell', table }, classifyShellCommand);
  if (rule.powershell !== undefined)
    return scriptTool(tool, { argument: rule.powershell, prefix: 'powershell', table }, classifyPowerShell);
  if (rule.sql !== undefined) {
    const argument = rule.sql;
    const dialect = rule.dialect ?? 'postgres';
    return {
      ...tool,
      judge: (args) => {
        const judged = classifySql(args === null ? undefined : own(args, argument), { dialect });
        return placed(judged, judged.reason ?? `sql '${argument}'`);
      },
    };
  }
  const fromRule = fromAnnotations(rule.annotations, rule.trusted === true);
  return { ...tool, judge: () => fromRule };
}

/**
 * The target one value of a declared target argument names (DESIGN.md §5.1),
 * or null when it names none (an empty string):
 * - `path`: a non-empty string, trimmed, made absolute against `cwd` (`pathTarget`);
 * - `id`: a non-empty string (trimmed), a number or a boolean, as
 *   `<argument>=<value>` (`idTarget`): the JSON number `42` and the string
 *   `"42"` name the same target, `order_id=42`; `true` gives `order_id=true`.
 *   A number is written as JavaScript writes it (`4.5`, `1e+21`), so one
 *   value gives one string whatever its JSON spelling (`42.0` is `42`);
 * - anything else is an unknown place (`unknownPlace`) whose hint names the
 *   argument and what it held: an object or array where one value is
 *   expected (`order_id=<object>`, e.g. `{"$gt": 0}`), `null`, a path that
 *   is not a string (`file_path=<number>`), an integer past 2^53
 *   (`order_id=<imprecise number>`: parsing may have changed it, so it could
 *   equal an id it is not).
 */
function valueTarget(argument: string, type: 'path' | 'id', value: unknown, cwd: string | undefined): string | null {
  if (typeof value === 'string') {
    const text = value.trim();
    if (text === '') return null;
    return type === 'path' ? pathTarget(text, cwd) : idTarget(argument, text);
  }
  const held = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  if (type === 'id' && typeof value === 'boolean') return idTarget(argument, String(value));
  if (type === 'id' && typeof value === 'number' && Number.isFinite(value)) {
    if (Number.isInteger(value) && !Number.isSafeInteger(value)) return unknownPlace(`${argument}=<imprecise number>`);
    return idTarget(argument, String(value));
  }
  return unknownPlace(`${argument}=<${held}>`);
}

/**
 * The targets a `patch` argument names: each file its headers add, update,
 * delete or move to (`patchFiles`), made absolute against `cwd`; an empty
 * value names none; anything that is not a patch naming files (a string
 * without the envelope, an object) is one unknown place (`command=<not a patch>`),
 * so a write whose files cannot be read from the patch is never admitted by
 * an unrelated read.
 */
function patchTargets(argument: string, value: unknown, cwd: string | undefined): (string | null)[] {
  if (typeof value === 'string' && value.trim() === '') return [];
  const files = patchFiles(value);
  if (files === null) return [unknownPlace(`${argument}=<not a patch>`)];
  return files.map((file) => pathTarget(file, cwd));
}

/**
 * A freeform call's arguments (the Responses API's custom tools, such as
 * Codex's `apply_patch`, send their input as one string, not JSON): as the
 * tool's first `patch` argument, when it declares one; else none.
 */
function freeformArguments(tool: CompiledTool, args: unknown): object | null {
  if (typeof args !== 'string') return null;
  const patch = tool.targets.find(([, type]) => type === 'patch');
  return patch === undefined ? null : { [patch[0]]: args };
}

/**
 * The targets a tool's `targets` arguments name (DESIGN.md §5.1, §5.2): each
 * declared argument's value (`valueTarget`), or each item of an array of
 * them (several targets, all of which the write needs established). For a
 * call that is not a write, only what is known: values that name no known
 * place are left out, so such a read establishes nothing by them. For a
 * write (fail closed, DESIGN.md §5.3):
 * - a value that names no known place is an unknown place (`order_id: {"$gt": 0}`);
 * - when the tool declares target arguments, the call gives none of them
 *   (missing, empty strings, empty arrays) and its rule names no other
 *   target (`named`: a script's own targets), the write gets one unknown place
 *   naming them (`reservation_id=<missing>`; several alternatives as
 *   `file_path|absolute_path=<missing>`): a write whose target is not named
 *   is refused until confirmed rather than admitted by any read. Declared
 *   arguments are alternatives (gemini-cli's `file_path`, `absolute_path`),
 *   so one of them given is enough.
 * A tool that declares no target arguments adds none (the catalog author's
 * choice: the spec's session-wide rule).
 */
function argumentTargets(
  tool: CompiledTool,
  args: object | null,
  cwd: string | undefined,
  judged: { write: boolean; named: boolean },
): string[] {
  const { write, named } = judged;
  if (tool.targets.length === 0) return [];
  const found: string[] = [];
  for (const [argument, type] of tool.targets) {
    const value = args === null ? undefined : own(args, argument);
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? (value as unknown[]) : [value]) {
      for (const target of type === 'patch' ? patchTargets(argument, item, cwd) : [valueTarget(argument, type, item, cwd)]) {
        if (target !== null && (write || !isUnknownPlace(target))) found.push(target);
      }
    }
  }
  if (write && !named && found.length === 0) found.push(unknownPlace(`${tool.targets.map(([argument]) => argument).join('|')}=<missing>`));
  return found;
}

/**
 * Compiles a catalog (DESIGN.md §2, §5): tool names are trimmed and
 * case-sensitive; argument values trimmed and case-insensitive; a keyed tool
 * whose argument is missing or not a string is a `write`, one whose value
 * matches no case or pattern takes the rule's `fallback` (default `write`);
 * a shell or SQL tool is judged by parsing its command (src/classify/shell/,
 * src/classify/sql/); an MCP tool by its annotations; an unknown tool follows the
 * catalog's word fallback, else is a `write`. Targets are the tool's
 * `targets` arguments (paths made absolute against its `cwd` argument) plus
 * what the command names. A write is destructive when the rule, the command
 * or the MCP annotations say so.
 *
 * @param catalog a `Catalog` object or any JSON value to validate as one.
 * @throws CatalogError when the catalog does not validate (at compile time only).
 * @throws TypeError when `options` has a key it does not know (`trustd`).
 */
export function compileCatalog(catalog: unknown, options: CompileOptions = {}): CompiledCatalog {
  if (typeof options === 'object' && options !== null) assertKnownKeys(options, ['annotations', 'trusted'], 'compileCatalog');
  return compileValidCatalog(parseCatalog(catalog), options);
}

/**
 * `compileCatalog` of a catalog that is valid already, as `parseCatalog`
 * returns it (or a shipped catalog, which the tests parse and compare):
 * not validated again. Given anything else it may throw or misjudge: use
 * `compileCatalog`.
 */
export function compileValidCatalog(parsed: Catalog, options: CompileOptions = {}): CompiledCatalog {
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
    const argsObject = argumentsObject(args) ?? (compiled === undefined ? null : freeformArguments(compiled, args));
    if (compiled === undefined) {
      const kind = byWords(tool, argsObject);
      // An unlisted tool's write changes a place nobody named: an unknown place, so no unrelated read admits it.
      return kind === 'write'
        ? placed(failClosed(`'${tool.slice(0, 64)}' is not in catalog '${parsed.name}'`), `${tool.slice(0, 64)} <not in the catalog>`)
        : ofKind(kind);
    }
    const cwdValue = compiled.cwd !== undefined && argsObject !== null ? own(argsObject, compiled.cwd) : undefined;
    const given = typeof cwdValue === 'string' && cwdValue.trim() !== '' ? cwdValue.trim() : context?.cwd;
    const cwd = typeof given === 'string' && given !== '' ? (directoryOf(given) ?? undefined) : undefined;
    const judged = compiled.judge(argsObject, cwd);
    const targets = normalizeTargets([
      ...judged.targets,
      ...argumentTargets(compiled, argsObject, cwd, { write: judged.kind === 'write', named: judged.targets.length > 0 }),
    ]);
    const destructive = judged.kind === 'write' && (judged.destructive || compiled.destructive);
    return {
      kind: judged.kind,
      targets,
      destructive,
      ...(judged.reason === undefined ? {} : { reason: judged.reason }),
      ...(compiled.echoes ? { echoes: true as const } : {}),
      // Links a shell write makes out of their directory (ln -s): the session keeps them (issue 24).
      ...(judged.kind === 'write' && judged.links !== undefined && judged.links.length > 0 ? { links: judged.links } : {}),
    };
  }

  const classify: CallClassifier = (name, args, context) => {
    try {
      return judge(name, args, context);
    } catch {
      // Args whose getters or proxy traps throw fail closed, on a place nobody named.
      return placed(failClosed('the call could not be read'), '<unreadable call>');
    }
  };
  const compiled: CompiledCatalog = {
    name: parsed.name,
    classify,
    kindOf: (name, args) => classify(name, args).kind,
    knows: (name) => lookup(name) !== undefined,
    isSelfVerifying: (name) => lookup(name)?.selfVerifying === true,
    failureMarkers: (name) => [...catalogFailure, ...(lookup(name)?.failure ?? [])],
    recoveryCodes: Object.freeze([...(parsed.recoveryCodes ?? [])]),
  };
  compiledCatalogs.set(classify, compiled);
  return compiled;
}

/** The compiled catalog behind each classifier `compileValidCatalog` made (its `classify`); weak, so it keeps none alive. */
const compiledCatalogs = new WeakMap<CallClassifier, CompiledCatalog>();

/**
 * The compiled catalog a classifier came from: `compileCatalog(c).classify`
 * or `createCallClassifier(c)`; undefined for any other function or value.
 * Lets a session guard tell which tools its classifier lists (its
 * unknown-tools warning). Never throws.
 */
export function compiledCatalogOf(classify: unknown): CompiledCatalog | undefined {
  return typeof classify === 'function' ? compiledCatalogs.get(classify as CallClassifier) : undefined;
}
