/**
 * Real-world SQL statements with the classification DESIGN.md §5.5, §5.1 and
 * §5.6 call for, written out by hand (not produced by the classifier). Shared
 * by test/sql.test.ts.
 */
import type { ToolKind } from '../machines/safety.types.js';
import type { SqlDialect } from '../src/sql.js';

/** One statement or batch and what it must classify as. */
export interface SqlCase {
  dialect: SqlDialect;
  sql: string;
  kind: ToolKind;
  /** Table names, without the `table:` prefix, sorted. */
  tables: string[];
  destructive: boolean;
  /** Why this case is here, when the SQL alone does not say. */
  note?: string;
}

const pg = (sql: string, kind: ToolKind, tables: string[], destructive = false, note?: string): SqlCase => ({
  dialect: 'postgres', sql, kind, tables, destructive, ...(note === undefined ? {} : { note }),
});
const lite = (sql: string, kind: ToolKind, tables: string[], destructive = false, note?: string): SqlCase => ({
  dialect: 'sqlite', sql, kind, tables, destructive, ...(note === undefined ? {} : { note }),
});

export const postgresCases: SqlCase[] = [
  // Reads
  pg('SELECT * FROM users WHERE id = 42', 'read', ['users']),
  pg('select id, email from public.users order by created_at desc limit 10', 'read', ['public.users']),
  pg('SELECT count(*), now(), lower(name) FROM users GROUP BY lower(name)', 'read', ['users']),
  pg('SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.total > 100', 'read', ['customers', 'orders']),
  pg('SELECT * FROM orders WHERE customer_id IN (SELECT id FROM customers WHERE country = \'FR\')', 'read', ['customers', 'orders']),
  pg('SELECT u.id, (SELECT max(created_at) FROM logins l WHERE l.user_id = u.id) FROM users u', 'read', ['logins', 'users']),
  pg('SELECT * FROM users u, LATERAL (SELECT * FROM orders o WHERE o.user_id = u.id LIMIT 3) recent', 'read', ['orders', 'users']),
  pg('WITH recent AS (SELECT * FROM orders WHERE created_at > now() - interval \'1 day\') SELECT count(*) FROM recent', 'read', ['orders'],
    false, 'a CTE name is not a table'),
  pg('WITH users AS (SELECT 1 AS id) SELECT * FROM users JOIN public.users p ON p.id = users.id', 'read', ['public.users'],
    false, 'a schema-qualified name is a table even when a CTE has its name'),
  pg('SELECT "Id" FROM "Accounts"', 'read', ['Accounts'], false, 'a quoted identifier keeps its case'),
  pg('SELECT * FROM Sales.Invoices', 'read', ['sales.invoices'], false, 'unquoted identifiers are folded'),
  pg('SELECT a FROM t1 UNION ALL SELECT b FROM t2', 'read', ['t1', 't2']),
  pg('SELECT table_name FROM information_schema.tables WHERE table_schema = \'public\'', 'read', ['information_schema.tables']),
  pg('SELECT relname, pg_size_pretty(pg_total_relation_size(oid)) FROM pg_catalog.pg_class', 'read', ['pg_catalog.pg_class']),
  pg('SELECT * FROM generate_series(1, 10) AS g(n)', 'read', [], false, 'a function in FROM is not a table'),
  pg('SELECT jsonb_build_object(\'a\', data->>\'a\') FROM events WHERE data @> \'{"k": 1}\'', 'read', ['events']),
  pg('SELECT extract(year FROM created_at), coalesce(name, \'?\'), CASE WHEN a > 0 THEN 1 END FROM t', 'read', ['t']),
  pg('SELECT row_number() OVER (PARTITION BY dept ORDER BY salary DESC) FROM employees', 'read', ['employees']),
  pg('select * from t -- ; drop table x', 'read', ['t'], false, 'the DROP is in a comment'),
  pg('SELECT * FROM t WHERE name = \'\'\'; DROP TABLE t; --\'', 'read', ['t'], false, 'the DROP is in a string literal'),
  pg('SELECT $$; DROP TABLE t; $$ AS x', 'read', [], false, 'the DROP is in a dollar-quoted string'),
  pg('EXPLAIN SELECT * FROM users WHERE id = 1', 'read', ['users']),
  pg('EXPLAIN ANALYZE SELECT * FROM users', 'read', ['users'], false, 'EXPLAIN ANALYZE of a SELECT runs a SELECT'),
  pg('EXPLAIN DELETE FROM t', 'read', ['t'], false, 'without ANALYZE the DELETE is only planned'),
  pg('SHOW search_path', 'read', []),
  pg('VALUES (1, \'a\'), (2, \'b\')', 'read', []),
  pg('TABLE users', 'read', ['users']),
  pg('COPY (SELECT * FROM users) TO STDOUT WITH CSV HEADER', 'read', ['users']),
  pg('BEGIN; SELECT * FROM t; ', 'read', ['t']),

  // Writes through functions
  pg('SELECT setval(\'s\', 1)', 'write', []),
  pg('SELECT nextval(\'s\')', 'write', []),
  pg('SELECT pg_terminate_backend(123)', 'write', []),
  pg('SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE state = \'idle\'', 'write', ['pg_stat_activity']),
  pg('SELECT set_config(\'search_path\', \'x\', false)', 'write', []),
  pg('SELECT pg_advisory_lock(1)', 'write', []),
  pg('SELECT lo_unlink(1234)', 'write', []),
  pg('SELECT archive_user(42)', 'write', [], false, 'a user-defined function is not known to be read-only'),
  pg('SELECT myschema.lower(\'x\')', 'write', [], false, 'only pg_catalog may qualify a builtin'),
  pg('SELECT * FROM users WHERE id = (SELECT nextval(\'ids\'))', 'write', ['users'], false, 'nested in a subquery'),
  pg('SELECT dblink_exec(\'dbname=x\', \'DELETE FROM t\')', 'write', []),
  pg('EXPLAIN SELECT archive_user(1)', 'write', [], false, 'the planner may evaluate a function'),

  // Writes
  pg('WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d', 'write', ['t'], true),
  pg('WITH moved AS (DELETE FROM queue WHERE id < 10 RETURNING *) INSERT INTO archive SELECT * FROM moved', 'write', ['archive', 'queue']),
  pg('WITH orders AS (SELECT 1) DELETE FROM orders', 'write', ['orders'], true, 'the table a DELETE changes is a table, never the CTE of its name'),
  pg('WITH orders AS (SELECT 1 AS id) UPDATE orders SET paid = true WHERE id = 1', 'write', ['orders'], false, 'nor an UPDATE’s'),
  pg('WITH orders AS (SELECT 1 AS id) INSERT INTO orders SELECT * FROM orders', 'write', ['orders'], false, 'nor an INSERT’s'),
  pg('DELETE FROM "billing.invoices" WHERE id = 1', 'write', ['"billing.invoices"'], false, 'one table whose name holds a dot is not billing.invoices'),
  pg('SELECT * FROM "a.b".c JOIN a."b.c" ON true', 'read', ['"a.b".c', 'a."b.c"'], false, 'quoted parts with dots stay apart'),
  pg('EXPLAIN ANALYZE DELETE FROM t', 'write', ['t'], true, 'EXPLAIN ANALYZE runs the DELETE'),
  pg('EXPLAIN (ANALYZE, BUFFERS) UPDATE t SET a = 1 WHERE id = 2', 'write', ['t']),
  pg('EXPLAIN (ANALYZE false) DELETE FROM t', 'read', ['t']),
  pg('DROP TABLE users', 'write', ['users'], true),
  pg('DROP TABLE IF EXISTS app.sessions, app.tokens CASCADE', 'write', ['app.sessions', 'app.tokens'], true),
  pg('DROP SCHEMA staging CASCADE', 'write', [], true),
  pg('DROP DATABASE prod', 'write', [], true),
  pg('DROP INDEX idx_users_email', 'write', [], true),
  pg('TRUNCATE logs', 'write', ['logs'], true),
  pg('TRUNCATE TABLE a, b RESTART IDENTITY', 'write', ['a', 'b'], true),
  pg('DELETE FROM t', 'write', ['t'], true),
  pg('DELETE FROM t WHERE id = 1', 'write', ['t']),
  pg('DELETE FROM orders USING customers WHERE orders.customer_id = customers.id AND customers.banned', 'write', ['customers', 'orders']),
  pg('UPDATE t SET a = 1', 'write', ['t'], true),
  pg('UPDATE t SET a = 1 WHERE id = 7', 'write', ['t']),
  pg('UPDATE accounts SET balance = balance - 100 WHERE id = 1 RETURNING balance', 'write', ['accounts']),
  pg('INSERT INTO users (email) VALUES (\'a@b.c\') ON CONFLICT (email) DO UPDATE SET updated_at = now()', 'write', ['users']),
  pg('INSERT INTO audit SELECT * FROM events WHERE ts < now()', 'write', ['audit', 'events']),
  pg('MERGE INTO stock s USING deliveries d ON s.item = d.item WHEN MATCHED THEN UPDATE SET qty = s.qty + d.qty', 'write', ['deliveries', 'stock']),
  pg('CREATE INDEX CONCURRENTLY idx_users_email ON users (email)', 'write', ['users']),
  pg('CREATE TABLE t2 AS SELECT * FROM t1', 'write', ['t1', 't2']),
  pg('ALTER TABLE users ADD COLUMN age int', 'write', ['users']),
  pg('ALTER TABLE users DROP COLUMN age', 'write', ['users'], true),
  pg('GRANT SELECT ON users TO analyst', 'write', ['users']),
  pg('VACUUM ANALYZE users', 'write', ['users']),
  pg('COPY t TO \'/tmp/x\'', 'write', ['t']),
  pg('COPY t FROM STDIN', 'write', ['t']),
  pg('COPY (DELETE FROM t RETURNING *) TO STDOUT', 'write', ['t'], true),
  pg('SELECT * FROM jobs WHERE state = \'queued\' LIMIT 1 FOR UPDATE SKIP LOCKED', 'write', ['jobs']),
  pg('SELECT * FROM a WHERE id IN (SELECT id FROM b FOR SHARE)', 'write', ['a', 'b']),
  pg('SELECT * INTO backup_users FROM users', 'write', ['backup_users', 'users']),
  pg('CALL refresh_stats()', 'write', []),
  pg('DO $$ BEGIN PERFORM 1; END $$', 'write', []),
  pg('SET search_path TO app', 'write', []),
  pg('LOCK TABLE accounts IN EXCLUSIVE MODE', 'write', ['accounts']),
  pg('REFRESH MATERIALIZED VIEW daily_totals', 'write', ['daily_totals']),
  pg('SELECT 1; DROP TABLE t', 'write', ['t'], true),
  pg('SELECT * FROM t; UPDATE t SET a = 1 WHERE id = 1', 'write', ['t']),
  pg('COMMIT', 'write', []),
  pg('ROLLBACK', 'write', []),
  pg('BEGIN', 'neutral', []),
  pg('SAVEPOINT before_cleanup', 'neutral', []),
];

