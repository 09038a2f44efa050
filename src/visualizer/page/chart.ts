/**
 * The visualizer page's chart (browser code): the machine's SVG as the
 * server laid it out, with the current states, the transitions enabled now
 * and those the last step took highlighted, and the list of the enabled
 * ones. Zoom and pan: fit shows the whole chart (its text small on a wide
 * machine); the zoom levels scale its natural size (100 %: Graphviz's 10 pt
 * labels), and the chart scrolls (drag, wheel, arrow keys) to pan.
 */
import type { ChartResponse, SessionView } from '../protocol.js';
import { api, byId, fill, h } from './dom.js';
import { errorText, state } from './state.js';

function chartFor(machineId: string): Promise<ChartResponse> {
  let chart = state.charts.get(machineId);
  if (chart === undefined) {
    chart = api<ChartResponse>('GET', `/api/charts/${encodeURIComponent(machineId)}`);
    state.charts.set(machineId, chart);
    chart.catch(() => state.charts.delete(machineId));
  }
  return chart;
}

/** The SVG element of a transition: its edge, or its row in a state box. */
function transitionElement(id: string): Element | null {
  return document.getElementById(id) ?? document.getElementById(`a_${id}`);
}

function describeTransition(chart: ChartResponse, id: string): string {
  const t = chart.chart.transitions.find((transition) => transition.id === id);
  if (t === undefined) return id;
  const key = (stateId: string) => {
    const found = chart.chart.states.find((s) => s.id === stateId);
    if (found === undefined) return stateId;
    return found.parent === null || chart.chart.states.some((s) => s.parent === found.id) ? `any state of ${found.key}` : found.key;
  };
  const head = `${t.event}${t.guard ? ` [${t.guard}]` : ''}`;
  const where = t.targets.length ? `${key(t.source)} → ${t.targets.map(key).join(', ')}` : `in ${key(t.source)}`;
  return `${where}: ${head}`;
}

/** Draws the chart of `view`'s machine (once per machine and detail), highlighting its current states and its enabled and taken transitions; a note when there is nothing to show or the chart cannot be drawn. */
export async function drawChart(view: SessionView | null): Promise<void> {
  const container = byId('chart');
  if (view === null) {
    state.drawnChart = null;
    fill(container, h('p', { class: 'muted' }, 'No chart: nothing to show yet.'));
    fill(byId('enabled-list'));
    byId('chart-machine').textContent = '';
    return;
  }
  let chart: ChartResponse;
  try {
    chart = await chartFor(view.machineId);
  } catch (error) {
    fill(container, h('p', { class: 'error' }, `The chart of ${view.machineId} cannot be drawn: ${errorText(error)}`));
    state.drawnChart = null;
    return;
  }
  const descriptions = byId<HTMLInputElement>('chart-descriptions').checked;
  const drawn = `${view.machineId}/${descriptions ? 'full' : 'compact'}`;
  if (state.drawnChart !== drawn) {
    const svg = new DOMParser().parseFromString(descriptions ? chart.svg : chart.compactSvg, 'image/svg+xml').documentElement;
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', `Statechart of the ${view.machineId} machine`);
    fill(container, document.importNode(svg, true));
    state.drawnChart = drawn;
    applyZoom();
    byId('chart-machine').textContent = `(machine ${view.machineId})`;
  }
  for (const element of Array.from(container.querySelectorAll('.current, .enabled, .taken'))) {
    element.classList.remove('current', 'enabled', 'taken');
  }
  for (const id of view.activeStateIds) document.getElementById(`state:${id}`)?.classList.add('current');
  for (const id of view.enabled) transitionElement(id)?.classList.add('enabled');
  for (const id of view.taken) transitionElement(id)?.classList.add('taken');
  fill(
    byId('enabled-list'),
    ...(view.enabled.length
      ? view.enabled.map((id) => h('li', { 'data-transition': id }, describeTransition(chart, id)))
      : [h('li', {}, 'none')]),
  );
}

/** The zoom levels, as scales of the chart's natural size. */
const ZOOM_LEVELS = [0.5, 0.75, 1, 1.25, 1.5, 2, 3];

function chartSvg(): SVGSVGElement | null {
  return byId('chart').querySelector<SVGSVGElement>(':scope > svg');
}

/** The scale the chart is drawn at now (in fit mode, the one that fits it). */
function currentScale(): number {
  const svg = chartSvg();
  if (svg === null) return 1;
  const natural = svg.width.baseVal.value;
  return natural > 0 ? svg.getBoundingClientRect().width / natural : 1;
}

