/**
 * The safety statechart: XState v5, pure (no clock, no I/O), every guard and
 * action named in `setup`. Decisions are emitted as `gate.decided`; cleared
 * pending recoveries as `recovery.succeeded`.
 *
 * Spec: ASSISTANT_SAFETY.md "States", "The invariants", "Blocked calls and
 * recovery", "Resetting"; DESIGN.md §1 and §3.
 *
 * Guards are total: they read events through the helpers below, which never
 * throw on a malformed event (a throwing guard would stop the actor for good).
 *
 * An outcome is booked against the calls in flight by `booking`: by id, or
 * by tool for calls without one; an outcome that could belong to several is
 * booked in the worst case, so one outcome is never booked against the wrong
 * call in the permissive direction (a failure never settles a write unless it
 * is unambiguously that write's). The outcome guards all read that booking.
 */
import { assign, emit, enqueueActions, setup } from 'xstate';
import {
  ANSWER_BLOCK_REASONS,
  ErrCodeFSMBlocked,
  MAX_IN_FLIGHT,
  MAX_PENDING_RECOVERIES,
  MAX_TIME_MS,
  RECOVERY_TTL_MS,
  TOOL_BLOCK_REASONS,
  recoveryIdFor,
} from './safety.policy.js';
import type {
  BlockRule,
  InFlightCall,
  PendingRecovery,
  SafetyContext,
  SafetyEmitted,
  SafetyEvent,
  SafetyInput,
  SafetyState,
  ToolKind,
} from './safety.types.js';
import { TOOL_KINDS } from './safety.types.js';

// ---------------------------------------------------------------------------
// Total readers of (possibly malformed) events. Never throw.

type LooseEvent = { [key: string]: unknown };

function field(event: unknown, name: string): unknown {
  if (typeof event !== 'object' || event === null) return undefined;
  try {
    return Object.prototype.hasOwnProperty.call(event, name) ? (event as LooseEvent)[name] : undefined;
  } catch {
    return undefined; // a getter or proxy trap that throws reads as missing (so kinds fail closed to write)
  }
}

/** The event's time in epoch ms; 0 when missing, not a number, or outside ±`MAX_TIME_MS` (not a valid date). */
function timeOf(event: unknown): number {
  const at = field(event, 'at');
  return typeof at === 'number' && Math.abs(at) <= MAX_TIME_MS ? at : 0;
}

/** The event's tool name; '' when missing or not a string. */
function toolOf(event: unknown): string {
  const tool = field(event, 'tool');
  return typeof tool === 'string' ? tool : '';
}

/** The event's kind; anything unknown fails closed to `write`. */
function kindOf(event: unknown): ToolKind {
  const kind = field(event, 'kind');
  return TOOL_KINDS.includes(kind as ToolKind) ? (kind as ToolKind) : 'write';
}

/** The event's call id, or null when missing, empty or not a string. */
function callIdOf(event: unknown): string | null {
  const id = field(event, 'callId');
  return typeof id === 'string' && id !== '' ? id : null;
}

/** The event's call key: `id:<callId>`, or null for a call without an id. */
function idKeyOf(event: unknown): string | null {
  const id = callIdOf(event);
  return id === null ? null : `id:${id}`;
}

/**
 * Whether a call id is in flight in `context`: a call checked under it has
 * no recorded outcome yet. An empty id is no id (as in events). The adapter
 * refuses a second check under such an id (`SessionGuard.check`).
 */
export function isCallIdInFlight(context: SafetyContext, callId: string): boolean {
  return callId !== '' && context.inFlight.some((call) => call.key === `id:${callId}`);
}

/**
 * The kind a record states about its own call: its `kind`, unless that is
 * missing or outside the vocabulary, or the event says `kindUnstated` (the
 * classifier's reading of a bare tool name, which cannot tell two calls of
 * one tool apart). Null when it states none.
 */
function statedKindOf(event: unknown): ToolKind | null {
  if (field(event, 'kindUnstated') === true) return null;
  const kind = field(event, 'kind');
  return TOOL_KINDS.includes(kind as ToolKind) ? (kind as ToolKind) : null;
}

/**
 * How much a call's success would let the session do, least first: 0 a
 * write (its success demands verification); 1 user input or neutral
 * computation (nothing); 2 a resolve or read (a target, the last read); 3 a
 * resolve or read that would verify the current write. Ranks the candidates
 * of an ambiguous outcome, and two calls checked under one id.
 */
