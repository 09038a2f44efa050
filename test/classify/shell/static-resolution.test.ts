/**
 * Paths known only when the command runs, resolved statically (issue #24):
 * variables assigned earlier, find roots, xargs producers, for loops,
 * expansions before comparison, symlinks, cd under shell options. Every
 * dynamic path operand that cannot be resolved is an unknown place, never dropped.
 */
import { describe, expect, it } from 'vitest';
import { classifyShellCommand } from '../../../src/classify/shell/index.js';

const judge = (command: string) => classifyShellCommand(command, { cwd: '/w' });
const targets = (command: string) => judge(command).targets;

describe('variables assigned earlier in the same script', () => {
  it.each([
    ['DIR=/srv/app; rm -rf "$DIR"/', ['/srv/app']],
    ['D=build && rm -rf $D', ['/w/build']],
    ['export D=/x; rm -rf ${D}', ['/x', '?/export D=/x; rm -rf ${D}']], // exporting D is a write of its own,
    ['D=/x; rm -rf "${D:-/y}"', ['/x']],
    ['DIR=/srv; cd "$DIR" && rm -rf x', ['/srv/x']],
    ['D=/a; D+=/b; rm -rf "$D"', ['/a/b']],
    ['D=~/x; rm -rf "$D"', ['~/x']],
    ['if test -e c; then D=/a; rm -rf "$D"; fi', ['/a']],
  ])('%s → %j', (command, expected) => expect(targets(command)).toEqual(expected));

  it.each([
    ['rm -rf "$DIR"/', ['?/$DIR/ (from the environment)']],
    ['if test -e c; then D=/a; fi; rm -rf "$D"', ['?/$D']],
    ['if test -e c; then D=/a; else rm -rf "$D"; fi', ['?/$D']],
    ['(D=/a); rm -rf "$D"', ['?/$D (from the environment)']],
    ['echo | D=/a; rm -rf "$D"', ['?/$D (from the environment)']], // a pipeline's command runs in a subshell
    ['test -e c || D=/a && rm -rf "$D"', ['?/$D']],
    ['D=/a; f() { D=/etc; }; f; rm -rf "$D"', ['?/$D', '?/f']],
    ['D=\'~/x\'; rm -rf "$D"', ['?/$D']],
    ['D="a b"; rm -rf $D', ['?/$D']],
    ['for i in 1 2; do rm -rf "$D"; D=/x; done', ['?/$D']],
    ['D=/a; read D; rm -rf "$D"', ['?/$D']],
    ['declare -i D; D=/a; rm -rf "$D"', ['?/$D']],
    ['D=/a; bash -c \'rm -rf "$D"\'', ['?/$D (from the environment)']],
  ])('%s is an unknown place %j', (command, expected) => {
    const result = judge(command);
    expect(result.kind).toBe('write');
    expect(result.targets).toEqual(expected);
  });
});

describe('find, xargs and for loops', () => {
  it.each([
    ["find ~ -name '*.log' -exec rm -f {} +", ['~']],
    ['find . -delete', ['/w']],
    ['find /srv /tmp -type f -exec rm {} \\;', ['/srv', '/tmp']],
    ['find -exec rm {} +', ['/w']],
    ['find /srv -print0 | xargs -0 rm', ['/srv']],
    ['find /srv | xargs rm', ['/srv', '?/xargs <input> split at blanks']],
    // `ls d` prints the names in d without `d/`: xargs resolves them in the working directory
    ['cd /x && ls d | xargs rm', ['/x', '?/xargs <input> split at blanks']],
    ['cat f | xargs rm', ['?/xargs <input>']],
    ['git ls-files | xargs rm', ['?/xargs <input>']],
    ['find /srv -print0 | xargs -0 rm < list', ['?/xargs <input>']],
    ['for f in src/*.ts; do rm "$f"; done', ['/w/src']],
    ['for f in a b c; do rm $f; done', ['/w/a', '/w/b', '/w/c']],
    ['for f in $(ls); do rm "$f"; done', ['?/$f']],
    ['for f in src/*.ts; do rm "$f"/../x; done', ['?/$f/../x']],
  ])('%s → %j', (command, expected) => {
    const result = judge(command);
    expect(result.kind).toBe('write');
    expect(result.targets).toEqual(expected);
  });

  it('a loop over a glob at the start may give a file named -rf: destructive', () => {
    expect(judge('for f in *; do rm "$f"; done').destructive).toBe(true);
    expect(judge('for f in src/*.ts; do rm "$f"; done').destructive).toBe(false);
  });
});

describe('expansions before comparison', () => {
  it.each([
    ['rm -rf repo/{.,x}.', ['/w', '/w/repo/x.']], // repo/.. is /w
    ['rm -rf repo/.{.,}', ['/w', '/w/repo']],
    ['rm -rf repo/.?', ['?/repo/.?']],
    ['rm -rf repo/.[.]', ['?/repo/.[.]']],
    ['rm -rf repo/.*', ['?/repo/.*']],
    ['rm -rf {~,x}', ['/w/x', '~']],
    ['rm -rf {/,x}etc', ['/etc', '/w/xetc']],
    ['rm src/{a,b}.ts', ['/w/src/a.ts', '/w/src/b.ts']],
    ['rm src/*.ts', ['/w/src']],
    ['shopt -s dotglob; rm -rf repo/*', ['?/repo/*']],
  ])('%s → %j', (command, expected) => expect(targets(command)).toEqual(expected));
});

