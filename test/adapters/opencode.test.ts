/**
 * The opencode plugin (src/adapters/opencode.ts), its hooks called the way
 * opencode 1.18.33 calls them: `tool.execute.before(input, { args })` before
 * a tool runs (a throw refuses it), `tool.execute.after(input, result)` only
 * after a tool that returned, and `event({ event })` with the bus events
 * (`message.part.updated` carrying a tool part that ended in `error`,
 * `session.idle`, `session.deleted`). The client is a stand-in that keeps
 * the prompts the plugin sends (`session.promptAsync`); the real opencode
 * binary runs the plugin in opencode.real.test.ts.
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants"; issue 25 item 5.
 */
import { describe, expect, it } from 'vitest';
import type { Hooks, PluginInput } from '@opencode-ai/plugin';
import safetyModule, {
  createSafetyPlugin,
  createSafetyPluginModule,
  OPENCODE_PLUGIN_ID,
  opencodeRefusal,
  readPluginOptions,
  type OpencodeSafetyOptions,
} from '../../src/adapters/opencode.js';
import { createSessionGuard } from '../../src/guard/session-guard.js';

const DIR = '/home/dev/project';

interface Harness {
  hooks: Hooks;
  prompts: { id: string; text: string }[];
  /** Calls the tool as opencode does: the before hook, then (when it did not throw) the tool, then the after hook or the error event. */
  run(session: string, callID: string, tool: string, args: unknown, result?: ToolResult): Promise<{ refused: string | null }>;
  idle(session: string): Promise<void>;
}

type ToolResult = { output: string; metadata?: unknown } | { throws: string };

async function harness(options: OpencodeSafetyOptions = {}): Promise<Harness> {
  const prompts: { id: string; text: string }[] = [];
  const client = {
    session: {
      promptAsync: async (request: { path: { id: string }; body: { parts: { type: string; text: string }[] } }) => {
        prompts.push({ id: request.path.id, text: request.body.parts.map((p) => p.text).join('') });
        return { data: undefined };
      },
    },
  };
  const input = { client, directory: DIR, worktree: DIR } as unknown as PluginInput;
  const hooks = await createSafetyPlugin(options)(input);
  const before = hooks['tool.execute.before']!;
  const after = hooks['tool.execute.after']!;
  const event = hooks.event!;
  return {
    hooks,
    prompts,
    async run(session, callID, tool, args, result = { output: 'ok', metadata: {} }) {
      try {
        await before({ tool, sessionID: session, callID }, { args });
      } catch (error) {
        return { refused: (error as Error).message };
      }
      if ('throws' in result) {
        const part = {
          type: 'tool',
          tool,
          callID,
          sessionID: session,
          messageID: 'm',
          id: 'p',
          state: { status: 'error', input: args, error: result.throws, time: { start: 0, end: 1 } },
        };
        await event({ event: { type: 'message.part.updated', properties: { part } } as never });
      } else {
        await after({ tool, sessionID: session, callID, args }, { title: '', output: result.output, metadata: result.metadata ?? {} });
      }
      return { refused: null };
    },
    async idle(session) {
      await event({ event: { type: 'session.idle', properties: { sessionID: session } } });
    },
  };
}

