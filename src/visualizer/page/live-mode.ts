/**
 * The visualizer page's live mode (browser code): lists the sessions that
 * applications stream with `@statelyai/inspect`, and the coding agents'
 * hook sessions when the server watches a hook state directory
 * (`serve --hooks`), and follows one, over the server's `/live` WebSocket
 * (reconnecting when it closes). A session no longer listed (a hook
 * session whose file is gone) is forgotten, and the first listed followed.
 */
import type { HookSessionInfo, LiveMessage, LiveSessionSummary } from '../protocol.js';
import { byId, fill, h } from './dom.js';
import { render, state } from './state.js';

/** The text of a session's button: label, state, and what else the list says of it. */
function sessionText(session: LiveSessionSummary): string {
  if (session.hook !== null) {
    const calls = session.hook.calls.length;
    return `${session.label} · ${session.state}${calls > 0 ? ` · ${calls} in flight` : ''} · ${session.events} decisions`;
  }
  return `${session.label} · ${session.state}${session.connected ? '' : ' · disconnected'} · ${session.events} events`;
}

/** A time as the local clock shows it, `HH:MM:SS`. */
function clock(at: number): string {
  return new Date(at).toLocaleTimeString([], { hour12: false });
}

/** Shows the followed hook session's file, agent, directory, calls in flight and stop refusals, or why it cannot be read. */
function renderHookInfo(hook: HookSessionInfo | null): void {
  byId('hook-info').hidden = hook === null;
  if (hook === null) return;
  const unreadable = byId('hook-unreadable');
  unreadable.hidden = hook.unreadable === null;
  unreadable.textContent =
    hook.unreadable === null
      ? ''
      : `This session file cannot be read (${hook.unreadable.code}): ${hook.unreadable.message}. The hook fails closed on it: reads allowed, writes and the stop refused.`;
  const field = (name: string, key: string, value: string | null) =>
    value === null ? [] : [h('dt', {}, name), h('dd', { 'data-hook': key }, value)];
  fill(
    byId('hook-fields'),
    ...field('Agent', 'host', hook.host),
    ...field('Session id', 'session', hook.hostSessionId),
    ...field('Directory', 'cwd', hook.cwd),
    ...field('File', 'file', hook.file),
    ...field('Created', 'created', hook.createdAt === null ? null : clock(hook.createdAt)),
    ...field('Updated', 'updated', hook.updatedAt === null ? null : clock(hook.updatedAt)),
    ...field('Stops refused in a row', 'stop-blocks', hook.stopBlocks === null ? null : String(hook.stopBlocks)),
  );
  byId('hook-calls-none').hidden = hook.calls.length > 0;
  fill(byId('hook-calls'), ...hook.calls.map((call) => h('li', {}, `${call.name} (${call.kind}) · ${clock(call.at)} · ${call.key}`)));
}

/** Lists the live sessions, the followed one pressed, each with its collision note; and the followed hook session's details. */
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
            'data-hook': session.hook !== null ? (session.hook.unreadable === null ? 'readable' : 'unreadable') : null,
            class: session.hook?.unreadable ? 'unreadable' : null,
            'aria-pressed': String(session.sessionId === state.followed),
          },
          sessionText(session),
        ),
        session.collision === null ? null : h('p', { class: 'error collision' }, session.collision),
      ),
    ),
  );
  const followed = state.liveSessions.find((session) => session.sessionId === state.followed);
  renderHookInfo(followed?.hook ?? null);
}

/** Takes the server's session list: forgets the sessions no longer in it, and follows the first one when none is followed. */
function listSessions(sessions: LiveSessionSummary[]): void {
  state.liveSessions = sessions;
  const listed = new Set(sessions.map((session) => session.sessionId));
  for (const id of [...state.liveDetails.keys()]) if (!listed.has(id)) state.liveDetails.delete(id);
  if (state.followed !== null && !listed.has(state.followed)) state.followed = null;
  if (state.followed === null && state.mode === 'live' && sessions[0]) state.followed = sessions[0].sessionId;
}

function connectLive(): void {
  const socket = new WebSocket(`ws://${location.host}/live`);
  socket.addEventListener('open', () => {
    byId('live-status').textContent = 'Listening for sessions.';
  });
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as LiveMessage;
    if (message.type === 'sessions') listSessions(message.sessions);
    else if (state.liveSessions.some((session) => session.sessionId === message.session.sessionId)) {
      state.liveDetails.set(message.session.sessionId, message.session);
    }
    if (state.mode === 'live') void render();
  });
  socket.addEventListener('close', () => {
    byId('live-status').textContent = 'Not connected to the visualizer server; retrying…';
    window.setTimeout(connectLive, 2000);
  });
}

/** Shows where to stream (and the hook state directory, when watched), lets the user pick the session to follow, and connects to `/live`. */
export function setupLive(): void {
  byId('inspect-url').textContent = state.info?.inspectUrl ?? '';
  const hooks = state.info?.hooksDirectory ?? null;
  byId('hooks-directory').hidden = hooks === null;
  byId('hooks-path').textContent = hooks ?? '';
  if (hooks !== null) byId('live-empty').textContent = 'No session has streamed yet, and no hook session is on disk.';
  byId('live-sessions').addEventListener('click', (event) => {
    const button = (event.target as Element).closest<HTMLButtonElement>('button[data-session]');
    if (button?.dataset.session === undefined) return;
    state.followed = button.dataset.session;
    void render();
  });
  connectLive();
}
