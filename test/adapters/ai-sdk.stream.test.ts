/**
 * What a reader of `streamText` sees under the AI SDK adapter
 * (src/adapters/ai-sdk/stream.ts): no text before the gate has decided on
 * it, whether or not its step calls a tool, and never a refused claim, in
 * any of the SDK's streams (the text stream, the full stream, the UI message
 * stream, `onChunk`, raw chunks, the steps and the next prompt). Driven by the
 * SDK's `MockLanguageModelV4` streaming a script.
 */
import { isStepCount, smoothStream, streamText, type ModelMessage, type StreamTextTransform, type ToolSet } from 'ai';
import { describe, expect, it } from 'vitest';
import { gateTextStream, gateTools, withSafetyGate } from '../../src/adapters/ai-sdk.js';
import { createSharedSessionStore } from '../../src/store/shared-session-store.js';
import { call, catalog, guardWithClock, makeTools, say, seen, streaming, think, type Part } from './ai-sdk.script.js';

/** A claim in the same step as the write it claims; then a read that verifies it, and the answer. */
const CLAIM_BESIDE_WRITE: Part[][] = [
  [call('c1', 'get_status')],
  [say('Restarted web-01.'), call('c2', 'restart')],
  [call('c3', 'get_status')],
  [say('web-01 is running.')],
];

/** Everything a reader can see of a run, and in which order things happened. */
async function readAll(script: Part[][], extra: Record<string, unknown> = {}, log: string[] = []) {
  const guard = guardWithClock();
  const model = streaming(script);
  const chunks: string[] = [];
  const gated = withSafetyGate({
    model,
    prompt: 'Restart web-01.',
    stopWhen: isStepCount(script.length),
    tools: makeTools(log),
    guard,
    catalog,
    onChunk: ({ chunk }: { chunk: { type: string; text?: string } }) => {
      if (chunk.type === 'text-delta') chunks.push(chunk.text ?? '');
    },
    ...extra,
  });
  const result = streamText(gated);
  const full: { type: string; text?: string; rawValue?: unknown }[] = [];
  for await (const part of result.fullStream) {
    full.push(part as { type: string });
    if (part.type === 'text-delta') log.push(`read "${part.text}"`);
  }
  const steps = await result.steps;
  return { guard, model, gated, full, chunks, steps, text: await result.text, log };
}

function deltas(parts: { type: string; text?: string }[]): string {
  return parts
    .filter((part) => part.type === 'text-delta')
    .map((part) => part.text)
    .join('');
}

describe('a claim streamed beside the tool call it claims', () => {
  it('never reaches the full stream, onChunk, the steps or the next prompt; the verified answer does', async () => {
    const { full, chunks, steps, model, text } = await readAll(CLAIM_BESIDE_WRITE);
    expect(deltas(full)).toBe('web-01 is running.');
    expect(chunks.join('')).toBe('web-01 is running.');
    expect(steps.map((s) => s.text)).toEqual(['', '', '', 'web-01 is running.']);
    expect(JSON.stringify(model.doStreamCalls[2]!.prompt)).not.toContain('Restarted web-01.');
    expect(text).toBe('web-01 is running.');
  });

  it('keeps the rest of its step: the write ran and its result is streamed', async () => {
    const { full, log } = await readAll(CLAIM_BESIDE_WRITE);
    expect(log.filter((line) => !line.startsWith('read'))).toEqual(['get_status c1', 'restart c2', 'get_status c3']);
    expect(full.filter((part) => part.type === 'tool-result')).toHaveLength(3);
  });

  it('never reaches the UI message stream either', async () => {
    const model = streaming(CLAIM_BESIDE_WRITE);
    const gated = withSafetyGate({ model, prompt: 'go', stopWhen: isStepCount(4), tools: makeTools([]), guard: guardWithClock(), catalog });
    const ui: string[] = [];
    for await (const chunk of streamText(gated).toUIMessageStream()) if (chunk.type === 'text-delta') ui.push(chunk.delta);
    expect(ui.join('')).toBe('web-01 is running.');
  });

  it('is not shown beside a call the gate refused (it speaks of what did not happen)', async () => {
    // restart before any read: refused; the answer would be allowed (nothing was written), the claim is not.
    const { full, log } = await readAll([[say('Restarted web-01.'), call('c1', 'restart')], [say('I could not restart it.')]]);
    expect(log.filter((line) => !line.startsWith('read'))).toEqual([]);
    expect(deltas(full)).toBe('I could not restart it.');
  });
});

