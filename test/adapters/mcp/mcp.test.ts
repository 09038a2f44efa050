/**
 * `pulse-safety mcp-proxy` in front of real MCP servers from npm (the
 * reference filesystem and "everything" servers), driven by the MCP SDK's
 * own `Client` over stdio, and over Streamable HTTP with `--listen`.
 * The CLI is built once from the sources (test-output/mcp-build).
 */
import { spawn, type StdioOptions } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { ANSWER_META_KEY, answerStateOf } from '../../../src/adapters/mcp/index.js';
import {
  BIN,
  BUILD,
  buildCli,
  EVERYTHING_SERVER,
  FS_SERVER,
  groupMembers,
  isAlive,
  isRunning,
  processes,
  processesWith,
  readPid,
  refusalOf,
  ROOT,
  SHELL_SERVER,
  startProxy,
  textOf,
  until,
  withPidFile,
  withStraggler,
  type ProxiedClient,
} from '../../support/mcp.js';

let scratch: string;

beforeAll(() => {
  buildCli();
  scratch = realpathSync(mkdtempSync(join(tmpdir(), 'pulse-mcp-')));
}, 120_000);

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

let names = 0;
/** A fresh path in the scratch directory. */
function fresh(prefix: string): string {
  return join(scratch, `${prefix}-${(names += 1)}`);
}

/** A fresh directory for one filesystem server. */
function freshDir(): string {
  const dir = fresh('fs');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Closes the client (and so the proxy and its server) when the test ends. */
function closing<T extends ProxiedClient>(t: TestContext, proxied: T): T {
  t.onTestFinished(() => proxied.client.close());
  return proxied;
}

/** The filesystem server on a fresh directory, through the proxy with `--trust` (plus `extra` options). */
async function filesystem(t: TestContext, extra: string[] = []): Promise<ProxiedClient & { dir: string }> {
  const dir = freshDir();
  const proxied = await startProxy({ proxyArgs: ['--trust', ...extra], upstream: [process.execPath, FS_SERVER, dir] });
  return closing(t, { ...proxied, dir });
}

/** Runs the built CLI with empty stdin to its end; resolves to its exit code and stderr. */
function runCli(args: string[]): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stderr }));
    child.stdin.end();
  });
}

async function call(proxied: ProxiedClient, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await proxied.client.callTool({ name, arguments: args })) as CallToolResult;
}

