/**
 * The OpenAI Agents JS adapter (src/adapters/openai-agents.ts) on the real
 * `@openai/agents` 0.20 runner, driven by the SDK's own scripted model
 * (`ScriptedModel` from `@openai/agents/testing`, an implementation of its
 * `Model` interface that plays one scripted response per call). Tools,
 * guardrails, error functions and the runner are the SDK's.
 *
 * The scenario every adapter test plays: a write before any read (refused,
 * the model sees the refusal), a read, the write, an answer (refused, the
 * loop goes on), a read, the answer (allowed). Then the fail-open trap the
 * issue found: the SDK turns a tool's exception into a success string
 * before a tool output guardrail sees it.
 */
import { Agent, OutputGuardrailTripwireTriggered, setTracingDisabled, ToolTimeoutError, type AgentInputItem } from '@openai/agents';
import { ScriptedModel, assistantMessage, functionCall } from '@openai/agents/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createSessionGuard, type SessionGuard } from '../../src/guard/session-guard.js';
import { AdapterConfigError } from '../../src/adapters/common.js';
import { createSafetyGate, type AgentsSafetyGate } from '../../src/adapters/openai-agents.js';
import { createSharedSessionStore } from '../../src/store/shared-session-store.js';
import { createSessionStore } from '../../src/store/session-store.js';

beforeAll(() => setTracingDisabled(true));

const catalog = { name: 'test', tools: { get_status: 'read', restart: 'write' } } as const;
const host = { host: 'web-01' };

type Step = ReturnType<typeof functionCall> | ReturnType<typeof assistantMessage>;

const SCENARIO: Step[][] = [
  [functionCall('restart', host, { callId: 'c1' })], // a write before any read: refused
  [functionCall('get_status', host, { callId: 'c2' })], // a read: a target
  [functionCall('restart', host, { callId: 'c3' })], // the write: admitted
  [assistantMessage('Restarted web-01.')], // an answer about an unverified change: refused
  [functionCall('get_status', host, { callId: 'c4' })], // a read after the write: verified
  [assistantMessage('web-01 restarted and running.')], // the answer: allowed
];

function guardWithClock(): SessionGuard {
  let t = 1_000;
  return createSessionGuard({ now: () => (t += 1) });
}

interface Behaviour {
  /** What the n-th get_status call (from 1) does. */
  status?: (n: number) => Promise<string> | string;
  statusErrorFunction?: (context: unknown, error: unknown) => string;
  statusTimeoutMs?: number;
  restartTimeoutMs?: number;
}

/** The agent's two tools, built by the gate; what ran is logged. */
function makeTools(gate: AgentsSafetyGate, log: string[], behaviour: Behaviour = {}) {
  let reads = 0;
  const parameters = z.object({ host: z.string() });
  return gate.tools([
    {
      name: 'get_status',
      description: 'Read the status of a host',
      parameters,
      execute: async ({ host }: { host: string }) => {
        reads += 1;
        log.push(`get_status ${reads}`);
        return behaviour.status === undefined ? `${host}: running` : behaviour.status(reads);
      },
      ...(behaviour.statusErrorFunction === undefined ? {} : { errorFunction: behaviour.statusErrorFunction }),
      ...(behaviour.statusTimeoutMs === undefined ? {} : { timeoutMs: behaviour.statusTimeoutMs }),
    },
    {
      name: 'restart',
      description: 'Restart a host',
      parameters,
      execute: async ({ host }: { host: string }) => {
        log.push('restart');
        if (behaviour.restartTimeoutMs !== undefined) await new Promise(() => {}); // never finishes
        return `${host}: restart requested`;
      },
      ...(behaviour.restartTimeoutMs === undefined
        ? {}
        : { timeoutMs: behaviour.restartTimeoutMs, timeoutBehavior: 'raise_exception' as const }),
    },
  ]);
}

function setup(script: Step[][], behaviour: Behaviour = {}, options: { maxResumes?: number; guard?: SessionGuard } = {}) {
  const log: string[] = [];
  const guard = options.guard ?? guardWithClock();
  const gate = createSafetyGate({ guard, catalog, ...(options.maxResumes === undefined ? {} : { maxResumes: options.maxResumes }) });
  const model = new ScriptedModel(script);
  const agent = new Agent({
    name: 'ops',
    model,
    tools: makeTools(gate, log, behaviour),
    inputGuardrails: [gate.inputGuardrail],
    outputGuardrails: [gate.outputGuardrail],
  });
  return { log, guard, gate, model, agent };
}

