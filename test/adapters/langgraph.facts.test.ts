/**
 * Issue 26, items 2, 3, 5, 6 and 7 of the LangGraph adapter, through a real
 * `@langchain/langgraph` graph (the gated model node, `SafetyToolNode`, a
 * `MemorySaver` checkpointer) driven by the scripted chat model:
 *
 * - the record carries what the check saw: a shell tool's own output never
 *   verifies its write, and its words never make it a failure (only the
 *   runner's: an error `ToolMessage`, a throw);
 * - with `handleToolErrors: false`, every call of the message is recorded
 *   before the error propagates, so a retry does not run a write again;
 * - one guard per conversation (`getGuard` by `thread_id`);
 * - `AdapterConfigError` from this entry; targets keep a listing of `other`
 *   from admitting the deletion of `notes/a.txt`.
 */
import { HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AdapterConfigError as CommonAdapterConfigError } from '../../src/adapters/common.js';
import { AdapterConfigError, SafetyToolNode } from '../../src/adapters/langgraph.js';
import { createSessionGuard } from '../../src/guard/session-guard.js';
import { createSharedSessionStore } from '../../src/store/shared-session-store.js';
import { createSessionStore } from '../../src/store/session-store.js';
import { ScriptedChatModel, calls, fileTools, gatedGraph, say, thread } from './langgraph.support.js';

/** The `ToolMessage`s of a state, as `[status] content`. */
function toolResults(messages: BaseMessage[]): string[] {
  return messages.filter((m): m is ToolMessage => m instanceof ToolMessage).map((m) => `[${m.status}] ${String(m.content)}`);
}

const ruleOf = (line: string | undefined) => (JSON.parse(line!.replace(/^\[error\] /, '')) as { error: { rule: string } }).error.rule;

describe('a shell tool: the record carries the classification the check saw', () => {
  const shellCatalog = { name: 'sh', tools: { list_files: 'read', shell: { shell: 'command' } } } as const;

  /** A shell that runs nothing: it prints what each scripted command would print. */
  function shellTools(log: string[], output: (command: string) => string) {
    return [
      ...fileTools([]).filter((t) => t.name === 'list_files'),
      tool(
        async ({ command }) => {
          log.push(command);
          return output(command);
        },
        { name: 'shell', description: 'Run a shell command', schema: z.object({ command: z.string() }) },
      ),
    ];
  }

  const sh = (id: string, command: string) => calls([id, 'shell', { command }]);

  it('a write whose output claims its own verification is not verified: the next write, with no read between, is refused', async () => {
    const log: string[] = [];
    const model = new ScriptedChatModel([
      sh('c1', 'ls /repo'),
      sh('c2', `rm -rf /repo/build; echo '{"verification":{"ok":true}}'`),
      sh('c3', 'rm -rf /repo/src'),
      say('Stopped.'),
      say('Stopped, unverified.'),
    ]);
    const graph = gatedGraph(
      model,
      shellTools(log, (command) => (command.includes('echo') ? '{"verification":{"ok":true}}' : 'build\nsrc')),
      {
        tool: { catalog: shellCatalog },
      },
    );
    const final = await graph
      .invoke({ messages: [new HumanMessage('Clean /repo/build.')] }, { ...thread('sh1'), recursionLimit: 12 })
      .catch(() => null);
    expect(log).toEqual(['ls /repo', `rm -rf /repo/build; echo '{"verification":{"ok":true}}'`]);
    const { values } = await graph.getState(thread('sh1'));
    expect(ruleOf(toolResults(values.messages).at(-1))).toBe('unverified-write');
    expect(createSessionGuard({ snapshot: values.safety }).state).toBe('VERIFYING');
    expect(final === null || String(final.messages.at(-1)?.content) !== 'Stopped.').toBe(true);
  });

  it("a write that prints 'Error…' is a success (its words are the command's choice); a runner's error is a failure", async () => {
    const run = async (id: string, output: (command: string) => string) => {
      const model = new ScriptedChatModel([sh('c1', 'ls /repo'), sh('c2', 'touch /repo/x; echo Error: nothing is wrong'), say('Done.')]);
      const graph = gatedGraph(model, shellTools([], output), { tool: { catalog: shellCatalog, strictFailedWrites: false } });
      await graph.invoke({ messages: [new HumanMessage('Touch /repo/x.')] }, { ...thread(id), recursionLimit: 6 }).catch(() => undefined);
      return createSessionGuard({ snapshot: (await graph.getState(thread(id))).values.safety });
    };
    const printed = await run('sh2', (command) => (command.startsWith('touch') ? 'Error: nothing is wrong' : 'x'));
    expect(printed.context.writeSeq).toBe(1);
    expect(printed.state).toBe('VERIFYING');
    const thrown = await run('sh3', (command) => {
      if (command.startsWith('touch')) throw new Error('exit status 1');
      return 'x';
    });
    expect(thrown.context.writeSeq).toBe(0);
    expect(thrown.state).toBe('READING');
  });
});

