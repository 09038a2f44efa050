/**
 * Gating your own MCP server in process: `gateMcpServer` wraps the callback
 * of every tool registered on an `McpServer` (the MCP TypeScript SDK's
 * high-level server), so each `tools/call` is checked before the callback
 * runs and its outcome recorded after. Here an SDK `Client` talks to the
 * server over the SDK's in-memory transport pair, offline:
 *
 *   npm run build && node dist/examples/mcp-in-process.js
 *
 * The client writes a note before reading anything (refused: no validated
 * target), reads it, writes it (admitted), writes again (refused: the first
 * write is not verified), reads another note (which verifies nothing),
 * reads the note back, writes a note it never read (refused: unknown
 * target), and writes the first note again (admitted). Each
 * result carries the answer state in `_meta['pulse-safety/answer']`: what
 * the gate would say about a final answer now, which a host can use to hold
 * an answer back.
 *
 * In your own code import from `pulse-safety-fsm` and `pulse-safety-fsm/mcp`
 * rather than `../src/...`; connect the server to a `StdioServerTransport`
 * or a Streamable HTTP transport instead of the in-memory pair. Run by
 * test/adapters/mcp/in-process.test.ts.
 */
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { answerStateOf, gateMcpServer } from '../src/adapters/mcp/index.js';
import { createSessionGuard, type SessionGuard } from '../src/index.js';

/**
 * A notes server whose tools are gated by `guard`: `read_note` is a read
 * (its own annotation, trusted in process), `write_note` a write with an
 * output schema. Both name the note by `note_id`, an argument the gate takes
 * for the call's target (`note_id=<id>`): a read of one note neither admits
 * nor verifies a write of another. `notes` is its storage.
 */
export function createNotesServer(notes: Map<string, string>, guard: SessionGuard): McpServer {
  // Gate first, then register: a tool registered before gateMcpServer would run ungated (it throws if there is one).
  const server = gateMcpServer(new McpServer({ name: 'notes', version: '1.0.0' }), { guard });
  server.registerTool(
    'read_note',
    {
      description: 'Read a note by its id',
      inputSchema: { note_id: z.string() },
      annotations: { readOnlyHint: true },
    },
    async ({ note_id }) => ({ content: [{ type: 'text', text: notes.get(note_id) ?? `(no note '${note_id}')` }] }),
  );
  server.registerTool(
    'write_note',
    {
      description: 'Write (create or replace) a note',
      inputSchema: { note_id: z.string(), text: z.string() },
      outputSchema: { saved: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: true },
    },
    async ({ note_id, text }) => {
      notes.set(note_id, text);
      return { content: [{ type: 'text', text: `saved '${note_id}'` }], structuredContent: { saved: note_id } };
    },
  );
  return server;
}

/** One line of the example's transcript. */
function line(step: string, result: CallToolResult): string {
  const first = result.content[0];
  const text = first?.type === 'text' ? first.text : '';
  const error = result.isError ? (JSON.parse(text) as { error: { state: string; rule: string } }).error : undefined;
  const shown = error === undefined ? text : `refused ${error.state} (${error.rule})`;
  const answer = answerStateOf(result);
  return `${step} -> ${shown}; answer ${answer?.allowed ? 'allowed' : `refused (${answer?.rule})`}`;
}

/** Runs the conversation; returns the transcript lines and the notes written. */
export async function runExample(): Promise<{ lines: string[]; notes: Map<string, string> }> {
  const notes = new Map<string, string>([['todo', 'water the plants']]);
  const guard = createSessionGuard(); // one per conversation (or getGuard with a session store)
  const server = createNotesServer(notes, guard);
  const client = new Client({ name: 'example-host', version: '1.0.0' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.connect(clientSide);

  const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;
  const lines = [
    line('write_note todo before any read', await call('write_note', { note_id: 'todo', text: 'buy milk' })),
    line('read_note todo', await call('read_note', { note_id: 'todo' })),
    line('write_note todo', await call('write_note', { note_id: 'todo', text: 'buy milk' })),
    line('write_note todo again', await call('write_note', { note_id: 'todo', text: 'buy bread' })),
    line('read_note ideas', await call('read_note', { note_id: 'ideas' })),
    line('read_note todo', await call('read_note', { note_id: 'todo' })),
    line('write_note shopping', await call('write_note', { note_id: 'shopping', text: 'eggs' })),
    line('write_note todo again', await call('write_note', { note_id: 'todo', text: 'buy bread' })),
  ];
  await client.close();
  await server.close();
  return { lines, notes };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { lines } = await runExample();
  for (const text of lines) console.log(text);
}
