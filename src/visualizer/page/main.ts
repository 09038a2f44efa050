/**
 * The visualizer page (browser code, served by the visualizer server as an
 * ES module; no library, no network beyond its own server). Three modes
 * share one chart, context panel and event log:
 * - Playground: drives a real session guard on the server, one control per event.
 * - Replay: steps through a transcript as the audit replays it.
 * - Live: follows a session an application streams with `@statelyai/inspect`.
 */
import type {
  ChartResponse,
  InfoResponse,
  LiveMessage,
  PlaygroundCommandResponse,
  LiveSessionDetail,
  LiveSessionSummary,
  LogEntry,
  PlaygroundCommand,
  PlaygroundResponse,
  ReplayResponse,
  ReplayRunResponse,
  SessionView,
} from '../protocol.js';
import { api, ApiError, byId, fill, h } from './dom.js';

type Mode = 'playground' | 'replay' | 'live';
const MODES: Mode[] = ['playground', 'replay', 'live'];

const state = {
  info: null as InfoResponse | null,
  mode: 'playground' as Mode,
  charts: new Map<string, Promise<ChartResponse>>(),
  drawnChart: null as string | null,
  playground: null as PlaygroundResponse | null,
  replay: null as ReplayResponse | null,
  /** One page of the replayed run's steps (`run.from` to `run.from + run.frames.length - 1`). */
  run: null as ReplayRunResponse | null,
  /** Steps a page holds (learnt from the server's answers). */
  pageSize: 200,
  /** A page is being fetched: steps wait for it. */
  pageLoading: false,
  /** -1: before the first step; else the step's index in the whole run. */
  step: -1,
  playTimer: null as number | null,
  liveSessions: [] as LiveSessionSummary[],
  liveDetails: new Map<string, LiveSessionDetail>(),
  followed: null as string | null,
  /** The chart's zoom: null fits the whole chart in the window; else the scale of its natural size (1: 100 %). */
  zoom: null as number | null,
};

