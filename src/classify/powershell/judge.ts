/**
 * PowerShell statements judged into parts (DESIGN.md §5.5, §5.6): each
 * command of each pipeline by its name (alias, cmdlet verb, or a native
 * program handed to the caller's judge), its arguments (path targets,
 * script blocks judged in turn, `-WhatIf`, destructive parameters) and its
 * redirections. The call is as bad as its worst part.
 */
import { pathTarget, type Classification } from '../classification.js';
import {
  ALIASES,
  DESTRUCTIVE_CMDLETS,
  EXPORT_SPEC,
  FILTER_CMDLETS,
  KEYWORDS,
  LOCATION_CMDLETS,
  PATH_CMDLETS,
  PLACE_CMDLETS,
  READ_CMDLETS,
  READ_LOOKING_VERBS,
  SCRIPT_CMDLETS,
  UNIX_SHADOWED,
  VARIABLE_PARAMETERS,
  WHATIF_CMDLETS,
  type PathSpec,
  type PlaceSpec,
} from './cmdlets.js';
import { unknownPlace } from '../../../machines/safety.targets.js';
import { psPathTarget, type PsCwd } from './paths.js';
import { POWERSHELL_REASONS as R } from './reasons.js';
import type { PsBlock, PsCommand, PsStatement, PsWord } from './tokenize.js';

/** Judges a native program's argv (the shell command table's rules), run in `cwd`. */
export type NativeJudge = (argv: string[], cwd: PsCwd) => Classification;

/** What judging a script carries along: where it runs (changed by `Set-Location`), the native judge, the parts found. */
export interface PsContext {
  cwd: PsCwd;
  native: NativeJudge | null;
  parts: Classification[];
  /** What the command before this one in its pipeline listed (`process:node`), passed on as this one's input; null when not known. */
  piped?: string[] | null;
  /** What this command lists by name, for the next one in its pipeline (set by `placeTargets` on a read). */
  produced?: string[] | null;
  /** The script assigned variables whose values the tokenizer put in their place (`tokenizeScript`). */
  assigned?: boolean;
}

/** A read part. */
export function psRead(targets: string[], reason: string): Classification {
  return { kind: 'read', targets, destructive: false, reason: `powershell: ${reason}` };
}

/** A write part. */
export function psWrite(targets: string[], destructive: boolean, reason: string): Classification {
  return { kind: 'write', targets, destructive, reason: `powershell: ${reason}` };
}

/** A command's arguments: parameters by name (lower case, `-` dropped) with their values, and the positional operands. */
interface Args {
  params: { name: string; raw: string; values: (PsWord | PsBlock)[] }[];
  positional: (PsWord | PsBlock)[][];
  blocks: PsBlock[];
  dynamic: boolean;
}

/** A command's elements after its name, sorted into parameters and operands; `spec` says which parameters take a value. */
function parseArgs(elements: PsCommand, spec: PathSpec | null): Args {
  const args: Args = { params: [], positional: [], blocks: [], dynamic: false };
  let pending: { values: (PsWord | PsBlock)[] } | null = null; // a parameter waiting for its value
  let last: (PsWord | PsBlock)[] | null = null; // the array a comma continues
  let comma = false;
  let ended = false;
  for (const element of elements) {
    if (element.type === 'op' || element.type === 'redirect') {
      comma = element.type === 'op' && element.text === ',';
      continue;
    }
    if (element.type === 'block') args.blocks.push(element);
    else if (element.dynamic) args.dynamic = true;
    if (comma && last !== null) {
      last.push(element);
      comma = false;
      continue;
    }
    if (element.type === 'word' && element.param && !ended) {
      const colon = element.text.indexOf(':');
      const name = (colon < 0 ? element.text.slice(1) : element.text.slice(1, colon)).toLowerCase();
      const param = { name, raw: colon < 0 ? element.text : element.text.slice(0, colon), values: [] as (PsWord | PsBlock)[] };
      args.params.push(param);
      if (colon >= 0) param.values.push({ ...element, param: false, text: element.text.slice(colon + 1) });
      pending = colon < 0 && spec !== null && spec.values.has(name) ? param : null;
      last = colon >= 0 ? param.values : null;
      continue;
    }
    if (element.type === 'word' && element.text === '--' && !element.quoted) {
      ended = true;
      continue;
    }
    if (pending !== null) {
      pending.values.push(element);
      last = pending.values;
      pending = null;
      continue;
    }
    const operand = [element];
    args.positional.push(operand);
    last = operand;
  }
  return args;
}