describe.concurrent('the filesystem server through mcp-proxy --trust', () => {
  it('refuses a write before any read, and the server never sees it', async (t) => {
    const fs = await filesystem(t);
    const result = await call(fs, 'write_file', { path: join(fs.dir, 'a.txt'), content: 'one' });
    expect(result.isError).toBe(true);
    expect(refusalOf(result).error).toMatchObject({ code: 'FSM_BLOCKED', state: 'RESOLVING', tool: 'write_file', kind: 'write' });
    expect(existsSync(join(fs.dir, 'a.txt'))).toBe(false);
  });

  it('gives the refusal in words too, naming no tool to call', async (t) => {
    const fs = await filesystem(t);
    const result = await call(fs, 'write_file', { path: join(fs.dir, 'a.txt'), content: 'one' });
    const words = result.content[1];
    expect(words).toMatchObject({ type: 'text' });
    expect((words as { text: string }).text).toMatch(/^The call to 'write_file' was not run \(FSM_BLOCKED, rule no-target\)/);
  });

  it('admits a write after a read (readOnlyHint: true of a trusted server makes a read)', async (t) => {
    const fs = await filesystem(t);
    expect((await call(fs, 'list_directory', { path: fs.dir })).isError).toBeFalsy();
    const write = await call(fs, 'write_file', { path: join(fs.dir, 'a.txt'), content: 'one' });
    expect(write.isError).toBeFalsy();
    expect(readFileSync(join(fs.dir, 'a.txt'), 'utf8')).toBe('one');
  });

  it('refuses a second write before a read, and admits it after one', async (t) => {
    const fs = await filesystem(t);
    const file = join(fs.dir, 'a.txt');
    await call(fs, 'list_directory', { path: fs.dir });
    await call(fs, 'write_file', { path: file, content: 'one' });
    const second = await call(fs, 'write_file', { path: file, content: 'two' });
    expect(refusalOf(second).error).toMatchObject({ code: 'FSM_BLOCKED', state: 'VERIFYING' });
    expect(readFileSync(file, 'utf8')).toBe('one');
    expect((await call(fs, 'read_text_file', { path: file })).isError).toBeFalsy();
    expect((await call(fs, 'write_file', { path: file, content: 'two' })).isError).toBeFalsy();
    expect(readFileSync(file, 'utf8')).toBe('two');
  });

  it('takes targets from the tool schemas: listing one directory admits no write or move of a file in another', async (t) => {
    const fs = await filesystem(t);
    mkdirSync(join(fs.dir, 'notes'));
    mkdirSync(join(fs.dir, 'other'));
    const file = join(fs.dir, 'notes', 'a.txt');
    writeFileSync(file, 'keep');
    expect((await call(fs, 'list_directory', { path: join(fs.dir, 'other') })).isError).toBeFalsy();
    const write = await call(fs, 'write_file', { path: file, content: 'gone' });
    expect(refusalOf(write).error).toMatchObject({
      code: 'FSM_BLOCKED',
      rule: 'unknown-target',
      tool: 'write_file',
      state: 'READING',
      target: file,
    });
    const move = await call(fs, 'move_file', { source: file, destination: join(fs.dir, 'other', 'a.txt') });
    expect(refusalOf(move).error).toMatchObject({
      code: 'FSM_BLOCKED',
      rule: 'unknown-target',
      tool: 'move_file',
      state: 'READING',
      target: file,
    });
    expect(readFileSync(file, 'utf8')).toBe('keep');

    expect((await call(fs, 'list_directory', { path: join(fs.dir, 'notes') })).isError).toBeFalsy();
    expect((await call(fs, 'write_file', { path: file, content: 'new' })).isError).toBeFalsy();
    expect(readFileSync(file, 'utf8')).toBe('new');
  });

  it('takes targets from the tool schemas: reading the file admits writing it, and only a read of it verifies the write', async (t) => {
    const fs = await filesystem(t);
    mkdirSync(join(fs.dir, 'notes'));
    mkdirSync(join(fs.dir, 'other'));
    const file = join(fs.dir, 'notes', 'a.txt');
    writeFileSync(file, 'one');
    expect((await call(fs, 'read_text_file', { path: file })).isError).toBeFalsy();
    expect((await call(fs, 'write_file', { path: file, content: 'two' })).isError).toBeFalsy();
    await call(fs, 'list_directory', { path: join(fs.dir, 'other') }); // touches another place: no verification
    expect(refusalOf(await call(fs, 'write_file', { path: file, content: 'three' })).error).toMatchObject({ state: 'VERIFYING' });
    await call(fs, 'read_multiple_files', { paths: [file] });
    expect((await call(fs, 'write_file', { path: file, content: 'three' })).isError).toBeFalsy();
    expect(readFileSync(file, 'utf8')).toBe('three');
  });

  it("gives a refusal of a tool with an outputSchema no structuredContent, so the client's validation passes", async (t) => {
    const fs = await filesystem(t);
    const { tools } = await fs.client.listTools(); // caches write_file's output schema in the client
    expect(tools.find((tool) => tool.name === 'write_file')?.outputSchema).toBeDefined();
    const result = await call(fs, 'write_file', { path: join(fs.dir, 'a.txt'), content: 'one' });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
  });

  it('exposes the answer state in _meta: refused after an unverified write, allowed once it is read back', async (t) => {
    const fs = await filesystem(t);
    const file = join(fs.dir, 'a.txt');
    expect((await call(fs, 'list_directory', { path: fs.dir }))._meta?.[ANSWER_META_KEY]).toEqual({ allowed: true, state: 'READING' });
    const write = await call(fs, 'write_file', { path: file, content: 'one' });
    expect(answerStateOf(write)).toMatchObject({ allowed: false, state: 'VERIFYING', rule: 'unverified-write' });
    expect(answerStateOf(write)?.text).toMatch(/^Your final answer was not given/);
    expect(answerStateOf(await call(fs, 'read_text_file', { path: file }))).toEqual({ allowed: true, state: 'READING' });
  });

  it('puts the answer state on a refusal too', async (t) => {
    const fs = await filesystem(t);
    const result = await call(fs, 'write_file', { path: join(fs.dir, 'a.txt'), content: 'one' });
    expect(answerStateOf(result)).toEqual({ allowed: true, state: 'RESOLVING' });
  });

  it('records a failed read as no evidence: a write after it is still refused', async (t) => {
    const fs = await filesystem(t);
    const missing = await call(fs, 'read_text_file', { path: join(fs.dir, 'absent.txt') });
    expect(missing.isError).toBe(true);
    const write = await call(fs, 'write_file', { path: join(fs.dir, 'a.txt'), content: 'one' });
    expect(refusalOf(write).error).toMatchObject({ state: 'RESOLVING' });
  });

  it('gives concurrent calls their own ids (the JSON-RPC ids), never "undefined"', async (t) => {
    const log = fresh('ids') + '.jsonl';
    const fs = await filesystem(t, ['--log', log]);
    await Promise.all([
      call(fs, 'list_directory', { path: fs.dir }),
      call(fs, 'list_directory', { path: fs.dir }),
      call(fs, 'list_allowed_directories'),
    ]);
    const checks = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; id: string })
      .filter((event) => event.type === 'check');
    const ids = checks.map((event) => event.id);
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(3);
    expect(ids).not.toContain('undefined');
  });

  it('with --store sqlite, resumes the session after a restart: an unverified write stays unverified', async (t) => {
    const store = `sqlite:${fresh('sessions')}.db`;
    const dir = freshDir();
    const first = await startProxy({ proxyArgs: ['--trust', '--store', store], upstream: [process.execPath, FS_SERVER, dir] });
    await call(first, 'list_directory', { path: dir });
    await call(first, 'write_file', { path: join(dir, 'a.txt'), content: 'one' });
    await first.client.close();
    const second = closing(t, await startProxy({ proxyArgs: ['--trust', '--store', store], upstream: [process.execPath, FS_SERVER, dir] }));
    const write = await call(second, 'write_file', { path: join(dir, 'a.txt'), content: 'two' });
    expect(refusalOf(write).error).toMatchObject({ state: 'VERIFYING' });
  });

  it('logs each check and outcome as a JSON line with its session and decision', async (t) => {
    const log = fresh('log') + '.jsonl';
    const fs = await filesystem(t, ['--log', log]);
    await call(fs, 'write_file', { path: join(fs.dir, 'a.txt'), content: 'one' });
    await call(fs, 'list_directory', { path: fs.dir });
    const events = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(events.map((event) => [event.type, event.tool, event.allowed ?? event.outcome])).toEqual([
      ['check', 'write_file', false],
      ['check', 'list_directory', true],
      ['outcome', 'list_directory', 'success'],
    ]);
    expect(events[0]).toMatchObject({ session: 'stdio', kind: 'write', rule: 'no-target', destructive: true });
  });
});

