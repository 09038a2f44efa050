/**
 * The `pulse-safety` command line: the program and its run. Each command
 * lives in `commands/` (`audit`, `catalog`, `export`, `serve` and `demo`,
 * `mcp-proxy`, `hook`), what they share in `io.ts`.
 *
 * Exit codes: 0 done (help and version included), 1 something refused (see
 * each command), 2 bad input or a usage error (one line, never a stack
 * trace); 70 an internal error, set by `bin.ts` (a bug: please report it
 * with the input).
 */
// Every parser loaded before this entry's classifiers are used (`classify/parsers.ts`).
import '../classify/eager.js';
import { Command, CommanderError } from 'commander';
import { registerAuditCommand } from './commands/audit.js';
import { registerCatalogCommand } from './commands/catalog.js';
import { registerExportCommand } from './commands/export.js';
import { registerServeCommand } from './commands/serve.js';
import { registerMcpProxyCommand } from './commands/mcp-proxy.js';
import { registerHookCommand } from './commands/hook.js';
import { EXIT, packageVersion, withDefaults, type CommandIo } from './io.js';

export { EXIT } from './io.js';

/**
 * Builds the `pulse-safety` program. `out` and `err` receive the output
 * (default: stdout and stderr); `setExitCode` receives the exit code.
 */
export function buildProgram(io: CommandIo = {}): Command {
  const sink = withDefaults(io);
  const program = new Command('pulse-safety')
    .version(packageVersion(), '-V, --version', 'print the version')
    .description("A structural safety gate for LLM agents' tool calls: audit transcripts against the rules.")
    .exitOverride()
    .configureOutput({ writeOut: sink.out, writeErr: sink.err });
  registerAuditCommand(program, sink);
  registerCatalogCommand(program, sink);
  registerExportCommand(program, sink);
  registerServeCommand(program, sink);
  registerMcpProxyCommand(program, sink);
  registerHookCommand(program, sink);
  return program;
}

/** Runs the CLI on `argv` (without node and script); resolves to the exit code. */
export async function main(argv: string[], io: CommandIo = {}): Promise<number> {
  let code = 0;
  const program = buildProgram({ ...io, setExitCode: (c) => (code = c) });
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      // help and version exit 0; usage errors exit 2, as bad input.
      return error.exitCode === 0 ? 0 : EXIT.badInput;
    }
    throw error;
  }
  return code;
}
