/**
 * The shell command table as checked data: the shipped JSON Schema
 * (`src/catalogs/shell-commands.schema.json`) is the one generated from the
 * zod schema, the table points editors at it, and every command the table
 * has a rule for is exercised by at least one case of `cases.ts`.
 *
 * Spec: DESIGN.md §5.5.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { Language, Parser, Query } from 'web-tree-sitter';
import { defaultShellTable, parseShellTable } from '../../../src/classify/shell/index.js';
import { shellTableJsonSchema } from '../../../src/classify/shell/table-schema.js';
import { shellCases } from './cases.js';

/** Commands of the table with no case on purpose, each with why; none today (add a case rather than a name here). */
const EXEMPT: Record<string, string> = {};

const readJson = (name: string): unknown => JSON.parse(readFileSync(new URL(`../../../src/catalogs/${name}`, import.meta.url), 'utf8'));

/** The command names the cases run: each simple command's name in a script (a trusted path by its base name), an argv array's first word. */
async function namesInCases(): Promise<Set<string>> {
  await Parser.init();
  const bash = await Language.load(createRequire(import.meta.url).resolve('tree-sitter-bash/tree-sitter-bash.wasm'));
  const parser = new Parser();
  parser.setLanguage(bash);
  const commandNames = new Query(bash, '(command_name) @name');
  const names = new Set<string>();
  const add = (name: string) => names.add(name.slice(name.lastIndexOf('/') + 1));
  for (const { command } of shellCases) {
    if (Array.isArray(command)) {
      add(command[0] ?? '');
      continue;
    }
    const tree = parser.parse(command)!;
    for (const capture of commandNames.captures(tree.rootNode)) add(command.slice(capture.node.startIndex, capture.node.endIndex));
    tree.delete();
  }
  return names;
}

let namesOnce: Promise<Set<string>> | undefined;

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

  it('every command with a rule has at least one case in cases.ts', async () => {
    const named = await (namesOnce ??= namesInCases());
    const missing = Object.entries(defaultShellTable.commands)
      .filter(([name, rule]) => typeof rule !== 'string' && !named.has(name) && !(name in EXEMPT))
      .map(([name]) => name);
    expect(missing).toEqual([]);
  });

  it('every exempt command is a command of the table that has no case', async () => {
    const named = await (namesOnce ??= namesInCases());
    const stale = Object.keys(EXEMPT).filter((name) => typeof defaultShellTable.commands[name] !== 'object' || named.has(name));
    expect(stale).toEqual([]);
  });
});
