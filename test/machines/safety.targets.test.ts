/**
 * Targets as the machine compares them (machines/safety.targets.ts): the
 * canonical form, "touches", establishment with its bound, and reading a
 * target list totally.
 *
 * Spec: DESIGN.md §5.1, §5.3, §5.4.
 */
import { posix } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  LINKS_OVERFLOW,
  MAX_ESTABLISHED_TARGETS,
  MAX_LINKS,
  MAX_TARGETS_PER_EVENT,
  MAX_TARGET_LENGTH,
} from '../../machines/safety.policy.js';
import {
  ancestorsOf,
  canonicalTarget,
  commonTargets,
  CUT_TARGET_MARK,
  establish,
  isCutTarget,
  isEstablished,
  isUnder,
  isUnknownPlace,
  isUnknownTarget,
  keepLinks,
  MAX_UNKNOWN_HINT_LENGTH,
  readLinks,
  readTargets,
  UNKNOWN_PLACE,
  unknownPlace,
  unknownPlaceOf,
  sameTargets,
  touches,
  touchesAny,
} from '../../machines/safety.targets.js';
import {
  MAX_TARGETS_PER_CALL,
  MAX_TARGET_LENGTH as CLASSIFICATION_MAX_TARGET_LENGTH,
  idTarget,
  pathTarget,
  tableTarget,
} from '../../src/classify/classification.js';

describe('the caps mirror src/classify/classification.ts', () => {
  it('targets per event are the targets per call', () => {
    expect(MAX_TARGETS_PER_EVENT).toBe(MAX_TARGETS_PER_CALL);
  });

  it('the longest target is the same', () => {
    expect(MAX_TARGET_LENGTH).toBe(CLASSIFICATION_MAX_TARGET_LENGTH);
  });
});

describe('canonicalTarget', () => {
  it.each([
    ['/srv/./app//conf/', '/srv/app/conf'],
    ['/srv/x/../app', '/srv/app'],
    ['/..', '/'],
    ['/../etc', '/etc'],
    ['/', '/'],
    ['~/', '~'],
    ['~/a/./b/', '~/a/b'],
    ['~/a/..', '~'],
    ['~/..', '~/..'],
    ['~/../etc', '~/../etc'],
    ['./src/', 'src'],
    ['a/..', '.'],
    ['a/../..', '..'],
    ['../..', '../..'],
    ['~/../..', '~/../..'],
    ['../x/', '../x'],
    ['.', '.'],
  ])('makes the path %s canonical as %s', (raw, canonical) => {
    expect(canonicalTarget(raw)).toBe(canonical);
  });

  it('keeps an id as it is, slashes and dots included', () => {
    expect(canonicalTarget('url=https://x/./y/')).toBe('url=https://x/./y/');
  });

  it('keeps an id whose value is ~/ as it is (a home path only starts with ~/)', () => {
    expect(canonicalTarget(idTarget('dir', '~/'))).toBe('dir=~/');
  });

  it('keeps an id with an empty argument name as it is', () => {
    expect(canonicalTarget(idTarget('', 'a/./b/'))).toBe('=a/./b/');
  });

  it('reads an empty path as . (as path.posix.normalize does), not as ~', () => {
    expect(canonicalTarget('')).toBe(posix.normalize(''));
  });

  it('keeps a table as it is', () => {
    expect(canonicalTarget('table:a/../b')).toBe('table:a/../b');
  });

  it('keeps a URL with a scheme as written, never folded as a relative path (s3://bucket/prefix)', () => {
    expect(canonicalTarget('s3://bucket/a/../b/')).toBe('s3://bucket/a/../b/');
    expect(isUnder('s3://bucket/x', '.')).toBe(false);
    expect(isUnder('s3://bucket/x', 's3://bucket')).toBe(false);
    expect(touches('gs://b/o', 'gs://b/o')).toBe(true);
  });

  it('reads a relative path whose first `=` follows a slash as a path', () => {
    expect(canonicalTarget('dir/./a=b')).toBe('dir/a=b');
  });

  it('cuts a path past MAX_TARGET_LENGTH characters to its first ones and the mark, after making it canonical', () => {
    const canonical = canonicalTarget(`/${'a/'.repeat(400)}`);
    expect(canonical).toHaveLength(MAX_TARGET_LENGTH + 1);
    expect(canonical.endsWith(CUT_TARGET_MARK)).toBe(true);
    expect(isCutTarget(canonical)).toBe(true);
  });

  it('folds a path before the cut: a `..` past the cut still climbs out', () => {
    expect(canonicalTarget(`/repo/${'x'.repeat(600)}/../../etc/passwd`)).toBe('/etc/passwd');
  });

  it('cuts an id to its first MAX_TARGET_LENGTH characters and the mark', () => {
    expect(canonicalTarget(`id=${'x'.repeat(1000)}`)).toBe(`id=${'x'.repeat(MAX_TARGET_LENGTH - 3)}${CUT_TARGET_MARK}`);
  });

  it('keeps a cut id an id when its `=` falls past the cut', () => {
    const cut = canonicalTarget(`${'a'.repeat(600)}=v`);
    expect(cut).toHaveLength(MAX_TARGET_LENGTH + 1);
    expect(isUnder(cut, '.')).toBe(false);
  });

  it('keeps a target of exactly MAX_TARGET_LENGTH characters whole', () => {
    const whole = `/${'a'.repeat(MAX_TARGET_LENGTH - 1)}`;
    expect(canonicalTarget(whole)).toBe(whole);
    expect(isCutTarget(whole)).toBe(false);
  });

  it('is idempotent on cut targets', () => {
    for (const raw of [
      `/${'a/'.repeat(400)}`,
      `/${'b'.repeat(511)}/c`,
      `id=${'x'.repeat(600)}`,
      `${'a'.repeat(600)}=v`,
      `table:${'t'.repeat(600)}`,
      `rel/${'.x/'.repeat(300)}`,
    ]) {
      const cut = canonicalTarget(raw);
      expect(canonicalTarget(cut)).toBe(cut);
    }
  });

  it('is idempotent on the targets the classification makes', () => {
    for (const target of [
      pathTarget('src/../b/', '/repo')!,
      pathTarget('~/x/')!,
      idTarget('reservation_id', ' A1 '),
      tableTarget('users'),
    ]) {
      expect(canonicalTarget(target)).toBe(target);
      expect(canonicalTarget(canonicalTarget(target))).toBe(canonicalTarget(target));
    }
  });
});

