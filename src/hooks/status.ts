/**
 * `pulse-safety hook status` and `hook reset`: the hook sessions kept under
 * the state directory (`session-file.ts`), each with its state, its calls in
 * flight and its last decisions, and the files that cannot be read; and the
 * removal of a session (also a corrupt one) so it starts fresh.
 *
 * Spec: issue 25 items 2 and 6; ASSISTANT_SAFETY.md "The invariants" (the states).
 */
import { rm } from 'node:fs/promises';
import { isAbsolute, relative, resolve } from 'node:path';
import { createSessionGuard } from '../guard/session-guard.js';
import { printable } from '../util/printable.js';
import { readHookSessions, removeHookSession, type HookDecisionRecord, type HookSessionRecord } from './session-file.js';
import type { HookHost } from './types.js';

/** How many of a session's last decisions `hookStatus` keeps by default. */
export const STATUS_DECISIONS = 5;

/** A call the host asked about and has not reported back on yet. */
export interface HookCallInFlight {
  /** The key the call is tracked under: the host's call id, or a hash of its name and input. */
  key: string;
  tool: string;
  kind: string;
  targets: string[];
  /** When the before-tool hook saw it (epoch ms). */
  at: number;
}

/** One live session, as `hook status` shows it. */
export interface HookSessionStatus {
  file: string;
  host: HookHost;
  sessionId: string;
  cwd?: string;
  transcriptPath?: string;
  /** Epoch ms. */
  createdAt: number;
  /** Epoch ms. */
  updatedAt: number;
  /** The machine's state (`RESOLVING`, `READING`, `WRITING`, `VERIFYING`); `RESOLVING` for a session with no snapshot yet; `UNREADABLE` when the snapshot does not restore. */
  state: string;
  inFlight: HookCallInFlight[];
  /** The last decisions, oldest first. */
  decisions: HookDecisionRecord[];
  /** Stops refused in a row. */
  stopBlocks: number;
}

/** A session file that cannot be read: its path, the code (`HOOK_STATE_UNREADABLE`, ...) and why. */
export interface HookSessionProblem {
  file: string;
  code: string;
  message: string;
}

/** The result of `hookStatus`. */
export interface HookStatus {
  stateDir: string;
  /** Most recently updated first. */
  sessions: HookSessionStatus[];
  unreadable: HookSessionProblem[];
}

/** The machine's state of a record. */
function stateOf(record: HookSessionRecord): string {
  if (record.snapshot === null) return 'RESOLVING';
  try {
    return createSessionGuard({ snapshot: record.snapshot }).state;
  } catch {
    return 'UNREADABLE';
  }
}

/**
 * Every session under `stateDir`, and every file there that cannot be read.
 * @param options.decisions how many last decisions to keep per session (default `STATUS_DECISIONS`).
 */
export async function hookStatus(stateDir: string, options: { decisions?: number } = {}): Promise<HookStatus> {
  const keep = options.decisions ?? STATUS_DECISIONS;
  const sessions: HookSessionStatus[] = [];
  const unreadable: HookSessionProblem[] = [];
  for (const found of await readHookSessions(stateDir)) {
    if ('error' in found) {
      unreadable.push({ file: found.path, code: found.error.code, message: found.error.message });
      continue;
    }
    const { record } = found;
    sessions.push({
      file: found.path,
      host: record.host,
      sessionId: record.sessionId,
      ...(record.cwd === undefined ? {} : { cwd: record.cwd }),
      ...(record.transcriptPath === undefined ? {} : { transcriptPath: record.transcriptPath }),
      createdAt: record.createdAt,
      updatedAt: record.updatedAt,
      state: stateOf(record),
      inFlight: Object.entries(record.calls)
        .map(([key, call]) => ({ key, tool: call.name, kind: call.kind, targets: call.targets, at: call.at }))
        .sort((a, b) => a.at - b.at),
      decisions: keep > 0 ? record.decisions.slice(-keep) : [],
      stopBlocks: record.stopBlocks,
    });
  }
  sessions.sort((a, b) => b.updatedAt - a.updatedAt);
  return { stateDir, sessions, unreadable };
}

/** An epoch-ms time as `YYYY-MM-DD HH:MM:SS` UTC. */
function time(at: number): string {
  return Number.isFinite(at)
    ? new Date(at)
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d+Z$/, 'Z')
    : String(at);
}

/**
 * `hookStatus`'s result as text, one block per session; every value from a
 * session file goes through `printable`, so a hostile file cannot forge lines
 * or send terminal escapes.
 */
export function formatHookStatus(status: HookStatus): string {
  const p = (value: unknown) => printable(String(value));
  const lines: string[] = [
    `hook sessions in ${p(status.stateDir)}: ${status.sessions.length} live, ${status.unreadable.length} unreadable`,
  ];
  for (const s of status.sessions) {
    lines.push('');
    lines.push(`${p(s.host)} ${p(s.sessionId)}: ${p(s.state)}${s.stopBlocks > 0 ? `, ${s.stopBlocks} stop(s) refused in a row` : ''}`);
    if (s.cwd !== undefined) lines.push(`  cwd ${p(s.cwd)}`);
    lines.push(`  started ${time(s.createdAt)}, last event ${time(s.updatedAt)}`);
    if (s.inFlight.length === 0) lines.push('  no calls in flight');
    for (const call of s.inFlight) {
      lines.push(
        `  in flight: ${p(call.tool)} (${p(call.kind)}${call.targets.length > 0 ? ` ${p(call.targets.join(', '))}` : ''}) since ${time(call.at)}`,
      );
    }
    for (const d of s.decisions) {
      const what = [
        d.tool === undefined ? '' : ` ${p(d.tool)}`,
        d.rule === undefined ? '' : ` [${p(d.rule)}]`,
        d.code === undefined ? '' : ` ${p(d.code)}`,
      ].join('');
      lines.push(`  ${time(d.at)} ${p(d.event)}${what}: ${p(d.answer)}`);
    }
  }
  if (status.unreadable.length > 0) {
    lines.push('');
    lines.push('unreadable (writes and the stop are refused in these sessions until they are reset):');
    for (const u of status.unreadable) lines.push(`  ${p(u.file)}: ${p(u.code)}: ${p(u.message)}`);
  }
  return lines.join('\n') + '\n';
}

/** Removes the session of `host` with id `sessionId` (also a corrupt one); resolves true when there was one. */
export async function resetHookSession(stateDir: string, host: HookHost, sessionId: string): Promise<boolean> {
  return removeHookSession(stateDir, host, sessionId);
}

/**
 * Removes one session file by its path, as `hook status` lists it (for a
 * corrupt file, whose session id cannot be read).
 * @throws Error when `file` is not a `.json` file under `stateDir`.
 */
export async function resetHookSessionFile(stateDir: string, file: string): Promise<void> {
  const inside = relative(resolve(stateDir), resolve(file));
  if (inside === '' || inside.startsWith('..') || isAbsolute(inside) || !inside.endsWith('.json')) {
    throw new Error(`${file} is not a session file of ${stateDir}`);
  }
  await rm(resolve(file), { force: true });
}

/** Removes every session under `stateDir`, readable or not; resolves to how many files were removed. */
export async function resetAllHookSessions(stateDir: string): Promise<number> {
  let removed = 0;
  for (const found of await readHookSessions(stateDir)) {
    if ('record' in found && (await removeHookSession(stateDir, found.record.host, found.record.sessionId))) removed++;
    else if ('error' in found) {
      await rm(found.path, { force: true });
      removed++;
    }
  }
  return removed;
}
