/**
 * The visualizer page's live mode (browser code): lists the sessions that
 * applications stream with `@statelyai/inspect`, and follows one, over the
 * server's `/live` WebSocket (reconnecting when it closes).
 */
import type { LiveMessage } from '../protocol.js';
import { byId, fill, h } from './dom.js';
import { render, state } from './state.js';

/** Lists the live sessions, the followed one pressed, each with its collision note. */
export function renderLiveControls(): void {
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

/** Shows where to stream, lets the user pick the session to follow, and connects to `/live`. */
export function setupLive(): void {
  byId('inspect-url').textContent = state.info?.inspectUrl ?? '';
  byId('live-sessions').addEventListener('click', (event) => {
    const button = (event.target as Element).closest<HTMLButtonElement>('button[data-session]');
    if (button?.dataset.session === undefined) return;
    state.followed = button.dataset.session;
    void render();
  });
  connectLive();
}
