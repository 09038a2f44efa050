/**
 * Catalog targets of any JSON type (issue #24 §5): a declared `id` argument
 * holding a number, a boolean or a string names a target; anything else,
 * a path argument that is not a string, and a write that gives none of its
 * declared target arguments, is an unknown place. Script tools (shell,
 * PowerShell, SQL) never leave a write without a target.
 *
 * Spec: DESIGN.md §5.1 (target strings), §5.2 (targets from the catalog),
 * §5.3 (validated target).
 */
import { describe, expect, it } from 'vitest';
import { builtinCatalogs, compileCatalog } from '../../../src/classify/catalog/index.js';
import { createSessionGuard, type SessionGuard, type ToolCall } from '../../../src/guard/session-guard.js';

const T = 1_700_000_000_000;
const tau = compileCatalog(builtinCatalogs['tau-airline']);

let n = 0;
/** Checks a call on `guard` and records its success when admitted; returns whether it was admitted. */
function run(guard: SessionGuard, call: ToolCall): boolean {
  const withId = { id: `t${(n += 1)}`, ...call };
  const decision = guard.check(withId);
  if (decision.allowed) guard.record(withId, 'success');
  return decision.allowed;
}

describe('tau-airline: ids of any JSON type', () => {
  it.each([
    ['a string', 'ABC123', 'reservation_id=ABC123'],
    ['a string, trimmed', '  ABC123 ', 'reservation_id=ABC123'],
    ['a number', 42, 'reservation_id=42'],
    ['the number written as a string: the same target', '42', 'reservation_id=42'],
    ['a number with a fraction', 4.5, 'reservation_id=4.5'],
    ['a negative number', -7, 'reservation_id=-7'],
    ['a boolean', true, 'reservation_id=true'],
    ['false', false, 'reservation_id=false'],
  ])('cancelling with %s names its target', (_, value, target) => {
    expect(tau.classify('cancel_reservation', { reservation_id: value })).toMatchObject({ kind: 'write', targets: [target] });
  });

  it('a number given in a JSON string of arguments names the same target', () => {
    expect(tau.classify('cancel_reservation', '{"reservation_id": 42.0}').targets).toEqual(['reservation_id=42']);
  });

  it.each([
    ['an object (a query operator)', { $gt: 0 }, '?/reservation_id=<object>'],
    ['null', null, '?/reservation_id=<null>'],
    ['an array inside an array', [['42']], '?/reservation_id=<array>'],
    ['an integer past 2^53 (parsing may have changed it)', 2 ** 53 + 2, '?/reservation_id=<imprecise number>'],
  ])('a write given %s is in an unknown place', (_, value, target) => {
    expect(tau.classify('cancel_reservation', { reservation_id: value })).toMatchObject({ kind: 'write', targets: [target] });
  });

  it('an array of ids names each (all of them must be established)', () => {
    expect(tau.classify('cancel_reservation', { reservation_id: ['41', 42] }).targets).toEqual(['reservation_id=41', 'reservation_id=42']);
  });

  it('an array holding an object names an unknown place beside the ids it names', () => {
    expect(tau.classify('cancel_reservation', { reservation_id: [41, { $ne: 41 }] }).targets).toEqual([
      '?/reservation_id=<object>',
      'reservation_id=41',
    ]);
  });

  it.each([
    ['missing', {}],
    ['an empty string', { reservation_id: '  ' }],
    ['an empty array', { reservation_id: [] }],
  ])('a write whose declared id is %s is in an unknown place', (_, args) => {
    expect(tau.classify('cancel_reservation', args).targets).toEqual(['?/reservation_id=<missing>']);
  });

  it('a write whose arguments do not parse is in an unknown place', () => {
    expect(tau.classify('cancel_reservation', '{not json').targets).toEqual(['?/reservation_id=<missing>']);
  });

  it('a resolve names only what it knows: a number id, never an unknown place', () => {
    expect(tau.classify('get_reservation_details', { reservation_id: 41 }).targets).toEqual(['reservation_id=41']);
    expect(tau.classify('get_reservation_details', { reservation_id: { $gt: 0 } })).toMatchObject({ kind: 'resolve', targets: [] });
    expect(tau.classify('get_reservation_details', { reservation_id: null }).targets).toEqual([]);
    expect(tau.classify('get_reservation_details', {}).targets).toEqual([]);
  });

  it('a tool that declares no targets keeps none (the session-wide rule, the catalog author’s choice)', () => {
    expect(tau.classify('transfer_to_human_agents', { summary: 'x' })).toMatchObject({ kind: 'write', targets: [] });
  });
});

