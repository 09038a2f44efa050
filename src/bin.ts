#!/usr/bin/env node
/**
 * The `pulse-safety` executable: runs the CLI (`cli/main.ts`) on the
 * process's arguments. `pulse-safety hook <host>` takes a fast path that
 * loads only the hook (`hooks/run.ts`): a coding agent starts it once per
 * tool call, so it must not pay for the rest of the CLI.
 */
import { printable } from './util/printable.js';
import { lastResort } from './hooks/last-resort.js';

const HOSTS = new Set(['claude-code', 'gemini-cli', 'codex', 'cursor', 'copilot']);

/** Reads all of stdin as UTF-8 text. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** `hook <host>`: one hook event, answered in the host's format; never exits 1 or 2 by accident. */
async function hook(host: string): Promise<void> {
  const { runHook } = await import('./hooks/run.js');
  const known = host as Parameters<typeof lastResort>[0];
  let output;
  try {
    output = await runHook(known, await readStdin());
  } catch {
    output = lastResort(known);
  }
  if (output.stderr !== '') process.stderr.write(output.stderr);
  process.stdout.write(output.stdout);
  process.exitCode = output.exitCode;
}

const argv = process.argv.slice(2);
if (argv.length === 2 && argv[0] === 'hook' && HOSTS.has(argv[1]!)) {
  hook(argv[1]!).catch(() => {
    // Even the hook's module failed to load: a refusal the host reads, never a crash's exit code.
    const output = lastResort(argv[1] as Parameters<typeof lastResort>[0]);
    process.stdout.write(output.stdout);
    process.exitCode = output.exitCode;
  });
} else {
  import('./cli/main.js')
    .then(({ main }) => main(argv))
    .then(
      (code) => {
        process.exitCode = code;
      },
      (error: unknown) => {
        process.stderr.write(`pulse-safety: internal error: ${printable(error instanceof Error ? error.message : String(error))}\n`);
        process.exitCode = 70;
      },
    );
}
