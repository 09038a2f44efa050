/**
 * Every escape of the fail-closed issue (`test/fixtures/escapes.ts`) is a
 * write on every road a call takes to the gate: the catalog classifier, the
 * session guard (refused with FSM_BLOCKED in a fresh session, where a read
 * would be admitted), the audit of a transcript that ran it (a refusal, not
 * "nothing refused"), and each adapter (AI SDK, OpenAI Agents, LangGraph,
 * MCP), whose tool never runs.
 *
 * Spec: ASSISTANT_SAFETY.md (reads are never blocked, so a read must be
 * proven read-only; a block is FSM_BLOCKED); DESIGN.md §5.5.
 */
import { tool as langchainTool } from '@langchain/core/tools';
import { AIMessage } from '@langchain/core/messages';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Agent, setTracingDisabled } from '@openai/agents';
import { ScriptedModel, assistantMessage, functionCall } from '@openai/agents/testing';
import { jsonSchema, tool as aiTool } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { gateTools } from '../../src/adapters/ai-sdk.js';
import { SafetyToolNode } from '../../src/adapters/langgraph.js';
import { gateMcpServer } from '../../src/adapters/mcp/index.js';
import { createSafetyGate } from '../../src/adapters/openai-agents.js';
import { auditRuns } from '../../src/audit/audit.js';
import { readTranscript } from '../../src/audit/transcripts/index.js';
import { builtinCatalogs, compileCatalog, createCallClassifier, type Catalog } from '../../src/classify/catalog/index.js';
import { createSessionGuard } from '../../src/guard/session-guard.js';
import { SHELL_ESCAPES, SQL_ESCAPES } from '../fixtures/escapes.js';

/** A catalog with one shell tool and one SQL tool, as an application would write it. */
const catalog: Catalog = {
  name: 'escapes',
  tools: {
    run: { shell: 'command', description: 'runs a bash command' },
    query: { sql: 'sql', dialect: 'postgres' },
    look: 'read',
  },
};

const commands = SHELL_ESCAPES.map((escape) => escape.command);

describe('every escape is a write, through every road', () => {
  it.each(commands)('classifier: %j', (command) => {
    const classify = createCallClassifier(catalog);
    expect(classify('run', { command }).kind).toBe('write');
    expect(createCallClassifier(builtinCatalogs['claude-code'])('Bash', { command }).kind).toBe('write');
    expect(createCallClassifier(builtinCatalogs['gemini-cli'])('run_shell_command', { command }).kind).toBe('write');
    expect(createCallClassifier(builtinCatalogs.codex)('shell', { command: ['bash', '-lc', command] }).kind).toBe('write');
  });

  it.each(SQL_ESCAPES)('classifier (SQL): %j', (sql) => {
    expect(createCallClassifier(catalog)('query', { sql }).kind).toBe('write');
  });

  it.each(commands)('guard: %j is refused with FSM_BLOCKED where a read is admitted', (command) => {
    const guard = createSessionGuard({ classify: compileCatalog(catalog).classify });
    expect(guard.check({ id: 'r', name: 'run', args: { command: 'ls' } }).allowed).toBe(true);
    const decision = guard.check({ id: 'e', name: 'run', args: { command } });
    expect(decision.allowed).toBe(false);
    if (!decision.allowed) expect(decision.error.code).toBe('FSM_BLOCKED');
  });

  it.each(SQL_ESCAPES)('guard (SQL): %j is refused with FSM_BLOCKED where a read is admitted', (sql) => {
    const guard = createSessionGuard({ classify: compileCatalog(catalog).classify });
    expect(guard.check({ id: 'r', name: 'query', args: { sql: 'SELECT id FROM orders' } }).allowed).toBe(true);
    const decision = guard.check({ id: 'e', name: 'query', args: { sql } });
    expect(decision.allowed).toBe(false);
    if (!decision.allowed) expect(decision.error.code).toBe('FSM_BLOCKED');
  });

  it('audit: a transcript that ran every escape (shell and SQL) reports each one refused', () => {
    const calls = [
      ...commands.map((command) => ({ name: 'run', args: { command } })),
      ...SQL_ESCAPES.map((sql) => ({ name: 'query', args: { sql } })),
    ];
    const lines = calls.flatMap((call, i) => [
      { type: 'call', id: `c${i}`, ...call },
      { type: 'result', id: `c${i}`, outcome: 'success' },
    ]);
    const run = readTranscript(lines.map((line) => JSON.stringify(line)).join('\n'), 'escapes.jsonl')[0]!;
    const report = auditRuns([run], { catalog: compileCatalog(catalog) });
    expect(report.runs[0]!.blockedCalls).toBe(calls.length);
    expect(report.runs[0]!.writes).toBe(calls.length);
  });
});

