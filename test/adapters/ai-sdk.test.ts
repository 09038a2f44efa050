/**
 * The AI SDK adapter (src/adapters/ai-sdk.ts, src/adapters/ai-sdk/) on the real `ai` 7 loop,
 * driven by the SDK's own `MockLanguageModelV4` (`ai/test`) playing a
 * script: the tools, the steering, the stream transform and the step limit
 * are the SDK's, nothing of it is mocked.
 *
 * The scenario every adapter test plays: a write before any read (refused,
 * the model sees the refusal), a read, the write, an answer (refused, the
 * loop goes on), a read, the answer (allowed).
 */
import { ToolLoopAgent, generateText, isStepCount, jsonSchema, streamText, tool, type ModelMessage } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { createSessionGuard, type SessionGuard } from '../../src/guard/session-guard.js';
import { AdapterConfigError, gateAnswer, gateTextStream, gateTools, withSafetyGate } from '../../src/adapters/ai-sdk.js';
import {
  SCENARIO,
  call,
  catalog,
  generating,
  guardWithClock,
  makeTools,
  say,
  seen,
  step,
  streamed,
  think,
  type Part,
} from './ai-sdk.script.js';
import { createSharedSessionStore } from '../../src/store/shared-session-store.js';
import { createSessionStore } from '../../src/store/session-store.js';

describe('withSafetyGate on generateText: the scenario', () => {
  async function play() {
    const log: string[] = [];
    const guard = guardWithClock();
    const model = new MockLanguageModelV4({ doGenerate: SCENARIO.map((parts) => step(...parts)) });
    const safety = withSafetyGate({ model, prompt: 'Restart web-01.', stopWhen: isStepCount(10), tools: makeTools(log), guard, catalog });
    const result = await generateText(safety);
    return { log, guard, model, safety, result };
  }

  it('runs only the admitted calls: the write before any read never ran', async () => {
    const { log } = await play();
    expect(log).toEqual(['get_status c2', 'restart c3', 'get_status c4']);
  });

  it('gives the model the refusal of the early write as its tool result, with the stable code', async () => {
    const { model } = await play();
    const toolResult = seen(model.doGenerateCalls[1]!.prompt as ModelMessage[]).find((line) => line.startsWith('tool c1'));
    expect(toolResult).toContain('"code":"FSM_BLOCKED"');
    expect(toolResult).toContain('"state":"RESOLVING"');
  });

  it('refuses the answer about the unverified write and puts the refusal in words before the model', async () => {
    const { model } = await play();
    const afterAnswer = seen(model.doGenerateCalls[4]!.prompt as ModelMessage[]);
    expect(afterAnswer.at(-1)).toMatch(/^user: Your final answer was not given \(FSM_BLOCKED, rule unverified-write\)/);
  });

  it('goes on after the refused answer, and ends on the allowed one', async () => {
    const { result, safety, model } = await play();
    expect(model.doGenerateCalls).toHaveLength(6);
    expect(result.text).toBe('web-01 restarted and running.');
    expect(safety.answer).toMatchObject({ state: 'allowed', stepNumber: 5 });
  });

  it('leaves the session verified, with one refused answer counted', async () => {
    const { guard } = await play();
    expect(guard.state).toBe('READING');
    expect(guard.context.finalAnswerBlocks).toBe(1);
  });
});

describe('withSafetyGate on streamText: the scenario and the stream transform', () => {
  async function play() {
    const log: string[] = [];
    const guard = guardWithClock();
    const model = new MockLanguageModelV4({ doStream: SCENARIO.map((parts) => streamed(...parts)) });
    const safety = withSafetyGate({ model, prompt: 'Restart web-01.', stopWhen: isStepCount(10), tools: makeTools(log), guard, catalog });
    const result = streamText(safety);
    const chunks: string[] = [];
    for await (const chunk of result.textStream) chunks.push(chunk);
    return { log, guard, model, safety, chunks, text: await result.text };
  }

  it('never streams the refused answer: the reader sees only the allowed one', async () => {
    const { chunks } = await play();
    expect(chunks.join('')).toBe('web-01 restarted and running.');
  });

  it('runs only the admitted calls and ends allowed and verified', async () => {
    const { log, safety, guard, text } = await play();
    expect(log).toEqual(['get_status c2', 'restart c3', 'get_status c4']);
    expect(text).toBe('web-01 restarted and running.');
    expect(safety.answer.state).toBe('allowed');
    expect(guard.state).toBe('READING');
  });

  it('tells the model its answer was refused, without the withheld answer in its history', async () => {
    const { model } = await play();
    const prompt = model.doStreamCalls[4]!.prompt as ModelMessage[];
    expect(seen(prompt).at(-1)).toMatch(/^user: Your final answer was not given/);
    expect(JSON.stringify(prompt)).not.toContain('Restarted web-01.');
  });
});

