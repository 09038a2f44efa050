/**
 * Bounded cost (DESIGN.md §5.5): a call over the work budget, a script whose
 * here-document lines would cost the parser too much, and a working
 * directory past PATH_MAX are writes (`too-complex`), never a long block;
 * long but ordinary scripts stay reads. No timings here: `npm run bench`
 * measures speed.
 */
import { describe, expect, it } from 'vitest';
import { MAX_SHELL_COMMAND_BYTES, MAX_SHELL_CWD_LENGTH, MAX_SHELL_WORK, classifyShellCommand } from '../../../src/classify/shell/index.js';
import { MAX_HEREDOC_LINE_COST } from '../../../src/classify/shell/limits.js';
import { heredocLineCost } from '../../../src/classify/shell/parse.js';
import { SHELL_REASONS } from '../../../src/classify/shell/reasons.js';

const overWork = `shell: ${SHELL_REASONS['too-complex'](SHELL_REASONS['work-over-budget'](MAX_SHELL_WORK))}`;
const overHeredoc = `shell: ${SHELL_REASONS['too-complex'](SHELL_REASONS['heredoc-line-cost'](MAX_HEREDOC_LINE_COST))}`;
const overCwd = `shell: ${SHELL_REASONS['too-complex'](SHELL_REASONS['cwd-too-long'](MAX_SHELL_CWD_LENGTH))}`;

/** `n` command substitutions, `perLine` to a line. */
function substitutions(n: number, perLine: number): string {
  const lines: string[] = [];
  for (let i = 0; i < n; i += perLine) {
    lines.push(Array.from({ length: Math.min(perLine, n - i) }, (_, j) => `$(echo ${i + j})`).join(' '));
  }
  return lines.join('\n');
}

describe('bounded cost', () => {
  it('a here-document with 3,500 substitutions on one line is too complex, and is not parsed', () => {
    const script = `cat <<EOF\n${substitutions(3_500, 3_500)}\nEOF\n`;
    expect(heredocLineCost(script)).toBeGreaterThan(MAX_HEREDOC_LINE_COST);
    expect(classifyShellCommand(script)).toMatchObject({ kind: 'write', reason: overHeredoc });
  });

  it('a 21 KB here-document with 3,500 substitutions, a few to a line, is over the work budget', () => {
    const body = substitutions(3_500, 5).replace(/echo /g, '');
    const script = `cat <<EOF\n${body}\nEOF\n`;
    expect(script.length).toBeGreaterThan(20_000);
    expect(script.length).toBeLessThan(MAX_SHELL_COMMAND_BYTES);
    expect(classifyShellCommand(script)).toMatchObject({ kind: 'write', reason: overWork });
  });

  it('a 60 KB script of ordinary commands is over the work budget', () => {
    const lines: string[] = [];
    for (let i = 0; lines.join('\n').length < 60_000; i++) lines.push(`echo "line ${i} $HOME" && ls -la dir${i} | grep -v x`);
    expect(classifyShellCommand(lines.join('\n'))).toMatchObject({ kind: 'write', reason: overWork });
  });

  it('a 75 KB script is a write without being parsed', () => {
    const script = 'echo x && '.repeat(7_500) + 'true';
    expect(script.length).toBeGreaterThan(75_000);
    expect(classifyShellCommand(script).kind).toBe('write');
    expect(classifyShellCommand(['bash', '-lc', script]).kind).toBe('write');
  });

  it('a working directory longer than PATH_MAX is too complex, for scripts and argv arrays', () => {
    const cwd = '/' + 'abcdefghi/'.repeat(6_000);
    const many = Array.from({ length: 4_000 }, (_, i) => `f${i}`);
    expect(classifyShellCommand(`ls ${many.join(' ')}`, { cwd })).toMatchObject({ kind: 'write', reason: overCwd });
    expect(classifyShellCommand(['cat', ...many], { cwd })).toMatchObject({ kind: 'write', reason: overCwd });
    expect(classifyShellCommand('ls', { cwd: '/' + 'a'.repeat(MAX_SHELL_CWD_LENGTH) })).toMatchObject({ kind: 'write', reason: overCwd });
    expect(classifyShellCommand('ls', { cwd: '/' + 'a'.repeat(MAX_SHELL_CWD_LENGTH - 1) }).kind).toBe('read');
  });

  it('fourteen nested groups with redirections are judged once each: a read', () => {
    const nested = '{ '.repeat(14) + 'cat a' + ' < /dev/null; }'.repeat(14);
    expect(classifyShellCommand(nested).kind).toBe('read');
  });

  it('long but ordinary scripts stay reads', () => {
    const echoes = Array.from({ length: 200 }, (_, i) => `echo "line ${i}: $HOME"`).join('\n');
    expect(classifyShellCommand(echoes).kind).toBe('read');
    const body = Array.from({ length: 400 }, (_, i) => `line ${i}: $(date) \`whoami\` \${USER:-me}`).join('\n');
    expect(classifyShellCommand(`cat <<EOF\n${body}\nEOF`).kind).toBe('read');
    const homes = Array.from({ length: 1_000 }, (_, i) => `ls "$HOME/d${i}"`).join('\n');
    expect(classifyShellCommand(homes).kind).toBe('read');
  });

  it('the here-document line cost is 0 without a here-document, and counts the worst line', () => {
    expect(heredocLineCost('echo $a $b <<< "$c"')).toBe(0);
    expect(heredocLineCost('cat <<EOF\n$a $b\n`c`\nEOF')).toBe(2 * 5);
  });
});
