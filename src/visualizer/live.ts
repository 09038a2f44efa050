/**
 * Live inspection: sessions an application streams to the visualizer with
 * `@statelyai/inspect`'s WebSocket inspector (`createWebSocketInspector({
 * url: 'ws://127.0.0.1:<port>/inspect' })`). The hub keeps each actor's latest
 * snapshot and an event log; for a machine it knows (one listed in
 * `stately.config.json`) it also works out each event's transitions and the
 * gate's decision with XState's pure `transition()`.
 *
 * Sessions are kept per inspector connection and actor session id: XState
 * numbers actors per copy of the library (`x:0`, ...), so ids repeat across
 * processes and across two copies in one application. An `@xstate.actor`
 * announcing an id already announced on its connection is another actor (an
 * actor is announced once): a session of its own (`#2`), both marked as
 * sharing the id, the id's later messages going to the newest (nothing on the
 * wire tells them apart). Each session has a label for the page's list.
 *
 * Coding agents' hook sessions (`pulse-safety serve --hooks`) are kept
 * beside the streamed ones, as the hook state directory's watcher gives them
 * (hook-watcher.ts), and listed with them.
 *
 * Inspection events are untrusted input (any local process can send them):
 * each message is bounded in nesting before it is parsed, validated with zod
 * (a safety machine snapshot field by field, see safety-snapshot.ts), its
 * streamed definition bounded (definitions.ts), and a bad one is dropped
 * without touching any session. Anything a message or a view still throws
 * is caught: the message (or the view) is dropped and the kind of failure
 * logged once (`DropLog`); nothing a client sends can stop the server.
 *
 * Spec: ASSISTANT_SAFETY.md "Blocked calls and recovery" (decisions shown
 * with their structured tool result).
 */
import { type AnyEventObject, type AnyMachineSnapshot, type AnyStateMachine, type EventObject } from 'xstate';
import { z } from 'zod';
import { safetyMachine } from '../../machines/safety.machine.js';
import type { GateDecidedEvent } from '../../machines/safety.types.js';
import { cut, DropLog, errorMessage, jsonTextDepth, MAX_JSON_DEPTH, MAX_NAME_LENGTH, MAX_STATE_TEXT } from './bounds.js';
import { DefinitionStore, type StreamedDefinition } from './definitions.js';
import { decisionView, selectedTransitions, sessionView, stateText, takeEvents } from './model.js';
import type { DecisionView, LiveSessionDetail, LiveSessionSummary, LogEntry, SessionView } from './protocol.js';
import { validateSafetySnapshot } from './safety-snapshot.js';

/** At most this many sessions are kept; the least recently seen go first. */
export const MAX_LIVE_SESSIONS = 100;
/** At most this many log entries are kept per session; the oldest go first. */
export const MAX_LIVE_LOG = 500;

const name = z.string().min(1).max(MAX_NAME_LENGTH);
const snapshotSchema = z.looseObject({
  value: z.unknown().optional(),
  context: z.unknown().optional(),
  status: z.enum(['active', 'done', 'error', 'stopped']).optional(),
});
const eventSchema = z.looseObject({ type: z.string().max(MAX_NAME_LENGTH) });

/** The inspection events of `@statelyai/inspect` (0.7) the hub reads; other fields are ignored. */
export const inspectionEventSchema = z.discriminatedUnion('type', [
  z.looseObject({
    type: z.literal('@xstate.actor'),
    sessionId: name,
    name: z.string().max(MAX_NAME_LENGTH).optional().nullable(),
    definition: z.string().optional().nullable(),
    snapshot: snapshotSchema.optional().nullable(),
  }),
  z.looseObject({ type: z.literal('@xstate.event'), sessionId: name, event: eventSchema }),
  z.looseObject({
    type: z.literal('@xstate.snapshot'),
    sessionId: name,
    snapshot: snapshotSchema,
    event: eventSchema.optional().nullable(),
  }),
]);

type StreamedSnapshot = z.infer<typeof snapshotSchema>;

/** The state value as text, cut to `MAX_STATE_TEXT` characters. */
function shortState(value: unknown): string {
  return value === undefined ? '(unknown)' : cut(stateText(value), MAX_STATE_TEXT);
}