describe('symbolic links', () => {
  it('a link out of its directory is reported, and paths through it later are unknown', () => {
    const result = judge('ln -s .. repo/up && rm -rf repo/up/x');
    expect(result.targets).toEqual(['/w/repo/up', '?//w/repo/up/x (through a link)']);
    expect(result.links).toEqual(['/w/repo/up']);
  });
  it.each([
    ['ln -s sub/a repo/l', ['/w/repo/l'], undefined],
    ['ln -sf /etc/passwd l', ['/w/l'], ['/w/l']],
    ['ln -s -t d ../x', ['/w/d'], ['/w/d']],
    ['ln -sT ../x repo/l', ['/w/repo/l'], ['/w/repo/l']],
    // One redirection around the list in the tree, judged before it: the link still counts.
    ['ln -s /etc rc && echo x >> rc/a', ['/w/rc', '?//w/rc/a (through a link)'], ['/w/rc']],
    ['ln a b', ['/w/b'], undefined],
    ['ln sub/a b', ['/w/b'], undefined],
  ])('%s → targets %j, links %j', (command, expectedTargets, links) => {
    const result = judge(command);
    expect(result.targets).toEqual(expectedTargets);
    expect(result.links).toEqual(links);
  });
});

describe('hard links and bind mounts: later writes through the new name go elsewhere', () => {
  it.each([
    ['ln /home/u/.bashrc rc', ['/w/rc'], ['/w/rc']],
    ['ln ../x repo/l', ['/w/repo/l'], ['/w/repo/l']],
    ['ln -f -- /etc/passwd p', ['/w/p'], ['/w/p']],
    ['ln /etc/a /etc/b d', ['/w/d'], ['/w/d']],
    ['ln -t d /etc/a', ['/w/d'], ['/w/d']],
    ['ln a repo/l', ['/w/repo/l'], ['/w/repo/l']],
    ['link /home/u/.bashrc rc', ['/w/rc'], ['/w/rc']],
    ['link a b', ['/w/b'], undefined],
    ['cp -l /home/u/.bashrc rc', ['/home/u/.bashrc', '/w/rc'], ['/w/rc']],
    ['cp --link /etc/x y', ['/etc/x', '/w/y'], ['/w/y']],
    ['cp -al /etc d', ['/etc', '/w/d'], ['/w/d']],
    ['cp /etc/x y', ['/etc/x', '/w/y'], undefined],
    ['cp -l a b', ['/w/a', '/w/b'], undefined],
    ['mount --bind /etc /w/e', ['/w/e', '?/mount'], ['/w/e']],
    ['mount -o bind /etc e', ['/w/e', '?/mount'], ['/w/e']],
    ['mount -oro,rbind /etc e', ['/w/e', '?/mount'], ['/w/e']],
    ['mount -B --target e /etc', ['/w/e', '?/mount'], ['/w/e']],
    ['mount /dev/sda1 /mnt', ['?/mount'], undefined],
  ])('%s → targets %j, links %j', (command, expectedTargets, links) => {
    const result = judge(command);
    expect(result.kind).toBe('write');
    expect(result.targets).toEqual(expectedTargets);
    expect(result.links).toEqual(links);
  });

  it('a write through a hard link later in the call is an unknown place', () => {
    expect(judge('ln /home/u/.bashrc rc; echo x >> rc').targets).toEqual(['/w/rc', '?//w/rc (through a link)']);
    expect(judge('cp -l /etc/x y; sed -i s/a/b/ y').targets).toEqual(['/etc/x', '/w/y', '?//w/y (through a link)']);
    expect(judge('mount --bind /etc e; rm e/passwd').targets).toEqual(['/w/e', '?//w/e/passwd (through a link)', '?/mount']);
  });
});

describe('cd under shell options', () => {
  it.each([
    ['shopt -s cdable_vars; cd x; rm -rf y', ['/w/y', '?/y']],
    ['CDPATH=/etc; cd x && rm -rf y', ['?/CDPATH=/etc; cd x && rm -rf y', '?/y']],
    ['CDPATH=/etc; cd ./x && rm -rf y', ['/w/x/y', '?/CDPATH=/etc; cd ./x && rm -rf y']],
    ['shopt -s lastpipe; echo | cd /etc; rm -rf y', ['/etc/y', '/w/y']],
    ['echo | cd /etc; rm -rf y', ['/w/y']],
    ['shopt -s autocd; foo && rm -rf y', ['?/foo', '?/y']],
  ])('%s → %j', (command, expected) => expect(targets(command)).toEqual(expected));
});