/** The current location, as a path value. */
const DOT: PsWord = { type: 'word', text: '.', dynamic: false, quoted: false, param: false, raw: '.' };

/** The targets of path values. */
function targetsOf(values: (PsWord | PsBlock)[], ctx: PsContext): string[] {
  const out: string[] = [];
  for (const value of values) {
    if (value.type !== 'word') continue;
    if (value.dynamic && /^\$(true|false|null)$/i.test(value.text)) continue;
    const target = psPathTarget(value.text, value.dynamic, ctx.cwd);
    if (target !== null) out.push(target);
  }
  return out;
}

/** The path targets a path cmdlet's arguments name. */
function pathTargets(args: Args, spec: PathSpec, ctx: PsContext): string[] {
  const out: string[] = [];
  for (const param of args.params) if (spec.paths.has(param.name)) out.push(...targetsOf(param.values, ctx));
  args.positional.forEach((values, index) => {
    if (spec.positional[index] === 'path') out.push(...targetsOf(values, ctx));
  });
  return out;
}

/**
 * The named places (`process:…`, `service:…`) a process or service cmdlet's
 * arguments name (issue #24's named kinds). A read: each name or id it is
 * given (`Get-Process node` → `process:node`), or every one of its kind
 * when it names none (`Get-Process` → `process:*`); nothing for a name only
 * known when it runs, a display name, an input object, a filter, or another
 * computer. A write (`Stop-Process -Name node`, `kill 12`, `Restart-Service
 * nginx`): each name or id; what the pipeline's producer listed when it is
 * given none (`Get-Process node | Stop-Process`); an unknown place
 * (`unknownPlace`, hinted with the word) for a name only known when it runs,
 * a display name, an input object, or pipeline input not known; another
 * computer makes the whole write an unknown place.
 */
function placeTargets(
  command: { typed: string; args: Args; position: number; write: boolean },
  place: PlaceSpec,
  ctx: PsContext,
): string[] {
  const { typed, args, position, write } = command;
  const named: (PsWord | PsBlock)[] = [...(args.positional[0] ?? [])];
  const opaque: (PsWord | PsBlock)[] = [];
  let remote: string | null = null;
  for (const param of args.params) {
    if (place.names.has(param.name)) named.push(...param.values);
    else if (place.opaque.has(param.name))
      opaque.push(...param.values.map((v) => ({ ...v, raw: `${typed} ${param.raw} ${v.type === 'word' ? v.raw : '{…}'}` })));
    else if (place.remote.has(param.name))
      remote = `${typed} ${param.raw} ${param.values.map((v) => (v.type === 'word' ? v.raw : '{…}')).join(',')}`;
  }
  if (remote !== null) return write ? [unknownPlace(remote)] : [];
  const known: string[] = [];
  const unknown: string[] = [];
  for (const value of named) {
    if (value.type !== 'word' || value.dynamic || value.text === '') unknown.push(unknownPlace(value.type === 'word' ? value.raw : '{…}'));
    else known.push(`${place.kind}:${value.text}`);
  }
  for (const value of opaque) unknown.push(unknownPlace((value as { raw: string }).raw));
  if (!write) {
    const filtered = args.params.some((p) => place.opaque.has(p.name));
    if (named.length === 0 && !filtered) {
      if (position > 0) return [];
      ctx.produced = [`${place.kind}:*`];
      return [`${place.kind}:*`];
    }
    if (unknown.length === 0 && !filtered) ctx.produced = known;
    return known;
  }
  if (named.length === 0 && opaque.length === 0 && position > 0) {
    const piped = ctx.piped ?? null;
    if (piped !== null && piped.length > 0 && piped.every((t) => t.startsWith(`${place.kind}:`))) return [...piped];
    return [unknownPlace(`${typed} (pipeline input)`)];
  }
  return [...known, ...unknown];
}