describe('opencode plugin: the invariants through opencode hooks', () => {
  it('refuses a write before any read, with FSM_BLOCKED and what clears it', async () => {
    const h = await harness();
    const { refused } = await h.run('s1', 'c1', 'write', { filePath: `${DIR}/a.txt`, content: 'x' });
    expect(refused).toContain('FSM_BLOCKED');
    expect(refused).toContain('rule no-target');
    expect(refused).toContain('Cleared by: a resolve or read call');
  });

  it('admits the write after a read of its target, and refuses a second write until a verifying read', async () => {
    const h = await harness();
    expect((await h.run('s1', 'c1', 'read', { filePath: `${DIR}/a.txt` })).refused).toBeNull();
    expect(
      (await h.run('s1', 'c2', 'write', { filePath: `${DIR}/a.txt`, content: 'x' }, { output: 'Wrote file successfully.' })).refused,
    ).toBeNull();
    const second = await h.run('s1', 'c3', 'edit', { filePath: `${DIR}/a.txt`, oldString: 'x', newString: 'y' });
    expect(second.refused).toContain('rule unverified-write');
    expect(second.refused).toContain(`that touches "${DIR}/a.txt"`);
    expect((await h.run('s1', 'c4', 'read', { filePath: `${DIR}/a.txt` })).refused).toBeNull();
    expect((await h.run('s1', 'c5', 'edit', { filePath: `${DIR}/a.txt`, oldString: 'x', newString: 'y' })).refused).toBeNull();
  });

  it('reads relative paths against the session directory, as opencode resolves them', async () => {
    const h = await harness();
    await h.run('s1', 'c1', 'read', { filePath: 'src/app.ts' });
    expect((await h.run('s1', 'c2', 'write', { filePath: `${DIR}/src/app.ts`, content: 'x' })).refused).toBeNull();
  });

  it('a read of another file does not establish the target', async () => {
    const h = await harness();
    await h.run('s1', 'c1', 'read', { filePath: `${DIR}/b.txt` });
    const { refused } = await h.run('s1', 'c2', 'write', { filePath: `${DIR}/a.txt`, content: 'x' });
    expect(refused).toContain('rule unknown-target');
  });

  it('parses bash: a read-only command reads, rm is a destructive write', async () => {
    const h = await harness();
    expect((await h.run('s1', 'c1', 'bash', { command: 'rm -rf build', workdir: DIR })).refused).toContain('FSM_BLOCKED');
    expect(
      (await h.run('s1', 'c2', 'bash', { command: 'ls build', workdir: DIR }, { output: 'x', metadata: { exit: 0 } })).refused,
    ).toBeNull();
    expect(
      (await h.run('s1', 'c3', 'bash', { command: 'rm -rf build', workdir: DIR }, { output: '', metadata: { exit: 0 } })).refused,
    ).toBeNull();
  });

  it('sessions are apart: a read in one session does not admit a write in another', async () => {
    const h = await harness();
    await h.run('s1', 'c1', 'read', { filePath: `${DIR}/a.txt` });
    expect((await h.run('s2', 'c1', 'write', { filePath: `${DIR}/a.txt`, content: 'x' })).refused).toContain('rule no-target');
  });

  it('session.deleted drops the session: its id starts over', async () => {
    const h = await harness();
    await h.run('s1', 'c1', 'read', { filePath: `${DIR}/a.txt` });
    await h.hooks.event!({ event: { type: 'session.deleted', properties: { info: { id: 's1' } } } as never });
    expect((await h.run('s1', 'c2', 'write', { filePath: `${DIR}/a.txt`, content: 'x' })).refused).toContain('rule no-target');
  });
});

