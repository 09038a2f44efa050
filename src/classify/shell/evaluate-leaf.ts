/**
 * A leaf command (DESIGN.md §5.1, §5.5, §5.6): one that runs no other
 * command but through `find -exec`. Its script (sed, awk) is checked, its
 * operands counted and looked at (destructive prefixes, written files,
 * assigned variables), its path operands resolved to targets, and its own
 * part pushed.
 */
import { unknownPlace } from '../../../machines/safety.targets.js';
import { assignmentPart } from './assignment.js';
import { isSafeAwkProgram } from './awk.js';
import { pathTarget } from '../classification.js';
import { resolveTargets, wordTargets } from './cwd.js';
import { checkCurl } from './curl.js';
import { ownPart, type Effects, type RuleCall } from './effects.js';
import { optionIn, type ParsedArgs } from './parse-args.js';
import { SHELL_REASONS } from './reasons.js';
import { isSafeSedScript } from './sed.js';
import type { CompiledRule } from './table-compile.js';
import { DYNAMIC, show, staticWord, type Word } from './words.js';

/** An operand that is a URL with a scheme (`s3://bucket/key`, `https://host/x`). */
const URL_WITH_SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

/**
 * A brace expansion (`{a,b}`) one of whose alternatives climbs (`..`), or
 * starts at the root or a home (`/`, `~`): the words it makes are not all
 * under the directory written before it.
 */
const ESCAPING_BRACES = /\{([^{}]*,)?\s*(\.\.|\/|~)[^{}]*\}|\{[^{}]*,[^{}]*(\.\.)[^{}]*\}/;

/**
 * The script a sed or awk command runs, checked: from a file, only known
 * when it runs, or able to write or run programs, it writes a place not
 * known. Returns how many operands the script took (1 when it is the first).
 */
function checkScript(script: NonNullable<CompiledRule['script']>, effects: Effects, args: ParsedArgs): number {
  const label = effects.label;
  const scripts: Word[] = [];
  let fromFile = false;
  let taken = 0;
  for (const option of args.options) {
    if (optionIn(option, script.files)) fromFile = true;
    if (optionIn(option, script.options)) scripts.push(option.value ?? DYNAMIC);
  }
  if (!fromFile && scripts.length === 0) {
    const first = args.operands[0];
    scripts.push(first ?? staticWord(''));
    taken = 1;
  }
  if (fromFile) {
    effects.writes.push(SHELL_REASONS['script-from-file'](label));
    effects.targets.push(unknownPlace(`${label} script`));
  } else if (scripts.some((w) => w.text === null || w.pattern)) {
    effects.writes.push(SHELL_REASONS['dynamic-script'](label));
    effects.targets.push(unknownPlace(`${label} script`));
  } else {
    const text = scripts.map((w) => w.text).join('\n');
    const safe = script.language === 'sed' ? isSafeSedScript(text) : isSafeAwkProgram(text);
    if (!safe) {
      effects.writes.push(SHELL_REASONS['unsafe-script'](label));
      // What it writes is named in the script, not known here: a place not known, never established, so the write is refused.
      effects.targets.push(unknownPlace(`${label} script`));
    }
  }
  return taken;
}

/** The operands that are paths, by the rule's `operands` (after `skip` leading ones that are not). */
function pathOperands(rule: CompiledRule, args: ParsedArgs, skip: number): Word[] {
  const operands = args.operands;
  switch (rule.operands) {
    case 'none':
      return [];
    case 'after-double-dash':
      return operands.slice(Math.max(skip, args.afterDoubleDash));
    case 'leading':
      return operands.slice(0, Math.min(args.leading, operands.length));
    default:
      return operands.slice(skip);
  }
}

/** Operands that make it write (more than `maxOperands`, unless a list option) or destructive (a destructive prefix). */
function checkOperands(rule: CompiledRule, effects: Effects, args: ParsedArgs): void {
  const operands = args.operands;
  if (rule.maxOperands !== null && !args.options.some((option) => optionIn(option, rule.list))) {
    const counted = operands.filter((w) => !(w.text !== null && rule.ignoredPrefixes.some((p) => w.text!.startsWith(p))));
    if (counted.length > rule.maxOperands || counted.some((w) => w.text === null || w.pattern)) {
      effects.writes.push(SHELL_REASONS['operands-write'](effects.label, counted.length));
    }
  }
  for (const operand of operands) {
    const text = operand.text;
    if (text !== null && rule.destructivePrefixes.some((p) => text.startsWith(p))) {
      effects.destructives.push(SHELL_REASONS.destructive(`${effects.label} ${text}`));
    }
  }
}