describe('isUnder and touches', () => {
  it('a path is under itself', () => {
    expect(isUnder('/a', '/a')).toBe(true);
  });

  it('/a/b is under /a', () => {
    expect(isUnder('/a/b', '/a')).toBe(true);
  });

  it('/ab is not under /a', () => {
    expect(isUnder('/ab', '/a')).toBe(false);
  });

  it('/a is not under /a/b', () => {
    expect(isUnder('/a', '/a/b')).toBe(false);
  });

  it('every absolute path is under /', () => {
    expect(isUnder('/etc/passwd', '/')).toBe(true);
  });

  it('every relative path is under .', () => {
    expect(isUnder('src/app.ts', '.')).toBe(true);
  });

  it('a relative path climbing out of . is not under it', () => {
    expect(isUnder('../x', '.')).toBe(false);
  });

  it('.. is not under . (it climbs out of it)', () => {
    expect(isUnder('..', '.')).toBe(false);
  });

  it('~ is not under . (ls in a project does not reach the home directory)', () => {
    expect(isUnder('~', '.')).toBe(false);
  });

  it('~root/.ssh, ~+ and ~- are nowhere known here: under neither . nor ~, nothing under them', () => {
    for (const target of ['~root/.ssh', '~+/x', '~-']) {
      expect(isUnder(target, '.')).toBe(false);
      expect(isUnder(target, '~')).toBe(false);
      expect(isEstablished(['.', '~', '/'], target)).toBe(false);
    }
    expect(isUnder('~root/.ssh/id', '~root/.ssh')).toBe(false);
  });

  it('a target in a place not known (?/) is under nothing, above nothing, and established by nothing, itself included', () => {
    expect(isUnder('?/.ssh', '.')).toBe(false);
    expect(isUnder('?/.ssh', '?/.ssh')).toBe(false);
    expect(isUnder('?/.ssh/id', '?/.ssh')).toBe(false);
    expect(isEstablished(['?/.ssh', '.', '/'], '?/.ssh')).toBe(false);
    expect(canonicalTarget('?/a/../b')).toBe('?/a/../b');
  });

  it('~/notes is under ~', () => {
    expect(isUnder('~/notes', '~')).toBe(true);
  });

  it('a path climbing above ~ is not under ~', () => {
    expect(isUnder('~/../etc', '~')).toBe(false);
  });

  it('~/.. is not under ~ (it climbs out of it)', () => {
    expect(isUnder('~/..', '~')).toBe(false);
  });

  it('a path climbing above ~ is compared exactly: nothing else is under it', () => {
    expect(isUnder('~/../etc/x', '~/../etc')).toBe(false);
  });

  it('a path climbing above . is compared exactly: nothing else is under it', () => {
    expect(isUnder('../x/y', '../x')).toBe(false);
  });

  it('an absolute path is not under a relative one of the same name, nor the other way', () => {
    expect(isUnder('/src/a', 'src')).toBe(false);
    expect(isUnder('src/a', '/src')).toBe(false);
  });

  it('nothing is under an id but the id itself', () => {
    expect(isUnder('reservation_id=A/x', 'reservation_id=A')).toBe(false);
    expect(isUnder('reservation_id=A', 'reservation_id=A')).toBe(true);
  });

  it('nothing is under a table but the table itself', () => {
    expect(isUnder('table:users/x', 'table:users')).toBe(false);
  });

  it('touches is either way: an ancestor, a descendant, or the same', () => {
    expect(touches('/a', '/a/b')).toBe(true);
    expect(touches('/a/b', '/a')).toBe(true);
    expect(touches('/a/b', '/a/c')).toBe(false);
  });

  it('a write without known targets is touched by any read, even one without targets', () => {
    expect(touchesAny([], [])).toBe(true);
  });

  it('a read without targets touches no write with targets', () => {
    expect(touchesAny([], ['/a'])).toBe(false);
  });

  it('a read touches a write when one of its targets touches one of the write’s', () => {
    expect(touchesAny(['/b', '/a/x'], ['/c', '/a'])).toBe(true);
  });
});