interface LiveSession {
  /**
   * `<connection>/<actor session id>`: actor session ids (`x:0`) repeat
   * across processes, and across copies of XState in one process; a second
   * actor announcing the same id on one connection is `<connection>/<actor
   * session id>#<n>`.
   */
  sessionId: string;
  actorSessionId: string;
  name: string;
  /** Whether an `@xstate.actor` message announced it (a second announcement is another actor). */
  announced: boolean;
  /** 1 for the first actor with this session id on its connection, 2 for the next, ... */
  actorNumber: number;
  /** Why this session may hold another actor's events (see `LiveSessionSummary.collision`), or null. */
  collision: string | null;
  /** The machine the actor runs (configured or streamed; its definition may since have been evicted), or null. */
  machineId: string | null;
  value: unknown;
  context: unknown;
  status: string;
  /** The latest `at` of an event, else the server clock: the session's "now". */
  now: number;
  /** The inspector connection it streams on, and whether that is still open. */
  connection: number;
  connected: boolean;
  firstSeenAt: number;
  lastSeenAt: number;
  events: number;
  log: LogEntry[];
}

function eventLabel(event: EventObject): string {
  const fields = event as Record<string, unknown>;
  const parts = [event.type];
  if (typeof fields.tool === 'string') parts.push(cut(fields.tool, MAX_NAME_LENGTH));
  if (typeof fields.kind === 'string') parts.push(`(${cut(fields.kind, MAX_NAME_LENGTH)})`);
  if (typeof fields.callId === 'string') parts.push(`#${cut(fields.callId, MAX_NAME_LENGTH)}`);
  return parts.join(' ');
}

/** Hub of the sessions streamed by inspected applications. */
export class LiveHub {
  private readonly sessionsById = new Map<string, LiveSession>();
  /** `<connection>/<actor session id>` to the session its messages go to now (the newest announced). */
  private readonly routes = new Map<string, string>();
  /** Coding agents' hook sessions (`serve --hooks`), by id `hook:<file>`: as the watcher read them. */
  private readonly hookSessions = new Map<string, LiveSessionDetail>();
  private readonly definitions: DefinitionStore;
  private readonly onChange: (sessionId: string) => void;
  private readonly clock: () => number;
  private readonly drops: DropLog;
  /** The configured machines (trusted code, whose actions may run); streamed definitions are not. */
  private readonly configured: ReadonlySet<AnyStateMachine>;

  /**
   * @param machines the machines the server is configured with, by id (never
   *   changed; streamed definitions are kept apart, bounded, see definitions.ts).
   * @param onChange called after a session changed.
   * @param clock the server clock (epoch ms), for sessions whose events carry no `at`.
   * @param drops where dropped messages and failed views are counted and logged once per kind.
   */
  constructor(
    machines: ReadonlyMap<string, AnyStateMachine>,
    onChange: (sessionId: string) => void,
    clock: () => number = Date.now,
    drops: DropLog = new DropLog(() => {}),
  ) {
    this.definitions = new DefinitionStore(machines);
    this.configured = new Set(machines.values());
    this.onChange = onChange;
    this.clock = clock;
    this.drops = drops;
  }

  /** Summaries of all sessions, streamed and hook sessions, most recently seen first. Never throws. */
  sessions(): LiveSessionSummary[] {
    const streamed = [...this.sessionsById.values()].map((s) => this.summary(s));
    const hooks = [...this.hookSessions.values()].map(({ view: _view, log: _log, ...summary }) => summary);
    return [...streamed, ...hooks].sort((a, b) => b.lastSeenAt - a.lastSeenAt);
  }

  /**
   * Shows a coding agent's hook session, or its change (`serve --hooks`,
   * hook-watcher.ts): kept as given, under its id (`hook:<file>`), apart
   * from the streamed sessions and their bound (the watcher keeps at most
   * `MAX_HOOK_SESSIONS`).
   */
  putHookSession(detail: LiveSessionDetail): void {
    this.hookSessions.set(detail.sessionId, detail);
    this.onChange(detail.sessionId);
  }

  /** Removes a hook session (its file is gone). */
  removeHookSession(sessionId: string): void {
    if (this.hookSessions.delete(sessionId)) this.onChange(sessionId);
  }

  /**
   * One session in full, or undefined. Never throws: a view that fails to
   * build is dropped (`view: null`) and logged once.
   */
  session(sessionId: string): LiveSessionDetail | undefined {
    const hook = this.hookSessions.get(sessionId);
    if (hook !== undefined) return { ...hook, log: [...hook.log] };
    const session = this.sessionsById.get(sessionId);
    if (session === undefined) return undefined;
    return { ...this.summary(session), view: this.view(session), log: [...session.log] };
  }