/** Operands it writes to (tee): a write unless every one is a null device. */
function checkWrittenOperands(rule: CompiledRule, effects: Effects, paths: Word[], call: RuleCall): void {
  if (!rule.writesOperands) return;
  const written = paths.find((w) => w.text === null || !call.ctx.table.nullDevices.has(w.text));
  if (written !== undefined) effects.writes.push(SHELL_REASONS['writes-to'](effects.label, show(written)));
}

/** Variables it assigns (read, let): an assignment to a listed variable writes. */
function checkAssignedOperands(rule: CompiledRule, effects: Effects, args: ParsedArgs, call: RuleCall): void {
  if (!rule.assignsOperands) return;
  for (const operand of args.operands) {
    const name = operand.text === null ? null : /^[A-Za-z_][A-Za-z0-9_]*/.exec(operand.text)?.[0];
    if (name == null) continue;
    const part = assignmentPart(name, null, call.ctx);
    if (part.kind === 'write') effects.writes.push(part.reason!.replace(/^shell: /, ''));
  }
}

/** The path operands' targets (not null devices, not remote `host:path`), or the rule's default path when there is none. */
function addPathTargets(rule: CompiledRule, effects: Effects, paths: Word[], call: RuleCall): void {
  let found = false;
  for (const path of paths) {
    if (path.text === null) {
      effects.targets.push(...wordTargets(path, effects.here)); // known only when it runs: its places, or an unknown place
      found = true;
      continue;
    }
    if (call.ctx.table.nullDevices.has(path.text)) continue;
    // A brace expansion with an alternative that leaves the directory written before it (`{~,x}`, `{../..,x}`,
    // `{/etc,x}`): several paths, some elsewhere; a place not known, never established, so a write there is refused.
    if (path.pattern && ESCAPING_BRACES.test(path.text)) {
      effects.targets.push(unknownPlace(path.text));
      found = true;
      continue;
    }
    if (rule.remoteOperands && URL_WITH_SCHEME.test(path.text)) {
      // A URL (`s3://bucket/prefix`, `gs://b/o`) names a place of its own: kept as written, never joined to the directory.
      const target = pathTarget(path.text);
      if (target !== null) effects.targets.push(target);
      found = true;
      continue;
    }
    if (rule.remoteOperands && /^[^/.~][^/]*:/.test(path.text)) continue;
    const resolved = resolveTargets(path.text, effects.here);
    if (resolved.length > 0) found = true;
    effects.targets.push(...resolved);
  }
  if (!found && paths.length === 0 && rule.defaultPath !== null) effects.targets.push(...resolveTargets(rule.defaultPath, effects.here));
}

/**
 * Judges a leaf command (DESIGN.md §5.5): the commands its exec options
 * start (find -exec), its script, its operands, its path targets, curl's
 * URLs and `-w` format (`checkCurl`); then
 * pushes its own part, a read when its rule is read-only and nothing in it
 * writes.
 */
export function evaluateLeaf(rule: CompiledRule, effects: Effects, args: ParsedArgs, call: RuleCall): void {
  const { label, ctx } = call;
  for (const inner of args.execs) ctx.steps.argv({ words: inner, unknownArgs: false }, effects.here, ctx, call.depth + 1);
  let skip = args.options.some((option) => optionIn(option, rule.pattern)) ? 0 : rule.skip;
  if (rule.script !== null) skip += checkScript(rule.script, effects, args);
  const paths = pathOperands(rule, args, skip);
  checkOperands(rule, effects, args);
  checkWrittenOperands(rule, effects, paths, call);
  checkAssignedOperands(rule, effects, args, call);
  addPathTargets(rule, effects, paths, call);
  if (ctx.table.commands.get('curl') === rule) checkCurl(effects, args);
  const last = args.operands.at(-1);
  const read = rule.read || (last?.text != null && !last.pattern && rule.readLast.has(last.text));
  ctx.parts.push(ownPart(effects, read ? 'read' : 'write', read ? SHELL_REASONS['read-only'](label) : SHELL_REASONS.writes(label)));
}
