/**
 * Issue 26, item 4: human approval of tool calls in a real
 * `@langchain/langgraph` graph (a `MemorySaver` checkpointer, resumes with
 * `Command({ resume })`). With `needsApproval`, the gate previews a call as
 * approved before anyone is asked: a call it would refuse anyway is refused
 * to the model and nobody is asked; an approval is the user's confirmation
 * (`confirmDestructive`); a rejection runs nothing and records nothing. A
 * tool that calls `interrupt()` itself has a call in flight, never a
 * failure. `interruptBefore: ['tools']` pauses before any call is admitted,
 * and `previewCalls` tells which calls could run.
 */
import { HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { Command, interrupt } from '@langchain/langgraph';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { TOOL_APPROVAL, isToolApprovalRequest, type ToolApprovalRequest } from '../../src/adapters/langgraph.js';
import { createSessionGuard } from '../../src/guard/session-guard.js';
import { createSessionStore } from '../../src/store/session-store.js';
import { ScriptedChatModel, calls, fileTools, gatedGraph, guardOptions, say, thread } from './langgraph.support.js';

const confirming = { ...guardOptions, confirmDestructive: true };
const destructive = { needsApproval: (call: { destructive: boolean }) => call.destructive, guardOptions: confirming };

function toolResults(messages: BaseMessage[]): string[] {
  return messages.filter((m): m is ToolMessage => m instanceof ToolMessage).map((m) => `[${m.status}] ${String(m.content)}`);
}

/** The values of the interrupts a paused run carries (`__interrupt__`). */
const interruptsOf = (result: unknown) => ((result as { __interrupt__?: { value: unknown }[] }).__interrupt__ ?? []).map((i) => i.value);

/** The approval request a paused run carries. */
function requestOf(result: unknown): ToolApprovalRequest {
  const value = interruptsOf(result)[0];
  if (!isToolApprovalRequest(value)) throw new Error(`no approval request: ${JSON.stringify(interruptsOf(result))}`);
  return value;
}

const deleteScript = () => [
  calls(['c1', 'list_files', { path: 'notes' }]),
  calls(['c2', 'delete_file', { path: 'notes/a.txt' }]),
  calls(['c3', 'list_files', { path: 'notes' }]),
  say('notes/a.txt is deleted.'),
];

describe('needsApproval: one interrupt() before any call runs', () => {
  it('asks about the destructive call, runs nothing until approved; the approval confirms it', async () => {
    const log: string[] = [];
    const graph = gatedGraph(new ScriptedChatModel(deleteScript()), fileTools(log), { tool: destructive });
    const paused = await graph.invoke({ messages: [new HumanMessage('Delete notes/a.txt.')] }, thread('a1'));
    const request = requestOf(paused);
    expect(request.type).toBe(TOOL_APPROVAL);
    expect(request.calls).toEqual([
      { id: 'c2', name: 'delete_file', args: { path: 'notes/a.txt' }, kind: 'write', targets: ['notes/a.txt'], destructive: true },
    ]);
    expect(log).toEqual(['list_files notes']);
    // Waiting is not a failure: nothing recorded, nothing in flight.
    const waiting = createSessionGuard({ snapshot: (await graph.getState(thread('a1'))).values.safety });
    expect(waiting.state).toBe('READING');
    expect(waiting.context.inFlight).toEqual([]);

    const final = await graph.invoke(new Command({ resume: { c2: true } }), thread('a1'));
    expect(log).toEqual(['list_files notes', 'delete_file notes/a.txt', 'list_files notes']);
    expect(String(final.messages.at(-1)?.content)).toBe('notes/a.txt is deleted.');
  });

  it('without the approval, confirmDestructive refuses the same call (the approval is what confirms it)', async () => {
    const log: string[] = [];
    const model = new ScriptedChatModel([...deleteScript().slice(0, 2), say('I could not delete it.')]);
    const graph = gatedGraph(model, fileTools(log), { tool: { guardOptions: confirming } });
    const final = await graph.invoke({ messages: [new HumanMessage('Delete notes/a.txt.')] }, thread('a2'));
    expect(log).toEqual(['list_files notes']);
    expect(toolResults(final.messages).at(-1)).toContain('"rule":"needs-confirmation"');
  });

  it('a call the gate would refuse even once approved is refused to the model, and nobody is asked', async () => {
    const log: string[] = [];
    const model = new ScriptedChatModel([
      calls(['c1', 'list_files', { path: 'notes' }]),
      calls(['c2', 'delete_file', { path: 'other/c.txt' }]), // no listing of `other`
      say('I could not delete other/c.txt.'),
    ]);
    const graph = gatedGraph(model, fileTools(log), { tool: destructive });
    const final = await graph.invoke({ messages: [new HumanMessage('Delete other/c.txt.')] }, thread('a3'));
    expect(interruptsOf(final)).toEqual([]);
    expect(log).toEqual(['list_files notes']);
    expect(toolResults(final.messages).at(-1)).toContain('"rule":"unknown-target"');
    expect(String(final.messages.at(-1)?.content)).toBe('I could not delete other/c.txt.');
  });

  it('two writes in one message: only the first could run beside the other, so only it is asked about', async () => {
    const log: string[] = [];
    const model = new ScriptedChatModel([
      calls(['c1', 'list_files', { path: 'notes' }]),
      calls(['c2', 'delete_file', { path: 'notes/a.txt' }], ['c3', 'delete_file', { path: 'notes/b.txt' }]),
      calls(['c4', 'list_files', { path: 'notes' }]),
      say('notes/a.txt is deleted; notes/b.txt is not.'),
    ]);
    const graph = gatedGraph(model, fileTools(log), { tool: destructive });
    const paused = await graph.invoke({ messages: [new HumanMessage('Delete both.')] }, thread('a6'));
    expect(requestOf(paused).calls.map((call) => call.id)).toEqual(['c2']);
    const final = await graph.invoke(new Command({ resume: { c2: true } }), thread('a6'));
    expect(log).toEqual(['list_files notes', 'delete_file notes/a.txt', 'list_files notes']);
    expect(toolResults(final.messages).find((line) => line.includes('FSM_BLOCKED'))).toContain('"rule":"write-in-flight"');
  });

  it('a rejection runs nothing and records nothing: the session is as before the question', async () => {
    const log: string[] = [];
    const model = new ScriptedChatModel([...deleteScript().slice(0, 2), say('The deletion was not approved.')]);
    const graph = gatedGraph(model, fileTools(log), { tool: destructive });
    await graph.invoke({ messages: [new HumanMessage('Delete notes/a.txt.')] }, thread('a4'));
    const final = await graph.invoke(new Command({ resume: { c2: { approved: false, reason: 'keep it' } } }), thread('a4'));
    expect(log).toEqual(['list_files notes']);
    expect(toolResults(final.messages).at(-1)).toBe(
      "[error] The call to 'delete_file' was not run: the user did not approve it (keep it).",
    );
    const saved = createSessionGuard({ snapshot: final.safety });
    expect(saved.state).toBe('READING');
    expect(saved.context.inFlight).toEqual([]);
    expect(saved.context.confirmedSinceWrite).toBe(false);
    expect(String(final.messages.at(-1)?.content)).toBe('The deletion was not approved.');
  });

  it('an answer it cannot read rejects (fails closed)', async () => {
    const log: string[] = [];
    const model = new ScriptedChatModel([...deleteScript().slice(0, 2), say('Not approved.')]);
    const graph = gatedGraph(model, fileTools(log), { tool: destructive });
    await graph.invoke({ messages: [new HumanMessage('Delete notes/a.txt.')] }, thread('a5'));
    await graph.invoke(new Command({ resume: 'yes please' }), thread('a5'));
    expect(log).toEqual(['list_files notes']);
  });
});

describe('interrupt() inside a tool: the call waits in flight', () => {
  it('is never recorded as a failed write; on resume it goes on under its admission and is recorded once', async () => {
    const sessions = createSessionStore();
    const log: string[] = [];
    const [list] = fileTools(log);
    const askingDelete = tool(
      async ({ path }) => {
        const answer = interrupt({ question: `Delete ${path}?` }) as string;
        log.push(`delete_file ${path} (${answer})`);
        return `deleted ${path}`;
      },
      { name: 'delete_file', description: 'Delete a file, after asking', schema: z.object({ path: z.string() }) },
    );
    const graph = gatedGraph(new ScriptedChatModel(deleteScript()), [list!, askingDelete], {
      tool: { getGuard: (id) => sessions.session(id) },
    });
    const paused = await graph.invoke({ messages: [new HumanMessage('Delete notes/a.txt.')] }, thread('i1'));
    expect(interruptsOf(paused)).toEqual([{ question: 'Delete notes/a.txt?' }]);
    const waiting = sessions.session('i1');
    expect(waiting.context.inFlight.map((call) => [call.key, call.kind])).toEqual([['id:c2', 'write']]);
    expect(waiting.context.lastWriteTool).toBeNull();

    const final = await graph.invoke(new Command({ resume: 'yes' }), thread('i1'));
    expect(log).toEqual(['list_files notes', 'delete_file notes/a.txt (yes)', 'list_files notes']);
    expect(sessions.session('i1').context.writeSeq).toBe(1);
    expect(sessions.session('i1').context.inFlight).toEqual([]);
    expect(String(final.messages.at(-1)?.content)).toBe('notes/a.txt is deleted.');
  });
});

describe("interruptBefore: ['tools']", () => {
  it('pauses before any call is admitted; previewCalls tells which could run; resuming runs the gate as usual', async () => {
    const log: string[] = [];
    const tools = fileTools(log);
    const model = new ScriptedChatModel([
      calls(['c1', 'list_files', { path: 'notes' }]),
      calls(['c2', 'delete_file', { path: 'notes/a.txt' }], ['c3', 'delete_file', { path: 'other/c.txt' }]),
      calls(['c4', 'list_files', { path: 'notes' }]),
      say('notes/a.txt is deleted; other/c.txt was not.'),
    ]);
    const graph = gatedGraph(model, tools, { interruptBefore: ['tools'] });
    await graph.invoke({ messages: [new HumanMessage('Delete both.')] }, thread('b1'));
    await graph.invoke(null, thread('b1')); // the listing, approved
    expect(log).toEqual(['list_files notes']);

    const { values } = await graph.getState(thread('b1'));
    const previews = await graph.toolNode.previewCalls(values, thread('b1'));
    expect(previews.map(({ id, allowed }) => [id, allowed])).toEqual([
      ['c2', true],
      ['c3', false],
    ]);
    const unchanged = createSessionGuard({ snapshot: (await graph.getState(thread('b1'))).values.safety });
    expect(unchanged.context.pendingRecoveries).toEqual({});

    await graph.invoke(null, thread('b1'));
    const final = await graph.invoke(null, thread('b1'));
    expect(log).toEqual(['list_files notes', 'delete_file notes/a.txt', 'list_files notes']);
    expect(String(final.messages.at(-1)?.content)).toBe('notes/a.txt is deleted; other/c.txt was not.');
  });

  it('with needsApproval, Command({ resume }) at the pause answers the approval at once', async () => {
    const log: string[] = [];
    const graph = gatedGraph(new ScriptedChatModel(deleteScript()), fileTools(log), { tool: destructive, interruptBefore: ['tools'] });
    await graph.invoke({ messages: [new HumanMessage('Delete notes/a.txt.')] }, thread('b2'));
    await graph.invoke(null, thread('b2')); // the listing
    await graph.invoke(new Command({ resume: { c2: true } }), thread('b2'));
    expect(log).toEqual(['list_files notes', 'delete_file notes/a.txt']);
  });
});
