/**
 * The `serve` and `demo` subcommands of `pulse-safety`: start the visualizer
 * on 127.0.0.1, print its URL, and run until interrupted (Ctrl+C).
 *
 * - `pulse-safety serve [--port <n>] [--transcript <file>] [--allow-origin <origin>]... [--hooks [dir]]`:
 *   with `--hooks`, the coding agents' hook sessions in the hook state
 *   directory (`dir`, default `hookStateDirectory()`) are shown live
 *   (`VisualizerOptions.hooks`) and the page opens on its Live tab.
 * - `pulse-safety demo [--port <n>] [--allow-origin <origin>]...`: prints the
 *   audit of the embedded demo transcript, then serves the visualizer
 *   replaying it (what `npm start` runs).
 *
 * `--allow-origin` (repeatable) adds a browser origin besides the server's
 * own that may stream to `/inspect` and pass the API's Origin check
 * (`VisualizerOptions.allowedOrigins`).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { auditRuns } from '../../audit/audit.js';
import { formatAuditText } from '../../audit/format.js';
import { DEMO_SOURCE, demoRuns } from '../../audit/demo.js';
import { DEFAULT_PORT, parseOrigin } from '../../visualizer/address.js';
import { HOOK_POLL_INTERVAL_MS } from '../../visualizer/bounds.js';
import type { VisualizerOptions, VisualizerServer } from '../../visualizer/server.js';
import { TranscriptError } from '../../errors/transcript-error.js';
import { withDefaults, type CommandIo, type CommandSink } from '../io.js';

/** Parses `--port`: an integer 0..65535 (0 picks any free port). */
export function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isInteger(port) || port > 65_535) {
    throw new InvalidArgumentError('the port must be a whole number from 0 to 65535 (0 picks any free port)');
  }
  return port;
}

/**
 * Parses one `--allow-origin` and adds it to those before (the option repeats).
 * @throws InvalidArgumentError when it is not an http(s) origin (scheme, host, port; no path).
 */
export function collectOrigin(value: string, previous: string[] = []): string[] {
  try {
    return [...previous, parseOrigin(value)];
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

/** Resolves when the process is asked to stop (SIGINT or SIGTERM). */
function interrupted(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

/**
 * Starts the visualizer, prints where it is, and keeps it running until the
 * process is interrupted. On a port in use or a bad transcript it prints the
 * message and sets exit code 2.
 */
async function serve(options: VisualizerOptions, query: string, io: CommandSink): Promise<void> {
  // Loaded here, so the CLI's other commands do not load the server, WebSockets and Graphviz.
  const { PortInUseError, startVisualizer } = await import('../../visualizer/server.js');
  let server: VisualizerServer;
  try {
    server = await startVisualizer(options);
  } catch (error) {
    io.err(`pulse-safety: ${(error as Error).message}\n`);
    io.setExitCode(2);
    if (error instanceof PortInUseError || error instanceof TranscriptError) return;
    throw error;
  }
  io.out(`pulse-safety visualizer: ${server.url}${query}\n`);
  io.out(`live inspection endpoint (createWebSocketInspector): ${server.inspectUrl}\n`);
  if (options.hooks) {
    io.out(
      `hook sessions from ${options.hooks.directory} (${server.stats().hooksWatched ? 'watched' : `read every ${options.hooks.pollIntervalMs ?? HOOK_POLL_INTERVAL_MS} ms`}), shown on the Live tab\n`,
    );
  }
  io.out('press Ctrl+C to stop\n');
  await interrupted();
  await server.close();
}

/** Adds `serve` and `demo` to a commander program. */
export function registerServeCommand(program: Command, io: CommandIo = {}): Command {
  const sink = withDefaults(io);
  program
    .command('serve')
    .description('serve the visualizer on 127.0.0.1: the chart, a playground, transcript replay and live inspection')
    .option('-p, --port <port>', `TCP port on 127.0.0.1 (0 picks a free one)`, parsePort, DEFAULT_PORT)
    .option('--transcript <file>', 'open this transcript in the replay view')
    .option(
      '--allow-origin <origin>',
      "also accept this browser origin on /inspect and the API (repeatable); the server's own is always accepted",
      collectOrigin,
    )
    .option(
      '--hooks [dir]',
      "show the coding agents' hook sessions live from the hook state directory (default: the hooks' own, $PULSE_SAFETY_STATE_DIR or $XDG_STATE_HOME/pulse-safety-fsm)",
    )
    .action(async (options: { port: number; transcript?: string; allowOrigin?: string[]; hooks?: string | true }) => {
      let transcript: VisualizerOptions['transcript'];
      if (options.transcript !== undefined) {
        try {
          transcript = { text: readFileSync(options.transcript, 'utf8'), source: options.transcript };
        } catch (error) {
          sink.err(
            `pulse-safety serve: ${options.transcript}: cannot read the file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})\n`,
          );
          sink.setExitCode(2);
          return;
        }
      }
      let hooks: VisualizerOptions['hooks'];
      if (options.hooks !== undefined) {
        // Loaded here, so the CLI's other commands do not load the hook store.
        const { hookStateDirectory } = await import('../../hooks/session-file.js');
        hooks = { directory: resolve(options.hooks === true ? hookStateDirectory() : options.hooks) };
      }
      await serve(
        {
          port: options.port,
          ...(transcript ? { transcript } : {}),
          ...(options.allowOrigin ? { allowedOrigins: options.allowOrigin } : {}),
          ...(hooks ? { hooks } : {}),
        },
        transcript ? '?mode=replay&replay=opened' : hooks ? '?mode=live' : '',
        sink,
      );
    });
  program
    .command('demo')
    .description('print the audit of the embedded demo transcript, then serve the visualizer replaying it')
    .option('-p, --port <port>', `TCP port on 127.0.0.1 (0 picks a free one)`, parsePort, DEFAULT_PORT)
    .option(
      '--allow-origin <origin>',
      "also accept this browser origin on /inspect and the API (repeatable); the server's own is always accepted",
      collectOrigin,
    )
    .action(async (options: { port: number; allowOrigin?: string[] }) => {
      sink.out(formatAuditText(auditRuns(demoRuns()), { title: `pulse-safety audit of ${DEMO_SOURCE} (catalog pulse)` }));
      sink.out('\n');
      await serve(
        { port: options.port, ...(options.allowOrigin ? { allowedOrigins: options.allowOrigin } : {}) },
        '?mode=replay&replay=demo',
        sink,
      );
    });
  return program;
}
