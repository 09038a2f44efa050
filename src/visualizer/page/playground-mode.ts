/**
 * The visualizer page's playground mode (browser code): drives a real
 * session guard on the server, one control per event: a tool call (by name
 * and arguments, or a catalog's example of each kind), each call's outcome,
 * an answer, verification, resets and the clock.
 */
import type { PlaygroundCommand, PlaygroundCommandResponse, PlaygroundResponse } from '../protocol.js';
import { api, byId, fill, h } from './dom.js';
import { catalogOptions, errorText, render, state } from './state.js';

const KIND_LABELS: Record<string, string> = {
  resolve: 'resolve',
  read: 'read',
  write: 'write',
  user_input: 'user input',
  neutral: 'neutral',
};

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

/**
 * Starts a playground session with the options chosen in the form, and
 * makes its default catalog the call form's; or shows why the server
 * refused it.
 */
export async function newPlaygroundSession(): Promise<void> {
  byId('session-error').textContent = '';
  try {
    state.playground = await api<PlaygroundResponse>('POST', '/api/playground', {
      catalog: byId<HTMLSelectElement>('new-catalog').value,
      autoCompleteVerification: byId<HTMLInputElement>('new-auto').checked,
      strictFailedWrites: byId<HTMLInputElement>('new-strict').checked,
    });
    byId<HTMLSelectElement>('call-catalog').value = state.playground.catalog;
    renderExamples();
    await render();
  } catch (error) {
    byId('session-error').textContent = errorText(error);
  }
}

/** One row per call in flight, with its succeeded and failed buttons. */
export function renderPlaygroundControls(): void {
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

/** Fills the playground's catalogs and examples and wires its form and buttons. */
export function setupPlayground(): void {
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
