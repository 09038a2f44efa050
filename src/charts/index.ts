/**
 * Charts of the project's statecharts, drawn from the machines themselves:
 * a flat chart model, the machine config as JSON (what XState's
 * `createMachine` accepts), Graphviz DOT, Mermaid `stateDiagram-v2`, SVG
 * rendered offline with `@viz-js/viz`, and `exportCharts`, which writes them
 * for every machine listed in `stately.config.json` (the `pulse-safety export`
 * command, src/cli/commands/export.ts).
 * The README ("Exported charts") says which tool reads which file; docs/charts.md has the details.
 *
 * The chart builders are pure functions of a machine; the visualizer and the
 * README drift test reuse them, so every picture of the machine comes from
 * the same code.
 *
 * Spec: ASSISTANT_SAFETY.md "States" (what the chart shows); every state and
 * transition carries the machine's own `description`.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Viz } from '@viz-js/viz';
import { createActor, type AnyStateMachine, type AnyStateNode, type AnyTransitionDefinition } from 'xstate';
import { z } from 'zod';

// ---------------------------------------------------------------------------
// The chart model

/** One state of a chart. `id` is XState's state node id, e.g. `safety.RESOLVING`. */
export interface ChartState {
  id: string;
  /** The key within its parent, e.g. `RESOLVING`. */
  key: string;
  /** The parent state's id; null for the machine's root. */
  parent: string | null;
  /** XState's node type. */
  type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  /** The state's `description`, or null. */
  description: string | null;
  /** The id of the initial child state of a compound state, else null. */
  initial: string | null;
}

/**
 * One transition of a chart. A targetless transition (`targets` empty) stays
 * in its source state and is drawn as a loop on it; a transition of a state
 * with children (the root included) applies in any of its states and is drawn
 * from that state's "any state" marker.
 */
export interface ChartTransition {
  /** Stable id: `t:<source id>:<event>:<index among the source's transitions for that event>`. */
  id: string;
  /** Source state id. */
  source: string;
  /** Target state ids; empty for a targetless transition. */
  targets: string[];
  /** The event type; `always` for an eventless transition. */
  event: string;
  /** The guard's name, or null when unguarded. */
  guard: string | null;
  /** The transition's `description`, or null. */
  description: string | null;
  /** Names of the transition's actions, in order. */
  actions: string[];
  /**
   * The transition refuses something: one of its actions is a refusing
   * action (`REFUSING_ACTIONS`). Charts draw it apart from the transitions
   * that allow (red, dashed, marked `✗`).
   */
  refuses: boolean;
}

/** A whole machine as states and transitions, in document order (root first). */
export interface Chart {
  /** The machine's id, e.g. `safety`. */
  id: string;
  /** The machine's `description`, or null. */
  description: string | null;
  states: ChartState[];
  transitions: ChartTransition[];
}

/**
 * The names of the actions that emit a refusal (a `gate.decided` with
 * `allowed: false`): `announceBlocked` refuses a tool call, `refuseAnswer`
 * the final answer (machines/safety.machine.ts). A transition with one of
 * them among its actions is a refusing transition (`ChartTransition.refuses`),
 * whatever rule it refuses under. Matched by name in any machine.
 */
export const REFUSING_ACTIONS: readonly string[] = Object.freeze(['announceBlocked', 'refuseAnswer']);

type NamedThing = string | { type?: unknown; name?: unknown } | ((...args: never[]) => unknown) | null | undefined;

/** The name of a guard or action as written in `setup` (a string, `{ type }`, or a named function). */
function nameOf(thing: NamedThing, fallback: string): string {
  if (typeof thing === 'string') return thing;
  if (typeof thing === 'function') return thing.name || fallback;
  if (thing !== null && typeof thing === 'object' && typeof thing.type === 'string') return thing.type;
  return fallback;
}

/** Every state node of a machine, depth first in document order, root first. */
function stateNodesOf(machine: AnyStateMachine): AnyStateNode[] {
  const nodes: AnyStateNode[] = [];
  const visit = (node: AnyStateNode) => {
    nodes.push(node);
    for (const child of Object.values(node.states) as AnyStateNode[]) visit(child);
  };
  visit(machine.root);
  return nodes;
}

