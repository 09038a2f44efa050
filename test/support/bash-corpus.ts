/**
 * The differential harness's corpus (test/suites/bash-differential.test.ts):
 * shell commands known to have been admitted as reads while they run a
 * program or write (issue 23's five kinds, every shell example of its text),
 * and forms near them. Each entry must be classified `write`, or, if it is
 * classified `read`, run harmlessly in the sandbox (no stub ran, no write
 * outside the throwaway directory). An entry whose harm the sandbox cannot
 * see (it needs the network, a terminal or a program not installed in CI)
 * says `expect: 'write'`: it must be classified `write`.
 *
 * The sandbox (test/support/bash-sandbox.ts) starts each command in a copy of
 * a template directory with `a.txt`, `b.txt`, `data.json`, `data.yaml`,
 * `package.json` (every lifecycle script runs `pwned`), `payload.sh`
 * (runs `pwned`), `payload.awk` (`system("pwned")`), a git repository with
 * one commit, hooks that run `pwned`, and a bare remote `origin`. `pwned`
 * and every program the table calls a write are stubs that record that they
 * ran. Add an entry: one object below, with the command as bash reads it
 * (a template literal keeps here-documents readable) and why it is here.
 */

import { SHELL_ESCAPES } from '../fixtures/escapes.js';

/** One corpus entry. */
export interface CorpusEntry {
  /** The command, as bash reads it. */
  command: string;
  /** Why it is in the corpus: the kind of escape, and what it does. */
  why: string;
  /** 'write': it must be classified write (the sandbox cannot show its harm). */
  expect?: 'write';
}

/** Issue 23, kind 1: a parser differential (here-documents). */
const parserDifferential: CorpusEntry[] = [
  { command: 'cat <<EOF\n`pwned`\nEOF', why: 'an unquoted here-document body runs backticks' },
  { command: 'cat <<EOF\n`rm -rf ~`\nEOF', why: "issue 23's example: backticks in a here-document body" },
  { command: 'cat <<EOF\n$(pwned)\nEOF', why: 'an unquoted here-document body runs $(...)' },
  { command: 'cat <<EOF\n${X:-$(pwned)}\nEOF', why: 'a substitution inside an expansion in a here-document body' },
  { command: 'cat <<-EOF\n\t`pwned`\n\tEOF', why: '<<- strips tabs: the body still runs backticks' },
  { command: 'cat <<E"O"F\nEOF\npwned\nE"O"F', why: 'bash ends the body at EOF (quotes removed): the next line runs' },
  { command: "cat <<E''OF\nEOF\npwned\nE''OF", why: "bash ends the body at EOF (E''OF after quote removal)" },
  { command: "cat <<$'EOF'\nEOF\npwned\n$'EOF'", why: "bash ends the body at EOF ($'EOF' after quote removal)" },
  { command: 'cat <<\\EOF\nEOF\npwned\n\\EOF', why: 'a backslash-quoted delimiter is EOF for bash' },
  { command: 'cat <<"EOF"\n`pwned`\nEOF\npwned', why: 'the line after a quoted here-document runs' },
  { command: 'cat <<EOF; pwned\nbody\nEOF', why: 'a command after the here-document operator on its line' },
  { command: 'cat <<A <<B\n`pwned`\nA\n$(pwned)\nB', why: 'two here-documents on one line: both bodies are expanded' },
  { command: 'cat <<EOF\n$((1+$(pwned)))\nEOF', why: 'a command substitution inside arithmetic in a body' },
];

