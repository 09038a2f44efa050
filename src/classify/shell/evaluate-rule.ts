/**
 * A simple command judged against its rule in the table (DESIGN.md §5.5,
 * §5.6): a lone info option (`--version`) is a read; otherwise its words are
 * parsed by the rule's option grammar, its options' effects gathered, and
 * the rule decides on its subcommand (judged in turn by the subcommand's
 * rule), the command it wraps (`evaluateWrapper`) or its operands
 * (`evaluateLeaf`).
 */
import { unknownPlace } from '../../../machines/safety.targets.js';
import { collectOptionEffects, hasOwnEffects, ownPart, type Effects, type RuleCall } from './effects.js';
import { evaluateLeaf } from './evaluate-leaf.js';
import { evaluateSql } from './evaluate-sql.js';
import { evaluateWrapper, type WrapperRule } from './evaluate-wrapper.js';
import { MAX_SHELL_NODE_DEPTH, TooDeep } from './limits.js';
import { parseArgs, type ParsedArgs } from './parse-args.js';
import { readPart } from './parts.js';
import { notePlace } from './place.js';
import { SHELL_REASONS } from './reasons.js';
import { subcommandRule, type CompiledRule } from './table-compile.js';
import { show } from './words.js';

/** Whether the rule runs another command it finds by itself (not `exec`: find -exec is an option of a leaf). */
function isWrapper(rule: CompiledRule): rule is WrapperRule {
  return rule.run !== null && rule.run.mode !== 'exec';
}

/** Subcommands: the first operand selects the rule for the rest; none, or one not in the table, decides by the parent. */
function evaluateSubcommand(rule: CompiledRule, effects: Effects, args: ParsedArgs, call: RuleCall): void {
  const { label, ctx } = call;
  const [first, ...rest] = args.rest;
  if (first === undefined) {
    if (call.unknownArgs) effects.writes.push(SHELL_REASONS['dynamic-subcommand'](label));
    ctx.parts.push(
      ownPart(effects, rule.read ? 'read' : 'write', rule.read ? SHELL_REASONS['read-only'](label) : SHELL_REASONS.writes(label)),
    );
    return;
  }
  const sub = first.text === null || first.pattern ? undefined : subcommandRule(rule, first.text);
  if (sub === undefined) {
    // A subcommand the table does not know, where it may be an alias running anything (`git x`, `git submodule foreach CMD`).
    if (rule.anySubcommand) effects.targets.push(unknownPlace(`${label} ${show(first)}`));
    effects.execWrites.unshift(SHELL_REASONS['unknown-command'](`${label} ${show(first)}`)); // a write, whatever a dry run says
    ctx.parts.push(ownPart(effects, 'write', SHELL_REASONS['unknown-command'](`${label} ${show(first)}`)));
    return;
  }
  if (hasOwnEffects(effects)) ctx.parts.push(ownPart(effects, 'read', ''));
  evaluateRule(sub, {
    label: `${label} ${first.text}`,
    words: rest,
    cwds: effects.here,
    ctx,
    depth: call.depth + 1,
    unknownArgs: call.unknownArgs,
    targets: effects.targets,
    writeTargets: effects.writeTargets,
    options: [...(call.options ?? []), ...args.options],
  });
}

/**
 * Judges a command's arguments against its rule (DESIGN.md §5.5), pushing
 * its parts into `call.ctx.parts`.
 *
 * @throws TooDeep past `MAX_SHELL_NODE_DEPTH` (the entry point turns it into a write).
 */
export function evaluateRule(rule: CompiledRule, call: RuleCall): void {
  if (call.depth > MAX_SHELL_NODE_DEPTH) throw new TooDeep();
  const { label, words, ctx } = call;
  const only = words[0];
  if (words.length === 1 && !call.unknownArgs && only?.text != null && !only.pattern && rule.info.has(only.text)) {
    ctx.parts.push(readPart(call.targets, SHELL_REASONS['shows-information'](`${label} ${only.text}`)));
    return;
  }
  const wrapper = rule.run !== null && rule.run.mode !== 'exec' && rule.run.mode !== 'eval';
  const args = parseArgs(rule, words, rule.subcommands !== null || wrapper);
  const effects = collectOptionEffects(rule, args, call);
  notePlace(rule, effects, args, { inherited: call.options, firstWord: words[0] });
  if (rule.subcommands !== null) evaluateSubcommand(rule, effects, args, call);
  else if (isWrapper(rule)) evaluateWrapper(rule, effects, args, call);
  else if (rule.sql !== null) evaluateSql(rule.sql, effects, args, call);
  else evaluateLeaf(rule, effects, args, call);
}