/** Whether `-WhatIf` is given, as a switch or `-WhatIf:$true`. */
function whatIf(args: Args): boolean {
  return args.params.some((p) => {
    if (p.name !== 'whatif' && p.name !== 'wi') return false;
    const value = p.values[0];
    return value === undefined || (value.type === 'word' && value.text.toLowerCase() === '$true');
  });
}

/** Script blocks among the arguments, each judged; returns false when one is not a read. */
function blocksRead(args: Args, ctx: PsContext, depth: number): boolean {
  let read = true;
  for (const block of args.blocks) {
    const parts: Classification[] = [];
    judgeStatements(block.statements, { ...ctx, parts }, depth + 1);
    if (parts.some((part) => part.kind !== 'read')) {
      read = false;
      ctx.parts.push(...parts.filter((part) => part.kind !== 'read'));
    }
  }
  return read;
}

/** The reason a read cmdlet's arguments make it something else, or null. */
function readCmdletProblem(name: string, typed: string, args: Args, spec: PathSpec): string | null {
  if (name === 'get-help' && args.params.some((p) => 'online'.startsWith(p.name) && p.name.length >= 2)) {
    return R['parameter-writes'](typed, '-Online');
  }
  const unknown = args.params.find((p) => !spec.switches.has(p.name) && !spec.values.has(p.name));
  if (unknown !== undefined) return R['unknown-parameter'](typed, unknown.raw);
  const assigns = args.params.find((p) => VARIABLE_PARAMETERS.has(p.name));
  if (assigns !== undefined) return R['parameter-assigns'](typed, assigns.raw);
  if (!spec.more && args.positional.length > spec.positional.length) return R['unknown-parameter'](typed, '(operand)');
  if (SCRIPT_CMDLETS.has(name) && args.dynamic) return R['dynamic-argument'](typed);
  if (name === 'foreach-object') {
    const member = args.params.find((p) => !['begin', 'process', 'end', 'remainingscripts'].includes(p.name));
    if (member !== undefined && !/^(verbose|debug|erroraction|ea)$/.test(member.name)) return R['member-argument'](typed);
    if (args.positional.some((values) => values.some((v) => v.type !== 'block'))) return R['member-argument'](typed);
  }
  return null;
}