function leeway(call: InFlightCall, writeSeq: number): number {
  if (call.kind === 'write') return 0;
  if (!isDiscovery(call.kind)) return 1;
  return call.verifiesWrite === writeSeq ? 3 : 2;
}

/**
 * How an outcome event is booked against the calls in flight: `applied`, the
 * index of the call whose kind (and verification standing) the outcome is
 * applied with, and `removed`, the index of the call it takes out of flight.
 * Null when no call matches (a record without a check: its own kind applies).
 */
interface Booking {
  applied: number;
  removed: number;
}

/**
 * Books an outcome event (DESIGN.md §3.3-3.4): one outcome is never booked
 * against the wrong call in the permissive direction.
 *
 * The candidates share the outcome's key: its id, or, without one, the tool
 * of the calls checked without an id. A single candidate is settled whatever
 * kind the record names (the admitted kind wins), except that a failure
 * whose record states another kind never settles a write: that failure is of
 * some other call, and the write stays in flight.
 *
 * Several candidates (calls of one tool checked without ids, or an id a raw
 * actor checked twice) make the outcome ambiguous. The kind the record
 * states (`statedKindOf`) narrows them to the candidates of that kind, if any
 * has it; among the rest the worst case is assumed, ranked by `leeway`:
 * - a success is applied as the success of the candidate whose success
 *   permits least (a write first: a write among them succeeded). That call
 *   leaves flight, except a write: it stays in flight until the last of its
 *   candidates is recorded, since it may in truth still be running (so no
 *   final answer and no completed verification until then), and the
 *   candidate whose success would permit most leaves instead;
 * - a failure is applied as the failure of the candidate whose success would
 *   permit most (a write last: a failure settles a write only when it is
 *   unambiguously that write's), which leaves flight.
 * So the calls left in flight are always the least permissive reading of
 * what is still to come. The oldest wins among equals.
 */
function booking(context: SafetyContext, event: unknown): Booking | null {
  const key = idKeyOf(event);
  const tool = toolOf(event);
  const candidates: number[] = [];
  context.inFlight.forEach((call, i) => {
    if (key !== null ? call.key === key : call.key.startsWith('anon:') && call.tool === tool) candidates.push(i);
  });
  const stated = statedKindOf(event);
  const ofStatedKind = candidates.filter((i) => context.inFlight[i]!.kind === stated);
  const pool = ofStatedKind.length > 0 ? ofStatedKind : candidates;
  if (pool.length === 0) return null;
  const leewayOf = (i: number) => leeway(context.inFlight[i]!, context.writeSeq);
  const least = pool.reduce((best, i) => (leewayOf(i) < leewayOf(best) ? i : best));
  const most = pool.reduce((best, i) => (leewayOf(i) > leewayOf(best) ? i : best));
  if (field(event, 'type') === 'tool.succeeded') {
    return { applied: least, removed: context.inFlight[least]!.kind === 'write' ? most : least };
  }
  if (context.inFlight[most]!.kind === 'write' && stated !== null && stated !== 'write') return null;
  return { applied: most, removed: most };
}

/** The admitted call an outcome is applied with, if any. */
function settledCall(context: SafetyContext, event: unknown): InFlightCall | undefined {
  const booked = booking(context, event);
  return booked === null ? undefined : context.inFlight[booked.applied];
}

/** The kind an outcome applies with: the admitted kind, else the event's own. */
function outcomeKind(context: SafetyContext, event: unknown): ToolKind {
  return settledCall(context, event)?.kind ?? kindOf(event);
}

function isDiscovery(kind: ToolKind): boolean {
  return kind === 'resolve' || kind === 'read';
}

/** The calls in flight once an outcome is booked: without the call it takes out of flight. */
function withoutSettled(context: SafetyContext, event: unknown): InFlightCall[] {
  const booked = booking(context, event);
  return booked === null ? context.inFlight : context.inFlight.filter((_, i) => i !== booked.removed);
}

function hasWriteInFlight(calls: readonly InFlightCall[]): boolean {
  return calls.some((call) => call.kind === 'write');
}

function isExpired(recovery: PendingRecovery, at: number): boolean {
  return at - recovery.lastBlockedAt > RECOVERY_TTL_MS;
}

