/**
 * The visualizer page's context panel and event log (browser code): the
 * session's state, clock, context flags, pending recoveries and calls in
 * flight, and its log entries newest first, each with its decision. Times
 * are relative (`t+12 s`) in a replay, whose audit clock starts at 0, and
 * local clock times otherwise.
 */
import type { LogEntry, SessionView } from '../protocol.js';
import { byId, fill, h } from './dom.js';
import { state } from './state.js';

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

/** Shows a session's state, clock, context flags, pending recoveries and calls in flight; dashes when there is none. */
export function renderContext(view: SessionView | null): void {
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

/**
 * An entry's time, events and states: `12:00:01 · tool.succeeded · WRITING → VERIFYING`;
 * an entry that knows no state (a hook session's decision) shows its time only.
 */
function entryLine(entry: LogEntry): string {
  if (entry.stateBefore === '' && entry.stateAfter === '' && entry.events.length === 0) return formatTime(entry.at);
  return `${formatTime(entry.at)} · ${entry.events.join(', ') || 'no event'} · ${entry.stateBefore} → ${entry.stateAfter}`;
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
    h('div', { class: 'states' }, entryLine(entry)),
    decision && !decision.allowed
      ? h('p', { class: 'reason' }, decision.rule === null ? (decision.reason ?? '') : `${decision.rule}: ${decision.reason ?? ''}`)
      : null,
    decision?.toolResult
      ? h('details', {}, h('summary', {}, 'Tool result sent back to the model'), h('pre', {}, JSON.stringify(decision.toolResult, null, 2)))
      : decision && !decision.allowed && decision.message
        ? h('details', {}, h('summary', {}, 'Error'), h('pre', {}, decision.message))
        : null,
  );
}

/** Shows the log entries, newest first. */
export function renderLog(entries: LogEntry[]): void {
  fill(byId('log'), ...[...entries].reverse().map(logItem));
}
