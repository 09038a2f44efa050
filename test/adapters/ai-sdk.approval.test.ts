/**
 * Human approval through the gate (src/adapters/ai-sdk/tools.ts): a tool
 * with `needsApproval`, or a call-level `toolApproval`, on the real `ai`
 * loop with the SDK's `MockLanguageModelV4`. The app answers an approval
 * request as the SDK documents it: a tool message with a
 * `tool-approval-response`, given to the next `generateText` call.
 *
 * - A call the gate would refuse is refused at once: nobody is asked.
 * - A call waiting for approval is in flight, never a failure: nothing is
 *   recorded until it runs.
 * - An approval is the user's confirmation (`confirmDestructive`, a write
 *   naming an unknown place); a denial records nothing.
 */
import { generateText, isStepCount, jsonSchema, streamText, tool, type ModelMessage, type ToolSet } from 'ai';
import { describe, expect, it } from 'vitest';
import { gateTools, withSafetyGate } from '../../src/adapters/ai-sdk.js';
import type { SessionGuard } from '../../src/guard/session-guard.js';
import { call, catalog, generating, guardWithClock, makeTools, say, seen, streaming, type Part } from './ai-sdk.script.js';

/** The scenario's tools, restart asking for approval. */
function approvalTools(log: string[]) {
  const tools = makeTools(log);
  return { ...tools, restart: tool({ ...tools.restart, needsApproval: true }) };
}

/** A run as these tests read it. */
interface Run {
  steps: ReadonlyArray<{ content: ReadonlyArray<object> }>;
  response: { messages: ModelMessage[] };
}

type RequestPart = { type: string; approvalId: string; toolCall: { toolCallId: string } };

/** The approval requests of a run's last step: [approvalId, toolCallId]. */
function requests(result: Run): [string, string][] {
  return (result.steps.at(-1)!.content as RequestPart[])
    .filter((part) => part.type === 'tool-approval-request')
    .map((part) => [part.approvalId, part.toolCall.toolCallId]);
}

/** The messages of the next call: the run's, and the user's answer to each approval request. */
function answer(prompt: ModelMessage[], result: Run, approved: boolean): ModelMessage[] {
  return [
    ...prompt,
    ...result.response.messages,
    { role: 'tool', content: requests(result).map(([approvalId]) => ({ type: 'tool-approval-response' as const, approvalId, approved })) },
  ];
}

/** Two calls of generateText: up to the approval request, then on with the user's answer. */
async function approveOrDeny(options: {
  approved: boolean;
  first: Part[][];
  then: Part[][];
  guard?: SessionGuard;
  tools?: (log: string[]) => ToolSet;
  catalog?: object;
}) {
  const log: string[] = [];
  const guard = options.guard ?? guardWithClock();
  const tools = gateTools((options.tools ?? approvalTools)(log), { guard, catalog: (options.catalog ?? catalog) as typeof catalog });
  const prompt: ModelMessage[] = [{ role: 'user', content: 'Restart web-01.' }];
  const first = await generateText({ model: generating(options.first), messages: prompt, tools, stopWhen: isStepCount(10) });
  const asked = requests(first);
  const stateWhileAsked = { state: guard.state, inFlight: guard.context.inFlight.length, ran: [...log] };
  const model = generating(options.then);
  const second = await generateText({ model, messages: answer(prompt, first, options.approved), tools, stopWhen: isStepCount(10) });
  return { log, guard, first, asked, stateWhileAsked, second, model };
}

describe('a call the gate would refuse', () => {
  it('is refused to the model at once, with the structured refusal: nobody is asked', async () => {
    const log: string[] = [];
    const guard = guardWithClock();
    const model = generating([[call('c1', 'restart')], [say('I could not restart it.')]]);
    const result = await generateText({
      model,
      prompt: 'go',
      tools: gateTools(approvalTools(log), { guard, catalog }),
      stopWhen: isStepCount(2),
    });
    expect(result.steps[0]!.content.filter((part) => part.type === 'tool-approval-request')).toEqual([]);
    expect(log).toEqual([]);
    const refusal = seen(model.doGenerateCalls[1]!.prompt as ModelMessage[]).find((line) => line.startsWith('tool c1'));
    expect(refusal).toContain('"code":"FSM_BLOCKED"');
    expect(result.text).toBe('I could not restart it.');
  });

  it('is not run unapproved when the state changes before it runs (a read ran first in the same step)', async () => {
    const log: string[] = [];
    const guard = guardWithClock();
    const model = generating([[call('c1', 'get_status'), call('c2', 'restart')], [say('Checked.')]]);
    const tools = gateTools(approvalTools(log), { guard, catalog });
    const result = await generateText({ model, prompt: 'go', tools, stopWhen: isStepCount(2), toolCallConcurrency: 1 });
    expect(log).toEqual(['get_status c1']);
    expect(result.steps[0]!.content.filter((part) => part.type === 'tool-approval-request')).toEqual([]);
    expect(guard.state).toBe('READING');
    expect(guard.context.inFlight).toEqual([]);
  });

  it('through a call-level toolApproval (withSafetyGate) as well', async () => {
    const log: string[] = [];
    const guard = guardWithClock();
    const gated = withSafetyGate({
      model: generating([[call('c1', 'restart')], [call('c2', 'get_status')], [call('c3', 'restart')]]),
      prompt: 'go',
      stopWhen: isStepCount(3),
      tools: makeTools(log),
      toolApproval: { restart: 'user-approval' },
      guard,
      catalog,
    });
    const result = await generateText(gated);
    // The first restart (before any read) refused at once; the second, after the read, waits for the user.
    expect(result.steps[0]!.content.filter((part) => part.type === 'tool-approval-request')).toEqual([]);
    expect(requests(result).map(([, id]) => id)).toEqual(['c3']);
    expect(log).toEqual(['get_status c2']);
  });
});

