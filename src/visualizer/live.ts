/**
 * Live inspection: sessions an application streams to the visualizer with
 * `@statelyai/inspect`'s WebSocket inspector (`createWebSocketInspector({
 * url: 'ws://127.0.0.1:<port>/inspect' })`). The hub keeps each actor's latest
 * snapshot and an event log; for a machine it knows (one listed in
 * `stately.config.json`) it also works out each event's transitions and the
 * gate's decision with XState's pure `transition()`.
 *
 * Inspection events are untrusted input: they are validated, size-limited,
 * and a bad one is dropped without touching any session.
 *
 * Spec: ASSISTANT_SAFETY.md "Blocked calls and recovery" (decisions shown
 * with their structured tool result).
 */
import { createMachine, transition, type AnyMachineSnapshot, type AnyStateMachine, type EventObject } from 'xstate';
import { z } from 'zod';
import type { GateDecidedEvent } from '../../machines/safety.types.js';
import { decisionView, selectedTransitions, sessionView, stateText } from './model.js';
import type { DecisionView, LiveSessionDetail, LiveSessionSummary, LogEntry, SessionView } from './protocol.js';

/** At most this many sessions are kept; the least recently seen go first. */
export const MAX_LIVE_SESSIONS = 100;
/** At most this many log entries are kept per session; the oldest go first. */
export const MAX_LIVE_LOG = 500;

const snapshotSchema = z.looseObject({
  value: z.unknown().optional(),
  context: z.unknown().optional(),
  status: z.string().optional(),
});
const eventSchema = z.looseObject({ type: z.string() });

/** The inspection events of `@statelyai/inspect` (0.7) the hub reads; other fields are ignored. */
export const inspectionEventSchema = z.discriminatedUnion('type', [
  z.looseObject({
    type: z.literal('@xstate.actor'),
    sessionId: z.string().min(1).max(200),
    name: z.string().max(200).optional().nullable(),
    definition: z.string().optional().nullable(),
    snapshot: snapshotSchema.optional().nullable(),
  }),
  z.looseObject({ type: z.literal('@xstate.event'), sessionId: z.string().min(1).max(200), event: eventSchema }),
  z.looseObject({
    type: z.literal('@xstate.snapshot'),
    sessionId: z.string().min(1).max(200),
    snapshot: snapshotSchema,
    event: eventSchema.optional().nullable(),
  }),
]);

interface LiveSession {
  /** `<connection>/<actor session id>`: actor session ids (`x:0`) repeat across processes. */
  sessionId: string;
  actorSessionId: string;
  name: string;
  machine: AnyStateMachine | null;
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

/** The machine of an actor from its streamed definition (`logic.config`), or null when it cannot be built. */
function machineFromDefinition(definition: string | null | undefined): AnyStateMachine | null {
  if (typeof definition !== 'string' || definition.length > 1_000_000) return null;
  try {
    const config = JSON.parse(definition) as unknown;
    if (typeof config !== 'object' || config === null || typeof (config as { id?: unknown }).id !== 'string') return null;
    return createMachine(config as never) as unknown as AnyStateMachine;
  } catch {
    return null;
  }
}

function eventLabel(event: EventObject): string {
  const fields = event as Record<string, unknown>;
  const parts = [event.type];
  if (typeof fields.tool === 'string') parts.push(fields.tool);
  if (typeof fields.kind === 'string') parts.push(`(${fields.kind})`);
  if (typeof fields.callId === 'string') parts.push(`#${fields.callId}`);
  return parts.join(' ');
}

/** Hub of the sessions streamed by inspected applications. */
export class LiveHub {
  private readonly sessionsById = new Map<string, LiveSession>();
  private readonly machines: Map<string, AnyStateMachine>;
  private readonly onChange: (sessionId: string) => void;
  private readonly clock: () => number;

  /**
   * @param machines known machines by id (their charts are served); machines
   *   rebuilt from streamed definitions are added under their id when new.
   * @param onChange called after a session changed.
   * @param clock the server clock (epoch ms), for sessions whose events carry no `at`.
   */
  constructor(machines: Map<string, AnyStateMachine>, onChange: (sessionId: string) => void, clock: () => number = Date.now) {
    this.machines = machines;
    this.onChange = onChange;
    this.clock = clock;
  }

  /** Summaries of all sessions, most recently seen first. */
  sessions(): LiveSessionSummary[] {
    return [...this.sessionsById.values()].sort((a, b) => b.lastSeenAt - a.lastSeenAt).map((s) => this.summary(s));
  }

  /** One session in full, or undefined. */
  session(sessionId: string): LiveSessionDetail | undefined {
    const session = this.sessionsById.get(sessionId);
    if (session === undefined) return undefined;
    return { ...this.summary(session), view: this.view(session), log: [...session.log] };
  }

  /** An application's inspector connection closed: its sessions are marked disconnected. */
  disconnect(connection: number): void {
    for (const session of this.sessionsById.values()) {
      if (session.connection === connection && session.connected) {
        session.connected = false;
        this.onChange(session.sessionId);
      }
    }
  }