// ---------------------------------------------------------------------------
// Formatting

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** A time: relative `t+12 s` for replays (the audit clock starts at 0), else the local clock time. */
function formatTime(at: number): string {
  if (state.mode === 'replay') return `t+${Math.round(at / 1000)} s`;
  const date = new Date(at);
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

function formatDuration(ms: number): string {
  if (ms < 0) return 'expired';
  const seconds = Math.floor(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${pad(seconds % 60)} s`;
}

function formatValue(key: string, value: unknown): string {
  if (value === null) return '—';
  if (typeof value === 'number' && key.endsWith('At')) return formatTime(value);
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// ---------------------------------------------------------------------------
// The chart

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

async function drawChart(view: SessionView | null): Promise<void> {
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

// ---------------------------------------------------------------------------
// Context panel and event log

function renderContext(view: SessionView | null): void {
  byId('current-state').textContent = view ? view.state : '—';
  byId('session-clock').textContent = view ? `· clock ${formatTime(view.now)}${view.status === 'active' ? '' : ` · ${view.status}`}` : '';
  const flags = byId('context-flags');
  fill(flags);
  if (view !== null) {
    for (const [key, value] of Object.entries(view.context)) {
      if (key === 'pendingRecoveries' || key === 'inFlight') continue;
      flags.append(h('dt', {}, key), h('dd', { 'data-key': key }, formatValue(key, value)));
    }
  }
  const recoveries = view?.pendingRecoveries ?? [];
  byId('recoveries').hidden = recoveries.length === 0;
  byId('recoveries-empty').hidden = recoveries.length > 0;
  fill(
    byId('recoveries').querySelector('tbody')!,
    ...recoveries.map((r) =>
      h(
        'tr',
        { 'data-recovery': r.recoveryId },
        h('td', {}, r.tool),
        h('td', {}, String(r.attempts)),
        h('td', {}, formatTime(r.lastBlockedAt)),
        h('td', { class: 'expires' }, formatDuration(r.expiresInMs)),
      ),
    ),
  );
  const inFlight = view?.inFlight ?? [];
  byId('in-flight-none').hidden = inFlight.length > 0;
  fill(byId('in-flight'), ...inFlight.map((call) => h('li', {}, `${call.key.replace(/^id:/, '')} ${call.tool} (${call.kind})`)));
}

function logItem(entry: LogEntry): HTMLLIElement {
  const decision = entry.decision;
  const badge = decision
    ? decision.allowed
      ? h('span', { class: 'badge allowed' }, 'allowed')
      : h('span', { class: 'badge blocked' }, `blocked ${decision.code ?? ''}`.trim())
    : null;
  return h(
    'li',
    { value: entry.seq, class: decision ? (decision.allowed ? 'allowed' : 'blocked') : null, 'data-seq': entry.seq },
    h('span', { class: 'label' }, entry.label),
    ' ',
    badge,
    entry.recovered ? h('span', { class: 'badge recovered' }, `recovered ${entry.recovered.tool}`) : null,
    h(
      'div',
      { class: 'states' },
      `${formatTime(entry.at)} · ${entry.events.join(', ') || 'no event'} · ${entry.stateBefore} → ${entry.stateAfter}`,
    ),
    decision && !decision.allowed ? h('p', { class: 'reason' }, `${decision.rule ?? ''}: ${decision.reason ?? ''}`) : null,
    decision?.toolResult
      ? h('details', {}, h('summary', {}, 'Tool result sent back to the model'), h('pre', {}, JSON.stringify(decision.toolResult, null, 2)))
      : decision && !decision.allowed && decision.message
        ? h('details', {}, h('summary', {}, 'Error'), h('pre', {}, decision.message))
        : null,
  );
}

// ---------------------------------------------------------------------------
// Zoom and pan: fit shows the whole chart (its text small on a wide machine);
// the zoom levels scale its natural size (100 %: Graphviz's 10 pt labels),
// and the chart scrolls (drag, wheel, arrow keys) to pan.

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

function setupZoom(): void {
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

function renderLog(entries: LogEntry[]): void {
  fill(byId('log'), ...[...entries].reverse().map(logItem));
}

// ---------------------------------------------------------------------------
// What the current mode shows

function current(): { view: SessionView | null; log: LogEntry[] } {
  switch (state.mode) {
    case 'playground':
      return { view: state.playground?.view ?? null, log: state.playground?.log ?? [] };
    case 'replay': {
      const run = state.run;
      if (run === null) return { view: null, log: [] };
      const frame = state.step >= 0 ? run.frames[state.step - run.from] : undefined;
      return {
        view: frame ? frame.view : run.initial,
        log: run.frames.slice(0, Math.max(0, state.step - run.from + 1)).map((f) => f.entry),
      };
    }
    case 'live': {
      const detail = state.followed === null ? undefined : state.liveDetails.get(state.followed);
      return { view: detail?.view ?? null, log: detail?.log ?? [] };
    }
  }
}

let renderQueued: Promise<void> | null = null;

/** Redraws everything for the current mode (coalesced). */
function render(): Promise<void> {
  renderQueued ??= Promise.resolve().then(async () => {
    renderQueued = null;
    const { view, log } = current();
    renderContext(view);
    renderLog(log);
    renderPlaygroundControls();
    renderReplayControls();
    renderLiveControls();
    await drawChart(view);
    document.body.dataset.mode = state.mode;
    document.body.dataset.state = view?.state ?? '';
  });
  return renderQueued;
}

// ---------------------------------------------------------------------------
// Mode tabs (WAI-ARIA tabs: arrow keys move between tabs)

function selectMode(mode: Mode, focus = false): void {
  state.mode = mode;
  for (const m of MODES) {
    const tab = byId(`tab-${m}`);
    const selected = m === mode;
    tab.setAttribute('aria-selected', String(selected));
    tab.tabIndex = selected ? 0 : -1;
    byId(`panel-${m}`).hidden = !selected;
    if (selected && focus) tab.focus();
  }
  if (mode !== 'replay') stopPlaying();
  if (mode === 'live' && state.followed === null && state.liveSessions[0]) state.followed = state.liveSessions[0].sessionId;
  void render();
}

function setupTabs(): void {
  for (const mode of MODES) {
    const tab = byId(`tab-${mode}`);
    tab.addEventListener('click', () => selectMode(mode));
    tab.addEventListener('keydown', (event) => {
      const index = MODES.indexOf(mode);
      const next =
        event.key === 'ArrowRight'
          ? MODES[(index + 1) % MODES.length]
          : event.key === 'ArrowLeft'
            ? MODES[(index + MODES.length - 1) % MODES.length]
            : event.key === 'Home'
              ? MODES[0]
              : event.key === 'End'
                ? MODES[MODES.length - 1]
                : undefined;
      if (next === undefined) return;
      event.preventDefault();
      selectMode(next, true);
    });
  }
}

// ---------------------------------------------------------------------------
// Playground

const KIND_LABELS: Record<string, string> = {
  resolve: 'resolve',
  read: 'read',
  write: 'write',
  user_input: 'user input',
  neutral: 'neutral',
};

function catalogOptions(select: HTMLSelectElement): void {
  fill(select, ...(state.info?.catalogs ?? []).map((c) => h('option', { value: c.name }, c.name)));
}

function renderExamples(): void {
  const name = byId<HTMLSelectElement>('call-catalog').value;
  const catalog = state.info?.catalogs.find((c) => c.name === name);
  fill(
    byId('examples'),
    ...(state.info?.kinds ?? []).map((kind) => {
      const example = catalog?.examples[kind];
      return h(
        'button',
        {
          type: 'button',
          'data-kind': kind,
          disabled: example === undefined,
          title: example ? `${example.name} ${JSON.stringify(example.args)}` : `the ${name} catalog has no ${kind} tool`,
        },
        `${KIND_LABELS[kind] ?? kind} example`,
      );
    }),
  );
  fill(byId('tool-names'), ...(catalog?.tools ?? []).map((tool) => h('option', { value: tool.name })));
}

async function playgroundCommand(command: PlaygroundCommand, errorId = 'session-error'): Promise<boolean> {
  const session = state.playground;
  if (session === null) return false;
  byId(errorId).textContent = '';
  try {
    // The answer carries the command's own entry; the page keeps the log's tail, as the server does.
    const { entry, ...answer } = await api<PlaygroundCommandResponse>('POST', `/api/playground/${encodeURIComponent(session.id)}`, command);
    state.playground = { ...answer, log: [...(state.playground?.log ?? []), entry].slice(-answer.logLimit) };
    await render();
    return true;
  } catch (error) {
    byId(errorId).textContent = errorText(error);
    return false;
  }
}

async function newPlaygroundSession(): Promise<void> {
  byId('session-error').textContent = '';
  try {
    state.playground = await api<PlaygroundResponse>('POST', '/api/playground', {
      catalog: byId<HTMLSelectElement>('new-catalog').value,
      autoCompleteVerification: byId<HTMLInputElement>('new-auto').checked,
      strictFailedWrites: byId<HTMLInputElement>('new-strict').checked,
    });
    await render();
  } catch (error) {
    byId('session-error').textContent = errorText(error);
  }
}

function renderPlaygroundControls(): void {
  const inFlight = state.playground?.view.inFlight ?? [];
  byId('in-flight-empty').hidden = inFlight.length > 0;
  fill(
    byId('in-flight-controls'),
    ...inFlight
      .filter((call) => call.key.startsWith('id:'))
      .map((call) => {
        const id = call.key.slice(3);
        const text = `${id} ${call.tool} (${call.kind})`;
        return h(
          'li',
          { 'data-call': id },
          h('span', { class: 'call' }, text),
          h('button', { type: 'button', 'data-outcome': 'success', 'aria-label': `${text} succeeded` }, 'Succeeded'),
          h('button', { type: 'button', 'data-outcome': 'error', 'aria-label': `${text} failed` }, 'Failed'),
        );
      }),
  );
}

function setupPlayground(): void {
  catalogOptions(byId('call-catalog'));
  catalogOptions(byId('new-catalog'));
  renderExamples();
  byId('call-catalog').addEventListener('change', renderExamples);
  byId('examples').addEventListener('click', (event) => {
    const button = (event.target as Element).closest<HTMLButtonElement>('button[data-kind]');
    if (button === null) return;
    const catalog = state.info?.catalogs.find((c) => c.name === byId<HTMLSelectElement>('call-catalog').value);
    const example = catalog?.examples[button.dataset.kind as keyof typeof catalog.examples];
    if (example === undefined) return;
    byId<HTMLInputElement>('call-name').value = example.name;
    byId<HTMLTextAreaElement>('call-args').value = JSON.stringify(example.args);
    byId('call-error').textContent = '';
  });
  byId('call-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const name = byId<HTMLInputElement>('call-name').value.trim();
    const argsText = byId<HTMLTextAreaElement>('call-args').value.trim();
    if (name === '') {
      byId('call-error').textContent = 'Enter a tool name, or pick an example.';
      byId('call-name').focus();
      return;
    }
    let args: unknown;
    try {
      args = argsText === '' ? undefined : JSON.parse(argsText);
    } catch (error) {
      byId('call-error').textContent = `The arguments are not valid JSON: ${errorText(error)}`;
      byId('call-args').focus();
      return;
    }
    void playgroundCommand({ type: 'call', name, args, catalog: byId<HTMLSelectElement>('call-catalog').value }, 'call-error');
  });
  byId('in-flight-controls').addEventListener('click', (event) => {
    const button = (event.target as Element).closest<HTMLButtonElement>('button[data-outcome]');
    const callId = button?.closest<HTMLElement>('li[data-call]')?.dataset.call;
    if (!button || callId === undefined) return;
    void playgroundCommand({ type: 'outcome', callId, outcome: button.dataset.outcome === 'error' ? 'error' : 'success' });
  });
  const buttons: [string, PlaygroundCommand][] = [
    ['btn-answer', { type: 'answer' }],
    ['btn-complete', { type: 'completeVerification' }],
    ['btn-reset', { type: 'reset' }],
    ['btn-reset-keep', { type: 'resetKeepProgress' }],
    ['btn-clock', { type: 'advanceClock' }],
  ];
  for (const [id, command] of buttons) byId(id).addEventListener('click', () => void playgroundCommand(command));
  byId('btn-new').addEventListener('click', () => void newPlaygroundSession());
}

// ---------------------------------------------------------------------------
// Replay

function stopPlaying(): void {
  if (state.playTimer !== null) window.clearInterval(state.playTimer);
  state.playTimer = null;
}

/** Fetches the page of the current run that holds step `step`. */
async function loadPage(step: number): Promise<void> {
  const replay = state.replay;
  const run = state.run;
  if (replay === null || run === null) return;
  const from = step - (step % state.pageSize);
  state.pageLoading = true;
  try {
    state.run = await api<ReplayRunResponse>(
      'GET',
      `/api/replays/${encodeURIComponent(replay.id)}/runs/${run.run.index}?catalog=${encodeURIComponent(run.catalog)}&from=${from}`,
    );
  } catch (error) {
    byId('replay-error').textContent = errorText(error);
    stopPlaying();
  } finally {
    state.pageLoading = false;
  }
}

/** Goes to a step of the run (-1: before the first), asking the server for its page when this one does not hold it. */
function goToStep(step: number, focusTimeline = false): void {
  if (state.pageLoading) return;
  const total = state.run?.total ?? 0;
  state.step = Math.max(-1, Math.min(total - 1, step));
  if (state.step >= total - 1) stopPlaying();
  const run = state.run;
  const outside = run !== null && state.step >= 0 && (state.step < run.from || state.step >= run.from + run.frames.length);
  void (outside ? loadPage(state.step) : Promise.resolve()).then(render).then(() => {
    const currentStep = byId('timeline').querySelector<HTMLButtonElement>('button[aria-current="step"]');
    currentStep?.scrollIntoView({ block: 'nearest' });
    if (focusTimeline) currentStep?.focus();
  });
}

function renderReplayControls(): void {
  const run = state.run;
  const frames = run?.frames ?? [];
  const total = run?.total ?? 0;
  const atEnd = state.step >= total - 1;
  byId<HTMLButtonElement>('replay-first').disabled = run === null || state.step < 0;
  byId<HTMLButtonElement>('replay-back').disabled = run === null || state.step < 0;
  byId<HTMLButtonElement>('replay-forward').disabled = run === null || atEnd;
  byId<HTMLButtonElement>('replay-last').disabled = run === null || atEnd;
  const play = byId<HTMLButtonElement>('replay-play');
  play.disabled = run === null || (atEnd && state.playTimer === null);
  play.setAttribute('aria-pressed', String(state.playTimer !== null));
  play.textContent = state.playTimer === null ? '▶ Play' : '❚❚ Pause';
  byId('replay-position').textContent =
    run === null ? 'No transcript loaded.' : `Step ${state.step + 1} of ${total}${atEnd ? ' (end)' : ''}`;
  const listed = run?.refusedSteps ?? [];
  const refusals = run?.run.refusals ?? 0;
  byId('replay-refusals').textContent =
    run === null
      ? ''
      : refusals === 0
        ? 'The audit refuses nothing in this run.'
        : `The audit refuses ${refusals}: step ${listed.map((i) => i + 1).join(', ')}${listed.length < refusals ? ', …' : ''}.`;
  const timeline = byId('timeline');
  const page = run === null ? '' : `steps ${run.from + 1} to ${run.from + frames.length} of ${total}`;
  byId('timeline-page').textContent = run !== null && frames.length < total ? `Showing ${page}; stepping on fetches the next ones.` : '';
  if (timeline.dataset.run !== `${state.replay?.id}/${run?.run.index}/${run?.catalog}` || timeline.dataset.page !== page) {
    timeline.dataset.run = `${state.replay?.id}/${run?.run.index}/${run?.catalog}`;
    timeline.dataset.page = page;
    fill(
      timeline,
      ...frames.map((frame) =>
        h(
          'li',
          { class: frame.refused ? 'refused' : null, 'data-step': frame.index },
          h(
            'button',
            { type: 'button', 'data-step': frame.index, title: frame.position },
            frame.refused ? '✗ refused: ' : '',
            frame.entry.label,
          ),
        ),
      ),
    );
  }
  for (const item of Array.from(timeline.querySelectorAll<HTMLLIElement>('li'))) {
    const index = Number(item.dataset.step);
    item.classList.toggle('past', index < state.step);
    const button = item.querySelector('button')!;
    if (index === state.step) button.setAttribute('aria-current', 'step');
    else button.removeAttribute('aria-current');
  }
}

function replayCatalog(): string {
  return byId<HTMLSelectElement>('replay-catalog').value;
}

async function loadRun(index: number): Promise<void> {
  const replay = state.replay;
  if (replay === null) return;
  stopPlaying();
  try {
    state.run = await api<ReplayRunResponse>(
      'GET',
      `/api/replays/${encodeURIComponent(replay.id)}/runs/${index}?catalog=${encodeURIComponent(replayCatalog())}`,
    );
    if (state.run.nextFrom !== null) state.pageSize = state.run.nextFrom - state.run.from;
    state.step = -1;
    byId<HTMLSelectElement>('replay-run').value = String(index);
    await render();
  } catch (error) {
    byId('replay-error').textContent = errorText(error);
  }
}

function showReplay(replay: ReplayResponse): Promise<void> {
  state.replay = replay;
  byId('replay-error').textContent = '';
  byId('replay-source').textContent = `${replay.source}: ${replay.runs.length} run${replay.runs.length === 1 ? '' : 's'}`;
  const select = byId<HTMLSelectElement>('replay-run');
  select.disabled = replay.runs.length < 2;
  fill(
    select,
    ...replay.runs.map((run) =>
      h(
        'option',
        { value: run.index },
        `${run.id}${run.reward === null ? '' : ` · reward ${run.reward}`} · ${run.steps} steps · ${run.refusals} refused`,
      ),
    ),
  );
  return loadRun(0);
}

async function openReplay(id: string): Promise<void> {
  try {
    await showReplay(
      await api<ReplayResponse>('GET', `/api/replays/${encodeURIComponent(id)}?catalog=${encodeURIComponent(replayCatalog())}`),
    );
  } catch (error) {
    byId('replay-error').textContent = errorText(error);
  }
}

/** Opens the transcript file the user picked, or says why it cannot be read. */
async function openReplayFile(event: Event): Promise<void> {
  const file = (event.target as HTMLInputElement).files?.[0];
  if (file === undefined) return;
  byId('replay-error').textContent = '';
  byId('replay-source').textContent = `Reading ${file.name}…`;
  try {
    const text = await file.text();
    await showReplay(await api<ReplayResponse>('POST', '/api/replays', { text, source: file.name, catalog: replayCatalog() }));
  } catch (error) {
    byId('replay-source').textContent = '';
    byId('replay-error').textContent = error instanceof ApiError ? error.message : `Cannot read ${file.name}: ${errorText(error)}`;
  }
}

/** Opens the current replay again under the catalog just chosen, at the run that was shown. */
async function reopenReplay(): Promise<void> {
  if (state.replay === null) return;
  const index = state.run?.run.index ?? 0;
  await openReplay(state.replay.id);
  if (index !== 0) await loadRun(index);
}

function setupReplay(): void {
  catalogOptions(byId('replay-catalog'));
  byId('replay-demo').addEventListener('click', () => void openReplay('demo'));
  byId<HTMLInputElement>('replay-file').addEventListener('change', (event) => void openReplayFile(event));
  byId('replay-catalog').addEventListener('change', () => void reopenReplay());
  byId('replay-run').addEventListener('change', (event) => void loadRun(Number((event.target as HTMLSelectElement).value)));
  byId('replay-first').addEventListener('click', () => goToStep(-1));
  byId('replay-back').addEventListener('click', () => goToStep(state.step - 1));
  byId('replay-forward').addEventListener('click', () => goToStep(state.step + 1));
  byId('replay-last').addEventListener('click', () => goToStep(Number.MAX_SAFE_INTEGER));
  byId('replay-play').addEventListener('click', () => {
    if (state.playTimer !== null) {
      stopPlaying();
      void render();
      return;
    }
    if (state.run === null) return;
    if (state.step >= state.run.total - 1) {
      state.step = -1;
      if (state.run.from > 0) void loadPage(0).then(render);
    }
    const speed = Number(byId<HTMLSelectElement>('replay-speed').value) || 700;
    state.playTimer = window.setInterval(() => goToStep(state.step + 1), speed);
    goToStep(state.step + 1);
  });
  const timeline = byId('timeline');
  timeline.addEventListener('click', (event) => {
    const button = (event.target as Element).closest<HTMLButtonElement>('button[data-step]');
    if (button) goToStep(Number(button.dataset.step));
  });
  timeline.addEventListener('keydown', (event) => {
    const delta =
      event.key === 'ArrowDown' || event.key === 'ArrowRight' ? 1 : event.key === 'ArrowUp' || event.key === 'ArrowLeft' ? -1 : 0;
    if (delta === 0) return;
    event.preventDefault();
    goToStep(state.step + delta, true);
  });
}

// ---------------------------------------------------------------------------
// Live

function renderLiveControls(): void {
  byId('live-empty').hidden = state.liveSessions.length > 0;
  fill(
    byId('live-sessions'),
    ...state.liveSessions.map((session) =>
      h(
        'li',
        {},
        h(
          'button',
          {
            type: 'button',
            'data-session': session.sessionId,
            'aria-pressed': String(session.sessionId === state.followed),
          },
          `${session.label} · ${session.state}${session.connected ? '' : ' · disconnected'} · ${session.events} events`,
        ),
        session.collision === null ? null : h('p', { class: 'error collision' }, session.collision),
      ),
    ),
  );
}

function connectLive(): void {
  const socket = new WebSocket(`ws://${location.host}/live`);
  socket.addEventListener('open', () => {
    byId('live-status').textContent = 'Listening for sessions.';
  });
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as LiveMessage;
    if (message.type === 'sessions') {
      state.liveSessions = message.sessions;
      if (state.followed === null && state.mode === 'live' && message.sessions[0]) state.followed = message.sessions[0].sessionId;
    } else {
      state.liveDetails.set(message.session.sessionId, message.session);
    }
    if (state.mode === 'live') void render();
  });
  socket.addEventListener('close', () => {
    byId('live-status').textContent = 'Not connected to the visualizer server; retrying…';
    window.setTimeout(connectLive, 2000);
  });
}

