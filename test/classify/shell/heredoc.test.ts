/**
 * Here-documents read as bash reads them (DESIGN.md §5.5): the delimiter by
 * bash's quote removal, checked against `/bin/bash` itself; bodies whose end
 * the parser and bash may see on different lines are writes; backticks in an
 * unquoted body are judged. Each payload is first run by `/bin/bash` in a
 * throwaway directory, so the test shows it really runs there.
 */
import { describe, expect, it } from 'vitest';
import { classifyShellCommand } from '../../../src/classify/shell/index.js';
import { heredocDelimiter } from '../../../src/classify/shell/heredoc.js';
import { bashMakes, bashMakesMarker, hasBash } from '../../support/bash-marker.js';

/** Here-documents whose payload (`touch marker`) bash runs, each admitted as a read before. */
const ESCAPES: [string, string][] = [
  ['backticks in an unquoted body', 'cat <<EOF\n`touch marker`\nEOF\n'],
  ['backticks after text in an unquoted body', 'cat <<EOF\nhello `touch marker` world\nEOF\n'],
  ['inner double quotes in the delimiter', 'cat <<E"O"F\nx\nEOF\ntouch marker\nE"O"F\n'],
  ['inner single quotes in the delimiter', "cat <<E''OF\nx\nEOF\ntouch marker\nE''OF\n"],
  ['an ANSI-C quoted delimiter', "cat <<$'EOF'\nx\nEOF\ntouch marker\n$'EOF'\n"],
  ['an ANSI-C quoted delimiter with an escape', "cat <<$'E\\x4fF'\nx\nEOF\ntouch marker\n"],
  ['a backslash-escaped delimiter letter', 'cat <<E\\OF\nx\nEOF\ntouch marker\nE\\OF\n'],
  ['a <<- body whose substitution follows a tab', 'cat <<-EOF\n\t$(touch marker)\n\tEOF\n'],
  ['an end line inside a command substitution', 'echo "$(cat <<EOF\nx\nEOF)"\ntouch marker\nEOF\n)"\n'],
  ['a backslash-newline joining the end line', 'cat <<EOF\n\\\nEOF\ntouch marker\n'],
];

describe('here-document escapes run in bash and are writes', () => {
  it.skipIf(!hasBash).each(ESCAPES)('%s: bash runs the payload', (_name, script) => {
    expect(bashMakesMarker(script)).toBe(true);
  });

  it.each(ESCAPES)('%s: a write', (_name, script) => {
    const result = classifyShellCommand(script);
    expect(result.kind).toBe('write');
  });

  it('the reason names the delimiter as written', () => {
    expect(classifyShellCommand('cat <<E"O"F\nx\nEOF\ntouch m\nE"O"F\n').reason).toBe(
      `shell: the here-document 'E"O"F' may end on another line for bash than for the parser`,
    );
    expect(classifyShellCommand("cat <<$'EOF'\nx\nEOF\ntouch m\n$'EOF'\n").reason).toBe(
      `shell: the here-document delimiter '$'EOF'' is one bash versions or the parser may read differently`,
    );
    // the parser takes `EOF ` for the end line; bash does not
    expect(classifyShellCommand('cat <<EOF\nx\nEOF \ntouch m\n').reason).toBe(
      "shell: the here-document 'EOF' has no end line: bash reads it to the end of the script",
    );
    expect(classifyShellCommand('cat <<EOF\nx\\\nEOF\ntouch m\nEOF\n').reason).toBe(
      "shell: the here-document 'EOF' has a line continuation, which bash joins before looking for its end",
    );
  });

  it('the commands in backticks are judged with their targets', () => {
    const result = classifyShellCommand('cat <<EOF\n`rm -rf ~`\nEOF', { cwd: '/repo' });
    expect({ kind: result.kind, destructive: result.destructive, targets: result.targets }).toEqual({
      kind: 'write',
      destructive: true,
      targets: ['~'],
    });
  });
});

