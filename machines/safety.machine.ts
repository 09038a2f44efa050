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
 *
 * Targets (DESIGN.md §5.3-5.4, machines/safety.targets.ts): successful
 * resolves and reads establish theirs; a write whose targets are known is
 * admitted only on established targets, and verified only by a read
 * admitted after it that touches one of them. A call without known targets
 * follows the spec's session-wide rules.
 */
import { assign, emit, enqueueActions, setup } from 'xstate';
import {
  ANSWER_BLOCK_REASONS,
  ErrCodeFSMBlocked,
  MAX_IN_FLIGHT,
  MAX_PENDING_RECOVERIES,
  MAX_TIME_MS,
  RECOVERY_TTL_MS,
  SELF_VERIFY_TOOL,
  TOOL_BLOCK_REASONS,
  reasonWithTarget,
  recoveryIdFor,
} from './safety.policy.js';
import { commonTargets, establish, isEstablished, readTargets, sameTargets, touchesAny } from './safety.targets.js';
import type {
  AnswerBlockRule,
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

/** The event's targets, canonical (`readTargets`): none when missing or malformed. */
function targetsOf(event: unknown): readonly string[] {
  return readTargets(field(event, 'targets')).targets;
}

/** The event says it is a destructive write: `destructive: true` on a write. */
function isDestructiveEvent(event: unknown): boolean {
  return field(event, 'destructive') === true && kindOf(event) === 'write';
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

/** The targets a record states about its own call: its `targets`, unless absent or the kind is unstated. */
function statedTargetsOf(event: unknown): readonly string[] | null {
  if (field(event, 'kindUnstated') === true || field(event, 'targets') === undefined) return null;
  return targetsOf(event);
}

/**
 * How much a call's success would let the session do, least first: 0 a
 * write (its success demands verification); 1 user input or neutral
 * computation (nothing, or a confirmation); 2 a resolve or read (a target,
 * the last read); 3 a resolve or read that would verify the current write
 * (admitted after it, touching one of its known targets). Ranks the
 * candidates of an ambiguous outcome, and two calls checked under one id.
 */
function leeway(call: InFlightCall, context: SafetyContext): number {
  if (call.kind === 'write') return 0;
  if (!isDiscovery(call.kind)) return 1;
  return call.verifiesWrite === context.writeSeq && touchesAny(call.targets ?? [], context.writeTargets) ? 3 : 2;
}

/**
 * How an outcome event is booked against the calls in flight: `applied`, the
 * index of the call whose kind (and verification standing) the outcome is
 * applied with, `removed`, the index of the call it takes out of flight, and
 * `pool`, the indexes of every call it could belong to (one when it is
 * unambiguous). Null when no call matches (a record without a check: its own
 * kind and targets apply).
 */
interface Booking {
  applied: number;
  removed: number;
  pool: number[];
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
 * has it, then the targets it states to the candidates naming the same ones,
 * if any has them; among the rest the worst case is assumed, ranked by `leeway`:
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
 * what is still to come. The oldest wins among equals. Targets follow the
 * same reading (`appliedTargets`, `withoutSettled`): an ambiguous success of
 * a resolve or read establishes only the targets every candidate names, and
 * after an ambiguous failure the resolves and reads left among the
 * candidates keep only the targets they share with the one that left.
 */
function booking(context: SafetyContext, event: unknown): Booking | null {
  if (context.inFlight.length === 0) return null;
  const key = idKeyOf(event);
  const tool = toolOf(event);
  const candidates: number[] = [];
  context.inFlight.forEach((call, i) => {
    if (key !== null ? call.key === key : call.key.startsWith('anon:') && call.tool === tool) candidates.push(i);
  });
  if (candidates.length === 0) return null;
  const stated = statedKindOf(event);
  if (candidates.length === 1) {
    // Unambiguous (the common case): what follows would pick this call, without the narrowing.
    const only = candidates[0]!;
    const failure = field(event, 'type') !== 'tool.succeeded';
    if (failure && context.inFlight[only]!.kind === 'write' && stated !== null && stated !== 'write') return null;
    return { applied: only, removed: only, pool: candidates };
  }
  const ofStatedKind = candidates.filter((i) => context.inFlight[i]!.kind === stated);
  const byKind = ofStatedKind.length > 0 ? ofStatedKind : candidates;
  const statedTargets = statedTargetsOf(event);
  const ofStatedTargets =
    statedTargets === null ? [] : byKind.filter((i) => sameTargets(context.inFlight[i]!.targets ?? [], statedTargets));
  const pool = ofStatedTargets.length > 0 ? ofStatedTargets : byKind;
  if (pool.length === 0) return null;
  const leewayOf = (i: number) => leeway(context.inFlight[i]!, context);
  const least = pool.reduce((best, i) => (leewayOf(i) < leewayOf(best) ? i : best));
  const most = pool.reduce((best, i) => (leewayOf(i) > leewayOf(best) ? i : best));
  if (field(event, 'type') === 'tool.succeeded') {
    return { applied: least, removed: context.inFlight[least]!.kind === 'write' ? most : least, pool };
  }
  if (context.inFlight[most]!.kind === 'write' && stated !== null && stated !== 'write') return null;
  return { applied: most, removed: most, pool };
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

/**
 * The targets an outcome applies with: the booked call's; for an ambiguous
 * success of a resolve or read, only those every candidate names (one of
 * them succeeded, which is not known); the event's own for a record without
 * a check.
 */
function appliedTargets(
  context: SafetyContext,
  event: unknown,
  booked: Booking | null = booking(context, event),
): readonly string[] {
  if (booked === null) return targetsOf(event);
  const call = context.inFlight[booked.applied]!;
  if (booked.pool.length === 1 || call.kind === 'write') return call.targets ?? [];
  return commonTargets(booked.pool.map((i) => context.inFlight[i]!.targets ?? []));
}

/**
 * The calls in flight once an outcome is booked: without the call it takes
 * out of flight. After an ambiguous failure, the resolves and reads left
 * among its candidates keep only the targets they share with the call that
 * left: whichever of them is still running, its success is certain only of those.
 */
function withoutSettled(context: SafetyContext, event: unknown): InFlightCall[] {
  const booked = booking(context, event);
  if (booked === null) return context.inFlight;
  const removed = context.inFlight[booked.removed]!;
  const narrow = field(event, 'type') !== 'tool.succeeded' && booked.pool.length > 1;
  const left: InFlightCall[] = [];
  context.inFlight.forEach((call, i) => {
    if (i === booked.removed) return;
    if (!narrow || !booked.pool.includes(i) || !isDiscovery(call.kind) || call.targets === undefined) left.push(call);
    else left.push(withTargets(call, commonTargets([call.targets, removed.targets ?? []])));
  });
  return left;
}

/** A call in flight with other targets: `targets` left out when empty. */
function withTargets(call: InFlightCall, targets: string[]): InFlightCall {
  const { targets: _dropped, ...rest } = call;
  return targets.length === 0 ? rest : { ...rest, targets };
}

/**
 * What a successful resolve or read is evidence of (DESIGN.md §3.4, §5.4):
 * `verifies` when the call it is booked to was admitted in VERIFYING after
 * the current write succeeded (or it ran unchecked in a session that never
 * checks its calls) and touches one of the write's known targets (any read
 * does, for a write without known targets); `off-target` when it would
 * verify but touches none of them; `none` otherwise.
 */
function evidenceOf(context: SafetyContext, event: unknown): 'verifies' | 'off-target' | 'none' {
  const call = settledCall(context, event);
  let targets: readonly string[];
  if (call === undefined) {
    if (context.checksCalls || !isDiscovery(kindOf(event))) return 'none';
    targets = targetsOf(event);
  } else {
    if (!isDiscovery(call.kind) || call.verifiesWrite !== context.writeSeq) return 'none';
    targets = call.targets ?? [];
  }
  return touchesAny(targets, context.writeTargets) ? 'verifies' : 'off-target';
}

/**
 * The first target of a requested write that is not established (DESIGN.md
 * §5.3): `{ target }`, with `target` null when the write names more targets
 * than are read (`MAX_TARGETS_PER_EVENT`) and the first ones are all
 * established. Null when every known target is established, or none is known.
 */
function unknownTargetOf(context: SafetyContext, event: unknown): { target: string | null } | null {
  const { targets, overflow } = readTargets(field(event, 'targets'));
  const unknown = targets.find((target) => !isEstablished(context.establishedTargets, target));
  if (unknown !== undefined) return { target: unknown };
  return overflow ? { target: null } : null;
}

/** With `confirmDestructive`, a destructive write and no user input succeeded since the last write (DESIGN.md §5.6). */
function isUnconfirmedDestructive(context: SafetyContext, event: unknown): boolean {
  return context.confirmDestructive && !context.confirmedSinceWrite && isDestructiveEvent(event);
}

/** The target a refusal of `rule` names, or null (see `GateDecidedEvent.target`). */
function blockedTargetOf(context: SafetyContext, event: unknown, rule: BlockRule): string | null {
  if (rule === 'unknown-target') return unknownTargetOf(context, event)?.target ?? null;
  if (rule === 'unverified-write') return context.writeTargets[0] ?? null;
  return null;
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
    establishedTargets: [],
    writeTargets: [],
    writeDestructive: false,
    confirmedSinceWrite: false,
    confirmDestructive: input.confirmDestructive === true,
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
    // `| void`, not `| undefined`: TypeScript drops `undefined` from an inferred input type, and then
    // `createActor(safetyMachine)` and an `invoke` without `input` would not compile.
    input: {} as SafetyInput | void,
  },
  guards: {
    /** The requested call is a write (unknown kinds count as writes). */
    isWrite: ({ event }) => kindOf(event) === 'write',
    /** The recorded outcome applies as a write's: the kind of the call it is booked to (`booking`), else its own. */
    isWriteOutcome: ({ context, event }) => outcomeKind(context, event) === 'write',
    /** The recorded outcome applies as a resolve's or read's (`booking`). */
    isDiscoveryOutcome: ({ context, event }) => isDiscovery(outcomeKind(context, event)),
    /**
     * With `confirmDestructive`, the recorded outcome applies as a user
     * input's: a confirmation of the next destructive write (DESIGN.md §5.6).
     * Without it nothing needs confirming, and user input stays exactly like
     * neutral computation (§3.6); with it, only user input confirms.
     */
    isConfirmation: ({ context, event }) => context.confirmDestructive && outcomeKind(context, event) === 'user_input',
    /**
     * The successful resolve or read is evidence for the last write: the call
     * it is booked to (`booking`, which books an ambiguous success to the call
     * that permits least) was admitted in VERIFYING after that write
     * succeeded, or it ran unchecked in a session that never checks its calls
     * (record-only style); and it touches one of the write's known targets,
     * when the write has any (evidence must touch the target, DESIGN.md §5.4).
     */
    isVerifyingRead: ({ context, event }) => evidenceOf(context, event) === 'verifies',
    /**
     * Evidence must touch the target (DESIGN.md §5.4): the resolve or read
     * came after the write, but touches none of its known targets (or names
     * none itself), so it verifies nothing.
     */
    isOffTargetRead: ({ context, event }) => evidenceOf(context, event) === 'off-target',
    /**
     * The successful write verified itself (DESIGN.md §1, §5.8: its result
     * says `verification.ok === true`, or its tool is `selfVerifying`) and no
     * other write stays in flight: verification completes at once.
     */
    isSelfVerifiedWrite: ({ context, event }) =>
      field(event, 'selfVerified') === true &&
      outcomeKind(context, event) === 'write' &&
      !hasWriteInFlight(withoutSettled(context, event)),
    /**
     * The successful write verified itself, but a write stays in flight (an
     * ambiguous outcome keeps it, `booking`): verified, and completed once
     * that write's outcome is known.
     */
    isSelfVerifiedWriteBesideWrite: ({ context, event }) =>
      field(event, 'selfVerified') === true && outcomeKind(context, event) === 'write',
    /**
     * The requested write may run in READING: each of its known targets is
     * established (DESIGN.md §5.3), and, destructive with
     * `confirmDestructive`, it is confirmed (§5.6). A write without known
     * targets, not destructive, is admissible as in the spec.
     */
    isAdmissibleWrite: ({ context, event }) =>
      kindOf(event) === 'write' && unknownTargetOf(context, event) === null && !isUnconfirmedDestructive(context, event),
    /**
     * Validated target, target-aware (DESIGN.md §5.3): the requested write
     * names targets, and one of them is neither established by a successful
     * resolve or read nor under an established path (or it names more than
     * can be checked).
     */
    isWriteToUnknownTarget: ({ context, event }) => kindOf(event) === 'write' && unknownTargetOf(context, event) !== null,
    /**
     * Destructive writes (DESIGN.md §5.6): with `confirmDestructive`, a
     * destructive write and no user input succeeded since the last write.
     */
    isUnconfirmedDestructiveWrite: ({ context, event }) => isUnconfirmedDestructive(context, event),
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
      const targets = targetsOf(event);
      const call: InFlightCall = {
        key,
        tool: toolOf(event),
        kind,
        admittedAt: timeOf(event),
        verifiesWrite: params.verifying && isDiscovery(kind) ? context.writeSeq : null,
      };
      if (targets.length > 0) call.targets = [...targets];
      if (isDestructiveEvent(event)) call.destructive = true;
      // An id still in flight checked again (the adapter refuses this; a raw
      // actor may send it): both calls share the key, so a record of the id is
      // ambiguous and is booked worst case (`booking`). A write is kept
      // beside the earlier call, first under the id; of two other calls, the
      // one whose success would permit less is kept (the earlier among equals).
      const twin = id === null ? -1 : context.inFlight.findIndex((c) => c.key === key && c.kind !== 'write');
      let inFlight: InFlightCall[];
      if (twin < 0) inFlight = [...context.inFlight, call];
      else if (kind === 'write') inFlight = [...context.inFlight.slice(0, twin), call, ...context.inFlight.slice(twin)];
      else if (leeway(call, context) < leeway(context.inFlight[twin]!, context)) {
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
    /** Emit the refusal of a tool call; the reason names the target it is about, if any. */
    announceBlocked: emit(({ context, event }, params: { state: SafetyState; rule: BlockRule }) => {
      const target = blockedTargetOf(context, event, params.rule);
      return {
        type: 'gate.decided' as const,
        subject: 'tool' as const,
        allowed: false,
        state: params.state,
        tool: toolOf(event),
        kind: kindOf(event),
        callId: callIdOf(event),
        rule: params.rule,
        reason: reasonWithTarget(TOOL_BLOCK_REASONS[params.rule], target),
        recoveryId: recoveryIdFor(ErrCodeFSMBlocked, toolOf(event)),
        ...(target === null ? {} : { target }),
        at: timeOf(event),
      };
    }),
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
    /**
     * A write succeeded (or, strictly, failed): it now needs verification.
     * Its targets and destructive flag are the booked call's (else the
     * event's); a confirmation is used up.
     */
    recordWrite: assign(({ context, event }) => {
      const booked = booking(context, event);
      const call = booked === null ? undefined : context.inFlight[booked.applied];
      return {
        wroteThisEpisode: true,
        readAfterWrite: false,
        consecutiveVerifyBlocks: 0,
        lastWriteTool: toolOf(event) || (call?.tool ?? ''),
        lastWriteAt: timeOf(event),
        writeSeq: context.writeSeq + 1,
        writeTargets: [...appliedTargets(context, event, booked)],
        writeDestructive: call === undefined ? isDestructiveEvent(event) : call.destructive === true,
        confirmedSinceWrite: false,
      };
    }),
    /** A resolve or read succeeded: the last read, and its targets established (`appliedTargets`). */
    recordRead: assign(({ context, event }) => ({
      lastReadTool: toolOf(event),
      lastReadAt: timeOf(event),
      establishedTargets: establish(context.establishedTargets, appliedTargets(context, event)),
    })),
    /** The read-after-write that satisfies verification. */
    recordReadAfterWrite: assign({ readAfterWrite: true, consecutiveVerifyBlocks: 0 }),
    /**
     * The write verified itself (DESIGN.md §1): a read named `self_verify` is
     * recorded at the write's time, and read-after-write is set. It
     * establishes nothing.
     */
    recordSelfVerification: assign(({ event }) => ({
      lastReadTool: SELF_VERIFY_TOOL,
      lastReadAt: timeOf(event),
      readAfterWrite: true,
      consecutiveVerifyBlocks: 0,
    })),
    /** A user input succeeded: the next destructive write is confirmed (DESIGN.md §5.6). */
    recordConfirmation: assign({ confirmedSinceWrite: true }),
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
    /** Refuse the final answer: count it and emit the refusal; the reason names the target it is about, if any. */
    refuseAnswer: enqueueActions(
      ({ context, event, enqueue }, params: { state: SafetyState; rule: AnswerBlockRule }) => {
        const target = blockedTargetOf(context, event, params.rule);
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
          reason: reasonWithTarget(ANSWER_BLOCK_REASONS[params.rule], target),
          recoveryId: null,
          ...(target === null ? {} : { target }),
          at: timeOf(event),
        });
      },
    ),
    /** CompleteVerification: clear the verification cycle; `wroteThisEpisode` stays. */
    completeVerification: assign({ readAfterWrite: false, consecutiveVerifyBlocks: 0 }),
    /**
     * Reset: clear all tracking, pending recoveries and established targets
     * included (DESIGN.md §3.2); the session's settings stay.
     */
    resetSession: assign(({ context }) => ({
      ...initialSafetyContext({
        strictFailedWrites: context.strictFailedWrites,
        confirmDestructive: context.confirmDestructive,
      }),
      checksCalls: context.checksCalls,
    })),
    /**
     * ResetKeepProgress: drop verification tracking (flags, counters, calls in
     * flight, the last write's targets, a confirmation) and
     * `wroteThisEpisode` (DESIGN.md §1: the original's own test); keep the
     * established targets, the last read/write records and pending recoveries.
     */
    dropVerificationTracking: assign({
      wroteThisEpisode: false,
      readAfterWrite: false,
      consecutiveVerifyBlocks: 0,
      finalAnswerBlocks: 0,
      inFlight: [],
      writeTargets: [],
      writeDestructive: false,
      confirmedSinceWrite: false,
    }),
  },
}).createMachine({
  id: 'safety',
  description:
    'Pulse Assistant safety gate: classifies nothing itself, decides whether each classified tool call and the final answer may go ahead (ASSISTANT_SAFETY.md).',
  initial: 'RESOLVING',
  context: ({ input }) => initialSafetyContext(input ?? undefined),
  on: {
    'session.reset': {
      target: '.RESOLVING',
      actions: ['resetSession'],
      description: 'Reset: back to RESOLVING, all tracking cleared, pending recoveries and established targets included.',
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
            guard: 'isSelfVerifiedWrite',
            target: 'READING',
            actions: ['recordWrite', 'recordSelfVerification', 'settleCall', 'clearPendingRecovery', 'completeVerification'],
            description: 'A write recorded without a check whose result verified it (verification.ok, DESIGN.md §1): a self_verify read is recorded and verification completes at once.',
          },
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
            description: 'A successful resolve or read establishes the target, and its known targets.',
          },
          {
            guard: 'isConfirmation',
            actions: ['recordConfirmation', 'settleCall', 'clearPendingRecovery'],
            description: 'User input does not advance the state; it confirms the next destructive write (DESIGN.md §5.6).',
          },
          {
            actions: ['settleCall', 'clearPendingRecovery'],
            description: 'Neutral computation does not advance the state.',
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
            guard: 'isAdmissibleWrite',
            target: 'WRITING',
            actions: [
              { type: 'admitCall', params: { verifying: false } },
              { type: 'announceAllowed', params: { state: 'READING' } },
            ],
            description:
              'A write on a validated target (each known target established, DESIGN.md §5.3; a destructive one confirmed when required, §5.6) is admitted; it is in flight until its outcome is recorded.',
          },
          {
            guard: 'isWriteToUnknownTarget',
            actions: [
              'trackPendingRecovery',
              { type: 'announceBlocked', params: { state: 'READING', rule: 'unknown-target' } },
            ],
            description:
              'Validated target, target-aware (DESIGN.md §5.3): a write naming a target no successful resolve or read touched is blocked (FSM_BLOCKED).',
          },
          {
            guard: 'isUnconfirmedDestructiveWrite',
            actions: [
              'trackPendingRecovery',
              { type: 'announceBlocked', params: { state: 'READING', rule: 'needs-confirmation' } },
            ],
            description:
              'Destructive writes (DESIGN.md §5.6, confirmDestructive): blocked (FSM_BLOCKED) unless user input succeeded since the last write.',
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
            guard: 'isSelfVerifiedWrite',
            target: 'READING',
            actions: ['recordWrite', 'recordSelfVerification', 'settleCall', 'clearPendingRecovery', 'completeVerification'],
            description: 'A write recorded without a check whose result verified it (DESIGN.md §1): verified at once, still READING.',
          },
          {
            guard: 'isWriteOutcome',
            target: 'VERIFYING',
            actions: ['recordWrite', 'settleCall', 'clearPendingRecovery'],
            description: 'A write recorded without a check still happened: it needs verification.',
          },
          {
            guard: 'isDiscoveryOutcome',
            actions: ['recordRead', 'settleCall', 'clearPendingRecovery'],
            description: 'A successful resolve or read is recorded as the last read; its known targets are established.',
          },
          {
            guard: 'isConfirmation',
            actions: ['recordConfirmation', 'settleCall', 'clearPendingRecovery'],
            description: 'User input does not advance the state; it confirms the next destructive write.',
          },
          { actions: ['settleCall', 'clearPendingRecovery'], description: 'Neutral computation does not advance the state.' },
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
          description: 'ResetKeepProgress: the target, and the established targets, stay; wroteThisEpisode is cleared.',
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
            guard: 'isSelfVerifiedWrite',
            target: 'READING',
            actions: ['recordWrite', 'recordSelfVerification', 'settleCall', 'clearPendingRecovery', 'completeVerification'],
            description: 'The write succeeded and its result verified it (verification.ok or a selfVerifying tool, DESIGN.md §1, §5.8): a self_verify read is recorded and verification completes at once.',
          },
          {
            guard: 'isSelfVerifiedWriteBesideWrite',
            target: 'VERIFYING',
            actions: ['recordWrite', 'recordSelfVerification', 'settleCall', 'clearPendingRecovery'],
            description: 'The write verified itself, but a write it could be mistaken for stays in flight: verified, completed once that outcome is known.',
          },
          {
            guard: 'isWriteOutcome',
            target: 'VERIFYING',
            actions: ['recordWrite', 'settleCall', 'clearPendingRecovery'],
            description: 'The write succeeded: verification evidence is now required.',
          },
          {
            guard: 'isDiscoveryOutcome',
            actions: ['recordRead', 'settleCall', 'clearPendingRecovery'],
            description: 'A read that ran beside the write is recorded (its targets established), but verifies nothing.',
          },
          {
            guard: 'isConfirmation',
            actions: ['recordConfirmation', 'settleCall', 'clearPendingRecovery'],
            description: 'User input does not advance the state; it confirms the next destructive write.',
          },
          { actions: ['settleCall', 'clearPendingRecovery'], description: 'Neutral computation does not advance the state.' },
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
            guard: 'isSelfVerifiedWrite',
            target: 'READING',
            actions: ['recordWrite', 'recordSelfVerification', 'settleCall', 'clearPendingRecovery', 'completeVerification'],
            description: 'Another write recorded, and its result verified it (DESIGN.md §1): verified at once, back to READING.',
          },
          {
            guard: 'isSelfVerifiedWriteBesideWrite',
            actions: ['recordWrite', 'recordSelfVerification', 'settleCall', 'clearPendingRecovery'],
            description: 'Another write recorded that verified itself, while a write stays in flight: verified, completed once that outcome is known.',
          },
          {
            guard: 'isWriteOutcome',
            actions: ['recordWrite', 'settleCall', 'clearPendingRecovery'],
            description: 'Another write recorded: the new one needs verification.',
          },
          {
            guard: 'isVerifyingRead',
            actions: ['recordRead', 'recordReadAfterWrite', 'settleCall', 'clearPendingRecovery'],
            description:
              'Read-after-write: a resolve or read admitted after the write succeeded verifies it, if it touches one of its known targets (DESIGN.md §5.4).',
          },
          {
            guard: 'isOffTargetRead',
            actions: ['recordRead', 'settleCall', 'clearPendingRecovery'],
            description:
              'Evidence must touch the target (DESIGN.md §5.4): a read after the write that touches none of its known targets verifies nothing.',
          },
          {
            guard: 'isDiscoveryOutcome',
            actions: ['recordRead', 'settleCall', 'clearPendingRecovery'],
            description: 'A read admitted before the write succeeded is no evidence about it.',
          },
          {
            guard: 'isConfirmation',
            actions: ['recordConfirmation', 'settleCall', 'clearPendingRecovery'],
            description: 'User input is not verification; it confirms the next destructive write.',
          },
          { actions: ['settleCall', 'clearPendingRecovery'], description: 'Neutral computation is not verification.' },
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
