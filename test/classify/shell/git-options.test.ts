/**
 * git and gh under the allow-list table (issue: fail closed by
 * construction, kinds 3 and 4): the options that write a file or run a
 * program are writes whose reason names them, a dry run of `git push` is no
 * read (its pre-push hook runs), and the everyday read-only options stay
 * reads.
 *
 * Spec: DESIGN.md §5.5 (commands are parsed against the table), §5.6; ASSISTANT_SAFETY.md
 * (reads are never blocked, so a read must be proven read-only).
 */
import { describe, expect, it } from 'vitest';
import { classifyShellCommand } from '../../../src/classify/shell/index.js';

const classify = (command: string) => classifyShellCommand(command, { cwd: '/repo' });

describe('git and gh options that write or run programs', () => {
  it.each([
    ['git log --output=FILE', "'git log --output' writes"],
    ['git show --output=out.patch HEAD', "'git show --output' writes"],
    ['git ls-remote --exec=CMD', "'git ls-remote --exec' runs another program"],
    ['git ls-remote --upload-pack=CMD origin', "'git ls-remote --upload-pack' runs another program"],
    ['git fetch --dry-run --upload-pack=CMD', "'git fetch --upload-pack' runs another program"],
    ['git push --dry-run', "'git push --dry-run' runs another program"],
    ['git push -n origin main', "'git push -n' runs another program"],
    ['git diff --ext-diff', "'git diff --ext-diff' runs another program"],
    ['git log -p --textconv', "'git log --textconv' runs another program"],
    ['git cat-file --filters HEAD:a', "'git cat-file --filters' runs another program"],
    ['git grep --textconv needle', "'git grep --textconv' runs another program"],
    ['git help --web log', "'git help --web' runs another program"],
    ['gh pr view 12 --web', "'gh pr view --web' runs another program"],
  ])('%s is a write: %s', (command, reason) => {
    const result = classify(command);
    expect(result.kind).toBe('write');
    expect(result.reason).toBe(`shell: ${reason}`);
  });

  it('a glob in an option word: in its value it is that option (--output writes); before it, a write naming the word', () => {
    expect(classify('git log --output=/p*')).toMatchObject({ kind: 'write', reason: "shell: 'git log --output' writes" });
    const result = classify('git log --outp?t=/p');
    expect(result.kind).toBe('write');
    expect(result.reason).toContain("'--outp?t=/p' may be an option or an operand");
  });

  it('a dry run of git push with --force is a write but not destructive: nothing is pushed, the hook runs', () => {
    expect(classify('git push --dry-run --force')).toMatchObject({ kind: 'write', destructive: false });
    expect(classify('git push --force')).toMatchObject({ kind: 'write', destructive: true });
  });

  it('a dry run of git fetch stays a read; its --upload-pack does not', () => {
    expect(classify('git fetch --dry-run --prune origin').kind).toBe('read');
    expect(classify('git fetch --dry-run --upload-pack CMD origin').kind).toBe('write');
  });

  it('an option git or gh has that the table leaves out is a write naming it', () => {
    expect(classify('gh auth status --show-token').reason).toBe(
      "shell: 'gh auth status --show-token' is not an option the command table knows to be read-only",
    );
    expect(classify('git log --exec=x').reason).toBe("shell: 'git log --exec' is not an option the command table knows to be read-only");
  });

  it("gh run list's -w is --workflow (a read), gh run view's -w is --web (a browser)", () => {
    expect(classify('gh run list -w ci.yml').kind).toBe('read');
    expect(classify('gh run view 123 -w').kind).toBe('write');
  });
});
