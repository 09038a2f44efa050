/**
 * The visualizer page's replay mode (browser code): steps through a
 * transcript as the audit replays it, run by run, a page of steps at a time
 * (the server answers one page; stepping past it fetches the next), with a
 * timeline of the steps and the audit's refusals.
 */
import type { CatalogFileResponse, ReplayResponse, ReplayRunResponse, ReplaySettings } from '../protocol.js';
import { api, ApiError, byId, fill, h } from './dom.js';
import { errorText, render, state } from './state.js';

/** Stops the replay's autoplay, if it runs. */
export function stopPlaying(): void {
  if (state.playTimer !== null) window.clearInterval(state.playTimer);
  state.playTimer = null;
}

/** Settings as query parameters, as the server reads them (`catalog`, `policy`, `strictFailedWrites`). */
function settingsQuery(settings: ReplaySettings): string {
  const query = new URLSearchParams({
    catalog: settings.catalog,
    policy: settings.policy,
    strictFailedWrites: String(settings.strictFailedWrites),
  });
  return query.toString();
}

/** The settings the replay's controls choose: catalog (default `auto`), policy and strict failed writes, as `pulse-safety audit` takes them. */
function chosenSettings(): ReplaySettings {
  return {
    catalog: byId<HTMLSelectElement>('replay-catalog').value,
    policy: byId<HTMLSelectElement>('replay-policy').value as ReplaySettings['policy'],
    strictFailedWrites: byId<HTMLInputElement>('replay-strict').checked,
  };
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
      `/api/replays/${encodeURIComponent(replay.id)}/runs/${run.run.index}?${settingsQuery(run.settings)}&from=${from}`,
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

/** The step buttons, position, refusals and timeline of the run shown. */
export function renderReplayControls(): void {
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
  // What the timeline shows: the settings, then the transcript, the run and the catalog.
  const key =
    run === null
      ? ''
      : `${run.settings.policy}/${run.settings.strictFailedWrites}/${state.replay?.id}/${run.run.index}/${run.settings.catalog}`;
  if (timeline.dataset.run !== key || timeline.dataset.page !== page) {
    timeline.dataset.run = key;
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

async function loadRun(index: number): Promise<void> {
  const replay = state.replay;
  if (replay === null) return;
  stopPlaying();
  try {
    state.run = await api<ReplayRunResponse>(
      'GET',
      `/api/replays/${encodeURIComponent(replay.id)}/runs/${index}?${settingsQuery(replay.settings)}`,
    );
    if (state.run.nextFrom !== null) state.pageSize = state.run.nextFrom - state.run.from;
    state.step = -1;
    byId<HTMLSelectElement>('replay-run').value = String(index);
    await render();
  } catch (error) {
    byId('replay-error').textContent = errorText(error);
  }
}

/** The audit's refusals in every run of the transcript, each a button to its step. */
function renderAllRefusals(replay: ReplayResponse): void {
  const listed = replay.refusals.length;
  const count = replay.refusalCount;
  byId('replay-refusal-count').textContent =
    count === 0
      ? 'The audit refuses nothing in this transcript.'
      : `The audit refuses ${count} in this transcript${listed < count ? ` (the first ${listed} listed)` : ''}`;
  fill(
    byId('replay-refusal-list'),
    ...replay.refusals.map((refusal) =>
      h(
        'li',
        {
          'data-run': refusal.run,
          'data-step': refusal.step,
          'data-subject': refusal.subject,
          'data-tool': refusal.tool ?? '',
          'data-rule': refusal.rule,
        },
        h(
          'button',
          { type: 'button', title: refusal.position },
          `${replay.runs[refusal.run]?.id ?? `run ${refusal.run}`} · step ${refusal.step + 1} · ${refusal.tool ?? 'final answer'} · ${refusal.rule}`,
        ),
      ),
    ),
  );
}

function showReplay(replay: ReplayResponse): Promise<void> {
  state.replay = replay;
  byId('replay-error').textContent = '';
  byId('replay-source').textContent = `${replay.source}: ${replay.runs.length} run${replay.runs.length === 1 ? '' : 's'}`;
  byId('replay-catalog-choice').textContent =
    `Catalog ${replay.catalogChoice}, policy ${replay.settings.policy}${replay.settings.strictFailedWrites ? ', strict failed writes' : ''}`;
  byId('replay-warning').textContent = replay.warning ?? '';
  renderAllRefusals(replay);
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

/** Opens transcript `id` (`demo`, `opened`, `r<n>`) under the chosen settings at its first run, or shows why not. */
export async function openReplay(id: string): Promise<void> {
  try {
    await showReplay(await api<ReplayResponse>('GET', `/api/replays/${encodeURIComponent(id)}?${settingsQuery(chosenSettings())}`));
  } catch (error) {
    byId('replay-error').textContent = errorText(error);
  }
}

/** Opens the transcript file the user picked, or says why it cannot be read; the picker is cleared, so the same file can be opened again. */
async function openReplayFile(event: Event): Promise<void> {
  const input = event.target as HTMLInputElement;
  const file = input.files?.[0];
  if (file === undefined) return;
  byId('replay-error').textContent = '';
  byId('replay-source').textContent = `Reading ${file.name}…`;
  try {
    const text = await file.text();
    await showReplay(await api<ReplayResponse>('POST', '/api/replays', { text, source: file.name, ...chosenSettings() }));
  } catch (error) {
    byId('replay-source').textContent = '';
    byId('replay-error').textContent = error instanceof ApiError ? error.message : `Cannot read ${file.name}: ${errorText(error)}`;
  } finally {
    input.value = '';
  }
}

/**
 * Opens the catalog file the user picked for replays (as `pulse-safety audit
 * --catalog <file>`), adds it to the catalogs, chooses it and replays again;
 * or says why the server refused it.
 */
async function openCatalogFile(event: Event): Promise<void> {
  const input = event.target as HTMLInputElement;
  const file = input.files?.[0];
  if (file === undefined) return;
  byId('replay-error').textContent = '';
  try {
    const opened = await api<CatalogFileResponse>('POST', '/api/catalogs', { text: await file.text(), source: file.name });
    const select = byId<HTMLSelectElement>('replay-catalog');
    select.append(h('option', { value: opened.id }, `${opened.name} (${opened.source})`));
    select.value = opened.id;
    await reopenReplay();
  } catch (error) {
    byId('replay-error').textContent = error instanceof ApiError ? error.message : `Cannot read ${file.name}: ${errorText(error)}`;
  } finally {
    input.value = '';
  }
}

/** Shows run `run` (loading it when another is shown) at step `step`. */
async function goToRefusal(run: number, step: number): Promise<void> {
  if (state.run?.run.index !== run) await loadRun(run);
  goToStep(step, true);
}

/** Opens the current replay again under the settings just chosen, at the run that was shown. */
async function reopenReplay(): Promise<void> {
  if (state.replay === null) return;
  const index = state.run?.run.index ?? 0;
  await openReplay(state.replay.id);
  if (index !== 0) await loadRun(index);
}

/** Fills the replay's catalogs (`auto` first, the default), policies and formats from the server, and wires its controls, file pickers and timeline. */
export function setupReplay(): void {
  const info = state.info!;
  fill(
    byId('replay-catalog'),
    h('option', { value: info.autoCatalog }, `${info.autoCatalog} (detected from the transcript)`),
    ...info.catalogs.map((c) => h('option', { value: c.name }, c.name)),
  );
  fill(byId('replay-policy'), ...info.policies.map((policy) => h('option', { value: policy }, policy)));
  byId<HTMLSelectElement>('replay-policy').value = info.defaultPolicy;
  byId('replay-formats').textContent = `Formats: ${info.formats.join(', ')}.`;
  byId<HTMLInputElement>('replay-catalog-file').addEventListener('change', (event) => void openCatalogFile(event));
  byId('replay-policy').addEventListener('change', () => void reopenReplay());
  byId('replay-strict').addEventListener('change', () => void reopenReplay());
  byId('replay-refusal-list').addEventListener('click', (event) => {
    const item = (event.target as Element).closest<HTMLLIElement>('li[data-run]');
    if (item) void goToRefusal(Number(item.dataset.run), Number(item.dataset.step));
  });
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