export const sqliteCases: SqlCase[] = [
  // Reads
  lite('SELECT * FROM users WHERE id = ?', 'read', ['users']),
  lite('SELECT name FROM sqlite_master WHERE type = \'table\'', 'read', ['sqlite_master']),
  lite('SELECT u.name, count(o.id) FROM users u LEFT JOIN orders o ON o.user_id = u.id GROUP BY u.name', 'read', ['orders', 'users']),
  lite('SELECT * FROM Users', 'read', ['users'], false, 'SQLite identifiers are case-insensitive'),
  lite('SELECT * FROM main.t JOIN [Order Items] oi ON oi.t_id = t.id', 'read', ['main.t', 'order items']),
  lite('SELECT * FROM `logs` WHERE level = :level AND ts > @since', 'read', ['logs']),
  lite('SELECT json_extract(payload, \'$.user\') FROM events WHERE date(ts) = date(\'now\')', 'read', ['events']),
  lite('WITH r AS (SELECT * FROM t WHERE a > 1) SELECT count(*) FROM r', 'read', ['t']),
  lite('SELECT * FROM t WHERE id IN (SELECT t_id FROM u)', 'read', ['t', 'u']),
  lite('select * from t -- ; drop table x', 'read', ['t']),
  lite('SELECT * FROM t WHERE name = \'\'\'; DROP TABLE t; --\'', 'read', ['t']),
  lite('SELECT * FROM t /* ; DROP TABLE t; */ WHERE a = 1', 'read', ['t']),
  lite('SELECT * FROM t WHERE a == 1 AND b GLOB \'x*\'', 'read', ['t']),
  lite('EXPLAIN QUERY PLAN SELECT * FROM t WHERE a = 1', 'read', ['t']),
  lite('EXPLAIN DELETE FROM t', 'read', ['t'], false, 'EXPLAIN shows the program, it does not run it'),
  lite('PRAGMA table_info(t)', 'read', ['t']),
  lite('PRAGMA table_info(\'Users\')', 'read', ['users']),
  lite('PRAGMA main.index_list(orders)', 'read', ['main.orders']),
  lite('PRAGMA journal_mode', 'read', []),
  lite('PRAGMA integrity_check', 'read', []),
  lite('SELECT * FROM pragma_table_info(\'t\')', 'read', []),
  lite('BEGIN; SELECT 1', 'read', []),

  // Writes
  lite('PRAGMA journal_mode=WAL', 'write', []),
  lite('PRAGMA foreign_keys = ON', 'write', []),
  lite('PRAGMA user_version(3)', 'write', []),
  lite('PRAGMA wal_checkpoint(TRUNCATE)', 'write', [], false, 'checkpoints the WAL'),
  lite('SELECT * FROM docs WHERE docs MATCH \'x\'', 'write', [], false, 'neither parser reads MATCH: fails closed'),
  lite('PRAGMA optimize', 'write', [], false, 'acts even without a value'),
  lite('SELECT load_extension(\'./evil\')', 'write', []),
  lite('SELECT my_udf(a) FROM t', 'write', ['t']),
  lite('INSERT OR REPLACE INTO settings (key, value) VALUES (\'theme\', \'dark\')', 'write', ['settings']),
  lite('REPLACE INTO settings VALUES (\'k\', \'v\')', 'write', ['settings']),
  lite('INSERT INTO t (a) VALUES (1) ON CONFLICT (a) DO UPDATE SET b = excluded.b', 'write', ['t']),
  lite('ATTACH DATABASE \'other.db\' AS other', 'write', []),
  lite('DETACH DATABASE other', 'write', []),
  lite('DROP TABLE t', 'write', ['t'], true),
  lite('DROP INDEX IF EXISTS idx_t_a', 'write', [], true),
  lite('DELETE FROM t', 'write', ['t'], true),
  lite('DELETE FROM t WHERE id = 1', 'write', ['t']),
  lite('DELETE FROM t RETURNING *', 'write', ['t'], true),
  lite('UPDATE t SET a = 1', 'write', ['t'], true),
  lite('UPDATE t SET a = 1 WHERE id = 1', 'write', ['t']),
  lite('CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, body TEXT)', 'write', ['notes']),
  lite('CREATE INDEX idx ON t(a)', 'write', ['t']),
  lite('ALTER TABLE t ADD COLUMN c TEXT', 'write', ['t']),
  lite('ALTER TABLE t DROP COLUMN c', 'write', ['t'], true),
  lite('WITH old AS (SELECT id FROM t WHERE ts < 5) DELETE FROM t WHERE id IN (SELECT id FROM old)', 'write', ['t']),
  lite('WITH orders AS (SELECT 1) DELETE FROM orders', 'write', ['orders'], true, 'the table a DELETE changes is a table, never the CTE of its name'),
  lite('SELECT * FROM "billing.invoices"', 'read', ['"billing.invoices"'], false, 'one table whose name holds a dot is not billing.invoices'),
  lite('VACUUM', 'write', []),
  lite('SELECT 1; DROP TABLE t', 'write', ['t'], true),
  lite('CREATE TRIGGER tr AFTER INSERT ON t BEGIN DELETE FROM u; END; SELECT 1', 'write', []),
  lite('COMMIT', 'write', []),
  lite('BEGIN IMMEDIATE TRANSACTION', 'neutral', []),
];
