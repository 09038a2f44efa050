/**
 * `pulse-safety export [--config <file>] [--out <dir>]`: writes the charts of
 * every machine listed in `stately.config.json` (`exportCharts`): its config
 * as JSON, Graphviz DOT, SVG and Mermaid.
 */
import { existsSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { exportCharts } from '../../charts/index.js';
import { withDefaults, type CommandIo } from '../io.js';

/**
 * Adds `export [--config <file>] [--out <dir>]` to a commander program. The
 * config defaults to `stately.config.json` in the current working directory
 * (never the installed package's own), and the charts go to its `outDir`,
 * relative to the config's folder. It prints each file written; when there
 * is no config, or on any other failure, it prints one line and sets exit
 * code 2. `io` defaults to stdout, stderr, `process.exitCode` and
 * `process.cwd()`.
 */
export function registerExportCommand(program: Command, io: CommandIo & { cwd?: () => string } = {}): Command {
  const { out, err, setExitCode } = withDefaults(io);
  const cwd = io.cwd ?? (() => process.cwd());
  return program
    .command('export')
    .description(
      'write each machine of stately.config.json as its config in JSON (what createMachine accepts), Graphviz DOT, SVG and Mermaid',
    )
    .option('-c, --config <file>', 'the config listing the machines (default: ./stately.config.json)')
    .option('-o, --out <dir>', "output folder (default: the config's outDir, relative to the config)")
    .action(async (options: { config?: string; out?: string }) => {
      const here = cwd();
      const configPath = options.config === undefined ? join(here, 'stately.config.json') : resolve(here, options.config);
      if (options.config === undefined && !existsSync(configPath)) {
        err(`pulse-safety export: no stately.config.json in ${here}; run it in the folder that has one, or pass --config <file>\n`);
        setExitCode(2);
        return;
      }
      try {
        const outDir = options.out === undefined ? {} : { outDir: resolve(here, options.out) };
        const written = await exportCharts(configPath, outDir);
        for (const file of written) out(`wrote ${relative(here, file) || file}\n`);
      } catch (error) {
        err(`pulse-safety export: ${(error as Error).message}\n`);
        setExitCode(2);
      }
    });
}