describe('opencode plugin: outcomes', () => {
  it('a tool that threw is read from its error part, so the failed write does not stay in flight', async () => {
    const h = await harness({ strictFailedWrites: false });
    await h.run('s1', 'c1', 'read', { filePath: `${DIR}/a.txt` });
    await h.run(
      's1',
      'c2',
      'edit',
      { filePath: `${DIR}/a.txt`, oldString: 'nope', newString: 'y' },
      { throws: 'Could not find oldString in the file.' },
    );
    // A failed write causes no transition (the spec): it is not in flight. An edit of the same file by the same tool
    // (its words echo, so its file is its identity) waits for a read of the file, since the failed one may have applied.
    const { refused } = await h.run('s1', 'c3', 'edit', { filePath: `${DIR}/a.txt`, oldString: 'x', newString: 'y' });
    expect(refused).toContain('rule repeated-write');
    expect(refused).not.toContain('write-in-flight');
    await h.run('s1', 'c4', 'read', { filePath: `${DIR}/a.txt` });
    expect((await h.run('s1', 'c5', 'edit', { filePath: `${DIR}/a.txt`, oldString: 'x', newString: 'y' })).refused).toBeNull();
  });

  it('without that error event the failed write would stay in flight (what the event is for)', async () => {
    const h = await harness();
    await h.run('s1', 'c1', 'read', { filePath: `${DIR}/a.txt` });
    await h.hooks['tool.execute.before']!(
      { tool: 'edit', sessionID: 's1', callID: 'c2' },
      { args: { filePath: `${DIR}/a.txt`, oldString: 'a', newString: 'b' } },
    );
    // opencode fires no tool.execute.after for a tool that threw; nothing settles c2.
    const { refused } = await h.run('s1', 'c3', 'write', { filePath: `${DIR}/a.txt`, content: 'x' });
    expect(refused).toContain('rule write-in-flight');
  });

  it('by default (strictFailedWrites) a failed write needs verification too', async () => {
    const h = await harness();
    await h.run('s1', 'c1', 'read', { filePath: `${DIR}/a.txt` });
    await h.run('s1', 'c2', 'write', { filePath: `${DIR}/a.txt`, content: 'x' }, { throws: 'EACCES' });
    // Another write of the same file by the same tool is the same write (repeated-write, issue 28); another tool's waits for verification.
    expect((await h.run('s1', 'c3', 'write', { filePath: `${DIR}/a.txt`, content: 'y' })).refused).toContain('rule repeated-write');
    expect((await h.run('s1', 'c3b', 'edit', { filePath: `${DIR}/a.txt`, oldString: 'x', newString: 'y' })).refused).toContain(
      'rule unverified-write',
    );
    expect((await h.run('s1', 'c4', 'write', { filePath: `${DIR}/a.txt`, content: 'x' })).refused).toContain('rule repeated-write');
  });

  it('a bash command that exits non-zero is a failed read: it does not verify the write', async () => {
    const h = await harness();
    await h.run('s1', 'c1', 'read', { filePath: `${DIR}/a.txt` });
    await h.run('s1', 'c2', 'write', { filePath: `${DIR}/a.txt`, content: 'x' }, { output: 'Wrote file successfully.' });
    await h.run('s1', 'c3', 'bash', { command: 'cat a.txt', workdir: DIR }, { output: 'cat: a.txt: No such file', metadata: { exit: 1 } });
    await h.idle('s1');
    expect(h.prompts).toHaveLength(1);
    await h.run('s1', 'c4', 'bash', { command: 'cat a.txt', workdir: DIR }, { output: 'x', metadata: { exit: 0 } });
    await h.idle('s1');
    expect(h.prompts).toHaveLength(1);
  });

  it('a bash command killed or timed out (exit null) is a failure too', async () => {
    const h = await harness();
    await h.run('s1', 'c1', 'read', { filePath: `${DIR}/a.txt` });
    await h.run('s1', 'c2', 'write', { filePath: `${DIR}/a.txt`, content: 'x' });
    await h.run('s1', 'c3', 'bash', { command: 'cat a.txt', workdir: DIR }, { output: '', metadata: { exit: null } });
    await h.idle('s1');
    expect(h.prompts).toHaveLength(1);
  });
});

describe('opencode plugin: the end of a turn', () => {
  it('on session.idle with an unverified write, prompts the session with the refusal and the target to read', async () => {
    const h = await harness();
    await h.run('s1', 'c1', 'read', { filePath: `${DIR}/a.txt` });
    await h.run('s1', 'c2', 'write', { filePath: `${DIR}/a.txt`, content: 'x' });
    await h.idle('s1');
    expect(h.prompts).toEqual([{ id: 's1', text: expect.stringContaining('FSM_BLOCKED') as string }]);
    expect(h.prompts[0]!.text).toContain('Your final answer was not given');
    expect(h.prompts[0]!.text).toContain(`"${DIR}/a.txt"`);
  });

  it('stays quiet once the write is verified, and for a session that never wrote', async () => {
    const h = await harness();
    await h.idle('s0');
    await h.run('s1', 'c1', 'read', { filePath: `${DIR}/a.txt` });
    await h.run('s1', 'c2', 'write', { filePath: `${DIR}/a.txt`, content: 'x' });
    await h.run('s1', 'c3', 'read', { filePath: `${DIR}/a.txt` });
    await h.idle('s1');
    expect(h.prompts).toEqual([]);
  });

  it('prompts at most followUps times in a row, then only after an allowed answer again', async () => {
    const h = await harness({ followUps: 2 });
    await h.run('s1', 'c1', 'read', { filePath: `${DIR}/a.txt` });
    await h.run('s1', 'c2', 'write', { filePath: `${DIR}/a.txt`, content: 'x' });
    for (let i = 0; i < 4; i++) await h.idle('s1');
    expect(h.prompts).toHaveLength(2);
    await h.run('s1', 'c3', 'read', { filePath: `${DIR}/a.txt` });
    await h.idle('s1');
    await h.run('s1', 'c4', 'write', { filePath: `${DIR}/a.txt`, content: 'y' });
    await h.idle('s1');
    expect(h.prompts).toHaveLength(3);
  });

  it('followUps: 0 never prompts', async () => {
    const h = await harness({ followUps: 0 });
    await h.run('s1', 'c1', 'read', { filePath: `${DIR}/a.txt` });
    await h.run('s1', 'c2', 'write', { filePath: `${DIR}/a.txt`, content: 'x' });
    await h.idle('s1');
    expect(h.prompts).toEqual([]);
  });
});