describe('cut targets (longer than MAX_TARGET_LENGTH)', () => {
  const long = (tail: string) => canonicalTarget(`/srv/${'d'.repeat(600)}/${tail}`);

  it('two long targets that differ only past the cut give one cut target', () => {
    expect(long('a.yaml')).toBe(long('b.yaml'));
  });

  it('a cut target is under no cut target, itself included (it stands for every target cut to it)', () => {
    expect(isUnder(long('a.yaml'), long('a.yaml'))).toBe(false);
    expect(touches(long('a.yaml'), long('b.yaml'))).toBe(false);
  });

  it('a cut target is under a whole path above it', () => {
    expect(isUnder(long('a.yaml'), '/srv')).toBe(true);
    expect(isUnder(long('a.yaml'), '/')).toBe(true);
    expect(isUnder('/srv', long('a.yaml'))).toBe(false);
  });

  it('a whole path of MAX_TARGET_LENGTH characters is not above a cut target that shares them', () => {
    const whole = `/${'a'.repeat(MAX_TARGET_LENGTH - 1)}`;
    expect(isUnder(canonicalTarget(`${whole}/x`), whole)).toBe(false);
    expect(isUnder(canonicalTarget(`${whole}x`), whole)).toBe(false);
  });

  it('is established only by a whole path above it, never by itself (nor by another long target cut alike)', () => {
    expect(isEstablished([long('a.yaml')], long('a.yaml'))).toBe(false);
    expect(isEstablished([long('a.yaml')], long('b.yaml'))).toBe(false);
    expect(isEstablished(['/srv'], long('b.yaml'))).toBe(true);
    expect(ancestorsOf(long('a.yaml'))).toEqual(['/', '/srv']);
  });

  it('a cut id or table is established by nothing', () => {
    expect(ancestorsOf(canonicalTarget(`id=${'x'.repeat(600)}`))).toEqual([]);
    expect(isEstablished([canonicalTarget(`table:${'t'.repeat(600)}`)], canonicalTarget(`table:${'t'.repeat(600)}`))).toBe(false);
  });

  it('a read of a cut target is no evidence about a write on it; a read of a directory above both is', () => {
    expect(touchesAny([long('a.yaml')], [long('a.yaml')])).toBe(false);
    expect(touchesAny(['/srv'], [long('a.yaml')])).toBe(true);
  });

  it('the classification cuts alike: a long path, id or table is the machine’s cut target', () => {
    const path = `/srv/${'d'.repeat(600)}/a.yaml`;
    expect(pathTarget(path)).toBe(canonicalTarget(path));
    expect(idTarget('id', 'x'.repeat(600))).toBe(canonicalTarget(`id=${'x'.repeat(600)}`));
    expect(tableTarget('t'.repeat(600))).toBe(canonicalTarget(`table:${'t'.repeat(600)}`));
  });
});

