/**
 * The heavy parsers behind the classifiers, loaded on demand: tree-sitter-bash
 * (web-tree-sitter, WebAssembly), PostgreSQL's own parser (libpg-query,
 * WebAssembly) and node-sql-parser's SQLite grammar. Loading them costs far
 * more than judging a call (seconds on a loaded machine), and a coding
 * agent's hook is a fresh process per tool call that mostly needs none of
 * them (a `Read`) or one (a `Bash` command without SQL), so they are not
 * loaded when the classifiers are imported (issue 25 item 7).
 *
 * The classifiers stay synchronous: they take a parser from here
 * (`bashParsing`, `postgresParsing`, `sqliteParsing`), and one that is not
 * loaded answers null, which the classifier turns into a write (fail
 * closed), and notes the miss. So:
 * - the package's entry points load every parser before they are used
 *   (`loadAllParsers`, run by `./eager.ts`, which they import): library
 *   users see a classifier exactly as before;
 * - the hook loads what the call in hand needs (`prepareParsers`): it runs
 *   the classification once, loads the parsers it missed, and again, until
 *   nothing is missed, so the hook's answer never comes from a parser that
 *   was not loaded.
 *
 * A parser that fails to load stays failed: the classifiers then fail closed
 * with a reason naming the failure, and it is not loaded again.
 *
 * Spec: DESIGN.md §5.5 (the parsers); issue 25 item 7 (fast enough to leave on).
 */
import { createRequire } from 'node:module';
import type { Parser, Query } from 'web-tree-sitter';

/** The parsers of this registry. */
export const PARSER_NAMES = ['bash', 'postgres', 'sqlite'] as const;

/** One of `PARSER_NAMES`: `bash` (tree-sitter-bash), `postgres` (libpg-query), `sqlite` (node-sql-parser's SQLite grammar). */
export type ParserName = (typeof PARSER_NAMES)[number];

/** tree-sitter-bash loaded: a parser set to its language, and the query that finds function names. */
export interface BashParsing {
  parser: Parser;
  functionNames: Query;
}

/** libpg-query loaded: its synchronous parse and scan. */
export interface PostgresParsing {
  parseSync: typeof import('libpg-query').parseSync;
  scanSync: typeof import('libpg-query').scanSync;
}

/** node-sql-parser's SQLite grammar loaded: one parser of it. */
export interface SqliteParsing {
  astify(text: string, options: { database: string }): unknown;
}

interface Parsings {
  bash: BashParsing;
  postgres: PostgresParsing;
  sqlite: SqliteParsing;
}

/** Where a parser is: not asked for yet, being loaded, ready, or failed to load (for good). */
type Slot<T> =
  { state: 'absent' } | { state: 'loading'; done: Promise<void> } | { state: 'ready'; value: T } | { state: 'failed'; reason: string };

const slots: { [N in ParserName]: Slot<Parsings[N]> } = {
  bash: { state: 'absent' },
  postgres: { state: 'absent' },
  sqlite: { state: 'absent' },
};

/** Parsers a classifier asked for before they were loaded, since the last `takeMissedParsers`. */
const missed = new Set<ParserName>();

/** Counts every such ask, never reset: a memo keeps no result judged while it grew (see `parserMisses`). */
let missCount = 0;

/** The loaders: each resolves to the parser, or rejects when it cannot load. */
const LOADERS: { [N in ParserName]: () => Promise<Parsings[N]> } = {
  async bash() {
    const { Parser, Language, Query } = await import('web-tree-sitter');
    await Parser.init();
    const language = await Language.load(createRequire(import.meta.url).resolve('tree-sitter-bash/tree-sitter-bash.wasm'));
    const parser = new Parser();
    parser.setLanguage(language);
    return { parser, functionNames: new Query(language, '(function_definition name: (word) @name)') };
  },
  async postgres() {
    const { loadModule, parseSync, scanSync } = await import('libpg-query');
    await loadModule();
    return { parseSync, scanSync };
  },
  async sqlite() {
    const grammar = (await import('node-sql-parser/build/sqlite.js')).default;
    return new grammar.Parser() as SqliteParsing;
  },
};