describe('a call waiting for approval', () => {
  it('is asked about, has not run, and is recorded as nothing (neither in flight in the guard nor failed)', async () => {
    const { asked, stateWhileAsked } = await approveOrDeny({
      approved: true,
      first: [[call('c1', 'get_status')], [call('c2', 'restart')]],
      then: [[say('ok')]],
    });
    expect(asked.map(([, id]) => id)).toEqual(['c2']);
    expect(stateWhileAsked).toEqual({ state: 'READING', inFlight: 0, ran: ['get_status c1'] });
  });

  it('runs when approved, and then needs verifying like any write', async () => {
    const { log, guard, second } = await approveOrDeny({
      approved: true,
      first: [[call('c1', 'get_status')], [call('c2', 'restart')]],
      then: [[call('c3', 'get_status')], [say('web-01 is running.')]],
    });
    expect(log).toEqual(['get_status c1', 'restart c2', 'get_status c3']);
    expect(guard.state).toBe('READING'); // the write was verified by c3
    expect(second.text).toBe('web-01 is running.');
  });

  it('when denied, never runs and leaves no failure that may have applied: the session can answer', async () => {
    const { log, guard } = await approveOrDeny({
      approved: false,
      first: [[call('c1', 'get_status')], [call('c2', 'restart')]],
      then: [[say('I did not restart web-01.')]],
    });
    expect(log).toEqual(['get_status c1']);
    expect(guard.state).toBe('READING');
    expect(guard.finalAnswer().allowed).toBe(true);
  });
});

describe("the approval is the user's confirmation", () => {
  const destructive = { name: 'test', tools: { get_status: 'read', restart: { kind: 'write', destructive: true } } } as const;

  it('confirmDestructive: without an approval tool the destructive write is refused for want of confirmation', async () => {
    const log: string[] = [];
    const guard = guardWithClock({ confirmDestructive: true });
    const model = generating([[call('c1', 'get_status')], [call('c2', 'restart')], [say('Could not.')]]);
    await generateText({
      model,
      prompt: 'go',
      tools: gateTools(makeTools(log), { guard, catalog: destructive }),
      stopWhen: isStepCount(3),
    });
    expect(log).toEqual(['get_status c1']);
    expect(seen(model.doGenerateCalls[2]!.prompt as ModelMessage[]).find((l) => l.startsWith('tool c2'))).toContain('needs');
  });

  it('confirmDestructive: the user is asked, and the approved write runs', async () => {
    const { log, asked } = await approveOrDeny({
      approved: true,
      guard: guardWithClock({ confirmDestructive: true }),
      catalog: destructive,
      first: [[call('c1', 'get_status')], [call('c2', 'restart')]],
      then: [[say('ok')]],
    });
    expect(asked.map(([, id]) => id)).toEqual(['c2']);
    expect(log).toEqual(['get_status c1', 'restart c2']);
  });

  it('a write naming an unknown place (a shell variable): asked, and the approved command runs', async () => {
    const shell = { name: 'test', tools: { sh: { shell: 'command' } } } as const;
    const shellTools = (log: string[]) => ({
      sh: tool({
        inputSchema: jsonSchema<{ command: string }>({ type: 'object', properties: { command: { type: 'string' } } }),
        needsApproval: ({ command }) => command.startsWith('rm '),
        execute: async ({ command }) => {
          log.push(command);
          return '';
        },
      }),
    });
    const { log, asked } = await approveOrDeny({
      approved: true,
      tools: shellTools,
      catalog: shell,
      first: [[call('c1', 'sh', { command: 'ls /repo' })], [call('c2', 'sh', { command: 'rm -rf "$DIR"' })]],
      then: [[say('ok')]],
    });
    expect(asked.map(([, id]) => id)).toEqual(['c2']);
    expect(log).toEqual(['ls /repo', 'rm -rf "$DIR"']);
  });
});

