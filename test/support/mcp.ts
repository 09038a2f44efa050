/**
 * Helpers of the MCP adapter tests: the CLI built once, real MCP servers from
 * npm (the reference filesystem and "everything" servers) started over stdio
 * through `pulse-safety mcp-proxy`, driven by the SDK's own `Client`.
 *
 * Everything here is real: no part of the SDK or of the servers is mocked.
 * A missing server package makes the tests fail (under CI and elsewhere),
 * never skip.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult, ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Inside the project (test-output/ is ignored by git), so the build resolves node_modules. */
export const BUILD = join(ROOT, 'test-output', 'mcp-build');
export const BIN = join(BUILD, 'src', 'bin.js');

const require = createRequire(import.meta.url);
/** The reference filesystem server's entry (`mcp-server-filesystem <dir>...`). */
export const FS_SERVER = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
/** The reference "everything" server's entry (`mcp-server-everything stdio`). */
export const EVERYTHING_SERVER = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
/** A small server of the tests' own with a real shell tool `exec {command, cwd?}` (test/support/mcp-shell-server.mjs). */
export const SHELL_SERVER = fileURLToPath(new URL('./mcp-shell-server.mjs', import.meta.url));

/**
 * Builds the CLI from the sources, without type checking (`npm run
 * typecheck` does that), so a type error elsewhere in the tree does not
 * stop these tests. Throws when the build produces no executable.
 */
export function buildCli(): void {
  rmSync(BUILD, { recursive: true, force: true });
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  execFileSync(
    process.execPath,
    [tsc, '-p', join(ROOT, 'tsconfig.build.json'), '--noCheck', '--declaration', 'false', '--sourceMap', 'false', '--outDir', BUILD],
    { cwd: ROOT, stdio: 'pipe' },
  );
  if (!existsSync(BIN)) throw new Error(`the build produced no ${BIN}`);
}

/**
 * A command line that writes its own PID to `pidFile`, then becomes
 * `command` (`exec` keeps the PID): how the tests learn the upstream server's
 * PID without asking the proxy.
 */
export function withPidFile(pidFile: string, command: string[]): string[] {
  return ['sh', '-c', 'echo $$ > "$0" && exec "$@"', pidFile, ...command];
}

/** The PID a `withPidFile` command wrote, once it is there. */
export async function readPid(pidFile: string): Promise<number> {
  await until(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '', `${pidFile} to be written`);
  return Number(readFileSync(pidFile, 'utf8').trim());
}

/** Whether a process with this PID exists (a zombie counts: it has not been reaped). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether a process with this PID is alive: running, and not a zombie
 * (a process whose parent is gone waits for PID 1 to reap it; on Linux its
 * state in /proc says so).
 */
export function isAlive(pid: number): boolean {
  if (!isRunning(pid)) return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no /proc here: as isRunning says
  }
}

/**
 * A command line that starts `sleep 600` in the background (the same
 * process group), writes its PID to `pidFile`, then becomes `command`: a
 * server that leaves a child behind, which only ending the server's whole
 * process group ends.
 */
export function withStraggler(pidFile: string, command: string[]): string[] {
  return ['sh', '-c', 'sleep 600 & echo $! > "$0" && exec "$@"', pidFile, ...command];
}

/** A process as `ps` lists it: its PID, process group and command line. */
export interface ProcessRow {
  pid: number;
  pgid: number;
  args: string;
}

/**
 * Every live process of the machine (`ps -eo pid,pgid,stat,args`, POSIX),
 * zombies left out: a zombie runs nothing, and is reaped by its parent.
 */
export function processes(): ProcessRow[] {
  const out = execFileSync('ps', ['-eo', 'pid=,pgid=,stat=,args='], { encoding: 'utf8' });
  const rows: ProcessRow[] = [];
  for (const line of out.split('\n')) {
    const match = /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/.exec(line);
    if (match === null || match[3]!.startsWith('Z')) continue;
    rows.push({ pid: Number(match[1]), pgid: Number(match[2]), args: match[4]! });
  }
  return rows;
}

/** The live processes whose command line contains `marker` (a path unique to one test). */
export function processesWith(marker: string): ProcessRow[] {
  return processes().filter((row) => row.args.includes(marker));
}

/** The live processes of process group `pgid`. */
export function groupMembers(pgid: number): ProcessRow[] {
  return processes().filter((row) => row.pgid === pgid);
}

/** Polls `condition` until it holds; throws naming `what` after `ms` (a hang fails the test, it is no speed assertion). */
export async function until(condition: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A client connected to `pulse-safety mcp-proxy <proxyArgs> -- <upstream>`, and the proxy's PID and stderr. */
export interface ProxiedClient {
  client: Client;
  transport: StdioClientTransport;
  proxyPid: number;
  stderr: () => string;
}

/**
 * Starts the built CLI's `mcp-proxy` in front of `upstream` and connects a
 * real SDK client to it over stdio. `configure` runs before the connection
 * (to set request handlers the declared capabilities need).
 */
export async function startProxy(options: {
  proxyArgs?: string[];
  upstream: string[];
  capabilities?: ClientCapabilities;
  configure?: (client: Client) => void;
}): Promise<ProxiedClient> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp-proxy', ...(options.proxyArgs ?? []), '--', ...options.upstream],
    stderr: 'pipe',
    cwd: ROOT,
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'mcp-adapter-test', version: '1.0.0' }, { capabilities: options.capabilities ?? {} });
  options.configure?.(client);
  await client.connect(transport);
  return { client, transport, proxyPid: transport.pid!, stderr: () => stderr };
}

/** The structured refusal in a refused call's first text block (`FSMBlockedError.toToolResult()`). */
export function refusalOf(result: CallToolResult): { ok: false; error: Record<string, unknown> } {
  const first = result.content[0];
  if (first?.type !== 'text') throw new Error(`expected a text block, got ${JSON.stringify(first)}`);
  return JSON.parse(first.text) as { ok: false; error: Record<string, unknown> };
}

/** All text blocks of a result, joined. */
export function textOf(result: CallToolResult): string {
  return result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
}
