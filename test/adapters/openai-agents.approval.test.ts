/**
 * Issue #26, human approval (`needsApproval`, `result.interruptions`,
 * `state.approve()` / `reject()`, resuming with the run's `RunState`): a
 * call the gate would refuse is refused to the model and nobody is asked; a
 * call waiting for its approval is in flight for nobody (never recorded as a
 * failed write); an approval counts as the user's confirmation; every
 * resume path leaves the session consistent. Real `@openai/agents` runner
 * and `RunState`, the SDK's `ScriptedModel`.
 */
import { RunState, Runner, run } from '@openai/agents';
import { describe, expect, it } from 'vitest';
import { answer, drain, filesAgent, guardWithClock, list, outputFor, remove, textOf } from './openai-agents.support.js';

/** List notes, delete notes/a.txt (asks for approval), then what follows the approval. */
const ASKS = [list('notes', 'c1'), remove('notes/a.txt', 'c2')];
const AFTER_APPROVAL = [answer('Deleted notes/a.txt.'), list('notes', 'c3'), answer('notes/a.txt is gone.')];

/** The delete asks; its approval is asked of a human. */
function approvalAgent(extra: Parameters<typeof filesAgent>[1] = {}, asked: string[] = []) {
  return filesAgent([...ASKS, ...AFTER_APPROVAL], extra, {
    approval: async (_context, input) => {
      asked.push(JSON.stringify(input));
      return true;
    },
  });
}

describe('a call the gate would refuse', () => {
  it('is refused to the model at once: no approval is asked, the tool does not run', async () => {
    const asked: string[] = [];
    const { gate, agent, model, log, guard } = filesAgent(
      [remove('notes/a.txt', 'c1'), answer('I could not delete it.')],
      {},
      {
        approval: async (_context, input) => {
          asked.push(JSON.stringify(input));
          return true;
        },
      },
    );
    const result = await gate.run(agent, 'Delete notes/a.txt.');
    expect(result.interruptions).toEqual([]);
    expect(log).toEqual([]);
    expect(outputFor(model.calls[1]!.request.input, 'c1')).toContain('FSM_BLOCKED');
    expect(result.finalOutput).toBe('I could not delete it.');
    expect(guard.context.inFlight).toEqual([]);
    expect(asked).toEqual(['{"path":"notes/a.txt"}']); // the tool's own policy was asked; the human was not
  });
});

describe('a call waiting for its approval', () => {
  it('is not admitted: nothing in flight, nothing recorded, the tool has not run', async () => {
    const { gate, agent, log, guard } = approvalAgent();
    const result = await gate.run(agent, 'Delete notes/a.txt.');
    expect(result.interruptions.map((item) => item.name)).toEqual(['delete_file']);
    expect(log).toEqual(['list_files notes']);
    expect(guard.context.inFlight).toEqual([]);
    expect(guard.context.lastWriteTool).toBeNull();
    expect(guard.state).toBe('READING');
  });

  it('is not admitted by pre-approval guardrails either (Runner toolExecution.preApprovalInputGuardrails)', async () => {
    const runner = new Runner({ toolExecution: { preApprovalInputGuardrails: true } });
    const { gate, agent, log, guard } = approvalAgent({ runner });
    const result = await gate.run(agent, 'Delete notes/a.txt.');
    expect(result.interruptions).toHaveLength(1);
    expect(guard.context.inFlight).toEqual([]);
    expect(guard.context.lastWriteTool).toBeNull();
    result.state.approve(result.interruptions[0]!);
    const resumed = await gate.run(agent, result.state);
    expect(log).toEqual(['list_files notes', 'delete_file notes/a.txt', 'list_files notes']);
    expect(resumed.finalOutput).toBe('notes/a.txt is gone.');
  });
});