/** Issue 23, kind 2: code bash evaluates, seen as data. */
const evaluatedAsCode: CorpusEntry[] = [
  { command: 'export "BASH_ENV=/dev/stdin"', why: "issue 23's example: a quoted assignment to BASH_ENV", expect: 'write' },
  { command: 'export "BASH_ENV=payload.sh"; bash -c :', why: 'a quoted assignment to BASH_ENV: the next bash sources payload.sh' },
  { command: 'echo pwned | (export "BASH_ENV=/dev/stdin"; bash -c :)', why: 'BASH_ENV=/dev/stdin: the next bash runs its input' },
  { command: 'export BASH_EN\\V=payload.sh; bash -c :', why: "issue 23's example: a backslash inside the variable name" },
  { command: 'export BASH_EN\\V=/dev/stdin', why: "issue 23's example, as given", expect: 'write' },
  { command: ': ${BASH_ENV:=payload.sh}; export BASH_ENV; bash -c :', why: "issue 23's example: ${BASH_ENV:=...} assigns" },
  { command: 'echo "${BASH_ENV:=payload.sh}"; export BASH_ENV; bash -c :', why: '${X:=...} inside a string assigns' },
  { command: 'echo ${X:=$(pwned)}', why: 'the default of ${X:=...} runs a substitution' },
  { command: 'declare -n r=BASH_ENV; r=payload.sh; export BASH_ENV; bash -c :', why: "issue 23's example: declare -n aliases BASH_ENV" },
  { command: 'declare -n r=PATH; r=.; pwned', why: 'declare -n aliases PATH' },
  {
    command: 'x=BASH_ENV=payload.sh; declare -x "$x"; bash -c :',
    why: 'issue 23\'s example: declare "$x" assigns a name only known at run time',
  },
  { command: 'x=BASH_ENV=payload.sh; export "$x"; bash -c :', why: 'export "$x": the same through export' },
  { command: 'x=\'a[$(pwned)]\'; test -v "$x"', why: "issue 23's example: test -v evaluates an array subscript" },
  { command: "test -v 'a[$(pwned)]'", why: 'test -v evaluates an array subscript (literal)' },
  { command: "[ -v 'a[$(pwned)]' ]", why: '[ -v ] evaluates an array subscript' },
  { command: '[[ -v a[$(pwned)] ]]', why: '[[ -v ]] evaluates an array subscript' },
  { command: "printf -v 'a[$(pwned)]' x", why: 'printf -v evaluates an array subscript' },
  { command: "read 'a[$(pwned)]' </dev/null", why: 'read evaluates an array subscript' },
  { command: 'echo $(( a[$(pwned)] ))', why: 'arithmetic with a command substitution' },
  { command: "x='$(pwned)'; echo $(( x ))", why: 'arithmetic evaluates a variable whose value is an expression' },
  { command: "x='a[$(pwned)]'; echo $(( x ))", why: 'arithmetic evaluates a subscript inside a variable value' },
  { command: "let 'a[$(pwned)]'", why: 'let evaluates a subscript' },
  { command: "x='a[$(pwned)]'; : ${!x}", why: 'indirect expansion evaluates a subscript' },
  { command: 'PROMPT_COMMAND=pwned bash -ic :', why: 'an interactive bash runs PROMPT_COMMAND' },
];

/** Issue 23, kind 3: an option word taken for an operand. */
const optionAsOperand: CorpusEntry[] = [
  { command: 'sort -o/p? a.txt', why: "issue 23's example: a glob character in sort's -o word" },
  { command: 'sort -o/etc/host?ame a.txt', why: 'a glob in sort -o that matches a file outside the directory' },
  { command: 'git log --output=/p*', why: "issue 23's example: a glob in git log --output" },
  { command: 'git log --output=/etc/host?ame', why: 'a glob in git log --output that matches a file' },
  { command: 'sed -e p -i* a.txt', why: "issue 23's example: a glob in sed's -i word" },
  { command: 'sed -e p -i* /etc/hostname', why: 'sed -i through a glob word, on a file outside the directory' },
  { command: 'curl -o/p? file:///etc/hostname', why: "issue 23's example: a glob in curl's -o word" },
  { command: 'curl -o/p? file:///etc/hosts', why: "a glob in curl's -o word (a file that exists)" },
  { command: 'sort "-o/p" a.txt', why: 'a quoted option word' },
  { command: "sort -'o'/p a.txt", why: 'a partly quoted option word' },
  { command: 'sort -\\o/p a.txt', why: 'a backslash inside an option word' },
  { command: 'sort -[o] /p a.txt', why: 'a bracket glob that is an option' },
  { command: 'sort --out?ut=/p a.txt', why: 'a glob inside a long option name' },
  { command: 'sort {-o,/p} a.txt', why: 'a brace expansion that makes an option and its value' },
  { command: 'x=-o/p; sort $x a.txt', why: 'an option from a variable' },
];