/** Loads one parser unless it is loaded, loading or failed; resolves when it is ready or failed. Never rejects. */
function loadOne(name: ParserName): Promise<void> {
  const slot = slots[name];
  if (slot.state === 'ready' || slot.state === 'failed') return Promise.resolve();
  if (slot.state === 'loading') return slot.done;
  const done = LOADERS[name]().then(
    (value) => {
      (slots as Record<ParserName, Slot<unknown>>)[name] = { state: 'ready', value };
    },
    (error: unknown) => {
      slots[name] = { state: 'failed', reason: error instanceof Error ? error.message : String(error) };
    },
  );
  slots[name] = { state: 'loading', done };
  return done;
}

/**
 * Loads the parsers named (in parallel), those not loaded yet. Resolves when
 * each is ready or has failed to load; never rejects (a parser that failed
 * makes its classifier fail closed: `parserFailure`).
 */
async function loadParsers(names: Iterable<ParserName>): Promise<void> {
  await Promise.all([...new Set(names)].filter((name) => (PARSER_NAMES as readonly string[]).includes(name)).map(loadOne));
}

/** Loads every parser: what the package's entry points do before a classifier runs (`./eager.ts`). Never rejects. */
export function loadAllParsers(): Promise<void> {
  return loadParsers(PARSER_NAMES);
}

/** The parser `name` when it is loaded; else null, and the miss is noted (unless it failed to load for good). */
function take<N extends ParserName>(name: N): Parsings[N] | null {
  const slot = slots[name] as Slot<Parsings[N]>;
  if (slot.state === 'ready') return slot.value;
  if (slot.state !== 'failed') {
    missed.add(name);
    missCount += 1;
  }
  return null;
}

/** tree-sitter-bash, or null when it is not loaded (the caller fails closed). */
export function bashParsing(): BashParsing | null {
  return take('bash');
}

/** libpg-query, or null when it is not loaded (the caller fails closed). */
export function postgresParsing(): PostgresParsing | null {
  return take('postgres');
}

/** node-sql-parser's SQLite grammar, or null when it is not loaded (the caller fails closed). */
export function sqliteParsing(): SqliteParsing | null {
  return take('sqlite');
}

/** Why parser `name` is not there, for a fail-closed reason: `is not loaded`, or `failed to load (<message>)`. */
export function parserFailure(name: ParserName): string {
  const slot = slots[name];
  return slot.state === 'failed' ? `failed to load (${slot.reason})` : 'is not loaded';
}

/** The parsers that are loaded and ready, in `PARSER_NAMES` order. */
export function loadedParsers(): ParserName[] {
  return PARSER_NAMES.filter((name) => slots[name].state === 'ready');
}

/**
 * How many times a classifier asked for a parser that was not loaded, since
 * the process started. A memo stores no result judged while this grew: such
 * a result is a fail-closed write that a loaded parser may judge otherwise.
 */
export function parserMisses(): number {
  return missCount;
}

/** The parsers asked for and missed since the last call (in `PARSER_NAMES` order); clears the list. */
function takeMissedParsers(): ParserName[] {
  const names = PARSER_NAMES.filter((name) => missed.has(name));
  missed.clear();
  return names;
}

/**
 * Loads the parsers one classification needs, found by running it: `judge`
 * (a classification, synchronous, whose result is dropped) runs once with
 * what is loaded (after `guess`, loaded first in parallel); the parsers it
 * asked for and missed are loaded, and it runs again, until it misses none.
 * After this, the same classification judges with every parser it needs.
 *
 * Classifications are pure, so running one more than once changes nothing;
 * results judged with a parser missing are not memoized (`parserMisses`).
 * Never rejects: what `judge` throws is ignored (the caller's classifier
 * fails closed on its own), and a parser that fails to load is not retried.
 *
 * @param judge the classification of the call in hand.
 * @param guess parsers known to be needed, loaded before the first run.
 * @returns the parsers loaded for it (not those loaded before).
 */
export async function prepareParsers(judge: () => unknown, guess: Iterable<ParserName> = []): Promise<ParserName[]> {
  const before = new Set(loadedParsers());
  await loadParsers(guess);
  for (let round = 0; round <= PARSER_NAMES.length; round++) {
    takeMissedParsers();
    try {
      judge();
    } catch {
      // The classifiers never throw; if one did, the caller's own call fails closed.
    }
    const needed = takeMissedParsers();
    if (needed.length === 0) break;
    await loadParsers(needed);
  }
  return loadedParsers().filter((name) => !before.has(name));
}