  /** The streamed definition of a machine id (not a configured machine), or undefined. */
  definition(machineId: string): StreamedDefinition | undefined {
    return this.definitions.get(machineId);
  }

  /** Streamed sessions kept, hook sessions shown, streamed definitions kept and their total size (UTF-8 bytes). */
  stats(): { liveSessions: number; hookSessions: number; definitions: number; definitionBytes: number } {
    return { liveSessions: this.sessionsById.size, hookSessions: this.hookSessions.size, ...this.definitions.stats() };
  }

  /** Streamed definitions kept whose latest sender is `<connection>/<actor session id>` (every actor announcing that id there). */
  definitionsOf(sessionId: string): number {
    return this.definitions.ownedBy(sessionId);
  }

  /** An application's inspector connection closed: its sessions are marked disconnected. */
  disconnect(connection: number): void {
    for (const [key, sessionId] of this.routes) {
      if (this.sessionsById.get(sessionId)?.connection === connection) this.routes.delete(key);
    }
    for (const session of this.sessionsById.values()) {
      if (session.connection === connection && session.connected) {
        session.connected = false;
        this.onChange(session.sessionId);
      }
    }
  }

  /**
   * Reads one WebSocket message of an application's inspector. Returns false
   * (and changes no session) when it is not a valid inspection event: nested
   * more than `MAX_JSON_DEPTH` deep, not JSON, not an inspection event, or a
   * safety machine snapshot that does not validate. Never throws: what
   * applying a message throws drops the message. Each kind of drop is
   * logged once.
   */
  receive(connection: number, data: string): boolean {
    try {
      return this.read(connection, data);
    } catch (error) {
      this.drops.report('inspection message that failed to apply', errorMessage(error));
      return false;
    }
  }

  private read(connection: number, data: string): boolean {
    if (jsonTextDepth(data, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
      this.drops.report('inspection message nested too deep', `nested more than ${MAX_JSON_DEPTH} arrays or objects deep`);
      return false;
    }
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch (error) {
      this.drops.report('inspection message that is not JSON', errorMessage(error));
      return false;
    }
    const parsed = inspectionEventSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      this.drops.report('message that is not an inspection event', `${issue.path.join('.') || '(root)'}: ${issue.message}`);
      return false;
    }
    const message = parsed.data;
    let existing = this.current(connection, message.sessionId);
    switch (message.type) {
      case '@xstate.actor': {
        // A second announcement of a session id on one connection is another
        // actor (an actor is announced once): a new session, not a merge.
        const other = existing !== undefined && existing.announced ? existing : undefined;
        if (other !== undefined) existing = undefined;
        let machineId = existing?.machineId ?? null;
        if (typeof message.definition === 'string') {
          // Owned by the actor session id on its connection, whichever actor announced it, so the per-owner bound holds.
          const outcome = this.definitions.add(`${connection}/${message.sessionId}`, message.definition);
          if (outcome.ok) machineId = outcome.machineId;
          else this.drops.report('machine definition', outcome.reason);
        }
        // A new machine starts from its announced snapshot alone.
        const sameMachine = existing !== undefined && existing.machineId === machineId;
        const snapshot = this.checked(machineId, message.snapshot ?? {}, sameMachine ? existing : undefined);
        if (snapshot === null) return false;
        const session = other !== undefined ? this.another(other) : this.touch(connection, message.sessionId);
        session.announced = true;
        if (!sameMachine) {
          session.value = undefined;
          session.context = undefined;
        }
        session.machineId = machineId;
        session.name = cut(message.name || machineId || session.actorSessionId, MAX_NAME_LENGTH);
        this.applySnapshot(session, snapshot);
        this.onChange(session.sessionId);
        if (other !== undefined) this.onChange(other.sessionId);
        return true;
      }
      case '@xstate.event': {
        const session = this.touch(connection, message.sessionId);
        this.applyEvent(session, message.event as EventObject);
        this.onChange(session.sessionId);
        return true;
      }
      case '@xstate.snapshot': {
        const snapshot = this.checked(existing?.machineId ?? null, message.snapshot, existing);
        if (snapshot === null) return false;
        const session = this.touch(connection, message.sessionId);
        this.applySnapshot(session, snapshot);
        this.onChange(session.sessionId);
        return true;
      }
    }
  }

  /** The session an actor's messages on a connection go to now, if any. */
  private current(connection: number, actorSessionId: string): LiveSession | undefined {
    const sessionId = this.routes.get(`${connection}/${actorSessionId}`);
    return sessionId === undefined ? undefined : this.sessionsById.get(sessionId);
  }