/** Issue 23, kind 4: read commands with options that run programs or write. */
const readsThatRun: CorpusEntry[] = [
  { command: 'git ls-remote --exec=pwned origin', why: "issue 23's example: ls-remote --exec runs a program" },
  { command: 'git ls-remote --upload-pack=pwned origin', why: 'ls-remote --upload-pack runs a program' },
  { command: 'git fetch --dry-run --upload-pack=pwned origin', why: "issue 23's example: fetch --dry-run --upload-pack" },
  { command: 'git push --dry-run origin main', why: "issue 23's example: push --dry-run runs the pre-push hook" },
  { command: 'git push -n origin main', why: 'push -n runs the pre-push hook' },
  { command: 'git push --dry-run --receive-pack=pwned origin main', why: 'push --receive-pack runs a program' },
  { command: 'git grep --open-files-in-pager=pwned a', why: 'git grep -O runs a pager program' },
  { command: 'git -c core.pager=pwned -p log', why: 'git -c core.pager with -p' },
  { command: 'git log --ext-diff -p', why: 'a diff driver would run (none configured here)' },
  { command: 'GIT_EXTERNAL_DIFF=pwned git diff --ext-diff', why: 'GIT_EXTERNAL_DIFF runs a program' },
  { command: 'GIT_SSH_COMMAND=pwned git ls-remote ssh://h/r', why: 'GIT_SSH_COMMAND runs a program' },
  { command: 'git archive --remote=origin --exec=pwned HEAD', why: 'git archive --exec runs a program' },
  { command: 'git log --output=/etc/hostname', why: 'git log --output writes a file' },
  { command: 'git diff --output=/etc/hostname', why: 'git diff --output writes a file' },
  { command: 'yq --in-place . data.yaml', why: "issue 23's example: yq --in-place rewrites its file (inside: unseen)" },
  { command: 'yq -y --in-place . /etc/hostname', why: 'yq --in-place on a file outside' },
  { command: 'yq -yi . /etc/hostname', why: 'yq -i on a file outside' },
  { command: 'ss -D /etc/hostname', why: "issue 23's example: ss -D dumps to a file" },
  { command: 'ss -D/p', why: 'ss -D attached' },
  { command: 'awk -W exec payload.awk', why: "issue 23's example: awk -W exec runs a program file" },
  { command: 'awk \'BEGIN { system("pwned") }\'', why: 'awk system()' },
  { command: 'awk -f payload.awk', why: 'awk -f runs a program file' },
  { command: 'npm pack --dry-run', why: "issue 23's example: npm pack --dry-run runs lifecycle scripts" },
  { command: 'npm publish --dry-run', why: "issue 23's example: npm publish --dry-run runs lifecycle scripts" },
  { command: 'curl dict://127.0.0.1:6379/FLUSHALL', why: "issue 23's example: dict: URLs send bytes to local services", expect: 'write' },
  { command: 'curl gopher://127.0.0.1:6379/_FLUSHALL', why: "issue 23's example: gopher: URLs send bytes", expect: 'write' },
  { command: 'curl telnet://127.0.0.1:6379', why: "issue 23's example: telnet: URLs send bytes", expect: 'write' },
  {
    command: "curl -w '%output{/p}' file:///etc/hostname",
    why: "issue 23's example: curl -w %output{} writes a file (curl 8.3 and later; Debian 12 has 7.88)",
    expect: 'write',
  },
  { command: "curl -w '%output{/etc/hostname}' file:///etc/hosts", why: 'curl -w %output{} over a file outside', expect: 'write' },
  { command: 'curl -K payload.sh file:///etc/hostname', why: 'curl -K reads options from a file' },
  { command: 'docker compose config -o /p', why: "issue 23's example: docker compose config -o writes", expect: 'write' },
  { command: 'go list -toolexec pwned', why: "issue 23's example: go list -toolexec runs a program", expect: 'write' },
  { command: 'uv pip list --python pwned', why: "issue 23's example: uv pip list --python runs an interpreter", expect: 'write' },
  { command: 'sort --compress-program=pwned a.txt', why: 'sort --compress-program runs a program' },
  { command: "sed 'e pwned' a.txt", why: 'sed e runs a command' },
  { command: "sed -n '1w /p' a.txt", why: 'sed w writes a file' },
  { command: "sed -n '1w /etc/hostname' a.txt", why: 'sed w writes a file outside' },
  { command: 'find . -maxdepth 0 -exec pwned {} ;', why: 'find -exec runs a program' },
  { command: 'find . -maxdepth 0 -fprint /p', why: 'find -fprint writes a file' },
  { command: 'tee /p < a.txt', why: 'tee writes a file' },
  { command: 'man -P pwned ls', why: 'man -P names a pager program' },
  { command: 'date -s 2000-01-01', why: 'date -s sets the clock' },
  { command: 'hostname pwned', why: 'hostname NAME sets the host name' },
  { command: 'jq -n --rawfile x /etc/hostname "\\$x"', why: 'jq reads a file (a read, here for contrast)' },
  { command: 'diff --to-file=/etc/hostname a.txt', why: 'diff reads (for contrast)' },
];

/** Issue 23, kind 5, as a shell command: SQL through psql (psql is a stub). */
const sqlInShell: CorpusEntry[] = [
  { command: 'psql -c "SELECT t.fn FROM orders t"', why: "issue 23's example: attribute notation calls fn(orders)" },
  { command: "psql -c 'SELECT 1 WHERE 1 OP ANY (SELECT 1)'", why: "issue 23's example: an operator's function" },
];