describe('resuming after the approval', () => {
  it('gate.run(agent, state): the approved call runs and is recorded; the claim is refused until verified', async () => {
    const { gate, agent, log, guard } = approvalAgent();
    const first = await gate.run(agent, 'Delete notes/a.txt.');
    first.state.approve(first.interruptions[0]!);
    const result = await gate.run(agent, first.state);
    expect(log).toEqual(['list_files notes', 'delete_file notes/a.txt', 'list_files notes']);
    expect(result.finalOutput).toBe('notes/a.txt is gone.');
    expect(guard.context.finalAnswerBlocks).toBe(1);
    expect(guard.context.lastWriteTool).toBe('delete_file');
    expect(guard.state).toBe('READING');
    expect(guard.context.inFlight).toEqual([]);
  });

  it('the approval is the confirmation a destructive write needs (confirmDestructive)', async () => {
    const guard = guardWithClock({ confirmDestructive: true });
    const { gate, agent, log } = approvalAgent({ guard });
    const first = await gate.run(agent, 'Delete notes/a.txt.');
    expect(first.interruptions).toHaveLength(1);
    first.state.approve(first.interruptions[0]!);
    const result = await gate.run(agent, first.state);
    expect(log).toContain('delete_file notes/a.txt');
    expect(result.finalOutput).toBe('notes/a.txt is gone.');
  });

  it('gate.run(agent, RunState.fromString(...)) after a restart: the same, the approval still the confirmation', async () => {
    const { gate, agent, log, guard } = approvalAgent({
      guard: guardWithClock({ confirmDestructive: true }),
      sessionKey: (context) => (context.context as { chat: string }).chat,
    });
    const first = await gate.run(agent, 'Delete notes/a.txt.', { context: { chat: 'chat-1' } });
    first.state.approve(first.interruptions[0]!);
    const restored = await RunState.fromString(agent, first.state.toString());
    const result = await gate.run(agent, restored);
    expect(log).toEqual(['list_files notes', 'delete_file notes/a.txt', 'list_files notes']);
    expect(result.finalOutput).toBe('notes/a.txt is gone.');
    expect(guard.state).toBe('READING');
  });

  it('streamed: gate.run(agent, state, { stream: true }) shows only the verified answer', async () => {
    const { gate, agent } = approvalAgent();
    const first = await gate.run(agent, 'Delete notes/a.txt.');
    first.state.approve(first.interruptions[0]!);
    const stream = await gate.run(agent, first.state, { stream: true });
    const { events, thrown } = await drain(stream);
    expect(thrown).toBeUndefined();
    expect(textOf(events)).toBe('notes/a.txt is gone.');
  });

  it('streamed from the start: the stream ends on the approval request, and its state resumes the run', async () => {
    const { gate, agent, log, guard } = approvalAgent();
    const first = await gate.run(agent, 'Delete notes/a.txt.', { stream: true });
    await first.completed;
    expect(first.error).toBeUndefined();
    expect(first.result.interruptions.map((item) => item.name)).toEqual(['delete_file']);
    expect(guard.context.inFlight).toEqual([]);
    first.result.state.approve(first.result.interruptions[0]!);
    const stream = await gate.run(agent, first.result.state, { stream: true });
    const { events, thrown } = await drain(stream);
    expect(thrown).toBeUndefined();
    expect(textOf(events)).toBe('notes/a.txt is gone.');
    expect(log).toEqual(['list_files notes', 'delete_file notes/a.txt', 'list_files notes']);
  });

  it("the SDK's run(agent, state) is refused loudly and leaves the session consistent; gate.run resumes it", async () => {
    const { gate, agent, log, guard } = approvalAgent();
    const first = await gate.run(agent, 'Delete notes/a.txt.');
    first.state.approve(first.interruptions[0]!);
    const saved = first.state.toString();
    await expect(run(agent, first.state)).rejects.toThrow(/gate\.run\(agent, input, options\)/);
    expect(log).toEqual(['list_files notes']);
    expect(guard.context.inFlight).toEqual([]);
    expect(guard.context.lastWriteTool).toBeNull();
    expect(guard.state).toBe('READING');
    const result = await gate.run(agent, await RunState.fromString(agent, saved));
    expect(result.finalOutput).toBe('notes/a.txt is gone.');
    expect(guard.state).toBe('READING');
  });
});

describe('a rejected approval', () => {
  it('records nothing: the call never ran, the model gets the rejection, an answer about no change is allowed', async () => {
    const { gate, agent, log, guard, model } = filesAgent([...ASKS, answer('I did not delete notes/a.txt.')], {}, { approval: true });
    const first = await gate.run(agent, 'Delete notes/a.txt.');
    first.state.reject(first.interruptions[0]!);
    const result = await gate.run(agent, first.state);
    expect(log).toEqual(['list_files notes']);
    expect(outputFor(model.calls[2]!.request.input, 'c2')).toContain('not approved');
    expect(result.finalOutput).toBe('I did not delete notes/a.txt.');
    expect(guard.context.lastWriteTool).toBeNull();
    expect(guard.context.finalAnswerBlocks).toBe(0);
    expect(guard.context.inFlight).toEqual([]);
  });
});

describe('two writes in one model response, both needing approval', () => {
  /** List notes, then delete a.txt and b.txt in one response; after the approval, a listing and the answer. */
  const TWO_WRITES = [
    list('notes', 'c1'),
    [...remove('notes/a.txt', 'c2'), ...remove('notes/b.txt', 'c3')],
    list('notes', 'c4'),
    answer('notes/a.txt is gone; notes/b.txt was not deleted.'),
  ];

  for (const confirmDestructive of [false, true]) {
    it(`only the first is put to the human; the second is refused to the model at once (confirmDestructive: ${String(confirmDestructive)})`, async () => {
      const asked: string[] = [];
      const guard = guardWithClock({ confirmDestructive });
      const { gate, agent, model, log } = filesAgent(
        TWO_WRITES,
        { guard },
        {
          approval: async (_context, input) => {
            asked.push(JSON.stringify(input));
            return true;
          },
        },
      );
      const first = await gate.run(agent, 'Delete notes/a.txt and notes/b.txt.');
      expect(first.interruptions.map((item) => (item.rawItem as { callId?: string }).callId)).toEqual(['c2']);
      const refusal = first.newItems.find(
        (item) => item.type === 'tool_call_output_item' && (item.rawItem as { callId?: string }).callId === 'c3',
      );
      expect(String((refusal as { output?: unknown } | undefined)?.output)).toMatch(
        /FSM_BLOCKED.*"rule":"(write-in-flight|unverified-write)"/,
      );
      expect(guard.context.inFlight).toEqual([]);
      first.state.approve(first.interruptions[0]!);
      const result = await gate.run(agent, first.state);
      expect(log).toEqual(['list_files notes', 'delete_file notes/a.txt', 'list_files notes']);
      expect(result.interruptions).toEqual([]);
      expect(result.finalOutput).toBe('notes/a.txt is gone; notes/b.txt was not deleted.');
      expect(outputFor(model.calls[2]!.request.input, 'c2')).toContain('deleted notes/a.txt');
      expect(asked).toEqual(['{"path":"notes/a.txt"}', '{"path":"notes/b.txt"}']); // the tool's own policy; the human: only c2
      expect(guard.state).toBe('READING');
    });
  }
});
