/**
 * The safety statechart: XState v5, pure (no clock, no I/O), every guard and
 * action named in `setup`, each action plain logic (`safety.actions.ts`) that
 * `setup` wraps. Decisions are emitted as `gate.decided`; cleared
 * pending recoveries as `recovery.succeeded`; both also go to the parent
 * actor (or a request's `replyTo`) when there is one.
 *
 * Spec: ASSISTANT_SAFETY.md "States", "The invariants", "Blocked calls and
 * recovery", "Resetting"; DESIGN.md §1 and §3.
 *
 * Guards are total: they read events through `safety.events.ts`, which never
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
 * follows the spec's session-wide rules. A write naming an unknown place
 * (`?/…`, or a path through a link an admitted write created,
 * `SafetyContext.links`) is admitted only when user input succeeded since
 * the last write (issue 24).
 *
 * Issue 28: a failure whose result raised a recoverable code (`errorCode`,
 * e.g. `STRICT_RESOLUTION`) opens a pending recovery of its tool for that
 * code (`trackRaisedRecovery`), cleared as a block's is; a failed write is
 * remembered by its key (`recordFailedWrite`) until a successful resolve or
 * read touches its target (`clearFailedWrites`), and the same write again is
 * refused in every state (`isRepeatedWrite`, rule `repeated-write`).
 */
import { enqueueActions, setup, type AnyActorRef } from 'xstate';
import {
  type AdmitParams,
  type AnswerBlockParams,
  type BlockParams,
  type SafetyActionLogic,
  type StateParams,
  initialSafetyContext,
  safetyActionLogic,
} from './safety.actions.js';
import {
  booking,
  evidenceOf,
  field,
  hasWriteInFlight,
  isDiscovery,
  isPossiblyAppliedEvent,
  isTrustedSelfVerification,
  isUnconfirmedDestructive,
  kindOf,
  outcomeKind,
  repeatedFailedWrite,
  unknownTargetOf,
  withoutSettled,
} from './safety.events.js';
import { phantomClaimOf } from './safety.claims.js';
import type { SafetyContext, SafetyEmitted, SafetyEvent, SafetyInput } from './safety.types.js';

export { initialSafetyContext } from './safety.actions.js';
export { isCallIdInFlight, normalizeEvent, toolEventOf } from './safety.events.js';

/**
 * The actor ref an event asks its decision to go to (`ReplyTo`), or
 * undefined: missing, or not an actor ref (no `send` and `_send` methods,
 * which XState's `sendTo` delivers through). Never throws.
 */
function replyToOf(event: unknown): AnyActorRef | undefined {
  const ref = field(event, 'replyTo');
  if (typeof ref !== 'object' || ref === null) return undefined;
  try {
    const { send, _send } = ref as { send?: unknown; _send?: unknown };
    return typeof send === 'function' && typeof _send === 'function' ? (ref as AnyActorRef) : undefined;
  } catch {
    return undefined; // a getter or proxy trap that throws: no reply target
  }
}

/**
 * Wraps an action's plain logic (`safety.actions.ts`) as an XState action:
 * the context it returns is assigned, then each event it returns is emitted
 * (`actor.on()`) and, when the machine runs as a child or the event names a
 * `replyTo`, sent there too (`replyTo` first, else the parent; neither: only
 * emitted, as `sendParent` would throw without a parent). Run with
 * `enqueueActions`, so it sees the context the actions before it in the
 * transition assigned, as `assign` would.
 */
function toAction<P>(logic: SafetyActionLogic<P>) {
  return enqueueActions<SafetyContext, SafetyEvent, P, SafetyEvent, never, never, never, never, SafetyEmitted>(
    ({ context, event, enqueue, self }, params) => {
      const result = logic(context, event, params);
      const assigned = result.context;
      if (assigned !== undefined) enqueue.assign(() => assigned);
      const emitted = result.emitted ?? [];
      if (emitted.length === 0) return;
      const to = replyToOf(event) ?? self._parent;
      for (const e of emitted) {
        enqueue.emit(e);
        if (to !== undefined) enqueue.sendTo(to, e);
      }
    },
  );
}