  /**
   * A new session for another actor announcing `other`'s session id on
   * `other`'s connection; both are marked, and the id's later messages go
   * to the new one.
   */
  private another(other: LiveSession): LiveSession {
    const collision = `another actor announced session id ${other.actorSessionId} on the same inspector connection (two copies of XState, or two actor systems, on one inspector); their messages cannot be told apart, and later ones go to the newest. Give each its own inspector (createWebSocketInspector) to keep them apart.`;
    other.collision = collision;
    const session = this.create(other.connection, other.actorSessionId, other.actorNumber + 1);
    session.collision = collision;
    return session;
  }

  /**
   * A streamed snapshot checked against the session's machine: for the
   * safety machine, value and context (merged with what the session has)
   * must validate; the validated parts replace the streamed ones. Null (and
   * the drop logged) when they do not.
   */
  private checked(machineId: string | null, snapshot: StreamedSnapshot, session: LiveSession | undefined): StreamedSnapshot | null {
    if (machineId !== safetyMachine.id) return snapshot;
    const value = snapshot.value !== undefined ? snapshot.value : session?.value;
    const context = snapshot.context !== undefined ? snapshot.context : session?.context;
    const result = validateSafetySnapshot(value, context);
    if (!result.ok) {
      this.drops.report('invalid safety snapshot', result.error);
      return null;
    }
    return {
      ...(snapshot.status !== undefined ? { status: snapshot.status } : {}),
      ...(snapshot.value !== undefined ? { value: result.parts.value } : {}),
      ...(snapshot.context !== undefined ? { context: result.parts.context } : {}),
    };
  }

  /** The session an actor's messages go to, created when there is none; marked as seen now. */
  private touch(connection: number, actorSessionId: string): LiveSession {
    const session = this.current(connection, actorSessionId) ?? this.create(connection, actorSessionId, 1);
    session.lastSeenAt = this.clock();
    return session;
  }

  /** A new session, where the actor's later messages on the connection go; the least recently seen is evicted past `MAX_LIVE_SESSIONS`. */
  private create(connection: number, actorSessionId: string, actorNumber: number): LiveSession {
    const now = this.clock();
    const route = `${connection}/${actorSessionId}`;
    const sessionId = actorNumber === 1 ? route : `${route}#${actorNumber}`;
    const session: LiveSession = {
      sessionId,
      actorSessionId,
      name: actorSessionId,
      announced: false,
      actorNumber,
      collision: null,
      machineId: null,
      value: undefined,
      context: undefined,
      status: 'active',
      now,
      connection,
      connected: true,
      firstSeenAt: now,
      lastSeenAt: now,
      events: 0,
      log: [],
    };
    this.sessionsById.set(sessionId, session);
    this.routes.set(route, sessionId);
    if (this.sessionsById.size > MAX_LIVE_SESSIONS) {
      const oldest = [...this.sessionsById.values()].filter((s) => s !== session).sort((a, b) => a.lastSeenAt - b.lastSeenAt)[0]!;
      this.sessionsById.delete(oldest.sessionId);
      const oldestRoute = `${oldest.connection}/${oldest.actorSessionId}`;
      if (this.routes.get(oldestRoute) === oldest.sessionId) this.routes.delete(oldestRoute);
    }
    return session;
  }

  /** What the session list shows: name (machine id), actor session id, inspector connection, actor number when shared. */
  private label(session: LiveSession): string {
    const name = session.machineId !== null && session.name !== session.machineId ? `${session.name} (${session.machineId})` : session.name;
    const parts = [name, session.actorSessionId, `inspector ${session.connection}`];
    if (session.actorNumber > 1) parts.push(`actor ${session.actorNumber}`);
    return cut(parts.join(' · '), 2 * MAX_NAME_LENGTH + 60);
  }

  private applySnapshot(session: LiveSession, snapshot: StreamedSnapshot): void {
    if (snapshot.value !== undefined) session.value = snapshot.value;
    if (snapshot.context !== undefined) session.context = snapshot.context;
    if (snapshot.status !== undefined) session.status = snapshot.status;
    const last = session.log.at(-1);
    // The application's own snapshot is the truth about where the event led.
    if (last !== undefined && snapshot.value !== undefined) last.stateAfter = shortState(snapshot.value);
  }