/** Here-documents bash reads as plain text: reads stay reads. */
const LITERAL: [string, string][] = [
  ['a quoted delimiter', "cat <<'EOF'\n`touch marker` $(touch marker)\nEOF\n"],
  ['a double-quoted delimiter', 'cat <<"EOF"\n`touch marker`\nEOF\n'],
  ['a backslash-quoted delimiter', 'cat <<\\EOF\n`touch marker`\nEOF\n'],
  ['a <<- body with tabs', 'cat <<-EOF\n\thello\n\tEOF\n'],
  ['a body piped to a read', "cat <<'EOF' | jq '.a'\n{\"a\": 1}\nEOF\n"],
  ['an unquoted body with plain expansions', 'cat <<EOF\nhome is $HOME, ${USER:-me}\nEOF\n'],
  ['an empty body', 'cat <<EOF\nEOF\n'],
];

describe('here-documents bash reads as text stay reads', () => {
  it.skipIf(!hasBash).each(LITERAL)('%s: bash runs nothing', (_name, script) => {
    expect(bashMakesMarker(script)).toBe(false);
  });

  it.each(LITERAL)('%s: a read', (_name, script) => {
    expect(classifyShellCommand(script).kind).toBe('read');
  });
});

describe('heredocDelimiter: bash quote removal', () => {
  const rows: [string, string, boolean][] = [
    ['EOF', 'EOF', false],
    ["'EOF'", 'EOF', true],
    ['"EOF"', 'EOF', true],
    ['\\EOF', 'EOF', true],
    ['E"O"F', 'EOF', true],
    ["E''OF", 'EOF', true],
    ['E\\OF', 'EOF', true],
    ['"E\\OF"', 'E\\OF', true],
    ['"E\\"OF"', 'E"OF', true],
    ['E\\$OF', 'E$OF', true],
    ['E$x', 'E$x', false],
    ["'A B'", 'A B', true],
  ];

  it.each(rows)('%s is %s (quoted: %s)', (raw, text, quoted) => {
    expect(heredocDelimiter(raw)).toEqual({ text, quoted });
  });

  it.skipIf(!hasBash).each(rows)('%s: bash ends the body at the line %s, and expands it only when unquoted', (raw, text, quoted) => {
    // the body holds a substitution (run only when unquoted); the line after the delimiter runs
    const made = bashMakes(`cat <<${raw} >/dev/null\n$(touch expanded)\n${text}\ntouch marker\n`);
    expect(made.has('marker')).toBe(true);
    expect(made.has('expanded')).toBe(!quoted);
  });

  it.each(["$'EOF'", '$"EOF"', "'EOF", '"EOF', 'E\nF', 'EOF\\'])('%j cannot be known for sure: null', (raw) => {
    expect(heredocDelimiter(raw)).toBeNull();
  });
});

describe('here-documents the parser reads otherwise than bash are writes, even when bash runs nothing', () => {
  it.each([
    // bash: a body ending at `EOF`; the tree waits for a line `E"O"F`
    ['a delimiter quoted inside', 'cat <<E"O"F\n`touch marker`\nEOF\n'],
    // bash: a literal backtick; the tree takes the escaped backticks for words of `cat` and starts the body a line later
    ['escaped backticks starting an unquoted body', 'cat <<EOF\n\\`touch marker\\`\nEOF\n'],
  ])('%s: a write', (_name, script) => {
    expect(classifyShellCommand(script).kind).toBe('write');
  });
});

describe('checks of the delimiter line', () => {
  it.each([
    ['an open quote after the delimiter', 'cat <<EOF; echo "a\nb"\nx\nEOF\n'],
    ['a second here-document on the line', 'cat <<A; cat <<B\na\nA\nb\nB\n'],
    ['a line continuation after the delimiter', 'cat <<EOF \\\n| cat\nx\nEOF\n'],
  ])('%s: a write', (_name, script) => {
    expect(classifyShellCommand(script).kind).toBe('write');
  });

  it('a comment with a quote after the delimiter is still read', () => {
    expect(classifyShellCommand("cat <<'EOF' # it is fine\nx\nEOF\n").kind).toBe('read');
  });
});

