/**
 * The shell command table as checked data: the shipped JSON Schema
 * (`src/catalogs/shell-commands.schema.json`) is the one generated from the
 * zod schema, and the table points editors at it.
 *
 * Spec: DESIGN.md §5.5.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { defaultShellTable, parseShellTable } from '../../../src/classify/shell/index.js';
import { shellTableJsonSchema } from '../../../src/classify/shell/table-schema.js';

const readJson = (name: string): unknown => JSON.parse(readFileSync(new URL(`../../../src/catalogs/${name}`, import.meta.url), 'utf8'));

describe('the shell command table as checked data (DESIGN §5.5)', () => {
  it('the shipped src/catalogs/shell-commands.schema.json is the one generated from the zod schema', () => {
    expect(readJson('shell-commands.schema.json')).toEqual(shellTableJsonSchema());
  });

  it('the shipped table points its editor at the schema, as its first key', () => {
    const shipped = readJson('shell-commands.json') as Record<string, unknown>;
    expect(Object.keys(shipped)[0]).toBe('$schema');
    expect(shipped.$schema).toBe('./shell-commands.schema.json');
  });

  it('a "$schema" key is accepted and left out of the parsed table', () => {
    const parsed = parseShellTable({ $schema: './shell-commands.schema.json', ...defaultShellTable });
    expect(parsed).toEqual(defaultShellTable);
    expect(parsed).not.toHaveProperty('$schema');
  });
});
