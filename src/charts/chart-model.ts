/**
 * The chart model: a machine as a flat list of states and transitions, with
 * stable ids, guard and action names, descriptions, and which transitions
 * refuse (`REFUSING_ACTIONS`). Every other chart (machine config aside) and
 * the visualizer are drawn from it, so they all show the same machine.
 *
 * Spec: ASSISTANT_SAFETY.md "States" (what the chart shows); every state and
 * transition carries the machine's own `description`.
 */
import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from 'xstate';

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

/** The mark of a refusing transition in every chart's text (`ChartTransition.refuses`). */
export const REFUSAL_MARK = '✗';

/** `event [guard]`, the head of a transition's label; `✗ event [guard]` when it refuses. */
export function transitionHead(transition: ChartTransition): string {
  return `${transition.refuses ? `${REFUSAL_MARK} ` : ''}${transition.event}${transition.guard ? ` [${transition.guard}]` : ''}`;
}

/** Whether a state has transitions of its own (for a state with children: an "any state" marker to draw them from). */
export function hasOwnTransitions(chart: Chart, stateId: string): boolean {
  return chart.transitions.some((t) => t.source === stateId);
}

/** The states whose parent is `stateId`, in document order. */
export function childrenOf(chart: Chart, stateId: string): ChartState[] {
  return chart.states.filter((state) => state.parent === stateId);
}