describe('gateTextStream alone', () => {
  async function streamParts(script: Part[][], guard: SessionGuard) {
    const log: string[] = [];
    const model = new MockLanguageModelV4({ doStream: script.map((parts) => streamed(...parts)) });
    const result = streamText({
      model,
      prompt: 'go',
      tools: gateTools(makeTools(log), { guard, catalog }),
      stopWhen: isStepCount(script.length),
      experimental_transform: gateTextStream({ guard }),
    });
    const types: string[] = [];
    const text: string[] = [];
    for await (const part of result.stream) {
      types.push(part.type);
      if (part.type === 'text-delta') text.push(part.text);
    }
    return { types, text: text.join('') };
  }

  it('releases the text of a step that calls a tool (it is not the answer)', async () => {
    const { text } = await streamParts([[say('Let me look. '), call('c1', 'get_status')], [say('Up.')]], guardWithClock());
    expect(text).toBe('Let me look. Up.');
  });

  it("keeps a refused step's other parts: only its text is dropped", async () => {
    const { text, types } = await streamParts([[call('c1', 'get_status')], [call('c2', 'restart')], [say('Done.')]], guardWithClock());
    expect(text).toBe('');
    expect(types.filter((type) => type === 'finish-step')).toHaveLength(3);
  });
});

describe('generateText: what the gate refused is taken out of the steps', () => {
  async function run(script: Part[][], extra: Record<string, unknown> = {}) {
    const stepTexts: string[] = [];
    const result = await generateText(
      withSafetyGate({
        model: generating(script),
        prompt: 'Restart web-01.',
        stopWhen: isStepCount(script.length),
        tools: makeTools([]),
        guard: guardWithClock(),
        catalog,
        onStepEnd: (s: { text: string; reasoningText?: string }) => void stepTexts.push(s.text + (s.reasoningText ?? '')),
        ...extra,
      }),
    );
    return { result, stepTexts, content: JSON.stringify(result.steps.map((s) => s.content)) };
  }

  it('a claim beside the unverified write: not in the steps, nor in your onStepEnd; the verified answer is', async () => {
    const { result, stepTexts, content } = await run([
      [call('c1', 'get_status')],
      [say('Restarted web-01.'), call('c2', 'restart')],
      [call('c3', 'get_status')],
      [say('web-01 is running.')],
    ]);
    expect(content).not.toContain('Restarted web-01.');
    expect(JSON.stringify(result.response.messages)).not.toContain('Restarted web-01.');
    expect(stepTexts).toEqual(['', '', '', 'web-01 is running.']);
    expect(result.text).toBe('web-01 is running.');
  });

  it('a claim beside a refused call, with a refusal of your own: not in the steps', async () => {
    const { stepTexts, content } = await run([[say('Restarted web-01.'), call('c1', 'restart')], [say('I could not restart it.')]], {
      refusal: (error: Error) => `Blocked: ${error.message}`,
    });
    expect(content).not.toContain('Restarted web-01.');
    expect(stepTexts).toEqual(['', 'I could not restart it.']);
  });

  it('the reasoning and text of a refused answer: not in the steps', async () => {
    const { content, stepTexts } = await run([
      [call('c1', 'get_status')],
      [call('c2', 'restart')],
      [think('Restarted web-01.'), say('Done.')],
      [call('c3', 'get_status')],
      [say('web-01 is running.')],
    ]);
    expect(content).not.toContain('Restarted web-01.');
    expect(content).not.toContain('Done.');
    expect(stepTexts).toEqual(['', '', '', '', 'web-01 is running.']);
  });
});

