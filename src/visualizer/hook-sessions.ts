/**
 * Coding agents' hook sessions as live sessions of the visualizer
 * (`pulse-safety serve --hooks`): each file of the hook state directory,
 * as the store reads it (`readHookSessions`, src/hooks/session-file.ts),
 * becomes a `LiveSessionDetail` whose view is the session guard restored
 * from the file's snapshot (`createSessionGuard({ snapshot })`), and whose
 * log is the file's last decisions. A file that cannot be read, or whose
 * record does not have the shape read here, is a session of its own shown
 * as unreadable, with the store's code: the hook fails closed on it.
 *
 * The files are untrusted input (any local process can write there): every
 * field is read through a zod schema, texts are cut, and nothing here
 * throws on what a file holds.
 *
 * Spec: ASSISTANT_SAFETY.md "States", "Blocked calls and recovery"; issue
 * 25 item 6.
 */
import { relative, sep } from 'node:path';
import { z } from 'zod';
import { safetyMachine } from '../../machines/safety.machine.js';
import type { BlockRule } from '../../machines/safety.types.js';
import { createSessionGuard } from '../guard/session-guard.js';
import type { readHookSessions } from '../hooks/session-file.js';
import { cut, errorMessage, MAX_HOOK_TEXT, MAX_NAME_LENGTH, MAX_STATE_TEXT } from './bounds.js';
import { sessionView } from './model.js';
import type { DecisionView, HookCallView, HookSessionInfo, LiveSessionDetail, LogEntry } from './protocol.js';

/** One entry of `readHookSessions`: a session file read, or one that could not be. */
export type HookSessionEntry = Awaited<ReturnType<typeof readHookSessions>>[number];

/** The code an unreadable file is shown with when its error names none. */
export const HOOK_STATE_UNREADABLE = 'HOOK_STATE_UNREADABLE';

/** A finite time (epoch ms). */
const time = z.number().finite();

/** One decision of the gate as the session file keeps it; the fields the view reads. */
const decisionSchema = z.looseObject({
  at: time,
  /** The host's own event name (`PreToolUse`, `Stop`, ...). */
  event: z.string(),
  tool: z.string().optional(),
  /** The hook's answer: `allow`, `deny`, `ask`, `block-stop` or `continue`. */
  answer: z.string(),
  code: z.string().optional(),
  rule: z.string().optional(),
  reason: z.string().optional(),
});

/** A call admitted and not yet settled; the fields the view reads. */
const callSchema = z.looseObject({ name: z.string(), kind: z.string(), at: time });

/** A hook session record; the fields the view reads (the store validates the rest). */
const recordSchema = z.looseObject({
  host: z.string().min(1),
  sessionId: z.string().min(1),
  cwd: z.string().optional(),
  createdAt: time,
  updatedAt: time,
  snapshot: z.unknown(),
  calls: z.record(z.string(), callSchema).optional(),
  decisions: z.array(decisionSchema).optional(),
  stopBlocks: z.number().optional(),
});

type DecisionRecord = z.infer<typeof decisionSchema>;

/** The live session id of a session file: `hook:<file relative to the state directory>`, `/`-separated. */
export function hookSessionId(stateDir: string, path: string): string {
  return `hook:${hookFile(stateDir, path)}`;
}

/** A session file relative to the state directory, `/`-separated. */
function hookFile(stateDir: string, path: string): string {
  const file = relative(stateDir, path);
  return (file === '' || file.startsWith('..') ? path : file).split(sep).join('/');
}

/** The code and message of what a file's read threw: the store's code (`HOOK_STATE_UNREADABLE`, ...) when it names one. */
function unreadableOf(error: unknown): { code: string; message: string } {
  let code: unknown;
  try {
    code = (error as { code?: unknown } | null)?.code;
  } catch {
    code = undefined;
  }
  return {
    code: typeof code === 'string' && /^[A-Z][A-Z0-9_]{0,63}$/.test(code) ? code : HOOK_STATE_UNREADABLE,
    message: cut(error instanceof Error ? error.message : errorMessage(error), MAX_HOOK_TEXT),
  };
}

/**
 * The view of one decision: a tool call's check (`allow`, `deny`, `ask`),
 * or the stop's (`block-stop`, or `continue` without a tool); null for an
 * outcome recorded after a call (`continue` with a tool).
 */
function decisionOf(d: DecisionRecord): DecisionView | null {
  const refused = (subject: 'tool' | 'answer'): DecisionView => {
    const reason = d.reason === undefined ? null : cut(d.reason, MAX_HOOK_TEXT);
    return {
      subject,
      allowed: false,
      code: d.code === undefined ? null : cut(d.code, MAX_NAME_LENGTH),
      rule: d.rule === undefined ? null : (cut(d.rule, MAX_NAME_LENGTH) as BlockRule),
      reason,
      message: null, // the reason is the hook's whole text: what the model (or, for the stop, the agent) was told
      toolResult: null,
      kind: null,
    };
  };
  const allowed = (subject: 'tool' | 'answer'): DecisionView => ({
    subject,
    allowed: true,
    code: null,
    rule: null,
    reason: null,
    message: null,
    toolResult: null,
    kind: null,
  });
  switch (d.answer) {
    case 'allow':
      return allowed('tool');
    case 'deny':
    case 'ask':
      return refused('tool');
    case 'block-stop':
      return refused('answer');
    case 'continue':
      return d.tool === undefined ? allowed('answer') : null;
    default:
      return refused(d.tool === undefined ? 'answer' : 'tool'); // an answer this version does not know: shown as a refusal, never as allowed
  }
}

/**
 * A decision as a log entry: `PreToolUse Bash → deny`. The file keeps no
 * state per decision, so the entry has none (the view has the state now).
 */