/** The transitions a state node defines itself, eventless ones last, each with its event type. */
function ownTransitions(node: AnyStateNode): { event: string; index: number; definition: AnyTransitionDefinition }[] {
  const result: { event: string; index: number; definition: AnyTransitionDefinition }[] = [];
  for (const [event, definitions] of node.transitions as Map<string, AnyTransitionDefinition[]>) {
    definitions.forEach((definition, index) => result.push({ event, index, definition }));
  }
  const always = (node.always ?? []) as AnyTransitionDefinition[];
  always.forEach((definition, index) => result.push({ event: 'always', index, definition }));
  return result;
}

/**
 * The chart model of a machine: its states and transitions with their ids,
 * guards, actions, descriptions and whether they refuse. Pure; never throws on a machine built
 * with `setup().createMachine()` or `createMachine()`.
 */
export function chartOf(machine: AnyStateMachine): Chart {
  const states: ChartState[] = [];
  const transitions: ChartTransition[] = [];
  for (const node of stateNodesOf(machine)) {
    const initialTarget = node.initial?.target?.[0] as AnyStateNode | undefined;
    states.push({
      id: node.id,
      key: node.key,
      parent: node.parent ? node.parent.id : null,
      type: node.type,
      description: node.description ?? null,
      initial: initialTarget ? initialTarget.id : null,
    });
    for (const { event, index, definition } of ownTransitions(node)) {
      const actions = (definition.actions as NamedThing[]).map((action) => nameOf(action, 'inline action'));
      transitions.push({
        id: `t:${node.id}:${event}:${index}`,
        source: node.id,
        targets: ((definition.target ?? []) as AnyStateNode[]).map((target) => target.id),
        event,
        guard: definition.guard === undefined ? null : nameOf(definition.guard as NamedThing, 'inline guard'),
        description: definition.description ?? null,
        actions,
        refuses: actions.some((action) => REFUSING_ACTIONS.includes(action)),
      });
    }
  }
  return { id: machine.id, description: machine.root.description ?? null, states, transitions };
}

/**
 * The chart ids of a machine's transition definitions, by identity, to mark
 * the transitions XState selects (`machine.getTransitionData`) on the chart.
 */
export function transitionIds(machine: AnyStateMachine): Map<AnyTransitionDefinition, string> {
  const ids = new Map<AnyTransitionDefinition, string>();
  for (const node of stateNodesOf(machine)) {
    for (const { event, index, definition } of ownTransitions(node)) {
      ids.set(definition, `t:${node.id}:${event}:${index}`);
    }
  }
  return ids;
}

/** The chart element id of a state (used as the SVG element id). */
export function stateElementId(stateId: string): string {
  return `state:${stateId}`;
}

// ---------------------------------------------------------------------------
// The machine config as JSON

/** A JSON value. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A machine config as plain JSON: what `createMachine` accepts, every guard and action by name. */
export type MachineConfigJson = { [key: string]: JsonValue };

/**
 * `{ type: <name> }` for a guard or action written inline as a function: the
 * name of XState's built-in action (`xstate.assign`, ...) or of the function,
 * else `inline`. Its code is lost; the name is what a designer sees.
 */
function referenceOf(implementation: (...args: never[]) => unknown): { type: string } {
  const builtIn = (implementation as { type?: unknown }).type;
  return { type: typeof builtIn === 'string' && builtIn !== '' ? builtIn : implementation.name || 'inline' };
}

/**
 * Plain JSON data of a config (ids, descriptions, targets, `params`, `meta`,
 * `tags`): strings, finite numbers, booleans, null, arrays and plain objects
 * are kept; functions (dynamic `params`, `input` and `output` mappers),
 * `undefined` and anything else are left out. Never throws.
 */
function plainJson(value: unknown, depth = 0): JsonValue | undefined {
  if (depth > 64) return undefined;
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (Array.isArray(value)) {
    return value.map((item) => plainJson(item, depth + 1)).filter((item): item is JsonValue => item !== undefined);
  }
  if (typeof value !== 'object') return undefined;
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return undefined;
  const out: { [key: string]: JsonValue } = {};
  for (const [key, item] of Object.entries(value)) {
    const json = plainJson(item, depth + 1);
    if (json !== undefined) out[key] = json;
  }
  return out;
}

/** A guard or one action: a name, `{ type, params }`, or an inline function as `referenceOf`. */
function implementationJson(value: unknown): JsonValue | undefined {
  if (typeof value === 'function') return referenceOf(value as (...args: never[]) => unknown);
  return plainJson(value);
}