describe('the step limit', () => {
  async function cutOff() {
    const log: string[] = [];
    const guard = guardWithClock();
    const model = new MockLanguageModelV4({ doGenerate: SCENARIO.map((parts) => step(...parts)) });
    // Four steps: the run stops on the refused answer, before the model could verify.
    const safety = withSafetyGate({ model, prompt: 'Restart web-01.', stopWhen: isStepCount(4), tools: makeTools(log), guard, catalog });
    const result = await generateText(safety);
    return { result, safety };
  }

  it('tells the app that the answer it got back was refused; result.text and the step do not hold it', async () => {
    const { result, safety } = await cutOff();
    expect(result.text).toBe('');
    expect(result.steps.map((s) => s.text)).toEqual(['', '', '', '']);
    expect(safety.answer).toMatchObject({ state: 'refused', stepNumber: 3, text: 'Restarted web-01.' });
  });

  it('reports the refusal as not delivered because the stop condition ended the run', async () => {
    const { safety } = await cutOff();
    if (safety.answer.state !== 'refused') throw new Error('expected a refused answer');
    await expect(safety.answer.delivery).resolves.toMatchObject({ type: 'not-delivered', reason: 'stop-condition' });
  });

  it('says there is no answer when the limit cuts the run during tool calls', async () => {
    const guard = guardWithClock();
    const model = new MockLanguageModelV4({ doGenerate: SCENARIO.map((parts) => step(...parts)) });
    const safety = withSafetyGate({ model, prompt: 'Restart web-01.', stopWhen: isStepCount(3), tools: makeTools([]), guard, catalog });
    await generateText(safety);
    expect(safety.answer).toEqual({ state: 'none' });
  });
});

describe('outcomes: what the model never sees as success does not count as evidence', () => {
  /** get_status, restart, get_status (behaving as told), answer. */
  async function readAfterWrite(behaviour: { statusThrows?: boolean; statusResult?: unknown }) {
    const guard = guardWithClock();
    const tools = makeTools([], {});
    const failing = makeTools([], behaviour);
    let reads = 0;
    const mixed = {
      ...tools,
      get_status: tool({
        ...tools.get_status,
        execute: (input: { host: string }, options) =>
          (reads += 1) === 1 ? tools.get_status.execute(input, options) : failing.get_status.execute(input, options),
      }),
    };
    const model = new MockLanguageModelV4({
      doGenerate: [step(call('c1', 'get_status')), step(call('c2', 'restart')), step(call('c3', 'get_status')), step(say('Done.'))],
    });
    const safety = withSafetyGate({ model, prompt: 'go', stopWhen: isStepCount(4), tools: mixed, guard, catalog });
    await generateText(safety);
    return { guard, safety };
  }

  it('a read whose execute throws does not verify the write', async () => {
    const { guard, safety } = await readAfterWrite({ statusThrows: true });
    expect(guard.state).toBe('VERIFYING');
    expect(safety.answer.state).toBe('refused');
  });

  it('a read whose result reports an error does not verify the write', async () => {
    const { guard } = await readAfterWrite({ statusResult: { error: 'host not found' } });
    expect(guard.state).toBe('VERIFYING');
  });

  it('a read that succeeds does', async () => {
    const { guard, safety } = await readAfterWrite({});
    expect(guard.state).toBe('READING');
    expect(safety.answer.state).toBe('allowed');
  });

  it('a streaming execute is recorded when its last value is out', async () => {
    const guard = guardWithClock();
    const input = jsonSchema<{ host: string }>({ type: 'object', properties: { host: { type: 'string' } } });
    const tools = gateTools(
      {
        get_status: tool({
          inputSchema: input,
          async *execute() {
            yield 'checking';
            yield 'running';
          },
        }),
      },
      { guard, catalog },
    );
    const model = new MockLanguageModelV4({ doGenerate: [step(call('c1', 'get_status')), step(say('ok'))] });
    await generateText({ model, prompt: 'go', tools, stopWhen: isStepCount(2) });
    expect(guard.state).toBe('READING');
    expect(guard.context.inFlight).toEqual([]);
  });
});