describe('tau-airline through the guard', () => {
  const guard = (): SessionGuard => createSessionGuard({ now: () => T, classify: tau.classify });

  it('after reading reservation 41, cancelling reservation 42 given as a number is refused (unknown-target)', () => {
    const g = guard();
    expect(run(g, { name: 'get_reservation_details', args: { reservation_id: '41' } })).toBe(true);
    const decision = g.check({ id: 'w42', name: 'cancel_reservation', args: { reservation_id: 42 } });
    expect(decision.allowed).toBe(false);
    if (!decision.allowed) expect(decision.error.rule).toBe('unknown-target');
  });

  it('a number id read establishes the string id the write names, and the other way round', () => {
    const g = guard();
    expect(run(g, { name: 'get_reservation_details', args: { reservation_id: 42 } })).toBe(true);
    expect(run(g, { name: 'cancel_reservation', args: { reservation_id: '42' } })).toBe(true);
    const h = guard();
    expect(run(h, { name: 'get_reservation_details', args: { reservation_id: 'ABC' } })).toBe(true);
    expect(run(h, { name: 'cancel_reservation', args: { reservation_id: 'ABC' } })).toBe(true);
  });

  it('after reading reservation 41, a write given a query object is refused', () => {
    const g = guard();
    expect(run(g, { name: 'get_reservation_details', args: { reservation_id: '41' } })).toBe(true);
    expect(g.check({ id: 'wq', name: 'cancel_reservation', args: { reservation_id: { $gt: 0 } } }).allowed).toBe(false);
  });
});

describe('path arguments that are not strings', () => {
  const claude = compileCatalog(builtinCatalogs['claude-code']);

  it.each([
    [42, '?/file_path=<number>'],
    [true, '?/file_path=<boolean>'],
    [null, '?/file_path=<null>'],
    [{ path: '/etc' }, '?/file_path=<object>'],
  ])('Write given file_path %j is in an unknown place', (value, target) => {
    expect(claude.classify('Write', { file_path: value, content: 'x' }).targets).toEqual([target]);
  });

  it('a read given one names nothing', () => {
    expect(claude.classify('Read', { file_path: 42 })).toMatchObject({ kind: 'read', targets: [] });
  });

  it('Write given a string path names it', () => {
    expect(claude.classify('Write', { file_path: '/repo/a.txt', content: 'x' }).targets).toEqual(['/repo/a.txt']);
  });
});

describe('alternative target arguments', () => {
  const gemini = compileCatalog(builtinCatalogs['gemini-cli']);
  const custom = compileCatalog({
    name: 'alternatives',
    tools: { move: { kind: 'write', targets: { from: 'path', to: 'path' } } },
  });

  it('one of several declared arguments given is enough', () => {
    expect(custom.classify('move', { from: '/a' }).targets).toEqual(['/a']);
    expect(custom.classify('move', { from: '/a', to: '/b' }).targets).toEqual(['/a', '/b']);
  });

  it('none of them given: one unknown place naming them all', () => {
    expect(custom.classify('move', {}).targets).toEqual(['?/from|to=<missing>']);
    expect(gemini.classify('write_file', { content: 'x' }).targets).toEqual(['?/file_path=<missing>']);
  });
});

describe('script tools never leave a write without a target', () => {
  const catalog = compileCatalog({
    name: 'scripts',
    tools: {
      sh: { shell: 'command' },
      ps: { powershell: 'script' },
      db: { sql: 'query' },
    },
  });

  it.each([
    ['sh', {}, "?/shell <no 'command'>"],
    ['ps', {}, "?/powershell <no 'script'>"],
  ])('%s without its script argument: a write in an unknown place', (tool, args, target) => {
    expect(catalog.classify(tool, args)).toMatchObject({ kind: 'write', targets: [target] });
  });

  it('a SQL tool without its argument is a write in an unknown place', () => {
    const result = catalog.classify('db', {});
    expect(result.kind).toBe('write');
    expect(result.targets).toHaveLength(1);
    expect(result.targets[0]).toMatch(/^\?\/sql: not a string$/);
  });

  it.each([
    ['ps', { script: 42 }],
    ['db', { query: { text: 'DELETE FROM t' } }],
    ['sh', { command: 42 }],
  ])('%s given a script that is not a string: a write in an unknown place', (tool, args) => {
    const result = catalog.classify(tool, args);
    expect(result.kind).toBe('write');
    expect(result.targets.length).toBeGreaterThan(0);
    expect(result.targets.every((target) => target.startsWith('?/'))).toBe(true);
  });

  it('a read keeps its own targets and adds none', () => {
    expect(catalog.classify('db', { query: 'SELECT * FROM orders' })).toMatchObject({ kind: 'read', targets: ['table:orders'] });
  });
});
