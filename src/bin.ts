#!/usr/bin/env node
/** The `pulse-safety` executable: runs the CLI (`cli/main.ts`) on the process's arguments. */
import { main } from './cli/main.js';
import { printable } from './util/printable.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`pulse-safety: internal error: ${printable(error instanceof Error ? error.message : String(error))}\n`);
    process.exitCode = 70;
  },
);