/** Draws the chart at `state.zoom`, keeping the point at `anchor` (in the chart's box, px) where it was. */
function applyZoom(anchor?: { x: number; y: number }): void {
  const container = byId('chart');
  const svg = chartSvg();
  const fit = state.zoom === null;
  const before = { width: container.scrollWidth, height: container.scrollHeight };
  const at = anchor ?? { x: container.clientWidth / 2, y: container.clientHeight / 2 };
  const point = { x: (container.scrollLeft + at.x) / (before.width || 1), y: (container.scrollTop + at.y) / (before.height || 1) };
  container.classList.toggle('fit', fit);
  if (svg !== null) {
    svg.style.width = fit ? '' : `${svg.width.baseVal.value * state.zoom!}px`;
    svg.style.height = fit ? '' : `${svg.height.baseVal.value * state.zoom!}px`;
  }
  if (!fit) {
    container.scrollLeft = point.x * container.scrollWidth - at.x;
    container.scrollTop = point.y * container.scrollHeight - at.y;
  }
  byId('zoom-fit').setAttribute('aria-pressed', String(fit));
  byId('zoom-level').textContent = fit ? 'fit' : `${Math.round(state.zoom! * 100)} %`;
  byId<HTMLButtonElement>('zoom-in').disabled = !fit && state.zoom! >= ZOOM_LEVELS[ZOOM_LEVELS.length - 1]!;
  byId<HTMLButtonElement>('zoom-out').disabled = fit;
}

/** Zooms one level in (+1) or out (-1) from the scale drawn now; out past the smallest level, or below the fit, fits. */
function zoomBy(direction: 1 | -1, anchor?: { x: number; y: number }): void {
  const scale = currentScale();
  if (direction === 1) {
    state.zoom = ZOOM_LEVELS.find((level) => level > scale * 1.02) ?? ZOOM_LEVELS[ZOOM_LEVELS.length - 1]!;
  } else {
    const smaller = [...ZOOM_LEVELS].reverse().find((level) => level < scale * 0.98);
    const container = byId('chart');
    const svg = chartSvg();
    const fitScale = svg === null ? 0 : container.clientWidth / svg.width.baseVal.value;
    state.zoom = smaller === undefined || smaller <= fitScale ? null : smaller;
  }
  applyZoom(anchor);
}

/** Wires the zoom buttons, the keys (+, -, 0), the ctrl/cmd wheel and the drag that pans. */
export function setupZoom(): void {
  const chart = byId('chart');
  byId('zoom-in').addEventListener('click', () => zoomBy(1));
  byId('zoom-out').addEventListener('click', () => zoomBy(-1));
  byId('zoom-fit').addEventListener('click', () => {
    state.zoom = null;
    applyZoom();
  });
  chart.addEventListener('keydown', (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === '+' || event.key === '=') zoomBy(1);
    else if (event.key === '-' || event.key === '_') zoomBy(-1);
    else if (event.key === '0') {
      state.zoom = null;
      applyZoom();
    } else return; // the arrow keys scroll (pan) the focused chart natively
    event.preventDefault();
  });
  chart.addEventListener(
    'wheel',
    (event) => {
      if (!event.ctrlKey && !event.metaKey) return; // a plain wheel scrolls (pans)
      event.preventDefault();
      const box = chart.getBoundingClientRect();
      zoomBy(event.deltaY < 0 ? 1 : -1, { x: event.clientX - box.left, y: event.clientY - box.top });
    },
    { passive: false },
  );
  let drag: { x: number; y: number; left: number; top: number; id: number } | null = null;
  chart.addEventListener('pointerdown', (event) => {
    if (state.zoom === null || event.button !== 0) return;
    drag = { x: event.clientX, y: event.clientY, left: chart.scrollLeft, top: chart.scrollTop, id: event.pointerId };
    chart.setPointerCapture(event.pointerId);
    chart.classList.add('panning');
  });
  chart.addEventListener('pointermove', (event) => {
    if (drag === null || event.pointerId !== drag.id) return;
    chart.scrollLeft = drag.left - (event.clientX - drag.x);
    chart.scrollTop = drag.top - (event.clientY - drag.y);
  });
  const endDrag = (event: PointerEvent) => {
    if (drag === null || event.pointerId !== drag.id) return;
    drag = null;
    chart.classList.remove('panning');
  };
  chart.addEventListener('pointerup', endDrag);
  chart.addEventListener('pointercancel', endDrag);
}