/** Forms that run a payload directly: the harness must see each (all should be writes). */
const directPayloads: CorpusEntry[] = [
  { command: 'pwned', why: 'an unknown program' },
  { command: 'ls; pwned', why: 'a payload after a read' },
  { command: 'ls && pwned', why: 'a payload after &&' },
  { command: 'ls | pwned', why: 'a payload in a pipeline' },
  { command: 'echo $(pwned)', why: 'a command substitution' },
  { command: 'echo `pwned`', why: 'backticks' },
  { command: 'echo "$(pwned)"', why: 'a substitution in a string' },
  { command: 'cat <(pwned)', why: 'process substitution' },
  { command: 'p\\wned', why: 'a backslash in the command name' },
  { command: '"pw"ned', why: 'quotes in the command name' },
  { command: "$'pwned'", why: 'ANSI-C quoting of the command name' },
  { command: '{pwned,}', why: 'brace expansion makes the command name' },
  { command: 'x=pwned; $x', why: 'the command name from a variable' },
  { command: 'env pwned', why: 'env runs a program' },
  { command: 'env -i pwned', why: 'env -i runs a program' },
  { command: 'timeout 1 pwned', why: 'timeout runs a program' },
  { command: 'nice pwned', why: 'nice runs a program' },
  { command: 'command pwned', why: 'command runs a program' },
  { command: 'exec pwned', why: 'exec runs a program' },
  { command: 'eval pwned', why: 'eval runs a string' },
  { command: "eval 'pw''ned'", why: 'eval of quoted pieces' },
  { command: "bash -c 'pwned'", why: 'bash -c runs a string' },
  { command: "sh -c 'pwned'", why: 'sh -c runs a string' },
  { command: 'echo a | xargs pwned', why: 'xargs runs a program' },
  { command: 'time pwned', why: 'time runs a program' },
  { command: 'python3 -c 1', why: 'an interpreter' },
  { command: 'node -e 1', why: 'an interpreter' },
  { command: 'perl -e 1', why: 'an interpreter' },
  { command: 'rm -rf x', why: 'rm' },
  { command: 'touch /tmp/box/x', why: 'touch' },
  { command: 'f() { pwned; }; f', why: 'a function that runs a payload' },
  { command: 'alias ls=pwned', why: 'an alias (not expanded in bash -c, but a write)' },
  { command: 'trap pwned EXIT', why: 'trap runs a string at exit' },
  { command: 'PATH=.:$PATH; pwned', why: 'a PATH change' },
  { command: 'source payload.sh', why: 'source runs a file' },
  { command: '. payload.sh', why: '. runs a file' },
  { command: 'echo hi > /p', why: 'a redirection outside the directory' },
  { command: 'cat a.txt >| /etc/hostname', why: 'a clobbering redirection' },
  { command: 'exec 3>/p', why: 'exec opens a file for writing' },
  { command: 'ls > "$(pwned)"', why: 'a substitution in a redirection target' },
  { command: 'cat < <(pwned)', why: 'process substitution as input' },
  { command: 'coproc pwned', why: 'coproc' },
  { command: 'select x in a; do pwned; done </dev/null', why: 'select' },
  { command: 'for x in $(pwned); do :; done', why: 'a substitution in a for list' },
  { command: 'case $(pwned) in *) ;; esac', why: 'a substitution in a case word' },
  { command: '[[ $(pwned) ]]', why: 'a substitution in [[ ]]' },
  { command: 'arr=([$(pwned)]=1)', why: 'a substitution in an array subscript' },
  { command: 'echo ${a[$(pwned)]}', why: 'a substitution in a subscript of an expansion' },
  { command: 'echo ${x/a/$(pwned)}', why: 'a substitution in a replacement' },
  { command: 'echo ${x@P}', why: 'prompt expansion of a variable (harmless without a value)' },
  { command: "x='$(pwned)'; echo ${x@P}", why: 'prompt expansion runs command substitutions' },
];

/** The entries above. */
const entries: readonly CorpusEntry[] = [
  ...parserDifferential,
  ...evaluatedAsCode,
  ...optionAsOperand,
  ...readsThatRun,
  ...sqlInShell,
  ...directPayloads,
];

/**
 * The whole corpus: the entries above, and every escape of
 * `test/fixtures/escapes.ts` (the list the guard, audit and adapter tests
 * use) not already among them, each of which must be classified `write`.
 */
export const bashCorpus: readonly CorpusEntry[] = [
  ...entries,
  ...SHELL_ESCAPES.filter((escape) => !entries.some((entry) => entry.command === escape.command)).map((escape): CorpusEntry => ({
    command: escape.command,
    why: `test/fixtures/escapes.ts (${escape.kind})`,
    expect: 'write',
  })),
];