describe('nodes compared by identity', () => {
  it('a redirected group is judged once: fourteen nested groups with input redirections stay a read', () => {
    const nested = '{ '.repeat(14) + 'cat a' + ' < /dev/null; }'.repeat(14);
    const result = classifyShellCommand(nested, { cwd: '/repo' });
    expect({ kind: result.kind, targets: result.targets }).toEqual({ kind: 'read', targets: ['/dev/null', '/repo/a'] });
  });
});

/**
 * Backticks inside a parameter expansion (`${x:-`cmd`}`): tree-sitter-bash
 * reads them as a word or regex, bash runs them. Each is a write naming an
 * unknown place (the parse is not trusted), plus the targets of what runs.
 */
describe('backticks inside a parameter expansion are judged', () => {
  const SEEN: [string, string][] = [
    ['${x:-`…`}', 'echo ${x:-`touch marker`}'],
    ['"${x:-`…`}"', 'echo "${x:-`touch marker`}"'],
    ['${x:=`…`}', 'echo ${x:=`touch marker`}'],
    ['${x:+`…`}', 'x=1; echo ${x:+`touch marker`}'],
    ['${x/a/`…`}', 'x=a; echo ${x/a/`touch marker`}'],
    ['${x#`…`}', 'x=1; echo ${x#`touch marker`}'],
    ['${x:-${y:-`…`}}', 'echo ${x:-${y:-`touch marker`}}'],
    ['an unquoted here-document body', 'cat <<EOF\n${x:-`touch marker`}\nEOF\n'],
  ];
  it.skipIf(!hasBash).each(SEEN)('%s: bash runs the payload', (_name, script) => {
    expect(bashMakesMarker(script)).toBe(true);
  });

  const cwd = '/home/u/app';
  const judged = (command: string) => {
    const result = classifyShellCommand(command, { cwd });
    return { kind: result.kind, targets: result.targets, destructive: result.destructive };
  };

  it.each([
    ['echo ${x:-`rm -rf /home/u/.ssh`}', ['/home/u/.ssh'], true],
    ['echo "${x:-`rm -rf /home/u/.ssh`}"', ['/home/u/.ssh'], true],
    ['echo ${x:=`rm a`}', ['/home/u/app/a'], false],
    ['echo ${x:+`rm a`}', ['/home/u/app/a'], false],
    ['echo ${x/a/`rm b`}', ['/home/u/app/b'], false],
    ['echo ${x#`rm b`}', ['/home/u/app/b'], false],
    ['echo ${x:-${y:-`rm b`}}', ['/home/u/app/b'], false],
    ['cat <<EOF\n${x:-`rm -rf /etc`}\nEOF', ['/etc'], true],
  ] as const)('%j: a write to what runs and an unknown place', (command, targets, destructive) => {
    expect(judged(command)).toEqual({ kind: 'write', targets: [...targets, `?/${command.replaceAll('\n', ' ')}`], destructive });
  });

  it('escaped backticks inside the backticks are unescaped for the inner script; a cd inside does not leak', () => {
    expect(judged('echo ${x:-`echo \\`rm z\\``}').targets).toEqual(['/home/u/app/z', '?/echo ${x:-`echo \\`rm z\\``}']);
    expect(judged('x=${y:-`cd /tmp && rm q`}; rm r').targets).toEqual(['/home/u/app/r', '/tmp/q', expect.stringMatching(/^\?\//)]);
  });

  it('backticks in a comment or a quoted here-document stay text', () => {
    expect(judged('echo # ${x:-`rm a`}')).toEqual({ kind: 'read', targets: [], destructive: false });
    expect(judged("cat <<'EOF'\n${x:-`rm a`}\nEOF")).toEqual({ kind: 'read', targets: [], destructive: false });
  });
});
