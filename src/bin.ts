#!/usr/bin/env node
/**
 * The `pulse-safety` executable: runs the CLI (`cli/main.ts`) on the
 * process's arguments. `pulse-safety hook <host>` takes a fast path that
 * loads only the hook (`hooks/run.ts`): a coding agent starts it once per
 * tool call, so it must not pay for the rest of the CLI.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { printable } from './util/printable.js';
import { eventNameOf, lastResort } from './hooks/last-resort.js';

const HOSTS = new Set(['claude-code', 'gemini-cli', 'codex', 'cursor', 'copilot']);

/**
 * `hook <host>`: one hook event, answered in the host's format; never exits 1
 * or 2 by accident. Runs the hook bundle (`dist/hook/hook.cjs`, with its code
 * cache: `hooks/bundle.ts`) when the package was built with it (and
 * `PULSE_SAFETY_HOOK_BUNDLE` is not `0`), else the hook's modules (`hooks/process.ts`).
 */
async function hook(host: string): Promise<void> {
  const bundle = fileURLToPath(new URL('../hook/hook.cjs', import.meta.url));
  // PULSE_SAFETY_HOOK_BUNDLE=0 runs the modules even where the bundle is built (to compare them: npm run bench -- hooks).
  if (process.env.PULSE_SAFETY_HOOK_BUNDLE !== '0' && existsSync(bundle)) {
    const { runHookBundle } = await import('./hooks/bundle.js');
    try {
      await runHookBundle(bundle, host);
      return;
    } catch {
      // The bundle could not be loaded (it throws before the hook runs): the modules answer instead.
    }
  }
  const { runHookProcess } = await import('./hooks/process.js');
  await runHookProcess(host);
}

const argv = process.argv.slice(2);
if (argv.length === 2 && argv[0] === 'hook' && HOSTS.has(argv[1]!)) {
  hook(argv[1]!).catch(() => {
    // Even the hook's module failed to load: a refusal the host reads, never a crash's exit code.
    let stdin = '';
    try {
      stdin = readFileSync(0, 'utf8');
    } catch {
      // stdin already read, or not readable: the event is unknown, answered as a before-tool refusal.
    }
    const output = lastResort(argv[1] as Parameters<typeof lastResort>[0], eventNameOf(stdin));
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
