/**
 * One hook process, start to end: the payload read from stdin, answered by
 * `runHook`, the answer written to stdout and stderr, the exit code set.
 * `pulse-safety hook <host>` runs it, from the hook bundle
 * (`dist/hook/hook.cjs`, `hookBundle.ts`) when the package was built with
 * it, else from the modules.
 *
 * WebAssembly (the parsers) is compiled by V8's baseline compiler only
 * (`--liftoff-only`). Synchronous I/O where it works (`readFileSync(0)`, `writeSync`): a hook
 * process reads one payload and writes one answer, and Node's stream
 * objects for stdin and stdout cost more to set up than the call takes to
 * judge (issue 25 item 7). A stdin or stdout that cannot be used so
 * (non-blocking, `EAGAIN`) falls back to the streams.
 *
 * Spec: issue 25 items 1, 3 and 7.
 */
import { readFileSync, writeSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { eventNameOf, lastResort } from './last-resort.js';
import { runHook } from './run.js';
import { isHookHost, type HookHost, type HookOutput } from './types.js';

/** Reads all of stdin as UTF-8: in one synchronous read, or from the stream when stdin is non-blocking. */
async function readStdin(): Promise<string> {
  try {
    return readFileSync(0, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Writes `text` to descriptor `fd` (1 or 2) whole: synchronously, or through the stream when the descriptor is non-blocking. */
function writeAll(fd: 1 | 2, text: string): void {
  if (text === '') return;
  const bytes = Buffer.from(text, 'utf8');
  let done = 0;
  try {
    while (done < bytes.length) done += writeSync(fd, bytes, done);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
    (fd === 1 ? process.stdout : process.stderr).write(bytes.subarray(done));
  }
}

/**
 * Runs one hook event for `host`: stdin's payload in, the host's answer out
 * (`runHook`), `process.exitCode` set. Never rejects: what fails is answered
 * with the host's last-resort refusal (`lastResort`), never with an exit code
 * the host reads as "allow" or "block everything".
 *
 * @param host the host named on the command line; one of `HOOK_HOSTS`.
 */
export async function runHookProcess(host: string): Promise<void> {
  // WebAssembly compiled by the baseline compiler only: a hook parses one command and exits, and the optimizing tier's
  // background compilation of the parsers (megabytes of WebAssembly) was measured to hold up the process by seconds
  // on a loaded machine. Set before any parser loads; it changes how V8 compiles, not what the parsers do.
  setFlagsFromString('--liftoff-only');
  const known: HookHost = isHookHost(host) ? host : 'claude-code';
  let output: HookOutput;
  let stdin = '';
  try {
    stdin = await readStdin();
    output = await runHook(known, stdin);
  } catch {
    output = lastResort(known, eventNameOf(stdin));
  }
  try {
    writeAll(2, output.stderr);
    writeAll(1, output.stdout);
  } catch {
    // stdout is gone: the host reads nothing, whatever the code; a refusal's exit code is the best left to give.
  }
  process.exitCode = output.exitCode;
}