describe('opencode plugin: options and module shape', () => {
  it('takes another catalog, and kinds over it', async () => {
    const h = await harness({ catalog: { name: 't', tools: { probe: 'read', poke: 'write' } }, kinds: { look: 'read' } });
    expect((await h.run('s1', 'c1', 'poke', {})).refused).toContain('FSM_BLOCKED');
    await h.run('s1', 'c2', 'look', {});
    expect((await h.run('s1', 'c3', 'poke', {})).refused).toBeNull();
  });

  it('an unknown tool (an MCP tool) is a write on a place nobody named: no read admits it', async () => {
    const h = await harness();
    await h.run('s1', 'c1', 'read', { filePath: `${DIR}/a.txt` });
    await h.run('s1', 'c2', 'write', { filePath: `${DIR}/a.txt`, content: 'x' });
    await h.run('s1', 'c3', 'read', { filePath: `${DIR}/a.txt` });
    expect((await h.run('s1', 'c4', 'github_create_issue', { title: 'x' })).refused).toContain('rule unknown-target');
    await h.idle('s1');
    expect(h.prompts).toHaveLength(0);
  });

  it('the default export is a plugin module opencode loads: { id, server }', () => {
    expect(safetyModule.id).toBe(OPENCODE_PLUGIN_ID);
    expect(typeof safetyModule.server).toBe('function');
    expect(createSafetyPluginModule({}, 'mine').id).toBe('mine');
  });

  it("reads the config's plugin options, refusing unknown or mistyped ones", () => {
    expect(readPluginOptions({ confirmDestructive: true, followUps: 1, catalog: 'opencode' })).toMatchObject({
      confirmDestructive: true,
      followUps: 1,
    });
    expect(readPluginOptions(undefined)).toEqual({});
    expect(() => readPluginOptions({ strictFailedWrite: true })).toThrow(/unknown option 'strictFailedWrite'/);
    expect(() => readPluginOptions({ confirmDestructive: 'yes' })).toThrow(TypeError);
    expect(() => readPluginOptions({ catalog: 'nope' })).toThrow(/shipped catalog/);
  });

  it('refuses a bad followUps or maxSessions at once', () => {
    expect(() => createSafetyPlugin({ followUps: -1 })).toThrow(TypeError);
    expect(() => createSafetyPlugin({ maxSessions: 0 })).toThrow(TypeError);
  });

  it('maxSessions drops the session used least recently', async () => {
    const h = await harness({ maxSessions: 1 });
    await h.run('s1', 'c1', 'read', { filePath: `${DIR}/a.txt` });
    await h.run('s2', 'c1', 'read', { filePath: `${DIR}/a.txt` });
    expect((await h.run('s1', 'c2', 'write', { filePath: `${DIR}/a.txt`, content: 'x' })).refused).toContain('rule no-target');
  });

  it('opencodeRefusal names the unknown place and that only the user clears it', () => {
    const guard = createSessionGuard({ now: () => 0 });
    guard.record({ name: 'read', kind: 'read', targets: ['/x'] }, 'success');
    const decision = guard.check({ id: 'w', name: 'bash', kind: 'write', targets: ['?/$DIR'] });
    expect(decision.allowed).toBe(false);
    if (!decision.allowed) expect(opencodeRefusal(decision.error)).toContain("Cleared by: the user's confirmation");
  });
});
