/**
 * Run by test/classify/parsers.test.ts in a fresh Node process (no vitest
 * setup, so no parser is loaded when it starts): reports, as one line of
 * JSON on stdout, what the classifiers answer before any parser is loaded,
 * what `prepareParsers` loads for a Read, a Bash command and SQL, and, for
 * every row of the shell and SQL test tables, whether the classification
 * the hook makes after `prepareParsers` equals the one made with every
 * parser loaded (the hook never judges with a parser missing).
 */
import { compileShippedCatalog } from '../../src/classify/catalog/index.js';
import { loadAllParsers, loadedParsers, prepareParsers } from '../../src/classify/parsers.js';
import { classifyShellCommand, clearShellMemo } from '../../src/classify/shell/index.js';
import { classifySql, clearSqlMemo } from '../../src/classify/sql/index.js';
import { shellCases } from '../classify/shell/cases.js';
import { postgresCases, sqliteCases } from '../classify/sql/cases.js';

const claude = compileShippedCatalog('claude-code');
const unloaded = {
  bash: claude.classify('Bash', { command: 'ls -la' }, { cwd: '/repo' }),
  postgres: classifySql('SELECT 1'),
  sqlite: classifySql('SELECT 1', { dialect: 'sqlite' }),
  loaded: loadedParsers(),
};
const loadedFor = {
  read: await prepareParsers(() => claude.classify('Read', { file_path: '/repo/a.txt' })),
  bash: await prepareParsers(() => claude.classify('Bash', { command: 'git status && ls src' }, { cwd: '/repo' })),
  sql: await prepareParsers(() => claude.classify('Bash', { command: 'psql -c "select id from orders"' }, { cwd: '/repo' })),
  sqlite: await prepareParsers(() => claude.classify('Bash', { command: "sqlite3 app.db 'select * from t'" }, { cwd: '/repo' })),
};
const afterPrepare = { bash: claude.classify('Bash', { command: 'ls -la' }, { cwd: '/repo' }), postgres: classifySql('SELECT 1') };

type Job = { name: string; classify: () => unknown };
const jobs: Job[] = [
  ...shellCases.map((c) => ({ name: JSON.stringify(c.command), classify: () => classifyShellCommand(c.command, { cwd: '/repo' }) })),
  ...postgresCases.map((c) => ({ name: c.sql, classify: () => classifySql(c.sql) })),
  ...sqliteCases.map((c) => ({ name: c.sql, classify: () => classifySql(c.sql, { dialect: 'sqlite' }) })),
];
const prepared: string[] = [];
for (const job of jobs) {
  await prepareParsers(job.classify);
  prepared.push(JSON.stringify(job.classify()));
}
await loadAllParsers();
clearShellMemo();
clearSqlMemo();
const differing = jobs.filter((job, i) => JSON.stringify(job.classify()) !== prepared[i]).map((job) => job.name);
process.stdout.write(`${JSON.stringify({ unloaded, loadedFor, afterPrepare, jobs: jobs.length, differing })}\n`);
