/**
 * The parser registry (src/classify/parsers.ts): a classifier whose parser is
 * not loaded answers a write, never throws, and keeps no such answer in its
 * memo; `prepareParsers` loads what one call needs and no more, and a call
 * judged after it is judged as with every parser loaded, for every row of the
 * shell and SQL test tables; the shipped table and catalogs, no longer parsed
 * on load, are what parsing them gives. The registry's unloaded state is
 * seen in a fresh Node process (test/support/parsers-probe.ts): in this one
 * the vitest setup has loaded every parser.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { builtinCatalogs, parseCatalog } from '../../src/classify/catalog/index.js';
import { loadedParsers, PARSER_NAMES } from '../../src/classify/parsers.js';
import { defaultShellTable, parseShellTable } from '../../src/classify/shell/table-schema.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface ProbeReport {
  unloaded: Record<'bash' | 'postgres' | 'sqlite', { kind: string; reason?: string; targets: string[] }> & { loaded: string[] };
  loadedFor: Record<'read' | 'bash' | 'sql' | 'sqlite', string[]>;
  afterPrepare: Record<'bash' | 'postgres', { kind: string }>;
  jobs: number;
  differing: string[];
}

function probe(): ProbeReport {
  const result = spawnSync(process.execPath, ['--import', './test/support/ts-register.mjs', 'test/support/parsers-probe.ts'], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  expect(result.status, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as ProbeReport;
}

describe('parsers loaded on demand', () => {
  const report = probe();

  it('a fresh process has no parser loaded, and each classifier answers a write naming the parser', () => {
    expect(report.unloaded.loaded).toEqual([]);
    expect(report.unloaded.bash).toMatchObject({
      kind: 'write',
      reason: 'shell: the command was not parsed: tree-sitter-bash is not loaded',
    });
    expect(report.unloaded.postgres).toMatchObject({ kind: 'write', reason: 'sql: the PostgreSQL parser is not loaded' });
    expect(report.unloaded.sqlite.kind).toBe('write');
    expect(report.unloaded.sqlite.reason).toMatch(/the SQLite parser is not loaded/);
    for (const answer of [report.unloaded.bash, report.unloaded.postgres, report.unloaded.sqlite]) {
      expect(answer.targets.length).toBeGreaterThan(0); // a write names a place, unknown here
    }
  });

  it('prepareParsers loads nothing for a Read, tree-sitter-bash for a command, libpg-query only when it runs SQL', () => {
    expect(report.loadedFor.read).toEqual([]);
    expect(report.loadedFor.bash).toEqual(['bash']);
    expect(report.loadedFor.sql).toEqual(['postgres']);
    expect(report.loadedFor.sqlite).toEqual(['sqlite']);
  });

  it('no answer judged without its parser is kept in a memo: the same calls are reads once the parsers are loaded', () => {
    expect(report.afterPrepare.bash.kind).toBe('read');
    expect(report.afterPrepare.postgres.kind).toBe('read');
  });

  it('after prepareParsers, every row of the shell and SQL tables is judged as with every parser loaded', () => {
    expect(report.jobs).toBeGreaterThan(1000);
    expect(report.differing).toEqual([]);
  });
});

describe('the shipped data, not parsed on load', () => {
  it('the vitest setup loaded every parser, as the entry points do', () => {
    expect(loadedParsers()).toEqual([...PARSER_NAMES]);
  });

  it('parsing the shipped shell table gives the default table', () => {
    const json: unknown = JSON.parse(readFileSync(new URL('../../src/catalogs/shell-commands.json', import.meta.url), 'utf8'));
    expect(parseShellTable(json)).toEqual(defaultShellTable);
  });

  it('parsing each shipped catalog gives it back unchanged', () => {
    for (const catalog of Object.values(builtinCatalogs)) expect(parseCatalog(catalog)).toEqual(catalog);
  });
});
