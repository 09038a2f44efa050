/**
 * The MCP adapter in process: `gateMcpServer` on a real `McpServer`, and
 * `createGatingProxy` between a real upstream `McpServer` and a real
 * `Client`, all over the SDK's `InMemoryTransport` pairs. Plus the example
 * (examples/mcp-in-process.ts).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  CreateMessageResultSchema,
  ElicitRequestSchema,
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runExample } from '../../../examples/mcp-in-process.js';
import {
  AdapterConfigError,
  answerStateOf,
  createGatingProxy,
  gateMcpServer,
  type McpGateOptions,
} from '../../../src/adapters/mcp/index.js';
import { createSessionGuard, createSessionStore } from '../../../src/index.js';
import { refusalOf, textOf } from '../../support/mcp.js';

async function connect(server: McpServer | Server, client = new Client({ name: 'in-process-test', version: '1.0.0' })): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.connect(clientSide);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** A gated server with a read `look`, a write `change` (output schema) and a write `touch` (none); `runs` counts callback runs. */
function gatedServer(options: McpGateOptions = {}) {
  const runs = { look: 0, change: 0, touch: 0 };
  const server = gateMcpServer(new McpServer({ name: 'gated', version: '1.0.0' }), options);
  server.registerTool('look', { inputSchema: { at: z.string() }, annotations: { readOnlyHint: true } }, async ({ at }) => {
    runs.look += 1;
    return { content: [{ type: 'text', text: `looked at ${at}` }] };
  });
  server.registerTool(
    'change',
    { inputSchema: { at: z.string() }, outputSchema: { changed: z.string() }, annotations: { readOnlyHint: false } },
    async ({ at }) => {
      runs.change += 1;
      return { content: [{ type: 'text', text: `changed ${at}` }], structuredContent: { changed: at } };
    },
  );
  server.registerTool('touch', { annotations: { readOnlyHint: false } }, async () => {
    runs.touch += 1;
    return { content: [{ type: 'text', text: 'touched' }] };
  });
  return { server, runs };
}

describe('the example (examples/mcp-in-process.ts)', () => {
  it('refuses the unverified writes and a write of a note never read (note_id is a target), and admits the others', async () => {
    const { lines, notes } = await runExample();
    expect(lines).toEqual([
      'write_note todo before any read -> refused RESOLVING (no-target); answer allowed',
      'read_note todo -> water the plants; answer allowed',
      "write_note todo -> saved 'todo'; answer refused (unverified-write)",
      'write_note todo again -> refused VERIFYING (unverified-write); answer refused (unverified-write)',
      "read_note ideas -> (no note 'ideas'); answer refused (unverified-write)",
      'read_note todo -> buy milk; answer allowed',
      'write_note shopping -> refused READING (unknown-target); answer allowed',
      "write_note todo again -> saved 'todo'; answer refused (unverified-write)",
    ]);
    expect([...notes]).toEqual([['todo', 'buy bread']]);
  });
});