  /** The session's machine (configured, or streamed and built), or null. */
  private machineOf(session: LiveSession): AnyStateMachine | null {
    return session.machineId === null ? null : this.definitions.machine(session.machineId);
  }

  /** The session's snapshot as a snapshot of its machine, or null. */
  private resolved(session: LiveSession): AnyMachineSnapshot | null {
    const machine = this.machineOf(session);
    if (machine === null || session.value === undefined) return null;
    try {
      return machine.resolveState({ value: session.value as never, context: session.context as never });
    } catch {
      return null;
    }
  }

  private applyEvent(session: LiveSession, event: EventObject): void {
    if (event.type.startsWith('xstate.')) return; // the actor's own init/stop events
    session.events += 1;
    const at = (event as { at?: unknown }).at;
    session.now = typeof at === 'number' && Number.isFinite(at) ? at : this.clock();
    const machine = this.machineOf(session);
    const before = this.resolved(session);
    let taken: string[] = [];
    let decision: DecisionView | null = null;
    let stateAfter = shortState(session.value);
    if (before !== null && machine !== null && this.configured.has(machine)) {
      // A configured machine is trusted code: run the event on an actor and read what XState took, eventless transitions included.
      const result = takeEvents(machine, before, [event as AnyEventObject]);
      taken = result.taken;
      stateAfter = shortState(result.after.value);
      const emitted = result.emitted.find((e) => e.type === 'gate.decided');
      if (emitted !== undefined) decision = decisionView(emitted as unknown as GateDecidedEvent);
    } else if (before !== null && machine !== null && session.machineId !== null) {
      taken = selectedTransitions(machine, before, event);
      // A streamed machine is untrusted: stepped on its budgeted copy, which a loop of eventless transitions cannot hang.
      const step = this.definitions.step(session.machineId, session.value, session.context, event);
      if (step.ok) {
        stateAfter = shortState(step.value);
        for (const action of step.actions) {
          const { type, params } = action as { type: string; params?: { event?: unknown } };
          const emitted = params?.event;
          if (type === 'xstate.emit' && (emitted as { type?: unknown } | undefined)?.type === 'gate.decided') {
            decision = decisionView(emitted as GateDecidedEvent);
          }
        }
      } else if (step.refused) {
        taken = [];
        this.drops.report('machine definition', step.reason);
      }
      // Otherwise a machine rebuilt from a definition lacks its implementations: no decision then.
    }
    session.log.push({
      seq: (session.log.at(-1)?.seq ?? 0) + 1,
      at: session.now,
      label: eventLabel(event),
      events: [event.type],
      stateBefore: shortState(session.value),
      stateAfter,
      decision,
      recovered: null,
      taken,
    });
    if (session.log.length > MAX_LIVE_LOG) session.log.shift();
  }

  /**
   * The session's view: with its machine when it has one; for a machine
   * named but not built (too large to chart, or its definition evicted),
   * state and context only; null without a machine or a state. A view that
   * throws is dropped (null) and logged once.
   */
  private view(session: LiveSession): SessionView | null {
    try {
      const machine = this.machineOf(session);
      const snapshot = this.resolved(session);
      if (machine !== null && snapshot !== null) {
        const view = sessionView(machine, snapshot, session.now, session.log.at(-1)?.taken ?? []);
        return {
          ...view,
          state: cut(view.state, MAX_STATE_TEXT),
          status: session.status,
          enabled: session.status === 'active' ? view.enabled : [],
        };
      }
      if (session.machineId === null || session.value === undefined) return null;
      const context = session.context;
      return {
        machineId: session.machineId,
        state: shortState(session.value),
        activeStateIds: [],
        status: session.status,
        now: session.now,
        context:
          typeof context === 'object' && context !== null && !Array.isArray(context)
            ? (JSON.parse(JSON.stringify(context)) as Record<string, unknown>)
            : {},
        pendingRecoveries: [],
        inFlight: [],
        enabled: [],
        taken: [],
      };
    } catch (error) {
      this.drops.report('session view that failed to build', errorMessage(error));
      return null;
    }
  }

  private summary(session: LiveSession): LiveSessionSummary {
    return {
      sessionId: session.sessionId,
      actorSessionId: session.actorSessionId,
      name: session.name,
      label: this.label(session),
      collision: session.collision,
      machineId: session.machineId,
      state: shortState(session.value),
      connected: session.connected,
      firstSeenAt: session.firstSeenAt,
      lastSeenAt: session.lastSeenAt,
      events: session.events,
      hook: null,
    };
  }
}