/**
 * The safety machine. Create an actor with
 * `createActor(safetyMachine, { input: { strictFailedWrites } })` (input
 * optional, `SafetyInput`), send `SafetyEvent`s, listen with
 * `actor.on('gate.decided', ...)`. Invoked or spawned by a parent, it also
 * sends the parent each `gate.decided` and `recovery.succeeded`
 * (`SafetyParentEvent`), or the `replyTo` actor a request names.
 * Verification completes by itself unless the input says
 * `autoCompleteVerification: false`.
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
    /**
     * The requested write repeats a failed one (issue 28): the same tool and
     * arguments (`writeKey`) as a write whose failure was recorded and whose
     * target no successful resolve or read has touched since. It may still
     * have happened (a charge behind a timeout), so it is refused in every
     * state and every policy.
     */
    isRepeatedWrite: ({ context, event }) => repeatedFailedWrite(context, event) !== undefined,
    /** The recorded outcome applies as a write's: the kind of the call it is booked to (`booking`), else its own. */
    isWriteOutcome: ({ context, event }) => outcomeKind(context, event) === 'write',
    /** The recorded outcome applies as a resolve's or read's (`booking`). */
    isDiscoveryOutcome: ({ context, event }) => isDiscovery(outcomeKind(context, event)),
    /**
     * The recorded outcome applies as a user input's: a confirmation of the
     * next write naming an unknown place (issue 24) and, with
     * `confirmDestructive`, of the next destructive write (DESIGN.md §5.6).
     * Recorded whatever `confirmDestructive` says. Only user input confirms
     * (neutral computation does not), and in a session that checks its calls
     * only one that was checked (booked to a call in flight), as only a
     * checked read verifies.
     */
    isConfirmation: ({ context, event }) =>
      outcomeKind(context, event) === 'user_input' && (!context.checksCalls || booking(context, event) !== null),
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
     * says `verification.ok === true`, or its tool is `selfVerifying`; and it
     * is surely the write's outcome, `isTrustedSelfVerification`) and no
     * other write stays in flight: verification completes at once.
     */
    isSelfVerifiedWrite: ({ context, event }) =>
      isTrustedSelfVerification(context, event) &&
      outcomeKind(context, event) === 'write' &&
      !hasWriteInFlight(withoutSettled(context, event)),
    /**
     * The successful write verified itself, but a write stays in flight (an
     * ambiguous outcome keeps it, `booking`): verified, and completed once
     * that write's outcome is known.
     */
    isSelfVerifiedWriteBesideWrite: ({ context, event }) =>
      isTrustedSelfVerification(context, event) && outcomeKind(context, event) === 'write',
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
    /**
     * A failed write counts as possibly applied (strict failed writes, DESIGN.md §3.8): the session
     * says so, or the failure itself does (`possiblyApplied`, issue 26).
     */
    isStrictFailedWrite: ({ context, event }) =>
      (context.strictFailedWrites || isPossiblyAppliedEvent(event)) && outcomeKind(context, event) === 'write',
    /** The failure is booked to a write (unambiguously its, `booking`), the last write in flight. */
    isLastWriteInFlight: ({ context, event }) =>
      outcomeKind(context, event) === 'write' && !hasWriteInFlight(withoutSettled(context, event)),
    /**
     * Phantom-execution claim (issue 28 item 2): the final answer claims a
     * change (`answer.requested`'s `claims`) and no write was recorded in the
     * session, or a claim names places and no recorded write touched any
     * (`phantomClaimOf`).
     */
    isPhantomClaim: ({ context, event }) => phantomClaimOf(context, event) !== null,
    /** No read or resolve has run since the last write succeeded. */
    lacksReadAfterWrite: ({ context }) => !context.readAfterWrite,
    /**
     * No resolve or read ever succeeded (the session reached VERIFYING by a
     * write recorded without a check): ResetKeepProgress has no target to keep.
     */
    lacksEstablishedTarget: ({ context }) => context.lastReadAt === null,
    /** A write has been admitted and its outcome is not recorded yet. */
    hasWriteInFlight: ({ context }) => hasWriteInFlight(context.inFlight),
    /** Verified, and no write in flight: CompleteVerification may return to READING. */
    canCompleteVerification: ({ context }) => context.readAfterWrite && !hasWriteInFlight(context.inFlight),
    /**
     * With `autoCompleteVerification` (the default), CompleteVerification is
     * due: the session is verified and no write is in flight.
     */
    shouldCompleteVerification: ({ context }) =>
      context.autoCompleteVerification !== false && context.readAfterWrite && !hasWriteInFlight(context.inFlight),
  },
  actions: {
    admitCall: toAction<AdmitParams>(safetyActionLogic.admitCall),
    announceAllowed: toAction<StateParams>(safetyActionLogic.announceAllowed),
    announceBlocked: toAction<BlockParams>(safetyActionLogic.announceBlocked),
    trackPendingRecovery: toAction(safetyActionLogic.trackPendingRecovery),
    trackRaisedRecovery: toAction(safetyActionLogic.trackRaisedRecovery),
    recordFailedWrite: toAction(safetyActionLogic.recordFailedWrite),
    clearFailedWrites: toAction(safetyActionLogic.clearFailedWrites),
    countVerifyBlock: toAction(safetyActionLogic.countVerifyBlock),
    settleCall: toAction(safetyActionLogic.settleCall),
    recordWrite: toAction(safetyActionLogic.recordWrite),
    recordRead: toAction(safetyActionLogic.recordRead),
    recordReadAfterWrite: toAction(safetyActionLogic.recordReadAfterWrite),
    recordSelfVerification: toAction(safetyActionLogic.recordSelfVerification),
    recordConfirmation: toAction(safetyActionLogic.recordConfirmation),
    recordLinks: toAction(safetyActionLogic.recordLinks),
    clearPendingRecovery: toAction(safetyActionLogic.clearPendingRecovery),
    expirePendingRecoveries: toAction(safetyActionLogic.expirePendingRecoveries),
    allowAnswer: toAction<StateParams>(safetyActionLogic.allowAnswer),
    refuseAnswer: toAction<AnswerBlockParams>(safetyActionLogic.refuseAnswer),
    completeVerification: toAction(safetyActionLogic.completeVerification),
    resetSession: toAction(safetyActionLogic.resetSession),
    dropVerificationTracking: toAction(safetyActionLogic.dropVerificationTracking),
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
            guard: 'isRepeatedWrite',
            actions: ['trackPendingRecovery', { type: 'announceBlocked', params: { state: 'RESOLVING', rule: 'repeated-write' } }],
            description:
              'The same write (same tool, same arguments) as one that failed or timed out, whose target was not read since: it may have happened, so it is blocked (FSM_BLOCKED, issue 28).',
          },
          {
            guard: 'isWrite',
            actions: ['trackPendingRecovery', { type: 'announceBlocked', params: { state: 'RESOLVING', rule: 'no-target' } }],
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
            description:
              'A write recorded without a check whose result verified it (verification.ok, DESIGN.md §1): a self_verify read is recorded and verification completes at once.',
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
            actions: ['recordRead', 'clearFailedWrites', 'settleCall', 'clearPendingRecovery'],
            description: 'A successful resolve or read establishes the target, and its known targets.',
          },
          {
            guard: 'isConfirmation',
            actions: ['recordConfirmation', 'settleCall', 'clearPendingRecovery'],
            description:
              'User input does not advance the state; it confirms the next write naming an unknown place, and the next destructive write (DESIGN.md §5.6).',
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
            actions: ['recordFailedWrite', 'trackRaisedRecovery', 'recordWrite', 'settleCall'],
            description: 'Strict failed writes: a failed write may have applied, so it needs verification.',
          },
          { actions: ['recordFailedWrite', 'trackRaisedRecovery', 'settleCall'], description: 'A failed call causes no transition.' },
        ],
        'session.resetKeepingProgress': {
          actions: ['dropVerificationTracking'],
          description: 'ResetKeepProgress: no target was established, so the session stays RESOLVING.',
        },
        'answer.requested': [
          {
            guard: 'isPhantomClaim',
            actions: [{ type: 'refuseAnswer', params: { state: 'RESOLVING', rule: 'phantom-claim' } }],
            description: 'Phantom-execution claim: the final answer claims a change no recorded write made (issue 28 item 2).',
          },
          {
            actions: [{ type: 'allowAnswer', params: { state: 'RESOLVING' } }],
            description: 'Nothing was changed, and the answer claims no change: the final answer is allowed.',
          },
        ],
      },
    },
    READING: {
      description: 'A target is established: querying is allowed, and one write may be admitted.',
      on: {
        'tool.requested': [
          {
            guard: 'isRepeatedWrite',
            actions: ['trackPendingRecovery', { type: 'announceBlocked', params: { state: 'READING', rule: 'repeated-write' } }],
            description:
              'The same write (same tool, same arguments) as one that failed or timed out, whose target was not read since: it may have happened, so it is blocked (FSM_BLOCKED, issue 28).',
          },
          {
            guard: 'isAdmissibleWrite',
            target: 'WRITING',
            actions: [
              { type: 'admitCall', params: { verifying: false } },
              'recordLinks',
              { type: 'announceAllowed', params: { state: 'READING' } },
            ],
            description:
              'A write on a validated target (each known target established, DESIGN.md §5.3; an unknown place or a destructive one confirmed when required, §5.6) is admitted; it is in flight until its outcome is recorded, and the links it creates are kept.',
          },
          {
            guard: 'isWriteToUnknownTarget',
            actions: ['trackPendingRecovery', { type: 'announceBlocked', params: { state: 'READING', rule: 'unknown-target' } }],
            description:
              'Validated target, target-aware (DESIGN.md §5.3): a write naming a target no successful resolve or read touched, or an unknown place not confirmed by user input since the last write, is blocked (FSM_BLOCKED).',
          },
          {
            guard: 'isUnconfirmedDestructiveWrite',
            actions: ['trackPendingRecovery', { type: 'announceBlocked', params: { state: 'READING', rule: 'needs-confirmation' } }],
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
            actions: ['recordRead', 'clearFailedWrites', 'settleCall', 'clearPendingRecovery'],
            description: 'A successful resolve or read is recorded as the last read; its known targets are established.',
          },
          {
            guard: 'isConfirmation',
            actions: ['recordConfirmation', 'settleCall', 'clearPendingRecovery'],
            description: 'User input does not advance the state; it confirms the next write naming an unknown place or destructive.',
          },
          { actions: ['settleCall', 'clearPendingRecovery'], description: 'Neutral computation does not advance the state.' },
        ],
        'tool.failed': [
          {
            guard: 'isStrictFailedWrite',
            target: 'VERIFYING',
            actions: ['recordFailedWrite', 'trackRaisedRecovery', 'recordWrite', 'settleCall'],
            description: 'Strict failed writes: a failed write may have applied, so it needs verification.',
          },
          { actions: ['recordFailedWrite', 'trackRaisedRecovery', 'settleCall'], description: 'A failed call causes no transition.' },
        ],
        'session.resetKeepingProgress': {
          actions: ['dropVerificationTracking'],
          description: 'ResetKeepProgress: the target, and the established targets, stay; wroteThisEpisode is cleared.',
        },
        'answer.requested': [
          {
            guard: 'isPhantomClaim',
            actions: [{ type: 'refuseAnswer', params: { state: 'READING', rule: 'phantom-claim' } }],
            description: 'Phantom-execution claim: the final answer claims a change no recorded write made (issue 28 item 2).',
          },
          {
            actions: [{ type: 'allowAnswer', params: { state: 'READING' } }],
            description: 'No write is unverified or in flight: the final answer is allowed.',
          },
        ],
      },
    },
    WRITING: {
      description: 'A write was admitted and its outcome is not known yet. Another write and the final answer are refused; reads are not.',
      on: {
        'tool.requested': [
          {
            guard: 'isRepeatedWrite',
            actions: ['trackPendingRecovery', { type: 'announceBlocked', params: { state: 'WRITING', rule: 'repeated-write' } }],
            description:
              'The same write (same tool, same arguments) as one that failed or timed out, whose target was not read since: it may have happened, so it is blocked (FSM_BLOCKED, issue 28).',
          },
          {
            guard: 'isWrite',
            actions: ['trackPendingRecovery', { type: 'announceBlocked', params: { state: 'WRITING', rule: 'write-in-flight' } }],
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
            description:
              'The write succeeded and its result verified it (verification.ok or a selfVerifying tool, DESIGN.md §1, §5.8): a self_verify read is recorded and verification completes at once.',
          },
          {
            guard: 'isSelfVerifiedWriteBesideWrite',
            target: 'VERIFYING',
            actions: ['recordWrite', 'recordSelfVerification', 'settleCall', 'clearPendingRecovery'],
            description:
              'The write verified itself, but a write it could be mistaken for stays in flight: verified, completed once that outcome is known.',
          },
          {
            guard: 'isWriteOutcome',
            target: 'VERIFYING',
            actions: ['recordWrite', 'settleCall', 'clearPendingRecovery'],
            description: 'The write succeeded: verification evidence is now required.',
          },
          {
            guard: 'isDiscoveryOutcome',
            actions: ['recordRead', 'clearFailedWrites', 'settleCall', 'clearPendingRecovery'],
            description: 'A read that ran beside the write is recorded (its targets established), but verifies nothing.',
          },
          {
            guard: 'isConfirmation',
            actions: ['recordConfirmation', 'settleCall', 'clearPendingRecovery'],
            description: 'User input does not advance the state; it confirms the next write naming an unknown place or destructive.',
          },
          { actions: ['settleCall', 'clearPendingRecovery'], description: 'Neutral computation does not advance the state.' },
        ],
        'tool.failed': [
          {
            guard: 'isStrictFailedWrite',
            target: 'VERIFYING',
            actions: ['recordFailedWrite', 'trackRaisedRecovery', 'recordWrite', 'settleCall'],
            description: 'Strict failed writes: the write may have applied, so it needs verification.',
          },
          {
            guard: 'isLastWriteInFlight',
            target: 'READING',
            actions: ['recordFailedWrite', 'trackRaisedRecovery', 'settleCall'],
            description: 'The write failed: nothing changed, back to READING.',
          },
          { actions: ['recordFailedWrite', 'trackRaisedRecovery', 'settleCall'], description: 'A failed call causes no transition.' },
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
      always: {
        guard: 'shouldCompleteVerification',
        target: 'READING',
        actions: ['completeVerification'],
        description:
          'CompleteVerification by itself (autoCompleteVerification, the default): once verified with no write in flight, back to READING.',
      },
      on: {
        'tool.requested': [
          {
            guard: 'isRepeatedWrite',
            actions: [
              'trackPendingRecovery',
              'countVerifyBlock',
              { type: 'announceBlocked', params: { state: 'VERIFYING', rule: 'repeated-write' } },
            ],
            description:
              'The same write (same tool, same arguments) as one that failed or timed out, whose target was not read since: it may have happened, so it is blocked (FSM_BLOCKED, issue 28).',
          },
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
            description:
              'Another write recorded that verified itself, while a write stays in flight: verified, completed once that outcome is known.',
          },
          {
            guard: 'isWriteOutcome',
            actions: ['recordWrite', 'settleCall', 'clearPendingRecovery'],
            description: 'Another write recorded: the new one needs verification.',
          },
          {
            guard: 'isVerifyingRead',
            actions: ['recordRead', 'recordReadAfterWrite', 'clearFailedWrites', 'settleCall', 'clearPendingRecovery'],
            description:
              'Read-after-write: a resolve or read admitted after the write succeeded verifies it, if it touches one of its known targets (DESIGN.md §5.4).',
          },
          {
            guard: 'isOffTargetRead',
            actions: ['recordRead', 'clearFailedWrites', 'settleCall', 'clearPendingRecovery'],
            description:
              'Evidence must touch the target (DESIGN.md §5.4): a read after the write that touches none of its known targets verifies nothing.',
          },
          {
            guard: 'isDiscoveryOutcome',
            actions: ['recordRead', 'clearFailedWrites', 'settleCall', 'clearPendingRecovery'],
            description: 'A read admitted before the write succeeded is no evidence about it.',
          },
          {
            guard: 'isConfirmation',
            actions: ['recordConfirmation', 'settleCall', 'clearPendingRecovery'],
            description: 'User input is not verification; it confirms the next write naming an unknown place or destructive.',
          },
          { actions: ['settleCall', 'clearPendingRecovery'], description: 'Neutral computation is not verification.' },
        ],
        'tool.failed': [
          {
            guard: 'isStrictFailedWrite',
            actions: ['recordFailedWrite', 'trackRaisedRecovery', 'recordWrite', 'settleCall'],
            description: 'Strict failed writes: the write may have applied, so it needs verification.',
          },
          { actions: ['recordFailedWrite', 'trackRaisedRecovery', 'settleCall'], description: 'A failed call causes no transition.' },
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
            guard: 'isPhantomClaim',
            actions: [{ type: 'refuseAnswer', params: { state: 'VERIFYING', rule: 'phantom-claim' } }],
            description: 'Phantom-execution claim: the final answer claims a change no recorded write made (issue 28 item 2).',
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
        'session.resetKeepingProgress': [
          {
            guard: 'lacksEstablishedTarget',
            target: 'RESOLVING',
            actions: ['dropVerificationTracking'],
            description: 'ResetKeepProgress with no target ever established (a write recorded without a check): back to RESOLVING.',
          },
          {
            target: 'READING',
            actions: ['dropVerificationTracking'],
            description: 'ResetKeepProgress: verification tracking dropped, back to READING, the target kept.',
          },
        ],
      },
    },
  },
});

/** The safety machine's type, for typing actors and snapshots. */
export type SafetyMachine = typeof safetyMachine;
