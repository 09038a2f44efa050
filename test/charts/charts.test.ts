/**
 * Charts drawn from the machine (src/charts/): the chart model, Graphviz
 * DOT, Mermaid, SVG rendered offline, the `export` command, and the copies in
 * docs/charts.md and the charts/ folder, which must not drift from the machine.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { afterEach, describe, expect, it } from 'vitest';
import { createActor, createMachine, setup, type AnyStateMachine } from 'xstate';
import { initialSafetyContext, safetyMachine } from '../../machines/safety.machine.js';
import type { SafetyEvent } from '../../machines/safety.types.js';
import {
  CHART_EXTENSIONS,
  chartOf,
  chartsOf,
  exportCharts,
  loadConfiguredMachine,
  machineModuleFile,
  readStatelyConfig,
  REFUSAL_MARK,
  REFUSING_ACTIONS,
  renderSvg,
  stateElementId,
  toDot,
  toMachineConfig,
  toMermaid,
  transitionIds,
  type MachineConfigJson,
} from '../../src/charts/index.js';
import { registerExportCommand } from '../../src/cli/commands/export.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CONFIG = join(ROOT, 'stately.config.json');

/** Every transition of the machine's JSON definition, as [source, event, definition]. */
type JsonTransition = { guard?: string; description?: string; target?: (string | { id: string })[] };
function jsonTransitions(): {
  source: string;
  event: string;
  guard?: string;
  description?: string;
  target?: (string | { id: string })[];
}[] {
  const definition = safetyMachine.toJSON() as unknown as {
    on: Record<string, JsonTransition[]>;
    states: Record<string, { on: Record<string, JsonTransition[]> }>;
  };
  const pick = (source: string, event: string, t: JsonTransition) => ({
    source,
    event,
    guard: t.guard,
    description: t.description,
    target: t.target,
  });
  const all = Object.entries(definition.on).flatMap(([event, list]) => list.map((t) => pick('safety', event, t)));
  for (const [key, state] of Object.entries(definition.states)) {
    for (const [event, list] of Object.entries(state.on)) all.push(...list.map((t) => pick(`safety.${key}`, event, t)));
    // Eventless transitions are not in toJSON(): read them off the state node, as XState keeps them.
    const always = (safetyMachine.root.states[key]?.always ?? []) as unknown as {
      guard?: string | { type: string };
      description?: string;
      target?: { id: string }[];
    }[];
    for (const t of always) {
      all.push({
        source: `safety.${key}`,
        event: 'always',
        guard: typeof t.guard === 'string' ? t.guard : t.guard?.type,
        description: t.description,
        target: t.target,
      });
    }
  }
  return all;
}