  /**
   * Reads one WebSocket message of an application's inspector. Returns false
   * (and changes nothing) when it is not a valid inspection event.
   */
  receive(connection: number, data: string): boolean {
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      return false;
    }
    const parsed = inspectionEventSchema.safeParse(json);
    if (!parsed.success) return false;
    const message = parsed.data;
    const session = this.touch(connection, message.sessionId);
    switch (message.type) {
      case '@xstate.actor': {
        const machine = machineFromDefinition(message.definition);
        if (machine !== null) {
          session.machine = this.machines.get(machine.id) ?? machine;
          if (!this.machines.has(machine.id)) this.machines.set(machine.id, machine);
        }
        session.name = message.name || session.machine?.id || session.actorSessionId;
        if (message.snapshot) this.applySnapshot(session, message.snapshot);
        break;
      }
      case '@xstate.event':
        this.applyEvent(session, message.event as EventObject);
        break;
      case '@xstate.snapshot':
        this.applySnapshot(session, message.snapshot);
        break;
    }
    this.onChange(session.sessionId);
    return true;
  }

  private touch(connection: number, actorSessionId: string): LiveSession {
    const now = this.clock();
    const sessionId = `${connection}/${actorSessionId}`;
    let session = this.sessionsById.get(sessionId);
    if (session === undefined) {
      session = {
        sessionId,
        actorSessionId,
        name: actorSessionId,
        machine: null,
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
      if (this.sessionsById.size > MAX_LIVE_SESSIONS) {
        const oldest = [...this.sessionsById.values()].sort((a, b) => a.lastSeenAt - b.lastSeenAt)[0]!;
        this.sessionsById.delete(oldest.sessionId);
      }
    }
    session.lastSeenAt = now;
    return session;
  }

  private applySnapshot(session: LiveSession, snapshot: z.infer<typeof snapshotSchema>): void {
    if (snapshot.value !== undefined) session.value = snapshot.value;
    if (snapshot.context !== undefined) session.context = snapshot.context;
    if (snapshot.status !== undefined) session.status = snapshot.status;
    const last = session.log.at(-1);
    // The application's own snapshot is the truth about where the event led.
    if (last !== undefined && snapshot.value !== undefined) last.stateAfter = stateText(snapshot.value);
  }

  /** The session's snapshot as a snapshot of its machine, or null. */
  private resolved(session: LiveSession): AnyMachineSnapshot | null {
    if (session.machine === null || session.value === undefined) return null;
    try {
      return session.machine.resolveState({ value: session.value as never, context: session.context as never });
    } catch {
      return null;
    }
  }

  private applyEvent(session: LiveSession, event: EventObject): void {
    if (event.type.startsWith('xstate.')) return; // the actor's own init/stop events
    session.events += 1;
    const at = (event as { at?: unknown }).at;
    session.now = typeof at === 'number' && Number.isFinite(at) ? at : this.clock();
    const before = this.resolved(session);
    let taken: string[] = [];
    let decision: DecisionView | null = null;
    let stateAfter = stateText(session.value);
    if (before !== null && session.machine !== null) {
      taken = selectedTransitions(session.machine, before, event);
      try {
        const [next, actions] = transition(session.machine, before, event as never);
        stateAfter = stateText(next.value);
        for (const action of actions) {
          const { type, params } = action as { type: string; params?: { event?: unknown } };
          const emitted = params?.event;
          if (type === 'xstate.emit' && (emitted as { type?: unknown } | undefined)?.type === 'gate.decided') {
            decision = decisionView(emitted as GateDecidedEvent);
          }
        }
      } catch {
        // A machine rebuilt from a definition lacks its implementations: no decision then.
      }
    }
    session.log.push({
      seq: (session.log.at(-1)?.seq ?? 0) + 1,
      at: session.now,
      label: eventLabel(event),
      events: [event.type],
      stateBefore: stateText(session.value),
      stateAfter,
      decision,
      recovered: null,
      taken,
    });
    if (session.log.length > MAX_LIVE_LOG) session.log.shift();
  }

  private view(session: LiveSession): SessionView | null {
    const snapshot = this.resolved(session);
    if (snapshot === null || session.machine === null) return null;
    const view = sessionView(session.machine, snapshot, session.now, session.log.at(-1)?.taken ?? []);
    return { ...view, status: session.status, enabled: session.status === 'active' ? view.enabled : [] };
  }

  private summary(session: LiveSession): LiveSessionSummary {
    return {
      sessionId: session.sessionId,
      actorSessionId: session.actorSessionId,
      name: session.name,
      machineId: session.machine?.id ?? null,
      state: session.value === undefined ? '(unknown)' : stateText(session.value),
      connected: session.connected,
      firstSeenAt: session.firstSeenAt,
      lastSeenAt: session.lastSeenAt,
      events: session.events,
    };
  }
}
