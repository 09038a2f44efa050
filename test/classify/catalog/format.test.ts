/**
 * Catalog format 2 (DESIGN §5.1, §5.2, §5.6, §5.7): rule types, targets,
 * destructive and self-verifying marks, failure markers, MCP annotations,
 * validation of bad catalogs, the JSON Schema, and `--catalog auto`'s choice.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  builtinCatalogs,
  catalogJsonSchema,
  classifyCall,
  compileCatalog,
  createCallClassifier,
  parseCatalog,
  pickCatalog,
  type Catalog,
} from '../../../src/classify/catalog/index.js';
import { CatalogError } from '../../../src/errors/index.js';

function catalogError(input: unknown): CatalogError {
  try {
    parseCatalog(input);
  } catch (error) {
    if (error instanceof CatalogError) return error;
    throw error;
  }
  throw new Error('expected a CatalogError');
}

const catalog = (tools: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ name: 't', tools, ...extra });

describe('rule types', () => {
  it('a static kind in object form gives that kind', () => {
    expect(createCallClassifier(catalog({ a: { kind: 'read' } }))('a', {}).kind).toBe('read');
  });

  it('a keyed rule tries exact cases before patterns', () => {
    const classify = createCallClassifier(catalog({ a: { argument: 'op', cases: { get_all: 'write' }, patterns: { 'get_.*': 'read' } } }));
    expect(classify('a', { op: 'get_all' }).kind).toBe('write');
    expect(classify('a', { op: 'get_one' }).kind).toBe('read');
  });

  it('a pattern is anchored to the whole value', () => {
    const classify = createCallClassifier(catalog({ a: { argument: 'op', patterns: { get: 'read' } } }));
    expect(classify('a', { op: 'get' }).kind).toBe('read');
    expect(classify('a', { op: 'get; delete' }).kind).toBe('write');
    expect(classify('a', { op: 'forget' }).kind).toBe('write');
  });

  it('a keyed rule without a match takes its fallback kind', () => {
    const classify = createCallClassifier(catalog({ a: { argument: 'op', cases: { x: 'write' }, fallback: 'read' } }));
    expect(classify('a', { op: 'anything' }).kind).toBe('read');
  });

  it('a keyed rule whose argument is missing is a write even with a fallback', () => {
    const classify = createCallClassifier(catalog({ a: { argument: 'op', cases: { x: 'read' }, fallback: 'read' } }));
    expect(classify('a', {}).kind).toBe('write');
  });

  it('a value longer than 1,024 characters is never matched against a pattern', () => {
    const classify = createCallClassifier(catalog({ a: { argument: 'op', patterns: { 'a*': 'read' } } }));
    expect(classify('a', { op: 'a'.repeat(1024) }).kind).toBe('read');
    expect(classify('a', { op: 'a'.repeat(1025) }).kind).toBe('write');
  });

  it('a shell rule parses the command its argument holds', () => {
    const classify = createCallClassifier(catalog({ sh: { shell: 'cmd' } }));
    expect(classify('sh', { cmd: 'ls -la' }).kind).toBe('read');
    expect(classify('sh', { cmd: 'ls && ./cleanup.sh' }).kind).toBe('write');
  });

  it('a shell rule without its argument is a write', () => {
    expect(createCallClassifier(catalog({ sh: { shell: 'cmd' } }))('sh', {}).kind).toBe('write');
  });

  it('a SQL rule parses its argument in the dialect named', () => {
    const classify = createCallClassifier(catalog({ q: { sql: 'query', dialect: 'sqlite' } }));
    expect(classify('q', { query: 'PRAGMA table_info(orders)' }).kind).toBe('read');
    expect(classify('q', { query: 'DELETE FROM orders' })).toMatchObject({ kind: 'write', destructive: true, targets: ['table:orders'] });
  });

  it('an annotated tool is a read only when trusted and read-only', () => {
    const classify = createCallClassifier(
      catalog({
        trusted: { annotations: { readOnlyHint: true }, trusted: true },
        untrusted: { annotations: { readOnlyHint: true } },
      }),
    );
    expect(classify('trusted', {}).kind).toBe('read');
    expect(classify('untrusted', {})).toMatchObject({ kind: 'write', destructive: true });
  });

  it('a trusted write is destructive unless it says destructiveHint: false', () => {
    const classify = createCallClassifier(
      catalog({
        safe: { annotations: { readOnlyHint: false, destructiveHint: false }, trusted: true },
        unsaid: { annotations: { readOnlyHint: false }, trusted: true },
      }),
    );
    expect(classify('safe', {}).destructive).toBe(false);
    expect(classify('unsaid', {}).destructive).toBe(true);
  });

  it('runtime MCP annotations classify tools the catalog does not list; the catalog wins for those it lists', () => {
    const compiled = compileCatalog(catalog({ listed: 'write' }), {
      annotations: { listed: { readOnlyHint: true }, search: { readOnlyHint: true } },
      trusted: true,
    });
    expect(compiled.classify('search', {}).kind).toBe('read');
    expect(compiled.classify('listed', {}).kind).toBe('write');
    expect(compiled.knows('search')).toBe(true);
  });
});

describe('targets, destructive, self-verifying, failure markers', () => {
  it('path targets are normalized and made absolute against the cwd argument', () => {
    const classify = createCallClassifier(catalog({ edit: { kind: 'write', targets: { file: 'path' }, cwd: 'dir' } }));
    expect(classify('edit', { file: 'src/../lib/a.ts', dir: '/repo' }).targets).toEqual(['/repo/lib/a.ts']);
  });

  it("without a cwd argument, the caller's context gives the working directory", () => {
    const classify = createCallClassifier(catalog({ edit: { kind: 'write', targets: { file: 'path' } } }));
    expect(classify('edit', { file: 'a.ts' }, { cwd: '/repo' }).targets).toEqual(['/repo/a.ts']);
    expect(classify('edit', { file: 'a.ts' }).targets).toEqual(['a.ts']);
  });

  it('id targets are <argument>=<value>, and an array argument gives several targets', () => {
    const classify = createCallClassifier(catalog({ get: { kind: 'resolve', targets: { reservation_id: 'id', paths: 'path' } } }));
    expect(classify('get', { reservation_id: ' ABC123 ', paths: ['/b', '/a', 7] }).targets).toEqual(['/a', '/b', 'reservation_id=ABC123']);
  });

  it('a tool marked destructive makes its writes destructive, never its reads', () => {
    const classify = createCallClassifier(
      catalog({ drop: { kind: 'write', destructive: true }, peek: { kind: 'read', destructive: true } }),
    );
    expect(classify('drop', {}).destructive).toBe(true);
    expect(classify('peek', {}).destructive).toBe(false);
  });

  it('selfVerifying and failure markers are reported per tool', () => {
    const compiled = compileCatalog(
      catalog({ set: { kind: 'write', selfVerifying: true, failure: ['REFUSED'] } }, { failure: ['fatal:'] }),
    );
    expect(compiled.isSelfVerifying('set')).toBe(true);
    expect(compiled.isSelfVerifying('other')).toBe(false);
    expect(compiled.failureMarkers('set')).toEqual(['fatal:', 'REFUSED']);
  });

  it('an unknown tool is a write that says why', () => {
    expect(createCallClassifier(catalog({}))('nope', {})).toMatchObject({
      kind: 'write',
      targets: ['?/nope <not in the catalog>'],
      destructive: false,
      reason: expect.stringContaining("'nope' is not in catalog 't'"),
    });
  });

  it("classifyCall gives the Pulse catalog's kind with targets and destructive", () => {
    expect(classifyCall('pulse_query', {})).toEqual({ kind: 'resolve', targets: [], destructive: false });
  });
});

describe('validation of catalog format 2', () => {
  it('an unknown rule type names the entry', () => {
    const error = catalogError(catalog({ a: { python: 'code' } }));
    expect(error.path).toEqual(['tools', 'a']);
  });

  it('two rule types on one tool are refused', () => {
    expect(catalogError(catalog({ a: { kind: 'read', sql: 'q' } })).message).toContain('has kind and sql');
  });

  it('a rule with neither a kind nor a rule type is refused', () => {
    expect(catalogError(catalog({ a: { targets: { p: 'path' } } })).message).toContain(
      'needs exactly one of kind, argument, shell, powershell, sql, annotations',
    );
  });

  it('a pattern that is not a regular expression names the pattern', () => {
    const error = catalogError(catalog({ a: { argument: 'op', patterns: { '(unclosed': 'read' } } }));
    expect(error.message).toContain('not a valid regular expression');
    expect(error.path).toEqual(['tools', 'a', 'patterns', '(unclosed']);
  });

  it('a pattern that could take exponential time is refused', () => {
    const error = catalogError(catalog({ a: { argument: 'op', patterns: { '(a+)+b': 'read' } } }));
    expect(error.message).toContain('could take exponential time');
  });

  it('a repeated group of alternatives is refused (exponential although its star height is one)', () => {
    expect(catalogError(catalog({ a: { argument: 'op', patterns: { '(a|a)*b': 'read' } } })).message).toContain(
      'a repeated group of alternatives',
    );
  });

  it('an unrepeated group of alternatives is accepted', () => {
    expect(createCallClassifier(catalog({ a: { argument: 'op', patterns: { '(get|list)_.*': 'read' } } }))('a', { op: 'get_x' }).kind).toBe(
      'read',
    );
  });

  it('keyed parts without "argument" name the missing argument', () => {
    expect(catalogError(catalog({ a: { patterns: { x: 'read' } } })).path).toEqual(['tools', 'a', 'argument']);
  });

  it('a dialect without sql, or trusted without annotations, is refused', () => {
    expect(catalogError(catalog({ a: { kind: 'read', dialect: 'sqlite' } })).message).toContain('only applies with "sql"');
    expect(catalogError(catalog({ a: { kind: 'read', trusted: true } })).message).toContain('only applies with "annotations"');
  });

  it('an unknown target type is refused', () => {
    expect(catalogError(catalog({ a: { kind: 'read', targets: { p: 'file' } } })).path).toEqual(['tools', 'a', 'targets', 'p']);
  });

  it('an unknown SQL dialect is refused', () => {
    expect(catalogError(catalog({ a: { sql: 'q', dialect: 'oracle' } })).path).toEqual(['tools', 'a', 'dialect']);
  });
});

describe('the JSON Schema of the format', () => {
  it('the shipped src/catalogs/catalog.schema.json is the one generated from the zod schema', () => {
    const shipped = JSON.parse(readFileSync(new URL('../../../src/catalogs/catalog.schema.json', import.meta.url), 'utf8'));
    expect(shipped).toEqual(catalogJsonSchema());
  });

  it('every shipped catalog points its editor at the schema', () => {
    for (const shipped of Object.values(builtinCatalogs)) expect(shipped.$schema).toBe('./catalog.schema.json');
  });
});

describe('pickCatalog (--catalog auto)', () => {
  it('picks the catalog that lists the most distinct tool names', () => {
    // Copilot CLI's PascalCase hooks name its bash and view Bash and Read too: a tie the earlier claude-code wins, and says.
    expect(pickCatalog(['Read', 'Bash', 'Read', 'mcp__x__y'])).toEqual({ name: 'claude-code', known: 2, total: 3, tiedWith: ['copilot'] });
    expect(pickCatalog(['Read', 'Bash', 'Glob', 'mcp__x__y'])).toEqual({ name: 'claude-code', known: 3, total: 4, tiedWith: [] });
    expect(pickCatalog(['bash', 'view', 'create'])).toEqual({ name: 'copilot', known: 3, total: 3, tiedWith: [] });
    expect(pickCatalog(['Shell', 'Read', 'Delete'])).toEqual({ name: 'cursor', known: 3, total: 3, tiedWith: [] });
    expect(pickCatalog(['run_shell_command', 'read_file'])).toMatchObject({ name: 'gemini-cli', known: 2 });
    expect(pickCatalog(['get_reservation_details', 'cancel_reservation'])).toMatchObject({ name: 'tau-airline', known: 2 });
  });

  it('falls back to pulse when no catalog knows any name', () => {
    expect(pickCatalog(['frobnicate'])).toEqual({ name: 'pulse', known: 0, total: 1, tiedWith: [] });
    expect(pickCatalog([])).toEqual({ name: 'pulse', known: 0, total: 0, tiedWith: [] });
  });

  it('on a tie picks the strictest candidate, whatever the order, and names the others', () => {
    const permissive: Catalog = { name: 'permissive', tools: { files_read: 'read', files_write: 'read' } };
    const strict: Catalog = { name: 'strict', tools: { files_read: 'read', files_write: 'write' } };
    const names = ['files_read', 'files_write', 'other'];
    expect(pickCatalog(names, { permissive, strict })).toEqual({ name: 'strict', known: 2, total: 3, tiedWith: ['permissive'] });
    expect(pickCatalog(names, { strict, permissive })).toEqual({ name: 'strict', known: 2, total: 3, tiedWith: ['permissive'] });
    // A catalog-wide fallback admits unlisted tools by their arguments' words: Pulse's loses a tie to one without.
    // (qwen-code, a fork of Gemini CLI, lists run_shell_command too; equally strict, the earlier gemini-cli wins.)
    expect(pickCatalog(['run_shell_command', 'pulse_control'])).toMatchObject({ name: 'gemini-cli', tiedWith: ['pulse', 'qwen-code'] });
    // Shipped catalogs: gemini-cli, codex and qwen-code all list read_file; equally strict, the earlier wins, and the tie is said.
    expect(pickCatalog(['read_file'])).toEqual({ name: 'gemini-cli', known: 1, total: 1, tiedWith: ['codex', 'qwen-code'] });
  });
});

describe("a catalog's own shell command table", () => {
  it('replaces the shipped table for its shell tools', () => {
    const classify = createCallClassifier(
      catalog(
        { sh: { shell: 'cmd' } },
        { commands: { commands: { deploy: { read: true } }, trustedDirectories: [], nullDevices: [], variables: {} } },
      ),
    );
    expect(classify('sh', { cmd: 'deploy' }).kind).toBe('read');
    expect(classify('sh', { cmd: 'ls' }).kind).toBe('write');
  });

  it('is checked beyond its schema: an alias to no command names the entry', () => {
    const error = catalogError(
      catalog({}, { commands: { commands: { ll: 'nonesuch' }, trustedDirectories: [], nullDevices: [], variables: {} } }),
    );
    expect(error.message).toContain('commands.ll');
  });
});

describe('a call naming more targets than a call may', () => {
  it('keeps one past the cap, so the gate refuses the write instead of judging a cut list', () => {
    const names = Array.from({ length: 40 }, (_, i) => `a${String(i).padStart(2, '0')}`);
    const classify = createCallClassifier(catalog({ sh: { shell: 'cmd' } }));
    const result = classify('sh', { cmd: `rm -rf ${names.join(' ')} ~` }, { cwd: '/repo' });
    expect(result.targets).toHaveLength(33);
  });
});
