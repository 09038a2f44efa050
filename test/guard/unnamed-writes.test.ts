/**
 * Writes whose place nobody named fail closed (issue 27, found by a new user's
 * trial): a tool the catalog does not list, a classifier that throws or
 * answers no kind, and a relative path that spells a named place or an id are
 * unknown places, never admitted by an unrelated read; and a misspelt record
 * option is refused instead of dropping a safety check.
 */
import { describe, expect, it } from 'vitest';
import { createCallClassifier, createSessionGuard, type SessionGuard } from '../../src/index.js';

const catalog = {
  name: 'unnamed-writes-test',
  tools: {
    get_order: { kind: 'read', targets: { order_id: 'id' } },
    read_file: { kind: 'read', targets: { path: 'path' } },
    write_file: { kind: 'write', targets: { path: 'path' } },
    query_db: { sql: 'query' },
  },
} as const;

/** A successful read of `name` with `args`. */
function read(guard: SessionGuard, id: string, name: string, args: object): void {
  expect(guard.check({ id, name, args }).allowed).toBe(true);
  guard.record({ id, name }, 'success');
}

describe('a write whose place nobody named', () => {
  it('a tool the catalog does not list is a write on an unknown place: an unrelated read never admits it', () => {
    const classify = createCallClassifier(catalog);
    const targets = classify('delete_everything', { path: '/' }).targets;
    expect(targets).toHaveLength(1);
    expect(targets[0]!.startsWith('?/')).toBe(true);
    const guard = createSessionGuard({ classify, onWarning: () => {} });
    read(guard, '1', 'get_order', { order_id: 'A1' });
    const decision = guard.check({ id: '2', name: 'delete_everything', args: { path: '/' } });
    expect(decision.allowed).toBe(false);
    expect(decision.allowed === false && decision.error.rule).toBe('unknown-target');
  });

  it('a classifier that throws, or answers no kind, gives a write on an unknown place', () => {
    for (const classify of [
      (name: string) => {
        if (name === 'get_order') return { kind: 'read' as const, targets: ['order_id=A1'], destructive: false };
        throw new Error('boom');
      },
      (name: string) =>
        name === 'get_order'
          ? { kind: 'read' as const, targets: ['order_id=A1'], destructive: false }
          : { kind: 'maybe' as never, targets: [], destructive: false },
    ]) {
      const guard = createSessionGuard({ classify });
      read(guard, '1', 'get_order', { order_id: 'A1' });
      const decision = guard.check({ id: '2', name: 'rm_rf', args: { path: '/' } });
      expect(decision.allowed).toBe(false);
      expect(decision.allowed === false && decision.error.rule).toBe('unknown-target');
    }
  });

  it('a relative path with no working directory never spells a table or an id', () => {
    const classify = createCallClassifier(catalog);
    for (const path of ['table:users', './table:users', 'order_id=A1', 'process:*']) {
      // A read of it establishes nothing; a write to it is on an unknown place.
      expect(classify('read_file', { path }).targets, path).toEqual([]);
      const [target] = classify('write_file', { path }).targets;
      expect(target!.startsWith('?/'), path).toBe(true);
    }
    expect(classify('read_file', { path: 'table:users' }, { cwd: '/repo' }).targets).toEqual(['/repo/table:users']);
    const guard = createSessionGuard({ classify });
    read(guard, '1', 'read_file', { path: 'table:users' });
    expect(guard.check({ id: '2', name: 'query_db', args: { query: 'delete from users' } }).allowed).toBe(false);
  });

  it('a misspelt record option is refused, and the session is unchanged', () => {
    const guard = createSessionGuard({ classify: createCallClassifier(catalog) });
    read(guard, '1', 'get_order', { order_id: 'A1' });
    const before = guard.getPersistedSnapshot();
    expect(() => guard.record({ id: '1', name: 'get_order' }, 'error', { possibleApplied: true } as never)).toThrow(
      /record: options\.possibleApplied is not an option/,
    );
    expect(guard.getPersistedSnapshot()).toEqual(before);
    expect(() => createCallClassifier(catalog, { trustd: true } as never)).toThrow(/options\.trustd is not an option/);
  });
});