/** Judges a cmdlet (by its full name, lower case); `typed` is the name as written. */
function judgeCmdlet(command: { name: string; typed: string; elements: PsCommand; position: number }, ctx: PsContext, depth: number): void {
  const { name, typed, elements, position } = command;
  const verb = name.slice(0, name.indexOf('-'));
  const readSpec = READ_CMDLETS.get(name);
  const spec = readSpec ?? PATH_CMDLETS.get(name) ?? PLACE_CMDLETS.get(name)?.spec ?? (verb === 'export' ? EXPORT_SPEC : null);
  const args = parseArgs(elements, spec);
  const blocksOk = blocksRead(args, ctx, depth);
  if (LOCATION_CMDLETS.has(name) || name === 'pop-location') {
    ctx.cwd = null;
    if (blocksOk) ctx.parts.push(psRead([], R['location-change'](typed)));
    return;
  }
  if (readSpec !== undefined) {
    const problem = readCmdletProblem(name, typed, args, readSpec);
    if (problem !== null) ctx.parts.push(psWrite([], false, problem));
    else if (blocksOk) {
      const place = PLACE_CMDLETS.get(name);
      const targets =
        place === undefined ? pathTargets(args, readSpec, ctx) : placeTargets({ typed, args, position, write: false }, place, ctx);
      // Listing with no path lists the current location (as `ls` does in the shell classifier).
      if (name === 'get-childitem' && targets.length === 0 && position === 0) targets.push(...targetsOf([DOT], ctx));
      ctx.parts.push(psRead(targets, R['read-verb'](typed)));
    }
    return;
  }
  if (WHATIF_CMDLETS.has(name) && whatIf(args)) {
    if (blocksOk) ctx.parts.push(psRead([], R['dry-run'](typed)));
    return;
  }
  // In a script that assigned variables the tokenizer followed, a write that assigns a session variable (`-OutVariable d`,
  // `-ov:d`, a prefix such as `-OutVar`) may change what one holds: what later uses of it name is not known.
  const known = (p: { name: string }) =>
    spec !== null && (spec.switches.has(p.name) || spec.values.has(p.name)) && !VARIABLE_PARAMETERS.has(p.name);
  const assigns =
    ctx.assigned === true
      ? args.params.find((p) => !known(p) && p.name.length >= 2 && [...VARIABLE_PARAMETERS].some((v) => v.startsWith(p.name)))
      : undefined;
  const assigned = assigns === undefined ? [] : [unknownPlace(`${typed} ${assigns.raw}`)];
  const place = PLACE_CMDLETS.get(name);
  if (place !== undefined) {
    const targets = [...placeTargets({ typed, args, position, write: true }, place, ctx), ...assigned];
    ctx.parts.push(psWrite(targets, false, R['write-verb'](typed)));
    return;
  }
  const targets = spec === null ? [] : pathTargets(args, spec, ctx);
  if (spec !== null && targets.length === 0 && position > 0) targets.push(psPathTarget('(pipeline input)', true, ctx.cwd)!);
  if (name === 'new-item') {
    const child = args.params.find((p) => p.name === 'name')?.values[0];
    if (child?.type === 'word') {
      const base = targets[0];
      const joined = base === undefined || child.dynamic ? null : pathTarget(`${base}/${child.text.replace(/\\/g, '/')}`);
      targets.push(...(joined === null ? targetsOf([child], ctx) : [joined]));
    }
  }
  targets.push(...assigned);
  if (DESTRUCTIVE_CMDLETS.has(name)) {
    ctx.parts.push(psWrite(targets, true, R['destructive-cmdlet'](typed)));
    return;
  }
  const flag =
    name === 'remove-item'
      ? args.params.find((p) => !spec!.values.has(p.name) && !['verbose', 'vb', 'debug', 'db', 'confirm', 'cf'].includes(p.name))
      : undefined;
  const plain = spec === null && READ_LOOKING_VERBS.has(verb) ? R['unknown-command'](typed) : R['write-verb'](typed);
  ctx.parts.push(psWrite(targets, flag !== undefined, flag !== undefined ? R.destructive(typed, flag.raw) : plain));
}

/** A word that is one quoted string, nothing written beside it: PowerShell never expands its wildcards. */
const ONE_QUOTED_STRING = /^('([^']|'')*'|"([^"]|"")*")$/;

/**
 * A native program's argv as PowerShell passes it, or the reason it may pass
 * it differently: pwsh outside Windows expands a wildcard not quoted (to file
 * names that may read as options), and on Windows a program that is a `.cmd`
 * shim (`npm`) runs through cmd.exe, which reads `&|<>^%` in its arguments as
 * its own syntax.
 */