describe('text beside a read', () => {
  it('is released only once the gate has decided: after the call ran, at the end of its step', async () => {
    const { log } = await readAll([[say('Let me look. '), call('c1', 'get_status')], [say('Up.')]]);
    expect(log).toEqual(['get_status c1', 'read "Let me "', 'read "look. "', 'read "Up"', 'read "."']);
  });
});

describe('raw chunks (includeRawChunks)', () => {
  it('are dropped with a refused text (they carry it), and kept with an allowed one', async () => {
    const { full } = await readAll(CLAIM_BESIDE_WRITE, { includeRawChunks: true });
    const raw = full.filter((part) => part.type === 'raw').map((part) => JSON.stringify(part.rawValue));
    expect(raw.some((value) => value.includes('Restarted web-01.'))).toBe(false);
    expect(raw.some((value) => value.includes('web-01 is running.'))).toBe(true);
  });
});

describe("your own transforms, composed after the gate's", () => {
  it('smoothStream() streams the verified answer and never the claim', async () => {
    const { full } = await readAll(CLAIM_BESIDE_WRITE, { experimental_transform: smoothStream({ delayInMs: null }) });
    expect(deltas(full)).toBe('web-01 is running.');
  });

  it('sees only text the gate let through', async () => {
    const seenByMine: string[] = [];
    const mine: StreamTextTransform<ToolSet> = () =>
      new TransformStream({
        transform(part, controller) {
          if (part.type === 'text-delta') seenByMine.push(part.text);
          controller.enqueue(part);
        },
      });
    await readAll(CLAIM_BESIDE_WRITE, { experimental_transform: [mine] });
    expect(seenByMine.join('')).toBe('web-01 is running.');
  });
});

describe('a refused final answer', () => {
  it('is not streamed with a shared (asynchronous) guard either, the claim beside the write neither', async () => {
    let t = 1_000;
    const sessions = createSharedSessionStore({ now: () => (t += 1) });
    const gated = withSafetyGate({
      model: streaming([...CLAIM_BESIDE_WRITE.slice(0, 3), [say('Done.')]]),
      prompt: 'go',
      stopWhen: isStepCount(4),
      tools: makeTools([]),
      getGuard: (key) => sessions.session(key),
      sessionKey: 'chat-1',
      catalog,
    });
    const text: string[] = [];
    for await (const chunk of streamText(gated).textStream) text.push(chunk);
    expect(text.join('')).toBe('Done.');
  });

  it('is dropped when the step limit ends the run on it, and the app is told', async () => {
    const { full, gated } = await readAll([[call('c1', 'get_status')], [call('c2', 'restart')], [say('Restarted web-01.')]]);
    expect(deltas(full)).toBe('');
    expect(gated.answer).toMatchObject({ state: 'refused', text: '' });
  });

  it('reaches the model as a refusal, the claim left out of its history', async () => {
    const { model } = await readAll([
      [call('c1', 'get_status')],
      [call('c2', 'restart')],
      [say('Restarted web-01.')],
      [call('c3', 'get_status')],
      [say('Running.')],
    ]);
    const prompt = model.doStreamCalls[3]!.prompt as ModelMessage[];
    expect(seen(prompt).at(-1)).toMatch(/^user: Your final answer was not given \(FSM_BLOCKED, rule unverified-write\)/);
    expect(JSON.stringify(prompt)).not.toContain('Restarted web-01.');
  });
});