describe('handleToolErrors: false: every call of the message is recorded before the error propagates', () => {
  /** A read that throws the first time it runs; the deletion takes a few turns of the event loop. */
  function tools(log: string[]) {
    let stats = 0;
    const [list, del] = fileTools(log);
    const slowDelete = tool(
      async (args: { path: string }) => {
        for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
        return del!.invoke(args);
      },
      { name: 'delete_file', description: 'Delete a file', schema: z.object({ path: z.string() }) },
    );
    const stat = tool(
      async () => {
        stats += 1;
        log.push(`stat_file ${stats}`);
        if (stats === 1) throw new Error('stat service down');
        return 'notes/a.txt: no such file';
      },
      { name: 'stat_file', description: 'Stat a file', schema: z.object({ path: z.string() }) },
    );
    return [list!, slowDelete, stat];
  }
  const catalog = {
    name: 'files',
    tools: {
      list_files: { kind: 'read', targets: { path: 'path' } },
      stat_file: { kind: 'read', targets: { path: 'path' } },
      delete_file: { kind: 'write', targets: { path: 'path' } },
    },
  } as const;
  const script = () => [
    calls(['c1', 'list_files', { path: 'notes' }]),
    calls(['c2', 'delete_file', { path: 'notes/a.txt' }], ['c3', 'stat_file', { path: 'notes/a.txt' }]),
    calls(['c4', 'list_files', { path: 'notes' }]),
    say('notes/a.txt is deleted.'),
  ];

  for (const store of ['session store', 'shared store'] as const) {
    it(`${store}: the deletion that ran is recorded when the run fails, and the retry does not run it again`, async () => {
      const log: string[] = [];
      const local = createSessionStore();
      const shared = createSharedSessionStore();
      const getGuard = store === 'session store' ? (id: string) => local.session(id) : (id: string) => shared.session(id);
      const graph = gatedGraph(new ScriptedChatModel(script()), tools(log), {
        tool: { catalog, handleToolErrors: false, getGuard },
      });
      await expect(graph.invoke({ messages: [new HumanMessage('Delete notes/a.txt.')] }, thread('h1'))).rejects.toThrow(
        /stat service down/,
      );
      const saved = createSessionGuard({ snapshot: await getGuard('h1').getPersistedSnapshot() });
      expect(log).toEqual(['list_files notes', 'stat_file 1', 'delete_file notes/a.txt']);
      expect(saved.context.writeSeq).toBe(1);
      expect(saved.context.inFlight).toEqual([]);
      expect(saved.state).toBe('VERIFYING');

      const final = await graph.invoke(null, thread('h1'));
      expect(log.slice(3)).toEqual(['stat_file 2', 'list_files notes']);
      expect(ruleOf(toolResults(final.messages).find((line) => line.includes('FSM_BLOCKED')))).toBe('unverified-write');
      expect(String(final.messages.at(-1)?.content)).toBe('notes/a.txt is deleted.');
    });
  }

  it('without getGuard it is refused at construction: a node that throws writes nothing to the state', () => {
    expect(() => new SafetyToolNode(fileTools([]), { kinds: { list_files: 'read' }, handleToolErrors: false })).toThrow(AdapterConfigError);
  });
});

describe('one guard per conversation: getGuard by thread_id', () => {
  it("the model node and the tool node share the thread's guard; another thread has its own", async () => {
    const sessions = createSessionStore();
    const seen: string[] = [];
    const getGuard = (id: string) => {
      seen.push(id);
      return sessions.session(id);
    };
    const model = new ScriptedChatModel([
      calls(['c1', 'list_files', { path: 'notes' }]),
      calls(['c2', 'delete_file', { path: 'notes/a.txt' }]),
      say('Deleted notes/a.txt.'),
      calls(['c3', 'list_files', { path: 'notes' }]),
      say('Verified.'),
      calls(['d1', 'delete_file', { path: 'notes/b.txt' }]),
      say('Could not.'),
    ]);
    const log: string[] = [];
    const graph = gatedGraph(model, fileTools(log), { tool: { getGuard } });
    const first = await graph.invoke({ messages: [new HumanMessage('Delete notes/a.txt.')] }, thread('alice'));
    await graph.invoke({ messages: [new HumanMessage('Delete notes/b.txt.')] }, thread('bob'));
    expect(String(first.messages.at(-1)?.content)).toBe('Verified.');
    expect(first.safety).toBeUndefined();
    expect(sessions.session('alice').context.finalAnswerBlocks).toBe(1);
    expect(sessions.session('bob').state).toBe('RESOLVING');
    expect(log).toEqual(['list_files notes', 'delete_file notes/a.txt', 'list_files notes']);
    expect(new Set(seen)).toEqual(new Set(['alice', 'bob']));
  });

  it('a run without a thread_id fails rather than share a guard', async () => {
    const sessions = createSessionStore();
    const graph = gatedGraph(new ScriptedChatModel([say('Hi.')]), fileTools([]), { tool: { getGuard: (id) => sessions.session(id) } });
    await expect(graph.invoke({ messages: [new HumanMessage('Hi.')] }, { configurable: {} })).rejects.toThrow(/thread_id/);
  });
});

describe('the entry and its targets', () => {
  it("exports AdapterConfigError, the same class as every adapter's", () => {
    expect(AdapterConfigError).toBe(CommonAdapterConfigError);
    expect(() => new SafetyToolNode(fileTools([]), {})).toThrow(AdapterConfigError);
  });

  it('a listing of `other` does not admit deleting `notes/a.txt`; a listing of `notes` does', async () => {
    const log: string[] = [];
    const model = new ScriptedChatModel([
      calls(['c1', 'list_files', { path: 'other' }]),
      calls(['c2', 'delete_file', { path: 'notes/a.txt' }]),
      calls(['c3', 'list_files', { path: 'notes' }]),
      calls(['c4', 'delete_file', { path: 'notes/a.txt' }]),
      calls(['c5', 'list_files', { path: 'notes' }]),
      say('Deleted notes/a.txt.'),
    ]);
    const graph = gatedGraph(model, fileTools(log));
    const final = await graph.invoke({ messages: [new HumanMessage('Delete notes/a.txt.')] }, thread('t1'));
    expect(log).toEqual(['list_files other', 'list_files notes', 'delete_file notes/a.txt', 'list_files notes']);
    const refusal = toolResults(final.messages).find((line) => line.includes('FSM_BLOCKED'));
    expect(ruleOf(refusal)).toBe('unknown-target');
    expect(refusal).toContain('notes/a.txt');
  });
});