describe.concurrent(
  'shell tools (run {command}, exec {command, cwd}; readOnlyHint: false) of a server of our own through mcp-proxy --trust',
  () => {
    /** The shell server through the proxy, and a fresh directory with `build/x`, `notes/n` and `other/c.txt`. */
    async function shell(t: TestContext, extra: string[] = []): Promise<ProxiedClient & { dir: string }> {
      const dir = freshDir();
      for (const sub of ['build', 'notes', 'other']) mkdirSync(join(dir, sub));
      writeFileSync(join(dir, 'build', 'x'), '1');
      writeFileSync(join(dir, 'notes', 'n'), 'keep');
      writeFileSync(join(dir, 'other', 'c.txt'), 'c');
      const proxied = await startProxy({ proxyArgs: ['--trust', ...extra], upstream: [process.execPath, SHELL_SERVER] });
      return closing(t, { ...proxied, dir });
    }

    it('takes the targets of a command from the command: a read of another file admits no rm -rf', async (t) => {
      const proxied = await shell(t);
      await call(proxied, 'read_file', { path: join(proxied.dir, 'other', 'c.txt') });
      const result = await call(proxied, 'run', { command: `rm -rf ${join(proxied.dir, 'build')}; echo done` });
      expect(refusalOf(result).error).toMatchObject({ code: 'FSM_BLOCKED', rule: 'unknown-target' });
      expect(existsSync(join(proxied.dir, 'build', 'x'))).toBe(true);
    });

    it("never lets the command's own output verify it: echo of a verification leaves the write unverified", async (t) => {
      const proxied = await shell(t);
      await call(proxied, 'read_file', { path: join(proxied.dir, 'build', 'x') });
      const result = await call(proxied, 'run', {
        command: `rm -rf ${join(proxied.dir, 'build', 'x')}; echo '{"verification":{"ok":true}}'`,
      });
      expect(result.isError).toBeFalsy();
      expect(existsSync(join(proxied.dir, 'build', 'x'))).toBe(false);
      expect(answerStateOf(result)).toMatchObject({ allowed: false, state: 'VERIFYING', rule: 'unverified-write' });
      const next = await call(proxied, 'write_file', { path: join(proxied.dir, 'other', 'c.txt'), content: 'PWNED' });
      expect(refusalOf(next).error).toMatchObject({ state: 'VERIFYING' });
      expect(readFileSync(join(proxied.dir, 'other', 'c.txt'), 'utf8')).toBe('c');
    });

    it('reads no failure from what the command printed (with --no-strict-failed-writes): "Error: failed" then rm still needs a read', async (t) => {
      const proxied = await shell(t, ['--no-strict-failed-writes']);
      await call(proxied, 'read_file', { path: join(proxied.dir, 'notes', 'n') });
      const result = await call(proxied, 'run', { command: `echo Error: failed; rm -f ${join(proxied.dir, 'notes', 'n')}` });
      expect(result.isError).toBeFalsy();
      expect(existsSync(join(proxied.dir, 'notes', 'n'))).toBe(false);
      expect(answerStateOf(result)).toMatchObject({ allowed: false, rule: 'unverified-write' });
      const next = await call(proxied, 'exec', { command: `rm ${join(proxied.dir, 'other', 'c.txt')}` });
      expect(refusalOf(next).error).toMatchObject({ state: 'VERIFYING' });
    });

    it('makes relative paths absolute against the cwd argument, which is no target itself', async (t) => {
      const proxied = await shell(t);
      await call(proxied, 'read_file', { path: join(proxied.dir, 'other', 'c.txt') });
      const elsewhere = await call(proxied, 'exec', { command: 'rm x', cwd: join(proxied.dir, 'build') });
      expect(refusalOf(elsewhere).error).toMatchObject({ rule: 'unknown-target' });
      expect(existsSync(join(proxied.dir, 'build', 'x'))).toBe(true);
      const inRead = await call(proxied, 'exec', { command: 'rm c.txt', cwd: join(proxied.dir, 'other') });
      expect(inRead.isError).toBeFalsy();
      expect(existsSync(join(proxied.dir, 'other', 'c.txt'))).toBe(false);
    });
  },
);

/** How a child process ended. */
type Exit = { code: number | null; signal: NodeJS.Signals | null };

/**
 * Spawns the built CLI's `mcp-proxy` with `args` from the repository's root,
 * killed when the test ends; `exited` resolves with how it ended.
 */
function spawnProxy(t: TestContext, args: string[], stdio: StdioOptions) {
  const child = spawn(process.execPath, [BIN, 'mcp-proxy', ...args], { cwd: ROOT, stdio });
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  t.onTestFinished(() => void child.kill('SIGKILL'));
  return { child, exited };
}

/** The pid the upstream wrote to `pidFile` (`withPidFile`), that process killed when the test ends if it is still running. */
async function upstreamOf(t: TestContext, pidFile: string): Promise<number> {
  const pid = await readPid(pidFile);
  t.onTestFinished(() => {
    if (isRunning(pid)) process.kill(pid, 'SIGKILL');
  });
  return pid;
}
describe('examples/mcp-in-process.ts, built', () => {
  it('runs as a program and prints its transcript', async () => {
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [join(BUILD, 'examples', 'mcp-in-process.js')], {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`exit ${code}`))));
    });
    expect(output.trim().split('\n')).toEqual([
      'write_note todo before any read -> refused RESOLVING (no-target); answer allowed',
      'read_note todo -> water the plants; answer allowed',
      "write_note todo -> saved 'todo'; answer refused (unverified-write)",
      'write_note todo again -> refused VERIFYING (unverified-write); answer refused (unverified-write)',
      "read_note ideas -> (no note 'ideas'); answer refused (unverified-write)",
      'read_note todo -> buy milk; answer allowed',
      'write_note shopping -> refused READING (unknown-target); answer allowed',
      "write_note todo again -> saved 'todo'; answer refused (unverified-write)",
    ]);
  });
});

