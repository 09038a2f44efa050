/**
 * `withSafetyGate` composes the gate into the whole options of a call
 * (src/adapters/ai-sdk/options.ts): your step callbacks, `prepareStep` and
 * steering run with the gate's, never instead of them, and what cannot be
 * composed is refused with an `AdapterConfigError` naming the option. On the
 * real `ai` loop with the SDK's `MockLanguageModelV4`.
 */
import { experimental_createSteering, generateText, isStepCount, type ModelMessage } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { AdapterConfigError, withSafetyGate } from '../../src/adapters/ai-sdk.js';
import { SCENARIO, catalog, generating, guardWithClock, makeTools, seen } from './ai-sdk.script.js';

const REFUSAL = /^user: Your final answer was not given \(FSM_BLOCKED, rule unverified-write\)/;

describe('your callbacks beside the gate', () => {
  it("onStepEnd and onStepFinish are both called, after the gate's, which still refuses the unverified answer", async () => {
    const guard = guardWithClock();
    const model = generating(SCENARIO);
    const mine: string[] = [];
    const gated = withSafetyGate({
      model,
      prompt: 'Restart web-01.',
      stopWhen: isStepCount(10),
      tools: makeTools([]),
      guard,
      catalog,
      onStepEnd: (step) => void mine.push(`end ${step.stepNumber}`),
      onStepFinish: (step) => void mine.push(`finish ${step.stepNumber} ${gated.answer.state}`),
    });
    await generateText(gated);
    expect(mine.filter((line) => line.startsWith('end'))).toHaveLength(6);
    expect(mine).toContain('finish 3 refused');
    expect(mine).toContain('finish 5 allowed');
    expect(seen(model.doGenerateCalls[4]!.prompt as ModelMessage[]).at(-1)).toMatch(REFUSAL);
    expect(guard.context.finalAnswerBlocks).toBe(1);
  });

  it('a prepareStep that rebuilds the messages keeps the refusal in them', async () => {
    const model = generating(SCENARIO);
    const gated = withSafetyGate({
      model,
      prompt: 'Restart web-01.',
      stopWhen: isStepCount(10),
      tools: makeTools([]),
      guard: guardWithClock(),
      catalog,
      // Rebuilt from the prompt and the responses: the steered message is not among them.
      prepareStep: ({ initialMessages, responseMessages }) => ({ messages: [...initialMessages, ...responseMessages] }),
    });
    await generateText(gated);
    expect(seen(model.doGenerateCalls[4]!.prompt as ModelMessage[]).at(-1)).toMatch(REFUSAL);
    if (gated.answer.state !== 'allowed') throw new Error(`expected an allowed answer, got ${gated.answer.state}`);
  });

  it('your steering object carries the refusal, and your own messages too', async () => {
    const steering = experimental_createSteering();
    const model = generating(SCENARIO);
    const gated = withSafetyGate({
      model,
      prompt: 'Restart web-01.',
      stopWhen: isStepCount(10),
      tools: makeTools([]),
      guard: guardWithClock(),
      catalog,
      experimental_steering: steering,
    });
    expect(gated.experimental_steering).toBe(steering);
    await generateText(gated);
    expect(seen(model.doGenerateCalls[4]!.prompt as ModelMessage[]).at(-1)).toMatch(REFUSAL);
  });
});

describe('what cannot be composed is refused, naming the option', () => {
  const base = () => ({ prompt: 'go', tools: makeTools([]), guard: guardWithClock(), catalog });

  it('a part of the options to spread (no model): the options after it could replace the gate', () => {
    const options = base() as unknown as Parameters<typeof withSafetyGate>[0];
    expect(() => withSafetyGate(options)).toThrow(AdapterConfigError);
    expect(() => withSafetyGate(options)).toThrow(/whole call's options .*no `model` was given/);
  });

  it('two steering objects', () => {
    const model = new MockLanguageModelV4();
    expect(() =>
      withSafetyGate({ model, ...base(), steering: experimental_createSteering(), experimental_steering: experimental_createSteering() }),
    ).toThrow(/`steering` or `experimental_steering`/);
  });

  it('a transform or callback that is not a function', () => {
    const model = new MockLanguageModelV4();
    const bad = 'smooth' as unknown as () => TransformStream;
    expect(() => withSafetyGate({ model, ...base(), experimental_transform: bad })).toThrow(/`experimental_transform` must be/);
    expect(() => withSafetyGate({ model, ...base(), onStepEnd: bad as never })).toThrow(/`onStepEnd` must be a function/);
    expect(() => withSafetyGate({ model, ...base(), prepareStep: bad as never })).toThrow(/`prepareStep` must be a function/);
  });

  it('strictFailedWrites that is not a boolean', () => {
    const model = new MockLanguageModelV4();
    expect(() => withSafetyGate({ model, ...base(), strictFailedWrites: 'yes' as never })).toThrow(
      /`strictFailedWrites` must be a boolean/,
    );
  });
});