/** Text of the model input at a call: function call results and user messages. */
function inputLines(input: string | AgentInputItem[]): string[] {
  if (typeof input === 'string') return [`user: ${input}`];
  const lines: string[] = [];
  for (const item of input) {
    if ('role' in item && item.role === 'user')
      lines.push(`user: ${typeof item.content === 'string' ? item.content : JSON.stringify(item.content)}`);
    if (item.type === 'function_call_result') lines.push(`result ${item.callId}: ${JSON.stringify(item.output)}`);
  }
  return lines;
}

describe('gate.run: the scenario', () => {
  async function play() {
    const parts = setup(SCENARIO);
    const result = await parts.gate.run(parts.agent, 'Restart web-01.');
    return { ...parts, result };
  }

  it('runs only the admitted calls: the write before any read never ran', async () => {
    const { log } = await play();
    expect(log).toEqual(['get_status 1', 'restart', 'get_status 2']);
  });

  it('gives the model the refusal of the early write through rejectContent, with the stable code', async () => {
    const { model } = await play();
    const refusal = inputLines(model.calls[1]!.request.input).find((line) => line.startsWith('result c1'));
    expect(refusal).toContain('FSM_BLOCKED');
    expect(refusal).toContain('RESOLVING');
  });

  it('refuses the answer about the unverified write and resumes with the refusal in words', async () => {
    const { model } = await play();
    const lines = inputLines(model.calls[4]!.request.input);
    expect(lines.at(-1)).toMatch(/^user: Your final answer was not given \(FSM_BLOCKED, rule unverified-write\)/);
  });

  it('goes on after the refused answer, and ends on the allowed one', async () => {
    const { result, model } = await play();
    expect(model.calls).toHaveLength(6);
    expect(result.finalOutput).toBe('web-01 restarted and running.');
  });

  it('leaves the session verified, with one refused answer counted and nothing in flight', async () => {
    const { guard } = await play();
    expect(guard.state).toBe('READING');
    expect(guard.context.finalAnswerBlocks).toBe(1);
    expect(guard.context.inFlight).toEqual([]);
  });
});

describe('a tool that throws is never recorded as a success (the fail-open trap)', () => {
  const readAfterWrite: Step[][] = [
    [functionCall('get_status', host, { callId: 'c1' })],
    [functionCall('restart', host, { callId: 'c2' })],
    [functionCall('get_status', host, { callId: 'c3' })],
    [assistantMessage('Done.')],
  ];
  const failSecondRead = (n: number): string => {
    if (n === 2) throw new Error('status service unavailable');
    return 'web-01: running';
  };

  it('the SDK gives the model a plain string for the exception, yet the read does not verify the write', async () => {
    const { gate, agent, guard, model } = setup(readAfterWrite, { status: failSecondRead }, { maxResumes: 0 });
    await expect(gate.run(agent, 'go')).rejects.toBeInstanceOf(OutputGuardrailTripwireTriggered);
    expect(inputLines(model.calls[3]!.request.input).at(-1)).toBe(
      'result c3: {"type":"text","text":"An error occurred while running the tool. Please try again."}',
    );
    expect(guard.state).toBe('VERIFYING');
  });

  it('holds with an errorFunction of your own that returns harmless words', async () => {
    const { gate, agent, guard } = setup(
      readAfterWrite,
      { status: failSecondRead, statusErrorFunction: () => 'status: unknown' },
      { maxResumes: 0 },
    );
    await expect(gate.run(agent, 'go')).rejects.toBeInstanceOf(OutputGuardrailTripwireTriggered);
    expect(guard.state).toBe('VERIFYING');
  });

  it('a read that returns an error result does not verify the write either', async () => {
    const status = (n: number): string => (n === 2 ? JSON.stringify({ error: 'host not found' }) : 'web-01: running');
    const { gate, agent, guard } = setup(readAfterWrite, { status }, { maxResumes: 0 });
    await expect(gate.run(agent, 'go')).rejects.toBeInstanceOf(OutputGuardrailTripwireTriggered);
    expect(guard.state).toBe('VERIFYING');
  });

  it("a read that times out (its result the SDK's timeout message) does not verify the write", async () => {
    const status = (n: number): Promise<string> | string => (n === 2 ? new Promise<string>(() => {}) : 'web-01: running');
    const { gate, agent, guard } = setup(readAfterWrite, { status, statusTimeoutMs: 20 }, { maxResumes: 0 });
    await expect(gate.run(agent, 'go')).rejects.toBeInstanceOf(OutputGuardrailTripwireTriggered);
    expect(guard.state).toBe('VERIFYING');
  });

  it('the same read that succeeds does verify it', async () => {
    const { gate, agent, guard } = setup(readAfterWrite);
    const result = await gate.run(agent, 'go');
    expect(result.finalOutput).toBe('Done.');
    expect(guard.state).toBe('READING');
  });
});