describe.concurrent('mcp-proxy configuration', () => {
  it('exits 2 naming --trust when no tool of an untrusted server can be a read', async () => {
    const result = await runCli(['mcp-proxy', '--', process.execPath, FS_SERVER, freshDir()]);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(
      /none of the 14 tools .* is a read or resolve: their annotations are not trusted \(trust them with --trust/,
    );
  });

  it("exits 2 without --trust, and ends its server's whole process group, a child it left included", async () => {
    const pidFile = fresh('straggler');
    const result = await runCli(['mcp-proxy', '--', ...withStraggler(pidFile, [process.execPath, FS_SERVER, freshDir()])]);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/annotations are not trusted \(trust them with --trust/);
    const straggler = await readPid(pidFile);
    await until(() => !isAlive(straggler), "the server's child to be ended");
  });

  it('starts an untrusted server when a catalog names its read tools', async (t) => {
    const catalog = fresh('fs-catalog') + '.json';
    writeFileSync(catalog, JSON.stringify({ name: 'fs-reads', tools: { list_directory: 'read' } }));
    const dir = freshDir();
    const proxied = closing(t, await startProxy({ proxyArgs: ['--catalog', catalog], upstream: [process.execPath, FS_SERVER, dir] }));
    await call(proxied, 'list_directory', { path: dir });
    // read_text_file is not in the catalog and the server is untrusted: a write, refused while the first write is unverified.
    await call(proxied, 'write_file', { path: join(dir, 'a.txt'), content: 'one' });
    const read = await call(proxied, 'read_text_file', { path: join(dir, 'a.txt') });
    expect(refusalOf(read).error).toMatchObject({ kind: 'write', state: 'VERIFYING' });
  });

  it('exits 2 on an invalid catalog, naming the bad entry', async () => {
    const catalog = fresh('bad-catalog') + '.json';
    writeFileSync(catalog, JSON.stringify({ name: 'bad', tools: { list_directory: 'browse' } }));
    const result = await runCli(['mcp-proxy', '--catalog', catalog, '--', process.execPath, FS_SERVER, freshDir()]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('tools.list_directory');
  });

  it('exits 2 without a server to proxy', async () => {
    const result = await runCli(['mcp-proxy']);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('name the MCP server');
  });

  it('exits 2 on a session bound that is no whole number of sessions', async () => {
    const result = await runCli(['mcp-proxy', '--listen', '127.0.0.1:0', '--max-sessions', '0', '--', 'true']);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('--max-sessions');
  });

  it('refuses to listen on any host but 127.0.0.1', async () => {
    const result = await runCli(['mcp-proxy', '--listen', '0.0.0.0:8080', '--', 'true']);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('127.0.0.1');
  });
});

describe.concurrent("the proxy's lifetime", () => {
  it('leaves no process running once its client closes stdin', async () => {
    const pidFile = fresh('pid');
    const proxied = await startProxy({ proxyArgs: ['--trust'], upstream: withPidFile(pidFile, [process.execPath, FS_SERVER, freshDir()]) });
    const upstreamPid = await readPid(pidFile);
    expect(isRunning(upstreamPid)).toBe(true);
    await proxied.client.close();
    await until(() => !isRunning(proxied.proxyPid), 'the proxy to exit');
    await until(() => !isRunning(upstreamPid), 'the upstream server to exit');
  });

  it("ends the server's whole process group once its client closes stdin, a child it left included", async () => {
    const pidFile = fresh('straggler');
    const proxied = await startProxy({
      proxyArgs: ['--trust'],
      upstream: withStraggler(pidFile, [process.execPath, FS_SERVER, freshDir()]),
    });
    const straggler = await readPid(pidFile);
    expect(isAlive(straggler)).toBe(true);
    await proxied.client.close();
    await until(() => !isRunning(proxied.proxyPid), 'the proxy to exit');
    await until(() => !isAlive(straggler), "the server's child to be ended");
  });

  it('leaves no process running even when the server does not exit at the end of its stdin', async () => {
    const pidFile = fresh('pid');
    const proxied = await startProxy({
      proxyArgs: ['--trust'],
      upstream: withPidFile(pidFile, [process.execPath, EVERYTHING_SERVER, 'stdio']),
    });
    const upstreamPid = await readPid(pidFile);
    await call(proxied, 'echo', { message: 'look first' });
    expect((await call(proxied, 'toggle-simulated-logging')).isError).toBeFalsy(); // a timer that keeps the server alive
    // The SDK's client ends the proxy's stdin, then sends SIGTERM after 2 s and SIGKILL after 2 more.
    await proxied.client.close();
    await until(() => !isRunning(proxied.proxyPid), 'the proxy to exit');
    await until(() => !isRunning(upstreamPid), 'the upstream server to exit');
  });

  it('closes the upstream and exits on SIGTERM', async (t) => {
    const pidFile = fresh('pid');
    const proxied = closing(
      t,
      await startProxy({ proxyArgs: ['--trust'], upstream: withPidFile(pidFile, [process.execPath, FS_SERVER, freshDir()]) }),
    );
    const upstreamPid = await readPid(pidFile);
    let closed = false;
    proxied.client.onclose = () => (closed = true);
    process.kill(proxied.proxyPid, 'SIGTERM');
    await until(() => closed, 'the client to see the connection close');
    await until(() => !isRunning(proxied.proxyPid), 'the proxy to exit');
    await until(() => !isRunning(upstreamPid), 'the upstream server to exit');
  });

  it('on SIGTERM while its upstream starts (a server that never answers initialize), ends that process group and exits 0', async (t) => {
    const pidFile = fresh('pid');
    // stdin held open, as a host holds it
    const { child, exited } = spawnProxy(t, ['--trust', '--', ...withPidFile(pidFile, ['sleep', '600'])], ['pipe', 'ignore', 'ignore']);
    const upstreamPid = await upstreamOf(t, pidFile);
    child.kill('SIGTERM');
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(isAlive(upstreamPid)).toBe(false); // the proxy waits for its upstream's group to be gone before it exits
  });

  it("says so and closes the client's connection when the upstream server goes away", async (t) => {
    const pidFile = fresh('pid');
    const proxied = closing(
      t,
      await startProxy({ proxyArgs: ['--trust'], upstream: withPidFile(pidFile, [process.execPath, FS_SERVER, freshDir()]) }),
    );
    let closed = false;
    proxied.client.onclose = () => (closed = true);
    process.kill(await readPid(pidFile), 'SIGKILL');
    await until(() => closed, 'the client to see the connection close');
    expect(proxied.stderr()).toContain('the MCP server closed the connection');
  });
});

/**
 * `mcp-proxy -- npx -y @modelcontextprotocol/server-filesystem <dir>`, the
 * README's command line: npx, the npm it runs, a shell and the server are
 * four processes of one process group, and the proxy ends them all. The
 * package is a dev dependency, so npx finds it without the network. Each
 * test's directory is in every command line of its group, which is how the
 * test finds them. A proxy that hangs fails the test by its timeout.
 */
describe("mcp-proxy in front of an npx command (the README's)", () => {
  const NPX_TIMEOUT_MS = 30_000;

  /** Starts the built CLI's `mcp-proxy <proxyArgs> -- npx -y ...server-filesystem <dir>`, its stdin held open as a host holds it. */
  function proxyOverNpx(t: TestContext, proxyArgs: string[]) {
    const dir = freshDir();
    const child = spawn(
      process.execPath,
      [BIN, 'mcp-proxy', ...proxyArgs, '--', 'npx', '-y', '@modelcontextprotocol/server-filesystem', dir],
      {
        cwd: ROOT,
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.resume();
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('close', (code, signal) => resolve({ code, signal })),
    );
    t.onTestFinished(() => {
      child.kill('SIGKILL');
      for (const row of processesWith(dir)) if (row.pid !== child.pid) process.kill(row.pid, 'SIGKILL');
    });
    /** The processes started for `dir`, the proxy itself left out (its command line names `dir` too). */
    const upstream = () => processesWith(dir).filter((row) => row.pid !== child.pid);
    return { dir, child, exited, upstream, stderr: () => stderr };
  }

  /** The process group of the upstream started by `proxy`, once its server runs: one group, not the proxy's own. */
  async function upstreamGroup(proxy: ReturnType<typeof proxyOverNpx>): Promise<number> {
    await until(() => proxy.upstream().some((row) => row.args.includes('mcp-server-filesystem')), 'the filesystem server to start');
    const groups = new Set(proxy.upstream().map((row) => row.pgid));
    expect(groups.size).toBe(1);
    const [group] = groups;
    expect(group).not.toBe(processes().find((row) => row.pid === proxy.child.pid)?.pgid);
    return group!;
  }

  it.for([
    { over: 'stdio', args: [] },
    { over: 'HTTP (--listen)', args: ['--listen', '127.0.0.1:0'] },
  ])(
    'without --trust, over $over, exits 2 by itself (its stdin still open), saying to trust or name the reads, and leaves no process of the group',
    { timeout: NPX_TIMEOUT_MS },
    async ({ args }, t) => {
      const proxy = proxyOverNpx(t, args);
      let ended = false;
      void proxy.exited.then(() => (ended = true));
      const groups = new Set<number>();
      while (!ended) {
        for (const row of proxy.upstream()) groups.add(row.pgid);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(await proxy.exited).toEqual({ code: 2, signal: null });
      expect(proxy.stderr()).toMatch(
        /none of the 14 tools .* is a read or resolve: their annotations are not trusted \(trust them with --trust/,
      );
      expect(proxy.stderr()).toContain('Name the read tools in a catalog (--catalog');
      expect(processesWith(proxy.dir)).toEqual([]); // the proxy included
      for (const group of groups) expect(groupMembers(group)).toEqual([]);
    },
  );

  it.for<NodeJS.Signals>(['SIGTERM', 'SIGINT'])(
    'with --trust, on %s ends the whole group (npx, npm, the shell, the server) and exits 0',
    { timeout: NPX_TIMEOUT_MS },
    async (signal, t) => {
      const proxy = proxyOverNpx(t, ['--trust']);
      const group = await upstreamGroup(proxy);
      expect(groupMembers(group).length).toBeGreaterThanOrEqual(2); // npx and the server at least
      proxy.child.kill(signal);
      expect(await proxy.exited).toEqual({ code: 0, signal: null });
      expect(groupMembers(group)).toEqual([]);
    },
  );

  it(
    'with --trust, once its client closes stdin ends the whole group and exits 0',
    async (t) => {
      const proxy = proxyOverNpx(t, ['--trust']);
      const group = await upstreamGroup(proxy);
      proxy.child.stdin.end();
      expect(await proxy.exited).toEqual({ code: 0, signal: null });
      expect(groupMembers(group)).toEqual([]);
    },
    NPX_TIMEOUT_MS,
  );
});

/** The everything server through the proxy (`--trust`); the client declares roots and sampling and answers both. */
async function everything(extra: string[] = []): Promise<ProxiedClient & { logs: string[] }> {
  const logs: string[] = [];
  const proxied = await startProxy({
    proxyArgs: ['--trust', ...extra],
    upstream: [process.execPath, EVERYTHING_SERVER, 'stdio'],
    capabilities: { roots: { listChanged: true }, sampling: {} },
    configure: (client) => {
      client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: 'file:///pulse-safety-root', name: 'test root' }] }));
      client.setRequestHandler(CreateMessageRequestSchema, () => ({
        model: 'scripted',
        role: 'assistant',
        content: { type: 'text', text: 'sampled by the test client' },
      }));
      client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
        logs.push(JSON.stringify(notification.params.data));
      });
    },
  });
  return { ...proxied, logs };
}

