/**
 * Mermaid `stateDiagram-v2` text of a machine (`toMermaid`): the same chart
 * as the DOT one, for the places that render Mermaid (the README, GitHub).
 */
import type { AnyStateMachine } from 'xstate';
import {
  chartOf,
  childrenOf,
  hasOwnTransitions,
  REFUSAL_MARK,
  REFUSING_ACTIONS,
  transitionHead,
  type ChartState,
  type ChartTransition,
} from './chart-model.js';

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