describe('gateMcpServer', () => {
  it('refuses a write before any read without running its callback', async () => {
    const { server, runs } = gatedServer();
    const client = await connect(server);
    const result = await call(client, 'change', { at: 'x' });
    expect(refusalOf(result).error).toMatchObject({ code: 'FSM_BLOCKED', state: 'RESOLVING', tool: 'change' });
    expect(runs.change).toBe(0);
  });

  it('admits the write after a read, and refuses the next until a read verifies it', async () => {
    const { server, runs } = gatedServer();
    const client = await connect(server);
    await call(client, 'look', { at: 'x' });
    expect((await call(client, 'change', { at: 'x' })).isError).toBeFalsy();
    expect(refusalOf(await call(client, 'touch')).error).toMatchObject({ state: 'VERIFYING' });
    await call(client, 'look', { at: 'x' });
    expect((await call(client, 'touch')).isError).toBeFalsy();
    expect(runs).toEqual({ look: 2, change: 1, touch: 1 });
  });

  it("refuses a tool with an outputSchema without structuredContent, so the client's validation passes", async () => {
    const { server } = gatedServer();
    const client = await connect(server);
    await client.listTools();
    const result = await call(client, 'change', { at: 'x' });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
  });

  it('gives a refusal of a tool without an outputSchema the refusal as structuredContent', async () => {
    const { server } = gatedServer();
    const client = await connect(server);
    const result = await call(client, 'touch');
    expect(result.structuredContent).toEqual(refusalOf(result));
  });

  it("adds the answer state to the callback's own result", async () => {
    const { server } = gatedServer();
    const client = await connect(server);
    await call(client, 'look', { at: 'x' });
    const result = await call(client, 'change', { at: 'x' });
    expect(result.structuredContent).toEqual({ changed: 'x' });
    expect(answerStateOf(result)).toMatchObject({ allowed: false, state: 'VERIFYING', rule: 'unverified-write' });
  });

  it('checks concurrent calls under their own request ids (extra.requestId), never "undefined"', async () => {
    const guard = createSessionGuard({ strictFailedWrites: true });
    const server = gateMcpServer(new McpServer({ name: 'slow', version: '1.0.0' }), { guard });
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started = 0;
    server.registerTool('slow_read', { annotations: { readOnlyHint: true } }, async () => {
      started += 1;
      await gate;
      return { content: [{ type: 'text', text: 'done' }] };
    });
    const client = await connect(server);
    const both = Promise.all([call(client, 'slow_read'), call(client, 'slow_read')]);
    await expect.poll(() => started).toBe(2);
    const keys = guard.context.inFlight.map((inFlight) => inFlight.key);
    release();
    await both;
    expect(keys).toHaveLength(2);
    expect(new Set(keys).size).toBe(2);
    expect(keys.every((key) => /^id:\d+$/.test(key))).toBe(true);
  });

  it('records a callback that throws as a failed call: with strict failed writes, the write needs verification', async () => {
    const server = gateMcpServer(new McpServer({ name: 'failing', version: '1.0.0' }));
    server.registerTool('look', { annotations: { readOnlyHint: true } }, async () => ({ content: [{ type: 'text', text: 'ok' }] }));
    server.registerTool('break', { annotations: { readOnlyHint: false } }, async () => {
      throw new Error('disk full');
    });
    const client = await connect(server);
    await call(client, 'look');
    expect((await call(client, 'break')).isError).toBe(true);
    expect(refusalOf(await call(client, 'break')).error).toMatchObject({ state: 'VERIFYING' });
  });

  it('without strict failed writes, a callback that throws changes nothing', async () => {
    const guard = createSessionGuard();
    const server = gateMcpServer(new McpServer({ name: 'failing', version: '1.0.0' }), { guard, strictFailedWrites: false });
    server.registerTool('look', { annotations: { readOnlyHint: true } }, async () => ({ content: [{ type: 'text', text: 'ok' }] }));
    let calls = 0;
    server.registerTool('break', { annotations: { readOnlyHint: false } }, async () => {
      calls += 1;
      throw new Error('disk full');
    });
    const client = await connect(server);
    await call(client, 'look');
    await call(client, 'break');
    await call(client, 'break');
    expect(calls).toBe(2);
  });

  it('lets a write whose output reports verification.ok verify itself (its own annotations are trusted)', async () => {
    const { server } = gatedServer({ guard: createSessionGuard({ strictFailedWrites: true }) });
    server.registerTool('checked_write', { annotations: { readOnlyHint: false } }, async () => ({
      content: [{ type: 'text', text: '{"done": true, "verification": {"ok": true}}' }],
    }));
    const client = await connect(server);
    await call(client, 'look', { at: 'x' });
    const result = await call(client, 'checked_write');
    expect(answerStateOf(result)).toMatchObject({ allowed: true });
    expect((await call(client, 'touch')).isError).toBeFalsy();
  });

  it('keeps a tool gated when its callback is replaced with update()', async () => {
    const { server, runs } = gatedServer();
    let replaced = 0;
    const tool = server.registerTool('swap', { annotations: { readOnlyHint: false } }, async () => ({ content: [] }));
    tool.update({
      callback: async () => {
        replaced += 1;
        return { content: [] };
      },
    });
    const client = await connect(server);
    expect(refusalOf(await call(client, 'swap')).error).toMatchObject({ tool: 'swap', state: 'RESOLVING' });
    expect(replaced).toBe(0);
    expect(runs.look).toBe(0);
  });

  it('reclassifies a tool whose annotations update() changes', async () => {
    const { server } = gatedServer();
    const tool = server.registerTool('probe', { annotations: { readOnlyHint: false } }, async () => ({ content: [] }));
    tool.update({ annotations: { readOnlyHint: true } });
    const client = await connect(server);
    await call(client, 'probe'); // a read now: it establishes the target
    expect((await call(client, 'touch')).isError).toBeFalsy();
  });

  it('gates tools registered with the deprecated tool() too', async () => {
    const { server } = gatedServer();
    let ran = false;
    server.tool('legacy_write', async () => {
      ran = true;
      return { content: [] };
    });
    const client = await connect(server);
    expect(refusalOf(await call(client, 'legacy_write')).error).toMatchObject({ tool: 'legacy_write', kind: 'write' });
    expect(ran).toBe(false);
  });

  it('keeps one guard per session key with getGuard', async () => {
    const sessions = createSessionStore({ guard: { strictFailedWrites: true } });
    const first = gatedServer({ getGuard: (key) => sessions.session(key), sessionKey: 'alice' });
    const second = gatedServer({ getGuard: (key) => sessions.session(key), sessionKey: 'bob' });
    const alice = await connect(first.server);
    const bob = await connect(second.server);
    await call(alice, 'look', { at: 'x' });
    expect((await call(alice, 'touch')).isError).toBeFalsy();
    expect(refusalOf(await call(bob, 'touch')).error).toMatchObject({ state: 'RESOLVING' });
    expect(sessions.session('alice').state).toBe('VERIFYING');
  });

  it('throws a configuration error at connect when no tool can read', async () => {
    const server = gateMcpServer(new McpServer({ name: 'writes-only', version: '1.0.0' }));
    server.registerTool('delete_all', { annotations: { readOnlyHint: false } }, async () => ({ content: [] }));
    const [, serverSide] = InMemoryTransport.createLinkedPair();
    await expect(server.connect(serverSide)).rejects.toThrow(AdapterConfigError);
    await expect(server.connect(serverSide)).rejects.toThrow(/none of the 1 tools of this server \(delete_all\) is a read or resolve/);
  });

  it('with trusted: false, reads its own annotations as untrusted: every tool a write', async () => {
    const { server } = gatedServer({ trusted: false });
    const [, serverSide] = InMemoryTransport.createLinkedPair();
    await expect(server.connect(serverSide)).rejects.toThrow(/annotations are not trusted/);
  });

  it('refuses to gate a server that already has tools (they would run ungated)', () => {
    const server = new McpServer({ name: 'late', version: '1.0.0' });
    server.registerTool('look', { annotations: { readOnlyHint: true } }, async () => ({ content: [] }));
    expect(() => gateMcpServer(server)).toThrow(/tools are already registered \(look\)/);
  });

  it('refuses task-based tools', () => {
    const { server } = gatedServer();
    expect(() =>
      server.experimental.tasks.registerToolTask(
        'job',
        {},
        { createTask: async () => ({ task: {} as never }), getTask: async () => ({}) as never, getTaskResult: async () => ({}) as never },
      ),
    ).toThrow(/task-based tools cannot be gated/);
  });

  it("records a failed write as possibly applied with a guard that is not strict itself (the gate's strictFailedWrites, default true)", async () => {
    const guard = createSessionGuard(); // strictFailedWrites false
    const server = gateMcpServer(new McpServer({ name: 'lax-guard', version: '1.0.0' }), { guard });
    server.registerTool('look', { annotations: { readOnlyHint: true } }, async () => ({ content: [{ type: 'text', text: 'ok' }] }));
    let runs = 0;
    server.registerTool('break', { annotations: { readOnlyHint: false } }, async () => {
      runs += 1;
      throw new Error('timed out half way');
    });
    const client = await connect(server);
    await call(client, 'look');
    await call(client, 'break');
    const again = await call(client, 'break');
    expect(refusalOf(again).error).toMatchObject({ state: 'VERIFYING' });
    expect(runs).toBe(1);
  });

  it('puts the answer state on the error result of a callback that throws', async () => {
    const server = gateMcpServer(new McpServer({ name: 'failing', version: '1.0.0' }));
    server.registerTool('look', { annotations: { readOnlyHint: true } }, async () => ({ content: [{ type: 'text', text: 'ok' }] }));
    server.registerTool('break', { annotations: { readOnlyHint: false } }, async () => {
      throw new Error('disk full');
    });
    const client = await connect(server);
    await call(client, 'look');
    const failed = await call(client, 'break');
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toBe('disk full');
    expect(answerStateOf(failed)).toMatchObject({ allowed: false, state: 'VERIFYING', rule: 'unverified-write' });
  });

  it('puts the answer state on the results the SDK makes itself: unknown tool, invalid arguments, output not matching its schema', async () => {
    const { server } = gatedServer({ guard: createSessionGuard() });
    server.registerTool('bad_output', { outputSchema: { count: z.number() }, annotations: { readOnlyHint: true } }, async () => ({
      content: [{ type: 'text', text: 'x' }],
      structuredContent: { count: 'many' },
    }));
    const client = await connect(server);
    const unknown = await call(client, 'no_such_tool');
    expect(textOf(unknown)).toMatch(/Tool no_such_tool not found/);
    expect(answerStateOf(unknown)).toMatchObject({ allowed: true, state: 'RESOLVING' });
    const invalid = await call(client, 'look', { at: 42 });
    expect(invalid.isError).toBe(true);
    expect(answerStateOf(invalid)).toMatchObject({ allowed: true, state: 'RESOLVING' });
    const badOutput = (await client.request(
      { method: 'tools/call', params: { name: 'bad_output', arguments: {} } },
      CallToolResultSchema,
    )) as CallToolResult;
    expect(textOf(badOutput)).toMatch(/[Oo]utput validation error/);
    expect(answerStateOf(badOutput)).toMatchObject({ allowed: true, state: 'READING' });
  });

  it('does not run a call whose guard cannot be had (getGuard throws), and says so with the answer state UNKNOWN', async () => {
    const { server, runs } = gatedServer({
      getGuard: () => {
        throw new Error('no such tenant');
      },
    });
    const client = await connect(server);
    const result = await call(client, 'look', { at: 'x' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^The call to 'look' was not run: the safety gate could not check it \(no such tenant\)/);
    expect(answerStateOf(result)).toMatchObject({ allowed: false, state: 'UNKNOWN' });
    expect(runs.look).toBe(0);
  });

  it("derives targets from a registered tool's input schema: a read of one note is no target for a write of another", async () => {
    const server = gateMcpServer(new McpServer({ name: 'notes', version: '1.0.0' }), { guard: createSessionGuard() });
    const written: string[] = [];
    server.registerTool(
      'read_note',
      { inputSchema: { note_id: z.string() }, annotations: { readOnlyHint: true } },
      async ({ note_id }) => ({ content: [{ type: 'text', text: `note ${note_id}` }] }),
    );
    server.registerTool(
      'save',
      {
        inputSchema: { where: z.string().describe('The file to write'), content: z.string().describe('What to write in the file') },
        annotations: { readOnlyHint: false },
      },
      async ({ where }) => {
        written.push(where);
        return { content: [{ type: 'text', text: 'saved' }] };
      },
    );
    server.registerTool('delete_note', { inputSchema: { note_id: z.string() }, annotations: { readOnlyHint: false } }, async () => ({
      content: [{ type: 'text', text: 'deleted' }],
    }));
    const client = await connect(server);
    await call(client, 'read_note', { note_id: 'a' });
    const other = refusalOf(await call(client, 'delete_note', { note_id: 'b' }));
    expect(other.error).toMatchObject({ tool: 'delete_note', state: 'READING', rule: 'unknown-target', target: 'note_id=b' });
    expect(refusalOf(await call(client, 'save', { where: '/home/dev/notes/a.txt', content: 'x' })).error).toMatchObject({
      tool: 'save',
      state: 'READING',
      target: '/home/dev/notes/a.txt',
    });
    expect(written).toEqual([]);
    expect((await call(client, 'delete_note', { note_id: 'a' })).isError).toBeFalsy();
  });

  it("takes no content argument for a target, whatever its description says: a read of the file's directory admits the write", async () => {
    const server = gateMcpServer(new McpServer({ name: 'files', version: '1.0.0' }), { guard: createSessionGuard() });
    const written: string[] = [];
    server.registerTool('list', { inputSchema: { directory: z.string() }, annotations: { readOnlyHint: true } }, async () => ({
      content: [{ type: 'text', text: 'a.txt' }],
    }));
    server.registerTool(
      'save',
      {
        inputSchema: { where: z.string().describe('The file to write'), content: z.string().describe('What to write in the file') },
        annotations: { readOnlyHint: false },
      },
      async ({ where }) => {
        written.push(where);
        return { content: [{ type: 'text', text: 'saved' }] };
      },
    );
    const client = await connect(server);
    await call(client, 'list', { directory: '/home/dev/other' });
    expect(refusalOf(await call(client, 'save', { where: '/home/dev/notes/a.txt', content: 'x' })).error).toMatchObject({
      rule: 'unknown-target',
      target: '/home/dev/notes/a.txt',
    });
    await call(client, 'list', { directory: '/home/dev/notes' });
    expect((await call(client, 'save', { where: '/home/dev/notes/a.txt', content: 'x' })).isError).toBeFalsy();
    expect(written).toEqual(['/home/dev/notes/a.txt']);
  });

  it("judges a registered shell tool's command (readOnlyHint: false) by the shell classifier: its targets are the places the command names", async () => {
    const ran: string[] = [];
    const server = gateMcpServer(new McpServer({ name: 'shell', version: '1.0.0' }));
    server.registerTool('read_note', { inputSchema: { note_id: z.string() }, annotations: { readOnlyHint: true } }, async () => ({
      content: [{ type: 'text', text: 'a note' }],
    }));
    server.registerTool('shell', { inputSchema: { command: z.string() }, annotations: { readOnlyHint: false } }, async ({ command }) => {
      ran.push(command);
      return { content: [{ type: 'text', text: '{"verification": {"ok": true}}' }] }; // what `echo` printed
    });
    const client = await connect(server);
    await call(client, 'read_note', { note_id: 'a' });
    const refused = await call(client, 'shell', { command: 'rm -rf /home/dev/build; echo \'{"verification":{"ok":true}}\'' });
    expect(refusalOf(refused).error).toMatchObject({ rule: 'unknown-target', target: '/home/dev/build' });
    // readOnlyHint: false makes even a reading command a write, on the places it names
    const cat = await call(client, 'shell', { command: 'cat /home/dev/build/x' });
    expect(refusalOf(cat).error).toMatchObject({ rule: 'unknown-target', target: '/home/dev/build/x' });
    expect(ran).toEqual([]);
  });

  it('counts the output of a tool with a query argument as chosen by the call: it never verifies the write', async () => {
    const server = gateMcpServer(new McpServer({ name: 'db', version: '1.0.0' }));
    server.registerTool('look', { annotations: { readOnlyHint: true } }, async () => ({ content: [{ type: 'text', text: 'rows' }] }));
    server.registerTool('run_query', { inputSchema: { query: z.string() }, annotations: { readOnlyHint: false } }, async () => ({
      content: [{ type: 'text', text: '{"verification": {"ok": true}}' }],
    }));
    const client = await connect(server);
    await call(client, 'look');
    const written = await call(client, 'run_query', { query: 'DELETE FROM notes' });
    expect(written.isError).toBeFalsy();
    expect(answerStateOf(written)).toMatchObject({ allowed: false, state: 'VERIFYING', rule: 'unverified-write' });
  });

  it('refuses both a guard and getGuard', () => {
    const guard = createSessionGuard({ strictFailedWrites: true });
    expect(() => gateMcpServer(new McpServer({ name: 'c', version: '1' }), { guard, getGuard: () => guard })).toThrow(
      /either guard or getGuard/,
    );
  });
});

describe('createGatingProxy, an upstream that does not declare tools', () => {
  it('gates tools/call all the same: a tool not listed is a write, refused before it reaches the server', async () => {
    const upstreamServer = new Server({ name: 'toolless', version: '1.0.0' }, { capabilities: { logging: {} } });
    const seen: string[] = [];
    upstreamServer.fallbackRequestHandler = async (request) => {
      if (request.method !== 'tools/call') throw new McpError(ErrorCode.MethodNotFound, request.method);
      const name = String((request.params as { name?: unknown }).name);
      seen.push(name);
      if (name === 'change') throw new McpError(ErrorCode.InternalError, 'disk full');
      return { content: [{ type: 'text', text: 'ran' }] };
    };
    const upstream = await connect(upstreamServer);
    expect(upstream.getServerCapabilities()?.tools).toBeUndefined();
    const proxy = await createGatingProxy(upstream, { catalog: { name: 'toolless', tools: { look: 'read', change: 'write' } } });
    const client = await connect(proxy);

    const refused = await call(client, 'change');
    expect(refusalOf(refused).error).toMatchObject({ code: 'FSM_BLOCKED', state: 'RESOLVING', tool: 'change', kind: 'write' });
    expect(answerStateOf(refused)).toMatchObject({ allowed: true, state: 'RESOLVING' });
    expect(seen).toEqual([]);

    expect(textOf(await call(client, 'look'))).toBe('ran');
    // A tool the catalog does not list is a write on a place nobody named: no read admits it.
    expect(refusalOf(await call(client, 'erase')).error).toMatchObject({ tool: 'erase', kind: 'write', rule: 'unknown-target' });
    // Admitted after the read, run, failed upstream: its JSON-RPC error carries the answer state in data._meta.
    const error = (await call(client, 'change').catch((thrown: unknown) => thrown)) as McpError;
    expect(error).toBeInstanceOf(McpError);
    expect(error.message).toMatch(/disk full/);
    expect(answerStateOf(error.data)).toMatchObject({ allowed: false, state: 'VERIFYING', rule: 'unverified-write' });
    expect(seen).toEqual(['look', 'change']);
  });
});

describe('createGatingProxy in process', () => {
  /** An ungated upstream server (a read `look`, a write `change`, and `probe`), its client, and a proxy and its client. */
  async function proxied(options: Parameters<typeof createGatingProxy>[1] = { trusted: true }) {
    const upstreamServer = new McpServer({ name: 'upstream', version: '2.0.0' }, { instructions: 'be careful' });
    upstreamServer.registerTool('look', { annotations: { readOnlyHint: true } }, async () => ({
      content: [{ type: 'text', text: 'seen' }],
    }));
    upstreamServer.registerTool('change', { annotations: { readOnlyHint: false } }, async () => ({
      content: [{ type: 'text', text: 'changed' }],
    }));
    const probe = upstreamServer.registerTool('probe', { annotations: { readOnlyHint: false } }, async () => ({
      content: [{ type: 'text', text: 'probed' }],
    }));
    const upstream = await connect(upstreamServer);
    const proxy = await createGatingProxy(upstream, options);
    const client = await connect(proxy);
    return { upstreamServer, upstream, proxy, client, probe };
  }

  it('stands for the upstream server: its name and instructions', async () => {
    const { client } = await proxied();
    expect(client.getServerVersion()).toMatchObject({ name: 'upstream', version: '2.0.0' });
    expect(client.getInstructions()).toBe('be careful');
  });

  it('refuses a task-augmented call before it reaches the server (tasks are not advertised)', async () => {
    const { client, upstreamServer } = await proxied();
    let ran = false;
    upstreamServer.registerTool('tracked', { annotations: { readOnlyHint: true } }, async () => {
      ran = true;
      return { content: [] };
    });
    expect(client.getServerCapabilities()?.tasks).toBeUndefined();
    await expect(
      client.request({ method: 'tools/call', params: { name: 'tracked', arguments: {}, task: { ttl: 60_000 } } }, CallToolResultSchema),
    ).rejects.toThrow(/does not support task creation/);
    expect(ran).toBe(false);
  });

  it("keeps the caller's oninitialized", async () => {
    const upstreamServer = new McpServer({ name: 'upstream', version: '1.0.0' });
    upstreamServer.registerTool('look', { annotations: { readOnlyHint: true } }, async () => ({ content: [] }));
    const proxy = await createGatingProxy(await connect(upstreamServer), { trusted: true });
    let initialized = false;
    proxy.oninitialized = () => (initialized = true);
    await connect(proxy);
    await expect.poll(() => initialized).toBe(true);
  });

  it('refuses an upstream client that is not connected', async () => {
    const client = new Client({ name: 'idle', version: '1.0.0' });
    await expect(createGatingProxy(client)).rejects.toThrow(/not connected/);
  });

  it('reclassifies the tools after the upstream says its list changed, and passes the notification on', async () => {
    const { client, probe } = await proxied();
    let changed = false;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed = true;
    });
    probe.update({ annotations: { readOnlyHint: true } });
    await expect.poll(() => changed).toBe(true);
    await call(client, 'probe'); // now a read: it establishes the target
    expect((await call(client, 'change')).isError).toBeFalsy();
  });

  it('refuses a call of a tool the upstream never listed as a write, without structuredContent', async () => {
    const { client } = await proxied();
    const result = await call(client, 'unlisted');
    expect(refusalOf(result).error).toMatchObject({ tool: 'unlisted', kind: 'write' });
    expect(result.structuredContent).toBeUndefined();
  });

  it('cancels upstream a call whose client cancelled it, and records it as failed', async () => {
    const upstreamServer = new McpServer({ name: 'slow', version: '1.0.0' });
    upstreamServer.registerTool('look', { annotations: { readOnlyHint: true } }, async () => ({ content: [] }));
    let aborted = false;
    let started = false;
    upstreamServer.registerTool('slow_write', { annotations: { readOnlyHint: false } }, async (extra) => {
      started = true;
      await new Promise<void>((resolve) => extra.signal.addEventListener('abort', () => resolve()));
      aborted = true;
      return { content: [] };
    });
    const guard = createSessionGuard({ strictFailedWrites: true });
    const proxy = await createGatingProxy(await connect(upstreamServer), { trusted: true, guard });
    const client = await connect(proxy);
    await call(client, 'look');
    const abort = new AbortController();
    const pending = client.callTool({ name: 'slow_write', arguments: {} }, undefined, { signal: abort.signal });
    await expect.poll(() => started).toBe(true);
    abort.abort();
    await expect(pending).rejects.toThrow();
    await expect.poll(() => aborted).toBe(true);
    await expect.poll(() => guard.state).toBe('VERIFYING');
  });

  it("does not let an untrusted server's output verify its own write", async () => {
    const upstreamServer = new McpServer({ name: 'untrusted', version: '1.0.0' });
    upstreamServer.registerTool('look', {}, async () => ({ content: [] }));
    upstreamServer.registerTool('change', {}, async () => ({ content: [{ type: 'text', text: '{"verification": {"ok": true}}' }] }));
    const proxy = await createGatingProxy(await connect(upstreamServer), { catalog: { name: 'mine', tools: { look: 'read' } } });
    const client = await connect(proxy);
    await call(client, 'look');
    await call(client, 'change');
    expect(refusalOf(await call(client, 'change')).error).toMatchObject({ state: 'VERIFYING' });
  });

  it("records a shell tool's call with its whole classification: output its command chose never verifies the write", async () => {
    const upstreamServer = new McpServer({ name: 'shell', version: '1.0.0' });
    const ran: string[] = [];
    upstreamServer.registerTool('run', { inputSchema: { command: z.string() } }, async ({ command }) => {
      ran.push(command);
      return { content: [{ type: 'text', text: '{"verification": {"ok": true}}' }] }; // what `echo` printed
    });
    const proxy = await createGatingProxy(await connect(upstreamServer), {
      trusted: true,
      catalog: { name: 'shell', tools: { run: { shell: 'command' } } },
    });
    const client = await connect(proxy);
    await call(client, 'run', { command: 'cat /home/dev/notes.txt' });
    const written = await call(client, 'run', { command: 'echo \'{"verification": {"ok": true}}\' > /home/dev/notes.txt' });
    expect(written.isError).toBeFalsy();
    expect(answerStateOf(written)).toMatchObject({ allowed: false, state: 'VERIFYING', rule: 'unverified-write' });
    const again = await call(client, 'run', { command: 'rm /home/dev/notes.txt' });
    expect(refusalOf(again).error).toMatchObject({ state: 'VERIFYING', rule: 'unverified-write', target: '/home/dev/notes.txt' });
    expect(ran).toHaveLength(2);
  });

  it('forwards an elicitation request of the server to the client and its answer back', async () => {
    const upstreamServer = new McpServer({ name: 'asking', version: '1.0.0' });
    upstreamServer.registerTool('ask', { annotations: { readOnlyHint: true } }, async () => {
      const answer = await upstreamServer.server.elicitInput({
        message: 'Which host?',
        requestedSchema: { type: 'object', properties: { host: { type: 'string' } }, required: ['host'] },
      });
      return { content: [{ type: 'text', text: `${answer.action}: ${JSON.stringify(answer.content)}` }] };
    });
    const upstream = new Client({ name: 'proxy-side', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    const proxy = await createGatingProxy(await connect(upstreamServer, upstream), { trusted: true });
    const client = new Client({ name: 'host', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: { host: 'web-01' } }));
    await connect(proxy, client);
    expect((await call(client, 'ask')).content).toEqual([{ type: 'text', text: 'accept: {"host":"web-01"}' }]);
  });

  it('answers a server request the client did not declare with MethodNotFound', async () => {
    const upstreamServer = new McpServer({ name: 'asking', version: '1.0.0' });
    upstreamServer.registerTool('ask', { annotations: { readOnlyHint: true } }, async () => {
      try {
        await upstreamServer.server.elicitInput({ message: 'Which host?', requestedSchema: { type: 'object', properties: {} } });
        return { content: [{ type: 'text', text: 'answered' }] };
      } catch (error) {
        return { content: [{ type: 'text', text: (error as Error).message }] };
      }
    });
    const upstream = new Client({ name: 'proxy-side', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    const proxy = await createGatingProxy(await connect(upstreamServer, upstream), { trusted: true });
    const client = await connect(proxy); // declares no elicitation
    expect(textOf(await call(client, 'ask'))).toMatch(
      /-32601.*the client behind the pulse-safety gating proxy does not support elicitation$/,
    );
  });

  it('cancels at the client a sampling request the server cancelled', async () => {
    const upstreamServer = new McpServer({ name: 'sampling', version: '1.0.0' });
    const stop = new AbortController();
    const sample = {
      method: 'sampling/createMessage' as const,
      params: { messages: [{ role: 'user' as const, content: { type: 'text' as const, text: 'hm' } }], maxTokens: 5 },
    };
    upstreamServer.registerTool('think', { annotations: { readOnlyHint: true } }, async (extra) => {
      // A first request, answered: SDK 1.32.2 ignores a cancellation of request id 0 (`if (!requestId) return`).
      await extra.sendRequest(sample, CreateMessageResultSchema);
      await extra.sendRequest(sample, CreateMessageResultSchema, { signal: stop.signal }).catch(() => undefined);
      return { content: [{ type: 'text', text: 'gave up' }] };
    });
    const upstream = new Client({ name: 'proxy-side', version: '1.0.0' }, { capabilities: { sampling: {} } });
    const proxy = await createGatingProxy(await connect(upstreamServer, upstream), { trusted: true });
    const client = new Client({ name: 'host', version: '1.0.0' }, { capabilities: { sampling: {} } });
    let sampling = 0;
    let cancelled = false;
    client.setRequestHandler(CreateMessageRequestSchema, (_request, extra) => {
      sampling += 1;
      if (sampling === 1) return { model: 'scripted', role: 'assistant', content: { type: 'text', text: 'first' } };
      return new Promise((_resolve, reject) =>
        extra.signal.addEventListener('abort', () => ((cancelled = true), reject(new Error('cancelled')))),
      );
    });
    await connect(proxy, client);
    const pending = call(client, 'think');
    await expect.poll(() => sampling).toBe(2);
    stop.abort();
    await expect.poll(() => cancelled).toBe(true);
    expect((await pending).content).toEqual([{ type: 'text', text: 'gave up' }]);
  });

  it('throws a configuration error when no upstream tool can read (untrusted annotations)', async () => {
    const upstreamServer = new McpServer({ name: 'untrusted', version: '1.0.0' });
    upstreamServer.registerTool('look', { annotations: { readOnlyHint: true } }, async () => ({ content: [] }));
    await expect(createGatingProxy(await connect(upstreamServer))).rejects.toThrow(AdapterConfigError);
  });

  it("lets a catalog make an untrusted server's tool a read", async () => {
    const upstreamServer = new McpServer({ name: 'untrusted', version: '1.0.0' });
    upstreamServer.registerTool('look', { annotations: { readOnlyHint: true } }, async () => ({ content: [] }));
    upstreamServer.registerTool('change', { annotations: { readOnlyHint: false } }, async () => ({ content: [] }));
    const proxy = await createGatingProxy(await connect(upstreamServer), { catalog: { name: 'mine', tools: { look: 'read' } } });
    const client = await connect(proxy);
    await call(client, 'look');
    expect((await call(client, 'change')).isError).toBeFalsy();
  });
});
