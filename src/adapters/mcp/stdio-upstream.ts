/**
 * The upstream MCP server of `pulse-safety mcp-proxy`, started over stdio in
 * a process group of its own, so that stopping it stops everything it
 * started (`npx` and the server it runs, a shell and its children), on every
 * way the proxy ends. The SDK's `StdioClientTransport` signals the one
 * process it spawned, so a server started through `npx` or a shell script
 * could outlive the proxy; this transport is the SDK `Transport` contract
 * over `child_process.spawn` with `detached: true` (a new process group on
 * POSIX; on Windows the process alone), and `stop` signals the whole group.
 *
 * Not part of the subpath's surface: the CLI (src/cli/commands/mcp-proxy.ts)
 * loads it with the SDK.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** How long a server has to exit after its stdin ended, before SIGTERM (the SDK's own 2 s). */
const STDIN_GRACE_MS = 2_000;
/** How long a process group told to stop by SIGTERM has before SIGKILL. */
export const KILL_AFTER_MS = 1_000;
/** How long `stop` waits for the group to be gone after SIGKILL (a process in uninterruptible sleep). */
const KILL_WAIT_MS = 5_000;
/** How often `stop` looks whether the group is gone. */
const POLL_MS = 25;

/** What starts the server: its command line, environment and working directory. */
export interface StdioUpstreamParams {
  command: string;
  args: readonly string[];
  env: Record<string, string>;
  cwd?: string;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A stdio client transport whose server runs in its own process group (POSIX).
 * Its stderr goes to the proxy's. `onclose` is called once the server's
 * process has exited and its pipes are closed (stdio streams a process it
 * started holds stay open until `stop` ends the group).
 */
export class ProcessGroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  private readonly buffer = new ReadBuffer();
  /** The process group id (the leader's PID), kept after the leader exits: its children may still be in it. */
  private group: number | undefined;
  private exited = false;
  /** `stop` was called before the server was started: `start` then refuses to spawn it. */
  private stoppedEarly = false;
  private readonly exit: Promise<void>;
  private markExited: () => void = () => {};

  constructor(private readonly params: StdioUpstreamParams) {
    this.exit = new Promise<void>((resolve) => (this.markExited = resolve));
  }

  /** The server process's PID (the process group id on POSIX); null before it started. */
  get pid(): number | null {
    return this.group ?? null;
  }

  /**
   * Starts the server.
   * @throws Error when it was started already, or cannot be spawned (ENOENT...);
   *   rejects without spawning anything when `stop` was called before.
   */
  start(): Promise<void> {
    if (this.child !== undefined) throw new Error('ProcessGroupStdioTransport already started');
    if (this.stoppedEarly) return Promise.reject(new Error('the MCP server was stopped before it started'));
    return new Promise<void>((resolve, reject) => {
      const child = spawn(this.params.command, [...this.params.args], {
        env: this.params.env,
        cwd: this.params.cwd,
        stdio: ['pipe', 'pipe', 'inherit'],
        detached: process.platform !== 'win32',
        windowsHide: true,
      });
      this.child = child;
      // Known at once when the process was created (undefined when it could not be): `stop` can end it before 'spawn'.
      this.group = child.pid;
      child.on('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.on('spawn', () => {
        this.group = child.pid;
        resolve();
      });
      child.on('exit', () => {
        this.exited = true;
        this.markExited();
      });
      // After its pipes close too (a child it left may hold them open until the group is stopped).
      child.on('close', () => this.onclose?.());
      child.stdin?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('data', (chunk: Buffer) => {
        try {
          this.buffer.append(chunk);
        } catch (error) {
          // A line past the buffer's bound (10 MB): the server is not speaking MCP; it is stopped.
          this.onerror?.(error as Error);
          void this.stop({ graceful: false });
          return;
        }
        for (;;) {
          let message: JSONRPCMessage | null;
          try {
            message = this.buffer.readMessage();
          } catch (error) {
            this.onerror?.(error as Error);
            continue;
          }
          if (message === null) break;
          this.onmessage?.(message);
        }
      });
    });
  }

  /**
   * Writes one message to the server's stdin.
   * @throws Error when the server is not running.
   */
  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (this.exited || stdin == null || stdin.destroyed) return Promise.reject(new Error('Not connected'));
    return new Promise<void>((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /** Ends the server gracefully (`stop({ graceful: true })`): the SDK's `Transport.close`. */
  async close(): Promise<void> {
    await this.stop({ graceful: true });
  }

  /** Sends a signal to the server's process group (its process alone on Windows); false when nothing is left to signal. */
  signal(name: NodeJS.Signals | 0): boolean {
    const group = this.group;
    if (group === undefined) return false;
    try {
      process.kill(process.platform === 'win32' ? group : -group, name);
      return true;
    } catch {
      return false; // ESRCH: the group is gone
    }
  }

  /** Whether any process of the group is left (on Windows: the server's process has not exited). */
  private groupAlive(): boolean {
    return process.platform === 'win32' ? !this.exited : this.signal(0);
  }

  /** Waits until the group is gone (and the leader's pipes closed), at most `ms`; true when it is. */
  private async gone(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      if (this.exited && !this.groupAlive()) return true;
      await (this.exited ? sleep(POLL_MS) : Promise.race([this.exit, sleep(POLL_MS)]));
    }
    return this.exited && !this.groupAlive();
  }

  /**
   * Stops the server and everything in its process group. Graceful: its
   * stdin is ended and it has `STDIN_GRACE_MS` to exit; then (or at once,
   * not graceful) the group gets SIGTERM, and SIGKILL after `KILL_AFTER_MS`.
   * Resolves when the group is gone (or, past SIGKILL, after `KILL_WAIT_MS`).
   * Safe to call again (a later call hurries an earlier graceful one along).
   * Before the server was spawned, it keeps `start` from spawning it.
   */
  async stop(options: { graceful: boolean }): Promise<void> {
    if (this.group === undefined) {
      if (this.child === undefined) this.stoppedEarly = true;
      return;
    }
    if (options.graceful) {
      try {
        this.child?.stdin?.end();
      } catch {
        // already closed
      }
      if (await this.gone(STDIN_GRACE_MS)) return;
    }
    this.signal('SIGTERM');
    if (await this.gone(KILL_AFTER_MS)) return;
    this.kill();
    await this.gone(KILL_WAIT_MS);
  }

  /** SIGKILL to the whole group, now. */
  kill(): void {
    this.signal('SIGKILL');
  }
}
