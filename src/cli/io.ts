/**
 * What every `pulse-safety` command shares: where it writes and how it sets
 * the exit code (`CommandIo`, with the process's own streams as defaults),
 * the exit codes, the error that reports bad input in one line, the
 * package's version, and the reading of a `--catalog` value. One copy each,
 * so the commands word the same problem the same way.
 */
import { readFileSync } from 'node:fs';
import { once } from 'node:events';
import { builtinCatalogs, parseCatalog, type Catalog } from '../classify/catalog/index.js';

/** Where a command writes, and how it sets the exit code (the CLI's own I/O); each defaults to the process's own. */
export interface CommandIo {
  /** Receives the output; a sink that returns `false` is full until `drain` resolves (as a Node stream's `write`). */
  out?: (text: string) => unknown;
  err?: (text: string) => void;
  setExitCode?: (code: number) => void;
  /** Resolves when `out`'s sink can take more after it answered false; default: stdout's `drain` when `out` is stdout, else none. */
  drain?: () => Promise<void>;
}

/** A `CommandIo` with its defaults filled in; `drain` stays undefined for a sink that never says it is full. */
export type CommandSink = Required<Omit<CommandIo, 'drain'>> & { drain: (() => Promise<void>) | undefined };

/** `io` with the process's stdout, stderr and `process.exitCode` where it names none. */
export function withDefaults(io: CommandIo): CommandSink {
  return {
    out: io.out ?? ((text) => process.stdout.write(text)),
    err: io.err ?? ((text) => process.stderr.write(text)),
    setExitCode: io.setExitCode ?? ((code) => (process.exitCode = code)),
    drain: io.drain ?? (io.out === undefined ? () => once(process.stdout, 'drain').then(() => undefined) : undefined),
  };
}

/** Exit codes of `pulse-safety audit` and `catalog`, and of a usage error of any command. */
export const EXIT = { clean: 0, refused: 1, badInput: 2 } as const;

/** A problem with a command's input: reported as one line, exit 2. */
export class InputError extends Error {}

/** The package's version: from the nearest package.json above this module (in `src/` or `dist/src/`); `unknown` when there is none. */
export function packageVersion(): string {
  for (let dir = new URL('.', import.meta.url); ; dir = new URL('..', dir)) {
    try {
      return (JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { version: string }).version;
    } catch {
      if (dir.pathname === '/') return 'unknown';
    }
  }
}

/**
 * The catalog a `--catalog` value names, validated: a shipped catalog's name,
 * or the path of a JSON catalog file.
 * @throws InputError when the file cannot be read or parsed; CatalogError when it does not validate.
 */
export function readCatalog(catalog: string): Catalog {
  if (Object.prototype.hasOwnProperty.call(builtinCatalogs, catalog)) {
    return builtinCatalogs[catalog as keyof typeof builtinCatalogs];
  }
  let text: string;
  try {
    text = readFileSync(catalog, 'utf8');
  } catch (error) {
    throw new InputError(
      `${catalog}: not a shipped catalog (${Object.keys(builtinCatalogs).join(', ')}) and not a readable file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new InputError(`${catalog}: not valid JSON (${(error as Error).message})`);
  }
  return parseCatalog(json, catalog);
}