function nativeArgv(name: string, elements: PsCommand): string[] | string {
  const argv = [name];
  for (const element of elements) {
    if (element.type === 'redirect') continue;
    if (element.type !== 'word') return R['native-argument'](name, element.type === 'block' ? '{…}' : element.text);
    const t = element.text;
    const odd =
      element.dynamic ||
      t === '' ||
      t.includes('"') ||
      (!element.quoted && /^[-+]?\.?\d/.test(t) && !/^-?\d+$/.test(t)) ||
      (/\s/.test(t) && t.endsWith('\\'));
    if (odd) return R['native-argument'](name, element.raw);
    if (/[*?[]/.test(t) && !ONE_QUOTED_STRING.test(element.raw)) return R['native-glob'](name, element.raw);
    if (/[&|<>^%]/.test(t)) return R['native-cmd-syntax'](name, element.raw);
    argv.push(t);
  }
  return argv;
}

/** Judges a native program through the caller's judge; without one, a write. */
function judgeNative(name: string, elements: PsCommand, ctx: PsContext): void {
  if (ctx.native === null) {
    ctx.parts.push(psWrite([], false, R['native-unknown'](name)));
    return;
  }
  const argv = nativeArgv(name, elements);
  if (typeof argv === 'string') {
    ctx.parts.push(psWrite([], false, argv));
    return;
  }
  const verdict = ctx.native(argv, ctx.cwd);
  ctx.parts.push(
    verdict.kind === 'read'
      ? verdict
      : { ...verdict, kind: 'write', reason: verdict.reason ?? `powershell: ${R['native-not-read'](name)}` },
  );
}

const OPERATOR =
  /^(-[ci]?(eq|ne|gt|ge|lt|le|like|notlike|match|notmatch|contains|notcontains|in|notin|replace|split)|-(and|or|xor|not|is|isnot|join|f|band|bor|bxor|bnot|shl|shr)|[-+*/%]|\d+(\.\d+)?|\d+\.\.\d+)$/i;
const LITERAL = /^('([^']|'')*'|"([^"]|"")*"|\$(env:)?\w+(\.\w+)*)$/i;

/** An expression statement (`"text"`, `$_.Name -eq 'x'`): literals, inert variables and operators only. */
function judgeExpression(command: PsCommand, ctx: PsContext, depth: number): void {
  for (const element of command) {
    if (element.type === 'redirect' || (element.type === 'op' && element.text === ',')) continue;
    if (element.type === 'block') {
      const parts: Classification[] = [];
      judgeStatements(element.statements, { ...ctx, parts }, depth + 1);
      ctx.parts.push(...parts);
      continue;
    }
    if (element.type === 'op' || !(OPERATOR.test(element.raw) || LITERAL.test(element.raw))) {
      ctx.parts.push(psWrite([], false, R['expression-word'](element.type === 'op' ? element.text : element.raw)));
      return;
    }
  }
  ctx.parts.push(psRead([], R.expression));
}

/** Judges one command of a pipeline, at `position` in it. */
function judgeCommand(command: PsCommand, position: number, ctx: PsContext, depth: number): void {
  const first = command[0];
  if (first === undefined) {
    ctx.parts.push(psWrite([], false, R['empty-pipeline-element']));
    return;
  }
  for (const element of command) if (element.type === 'redirect') judgeRedirect(element.text, element.target, ctx);
  if (first.type === 'op') {
    ctx.parts.push(psWrite([], false, first.text === '&' ? R['call-operator'] : R['expression-word'](',')));
    return;
  }
  if (first.type === 'block') {
    ctx.parts.push(psWrite([], false, R['block-alone']));
    return;
  }
  if (first.type === 'redirect') {
    ctx.parts.push(psWrite([], false, R['redirect-no-target']));
    return;
  }
  if (command.slice(1, -1).some((element) => element.type === 'op' && element.text === '&')) {
    ctx.parts.push(psWrite([], false, R.unsure("'&' inside a command")));
    return;
  }
  if (first.raw === '.') {
    ctx.parts.push(psWrite([], false, R['dot-source']));
    return;
  }
  if (first.dynamic || first.quoted || first.param || /^\d/.test(first.text)) {
    if (position > 0) ctx.parts.push(psWrite([], false, R['dynamic-command-name']));
    else judgeExpression(command, ctx, depth);
    return;
  }
  judgeNamed({ typed: first.text, rest: command.slice(1), position }, ctx, depth);
}