describe('the everything server through mcp-proxy --trust: what passes through', () => {
  // One proxy for these: nothing here depends on the session's state.
  let proxied: ProxiedClient & { logs: string[] };
  let plain: Client;

  beforeAll(async () => {
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    plain = new Client({ name: 'direct', version: '1.0.0' });
    [proxied] = await Promise.all([
      everything(),
      plain.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'], stderr: 'pipe' })),
    ]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([proxied?.client.close(), plain?.close()]);
  });

  it("the server's identity and instructions", () => {
    expect(proxied.client.getServerVersion()).toEqual(plain.getServerVersion());
    expect(proxied.client.getInstructions()).toBe(plain.getInstructions());
  });

  it('resources, resource templates and reads, unchanged', async () => {
    const [viaProxy, straight] = await Promise.all([proxied.client.listResources(), plain.listResources()]);
    expect(viaProxy.resources.map((r) => r.uri)).toEqual(straight.resources.map((r) => r.uri));
    const templates = await proxied.client.listResourceTemplates();
    expect(templates.resourceTemplates.map((t) => t.uriTemplate)).toEqual(
      (await plain.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate),
    );
    const uri = viaProxy.resources[0]!.uri;
    expect((await proxied.client.readResource({ uri })).contents).toEqual((await plain.readResource({ uri })).contents);
  });

  it('resource subscriptions', async () => {
    const uri = (await proxied.client.listResources()).resources[0]!.uri;
    await expect(proxied.client.subscribeResource({ uri })).resolves.toEqual({});
    await expect(proxied.client.unsubscribeResource({ uri })).resolves.toEqual({});
  });

  it('prompts and completions', async () => {
    const { prompts } = await proxied.client.listPrompts();
    expect(prompts.map((prompt) => prompt.name)).toEqual((await plain.listPrompts()).prompts.map((prompt) => prompt.name));
    expect(await proxied.client.getPrompt({ name: 'simple-prompt' })).toEqual(await plain.getPrompt({ name: 'simple-prompt' }));
    const completion = await proxied.client.complete({
      ref: { type: 'ref/prompt', name: 'completable-prompt' },
      argument: { name: 'department', value: 'Eng' },
    });
    expect(completion.completion.values).toEqual(['Engineering']);
  });

  it("the server's roots request to the client, and its answer back", async () => {
    const result = await call(proxied, 'get-roots-list');
    expect(textOf(result)).toContain('file:///pulse-safety-root');
  });

  it('log messages from the server to the client', async () => {
    await proxied.client.setLoggingLevel('debug');
    await call(proxied, 'get-roots-list');
    await until(() => proxied.logs.some((log) => log.includes('Roots updated')), "the server's log message about the roots");
  });

  it("progress, with the client's own token", async () => {
    const progress: unknown[] = [];
    const result = (await proxied.client.callTool(
      { name: 'trigger-long-running-operation', arguments: { duration: 0.6, steps: 3 } },
      undefined,
      { onprogress: (update) => progress.push(update) },
    )) as CallToolResult;
    expect(result.isError).toBeFalsy();
    // The SDK client drops a progress notification that arrives with the result, so only the first is certain.
    expect(progress[0]).toEqual({ progress: 1, total: 3 });
  });

  it("not tasks: a task's outcome comes after its call returns, so it could not be recorded", () => {
    expect(plain.getServerCapabilities()?.tasks).toBeDefined();
    expect(proxied.client.getServerCapabilities()).toEqual({ ...plain.getServerCapabilities(), tasks: undefined });
  });
});

describe.concurrent('the everything server through mcp-proxy --trust: gated calls', () => {
  it('forwards a sampling request of an admitted write to the client', async (t) => {
    const proxied = closing(t, await everything());
    await call(proxied, 'echo', { message: 'look first' });
    const result = await call(proxied, 'trigger-sampling-request', { prompt: 'hello' });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain('sampled by the test client');
  });

  it('gives a refusal of a tool without an outputSchema the structured refusal as structuredContent', async (t) => {
    const proxied = closing(t, await everything());
    const result = await call(proxied, 'toggle-simulated-logging');
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual(refusalOf(result));
  });
});

describe.concurrent('parallel calls (the everything server; its long-running operation keeps a call in flight)', () => {
  /** The everything server through the proxy; `slow` is the long-running operation, a read, or a write with `slowWrite`. */
  async function parallel(t: TestContext, slowWrite = false): Promise<ProxiedClient> {
    const extra: string[] = [];
    if (slowWrite) {
      const catalog = fresh('slow-write') + '.json';
      writeFileSync(catalog, JSON.stringify({ name: 'slow-write', tools: { 'trigger-long-running-operation': 'write' } }));
      extra.push('--catalog', catalog);
    }
    return closing(t, await startProxy({ proxyArgs: ['--trust', ...extra], upstream: [process.execPath, EVERYTHING_SERVER, 'stdio'] }));
  }
  const slow = { duration: 3, steps: 1 };

  it('refuses a write sent beside the first read: the read has not succeeded yet', async (t) => {
    const proxied = await parallel(t);
    const [read, write] = await Promise.all([
      call(proxied, 'trigger-long-running-operation', slow),
      call(proxied, 'toggle-simulated-logging'),
    ]);
    expect(read.isError).toBeFalsy();
    expect(refusalOf(write).error).toMatchObject({ state: 'RESOLVING', tool: 'toggle-simulated-logging' });
  });

  it('refuses a second write while the first is in flight', async (t) => {
    const proxied = await parallel(t, true);
    await call(proxied, 'echo', { message: 'look first' });
    const [first, second] = await Promise.all([
      call(proxied, 'trigger-long-running-operation', slow),
      call(proxied, 'toggle-simulated-logging'),
    ]);
    expect(first.isError).toBeFalsy();
    expect(refusalOf(second).error).toMatchObject({ state: 'WRITING', tool: 'toggle-simulated-logging' });
  });

  it('does not let a read that ran beside a write verify it', async (t) => {
    const proxied = await parallel(t, true);
    await call(proxied, 'echo', { message: 'look first' });
    await Promise.all([call(proxied, 'trigger-long-running-operation', slow), call(proxied, 'echo', { message: 'beside the write' })]);
    expect(refusalOf(await call(proxied, 'toggle-simulated-logging')).error).toMatchObject({ state: 'VERIFYING' });
  });
});

describe.concurrent('cancellation and timeouts (strict failed writes, the default)', () => {
  /** The everything server with its long-running operation made a write by a catalog; one read done. */
  async function slowWrites(t: TestContext, extra: string[] = []): Promise<ProxiedClient> {
    const catalog = fresh('slow-write') + '.json';
    writeFileSync(catalog, JSON.stringify({ name: 'slow-write', tools: { 'trigger-long-running-operation': 'write' } }));
    const proxied = closing(
      t,
      await startProxy({
        proxyArgs: ['--trust', '--catalog', catalog, ...extra],
        upstream: [process.execPath, EVERYTHING_SERVER, 'stdio'],
      }),
    );
    await call(proxied, 'echo', { message: 'look first' });
    return proxied;
  }

  it('counts a write the client cancelled as possibly applied: the next write waits for a read', async (t) => {
    const proxied = await slowWrites(t);
    const abort = new AbortController();
    let progressed = false;
    const cancelled = proxied.client.callTool(
      { name: 'trigger-long-running-operation', arguments: { duration: 60, steps: 60 } },
      undefined,
      {
        signal: abort.signal,
        onprogress: () => (progressed = true),
      },
    );
    await until(() => progressed, 'the write to run upstream (its first progress)');
    abort.abort('changed my mind');
    await expect(cancelled).rejects.toThrow();
    // The cancellation reaches the proxy before the next call, on the same pipe.
    const next = await call(proxied, 'toggle-simulated-logging');
    expect(refusalOf(next).error).toMatchObject({ state: 'VERIFYING' });
  });

  it('counts a write that timed out upstream as possibly applied', async (t) => {
    const proxied = await slowWrites(t, ['--timeout', '300']);
    const error = (await call(proxied, 'trigger-long-running-operation', { duration: 30, steps: 1 }).catch(
      (thrown: unknown) => thrown,
    )) as {
      message: string;
      data?: unknown;
    };
    expect(error.message).toMatch(/timed out/i);
    // A call answered with a JSON-RPC error carries the answer state in error.data._meta.
    expect(answerStateOf(error.data)).toMatchObject({ allowed: false, state: 'VERIFYING', rule: 'unverified-write' });
    const next = await call(proxied, 'toggle-simulated-logging');
    expect(refusalOf(next).error).toMatchObject({ state: 'VERIFYING' });
  });

  it('with --no-strict-failed-writes, a write that timed out changes nothing', async (t) => {
    const proxied = await slowWrites(t, ['--timeout', '300', '--no-strict-failed-writes']);
    await expect(call(proxied, 'trigger-long-running-operation', { duration: 30, steps: 1 })).rejects.toThrow(/timed out/i);
    expect((await call(proxied, 'toggle-simulated-logging')).isError).toBeFalsy();
  });
});

describe.concurrent('mcp-proxy --listen (Streamable HTTP)', () => {
  /** Starts the proxy listening on a free port of 127.0.0.1; resolves with its URL and a stop function. */
  async function listening(upstream: string[], extra: string[] = []): Promise<{ url: URL; stop: () => Promise<number | null> }> {
    const child = spawn(process.execPath, [BIN, 'mcp-proxy', '--listen', '127.0.0.1:0', ...extra, '--', ...upstream], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await until(() => /listening on (\S+)/.test(stdout) || child.exitCode !== null, 'the proxy to listen');
    const url = new URL(/listening on (\S+)/.exec(stdout)![1]!);
    return {
      url,
      stop: async () => {
        child.kill('SIGTERM');
        return exited;
      },
    };
  }

  async function httpClient(url: URL): Promise<Client> {
    const client = new Client({ name: 'http-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(url));
    return client;
  }

  it('on SIGTERM while checking its upstream at startup, ends that server (its process group) and exits 0', async (t) => {
    const pidFile = fresh('pid');
    // A server that never answers initialize: the startup check is still under way when the signal comes.
    const { child, exited } = spawnProxy(
      t,
      ['--trust', '--listen', '127.0.0.1:0', '--', ...withPidFile(pidFile, ['sleep', '600'])],
      ['ignore', 'ignore', 'ignore'],
    );
    const upstreamPid = await upstreamOf(t, pidFile);
    child.kill('SIGTERM');
    expect(await exited).toEqual({ code: 0, signal: null });
    await until(() => !isAlive(upstreamPid), 'the upstream server to be ended');
  });

  it("on SIGTERM while a session's upstream starts (a server that never answers initialize), ends that process group and exits 0", async (t) => {
    const marker = fresh('probed');
    const pidFile = fresh('pid');
    // The startup check gets a real server; the session's upstream, started after it, never answers initialize.
    const upstream = [
      'sh',
      '-c',
      'if [ -e "$0" ]; then echo $$ > "$1" && exec sleep 600; else touch "$0" && exec "$2" "$3" "$4"; fi',
      marker,
      pidFile,
      process.execPath,
      FS_SERVER,
      freshDir(),
    ];
    const { child, exited } = spawnProxy(t, ['--trust', '--listen', '127.0.0.1:0', '--', ...upstream], ['ignore', 'pipe', 'ignore']);
    let stdout = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    await until(() => /listening on (\S+)/.test(stdout), 'the proxy to listen');
    const url = /listening on (\S+)/.exec(stdout)![1]!;
    const initialize = fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'http-test', version: '1.0.0' } },
      }),
    }).catch(() => null); // the connection is dropped as the proxy stops
    const upstreamPid = await upstreamOf(t, pidFile);
    child.kill('SIGTERM');
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(isAlive(upstreamPid)).toBe(false); // the proxy waited for that group to be gone
    await initialize;
  });

  it('keeps one guard per Mcp-Session-Id: a read in one session is no target for a write in another', async () => {
    const dir = freshDir();
    const proxy = await listening([process.execPath, FS_SERVER, dir], ['--trust']);
    const first = await httpClient(proxy.url);
    const second = await httpClient(proxy.url);
    try {
      await first.callTool({ name: 'list_directory', arguments: { path: dir } });
      const admitted = (await first.callTool({
        name: 'write_file',
        arguments: { path: join(dir, 'a.txt'), content: 'a' },
      })) as CallToolResult;
      const refused = (await second.callTool({
        name: 'write_file',
        arguments: { path: join(dir, 'b.txt'), content: 'b' },
      })) as CallToolResult;
      expect(admitted.isError).toBeFalsy();
      expect(refusalOf(refused).error).toMatchObject({ state: 'RESOLVING' });
    } finally {
      await first.close();
      await second.close();
      expect(await proxy.stop()).toBe(0);
    }
  });

  it("closes a session's upstream server when its client ends the session", async () => {
    const pidFile = fresh('pid');
    const proxy = await listening(withPidFile(pidFile, [process.execPath, FS_SERVER, freshDir()]), ['--trust']);
    try {
      const transport = new StreamableHTTPClientTransport(proxy.url);
      const client = new Client({ name: 'http-test', version: '1.0.0' });
      await client.connect(transport);
      await until(
        () => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '' && isRunning(Number(readFileSync(pidFile, 'utf8'))),
        "the session's server",
      );
      const upstreamPid = await readPid(pidFile);
      await transport.terminateSession();
      await client.close();
      await until(() => !isRunning(upstreamPid), "the session's server to exit");
    } finally {
      expect(await proxy.stop()).toBe(0);
    }
  });

  it('refuses a session past --max-sessions with a clear JSON-RPC error, and takes one again once a session ends', async () => {
    const proxy = await listening([process.execPath, FS_SERVER, freshDir()], ['--trust', '--max-sessions', '1']);
    const transport = new StreamableHTTPClientTransport(proxy.url);
    const first = new Client({ name: 'http-test', version: '1.0.0' });
    await first.connect(transport);
    try {
      const refused = await httpClient(proxy.url).catch((error: unknown) => error);
      expect(String(refused)).toMatch(
        /"code":-32000,"message":"pulse-safety mcp-proxy: too many sessions \(1 open, the --max-sessions bound\)/,
      );
      expect((await first.listTools()).tools.length).toBeGreaterThan(0);
      await transport.terminateSession();
      await first.close();
      const next = await httpClient(proxy.url);
      expect((await next.listTools()).tools.length).toBeGreaterThan(0);
      await next.close();
    } finally {
      expect(await proxy.stop()).toBe(0);
    }
  });

  it('closes a session idle past --idle-timeout and its upstream server, and the client can start a new one', async () => {
    const pidFile = fresh('pid');
    const proxy = await listening(withPidFile(pidFile, [process.execPath, FS_SERVER, freshDir()]), [
      '--trust',
      '--max-sessions',
      '1',
      '--idle-timeout',
      '200',
    ]);
    try {
      const client = await httpClient(proxy.url);
      await until(
        () => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '' && isRunning(Number(readFileSync(pidFile, 'utf8'))),
        "the session's server",
      );
      const upstreamPid = await readPid(pidFile);
      await until(() => !isRunning(upstreamPid), "the idle session's server to exit");
      await expect(client.listTools()).rejects.toThrow(/Session not found/);
      await client.close();
      const again = await httpClient(proxy.url);
      expect((await again.listTools()).tools.length).toBeGreaterThan(0);
      await again.close();
    } finally {
      expect(await proxy.stop()).toBe(0);
    }
  });

  it('refuses a request whose Host is not 127.0.0.1 or localhost (DNS rebinding)', async () => {
    const proxy = await listening([process.execPath, FS_SERVER, freshDir()], ['--trust']);
    try {
      const { request } = await import('node:http');
      const status = await new Promise<number | undefined>((resolve, reject) => {
        const req = request(
          { host: '127.0.0.1', port: proxy.url.port, path: '/mcp', method: 'POST', headers: { host: 'attacker.example' } },
          (res) => {
            res.resume();
            resolve(res.statusCode);
          },
        );
        req.on('error', reject);
        req.end('{}');
      });
      expect(status).toBe(403);
    } finally {
      await proxy.stop();
    }
  });

  it('proxies a Streamable HTTP upstream given with --upstream', async () => {
    const { createServer } = await import('node:net');
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const upstream = spawn(process.execPath, [EVERYTHING_SERVER, 'streamableHttp'], {
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let upstreamErr = '';
    upstream.stderr.on('data', (chunk: Buffer) => (upstreamErr += chunk.toString()));
    try {
      await until(() => upstreamErr.includes('listening on port'), 'the everything server to listen');
      const child = spawn(
        process.execPath,
        [BIN, 'mcp-proxy', '--trust', '--listen', '127.0.0.1:0', '--upstream', `http://127.0.0.1:${port}/mcp`],
        {
          cwd: ROOT,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      await until(() => /listening on (\S+)/.test(stdout), 'the proxy to listen');
      const client = await httpClient(new URL(/listening on (\S+)/.exec(stdout)![1]!));
      try {
        const refused = (await client.callTool({ name: 'toggle-simulated-logging', arguments: {} })) as CallToolResult;
        expect(refusalOf(refused).error).toMatchObject({ code: 'FSM_BLOCKED' });
        const echoed = (await client.callTool({ name: 'echo', arguments: { message: 'over http' } })) as CallToolResult;
        expect(textOf(echoed)).toContain('over http');
      } finally {
        await client.close();
        child.kill('SIGTERM');
        expect(await exited).toBe(0);
      }
    } finally {
      upstream.kill('SIGTERM');
    }
  });
});