describe('parallel calls in one step', () => {
  it('a read beside a write does not establish a target: the write is refused', async () => {
    const log: string[] = [];
    const guard = guardWithClock();
    const model = new MockLanguageModelV4({ doGenerate: [step(call('c1', 'get_status'), call('c2', 'restart')), step(say('Checked.'))] });
    const safety = withSafetyGate({ model, prompt: 'go', stopWhen: isStepCount(2), tools: makeTools(log), guard, catalog });
    await generateText(safety);
    expect(log).toEqual(['get_status c1']);
  });

  it('a read beside the write does not verify it: the answer is refused', async () => {
    const guard = guardWithClock();
    const model = new MockLanguageModelV4({
      doGenerate: [step(call('c1', 'get_status')), step(call('c2', 'restart'), call('c3', 'get_status')), step(say('Done.'))],
    });
    const safety = withSafetyGate({ model, prompt: 'go', stopWhen: isStepCount(3), tools: makeTools([]), guard, catalog });
    await generateText(safety);
    expect(safety.answer.state).toBe('refused');
    expect(guard.state).toBe('VERIFYING');
  });

  it('a call id already in flight is not run twice: the duplicate gets a tool error', async () => {
    const log: string[] = [];
    const guard = guardWithClock();
    const model = new MockLanguageModelV4({ doGenerate: [step(call('c1', 'get_status'), call('c1', 'get_status')), step(say('ok'))] });
    const result = await generateText({
      model,
      prompt: 'go',
      tools: gateTools(makeTools(log), { guard, catalog }),
      stopWhen: isStepCount(2),
    });
    expect(log).toEqual(['get_status c1']);
    expect(result.steps[0]!.content.filter((part) => part.type === 'tool-error')).toHaveLength(1);
  });
});