const temporary: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pulse-safety-export-'));
  temporary.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of temporary.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('chartOf', () => {
  it('lists every state with its description', () => {
    const chart = chartOf(safetyMachine);
    expect(chart.states.map((s) => s.key)).toEqual(['safety', 'RESOLVING', 'READING', 'WRITING', 'VERIFYING']);
    for (const state of chart.states) expect(state.description).toBe(safetyMachine.getStateNodeById(state.id).description);
  });

  it('lists every transition of the machine definition with its event, guard and description', () => {
    const chart = chartOf(safetyMachine);
    const expected = jsonTransitions();
    expect(chart.transitions).toHaveLength(expected.length);
    for (const t of expected) {
      expect(chart.transitions).toContainEqual(
        expect.objectContaining({
          source: t.source,
          event: t.event,
          guard: t.guard ?? null,
          description: t.description ?? null,
          targets: (t.target ?? []).map((target) => (typeof target === 'string' ? target.replace(/^#/, '') : target.id)),
        }),
      );
    }
  });

  it('gives every transition a distinct id that transitionIds maps its definition to', () => {
    const chart = chartOf(safetyMachine);
    const ids = [...transitionIds(safetyMachine).values()];
    expect(new Set(chart.transitions.map((t) => t.id)).size).toBe(chart.transitions.length);
    expect(ids.sort()).toEqual(chart.transitions.map((t) => t.id).sort());
  });

  it('names refusing actions the machine implements', () => {
    const implemented = Object.keys(safetyMachine.implementations.actions);
    for (const action of REFUSING_ACTIONS) expect(implemented).toContain(action);
  });

  it('flags a transition as refusing exactly when one of its actions is a refusing action', () => {
    const chart = chartOf(safetyMachine);
    for (const t of chart.transitions) {
      expect(t.refuses, t.id).toBe(t.actions.some((action) => REFUSING_ACTIONS.includes(action)));
    }
    expect(chart.transitions.filter((t) => t.refuses).length).toBeGreaterThan(0);
  });

  it('flags the transition XState takes for a refused decision as refusing, and for an allowed one as not', () => {
    const ids = transitionIds(safetyMachine);
    const byId = new Map(chartOf(safetyMachine).transitions.map((t) => [t.id, t]));
    const events: SafetyEvent[] = [
      { type: 'tool.requested', callId: 'w', tool: 'deploy', kind: 'write', at: 1 },
      { type: 'tool.requested', callId: 'r', tool: 'list', kind: 'read', at: 2 },
      { type: 'answer.requested', at: 3 },
    ];
    for (const event of events) {
      const actor = createActor(safetyMachine, { input: {} }).start();
      const decisions: boolean[] = [];
      actor.on('gate.decided', (decision) => decisions.push(decision.allowed));
      const [taken] = safetyMachine.getTransitionData(actor.getSnapshot(), event);
      actor.send(event);
      expect(decisions, event.type).toHaveLength(1);
      expect(byId.get(ids.get(taken!)!)!.refuses, `${event.type} ${JSON.stringify(event)}`).toBe(!decisions[0]);
    }
  });
});

/** Names of every guard and action a machine config refers to (`{ type }` or a string). */
function referencedNames(config: unknown, key: string | null = null, out = new Set<string>()): Set<string> {
  if (Array.isArray(config)) {
    for (const item of config) referencedNames(item, key, out);
  } else if (typeof config === 'string') {
    if (key === 'guard' || key === 'actions' || key === 'entry' || key === 'exit') out.add(config);
  } else if (typeof config === 'object' && config !== null) {
    const record = config as Record<string, unknown>;
    if ((key === 'guard' || key === 'actions') && typeof record['type'] === 'string') out.add(record['type']);
    else for (const [name, value] of Object.entries(record)) referencedNames(value, name, out);
  }
  return out;
}

/** `setup` with every named guard (always true) and action (doing nothing) stubbed. */
function withStubs(config: MachineConfigJson): AnyStateMachine {
  const names = [...referencedNames(config)];
  const stub = Object.fromEntries(names.map((name) => [name, () => true]));
  return setup({ guards: stub, actions: stub } as never).createMachine(config as never) as unknown as AnyStateMachine;
}

describe('toMachineConfig', () => {
  it("builds, with XState's createMachine, a machine with the same chart: states, events, targets, guards and actions", () => {
    const rebuilt = createMachine(toMachineConfig(safetyMachine) as never) as unknown as AnyStateMachine;
    expect(chartOf(rebuilt)).toEqual(chartOf(safetyMachine));
  });

  it('builds the same chart through setup() with its guards and actions stubbed by name', () => {
    expect(chartOf(withStubs(toMachineConfig(safetyMachine)))).toEqual(chartOf(safetyMachine));
  });

  it('names only guards and actions the machine implements', () => {
    const implemented = [...Object.keys(safetyMachine.implementations.guards), ...Object.keys(safetyMachine.implementations.actions)];
    const names = [...referencedNames(toMachineConfig(safetyMachine))];
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) expect(implemented).toContain(name);
  });

  it("decides like the machine once given the machine's implementations", () => {
    const rebuilt = createMachine(toMachineConfig(safetyMachine) as never).provide(safetyMachine.implementations as never);
    const events: SafetyEvent[] = [
      { type: 'tool.requested', callId: 'w0', tool: 'deploy', kind: 'write', at: 1 },
      { type: 'tool.requested', callId: 'r1', tool: 'list', kind: 'read', at: 2 },
      { type: 'tool.succeeded', callId: 'r1', tool: 'list', kind: 'read', at: 3 },
      { type: 'tool.requested', callId: 'w1', tool: 'deploy', kind: 'write', at: 4 },
      { type: 'tool.succeeded', callId: 'w1', tool: 'deploy', kind: 'write', at: 5 },
      { type: 'answer.requested', at: 6 },
      { type: 'tool.requested', callId: 'w2', tool: 'deploy', kind: 'write', at: 7 },
    ];
    const run = (machine: AnyStateMachine) => {
      const actor = createActor(machine).start();
      const seen: unknown[] = [];
      actor.on('*', (emitted) => seen.push(emitted));
      for (const event of events) {
        actor.send(event);
        seen.push(actor.getSnapshot().value);
      }
      return seen;
    };
    const expected = run(safetyMachine);
    expect(expected).toContain('VERIFYING');
    expect(run(rebuilt as unknown as AnyStateMachine)).toEqual(expected);
  });

  it('carries the context the machine starts with when given no input', () => {
    expect(toMachineConfig(safetyMachine)['context']).toEqual(initialSafetyContext());
  });

  it('is plain JSON: it survives a JSON round trip unchanged', () => {
    const config = toMachineConfig(safetyMachine);
    expect(JSON.parse(JSON.stringify(config))).toEqual(config);
  });

  it('refers to inline guards and actions by their function names, and leaves out what is not JSON', () => {
    const machine = setup({ types: { context: {} as { n: number } } }).createMachine({
      id: 'm',
      context: { n: 1 },
      initial: 'a',
      states: {
        a: {
          entry: function greet() {},
          on: {
            go: {
              target: 'b',
              guard: function isReady() {
                return true;
              },
              actions: [{ type: 'log', params: ({ context }: { context: { n: number } }) => ({ n: context.n }) }],
            },
          },
        },
        b: { invoke: { src: 'worker', input: ({ context }: { context: { n: number } }) => context.n } },
      },
    } as never);
    const config = toMachineConfig(machine as unknown as AnyStateMachine) as Record<string, any>;
    expect(config['context']).toEqual({ n: 1 });
    expect(config['states'].a.entry).toEqual({ type: 'greet' });
    expect(config['states'].a.on.go).toEqual({ target: 'b', guard: { type: 'isReady' }, actions: [{ type: 'log' }] });
    expect(config['states'].b.invoke).toEqual({ src: 'worker' });
    expect(config).not.toHaveProperty('types');
  });

  it('leaves the context out when the machine cannot start without input', () => {
    const machine = createMachine({
      id: 'm',
      context: ({ input }: { input: { n: number } }) => ({ n: input.n }),
      initial: 'a',
      states: { a: {} },
    } as never) as unknown as AnyStateMachine;
    expect(toMachineConfig(machine)).toEqual({ id: 'm', initial: 'a', states: { a: {} } });
  });
});

describe('toDot', () => {
  it('draws each state with its id and description', () => {
    const dot = toDot(safetyMachine);
    for (const state of chartOf(safetyMachine).states.filter((s) => s.parent !== null)) {
      expect(dot).toContain(`id="${stateElementId(state.id)}"`);
      expect(dot).toContain(state.description!.split(' ').slice(0, 3).join(' '));
    }
  });

  it('labels every transition with its event and guard name', () => {
    const dot = toDot(safetyMachine);
    for (const t of chartOf(safetyMachine).transitions) {
      const line = dot.split('\n').find((l) => l.includes(`id="${t.id}"`));
      expect(line, t.id).toBeDefined();
      expect(line).toContain(t.event);
      if (t.guard) expect(line).toContain(`[${t.guard}]`);
    }
  });

  it('carries every transition description, word for word', () => {
    const dot = toDot(safetyMachine).replace(/<br align="left"\/>/g, ' ');
    const words = (text: string) => text.replace(/\s+/g, ' ').trim();
    for (const t of chartOf(safetyMachine).transitions) {
      const line = dot.split('\n').find((l) => l.includes(`id="${t.id}"`))!;
      const text = words(line.replace(/<[^>]+>/g, ' ').replace(/&amp;/g, '&'));
      expect(text).toContain(words(t.description!));
    }
  });

  it('draws targeted transitions as edges and targetless ones as rows of their state', () => {
    const dot = toDot(safetyMachine);
    const chart = chartOf(safetyMachine);
    const toWriting = chart.transitions.find((t) => t.source === 'safety.READING' && t.targets.includes('safety.WRITING'))!;
    const stays = chart.transitions.find((t) => t.source === 'safety.RESOLVING' && t.targets.length === 0)!;
    expect(dot).toContain(`"safety.READING" -> "safety.WRITING" [id="${toWriting.id}"`);
    expect(dot).toMatch(new RegExp(`<td [^>]*id="${stays.id.replace(/\./g, '\\.')}"`));
  });

  it('leaves transition descriptions out of the compact chart, keeping them as tooltips', () => {
    const compact = toDot(safetyMachine, { descriptions: false });
    const description = 'A failed call causes no transition.';
    expect(compact).not.toContain(`>${description}<`);
    expect(compact).toContain(`tooltip="${description}"`);
    expect(compact).toContain('id="t:safety.RESOLVING:tool.failed:1"');
  });

  it('draws each refusing targetless transition as a marked red row', () => {
    const dot = toDot(safetyMachine);
    const refusing = chartOf(safetyMachine).transitions.filter((t) => t.refuses && t.targets.length === 0);
    expect(refusing.length).toBeGreaterThan(0);
    for (const t of refusing) {
      const cell = new RegExp(
        `<td [^>]*bgcolor="#ffebe9"[^>]*id="${t.id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"[^>]*><font [^>]*color="#cf222e">${REFUSAL_MARK} ${t.event}`,
      );
      expect(dot, t.id).toMatch(cell);
    }
  });

  it('draws an allowing targetless transition unmarked', () => {
    const dot = toDot(safetyMachine);
    const allowing = chartOf(safetyMachine).transitions.filter((t) => !t.refuses && t.targets.length === 0);
    for (const t of allowing) {
      const row = dot.split('<tr>').find((r) => r.includes(`id="${t.id}"`))!;
      expect(row, t.id).not.toContain(REFUSAL_MARK);
      expect(row, t.id).not.toContain('#ffebe9');
    }
  });

  it('draws a refusing transition to another state as a red dashed edge marked ✗', () => {
    const machine = setup({ actions: { refuseAnswer: () => {} } }).createMachine({
      id: 'm',
      initial: 'a',
      states: { a: { on: { stop: { target: 'b', actions: 'refuseAnswer' }, go: 'b' } }, b: {} },
    });
    const lines = toDot(machine).split('\n');
    const refusing = lines.find((l) => l.includes('id="t:m.a:stop:0"'))!;
    const allowing = lines.find((l) => l.includes('id="t:m.a:go:0"'))!;
    expect(refusing).toContain('color="#cf222e"');
    expect(refusing).toContain('style=dashed');
    expect(refusing).toContain(`label=<${REFUSAL_MARK} <b>stop</b>`);
    expect(allowing).not.toContain('style=dashed');
    expect(allowing).not.toContain(REFUSAL_MARK);
  });

  it('has a legend naming the refusing actions, unless left out', () => {
    const legend = toDot(safetyMachine)
      .split('\n')
      .find((l) => l.includes('id="legend"'));
    expect(legend).toBeDefined();
    for (const action of REFUSING_ACTIONS) expect(legend).toContain(action);
    expect(legend).toContain(`${REFUSAL_MARK} event [guard]`);
    expect(toDot(safetyMachine, { legend: false })).not.toContain('id="legend"');
  });

  it('escapes text that would break an HTML-like label', () => {
    const machine = createMachine({
      id: 'm',
      initial: 'a',
      states: { a: { description: 'x < y & "z"', on: { go: { target: 'b', description: '<b>not bold</b>' } } }, b: {} },
    });
    const dot = toDot(machine);
    expect(dot).toContain('x &lt; y &amp; &quot;z&quot;');
    expect(dot).toContain('&lt;b&gt;not bold&lt;/b&gt;');
  });

  it('draws a compound state as a cluster entered at its initial state', () => {
    const machine = createMachine({
      id: 'm',
      initial: 'outer',
      states: { outer: { initial: 'inner', on: { leave: 'done' }, states: { inner: {} } }, done: { type: 'final' } },
    });
    const dot = toDot(machine);
    expect(dot).toContain('subgraph "cluster_m.outer"');
    expect(dot).toContain('"m.outer.[*]" -> "m.outer.inner"');
    expect(dot).toContain('"m.outer.*" -> "m.done"');
  });
});

describe('toMermaid', () => {
  it('starts in the initial state', () => {
    expect(toMermaid(safetyMachine)).toMatch(/^stateDiagram-v2\n(?:.*\n)* {2}\[\*\] --> RESOLVING\n/);
  });

  it('draws every targeted transition as an arrow labelled with event, guard and description', () => {
    const mermaid = toMermaid(safetyMachine);
    const entity = (text: string) => text.replace(/[#:;<>]/g, (c) => `#${c.charCodeAt(0)};`);
    for (const t of chartOf(safetyMachine).transitions.filter((t) => t.targets.length > 0)) {
      const from = t.source === 'safety' ? 'any_state' : t.source.slice('safety.'.length);
      const to = t.targets[0]!.slice('safety.'.length);
      const head = entity(`${t.refuses ? `${REFUSAL_MARK} ` : ''}${t.event}${t.guard ? ` [${t.guard}]` : ''}`);
      expect(mermaid).toContain(`  ${from} --> ${to} : ${head}<br>${entity(t.description!)}\n`);
    }
  });

  it('lists every targetless transition inside its state', () => {
    const mermaid = toMermaid(safetyMachine);
    for (const t of chartOf(safetyMachine).transitions.filter((t) => t.targets.length === 0)) {
      const state = t.source === 'safety' ? 'any_state' : t.source.slice('safety.'.length);
      expect(mermaid).toContain(`  ${state} : ${t.refuses ? `${REFUSAL_MARK} ` : ''}${t.event}${t.guard ? ` [${t.guard}]` : ''} — `);
    }
  });

  it('declares each state by its name before its first description', () => {
    const lines = toMermaid(safetyMachine).split('\n');
    for (const state of ['RESOLVING', 'READING', 'WRITING', 'VERIFYING']) {
      const declared = lines.indexOf(`  state "${state}" as ${state}`);
      expect(declared, state).toBeGreaterThan(-1);
      expect(
        lines.findIndex((l) => l.startsWith(`  ${state} : `)),
        state,
      ).toBeGreaterThan(declared);
    }
  });

  it('marks refusing transitions, and only those, with ✗', () => {
    const lines = toMermaid(safetyMachine).split('\n');
    const marked = lines.filter((l) => / : ✗ /.test(l)).length;
    expect(marked).toBe(chartOf(safetyMachine).transitions.filter((t) => t.refuses).length);
    expect(marked).toBeGreaterThan(0);
  });

  it('says in a comment what ✗ marks, naming the refusing actions', () => {
    const legend = toMermaid(safetyMachine)
      .split('\n')
      .find((l) => l.startsWith(`  %% ${REFUSAL_MARK} `));
    expect(legend).toBeDefined();
    for (const action of REFUSING_ACTIONS) expect(legend).toContain(action);
  });

  it("writes Mermaid's syntax characters in descriptions as entity codes", () => {
    const machine = createMachine({ id: 'm', initial: 'a', states: { a: { description: 'one: two; #three <four>' } } });
    expect(toMermaid(machine)).toContain('a : one#58; two#59; #35;three #60;four#62;');
    expect(toMermaid(machine)).not.toContain('%% ✗');
  });

  it('nests a compound state and its initial state', () => {
    const machine = createMachine({
      id: 'm',
      initial: 'outer',
      states: { outer: { initial: 'inner', states: { inner: { on: { go: 'other' } }, other: {} } } },
    });
    expect(toMermaid(machine)).toContain('  state outer {\n    [*] --> inner\n');
  });
});

describe('renderSvg', () => {
  it('renders the chart offline with an element per state and per transition', async () => {
    const svg = await renderSvg(toDot(safetyMachine));
    expect(svg).toMatch(/^<\?xml[\s\S]*<svg /);
    for (const state of ['RESOLVING', 'READING', 'WRITING', 'VERIFYING']) expect(svg).toContain(`id="state:safety.${state}"`);
    for (const t of chartOf(safetyMachine).transitions) {
      expect(svg).toContain(t.targets.length ? `id="${t.id}"` : `id="a_${t.id}"`);
    }
  });

  it('rejects DOT that Graphviz cannot read, with its message', async () => {
    await expect(renderSvg('digraph { a -> }')).rejects.toThrow(/Graphviz could not render the chart: .*syntax error/);
  });
});

describe('stately.config.json and the export command', () => {
  it('maps a machine module to its compiled file under dist/ when compiled', () => {
    expect(machineModuleFile('/pkg', 'machines/x.ts', { compiled: true })).toBe(join('/pkg', 'dist', 'machines', 'x.js'));
    expect(machineModuleFile('/pkg', 'machines/x.ts', { compiled: false })).toBe(join('/pkg', 'machines', 'x.ts'));
  });

  it('loads every machine the config lists', async () => {
    const config = await readStatelyConfig(CONFIG);
    for (const entry of config.machines) {
      const machine = await loadConfiguredMachine(ROOT, entry);
      expect(machine.id).toBe(entry.id);
    }
  });

  it('names the entry when the config is malformed', async () => {
    const dir = tempDir();
    const file = join(dir, 'stately.config.json');
    writeFileSync(file, JSON.stringify({ outDir: 'charts', machines: [{ id: 'x', module: 'm.ts' }] }));
    await expect(readStatelyConfig(file)).rejects.toThrow(`${file}: machines.0.export:`);
  });

  it('names the file when the config is not JSON', async () => {
    const dir = tempDir();
    const file = join(dir, 'stately.config.json');
    writeFileSync(file, '{ nope');
    await expect(readStatelyConfig(file)).rejects.toThrow(`${file} is not JSON`);
  });

  it('names the module and export when the export is not a machine', async () => {
    await expect(
      loadConfiguredMachine(ROOT, { id: 'safety', module: 'machines/safety.machine.ts', export: 'nothingHere' }, { compiled: false }),
    ).rejects.toThrow("machine 'safety': machines/safety.machine.ts exports no XState machine named 'nothingHere'");
  });

  it('writes the config JSON, DOT, SVG and Mermaid of each machine', async () => {
    const out = tempDir();
    const written = await exportCharts(CONFIG, { outDir: out, compiled: false });
    expect(written.map((file) => file.slice(out.length + 1)).sort()).toEqual(['safety.dot', 'safety.json', 'safety.mmd', 'safety.svg']);
    expect(JSON.parse(readFileSync(join(out, 'safety.json'), 'utf8'))).toEqual(toMachineConfig(safetyMachine));
    expect(readFileSync(join(out, 'safety.mmd'), 'utf8')).toBe(toMermaid(safetyMachine));
  });

  it('reports a bad config on stderr with exit code 2', async () => {
    const dir = tempDir();
    const errors: string[] = [];
    let code = 0;
    const program = new Command().exitOverride();
    registerExportCommand(program, { out: () => {}, err: (text) => errors.push(text), setExitCode: (c) => (code = c) });
    await program.parseAsync(['export', '--config', join(dir, 'missing.json')], { from: 'user' });
    expect(code).toBe(2);
    expect(errors.join('')).toMatch(/^pulse-safety export: cannot read .*missing\.json/);
  });
  it('reads ./stately.config.json of the current directory by default and writes relative to it', async () => {
    const dir = tempDir();
    const module = join(ROOT, 'machines', 'safety.machine.ts');
    writeFileSync(
      join(dir, 'stately.config.json'),
      JSON.stringify({ outDir: 'charts-out', machines: [{ id: 'safety', module, export: 'safetyMachine' }] }),
    );
    const lines: string[] = [];
    let code = 0;
    const program = new Command().exitOverride();
    registerExportCommand(program, { out: (text) => lines.push(text), err: () => {}, setExitCode: (c) => (code = c), cwd: () => dir });
    await program.parseAsync(['export'], { from: 'user' });
    expect(code).toBe(0);
    expect(lines.join('')).toContain(`wrote ${join('charts-out', 'safety.mmd')}`);
    expect(readFileSync(join(dir, 'charts-out', 'safety.mmd'), 'utf8')).toBe(toMermaid(safetyMachine));
  });

  it('reports in one line, with exit code 2, that the current directory has no stately.config.json', async () => {
    const dir = tempDir();
    const errors: string[] = [];
    const lines: string[] = [];
    let code = 0;
    const program = new Command().exitOverride();
    registerExportCommand(program, {
      out: (text) => lines.push(text),
      err: (text) => errors.push(text),
      setExitCode: (c) => (code = c),
      cwd: () => dir,
    });
    await program.parseAsync(['export'], { from: 'user' });
    expect(code).toBe(2);
    expect(lines).toEqual([]);
    expect(errors.join('')).toBe(
      `pulse-safety export: no stately.config.json in ${dir}; run it in the folder that has one, or pass --config <file>\n`,
    );
  });
});

describe('committed copies of the chart', () => {
  it("the Mermaid chart in docs/charts.md is the machine's", () => {
    const page = readFileSync(join(ROOT, 'docs/charts.md'), 'utf8');
    const section = page.slice(page.indexOf('<!-- section:visualizer -->'), page.indexOf('<!-- /section:visualizer -->'));
    const block = /```mermaid\n([\s\S]*?)```/.exec(section);
    expect(block, 'the visualizer section embeds a ```mermaid block').not.toBeNull();
    expect(block![1]).toBe(toMermaid(safetyMachine));
  });

  it('charts/ holds what `pulse-safety export` writes now', async () => {
    const config = await readStatelyConfig(CONFIG);
    const charts = await chartsOf(safetyMachine);
    for (const [kind, extension] of Object.entries(CHART_EXTENSIONS) as [keyof typeof charts, string][]) {
      const file = join(ROOT, config.outDir, `safety.${extension}`);
      expect(readFileSync(file, 'utf8'), `${file} is stale: run pulse-safety export`).toBe(charts[kind]);
    }
  });
});
