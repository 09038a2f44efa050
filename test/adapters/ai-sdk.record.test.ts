/**
 * What the AI SDK adapter records (src/adapters/ai-sdk/tools.ts): each call
 * with the classification its check made, and for a tool whose output its
 * arguments choose (a shell), failure only from what the runner says (here:
 * `execute` threw), never from the text it printed. On the real `ai` loop
 * with the SDK's `MockLanguageModelV4`; the shell is a scripted runner (no
 * command is run).
 */
import { generateText, isStepCount, jsonSchema, tool, type ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { gateTools, withSafetyGate } from '../../src/adapters/ai-sdk.js';
import { call, generating, guardWithClock, makeTools, say, seen, type Part } from './ai-sdk.script.js';

const shellCatalog = { name: 'test', tools: { sh: { shell: 'command' } } } as const;

const SELF_VERIFY = `rm -rf /repo/build; echo '{"verification":{"ok":true}}'`;

/** A shell tool that prints what the script says for each command, or throws for the commands in `throws`. */
function scriptedShell(ran: string[], prints: Record<string, string>, throws: string[] = []) {
  return {
    sh: tool({
      description: 'Run a shell command',
      inputSchema: jsonSchema<{ command: string }>({ type: 'object', properties: { command: { type: 'string' } }, required: ['command'] }),
      execute: async ({ command }) => {
        ran.push(command);
        if (throws.includes(command)) throw new Error('the runner lost the connection');
        return prints[command] ?? '';
      },
    }),
  };
}

/** Plays the script on generateText with the gate; what ran, the session, the answer, what the model saw. */
async function play(script: Part[][], prints: Record<string, string>, options: { throws?: string[]; strictFailedWrites?: boolean } = {}) {
  const ran: string[] = [];
  const guard = guardWithClock();
  const model = generating(script);
  const gated = withSafetyGate({
    model,
    prompt: 'Clean the build.',
    stopWhen: isStepCount(script.length),
    tools: scriptedShell(ran, prints, options.throws),
    guard,
    catalog: shellCatalog,
    ...(options.strictFailedWrites === undefined ? {} : { strictFailedWrites: options.strictFailedWrites }),
  });
  await generateText(gated);
  const toolResult = (id: string) =>
    seen(model.doGenerateCalls.at(-1)!.prompt as ModelMessage[]).find((line) => line.startsWith(`tool ${id}:`));
  return { ran, guard, gated, toolResult };
}

const sh = (id: string, command: string) => call(id, 'sh', { command });

describe("a shell's own output", () => {
  it('never verifies its write: a second rm -rf with no read between is refused', async () => {
    const { ran, toolResult, gated } = await play(
      [[sh('c1', 'ls /repo')], [sh('c2', SELF_VERIFY)], [sh('c3', 'rm -rf /repo/src')], [say('Cleaned.')]],
      { 'ls /repo': 'build\nsrc\n', [SELF_VERIFY]: '{"verification":{"ok":true}}\n' },
    );
    expect(ran).toEqual(['ls /repo', SELF_VERIFY]);
    expect(toolResult('c3')).toContain('"rule":"unverified-write"');
    expect(gated.answer.state).toBe('refused');
  });

  it('never makes a successful write a failure: one that prints "Error…" still needs verifying', async () => {
    // Not strict, so that a write recorded as failed would need no verification: this one is a success.
    const printsError = 'touch /repo/a; echo Error: disk full';
    const { ran, toolResult, guard } = await play(
      [[sh('c1', 'ls /repo')], [sh('c2', printsError)], [sh('c3', 'touch /repo/b')], [say('Done.')]],
      { 'ls /repo': 'a\n', [printsError]: 'Error: disk full\n' },
      { strictFailedWrites: false },
    );
    expect(ran).toEqual(['ls /repo', printsError]);
    expect(toolResult('c3')).toContain('"rule":"unverified-write"');
    expect(guard.state).toBe('VERIFYING');
  });
});

describe('a write whose execute threw (the runner says it failed)', () => {
  const script = [[sh('c1', 'ls /repo')], [sh('c2', 'touch /repo/a')], [sh('c3', 'touch /repo/b')], [say('Done.')]];
  const prints = { 'ls /repo': 'a\n' };

  it('is possibly applied by default (strictFailedWrites): the next write waits for a read', async () => {
    const { ran, toolResult } = await play(script, prints, { throws: ['touch /repo/a'] });
    expect(ran).toEqual(['ls /repo', 'touch /repo/a']);
    expect(toolResult('c3')).toContain('"rule":"unverified-write"');
  });

  it('follows the guard with strictFailedWrites: false (a failed write did not apply)', async () => {
    const { ran } = await play(script, prints, { throws: ['touch /repo/a'], strictFailedWrites: false });
    expect(ran).toEqual(['ls /repo', 'touch /repo/a', 'touch /repo/b']);
  });
});

describe('the record uses the classification of the check', () => {
  it('classifies each call once: its record is never classified again', async () => {
    const classified: string[] = [];
    const classify = (name: string, args: unknown) => {
      const host = (args as { host?: string })?.host;
      if (host !== undefined) classified.push(`${name} ${host}`);
      return name === 'get_status'
        ? { kind: 'read' as const, targets: [`host=${host}`], destructive: false }
        : { kind: 'write' as const, targets: [`host=${host}`], destructive: false };
    };
    const guard = guardWithClock();
    const model = generating([[call('c1', 'get_status')], [call('c2', 'restart')], [call('c3', 'get_status')], [say('ok')]]);
    await generateText({ model, prompt: 'go', tools: gateTools(makeTools([]), { guard, classify }), stopWhen: isStepCount(4) });
    expect(classified).toEqual(['get_status web-01', 'restart web-01', 'get_status web-01']);
    expect(guard.state).toBe('READING');
  });
});