describe('a claim beside a refused call, whatever your `refusal` returns', () => {
  // restart before any read: refused; the answer would be allowed (nothing was written), the claim is not.
  const CLAIM_BESIDE_REFUSED: Part[][] = [[say('Restarted web-01.'), call('c1', 'restart')], [say('I could not restart it.')]];
  const refusals: [string, (error: { message: string; code: string }) => unknown][] = [
    ['a string', (error) => `Blocked: ${error.message}`],
    ['an object of your own', (error) => ({ blocked: true, code: error.code })],
    ['nothing', () => undefined],
  ];

  for (const [what, refusal] of refusals) {
    it(`is not streamed when the refusal is ${what} (the gate's own decision tells, not the result's shape)`, async () => {
      const { full, chunks, steps, log } = await readAll(CLAIM_BESIDE_REFUSED, { refusal });
      expect(log.filter((line) => !line.startsWith('read'))).toEqual([]);
      expect(deltas(full)).toBe('I could not restart it.');
      expect(chunks.join('')).toBe('I could not restart it.');
      expect(steps.map((s) => s.text)).toEqual(['', 'I could not restart it.']);
    });
  }

  it('nor with gateTools and gateTextStream built apart, on the same guard', async () => {
    const guard = guardWithClock();
    const result = streamText({
      model: streaming(CLAIM_BESIDE_REFUSED),
      prompt: 'Restart web-01.',
      stopWhen: isStepCount(2),
      tools: gateTools(makeTools([]), { guard, catalog, refusal: (error) => `Blocked: ${error.message}` }),
      experimental_transform: gateTextStream({ guard }),
    });
    let text = '';
    for await (const chunk of result.textStream) text += chunk;
    expect(text).toBe('I could not restart it.');
  });

  it('an id the SDK reuses in a later run is not taken for refused: its text is shown', async () => {
    const guard = guardWithClock();
    const tools = makeTools([]);
    const run = async (script: Part[][]) => {
      const gated = withSafetyGate({
        model: streaming(script),
        prompt: 'go',
        stopWhen: isStepCount(script.length),
        tools,
        guard,
        catalog,
        refusal: () => 'no',
      });
      let text = '';
      for await (const chunk of streamText(gated).textStream) text += chunk;
      return text;
    };
    expect(await run([[say('Restarting. '), call('c1', 'restart')], [say('Not done.')]])).toBe('Not done.');
    expect(await run([[say('Looking. '), call('c1', 'get_status')], [say('Up.')]])).toBe('Looking. Up.');
  });
});

describe('reasoning', () => {
  /** A refused answer whose reasoning claims the unverified write; then a read, and the verified answer with its reasoning. */
  const REASONED: Part[][] = [
    [call('c1', 'get_status')],
    [call('c2', 'restart')],
    [think('Restarted web-01.'), say('Done.')],
    [call('c3', 'get_status')],
    [think('The status read shows it up.'), say('web-01 is running.')],
  ];

  it('of a refused step is held and dropped with its text: not in the full stream, onChunk or the steps', async () => {
    const seenChunks: string[] = [];
    const { full, steps } = await readAll(REASONED, {
      onChunk: ({ chunk }: { chunk: { type: string; text?: string } }) => {
        if (chunk.type === 'reasoning-delta') seenChunks.push(chunk.text ?? '');
      },
    });
    const reasoning = full.filter((part) => part.type === 'reasoning-delta').map((part) => part.text);
    expect(reasoning).toEqual(['The status read shows it up.']);
    expect(seenChunks).toEqual(['The status read shows it up.']);
    expect(JSON.stringify(steps.map((s) => s.content))).not.toContain('Restarted web-01.');
  });

  it('of a refused step never reaches the UI message stream', async () => {
    const gated = withSafetyGate({
      model: streaming(REASONED),
      prompt: 'go',
      stopWhen: isStepCount(5),
      tools: makeTools([]),
      guard: guardWithClock(),
      catalog,
    });
    const ui: string[] = [];
    for await (const chunk of streamText(gated).toUIMessageStream({ sendReasoning: true })) {
      if (chunk.type === 'reasoning-delta') ui.push(chunk.delta);
    }
    expect(ui).toEqual(['The status read shows it up.']);
  });

  it('beside a refused call is dropped too', async () => {
    const { full } = await readAll([[think('Restarted web-01.'), call('c1', 'restart')], [say('I could not restart it.')]], {
      refusal: () => 'no',
    });
    expect(full.some((part) => part.type === 'reasoning-delta')).toBe(false);
  });
});