/** Actions (`entry`, `exit`, a transition's `actions`): one or an array. */
function actionsJson(value: unknown): JsonValue | undefined {
  if (!Array.isArray(value)) return implementationJson(value);
  return value.map(implementationJson).filter((item): item is JsonValue => item !== undefined);
}

/** One transition: a target string, or an object whose `guard` and `actions` are references. */
function transitionJson(value: unknown): JsonValue | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return plainJson(value);
  const out: { [key: string]: JsonValue } = {};
  for (const [key, item] of Object.entries(value)) {
    const json = key === 'guard' ? implementationJson(item) : key === 'actions' ? actionsJson(item) : plainJson(item);
    if (json !== undefined) out[key] = json;
  }
  return out;
}

/** The transitions of one event (`on.<event>`, `always`, `onDone`, ...): one or an array. */
function transitionsJson(value: unknown): JsonValue | undefined {
  if (!Array.isArray(value)) return transitionJson(value);
  return value.map(transitionJson).filter((item): item is JsonValue => item !== undefined);
}

/** A map of transitions by event or delay (`on`, `after`). */
function transitionMapJson(value: unknown): JsonValue | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const out: { [key: string]: JsonValue } = {};
  for (const [key, item] of Object.entries(value)) {
    const json = transitionsJson(item);
    if (json !== undefined) out[key] = json;
  }
  return out;
}

/** One invocation: its `src` by name (inline logic is left out), its done/error/snapshot transitions. */
function invokeJson(value: unknown): JsonValue | undefined {
  if (Array.isArray(value)) return value.map(invokeJson).filter((item): item is JsonValue => item !== undefined);
  if (typeof value !== 'object' || value === null) return plainJson(value);
  const out: { [key: string]: JsonValue } = {};
  for (const [key, item] of Object.entries(value)) {
    const json = ['onDone', 'onError', 'onSnapshot'].includes(key) ? transitionsJson(item) : plainJson(item);
    if (json !== undefined) out[key] = json;
  }
  return out;
}

/** One state node's config (the machine's root included, `context` aside): recursive. */
function stateJson(value: unknown): JsonValue | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const out: { [key: string]: JsonValue } = {};
  for (const [key, item] of Object.entries(value)) {
    let json: JsonValue | undefined;
    if (key === 'types' || key === 'schemas' || key === 'context')
      continue; // TypeScript only; context apart
    else if (key === 'states') {
      const states: { [key: string]: JsonValue } = {};
      for (const [name, state] of Object.entries((item ?? {}) as object)) {
        const child = stateJson(state);
        if (child !== undefined) states[name] = child;
      }
      json = states;
    } else if (key === 'on' || key === 'after') json = transitionMapJson(item);
    else if (key === 'always' || key === 'onDone') json = transitionsJson(item);
    else if (key === 'entry' || key === 'exit') json = actionsJson(item);
    else if (key === 'invoke') json = invokeJson(item);
    else json = plainJson(item);
    if (json !== undefined) out[key] = json;
  }
  return out;
}

/**
 * The context a machine starts with when given no input, as JSON, or
 * undefined when it needs input, cannot be computed, or is not plain JSON
 * (it must survive `JSON.stringify` unchanged).
 */