/** A command by its name: keyword, alias, cmdlet, or native program. */
function judgeNamed(command: { typed: string; rest: PsCommand; position: number }, ctx: PsContext, depth: number): void {
  const { typed, rest, position } = command;
  const lower = typed.toLowerCase();
  if (position === 0 && KEYWORDS.has(lower)) {
    ctx.parts.push(psWrite([], false, R.keyword(typed)));
    return;
  }
  const alias = ALIASES.get(lower);
  const name = alias ?? lower;
  if (/^[a-z]+-[a-z0-9]+$/.test(name)) {
    const before = ctx.parts.length;
    judgeCmdlet({ name, typed, elements: rest, position }, ctx, depth);
    const judged = ctx.parts.slice(before);
    if (alias !== undefined && UNIX_SHADOWED.has(lower) && judged.every((p) => p.kind === 'read')) judgeNative(lower, rest, ctx);
    return;
  }
  if (/[\\/]/.test(typed) || (typed.includes('.') && !/^[a-z0-9_-]+\.exe$/i.test(typed))) {
    ctx.parts.push(psWrite([], false, R['program-by-path'](typed)));
    return;
  }
  judgeNative(lower.replace(/\.exe$/, ''), rest, ctx);
}

/** A redirection: to `$null` or a stream, nothing; to a file, a write of it. */
function judgeRedirect(text: string, target: PsWord | null, ctx: PsContext): void {
  if (target === null) {
    ctx.parts.push(psRead([], R['redirect-stream']));
    return;
  }
  if (target.dynamic && target.text.toLowerCase() === '$null') return;
  const file = psPathTarget(target.text, target.dynamic, ctx.cwd);
  ctx.parts.push(psWrite(file === null ? [] : [file], false, R['redirect-file'](`${text} ${target.raw}`)));
}

/**
 * Judges statements into `ctx.parts`: every command of every pipeline, a
 * trailing `&` (a background job) a write.
 */
export function judgeStatements(statements: PsStatement[], ctx: PsContext, depth: number): void {
  for (const statement of statements) {
    let piped: string[] | null = null;
    statement.forEach((command, position) => {
      const before = ctx.parts.length;
      const last = command[command.length - 1];
      if (last?.type === 'op' && last.text === '&' && command.length > 1) {
        ctx.parts.push(psWrite([], false, R.background));
        command = command.slice(0, -1);
      }
      ctx.piped = position > 0 ? piped : null;
      ctx.produced = null;
      judgeCommand(command, position, ctx, depth);
      const first = command[0];
      const filter = first?.type === 'word' && FILTER_CMDLETS.has(ALIASES.get(first.text.toLowerCase()) ?? first.text.toLowerCase());
      piped = ctx.produced ?? (filter ? piped : null);
      placeWrites(ctx.parts, before, command);
    });
  }
}

/** A command as written, its words' raw text joined, for an unknown place's hint. */
function commandText(command: PsCommand): string {
  return command
    .map((element) => {
      if (element.type === 'word') return element.raw;
      if (element.type === 'block') return '{…}';
      if (element.type === 'op') return element.text;
      return element.target === null ? element.text : `${element.text} ${element.target.raw}`;
    })
    .join(' ');
}

/**
 * Every write part judged from `command` (from `parts[from]` on) that names
 * no target gets an unknown place hinted with the command as written
 * (`?/Invoke-Expression $x`): a PowerShell write is never without a target
 * (issue #24), so an unrelated read never admits it.
 */
function placeWrites(parts: Classification[], from: number, command: PsCommand): void {
  for (let i = from; i < parts.length; i++) {
    const part = parts[i]!;
    if (part.kind === 'write' && part.targets.length === 0) parts[i] = { ...part, targets: [unknownPlace(commandText(command))] };
  }
}
