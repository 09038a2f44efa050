/**
 * Parsing (DESIGN.md §5.5): tree-sitter-bash through web-tree-sitter
 * (WebAssembly, no native build), taken from the parser registry
 * (`../parsers.ts`: loaded by the package's entry points, or by the hook for
 * the call in hand; when it is not loaded, a script is a write); the input
 * checks made before parsing; and a script parsed and judged, the whole
 * command or an inner one (`bash -c`, `eval`). A tree with ERROR or MISSING
 * nodes does not parse: a write.
 */
import { bashParsing, parserFailure } from '../parsers.js';
import type { Cwds } from './cwd.js';
import { evaluatedCode } from './evaluated-code.js';
import { judgeSequence } from './judge.js';
import { MAX_HEREDOC_LINE_COST, MAX_SHELL_COMMAND_BYTES, MAX_SHELL_NESTING } from './limits.js';
import { writePart } from './parts.js';
import { SHELL_REASONS } from './reasons.js';
import type { JudgeContext } from './words.js';

/** Progress callbacks allowed per parse before it is cancelled (a bound on work; a 64 KiB command needs a few thousand). */
const MAX_PARSE_PROGRESS_CALLS = 50_000;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Why a command string cannot be judged (longer than
 * `MAX_SHELL_COMMAND_BYTES` UTF-8 bytes, a NUL, a lone surrogate), as the
 * end of a sentence (`is longer than 65536 bytes`), or null.
 */
export function inputProblem(text: string): string | null {
  if (text.length > MAX_SHELL_COMMAND_BYTES || Buffer.byteLength(text, 'utf8') > MAX_SHELL_COMMAND_BYTES) {
    return SHELL_REASONS['input-too-long'](MAX_SHELL_COMMAND_BYTES);
  }
  if (text.includes('\0')) return SHELL_REASONS['input-nul'];
  if (LONE_SURROGATE.test(text)) return SHELL_REASONS['input-lone-surrogate'];
  return null;
}

/**
 * What tree-sitter-bash's reading of a script's here-document lines may
 * cost (see `MAX_HEREDOC_LINE_COST`): 0 without a here-document operator,
 * else the largest count of `$` and backticks on a line times its length.
 * Linear in the script; over-estimates (any line counts, in a body or not).
 */
export function heredocLineCost(source: string): number {
  if (!/<<(?!<)/.test(source.replaceAll('<<<', ''))) return 0;
  let worst = 0;
  let start = 0;
  let expansions = 0;
  for (let i = 0; i <= source.length; i++) {
    const c = source.charCodeAt(i);
    if (c === 36 || c === 96)
      expansions++; // $ `
    else if (c === 10 || i === source.length) {
      worst = Math.max(worst, expansions * (i - start));
      start = i + 1;
      expansions = 0;
    }
  }
  return worst;
}

/**
 * Parses and judges a script; the tree is freed after. The parse is
 * cancelled past `MAX_PARSE_PROGRESS_CALLS`; a tree that does not parse is a
 * write; code bash would evaluate from text (`evaluatedCode`) is a write and
 * the tree is judged on, for targets and destructive parts. Without
 * tree-sitter-bash loaded (`bashParsing`), the script is a write.
 */
export function judgeSource(source: string, cwds: Cwds, ctx: JudgeContext, depth: number): void {
  if (heredocLineCost(source) > MAX_HEREDOC_LINE_COST) {
    ctx.parts.push(writePart([], false, SHELL_REASONS['too-complex'](SHELL_REASONS['heredoc-line-cost'](MAX_HEREDOC_LINE_COST))));
    return;
  }
  const bash = bashParsing();
  if (bash === null) {
    ctx.parts.push(writePart([], false, SHELL_REASONS['parser-missing'](parserFailure('bash'))));
    return;
  }
  const { parser, functionNames: functionNamesQuery } = bash;
  let calls = 0;
  const tree = parser.parse(source, null, {
    progressCallback: () => ++calls > MAX_PARSE_PROGRESS_CALLS,
  });
  if (tree === null) {
    parser.reset();
    ctx.parts.push(writePart([], false, SHELL_REASONS['too-hard-to-parse']));
    return;
  }
  try {
    const root = tree.rootNode;
    if (root.hasError) {
      ctx.parts.push(writePart([], false, SHELL_REASONS['does-not-parse']));
      return;
    }
    const evaluated = evaluatedCode(root, source);
    if (evaluated !== null) ctx.parts.push(writePart([], false, evaluated)); // and judged on, for targets and destructive parts
    if (source.includes('(') || source.includes('function')) {
      for (const capture of functionNamesQuery.captures(root))
        ctx.functions.add(source.slice(capture.node.startIndex, capture.node.endIndex));
    }
    judgeSequence(root, cwds, { ...ctx, source }, depth + 1);
  } finally {
    tree.delete();
  }
}

/**
 * Parses a script string and judges it in a child shell (bash -c, eval):
 * its `cd` does not leak. Deeper than `MAX_SHELL_NESTING`, or a script that
 * fails `inputProblem`, is a write.
 */
export function judgeScript(script: string, cwds: Cwds, ctx: JudgeContext, depth: number): void {
  if (ctx.nesting + 1 > MAX_SHELL_NESTING) {
    ctx.parts.push(writePart([], false, SHELL_REASONS['shells-nested-too-deep'](MAX_SHELL_NESTING)));
    return;
  }
  const problem = inputProblem(script);
  if (problem !== null) {
    ctx.parts.push(writePart([], false, SHELL_REASONS['inner-script-problem'](problem)));
    return;
  }
  judgeSource(script, cwds, { ...ctx, nesting: ctx.nesting + 1 }, depth);
}
