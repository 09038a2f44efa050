/**
 * SQL writes never without a target (issue #24): a statement that names no
 * table, or writes through a function or a program, is in an unknown place.
 *
 * Spec: DESIGN.md §5.1, §5.2 (tables as targets), §5.5.
 */
import { describe, expect, it } from 'vitest';
import { classifySql } from '../../../src/classify/sql/index.js';

describe('SQL writes and their places', () => {
  it.each([
    ['DO $$ BEGIN DELETE FROM orders; END $$', ['?/sql: DoStmt is not a read-only statement']],
    ['SELECT dangerous_fn() FROM orders', ["?/sql: function 'dangerous_fn' is not known to be read-only", 'table:orders']],
    ["COPY orders TO PROGRAM 'curl -d @- x'", ['?/sql: COPY FROM, or TO a file or program, is not a read-only statement', 'table:orders']],
    ["COPY orders FROM '/srv/app/orders.csv'", ['table:orders']],
    ['VACUUM', ['?/sql: VacuumStmt is not a read-only statement']],
    ['VACUUM orders', ['table:orders']],
    ['BEGIN; UPDATE orders SET paid = true WHERE id = 1; COMMIT', ['table:orders']],
    ['COMMIT', ['?/sql: ending a transaction makes its writes durable or undoes them']],
    ['DELETE FROM orders WHERE id = 1; SELECT evil()', ["?/sql: function 'evil' is not known to be read-only", 'table:orders']],
    ['SET search_path TO evil; DELETE FROM orders WHERE id = 1', ['?/sql: VariableSetStmt is not a read-only statement', 'table:orders']],
  ])('%s', (sql, targets) => {
    expect(classifySql(sql)).toMatchObject({ kind: 'write', targets });
  });

  it('a qualified column not proven one (attribute notation) keeps the write on its tables alone', () => {
    expect(classifySql('SELECT o.id FROM orders o')).toMatchObject({ kind: 'write', targets: ['table:orders'] });
  });

  it('SQLite: a function not known to be read-only is an unknown place beside its table', () => {
    expect(classifySql('SELECT my_udf(a) FROM t', { dialect: 'sqlite' })).toMatchObject({
      kind: 'write',
      targets: ["?/sql: function 'my_udf' is not known to be read-only", 'table:t'],
    });
  });

  it('reads are unchanged', () => {
    expect(classifySql('SELECT count(*) FROM orders')).toMatchObject({ kind: 'read', targets: ['table:orders'] });
  });
});