function logEntryOf(d: DecisionRecord, index: number): LogEntry {
  const tool = d.tool === undefined ? '' : ` ${cut(d.tool, MAX_NAME_LENGTH)}`;
  const failed = d.answer === 'continue' && d.code !== undefined ? ` (${cut(d.code, MAX_NAME_LENGTH)})` : '';
  return {
    seq: index + 1,
    at: d.at,
    label: `${cut(d.event, MAX_NAME_LENGTH)}${tool} → ${cut(d.answer, MAX_NAME_LENGTH)}${failed}`,
    events: [],
    stateBefore: '',
    stateAfter: '',
    decision: decisionOf(d),
    recovered: null,
    taken: [],
  };
}

/**
 * The live session of an unreadable file: listed, with no view, state
 * `unreadable (<code>)`, first seen at `seenAt` (epoch ms). When the file
 * was read before (`previous`), its agent, session id and directory are
 * still named; its calls, decisions and state are not (the file no longer
 * says them).
 */
function unreadableDetail(file: string, error: unknown, seenAt: number, previous: HookSessionInfo | null): LiveSessionDetail {
  const unreadable = unreadableOf(error);
  const known = previous !== null && previous.host !== null && previous.hostSessionId !== null ? previous : null;
  const hook: HookSessionInfo = {
    file,
    host: known?.host ?? null,
    hostSessionId: known?.hostSessionId ?? null,
    cwd: known?.cwd ?? null,
    createdAt: known?.createdAt ?? null,
    updatedAt: null,
    calls: [],
    stopBlocks: null,
    unreadable,
  };
  const label =
    known === null
      ? `hook file ${file}`
      : [`${known.host} hook`, known.hostSessionId, ...(known.cwd === null ? [] : [known.cwd])].join(' · ');
  return {
    sessionId: `hook:${file}`,
    actorSessionId: cut(known?.hostSessionId ?? file, MAX_NAME_LENGTH),
    name: known?.host ?? 'hook session',
    label: cut(label, 2 * MAX_NAME_LENGTH + 60),
    collision: null,
    machineId: null,
    state: `unreadable (${unreadable.code})`,
    connected: true,
    firstSeenAt: known?.createdAt ?? seenAt,
    lastSeenAt: seenAt,
    events: 0,
    hook,
    view: null,
    log: [],
  };
}

/**
 * A hook session file as a live session: its guard restored from the
 * snapshot (the initial session when it has none) and viewed at the file's
 * `updatedAt`, its calls in flight and its last decisions. A file that could
 * not be read, or that holds no record of the shape read here, or whose
 * snapshot does not validate, is shown as unreadable (no view) with the
 * store's code, `HOOK_STATE_UNREADABLE` when it gives none.
 *
 * @param seenAt when the server first saw an unreadable file (epoch ms); its time in the list.
 * @param previous what the same file said when last read, if it was: an
 *   unreadable file still names its agent and session.
 * Never throws.
 */
export function hookSessionDetail(
  stateDir: string,
  entry: HookSessionEntry,
  seenAt: number,
  previous: HookSessionInfo | null = null,
): LiveSessionDetail {
  const path = entry.path;
  const unreadable = (error: unknown) => unreadableDetail(hookFile(stateDir, path), error, seenAt, previous);
  if ('error' in entry) return unreadable(entry.error);
  try {
    const parsed = recordSchema.safeParse(entry.record);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const where = issue.path.map(String).join('.') || '(root)';
      return unreadable(new Error(`not a hook session record: ${where}: ${issue.message}`));
    }
    const record = parsed.data;
    let guard;
    try {
      // The session as the next hook would restore it, its clock at the last update.
      guard = createSessionGuard({ now: () => record.updatedAt, ...(record.snapshot === null ? {} : { snapshot: record.snapshot }) });
    } catch (error) {
      return unreadable(error);
    }
    const context = structuredClone(guard.context);
    const view = sessionView(safetyMachine, safetyMachine.resolveState({ value: guard.state, context }), record.updatedAt);
    const file = hookFile(stateDir, path);
    const calls: HookCallView[] = Object.entries(record.calls ?? {})
      .map(([key, call]) => ({
        key: cut(key, MAX_NAME_LENGTH),
        name: cut(call.name, MAX_NAME_LENGTH),
        kind: cut(call.kind, MAX_NAME_LENGTH),
        at: call.at,
      }))
      .sort((a, b) => a.at - b.at);
    const decisions = record.decisions ?? [];
    const host = cut(record.host, MAX_NAME_LENGTH);
    const hostSessionId = cut(record.sessionId, MAX_NAME_LENGTH);
    const cwd = record.cwd === undefined ? null : cut(record.cwd, MAX_HOOK_TEXT);
    return {
      sessionId: `hook:${file}`,
      actorSessionId: hostSessionId,
      name: host,
      label: cut([`${host} hook`, hostSessionId, ...(cwd === null ? [] : [cwd])].join(' · '), 2 * MAX_NAME_LENGTH + 60),
      collision: null,
      machineId: safetyMachine.id,
      state: cut(view.state, MAX_STATE_TEXT),
      connected: true,
      firstSeenAt: record.createdAt,
      lastSeenAt: record.updatedAt,
      events: decisions.length,
      hook: {
        file,
        host,
        hostSessionId,
        cwd,
        createdAt: record.createdAt,
        updatedAt: record.updatedAt,
        calls,
        stopBlocks: record.stopBlocks ?? 0,
        unreadable: null,
      },
      view,
      log: decisions.map(logEntryOf),
    };
  } catch (error) {
    return unreadable(new Error(`the session cannot be shown: ${errorMessage(error)}`));
  }
}