describe('ancestorsOf', () => {
  it('lists an absolute path and every directory above it, root first', () => {
    expect(ancestorsOf('/a/b/c')).toEqual(['/', '/a', '/a/b', '/a/b/c']);
  });

  it('lists a home path under ~', () => {
    expect(ancestorsOf('~/a/b')).toEqual(['~', '~/a', '~/a/b']);
  });

  it('lists a relative path under .', () => {
    expect(ancestorsOf('a/b')).toEqual(['.', 'a', 'a/b']);
  });

  it('lists a root alone', () => {
    expect(ancestorsOf('/')).toEqual(['/']);
    expect(ancestorsOf('.')).toEqual(['.']);
    expect(ancestorsOf('~')).toEqual(['~']);
  });

  it('lists an exact target alone', () => {
    expect(ancestorsOf('reservation_id=A')).toEqual(['reservation_id=A']);
    expect(ancestorsOf('../x')).toEqual(['../x']);
  });

  it('agrees with isUnder on every ancestor', () => {
    for (const target of ['/a/b/c', '~/a/b', 'a/b/c']) {
      for (const ancestor of ancestorsOf(target)) expect(isUnder(target, ancestor)).toBe(true);
    }
  });
});

describe('isEstablished', () => {
  it('nothing is established by an empty list', () => {
    expect(isEstablished([], '/a')).toBe(false);
  });

  it('a target under an established directory is established (DESIGN §5.3)', () => {
    expect(isEstablished(['/srv/app'], '/srv/app/conf/x.yml')).toBe(true);
  });

  it('a directory above an established file is not', () => {
    expect(isEstablished(['/srv/app/conf'], '/srv/app')).toBe(false);
  });

  it('a sibling sharing a prefix is not', () => {
    expect(isEstablished(['/srv/app'], '/srv/application')).toBe(false);
  });

  it('an id is established only by itself', () => {
    expect(isEstablished(['reservation_id=A'], 'reservation_id=A')).toBe(true);
    expect(isEstablished(['reservation_id=A'], 'reservation_id=B')).toBe(false);
  });

  it('answers the same for a list it has seen before (the set is kept per list)', () => {
    const list = ['/a'];
    expect(isEstablished(list, '/a/b')).toBe(true);
    expect(isEstablished(list, '/b')).toBe(false);
  });
});

