/**
 * Graphviz DOT text of a machine (`toDot`): states as boxes carrying their
 * targetless transitions, other transitions as labelled edges, refusing
 * transitions drawn apart, with element ids the visualizer highlights in
 * the rendered SVG.
 */
import type { AnyStateMachine } from 'xstate';
import {
  chartOf,
  childrenOf,
  hasOwnTransitions,
  REFUSAL_MARK,
  REFUSING_ACTIONS,
  stateElementId,
  transitionHead,
  type Chart,
  type ChartState,
  type ChartTransition,
} from './chart-model.js';

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

/** Red, for refusing transitions. */
const REFUSAL_COLOR = '#cf222e';

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