describe('streamText with an approval', () => {
  it('withholds the text beside a call that waits for the user, and streams the request', async () => {
    const log: string[] = [];
    const result = streamText({
      model: streaming([[call('c1', 'get_status')], [say('Restarted web-01.'), call('c2', 'restart')]]),
      prompt: 'go',
      tools: gateTools(approvalTools(log), { guard: guardWithClock(), catalog }),
      stopWhen: isStepCount(5),
      experimental_transform: withSafetyGate({ model: 'unused', tools: makeTools([]), guard: guardWithClock(), catalog })
        .experimental_transform,
    });
    const types: string[] = [];
    let text = '';
    for await (const part of result.fullStream) {
      types.push(part.type);
      if (part.type === 'text-delta') text += part.text;
    }
    expect(text).toBe('');
    expect(types).toContain('tool-approval-request');
  });

  it('runs the approved call at the start of the next streamText, the approval recorded as the confirmation', async () => {
    const log: string[] = [];
    const guard = guardWithClock({ confirmDestructive: true });
    const destructive = { name: 'test', tools: { get_status: 'read', restart: { kind: 'write', destructive: true } } } as const;
    const tools = gateTools(approvalTools(log), { guard, catalog: destructive });
    const prompt: ModelMessage[] = [{ role: 'user', content: 'Restart web-01.' }];
    const first = await generateText({
      model: generating([[call('c1', 'get_status')], [call('c2', 'restart')]]),
      messages: prompt,
      tools,
      stopWhen: isStepCount(5),
    });
    const second = streamText({
      model: streaming([[call('c3', 'get_status')], [say('web-01 is running.')]]),
      messages: answer(prompt, first, true),
      tools,
      stopWhen: isStepCount(5),
    });
    let text = '';
    for await (const chunk of second.textStream) text += chunk;
    expect(log).toEqual(['get_status c1', 'restart c2', 'get_status c3']);
    expect(text).toBe('web-01 is running.');
    expect(guard.state).toBe('READING');
  });
});

describe('two writes of one step, both asking for approval', () => {
  const TWO_WRITES: Part[][] = [[call('c1', 'get_status')], [call('c2', 'restart'), call('c3', 'restart', { host: 'web-02' })]];

  it('only the first is asked about: the second is refused to the model at once (it could not run after the first)', async () => {
    const { asked, first, log } = await approveOrDeny({ approved: true, first: TWO_WRITES, then: [[say('ok')]] });
    expect(asked.map(([, id]) => id)).toEqual(['c2']);
    const refusedC3 = first.steps
      .flatMap((s) => s.content as { type: string; toolCallId?: string; output?: unknown }[])
      .find((part) => part.type === 'tool-result' && part.toolCallId === 'c3');
    expect(refusedC3?.output).toMatchObject({ ok: false, error: { code: 'FSM_BLOCKED' } });
    expect(log).toEqual(['get_status c1', 'restart c2']);
  });

  it('the approved first runs, and then needs verifying like any write', async () => {
    const { log, guard, second } = await approveOrDeny({
      approved: true,
      first: TWO_WRITES,
      then: [[call('c4', 'get_status')], [say('web-01 is running.')]],
    });
    expect(log).toEqual(['get_status c1', 'restart c2', 'get_status c4']);
    expect(guard.state).toBe('READING');
    expect(second.text).toBe('web-01 is running.');
  });

  it('with confirmDestructive: the first is asked (the approval is its confirmation), the second still refused at once', async () => {
    const destructive = { name: 'test', tools: { get_status: 'read', restart: { kind: 'write', destructive: true } } } as const;
    const { asked, log } = await approveOrDeny({
      approved: true,
      guard: guardWithClock({ confirmDestructive: true }),
      catalog: destructive,
      first: TWO_WRITES,
      then: [[say('ok')]],
    });
    expect(asked.map(([, id]) => id)).toEqual(['c2']);
    expect(log).toEqual(['get_status c1', 'restart c2']);
  });

  it('on streamText: the request streamed for the first, the refusal for the second', async () => {
    const log: string[] = [];
    const result = streamText({
      model: streaming(TWO_WRITES),
      prompt: 'Restart web-01 and web-02.',
      tools: gateTools(approvalTools(log), { guard: guardWithClock(), catalog }),
      stopWhen: isStepCount(5),
    });
    const seenParts: string[] = [];
    for await (const part of result.fullStream) {
      if (part.type === 'tool-approval-request') seenParts.push(`asked ${part.toolCall.toolCallId}`);
      if (part.type === 'tool-result')
        seenParts.push(`result ${part.toolCallId}${(part.output as { ok?: unknown }).ok === false ? ' refused' : ''}`);
    }
    expect(seenParts).toEqual(['result c1', 'asked c2', 'result c3 refused']);
    expect(log).toEqual(['get_status c1']);
  });

  it('through a call-level toolApproval (withSafetyGate) as well', async () => {
    const log: string[] = [];
    const result = await generateText(
      withSafetyGate({
        model: generating(TWO_WRITES),
        prompt: 'Restart web-01 and web-02.',
        stopWhen: isStepCount(5),
        tools: makeTools(log),
        toolApproval: { restart: 'user-approval' },
        guard: guardWithClock(),
        catalog,
      }),
    );
    expect(requests(result).map(([, id]) => id)).toEqual(['c2']);
  });
});