function defaultContextOf(machine: AnyStateMachine): JsonValue | undefined {
  try {
    const snapshot = createActor(machine).getSnapshot();
    // A context factory that throws leaves the actor in `error` (XState catches it).
    if (snapshot.status === 'error') return undefined;
    const context: unknown = snapshot.context;
    if (context === undefined) return undefined;
    const text = JSON.stringify(context);
    const json = plainJson(context);
    return json !== undefined && JSON.stringify(json) === text ? json : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The machine's config as plain JSON: what `createMachine` accepts, so that
 * `createMachine(config)` (or `setup({ guards, actions }).createMachine(config)`
 * with the implementations by name) has the machine's states, events,
 * targets, guards and actions. It is the config the machine was created
 * from (`machine.config`, what `@statelyai/inspect` sends to Stately's
 * Inspector) with these changes, so that it is JSON:
 * - `context`: a function of the input in the machine; here the context of
 *   an actor created without input (the defaults), or left out when the
 *   machine cannot start without input;
 * - guards and actions stay references by name (`'isWrite'`,
 *   `{ type: 'announceBlocked', params: { ... } }`); one written inline as a
 *   function becomes `{ type: <function name> }`, its code lost;
 * - left out: `types`/`schemas` (TypeScript only), dynamic `params`,
 *   `input` and `output` mappers, and inline actor logic.
 * Descriptions, ids, targets (as written: `READING`, `.RESOLVING`), `meta`
 * and `tags` are kept. Pure (it creates an actor without starting it); never throws.
 */
export function toMachineConfig(machine: AnyStateMachine): MachineConfigJson {
  const rest = (stateJson(machine.config) ?? {}) as MachineConfigJson;
  const context = typeof machine.config.context === 'function' ? defaultContextOf(machine) : plainJson(machine.config.context);
  if (context === undefined) return { ...rest };
  // Keep the config's key order: `context` after `initial`, where machines usually write it.
  const ordered: MachineConfigJson = {};
  for (const key of Object.keys(machine.config)) {
    if (key === 'context') ordered['context'] = context;
    else if (key in rest) ordered[key] = rest[key]!;
  }
  return ordered;
}

// ---------------------------------------------------------------------------
// Graphviz DOT

/** Splits prose into lines of at most `width` characters, at spaces. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

/** Escapes text for a Graphviz HTML-like label. */
function html(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Quotes a Graphviz ID. */
function quote(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

function hasOwnTransitions(chart: Chart, stateId: string): boolean {
  return chart.transitions.some((t) => t.source === stateId);
}

function childrenOf(chart: Chart, stateId: string): ChartState[] {
  return chart.states.filter((state) => state.parent === stateId);
}

/** DOT node name of the "any state" marker of a state with children. */
function anyNode(stateId: string): string {
  return `${stateId}.*`;
}

/** DOT node name of the initial-state dot of a compound state. */
function initialNode(stateId: string): string {
  return `${stateId}.[*]`;
}

/** The DOT node a transition leaves from (the "any state" marker for a state with children). */
function dotSource(chart: Chart, stateId: string): string {
  return childrenOf(chart, stateId).length > 0 ? anyNode(stateId) : stateId;
}

/** The DOT node a transition enters (a state with children is entered at its initial state's dot). */
function dotTarget(chart: Chart, stateId: string): string {
  return childrenOf(chart, stateId).length > 0 ? initialNode(stateId) : stateId;
}

/** The mark of a refusing transition in every chart's text (`ChartTransition.refuses`). */
export const REFUSAL_MARK = '✗';

/** Red, for refusing transitions. */
const REFUSAL_COLOR = '#cf222e';

/** `event [guard]`, the head of a transition's label; `✗ event [guard]` when it refuses. */
function transitionHead(transition: ChartTransition): string {
  return `${transition.refuses ? `${REFUSAL_MARK} ` : ''}${transition.event}${transition.guard ? ` [${transition.guard}]` : ''}`;
}

/** Lines of HTML-like label text, each left-aligned. */
function leftLines(text: string, width: number): string {
  return wrap(text, width)
    .map((line) => `${html(line)}<br align="left"/>`)
    .join('');
}

/**
 * The HTML-like label of a transition edge: event and guard in bold (after
 * `✗` when it refuses), the description (unless left out) wrapped below.
 */
function edgeLabel(transition: ChartTransition, descriptions: boolean): string {
  const description = descriptions ? leftLines(transition.description ?? '', 34) : '';
  const mark = transition.refuses ? `${REFUSAL_MARK} ` : '';
  return `<${mark}<b>${html(transition.event)}</b>${transition.guard ? ` [${html(transition.guard)}]` : ''}<br align="left"/>${
    description ? `<font point-size="9">${description}</font>` : ''
  }>`;
}

/**
 * The HTML-like table of a state box: name, description, then one row per
 * targetless transition (UML's internal transitions), each row carrying the
 * transition's id (Graphviz writes it as `a_<id>` in SVG) and its description
 * (unless left out: then only as the row's tooltip).
 */
function stateTable(
  title: string,
  description: string | null,
  internal: ChartTransition[],
  options: { dashed: boolean; descriptions: boolean },
): string {
  const { dashed, descriptions } = options;
  const rows: string[] = [`<tr><td><b>${html(title)}</b></td></tr>`];
  if (description) rows.push(`<tr><td balign="left"><font point-size="9">${leftLines(description, 44)}</font></td></tr>`);
  if (internal.length > 0) rows.push('<hr/>');
  for (const transition of internal) {
    const text = transition.description ?? '';
    // A refusing row: red text on a light red ground, with a dashed red frame.
    const look = transition.refuses
      ? { bg: '#ffebe9', head: REFUSAL_COLOR, body: REFUSAL_COLOR, frame: ` border="1" color="${REFUSAL_COLOR}" style="dashed"` }
      : { bg: '#f6f8fa', head: '#24292f', body: '#57606a', frame: '' };
    rows.push(
      `<tr><td align="left" balign="left" bgcolor="${look.bg}"${look.frame} id=${quote(transition.id)} tooltip=${quote(text || transitionHead(transition))}>` +
        `<font point-size="10" color="${look.head}">${html(transitionHead(transition))}</font><br align="left"/>` +
        (text && descriptions ? `<font point-size="9" color="${look.body}">${leftLines(text, 48)}</font>` : '') +
        '</td></tr>',
    );
  }
  return `<<table border="1" cellborder="0" cellspacing="0" cellpadding="3" style="rounded${dashed ? ',dashed' : ''}" bgcolor="${
    dashed ? '#ffffff' : '#f6f8fa'
  }" color="#57606a">${rows.join('')}</table>>`;
}

/**
 * The legend of a DOT chart: how an allowing and a refusing transition look,
 * and what a row in a state box is.
 */
function legendTable(): string {
  const refusing = REFUSING_ACTIONS.join(', ');
  return (
    `<<table border="1" cellborder="0" cellspacing="2" cellpadding="3" style="rounded" color="#8c959f" bgcolor="#ffffff">` +
    `<tr><td align="left"><font point-size="10"><b>Legend</b></font></td></tr>` +
    `<tr><td align="left" bgcolor="#f6f8fa"><font point-size="9">event [guard]: a transition that allows or records</font></td></tr>` +
    `<tr><td align="left" bgcolor="#ffebe9" border="1" color="${REFUSAL_COLOR}" style="dashed"><font point-size="9" color="${REFUSAL_COLOR}">` +
    `${REFUSAL_MARK} event [guard]: a refusing transition, its actions emit a refusal (${html(refusing)})</font></td></tr>` +
    `<tr><td align="left"><font point-size="9" color="#57606a">rows in a state: transitions that stay in it; arrows: transitions to another state</font></td></tr>` +
    `</table>>`
  );
}

/**
 * Graphviz DOT text of a machine. A state is a box carrying its name, its
 * description and its targetless transitions (internal transitions, one row
 * each: event, guard name, description); every other transition is an edge
 * labelled with its event, guard name and description. A state with
 * children is a cluster whose own transitions belong to its "any state" box.
 * Element ids for highlighting the SVG: states `state:<id>`, edges their
 * chart id, internal transitions `a_<chart id>` (see `ChartTransition.id`).
 * A refusing transition (`ChartTransition.refuses`) is drawn apart: its
 * edge red and dashed, its row red on light red in a dashed red frame, its
 * label starting with `✗`; a legend node (id `legend`) says so. States are
 * laid out left to right. Pure.
 *
 * @param options.descriptions false leaves transition descriptions out of
 *   the labels (they stay as tooltips): a compact chart for small screens.
 *   Default true.
 * @param options.legend false leaves the legend out. Default true.
 */
export function toDot(machine: AnyStateMachine, options: { descriptions?: boolean; legend?: boolean } = {}): string {
  const descriptions = options.descriptions ?? true;
  const chart = chartOf(machine);
  const font = 'DejaVu Sans';
  const internalOf = (stateId: string) => chart.transitions.filter((t) => t.source === stateId && t.targets.length === 0);
  const out: string[] = [];
  out.push(`digraph ${quote(chart.id)} {`);
  out.push(`  graph [fontname=${quote(font)}, rankdir=LR, nodesep=0.4, ranksep=0.5, newrank=true];`);
  out.push(`  node [fontname=${quote(font)}, shape=plain];`);
  out.push(`  edge [fontname=${quote(font)}, fontsize=10, color="#57606a", arrowsize=0.7];`);

  const emitState = (state: ChartState, indent: string) => {
    const children = childrenOf(chart, state.id);
    if (children.length === 0) {
      const label = stateTable(state.key, state.description, internalOf(state.id), { dashed: false, descriptions });
      const final = state.type === 'final' ? ' (final)' : '';
      out.push(`${indent}${quote(state.id)} [id=${quote(stateElementId(state.id))}, label=${label}, tooltip=${quote(state.key + final)}];`);
      return;
    }
    out.push(`${indent}subgraph ${quote(`cluster_${state.id}`)} {`);
    out.push(
      `${indent}  graph [id=${quote(stateElementId(state.id))}, label=<<b>${html(state.key)}</b>${
        state.description
          ? `<br/><font point-size="9">${wrap(state.description, 90)
              .map((l) => `${html(l)}<br/>`)
              .join('')}</font>`
          : ''
      }>, style="rounded,dashed", color="#8c959f", fontsize=12];`,
    );
    if (state.initial !== null) {
      out.push(`${indent}  ${quote(initialNode(state.id))} [shape=point, width=0.12, label="", color="#24292f"];`);
      out.push(`${indent}  ${quote(initialNode(state.id))} -> ${quote(dotTarget(chart, state.initial))};`);
    }
    if (hasOwnTransitions(chart, state.id)) {
      out.push(
        `${indent}  ${quote(anyNode(state.id))} [label=${stateTable('any state', null, internalOf(state.id), { dashed: true, descriptions })}];`,
      );
    }
    for (const child of children) emitState(child, `${indent}  `);
    out.push(`${indent}}`);
  };
  const root = chart.states.find((state) => state.parent === null)!;
  emitState(root, '  ');

  for (const transition of chart.transitions) {
    if (transition.targets.length === 0) continue;
    const from = dotSource(chart, transition.source);
    transition.targets.forEach((target, i) => {
      const id = transition.targets.length > 1 ? `${transition.id}:${i}` : transition.id;
      const look = transition.refuses ? `, color="${REFUSAL_COLOR}", fontcolor="${REFUSAL_COLOR}", style=dashed` : '';
      out.push(
        `  ${quote(from)} -> ${quote(dotTarget(chart, target))} [id=${quote(id)}, label=${edgeLabel(transition, descriptions)}, tooltip=${quote(transition.description ?? transitionHead(transition))}${look}];`,
      );
    });
  }
  if (options.legend ?? true) out.push(`  "legend" [id="legend", label=${legendTable()}, tooltip="Legend"];`);
  out.push('}');
  return out.join('\n') + '\n';
}

// ---------------------------------------------------------------------------
// Mermaid stateDiagram-v2

/**
 * Escapes text for a Mermaid state description or transition label: the
 * characters Mermaid's state grammar reads as syntax (`:`, `;`, `#`, `<`,
 * `>`) become its entity codes.
 */
function mermaidText(text: string): string {
  return text.replace(/[#:;<>]/g, (c) => `#${c.charCodeAt(0)};`);
}

/**
 * Mermaid `stateDiagram-v2` text of a machine, the same chart as `toDot`:
 * every state is declared by name (`state "RESOLVING" as RESOLVING`, so
 * Mermaid titles its box with the name, not with the first description
 * line), then lists its description and its targetless (internal)
 * transitions as `event [guard] — description` lines; every other
 * transition is an arrow labelled `event [guard]` and its description. A
 * refusing transition's label starts with `✗` (Mermaid has no style for a
 * state diagram's transitions), and a `%%` comment at the top says so. Pure;
 * the README embeds it and a test keeps the two in step.
 */
export function toMermaid(machine: AnyStateMachine): string {
  const chart = chartOf(machine);
  const root = chart.states.find((state) => state.parent === null)!;
  const names = new Map<string, string>();
  const taken = new Set<string>();
  /** A Mermaid identifier for a key: letters, digits and `_`, unique. */
  const claim = (key: string, wanted: string) => {
    const base = wanted.replace(/[^A-Za-z0-9_]/g, '_') || 'state';
    let name = base;
    for (let n = 2; taken.has(name); n++) name = `${base}_${n}`;
    taken.add(name);
    names.set(key, name);
  };
  // States first, so they keep their plain keys (`RESOLVING`); then the "any state" markers.
  for (const state of chart.states) if (state !== root) claim(state.id, state.key);
  for (const state of chart.states) {
    if (childrenOf(chart, state.id).length > 0 && hasOwnTransitions(chart, state.id)) {
      claim(`${state.id} any`, state === root ? 'any_state' : `${names.get(state.id)}_any_state`);
    }
  }
  const nodeOf = (stateId: string) => names.get(childrenOf(chart, stateId).length > 0 ? `${stateId} any` : stateId)!;
  const internalLine = (transition: ChartTransition) =>
    `${nodeOf(transition.source)} : ${mermaidText(transitionHead(transition))}${
      transition.description ? ` — ${mermaidText(transition.description)}` : ''
    }`;

  const out: string[] = ['stateDiagram-v2'];
  if (chart.description) out.push(`  %% ${chart.id}: ${chart.description.replace(/\s+/g, ' ')}`);
  if (chart.transitions.some((t) => t.refuses)) {
    out.push(`  %% ${REFUSAL_MARK} marks a refusing transition: one of its actions emits a refusal (${REFUSING_ACTIONS.join(', ')}).`);
  }
  const emitChildren = (parent: ChartState, indent: string) => {
    if (parent.initial !== null) out.push(`${indent}[*] --> ${names.get(parent.initial)}`);
    if (hasOwnTransitions(chart, parent.id)) {
      out.push(`${indent}state "any state" as ${nodeOf(parent.id)}`);
      for (const t of chart.transitions) if (t.source === parent.id && t.targets.length === 0) out.push(`${indent}${internalLine(t)}`);
    }
    for (const child of childrenOf(chart, parent.id)) {
      const name = names.get(child.id)!;
      if (childrenOf(chart, child.id).length > 0) {
        out.push(`${indent}state ${name} {`);
        emitChildren(child, `${indent}  `);
        out.push(`${indent}}`);
      } else {
        // Declared by its name first: Mermaid then titles the box with it, the descriptions below.
        out.push(`${indent}state "${mermaidText(child.key).replace(/"/g, '#quot;')}" as ${name}`);
      }
      if (child.description) out.push(`${indent}${name} : ${mermaidText(child.description)}`);
      if (childrenOf(chart, child.id).length === 0) {
        for (const t of chart.transitions) if (t.source === child.id && t.targets.length === 0) out.push(`${indent}${internalLine(t)}`);
      }
    }
  };
  emitChildren(root, '  ');
  for (const transition of chart.transitions) {
    const description = transition.description ? `<br>${mermaidText(transition.description)}` : '';
    for (const target of transition.targets) {
      const to = childrenOf(chart, target).length > 0 ? names.get(target)! : names.get(target)!;
      out.push(`  ${nodeOf(transition.source)} --> ${to} : ${mermaidText(transitionHead(transition))}${description}`);
    }
  }
  return out.join('\n') + '\n';
}

// ---------------------------------------------------------------------------
// SVG, offline

/** The Graphviz WebAssembly instance, loaded on first use (the CLI's other commands never pay for it). */
let viz: Promise<Viz> | undefined;

/**
 * Renders DOT text to SVG with Graphviz compiled to WebAssembly
 * (`@viz-js/viz`): no network, no native Graphviz needed.
 *
 * @throws Error carrying Graphviz's messages when the DOT does not render.
 */
export async function renderSvg(dot: string): Promise<string> {
  viz ??= import('@viz-js/viz').then((module) => module.instance());
  const result = (await viz).render(dot, { format: 'svg' });
  if (result.status !== 'success') {
    throw new Error(`Graphviz could not render the chart: ${result.errors.map((e) => e.message).join('; ')}`);
  }
  return result.output;
}

// ---------------------------------------------------------------------------
// stately.config.json and the export

/** The schema of `stately.config.json` (this project's own file; no Stately tool reads it). */
export const statelyConfigSchema = z.object({
  /** Folder the charts are written to, relative to the config file. */
  outDir: z.string().trim().min(1),
  machines: z
    .array(
      z.object({
        /** The machine's id (also the charts' file name). */
        id: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'must be a plain file name (letters, digits, _ . -)'),
        /** The TypeScript source module, relative to the config file, e.g. `machines/safety.machine.ts`. */
        module: z.string().trim().min(1),
        /** The name the module exports the machine under. */
        export: z.string().trim().min(1),
        description: z.string().optional(),
      }),
    )
    .min(1),
});

/** The parsed `stately.config.json`. */
export type StatelyConfig = z.infer<typeof statelyConfigSchema>;

/**
 * Reads and validates a `stately.config.json`.
 *
 * @throws Error naming the file and the bad entry when it is missing, not
 *   JSON, or not of the documented shape.
 */
export async function readStatelyConfig(path: string): Promise<StatelyConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new Error(`cannot read ${path}: ${(error as Error).message}`, { cause: error });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`${path} is not JSON: ${(error as Error).message}`, { cause: error });
  }
  const parsed = statelyConfigSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`${path}: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  return parsed.data;
}

/** True when this module runs compiled (from `dist/`), false when run from its TypeScript source. */
const compiled = import.meta.url.endsWith('.js');

/**
 * The file to import for a machine's `module` (a `.ts` source path relative
 * to `root`, the folder of `stately.config.json`). Compiled code loads the
 * compiled module, `dist/<module>.js`; from source (tests), the `.ts` itself.
 */
export function machineModuleFile(root: string, module: string, options: { compiled?: boolean } = {}): string {
  if (!(options.compiled ?? compiled)) return resolve(root, module);
  return resolve(root, 'dist', module.replace(/\.(c|m)?tsx?$/, '.js'));
}

function isStateMachine(value: unknown): value is AnyStateMachine {
  return (
    typeof value === 'object' &&
    value !== null &&
    'root' in value &&
    'getTransitionData' in value &&
    typeof (value as { toJSON?: unknown }).toJSON === 'function'
  );
}

/**
 * Loads a machine listed in the config.
 *
 * @throws Error naming the module and export when the module cannot be
 *   imported or does not export an XState machine under that name.
 */
export async function loadConfiguredMachine(
  root: string,
  entry: StatelyConfig['machines'][number],
  options: { compiled?: boolean } = {},
): Promise<AnyStateMachine> {
  const file = machineModuleFile(root, entry.module, options);
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (error) {
    throw new Error(`machine '${entry.id}': cannot import ${file}: ${(error as Error).message}`, { cause: error });
  }
  const machine = module[entry.export];
  if (!isStateMachine(machine)) {
    throw new Error(`machine '${entry.id}': ${entry.module} exports no XState machine named '${entry.export}'`);
  }
  return machine;
}

/** The four files written for one machine. */
export interface MachineCharts {
  /** The machine config as JSON (`toMachineConfig`), pretty-printed: what `createMachine` accepts. */
  json: string;
  dot: string;
  svg: string;
  mermaid: string;
}

/** All charts of one machine. @throws Error when Graphviz cannot render the DOT. */
export async function chartsOf(machine: AnyStateMachine): Promise<MachineCharts> {
  const dot = toDot(machine);
  return {
    json: JSON.stringify(toMachineConfig(machine), null, 2) + '\n',
    dot,
    svg: await renderSvg(dot),
    mermaid: toMermaid(machine),
  };
}

/** The file extension of each chart. */
export const CHART_EXTENSIONS: Readonly<Record<keyof MachineCharts, string>> = {
  json: 'json',
  dot: 'dot',
  svg: 'svg',
  mermaid: 'mmd',
};

/**
 * Writes `<outDir>/<id>.{json,dot,svg,mmd}` for every machine of a config.
 *
 * @param configPath path of `stately.config.json`; its folder is the root
 *   that `module` and `outDir` are relative to.
 * @param options.outDir overrides the config's `outDir` (relative to the current directory).
 * @returns the paths written.
 * @throws Error on a bad config, a machine that cannot be loaded, or a write that fails.
 */
export async function exportCharts(configPath: string, options: { outDir?: string; compiled?: boolean } = {}): Promise<string[]> {
  const config = await readStatelyConfig(configPath);
  const root = dirname(resolve(configPath));
  const outDir = options.outDir !== undefined ? resolve(options.outDir) : resolve(root, config.outDir);
  await mkdir(outDir, { recursive: true });
  const written: string[] = [];
  for (const entry of config.machines) {
    const machine = await loadConfiguredMachine(root, entry, options);
    const charts = await chartsOf(machine);
    for (const [kind, extension] of Object.entries(CHART_EXTENSIONS) as [keyof MachineCharts, string][]) {
      const file = join(outDir, `${entry.id}.${extension}`);
      await writeFile(file, charts[kind]);
      written.push(file);
    }
  }
  return written;
}

/** The package root: two folders up from this module (`src/` or `dist/src/`). */
export const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), compiled ? '../../..' : '../..');
