/**
 * The safety statechart driven directly as an actor, for the tests of
 * test/machines/safety/: a started actor that keeps the `gate.decided` and
 * `recovery.succeeded` events it emits, event builders, and the moves that
 * bring a session to each state.
 */
import { createActor } from 'xstate';
import { safetyMachine } from '../../machines/safety.machine.js';
import type {
  GateDecidedEvent,
  RecoverySucceededEvent,
  SafetyEvent,
  SafetyInput,
  SafetyState,
  ToolKind,
} from '../../machines/safety.types.js';

/** A fixed start time (epoch ms); every test passes its times explicitly. */
export const T = 1_700_000_000_000;

/**
 * A started actor. Verification is completed by its own event
 * (`autoCompleteVerification: false`) unless `input` says otherwise, so the
 * tests see VERIFYING with its evidence; the machine's own completion is
 * tested on its own.
 */
export function start(input?: SafetyInput) {
  const actor = createActor(safetyMachine, { input: { autoCompleteVerification: false, ...input } });
  const decisions: GateDecidedEvent[] = [];
  const recoveries: RecoverySucceededEvent[] = [];
  actor.on('gate.decided', (event) => decisions.push(event));
  actor.on('recovery.succeeded', (event) => recoveries.push(event));
  actor.start();
  return {
    actor,
    decisions,
    recoveries,
    send(event: SafetyEvent) {
      actor.send(event);
    },
    /** Sends something that is not a well-formed `SafetyEvent`. */
    sendRaw(event: unknown) {
      actor.send(event as SafetyEvent);
    },
    get state() {
      return actor.getSnapshot().value as SafetyState;
    },
    get context() {
      return actor.getSnapshot().context;
    },
    get lastDecision(): GateDecidedEvent {
      const decision = decisions.at(-1);
      if (decision === undefined) throw new Error('no gate.decided was emitted');
      return decision;
    },
  };
}
/** A started actor with the decisions and recoveries it emitted. */
export type Session = ReturnType<typeof start>;

export function requested(tool: string, kind: ToolKind, at: number, callId?: string): SafetyEvent {
  return { type: 'tool.requested', tool, kind, at, ...(callId === undefined ? {} : { callId }) };
}
export function succeeded(tool: string, kind: ToolKind, at: number, callId?: string): SafetyEvent {
  return { type: 'tool.succeeded', tool, kind, at, ...(callId === undefined ? {} : { callId }) };
}
export function failed(tool: string, kind: ToolKind, at: number, callId?: string): SafetyEvent {
  return { type: 'tool.failed', tool, kind, at, ...(callId === undefined ? {} : { callId }) };
}

/** Check a call, then record its success. */
export function run(s: Session, tool: string, kind: ToolKind, at: number, callId: string): void {
  s.send(requested(tool, kind, at, callId));
  s.send(succeeded(tool, kind, at, callId));
}

/** RESOLVING -> READING by a successful resolve at `at`. */
export function toReading(s: Session, at = T): void {
  run(s, 'pulse_query', 'resolve', at, 'resolve-1');
}

/** RESOLVING -> READING -> WRITING: a write `pulse_control` admitted at `at + 1`, id `write-1`. */
export function toWriting(s: Session, at = T): void {
  toReading(s, at);
  s.send(requested('pulse_control', 'write', at + 1, 'write-1'));
}

/** ... -> VERIFYING: the write `write-1` succeeded at `at + 2`. */
export function toVerifying(s: Session, at = T): void {
  toWriting(s, at);
  s.send(succeeded('pulse_control', 'write', at + 2, 'write-1'));
}

/** ... VERIFYING with read-after-write: a read admitted and succeeded at `at + 3`. */
export function toVerified(s: Session, at = T): void {
  toVerifying(s, at);
  run(s, 'pulse_metrics', 'read', at + 3, 'read-1');
}

/** A session in the given state, reached the usual way. */
export function inState(state: SafetyState, input?: SafetyInput): Session {
  const s = start(input);
  if (state === 'READING') toReading(s);
  if (state === 'WRITING') toWriting(s);
  if (state === 'VERIFYING') toVerifying(s);
  return s;
}

export const ALL_STATES: SafetyState[] = ['RESOLVING', 'READING', 'WRITING', 'VERIFYING'];