/** Pending recoveries still alive at `at`, as a new object. */
function liveRecoveries(recoveries: Record<string, PendingRecovery>, at: number): Record<string, PendingRecovery> {
  const live: Record<string, PendingRecovery> = {};
  for (const [id, recovery] of Object.entries(recoveries)) {
    if (!isExpired(recovery, at)) live[id] = recovery;
  }
  return live;
}

/** The context of a fresh session. */
export function initialSafetyContext(input: SafetyInput = {}): SafetyContext {
  return {
    wroteThisEpisode: false,
    readAfterWrite: false,
    consecutiveVerifyBlocks: 0,
    finalAnswerBlocks: 0,
    lastWriteTool: null,
    lastWriteAt: null,
    lastReadTool: null,
    lastReadAt: null,
    pendingRecoveries: {},
    inFlight: [],
    writeSeq: 0,
    anonSeq: 0,
    checksCalls: false,
    strictFailedWrites: input.strictFailedWrites === true,
  };
}

// ---------------------------------------------------------------------------

/**
 * The safety machine. Create an actor with
 * `createActor(safetyMachine, { input: { strictFailedWrites } })`, send
 * `SafetyEvent`s, listen with `actor.on('gate.decided', ...)`.
 */
export const safetyMachine = setup({
  types: {
    context: {} as SafetyContext,
    events: {} as SafetyEvent,
    emitted: {} as SafetyEmitted,
    input: {} as SafetyInput | undefined,
  },
  guards: {
    /** The requested call is a write (unknown kinds count as writes). */
    isWrite: ({ event }) => kindOf(event) === 'write',
    /** The recorded outcome applies as a write's: the kind of the call it is booked to (`booking`), else its own. */
    isWriteOutcome: ({ context, event }) => outcomeKind(context, event) === 'write',
    /** The recorded outcome applies as a resolve's or read's (`booking`). */
    isDiscoveryOutcome: ({ context, event }) => isDiscovery(outcomeKind(context, event)),
    /**
     * The successful resolve or read is evidence for the last write: the call
     * it is booked to (`booking`, which books an ambiguous success to the call
     * that permits least) was admitted in VERIFYING after that write
     * succeeded, or it ran unchecked in a session that never checks its calls
     * (record-only style).
     */
    isVerifyingRead: ({ context, event }) => {
      const call = settledCall(context, event);
      if (call === undefined) return !context.checksCalls && isDiscovery(kindOf(event));
      return isDiscovery(call.kind) && call.verifiesWrite === context.writeSeq;
    },
    /** A failed write counts as possibly applied (strict failed writes, DESIGN.md §3.8). */
    isStrictFailedWrite: ({ context, event }) => context.strictFailedWrites && outcomeKind(context, event) === 'write',
    /** The failure is booked to a write (unambiguously its, `booking`), the last write in flight. */
    isLastWriteInFlight: ({ context, event }) =>
      outcomeKind(context, event) === 'write' && !hasWriteInFlight(withoutSettled(context, event)),
    /** No read or resolve has run since the last write succeeded. */
    lacksReadAfterWrite: ({ context }) => !context.readAfterWrite,
    /** A write has been admitted and its outcome is not recorded yet. */
    hasWriteInFlight: ({ context }) => hasWriteInFlight(context.inFlight),
    /** Verified, and no write in flight: CompleteVerification may return to READING. */
    canCompleteVerification: ({ context }) => context.readAfterWrite && !hasWriteInFlight(context.inFlight),
  },
  actions: {
    /** Track an admitted call until its outcome is recorded. */
    admitCall: assign(({ context, event }, params: { verifying: boolean }) => {
      const id = callIdOf(event);
      const kind = kindOf(event);
      const key = id !== null ? `id:${id}` : `anon:${context.anonSeq}`;
      const call: InFlightCall = {
        key,
        tool: toolOf(event),
        kind,
        admittedAt: timeOf(event),
        verifiesWrite: params.verifying && isDiscovery(kind) ? context.writeSeq : null,
      };
      // An id still in flight checked again (the adapter refuses this; a raw
      // actor may send it): both calls share the key, so a record of the id is
      // ambiguous and is booked worst case (`booking`). A write is kept
      // beside the earlier call, first under the id; of two other calls, the
      // one whose success would permit less is kept (the earlier among equals).
      const twin = id === null ? -1 : context.inFlight.findIndex((c) => c.key === key && c.kind !== 'write');
      let inFlight: InFlightCall[];
      if (twin < 0) inFlight = [...context.inFlight, call];
      else if (kind === 'write') inFlight = [...context.inFlight.slice(0, twin), call, ...context.inFlight.slice(twin)];
      else if (leeway(call, context.writeSeq) < leeway(context.inFlight[twin]!, context.writeSeq)) {
        inFlight = context.inFlight.map((c, i) => (i === twin ? call : c));
      } else inFlight = context.inFlight;
      if (inFlight.length > MAX_IN_FLIGHT) {
        const oldest = inFlight.findIndex((c) => c.kind !== 'write');
        inFlight = inFlight.filter((_, i) => i !== oldest);
      }
      return { inFlight, anonSeq: id === null ? context.anonSeq + 1 : context.anonSeq, checksCalls: true };
    }),
    /** Emit the admission of a tool call. */
    announceAllowed: emit(({ event }, params: { state: SafetyState }) => ({
      type: 'gate.decided' as const,
      subject: 'tool' as const,
      allowed: true,
      state: params.state,
      tool: toolOf(event),
      kind: kindOf(event),
      callId: callIdOf(event),
      rule: null,
      reason: null,
      recoveryId: null,
      at: timeOf(event),
    })),
    /** Emit the refusal of a tool call. */
    announceBlocked: emit(({ event }, params: { state: SafetyState; rule: BlockRule }) => ({
      type: 'gate.decided' as const,
      subject: 'tool' as const,
      allowed: false,
      state: params.state,
      tool: toolOf(event),
      kind: kindOf(event),
      callId: callIdOf(event),
      rule: params.rule,
      reason: TOOL_BLOCK_REASONS[params.rule],
      recoveryId: recoveryIdFor(ErrCodeFSMBlocked, toolOf(event)),
      at: timeOf(event),
    })),
    /**
     * Open or bump the pending recovery of the blocked tool: one per tool and
     * code, `attempts` counting repeated blocks, the TTL running from the
     * latest block. Expired entries are dropped on the way.
     */
    trackPendingRecovery: assign(({ context, event }) => {
      const at = timeOf(event);
      const tool = toolOf(event);
      const recoveryId = recoveryIdFor(ErrCodeFSMBlocked, tool);
      const pendingRecoveries = liveRecoveries(context.pendingRecoveries, at);
      const previous = Object.prototype.hasOwnProperty.call(pendingRecoveries, recoveryId)
        ? pendingRecoveries[recoveryId]
        : undefined;
      pendingRecoveries[recoveryId] = previous
        ? { ...previous, lastBlockedAt: at, attempts: previous.attempts + 1 }
        : { recoveryId, errorCode: ErrCodeFSMBlocked, tool, createdAt: at, lastBlockedAt: at, attempts: 1 };
      const ids = Object.keys(pendingRecoveries);
      if (ids.length > MAX_PENDING_RECOVERIES) {
        const stalest = ids
          .filter((id) => id !== recoveryId)
          .reduce((a, b) => (pendingRecoveries[b]!.lastBlockedAt < pendingRecoveries[a]!.lastBlockedAt ? b : a));
        delete pendingRecoveries[stalest];
      }
      return { pendingRecoveries };
    }),
    /** A write blocked in VERIFYING: count it. Telemetry only; it never waives anything. */
    countVerifyBlock: assign(({ context }) => ({ consecutiveVerifyBlocks: context.consecutiveVerifyBlocks + 1 })),
    /**
     * Take the call the outcome books out of flight (`booking`). After
     * `recordWrite` in the same transition it sees the new write count; that
     * changes no choice that matters: once a write succeeded, no call still in
     * flight can verify anything, so those left are alike.
     */
    settleCall: assign(({ context, event }) => ({ inFlight: withoutSettled(context, event) })),
    /** A write succeeded (or, strictly, failed): it now needs verification. */
    recordWrite: assign(({ context, event }) => ({
      wroteThisEpisode: true,
      readAfterWrite: false,
      consecutiveVerifyBlocks: 0,
      lastWriteTool: toolOf(event) || (settledCall(context, event)?.tool ?? ''),
      lastWriteAt: timeOf(event),
      writeSeq: context.writeSeq + 1,
    })),
    /** A resolve or read succeeded. */
    recordRead: assign(({ event }) => ({ lastReadTool: toolOf(event), lastReadAt: timeOf(event) })),
    /** The read-after-write that satisfies verification. */
    recordReadAfterWrite: assign({ readAfterWrite: true, consecutiveVerifyBlocks: 0 }),
    /** A successful call of a blocked tool clears its pending recovery (a recovery). */
    clearPendingRecovery: enqueueActions(({ context, event, enqueue }) => {
      const at = timeOf(event);
      const recoveryId = recoveryIdFor(ErrCodeFSMBlocked, toolOf(event));
      const pendingRecoveries = liveRecoveries(context.pendingRecoveries, at);
      if (!Object.prototype.hasOwnProperty.call(pendingRecoveries, recoveryId)) {
        if (Object.keys(pendingRecoveries).length !== Object.keys(context.pendingRecoveries).length) {
          enqueue.assign({ pendingRecoveries });
        }
        return;
      }
      const recovery = pendingRecoveries[recoveryId]!;
      delete pendingRecoveries[recoveryId];
      enqueue.assign({ pendingRecoveries });
      enqueue.emit({ type: 'recovery.succeeded', recovery, at });
    }),
    /** Drop pending recoveries older than the TTL. */
    expirePendingRecoveries: assign(({ context, event }) => ({
      pendingRecoveries: liveRecoveries(context.pendingRecoveries, timeOf(event)),
    })),
    /** Emit the admission of the final answer. */
    allowAnswer: emit(({ event }, params: { state: SafetyState }) => ({
      type: 'gate.decided' as const,
      subject: 'answer' as const,
      allowed: true,
      state: params.state,
      tool: null,
      kind: null,
      callId: null,
      rule: null,
      reason: null,
      recoveryId: null,
      at: timeOf(event),
    })),
    /** Refuse the final answer: count it and emit the refusal. */
    refuseAnswer: enqueueActions(
      ({ context, event, enqueue }, params: { state: SafetyState; rule: Exclude<BlockRule, 'no-target'> }) => {
        enqueue.assign({ finalAnswerBlocks: context.finalAnswerBlocks + 1 });
        enqueue.emit({
          type: 'gate.decided',
          subject: 'answer',
          allowed: false,
          state: params.state,
          tool: null,
          kind: null,
          callId: null,
          rule: params.rule,
          reason: ANSWER_BLOCK_REASONS[params.rule],
          recoveryId: null,
          at: timeOf(event),
        });
      },
    ),
    /** CompleteVerification: clear the verification cycle; `wroteThisEpisode` stays. */
    completeVerification: assign({ readAfterWrite: false, consecutiveVerifyBlocks: 0 }),
    /** Reset: clear all tracking, pending recoveries included (DESIGN.md §3.2); the session's settings stay. */
    resetSession: assign(({ context }) => ({
      ...initialSafetyContext({ strictFailedWrites: context.strictFailedWrites }),
      checksCalls: context.checksCalls,
    })),
    /**
     * ResetKeepProgress: drop verification tracking (flags, counters, calls in
     * flight); keep the target, last read/write records and pending recoveries.
     */
    dropVerificationTracking: assign({
      readAfterWrite: false,
      consecutiveVerifyBlocks: 0,
      finalAnswerBlocks: 0,
      inFlight: [],
    }),
  },
}).createMachine({
  id: 'safety',
  description:
    'Pulse Assistant safety gate: classifies nothing itself, decides whether each classified tool call and the final answer may go ahead (ASSISTANT_SAFETY.md).',
  initial: 'RESOLVING',
  context: ({ input }) => initialSafetyContext(input),
  on: {
    'session.reset': {
      target: '.RESOLVING',
      actions: ['resetSession'],
      description: 'Reset: back to RESOLVING, all tracking cleared, pending recoveries included.',
    },
    'clock.ticked': {
      actions: ['expirePendingRecoveries'],
      description: 'Time passed: pending recoveries ten minutes past their latest block expire.',
    },
  },
  states: {
    RESOLVING: {
      description: 'No validated target yet: resources must be discovered first. Writes are blocked.',
      on: {
        'tool.requested': [
          {
            guard: 'isWrite',
            actions: [
              'trackPendingRecovery',
              { type: 'announceBlocked', params: { state: 'RESOLVING', rule: 'no-target' } },
            ],
            description: 'No writing without a validated target: the write is blocked (FSM_BLOCKED).',
          },
          {
            actions: [
              { type: 'admitCall', params: { verifying: false } },
              { type: 'announceAllowed', params: { state: 'RESOLVING' } },
            ],
            description: 'Resolve, read and user input are never blocked.',
          },
        ],
        'tool.succeeded': [
          {
            guard: 'isWriteOutcome',
            target: 'VERIFYING',
            actions: ['recordWrite', 'settleCall', 'clearPendingRecovery'],
            description: 'A write recorded without a check still happened: it needs verification.',
          },
          {
            guard: 'isDiscoveryOutcome',
            target: 'READING',
            actions: ['recordRead', 'settleCall', 'clearPendingRecovery'],
            description: 'A successful resolve or read establishes the target.',
          },
          {
            actions: ['settleCall', 'clearPendingRecovery'],
            description: 'User input (and neutral computation) does not advance the state.',
          },
        ],
        'tool.failed': [
          {
            guard: 'isStrictFailedWrite',
            target: 'VERIFYING',
            actions: ['recordWrite', 'settleCall'],
            description: 'Strict failed writes: a failed write may have applied, so it needs verification.',
          },
          { actions: ['settleCall'], description: 'A failed call causes no transition.' },
        ],
        'session.resetKeepingProgress': {
          actions: ['dropVerificationTracking'],
          description: 'ResetKeepProgress: no target was established, so the session stays RESOLVING.',
        },
        'answer.requested': {
          actions: [{ type: 'allowAnswer', params: { state: 'RESOLVING' } }],
          description: 'Nothing was changed: the final answer is allowed.',
        },
      },
    },
    READING: {
      description: 'A target is established: querying is allowed, and one write may be admitted.',
      on: {
        'tool.requested': [
          {
            guard: 'isWrite',
            target: 'WRITING',
            actions: [
              { type: 'admitCall', params: { verifying: false } },
              { type: 'announceAllowed', params: { state: 'READING' } },
            ],
            description: 'A write on a validated target is admitted; it is in flight until its outcome is recorded.',
          },
          {
            actions: [
              { type: 'admitCall', params: { verifying: false } },
              { type: 'announceAllowed', params: { state: 'READING' } },
            ],
            description: 'Resolve, read and user input are never blocked.',
          },
        ],
        'tool.succeeded': [
          {
            guard: 'isWriteOutcome',
            target: 'VERIFYING',
            actions: ['recordWrite', 'settleCall', 'clearPendingRecovery'],
            description: 'A write recorded without a check still happened: it needs verification.',
          },
          {
            guard: 'isDiscoveryOutcome',
            actions: ['recordRead', 'settleCall', 'clearPendingRecovery'],
            description: 'A successful resolve or read is recorded as the last read.',
          },
          { actions: ['settleCall', 'clearPendingRecovery'], description: 'User input does not advance the state.' },
        ],
        'tool.failed': [
          {
            guard: 'isStrictFailedWrite',
            target: 'VERIFYING',
            actions: ['recordWrite', 'settleCall'],
            description: 'Strict failed writes: a failed write may have applied, so it needs verification.',
          },
          { actions: ['settleCall'], description: 'A failed call causes no transition.' },
        ],
        'session.resetKeepingProgress': {
          actions: ['dropVerificationTracking'],
          description: 'ResetKeepProgress: the target stays established.',
        },
        'answer.requested': {
          actions: [{ type: 'allowAnswer', params: { state: 'READING' } }],
          description: 'No write is unverified or in flight: the final answer is allowed.',
        },
      },
    },
    WRITING: {
      description:
        'A write was admitted and its outcome is not known yet. Another write and the final answer are refused; reads are not.',
      on: {
        'tool.requested': [
          {
            guard: 'isWrite',
            actions: [
              'trackPendingRecovery',
              { type: 'announceBlocked', params: { state: 'WRITING', rule: 'write-in-flight' } },
            ],
            description: 'One write at a time: a second write while one is in flight is blocked (FSM_BLOCKED).',
          },
          {
            actions: [
              { type: 'admitCall', params: { verifying: false } },
              { type: 'announceAllowed', params: { state: 'WRITING' } },
            ],
            description: 'Reads run beside a write, but cannot verify it: they were admitted before it succeeded.',
          },
        ],
        'tool.succeeded': [
          {
            guard: 'isWriteOutcome',
            target: 'VERIFYING',
            actions: ['recordWrite', 'settleCall', 'clearPendingRecovery'],
            description: 'The write succeeded: verification evidence is now required.',
          },
          {
            guard: 'isDiscoveryOutcome',
            actions: ['recordRead', 'settleCall', 'clearPendingRecovery'],
            description: 'A read that ran beside the write is recorded, but verifies nothing.',
          },
          { actions: ['settleCall', 'clearPendingRecovery'], description: 'User input does not advance the state.' },
        ],
        'tool.failed': [
          {
            guard: 'isStrictFailedWrite',
            target: 'VERIFYING',
            actions: ['recordWrite', 'settleCall'],
            description: 'Strict failed writes: the write may have applied, so it needs verification.',
          },
          {
            guard: 'isLastWriteInFlight',
            target: 'READING',
            actions: ['settleCall'],
            description: 'The write failed: nothing changed, back to READING.',
          },
          { actions: ['settleCall'], description: 'A failed call causes no transition.' },
        ],
        'answer.requested': {
          actions: [{ type: 'refuseAnswer', params: { state: 'WRITING', rule: 'write-in-flight' } }],
          description: 'No final answer while a write is in flight.',
        },
        'session.resetKeepingProgress': {
          target: 'READING',
          actions: ['dropVerificationTracking'],
          description: 'ResetKeepProgress: verification tracking dropped, back to READING.',
        },
      },
    },
    VERIFYING: {
      description:
        'A write succeeded and needs verification evidence: a resolve or read admitted after it. Writes stay blocked until verification is completed.',
      on: {
        'tool.requested': [
          {
            guard: 'isWrite',
            actions: [
              'trackPendingRecovery',
              'countVerifyBlock',
              { type: 'announceBlocked', params: { state: 'VERIFYING', rule: 'unverified-write' } },
            ],
            description:
              'No writing again until the last write is verified: blocked (FSM_BLOCKED), counted, and never waived however often it is tried.',
          },
          {
            actions: [
              { type: 'admitCall', params: { verifying: true } },
              { type: 'announceAllowed', params: { state: 'VERIFYING' } },
            ],
            description: 'Reads are never blocked; one admitted now can verify the write.',
          },
        ],
        'tool.succeeded': [
          {
            guard: 'isWriteOutcome',
            actions: ['recordWrite', 'settleCall', 'clearPendingRecovery'],
            description: 'Another write recorded: the new one needs verification.',
          },
          {
            guard: 'isVerifyingRead',
            actions: ['recordRead', 'recordReadAfterWrite', 'settleCall', 'clearPendingRecovery'],
            description: 'Read-after-write: a resolve or read admitted after the write succeeded verifies it.',
          },
          {
            guard: 'isDiscoveryOutcome',
            actions: ['recordRead', 'settleCall', 'clearPendingRecovery'],
            description: 'A read admitted before the write succeeded is no evidence about it.',
          },
          { actions: ['settleCall', 'clearPendingRecovery'], description: 'User input is not verification.' },
        ],
        'tool.failed': [
          {
            guard: 'isStrictFailedWrite',
            actions: ['recordWrite', 'settleCall'],
            description: 'Strict failed writes: the write may have applied, so it needs verification.',
          },
          { actions: ['settleCall'], description: 'A failed call causes no transition.' },
        ],
        'answer.requested': [
          {
            guard: 'lacksReadAfterWrite',
            actions: [{ type: 'refuseAnswer', params: { state: 'VERIFYING', rule: 'unverified-write' } }],
            description: 'No final answer about an unverified change.',
          },
          {
            guard: 'hasWriteInFlight',
            actions: [{ type: 'refuseAnswer', params: { state: 'VERIFYING', rule: 'write-in-flight' } }],
            description: 'No final answer while a write is in flight.',
          },
          {
            actions: [{ type: 'allowAnswer', params: { state: 'VERIFYING' } }],
            description: 'The change was verified by a later read: the final answer is allowed.',
          },
        ],
        'verification.completed': {
          guard: 'canCompleteVerification',
          target: 'READING',
          actions: ['completeVerification'],
          description: 'CompleteVerification: a verified session returns to READING, so further writes become possible.',
        },
        'session.resetKeepingProgress': {
          target: 'READING',
          actions: ['dropVerificationTracking'],
          description: 'ResetKeepProgress: verification tracking dropped, back to READING.',
        },
      },
    },
  },
});

/** The safety machine's type, for typing actors and snapshots. */
export type SafetyMachine = typeof safetyMachine;