describe('a tool with its own toModelOutput', () => {
  it('is not asked about a refusal (it would not know its shape): the model gets the refusal as JSON', async () => {
    const guard = guardWithClock();
    const tools = makeTools([]);
    const shouting = {
      ...tools,
      restart: tool({ ...tools.restart, toModelOutput: ({ output }) => ({ type: 'text' as const, value: output.toUpperCase() }) }),
    };
    const model = new MockLanguageModelV4({ doGenerate: [step(call('c1', 'restart')), step(say('Could not.'))] });
    await generateText({ model, prompt: 'go', tools: gateTools(shouting, { guard, catalog }), stopWhen: isStepCount(2) });
    const result = seen(model.doGenerateCalls[1]!.prompt as ModelMessage[]).find((line) => line.startsWith('tool c1'));
    expect(result).toMatch(/^tool c1: \{"type":"json","value":\{"ok":false,"error":\{"code":"FSM_BLOCKED"/);
  });
});

describe('ToolLoopAgent', () => {
  it('takes the gated tools, and the answer gate per generate call', async () => {
    const log: string[] = [];
    const guard = guardWithClock();
    const model = new MockLanguageModelV4({ doGenerate: SCENARIO.map((parts) => step(...parts)) });
    const agent = new ToolLoopAgent({ model, tools: gateTools(makeTools(log), { guard, catalog }) });
    const answerGate = gateAnswer({ guard });
    const result = await agent.generate({ prompt: 'Restart web-01.', ...answerGate });
    expect(log).toEqual(['get_status c2', 'restart c3', 'get_status c4']);
    expect(result.text).toBe('web-01 restarted and running.');
    expect(answerGate.answer.state).toBe('allowed');
  });
});

describe('ToolLoopAgent built once, serving many conversations', () => {
  /** One agent whose prepareCall gates its tools per conversation (`options.chatId`), as docs/adapters/ai-sdk.md shows. */
  function agentOverStore(log: string[], sessionKeyOf: (chatId: string) => string) {
    let t = 1_000;
    const sessions = createSessionStore({ now: () => (t += 1) });
    // Conversation a reads web-01 and answers; conversation b restarts web-01 with no read of its own (then reads, if it ran).
    const model = new MockLanguageModelV4({
      doGenerate: [
        step(call('a1', 'get_status')),
        step(say('web-01 is up.')),
        step(call('b1', 'restart')),
        step(say('Done.')),
        step(call('b2', 'get_status')),
        step(say('Done, web-01 is up.')),
      ],
    });
    const getGuard = (key: string) => sessions.session(key);
    const agent = new ToolLoopAgent({
      model,
      tools: makeTools(log),
      stopWhen: isStepCount(5),
      callOptionsSchema: jsonSchema<{ chatId: string }>({
        type: 'object',
        properties: { chatId: { type: 'string' } },
        required: ['chatId'],
      }),
      prepareCall: ({ options, tools, ...rest }) => ({
        ...rest,
        tools: gateTools(tools!, { getGuard, sessionKey: sessionKeyOf(options.chatId), catalog }),
      }),
    });
    const ask = (chatId: string, prompt: string) =>
      agent.generate({ prompt, options: { chatId }, ...gateAnswer({ getGuard, sessionKey: sessionKeyOf(chatId) }) });
    return { sessions, ask };
  }

  it("prepareCall gating per conversation: one conversation's read never unlocks another's write", async () => {
    const log: string[] = [];
    const { sessions, ask } = agentOverStore(log, (chatId) => chatId);
    await ask('a', 'Is web-01 up?');
    const b = await ask('b', 'Restart web-01.');
    expect(log).toEqual(['get_status a1']); // b's restart refused: b has read nothing
    const results = b.steps.flatMap((s) => s.content).filter((part) => part.type === 'tool-result');
    expect(results.map((part) => part.output)).toMatchObject([{ ok: false, error: { code: 'FSM_BLOCKED' } }]);
    expect(sessions.session('a').state).toBe('READING');
    expect(sessions.session('b').state).not.toBe('READING');
  });

  it('whereas one fixed sessionKey shares the session: the read of a lets b restart (what the docs warn against)', async () => {
    const log: string[] = [];
    const { ask } = agentOverStore(log, () => 'fixed');
    await ask('a', 'Is web-01 up?');
    await ask('b', 'Restart web-01.');
    expect(log).toEqual(['get_status a1', 'restart b1', 'get_status b2']);
  });
});

describe('sessions from a store', () => {
  it('gates through getGuard(sessionKey) and leaves the decisions in the store', async () => {
    let t = 1_000;
    const sessions = createSessionStore({ now: () => (t += 1) });
    const model = new MockLanguageModelV4({ doGenerate: SCENARIO.map((parts) => step(...parts)) });
    const safety = withSafetyGate({
      model,
      prompt: 'Restart web-01.',
      stopWhen: isStepCount(10),
      tools: makeTools([]),
      getGuard: (key) => sessions.session(key),
      sessionKey: 'chat-1',
      catalog,
    });
    await generateText(safety);
    expect(sessions.session('chat-1').state).toBe('READING');
    expect(sessions.session('chat-1').context.finalAnswerBlocks).toBe(1);
  });
});

describe('sessions shared by many processes (createSharedSessionStore: an asynchronous guard)', () => {
  function shared() {
    let t = 1_000;
    return createSharedSessionStore({ now: () => (t += 1) });
  }

  it('plays the scenario on generateText, each decision committed to the store', async () => {
    const sessions = shared();
    const log: string[] = [];
    const model = new MockLanguageModelV4({ doGenerate: SCENARIO.map((parts) => step(...parts)) });
    const safety = withSafetyGate({
      model,
      prompt: 'Restart web-01.',
      stopWhen: isStepCount(10),
      tools: makeTools(log),
      getGuard: (key) => sessions.session(key),
      sessionKey: 'chat-1',
      catalog,
    });
    const result = await generateText(safety);
    expect(log).toEqual(['get_status c2', 'restart c3', 'get_status c4']);
    expect(result.text).toBe('web-01 restarted and running.');
    expect(createSessionGuard({ snapshot: await sessions.session('chat-1').getPersistedSnapshot() }).state).toBe('READING');
  });

  it('withholds the refused answer from streamText as well', async () => {
    const sessions = shared();
    const model = new MockLanguageModelV4({ doStream: SCENARIO.map((parts) => streamed(...parts)) });
    const safety = withSafetyGate({
      model,
      prompt: 'Restart web-01.',
      stopWhen: isStepCount(10),
      tools: makeTools([]),
      getGuard: (key) => sessions.session(key),
      sessionKey: 'chat-2',
      catalog,
    });
    const result = streamText(safety);
    const chunks: string[] = [];
    for await (const chunk of result.textStream) chunks.push(chunk);
    expect(chunks.join('')).toBe('web-01 restarted and running.');
  });

  it('does not run a call the store cannot commit: the model gets a tool error', async () => {
    const sessions = shared();
    await sessions.close();
    const log: string[] = [];
    const model = new MockLanguageModelV4({ doGenerate: [step(call('c1', 'get_status')), step(say('ok'))] });
    const tools = gateTools(makeTools(log), { getGuard: (key) => sessions.session(key), sessionKey: 'chat-3', catalog });
    const result = await generateText({ model, prompt: 'go', tools, stopWhen: isStepCount(2) });
    expect(log).toEqual([]);
    expect(result.steps[0]!.content.filter((part) => part.type === 'tool-error')).toHaveLength(1);
  });
});

describe('configuration errors at wrap time', () => {
  it('refuses a tool set in which no tool can read or resolve', () => {
    expect(() => gateTools(makeTools([]), { guard: guardWithClock(), kinds: { get_status: 'write', restart: 'write' } })).toThrow(
      /no tool can read or resolve: 'get_status' \(write\), 'restart' \(write\)/,
    );
  });

  it('refuses a gate without a classification source', () => {
    expect(() => gateTools(makeTools([]), { guard: guardWithClock() })).toThrow(AdapterConfigError);
  });

  it('refuses getGuard without a session key', () => {
    expect(() => gateAnswer({ getGuard: () => guardWithClock() })).toThrow(/sessionKey/);
  });

  it('accepts per-tool kinds as the classification source', () => {
    const tools = gateTools(makeTools([]), { guard: guardWithClock(), kinds: { get_status: 'read' } });
    expect(Object.keys(tools)).toEqual(['get_status', 'restart']);
  });
});

describe('withSafetyGate: the whole call options', () => {
  it('returns them with the gate composed in and its own options taken out; `answer` is not enumerable', () => {
    const model = new MockLanguageModelV4({ doGenerate: [] });
    const safety = withSafetyGate({
      model,
      prompt: 'go',
      tools: makeTools([]),
      guard: guardWithClock(),
      catalog,
      strictFailedWrites: true,
    });
    expect(Object.keys(safety).sort()).toEqual([
      'experimental_steering',
      'experimental_transform',
      'model',
      'onStepEnd',
      'prompt',
      'tools',
    ]);
    expect(safety.answer).toEqual({ state: 'none' });
  });
});

describe('targets: a listing of one directory does not admit deleting a file of another', () => {
  const files = () => {
    const input = jsonSchema<{ path: string }>({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] });
    const deleted: string[] = [];
    return {
      deleted,
      tools: {
        list_files: tool({ inputSchema: input, execute: async ({ path }) => `${path}: a.txt` }),
        delete_file: tool({
          inputSchema: input,
          execute: async ({ path }) => {
            deleted.push(path);
            return `deleted ${path}`;
          },
        }),
      },
    };
  };
  const script = [
    [call('c1', 'list_files', { path: 'other' })],
    [call('c2', 'delete_file', { path: 'notes/a.txt' })],
    [call('c3', 'list_files', { path: 'notes' })],
    [call('c4', 'delete_file', { path: 'notes/a.txt' })],
  ];

  it('with a catalog naming the target arguments', async () => {
    const { tools, deleted } = files();
    const catalog = {
      name: 'files',
      tools: { list_files: { kind: 'resolve', targets: { path: 'path' } }, delete_file: { kind: 'write', targets: { path: 'path' } } },
    } as const;
    const model = generating(script);
    await generateText({ model, prompt: 'go', tools: gateTools(tools, { guard: guardWithClock(), catalog }), stopWhen: isStepCount(4) });
    expect(deleted).toEqual(['notes/a.txt']); // c4, after notes was listed; never c2
    expect(seen(model.doGenerateCalls[2]!.prompt as ModelMessage[]).find((l) => l.startsWith('tool c2'))).toContain(
      '"rule":"unknown-target"',
    );
  });

  it('with a classify returning { kind, targets }', async () => {
    const { tools, deleted } = files();
    const classify = (name: string, args: unknown) => ({
      kind: name === 'list_files' ? ('resolve' as const) : ('write' as const),
      targets: [(args as { path?: string }).path ?? ''],
      destructive: false,
    });
    const model = generating(script);
    await generateText({ model, prompt: 'go', tools: gateTools(tools, { guard: guardWithClock(), classify }), stopWhen: isStepCount(4) });
    expect(deleted).toEqual(['notes/a.txt']);
  });
});
