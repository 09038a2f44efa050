/**
 * A small MCP server over stdio with a shell tool, as many real servers have
 * one: `read_file {path}` (readOnlyHint: true), `exec {command, cwd?}`
 * (readOnlyHint: false: it runs `sh -c <command>` for real, in `cwd` when
 * given; a non-zero exit is `isError: true` with the output), `run {command}`
 * (the same without a working directory) and
 * `write_file {path, content}`. Used by test/adapters/mcp/mcp.test.ts
 * through `pulse-safety mcp-proxy`.
 *
 *   node test/support/mcp-shell-server.mjs
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'shell-test-server', version: '1.0.0' });
server.registerTool(
  'read_file',
  { description: 'Read a file', inputSchema: { path: z.string() }, annotations: { readOnlyHint: true } },
  async ({ path }) => {
    try {
      return { content: [{ type: 'text', text: readFileSync(path, 'utf8') }] };
    } catch (error) {
      return { content: [{ type: 'text', text: String(error) }], isError: true };
    }
  },
);
/** Runs `sh -c command` (in `cwd` when given): its output, and `isError` on a non-zero exit. */
function shell({ command, cwd }) {
  const run = spawnSync('sh', ['-c', command], { cwd, encoding: 'utf8' });
  return { content: [{ type: 'text', text: `${run.stdout ?? ''}${run.stderr ?? ''}` }], ...(run.status === 0 ? {} : { isError: true }) };
}
server.registerTool(
  'exec',
  {
    description: 'Run a shell command',
    inputSchema: { command: z.string(), cwd: z.string().optional().describe('The working directory') },
    annotations: { readOnlyHint: false },
  },
  async (args) => shell(args),
);
server.registerTool(
  'run',
  { description: 'Run a shell command', inputSchema: { command: z.string() }, annotations: { readOnlyHint: false } },
  async (args) => shell(args),
);
server.registerTool(
  'write_file',
  { description: 'Write a file', inputSchema: { path: z.string(), content: z.string() }, annotations: { readOnlyHint: false } },
  async ({ path, content }) => {
    writeFileSync(path, content);
    return { content: [{ type: 'text', text: 'ok' }] };
  },
);
await server.connect(new StdioServerTransport());