describe('every escape is refused by each adapter, and its tool never runs', () => {
  it('AI SDK: gateTools', async () => {
    let runs = 0;
    const tools = gateTools(
      {
        run: aiTool({
          inputSchema: jsonSchema<{ command: string }>({ type: 'object', properties: { command: { type: 'string' } } }),
          execute: () => {
            runs += 1;
            return 'ran';
          },
        }),
      },
      { guard: createSessionGuard({}), catalog },
    );
    for (const [i, command] of commands.entries()) {
      const result: unknown = await tools.run.execute!({ command }, { toolCallId: `c${i}`, messages: [], context: {} } as never);
      expect(JSON.stringify(result)).toContain('FSM_BLOCKED');
    }
    expect(runs).toBe(0);
  });

  it('OpenAI Agents: gate.run with the SDK runner and its scripted model', async () => {
    let runs = 0;
    const gate = createSafetyGate({ guard: createSessionGuard({}), catalog });
    const tools = gate.tools([
      {
        name: 'run',
        description: 'runs a bash command',
        parameters: z.object({ command: z.string() }),
        execute: async () => {
          runs += 1;
          return 'ran';
        },
      },
    ]);
    setTracingDisabled(true);
    const turns = [
      ...commands.map((command, i) => [functionCall('run', { command }, { callId: `c${i}` })]),
      [assistantMessage('Nothing changed.')],
    ];
    const agent = new Agent({
      name: 'ops',
      model: new ScriptedModel(turns),
      tools,
      inputGuardrails: [gate.inputGuardrail],
      outputGuardrails: [gate.outputGuardrail],
    });
    const result = await gate.run(agent, 'go', { maxTurns: commands.length + 2 });
    const outputs = result.newItems.filter((item) => item.type === 'tool_call_output_item').map((item) => JSON.stringify(item.output));
    expect(outputs).toHaveLength(commands.length);
    for (const output of outputs) expect(output).toContain('FSM_BLOCKED');
    expect(runs).toBe(0);
  });

  it('LangGraph: SafetyToolNode', async () => {
    let runs = 0;
    const run = langchainTool(
      () => {
        runs += 1;
        return 'ran';
      },
      { name: 'run', description: 'runs a bash command', schema: z.object({ command: z.string() }) },
    );
    const node = new SafetyToolNode([run], { catalog });
    for (const [i, command] of commands.entries()) {
      const message = new AIMessage({ content: '', tool_calls: [{ id: `c${i}`, name: 'run', args: { command } }] });
      const output: unknown = await node.invoke({ messages: [message] });
      expect(JSON.stringify(output)).toContain('FSM_BLOCKED');
    }
    expect(runs).toBe(0);
  });

  it('MCP: gateMcpServer', async () => {
    let runs = 0;
    const server = gateMcpServer(new McpServer({ name: 'escapes', version: '1.0.0' }), { catalog });
    server.registerTool('run', { inputSchema: { command: z.string() } }, () => {
      runs += 1;
      return { content: [{ type: 'text', text: 'ran' }] };
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'escapes-test', version: '1.0.0' });
    await client.connect(clientSide);
    for (const command of commands) {
      const result = await client.callTool({ name: 'run', arguments: { command } });
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result)).toContain('FSM_BLOCKED');
    }
    expect(runs).toBe(0);
    await client.close();
  });
});