describe('a run that ends with a call in flight', () => {
  it('records the call as an error, so the session is not left in WRITING', async () => {
    const script: Step[][] = [[functionCall('get_status', host, { callId: 'c1' })], [functionCall('restart', host, { callId: 'c2' })]];
    const { gate, agent, guard } = setup(script, { restartTimeoutMs: 20 });
    await expect(gate.run(agent, 'go')).rejects.toBeInstanceOf(ToolTimeoutError);
    expect(guard.context.inFlight).toEqual([]);
    expect(guard.state).not.toBe('WRITING');
  });
});

describe('calls whose arguments do not parse', () => {
  it('leave nothing in flight: the SDK answers them before any guardrail runs', async () => {
    const script: Step[][] = [[functionCall('get_status', '{"host": ', { callId: 'c1' })], [assistantMessage('Could not.')]];
    const { gate, agent, guard, log } = setup(script);
    await gate.run(agent, 'go');
    expect(log).toEqual([]);
    expect(guard.context.inFlight).toEqual([]);
    expect(guard.state).toBe('RESOLVING');
  });
});

describe('the answer gate at its limit', () => {
  it('throws the tripwire error once maxResumes is spent: the app learns the answer was refused', async () => {
    const script: Step[][] = [
      [functionCall('get_status', host, { callId: 'c1' })],
      [functionCall('restart', host, { callId: 'c2' })],
      [assistantMessage('Done.')],
      [assistantMessage('Really done.')],
    ];
    const { gate, agent, guard } = setup(script, {}, { maxResumes: 1 });
    const error = await gate.run(agent, 'go').catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(OutputGuardrailTripwireTriggered);
    expect((error as OutputGuardrailTripwireTriggered<never>).result.output.outputInfo).toMatchObject({ rule: 'unverified-write' });
    expect(guard.context.finalAnswerBlocks).toBe(2);
  });
});

describe('the calls of one response (gate.run runs them one at a time, in order: maxFunctionToolConcurrency 1)', () => {
  it('a write beside a write: the second is refused (the first is unverified), whatever concurrency the app asked for', async () => {
    const script: Step[][] = [
      [functionCall('get_status', host, { callId: 'c1' })],
      [functionCall('restart', host, { callId: 'c2' }), functionCall('restart', host, { callId: 'c3' })],
      [functionCall('get_status', host, { callId: 'c4' })],
      [assistantMessage('Restarted once.')],
    ];
    const { gate, agent, log, guard } = setup(script);
    const result = await gate.run(agent, 'go', { toolExecution: { maxFunctionToolConcurrency: 8 } });
    expect(log).toEqual(['get_status 1', 'restart', 'get_status 2']);
    expect(result.finalOutput).toBe('Restarted once.');
    expect(guard.state).toBe('READING');
  });

  it('a read after the write in one response was admitted after the write succeeded: it verifies it (DESIGN §4)', async () => {
    const script: Step[][] = [
      [functionCall('get_status', host, { callId: 'c1' })],
      [functionCall('restart', host, { callId: 'c2' }), functionCall('get_status', host, { callId: 'c3' })],
      [assistantMessage('Done.')],
    ];
    const { gate, agent, guard } = setup(script, {}, { maxResumes: 0 });
    const result = await gate.run(agent, 'go');
    expect(result.finalOutput).toBe('Done.');
    expect(guard.state).toBe('READING');
  });
});

