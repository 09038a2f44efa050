/**
 * The visualizer page (browser code, served by the visualizer server as an
 * ES module; no library, no network beyond its own server). Three modes
 * share one chart, context panel and event log:
 * - Playground: drives a real session guard on the server, one control per event.
 * - Replay: steps through a transcript as the audit replays it.
 * - Live: follows a session an application streams with `@statelyai/inspect`.
 *
 * Here: what the current mode shows, the mode tabs, and the start. Each mode
 * is its own module (playground-mode.ts, replay-mode.ts, live-mode.ts); the
 * chart is chart.ts, the context panel and log panels.ts, the shared state state.ts.
 */
import type { InfoResponse, LogEntry, SessionView } from '../protocol.js';
import { drawChart, setupZoom } from './chart.js';
import { api, byId, h } from './dom.js';
import { renderLiveControls, setupLive } from './live-mode.js';
import { renderContext, renderLog } from './panels.js';
import { newPlaygroundSession, renderPlaygroundControls, setupPlayground } from './playground-mode.js';
import { openReplay, renderReplayControls, setupReplay, stopPlaying } from './replay-mode.js';
import { errorText, MODES, onRender, state, type Mode } from './state.js';

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

/** Redraws everything for the current mode (coalesced); the modes ask for it through state.ts's `render`. */
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
  // The replay's settings from the address (`?catalog=&policy=&strictFailedWrites=`), as the server's API takes them.
  const catalog = params.get('catalog');
  if (catalog !== null && (catalog === state.info.autoCatalog || state.info.catalogs.some((c) => c.name === catalog))) {
    byId<HTMLSelectElement>('replay-catalog').value = catalog;
  }
  const policy = params.get('policy');
  if (policy !== null && state.info.policies.some((p) => p === policy)) byId<HTMLSelectElement>('replay-policy').value = policy;
  byId<HTMLInputElement>('replay-strict').checked = params.get('strictFailedWrites') === 'true';
  if (params.get('replay') !== null) await openReplay(params.get('replay')!);
  selectMode(MODES.includes(mode as Mode) ? (mode as Mode) : params.get('replay') !== null ? 'replay' : 'playground');
  await render();
  document.body.dataset.ready = 'true';
}

onRender(render);
start().catch((error: unknown) => {
  document.body.prepend(h('p', { class: 'error', role: 'alert' }, `The visualizer failed to start: ${errorText(error)}`));
});
