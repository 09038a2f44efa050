/**
 * `pulse-safety catalog`: tool catalogs, the classification data, checked
 * before use.
 *
 * - `pulse-safety catalog schema`: the catalog format as a JSON Schema, for editors;
 * - `pulse-safety catalog check <name|path>`: validates a catalog file (or a
 *   shipped catalog's name) and says how many tools it lists. Exit codes: 0
 *   valid, 2 not readable, not JSON or not valid (one line naming the bad entry).
 */
import type { Command } from 'commander';
import { catalogJsonSchema, compileCatalog } from '../../classify/catalog/index.js';
import { CatalogError } from '../../errors/index.js';
import { printable } from '../../util/printable.js';
import { EXIT, InputError, readCatalog, withDefaults, type CommandIo } from '../io.js';

/** Adds `catalog schema` and `catalog check` to a commander program. */
export function registerCatalogCommand(program: Command, io: CommandIo = {}): Command {
  const sink = withDefaults(io);
  const catalog = program.command('catalog').description('Work with tool catalogs (classification data)').exitOverride();
  catalog
    .command('schema')
    .description('print the catalog format as a JSON Schema, for editors')
    .exitOverride()
    .action(() => {
      sink.out(JSON.stringify(catalogJsonSchema(), null, 2) + '\n');
    });
  catalog
    .command('check')
    .description("validate a catalog file (or a shipped catalog's name) and say what it lists")
    .argument('<name|path>', 'a shipped catalog or a JSON catalog file')
    .exitOverride()
    .action((file: string) => {
      try {
        const listed = readCatalog(file);
        compileCatalog(listed);
        sink.out(`${file}: catalog '${listed.name}' is valid: ${Object.keys(listed.tools).length} tools\n`);
        sink.setExitCode(EXIT.clean);
      } catch (error) {
        if (error instanceof InputError || error instanceof CatalogError) {
          sink.err(`pulse-safety catalog: ${printable(error.message)}\n`);
          sink.setExitCode(EXIT.badInput);
          return;
        }
        throw error;
      }
    });
  return program;
}
