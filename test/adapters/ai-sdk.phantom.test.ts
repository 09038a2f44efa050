/**
 * The AI SDK adapter passes each final answer's text to the guard
 * (`finalAnswer(text)`): an answer claiming a change no tool made is refused
 * (rule `phantom-claim`, issue 28 item 2), the model is told which claim and
 * what would support it, and the loop goes on. On the real `ai` 7 loop with
 * the SDK's own `MockLanguageModelV4`.
 */
import { generateText, isStepCount, streamText } from 'ai';
import { describe, expect, it } from 'vitest';
import { withSafetyGate } from '../../src/adapters/ai-sdk.js';
import { call, catalog, generating, guardWithClock, makeTools, say, seen, streaming, type Part } from './ai-sdk.script.js';

/** The model claims a restart it never called, is refused, then says what it did. */
const PHANTOM: Part[][] = [
  [call('c1', 'get_status')], // a read: nothing changes
  [say('I restarted web-01 and it is back.')], // a claim no tool made: refused
  [say('web-01 is running; I did not restart it.')], // the truth: allowed
];

describe('withSafetyGate: a claimed change no tool made', () => {
  it('generateText: refuses the claim, tells the model which, and ends on the honest answer', async () => {
    const log: string[] = [];
    const guard = guardWithClock();
    const model = generating(PHANTOM);
    const safety = withSafetyGate({ model, prompt: 'Is web-01 up?', stopWhen: isStepCount(5), tools: makeTools(log), guard, catalog });
    const result = await generateText(safety);
    expect(log).toEqual(['get_status c1']);
    expect(result.text).toBe('web-01 is running; I did not restart it.');
    expect(result.steps.map((s) => s.text)).toEqual(['', '', 'web-01 is running; I did not restart it.']);
    expect(guard.context.finalAnswerBlocks).toBe(1);
    const told = seen(model.doGenerateCalls[2]!.prompt).filter((line) => line.startsWith('user: Your final answer'));
    expect(told).toEqual([
      'user: Your final answer was not given (FSM_BLOCKED, rule phantom-claim): the final answer claims a change no tool made: "I restarted web-01 and it is back."; no state-changing call succeeded in this session. Make the change with a call that succeeds, or say that it was not done. This is recoverable: the session goes on.',
    ]);
    expect(safety.answer).toMatchObject({ state: 'allowed', stepNumber: 2 });
  });

  it('streamText: the refused claim is never streamed', async () => {
    const guard = guardWithClock();
    const safety = withSafetyGate({
      model: streaming(PHANTOM),
      prompt: 'Is web-01 up?',
      stopWhen: isStepCount(5),
      tools: makeTools([]),
      guard,
      catalog,
    });
    const result = streamText(safety);
    let text = '';
    for await (const chunk of result.textStream) text += chunk;
    expect(text).toBe('web-01 is running; I did not restart it.');
    expect(guard.context.finalAnswerBlocks).toBe(1);
  });

  it('with phantomClaims false on the guard the claim goes through', async () => {
    const guard = guardWithClock({ phantomClaims: false });
    const safety = withSafetyGate({
      model: generating(PHANTOM),
      prompt: 'Is web-01 up?',
      stopWhen: isStepCount(5),
      tools: makeTools([]),
      guard,
      catalog,
    });
    const result = await generateText(safety);
    expect(result.text).toBe('I restarted web-01 and it is back.');
    expect(guard.context.finalAnswerBlocks).toBe(0);
  });
});