function setupLive(): void {
  byId('inspect-url').textContent = state.info?.inspectUrl ?? '';
  byId('live-sessions').addEventListener('click', (event) => {
    const button = (event.target as Element).closest<HTMLButtonElement>('button[data-session]');
    if (button?.dataset.session === undefined) return;
    state.followed = button.dataset.session;
    void render();
  });
  connectLive();
}

// ---------------------------------------------------------------------------

async function start(): Promise<void> {
  state.info = await api<InfoResponse>('GET', '/api/info');
  setupTabs();
  setupPlayground();
  setupReplay();
  setupLive();
  setupZoom();
  byId('chart-descriptions').addEventListener('change', () => void render());
  await newPlaygroundSession();
  const params = new URLSearchParams(location.search);
  const mode = params.get('mode');
  const catalog = params.get('catalog');
  if (catalog !== null && state.info.catalogs.some((c) => c.name === catalog)) {
    byId<HTMLSelectElement>('replay-catalog').value = catalog;
  }
  if (params.get('replay') !== null) await openReplay(params.get('replay')!);
  selectMode(MODES.includes(mode as Mode) ? (mode as Mode) : params.get('replay') !== null ? 'replay' : 'playground');
  await render();
  document.body.dataset.ready = 'true';
}

start().catch((error: unknown) => {
  document.body.prepend(h('p', { class: 'error', role: 'alert' }, `The visualizer failed to start: ${errorText(error)}`));
});
