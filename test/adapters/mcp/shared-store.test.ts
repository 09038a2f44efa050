/**
 * The MCP gate with sessions shared by many processes: `gateMcpServer` and
 * `createGatingProxy` given `createSharedSessionStore().session(key)` (an
 * asynchronous guard) over a real Redis, two stores standing for two
 * processes. Real SDK servers and clients over the SDK's in-memory transport.
 *
 * Redis: `PULSE_SAFETY_REDIS_URL` (CI), else a redis-server of our own on a
 * free loopback port, else skipped saying why; under CI=true a missing Redis
 * fails (test/support/redis.ts). Every test uses a key prefix of its own.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Redis as RedisClient, type Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerStateOf, createGatingProxy, gateMcpServer, type McpGateOptions } from '../../../src/adapters/mcp/index.js';
import { createRedisSnapshotStore } from '../../../src/store/redis-store.js';
import { createSharedSessionStore, type SharedSessionStore } from '../../../src/store/shared-session-store.js';
import {
  client as redisClient,
  deletePrefix,
  freePort,
  redisPlan,
  redisSkipNote,
  startRedis,
  testPrefix,
  type RedisServer,
} from '../../support/redis.js';
import { refusalOf, textOf } from '../../support/mcp.js';

const plan = redisPlan();
const skipNote = redisSkipNote(plan);

async function connect(server: McpServer | Server): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'shared-store-test', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** A notes server gated with `options`: `read_note` a read, `write_note` a write; `writes` counts the writes that ran. */
function notesServer(options: McpGateOptions) {
  const writes: string[] = [];
  const server = gateMcpServer(new McpServer({ name: 'notes', version: '1.0.0' }), options);
  server.registerTool('read_note', { annotations: { readOnlyHint: true } }, async () => ({ content: [{ type: 'text', text: 'a note' }] }));
  server.registerTool('write_note', { annotations: { readOnlyHint: false } }, async () => {
    writes.push('written');
    return { content: [{ type: 'text', text: 'saved' }] };
  });
  return { server, writes };
}

describe.skipIf(skipNote !== '')(`the MCP gate over a shared session store in Redis${skipNote}`, () => {
  let redis: RedisServer;
  const clients: Redis[] = [];
  const stores: SharedSessionStore[] = [];
  const prefix = testPrefix('mcp');

  /** A shared session store of its own Redis connection: one process's view of the sessions. */
  function processStore(): SharedSessionStore {
    const connection = redisClient(redis.url);
    clients.push(connection);
    const store = createSharedSessionStore({ store: createRedisSnapshotStore(connection, { keyPrefix: prefix }) });
    stores.push(store);
    return store;
  }

  beforeAll(async () => {
    redis = await startRedis(plan);
  }, 30_000);

  afterAll(async () => {
    for (const store of stores) await store.close();
    if (clients[0] !== undefined) await deletePrefix(clients[0], prefix);
    for (const connection of clients) connection.disconnect();
    await redis?.stop();
  });

  it('gateMcpServer in two processes shares one session: a read in one admits a write in the other, and its write waits for a read', async () => {
    const first = processStore();
    const second = processStore();
    const a = notesServer({ getGuard: (key) => first.session(key), sessionKey: 'conversation-1' });
    const b = notesServer({ getGuard: (key) => second.session(key), sessionKey: 'conversation-1' });
    const clientA = await connect(a.server);
    const clientB = await connect(b.server);

    const early = await call(clientB, 'write_note');
    expect(refusalOf(early).error).toMatchObject({ code: 'FSM_BLOCKED', state: 'RESOLVING' });
    expect(answerStateOf(early)).toMatchObject({ allowed: true, state: 'RESOLVING' });

    await call(clientA, 'read_note');
    const written = await call(clientB, 'write_note');
    expect(written.isError).toBeFalsy();
    expect(answerStateOf(written)).toMatchObject({ allowed: false, state: 'VERIFYING', rule: 'unverified-write' });

    expect(refusalOf(await call(clientA, 'write_note')).error).toMatchObject({ state: 'VERIFYING' });
    expect(a.writes).toEqual([]);
    expect(b.writes).toEqual(['written']);

    const read = await call(clientA, 'read_note');
    expect(answerStateOf(read)).toMatchObject({ allowed: true });
    expect((await first.session('conversation-1').getPersistedSnapshot()).state).toBe('READING');
  });

  it('createGatingProxy takes one shared session as its guard', async () => {
    const store = processStore();
    const upstreamServer = new McpServer({ name: 'upstream', version: '1.0.0' });
    upstreamServer.registerTool('look', { annotations: { readOnlyHint: true } }, async () => ({
      content: [{ type: 'text', text: 'seen' }],
    }));
    upstreamServer.registerTool('change', { annotations: { readOnlyHint: false } }, async () => ({
      content: [{ type: 'text', text: 'changed' }],
    }));
    const proxy = await createGatingProxy(await connect(upstreamServer), { trusted: true, guard: store.session('conversation-2') });
    const client = await connect(proxy);

    expect(refusalOf(await call(client, 'change')).error).toMatchObject({ state: 'RESOLVING' });
    expect(textOf(await call(client, 'look'))).toBe('seen');
    const changed = await call(client, 'change');
    expect(textOf(changed)).toBe('changed');
    expect(answerStateOf(changed)).toMatchObject({ allowed: false, state: 'VERIFYING' });
    expect((await processStore().session('conversation-2').getPersistedSnapshot()).state).toBe('VERIFYING');
  });

  it('does not run a call when the store cannot be reached: the gate says it could not check it', async () => {
    const dead = new RedisClient(await freePort(), '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    dead.on('error', () => {}); // nothing listens there: every command fails
    clients.push(dead);
    const store = createSharedSessionStore({ store: createRedisSnapshotStore(dead, { keyPrefix: prefix, timeoutMs: 300 }) });
    stores.push(store);
    const { server, writes } = notesServer({ guard: store.session('conversation-3') });
    const client = await connect(server);
    const result = await call(client, 'write_note');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^The call to 'write_note' was not run: the safety gate could not check it/);
    expect(answerStateOf(result)).toMatchObject({ allowed: false, state: 'UNKNOWN' });
    expect(writes).toEqual([]);
  });
});