describe('establish', () => {
  it('returns the same list when nothing is added', () => {
    const list = ['/a'];
    expect(establish(list, [])).toBe(list);
  });

  it('appends new targets, most recent last', () => {
    expect(establish(['/a'], ['/b', '/c'])).toEqual(['/a', '/b', '/c']);
  });

  it('moves a target read again to the end', () => {
    expect(establish(['/a', '/b'], ['/a'])).toEqual(['/b', '/a']);
  });

  it(`keeps at most MAX_ESTABLISHED_TARGETS (${MAX_ESTABLISHED_TARGETS}), dropping the least recently established`, () => {
    const full = Array.from({ length: MAX_ESTABLISHED_TARGETS }, (_, i) => `/t${i}`);
    const next = establish(full, ['/new']);
    expect(next).toHaveLength(MAX_ESTABLISHED_TARGETS);
    expect(next[0]).toBe('/t1');
    expect(next.at(-1)).toBe('/new');
  });

  it('returns the same list when the targets are the whole list, in this order', () => {
    const list = ['/a', '/b'];
    expect(establish(list, ['/a', '/b'])).toBe(list);
  });

  it('below the cap, the handed-on look-up set keeps every earlier target', () => {
    const list = Array.from({ length: MAX_ESTABLISHED_TARGETS - 2 }, (_, i) => `/t${i}`);
    expect(isEstablished(list, '/t0')).toBe(true); // builds the list's set, which establish hands on
    const next = establish(list, ['/new']);
    expect(list.every((target) => isEstablished(next, target))).toBe(true);
  });

  it('at the cap, the handed-on look-up set keeps every target but the one dropped', () => {
    const full = Array.from({ length: MAX_ESTABLISHED_TARGETS }, (_, i) => `/t${i}`);
    expect(isEstablished(full, '/t0')).toBe(true); // builds the list's set, which establish hands on
    const next = establish(full, ['/new']);
    expect(full.slice(1).every((target) => isEstablished(next, target))).toBe(true);
  });

  it('does not change the list it is given', () => {
    const list = ['/a'];
    establish(list, ['/b']);
    expect(list).toEqual(['/a']);
  });

  it('returns the same list when the targets are already the most recent, in this order', () => {
    const list = ['/a', '/b', '/c'];
    expect(establish(list, ['/b', '/c'])).toBe(list);
    expect(establish(list, ['/c', '/b'])).toEqual(['/a', '/c', '/b']);
  });

  it("moves the targets of a read to the end, few or many, with or without the list's look-up set built", () => {
    // The model: the list without the read's targets, then each of them once in the read's order, capped at the most recent.
    const model = (list: readonly string[], targets: readonly string[]) =>
      [...list.filter((target) => !targets.includes(target)), ...new Set(targets)].slice(-MAX_ESTABLISHED_TARGETS);
    const pool = fc.constantFrom(...Array.from({ length: 12 }, (_, i) => `/t${i}`));
    fc.assert(
      fc.property(
        fc.uniqueArray(pool, { maxLength: 12 }),
        fc.array(pool, { maxLength: 8 }),
        fc.boolean(),
        fc.integer({ min: 0, max: MAX_ESTABLISHED_TARGETS - 12 }),
        (distinct, targets, withSet, padding) => {
          // Padded up to the cap (a list is never longer), so the least recent are dropped as well.
          const list = [...Array.from({ length: padding }, (_, i) => `/pad${i}`), ...distinct];
          if (withSet) isEstablished(list, '/none');
          const next = establish(list, targets);
          expect(next).toEqual(model(list, targets));
          expect(next.every((target) => isEstablished(next, target))).toBe(true);
          expect(list.filter((target) => !next.includes(target)).some((target) => isEstablished(next, target))).toBe(false);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('hands its look-up set on: the new list and the old one each answer for themselves', () => {
    const full = Array.from({ length: MAX_ESTABLISHED_TARGETS }, (_, i) => `/t${i}`);
    expect(isEstablished(full, '/t0/x')).toBe(true); // builds the old list's set
    const next = establish(full, ['/new']);
    expect(isEstablished(next, '/new/x')).toBe(true);
    expect(isEstablished(next, '/t0/x')).toBe(false); // dropped from the new list
    expect(isEstablished(full, '/t0/x')).toBe(true); // the old list rebuilds its own
    expect(isEstablished(full, '/new')).toBe(false);
  });
});

describe('readTargets', () => {
  it('reads anything but an array as none', () => {
    for (const raw of [undefined, null, '/a', 3, { 0: '/a', length: 1 }]) {
      expect(readTargets(raw)).toEqual({ targets: [], overflow: false });
    }
  });

  it('skips entries that are not non-empty strings', () => {
    expect(readTargets(['/a', 3, '', null, '/b'])).toEqual({ targets: ['/a', '/b'], overflow: false });
  });

  it('makes targets canonical and drops duplicates, in the order given', () => {
    expect(readTargets(['/b/', '/a', '/b'])).toEqual({ targets: ['/b', '/a'], overflow: false });
  });

  it(`reads only the first MAX_TARGETS_PER_EVENT (${MAX_TARGETS_PER_EVENT}) entries and says there were more`, () => {
    const raw = Array.from({ length: MAX_TARGETS_PER_EVENT + 1 }, (_, i) => `/t${i}`);
    const read = readTargets(raw);
    expect(read.targets).toHaveLength(MAX_TARGETS_PER_EVENT);
    expect(read.overflow).toBe(true);
  });

  it(`exactly MAX_TARGETS_PER_EVENT entries are no overflow`, () => {
    const raw = Array.from({ length: MAX_TARGETS_PER_EVENT }, (_, i) => `/t${i}`);
    expect(readTargets(raw).overflow).toBe(false);
  });

  it('reads an array whose entries throw as none, without throwing', () => {
    const hostile = new Proxy(['/a'], {
      get(target, key) {
        if (key === '0') throw new Error('trap');
        return Reflect.get(target, key);
      },
    });
    expect(readTargets(hostile)).toEqual({ targets: [], overflow: false });
  });

  it('reads a huge array in bounded time: only its first entries are looked at', () => {
    const huge = new Array(10_000_000);
    huge[0] = '/a';
    expect(readTargets(huge)).toEqual({ targets: ['/a'], overflow: true });
  });
});

describe('commonTargets and sameTargets', () => {
  it('keeps the targets every list names, in the first list’s order', () => {
    expect(
      commonTargets([
        ['/b', '/a', '/c'],
        ['/a', '/b'],
        ['/b', '/a', '/x'],
      ]),
    ).toEqual(['/b', '/a']);
  });

  it('leaves out a target that only some of the other lists name', () => {
    expect(commonTargets([['/a', '/b'], ['/a', '/b'], ['/a']])).toEqual(['/a']);
  });

  it('of no lists is none', () => {
    expect(commonTargets([])).toEqual([]);
  });

  it('compares lists as sets', () => {
    expect(sameTargets(['/a', '/b'], ['/b', '/a'])).toBe(true);
    expect(sameTargets(['/a'], ['/a', '/b'])).toBe(false);
    expect(sameTargets(['/a', '/c'], ['/a', '/b'])).toBe(false);
  });
});

describe('unknown places (issue 24)', () => {
  it('unknownPlace builds ?/<hint>, the hint cut to MAX_UNKNOWN_HINT_LENGTH; an empty hint is ?/', () => {
    expect(unknownPlace('$DIR/')).toBe('?/$DIR/');
    expect(unknownPlace('')).toBe(UNKNOWN_PLACE);
    expect(unknownPlace('x'.repeat(500))).toBe(`?/${'x'.repeat(MAX_UNKNOWN_HINT_LENGTH)}`);
    expect(isUnknownPlace(unknownPlace('sh <stdin>'))).toBe(true);
    expect(canonicalTarget(unknownPlace('./a/../b/'))).toBe('?/./a/../b/');
  });

  it('is never equal to, above or under anything, itself included, and has no ancestors', () => {
    const place = unknownPlace('$DIR/');
    for (const other of [place, '/', '.', '~', '?/', 'process:*', '$DIR']) {
      expect(isUnder(place, other)).toBe(false);
      expect(isUnder(other, place)).toBe(false);
      expect(touches(place, other)).toBe(false);
    }
    expect(ancestorsOf(place)).toEqual([]);
    expect(isEstablished([place, '/', '.', '~'], place)).toBe(false);
  });

  it('a target at or under a kept link is an unknown place (isUnknownTarget), and unknownPlaceOf names it', () => {
    expect(isUnknownTarget('repo/up/x', ['repo/up'])).toBe(true);
    expect(isUnknownTarget('repo/up', ['repo/up'])).toBe(true);
    expect(isUnknownTarget('repo/upx', ['repo/up'])).toBe(false);
    expect(isUnknownTarget('repo', ['repo/up'])).toBe(false);
    expect(isUnknownTarget('/srv', undefined)).toBe(false);
    expect(unknownPlaceOf('?/a')).toBe('?/a');
    expect(unknownPlaceOf('repo/up/x')).toBe('?/repo/up/x (through a link)');
  });

  it('readLinks keeps whole canonical paths only, fails closed on overflow or a throwing array', () => {
    expect(readLinks(['repo/./up/', 'table:x', '?/y', 'a=b', '', 3])).toEqual({ links: ['repo/up'], overflow: false });
    const long = `/a/${'x'.repeat(MAX_TARGET_LENGTH)}`;
    expect(readLinks([long]).links).toEqual(['/a']);
    expect(readLinks(Array.from({ length: MAX_TARGETS_PER_EVENT + 1 }, (_, i) => `/l${i}`)).overflow).toBe(true);
    const hostile = new Proxy([], {
      get() {
        throw new Error('no');
      },
    });
    expect(readLinks(hostile)).toEqual({ links: [], overflow: true });
    expect(readLinks('nope')).toEqual({ links: [], overflow: false });
  });

  it('keepLinks appends new links once, skips those under a kept one, and overflows to LINKS_OVERFLOW past MAX_LINKS', () => {
    expect(keepLinks(undefined, ['/a'], false)).toEqual(['/a']);
    const kept = ['/a'];
    expect(keepLinks(kept, ['/a/b'], false)).toBe(kept);
    expect(keepLinks(kept, ['/c'], false)).toEqual(['/a', '/c']);
    expect(keepLinks(kept, [], true)).toBe(LINKS_OVERFLOW);
    const full = Array.from({ length: MAX_LINKS }, (_, i) => `/l${i}`);
    expect(keepLinks(full, ['/more'], false)).toBe(LINKS_OVERFLOW);
    for (const path of ['/x', '~/x', 'x', '.']) expect(isUnknownTarget(path, LINKS_OVERFLOW)).toBe(true);
  });
});

describe('named places (issue 24)', () => {
  const NAMED = [
    'git:/a',
    'git:.',
    'process:node',
    'process:123',
    'service:nginx',
    'container:web',
    'k8s:pod/x',
    'host:user@h:/etc/app.conf',
    'table:t',
  ];

  it('are not paths: kept as written, not folded', () => {
    expect(canonicalTarget('git:/a/../b/')).toBe('git:/a/../b/');
    expect(canonicalTarget('host:h:/a/./b')).toBe('host:h:/a/./b');
    for (const t of NAMED) expect(canonicalTarget(t)).toBe(t);
    expect(isUnder('git:/a', '.')).toBe(false);
    expect(isUnder('process:node', '.')).toBe(false);
  });

  it('compare exactly: git:/a does not establish git:/b nor git:/a/b', () => {
    expect(isUnder('git:/a', 'git:/a')).toBe(true);
    expect(isUnder('git:/b', 'git:/a')).toBe(false);
    expect(isUnder('git:/a/b', 'git:/a')).toBe(false);
    expect(isUnder('host:h:/etc/app.conf', 'host:h:/etc')).toBe(false);
    expect(isEstablished(['git:/a'], 'git:/b')).toBe(false);
  });

  it('<kind>:* is above every <kind>:…, and nothing of another kind', () => {
    for (const t of NAMED) {
      const kind = t.slice(0, t.indexOf(':'));
      expect(isUnder(t, `${kind}:*`)).toBe(true);
      expect(isEstablished([`${kind}:*`], t)).toBe(true);
      expect(touches(`${kind}:*`, t)).toBe(true);
      for (const other of ['git', 'process', 'service', 'container', 'k8s', 'host', 'table'].filter((k) => k !== kind)) {
        expect(isUnder(t, `${other}:*`)).toBe(false);
        expect(isEstablished([`${other}:*`], t)).toBe(false);
      }
    }
    expect(isUnder('process:*', 'process:node')).toBe(false);
    expect(isEstablished(['process:node'], 'process:*')).toBe(false);
  });

  it('k8s:<resource>/* is above every k8s:<resource>/…, and under k8s:*', () => {
    expect(isUnder('k8s:pod/x', 'k8s:pod/*')).toBe(true);
    expect(isUnder('k8s:deployment/x', 'k8s:pod/*')).toBe(false);
    expect(isUnder('k8s:pod/*', 'k8s:*')).toBe(true);
    expect(ancestorsOf('k8s:pod/x')).toEqual(['k8s:*', 'k8s:pod/*', 'k8s:pod/x']);
    expect(ancestorsOf('k8s:pod/*')).toEqual(['k8s:*', 'k8s:pod/*']);
    expect(ancestorsOf('k8s:*')).toEqual(['k8s:*']);
    expect(ancestorsOf('process:node')).toEqual(['process:*', 'process:node']);
    expect(isEstablished(['k8s:pod/*'], 'k8s:pod/x')).toBe(true);
    expect(isEstablished(['k8s:pod/*'], 'k8s:deployment/x')).toBe(false);
  });

  it('isEstablished agrees with isUnder against every ancestor (property)', () => {
    const pool = [...NAMED, 'git:*', 'process:*', 'k8s:*', 'k8s:pod/*', 'k8s:deployment/*', 'k8s:deployment/y', '?/x', '/a', 'a'];
    fc.assert(
      fc.property(fc.subarray(pool), fc.constantFrom(...pool), (established, target) => {
        expect(isEstablished(established, target)).toBe(established.some((e) => isUnder(target, e)));
      }),
    );
  });
});