describe('sessions from a store', () => {
  it('gates the session the run context names, through getGuard', async () => {
    let t = 1_000;
    const sessions = createSessionStore({ now: () => (t += 1) });
    const gate = createSafetyGate<{ chatId: string }>({
      getGuard: (key) => sessions.session(key),
      sessionKey: (context) => context.context.chatId,
      catalog,
    });
    const model = new ScriptedModel(SCENARIO);
    const agent = new Agent<{ chatId: string }>({
      name: 'ops',
      model,
      tools: makeTools(gate as AgentsSafetyGate, []),
      inputGuardrails: [gate.inputGuardrail],
      outputGuardrails: [gate.outputGuardrail],
    });
    await gate.run(agent, 'Restart web-01.', { context: { chatId: 'chat-7' } });
    expect(sessions.session('chat-7').state).toBe('READING');
    expect(sessions.session('chat-7').context.finalAnswerBlocks).toBe(1);
  });
});

describe('sessions shared by many processes (createSharedSessionStore: an asynchronous guard)', () => {
  it('plays the scenario, each decision committed to the store', async () => {
    let t = 1_000;
    const sessions = createSharedSessionStore({ now: () => (t += 1) });
    const gate = createSafetyGate<{ chatId: string }>({
      getGuard: (key) => sessions.session(key),
      sessionKey: (context) => context.context.chatId,
      catalog,
    });
    const log: string[] = [];
    const model = new ScriptedModel(SCENARIO);
    const agent = new Agent<{ chatId: string }>({
      name: 'ops',
      model,
      tools: makeTools(gate as AgentsSafetyGate, log),
      inputGuardrails: [gate.inputGuardrail],
      outputGuardrails: [gate.outputGuardrail],
    });
    const result = await gate.run(agent, 'Restart web-01.', { context: { chatId: 'chat-8' } });
    expect(log).toEqual(['get_status 1', 'restart', 'get_status 2']);
    expect(result.finalOutput).toBe('web-01 restarted and running.');
    const saved = createSessionGuard({ snapshot: await sessions.session('chat-8').getPersistedSnapshot() });
    expect(saved.state).toBe('READING');
    expect(saved.context.finalAnswerBlocks).toBe(1);
  });
});

describe('configuration errors', () => {
  it('refuses tools of which none can read or resolve, when they are built', () => {
    const gate = createSafetyGate({ guard: guardWithClock(), kinds: { restart: 'write' } });
    expect(() => makeTools(gate, [])).toThrow(/no tool can read or resolve/);
  });

  it('refuses to run an agent with a function tool the gate did not build', async () => {
    const { gate, agent } = setup(SCENARIO);
    const { tool } = await import('@openai/agents');
    const loose = tool({ name: 'delete_host', description: 'x', parameters: z.object({}), execute: async () => 'deleted' });
    await expect(gate.run(agent.clone({ tools: [...agent.tools, loose] }), 'go')).rejects.toThrow(/'delete_host' are not gated/);
  });

  it('refuses to run an agent without the answer guardrail', async () => {
    const { gate, agent } = setup(SCENARIO);
    await expect(gate.run(agent.clone({ outputGuardrails: [] }), 'go')).rejects.toThrow(AdapterConfigError);
  });

  it('refuses a run that names no conversation when the guards come from getGuard', async () => {
    const gate = createSafetyGate({ getGuard: () => guardWithClock(), catalog });
    const agent = new Agent({
      name: 'ops',
      model: new ScriptedModel(SCENARIO),
      tools: makeTools(gate, []),
      inputGuardrails: [gate.inputGuardrail],
      outputGuardrails: [gate.outputGuardrail],
    });
    await expect(gate.run(agent, 'go')).rejects.toThrow(/`getGuard` needs the conversation of each run/);
  });

  it('refuses to run an agent without the run guardrail', async () => {
    const { gate, agent } = setup(SCENARIO);
    await expect(gate.run(agent.clone({ inputGuardrails: [] }), 'go')).rejects.toThrow(/gate\.inputGuardrail/);
  });
});
