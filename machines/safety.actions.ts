/**
 * The safety machine's actions as plain, pure functions of
 * `(context, event, params)`: each returns the part of the context it
 * changes and the events it emits, and does nothing else. `setup()` in
 * `safety.machine.ts` wraps each one (`toAction`), so XState runs them; a
 * compiled interpreter can call them directly. The statechart stays the one
 * source of truth for which action runs when.
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants", "Blocked calls and recovery",
 * "Resetting"; DESIGN.md §1, §3, §5.
 */
import {
  ANSWER_BLOCK_REASONS,
  ErrCodeFSMBlocked,
  MAX_FAILED_WRITES,
  MAX_IN_FLIGHT,
  MAX_PENDING_RECOVERIES,
  SELF_VERIFY_TOOL,
  reasonWithTarget,
  recoveryIdFor,
  toolBlockReason,
} from './safety.policy.js';
import {
  appliedTargets,
  blockedTargetOf,
  booking,
  callIdOf,
  errorCodeOf,
  establishableTargets,
  idKeyOf,
  isDestructiveEvent,
  isDiscovery,
  isExpired,
  isNeverRanEvent,
  kindOf,
  leeway,
  liveRecoveries,
  linksOf,
  targetsOf,
  timeOf,
  toolOf,
  verificationTargets,
  withoutSettled,
  writeKeyOf,
} from './safety.events.js';
import { establish, keepLinks, touchesAny } from './safety.targets.js';
import { phantomClaimOf, phantomClaimReason, withWrittenTargets } from './safety.claims.js';
import type {
  AnswerBlockRule,
  BlockRule,
  FailedWrite,
  InFlightCall,
  PendingRecovery,
  SafetyContext,
  SafetyEmitted,
  SafetyEvent,
  SafetyInput,
  SafetyState,
} from './safety.types.js';

/**
 * What an action does: `context`, the fields it assigns (the rest stay), and
 * `emitted`, the events it emits, in order. Both absent: nothing.
 */
export interface SafetyActionResult {
  context?: Partial<SafetyContext>;
  emitted?: readonly SafetyEmitted[];
}

/**
 * An action's logic: pure, total (never throws on a malformed event: it
 * reads events through `safety.events.ts`), the context as left by the
 * actions before it in the same transition.
 */
export type SafetyActionLogic<P = undefined> = (context: SafetyContext, event: SafetyEvent, params: P) => SafetyActionResult;

/** Params of the actions that announce a decision taken in a state. */
export interface StateParams {
  state: SafetyState;
}

/** Params of `admitCall`: whether the call is admitted in VERIFYING (so a read may verify the write). */
export interface AdmitParams {
  verifying: boolean;
}

/** Params of `announceBlocked`: the state and the rule that refused. */
export interface BlockParams {
  state: SafetyState;
  rule: BlockRule;
}

/** Params of `refuseAnswer`: the state and the rule that refused the final answer. */
export interface AnswerBlockParams {
  state: SafetyState;
  rule: AnswerBlockRule;
}

/**
 * The context of a fresh session, with the settings of `input` (each
 * defaults as documented in `SafetyInput`). `autoCompleteVerification` is
 * present only when false.
 */
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
    // Left out when true, the default (absent means true): measured on Node 20, a context of exactly 20
    // fields that XState's `assign` copies (`Object.assign({}, context, update)`) falls into V8's slow
    // dictionary mode, and every event through an XState actor then costs about 2.5 times as much.
    ...(input.autoCompleteVerification === false ? { autoCompleteVerification: false } : {}),
  };
}

/** What an action returns when it changes nothing and emits nothing (shared: results are never changed). */
const NOTHING: SafetyActionResult = Object.freeze({});

/** Track an admitted call until its outcome is recorded. */
const admitCall: SafetyActionLogic<AdmitParams> = (context, event, params) => {
  const idKey = idKeyOf(event);
  const kind = kindOf(event);
  const key = idKey ?? `anon:${context.anonSeq}`;
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
  const writeKey = kind === 'write' ? writeKeyOf(event) : null;
  if (writeKey !== null) call.writeKey = writeKey;
  // An id still in flight checked again (the adapter refuses this; a raw
  // actor may send it): both calls share the key, so a record of the id is
  // ambiguous and is booked worst case (`booking`). A write is kept
  // beside the earlier call, first under the id; of two other calls, the
  // one whose success would permit less is kept (the earlier among equals).
  const twin = idKey === null ? -1 : twinOf(context.inFlight, idKey);
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
  return { context: { inFlight, anonSeq: idKey === null ? context.anonSeq + 1 : context.anonSeq, checksCalls: true } };
};

/** The index of the call in flight under `key` that is not a write, or -1 (a loop: no closure per admitted call). */
function twinOf(inFlight: readonly InFlightCall[], key: string): number {
  for (let i = 0; i < inFlight.length; i += 1) if (inFlight[i]!.key === key && inFlight[i]!.kind !== 'write') return i;
  return -1;
}

/** Emit the admission of a tool call. */
const announceAllowed: SafetyActionLogic<StateParams> = (_context, event, params) => ({
  emitted: [
    {
      type: 'gate.decided',
      subject: 'tool',
      allowed: true,
      state: params.state,
      tool: toolOf(event),
      kind: kindOf(event),
      callId: callIdOf(event),
      rule: null,
      reason: null,
      recoveryId: null,
      at: timeOf(event),
    },
  ],
});

/** Emit the refusal of a tool call; the reason names the target it is about, if any. */
const announceBlocked: SafetyActionLogic<BlockParams> = (context, event, params) => {
  const target = blockedTargetOf(context, event, params.rule);
  return {
    emitted: [
      {
        type: 'gate.decided',
        subject: 'tool',
        allowed: false,
        state: params.state,
        tool: toolOf(event),
        kind: kindOf(event),
        callId: callIdOf(event),
        rule: params.rule,
        reason: toolBlockReason(params.rule, target),
        recoveryId: recoveryIdFor(ErrCodeFSMBlocked, toolOf(event)),
        ...(target === null ? {} : { target }),
        at: timeOf(event),
      },
    ],
  };
};

/**
 * Open or bump the pending recovery of the blocked tool: one per tool and
 * code, `attempts` counting repeated blocks, the TTL running from the
 * latest block. Expired entries are dropped on the way.
 */
const trackPendingRecovery: SafetyActionLogic = (context, event) => ({
  context: { pendingRecoveries: bumpedRecoveries(context, toolOf(event), ErrCodeFSMBlocked, timeOf(event)) },
});

/**
 * The pending recoveries once `tool` is blocked with `errorCode` at `at`
 * (epoch ms): its entry opened, or bumped (`attempts`, `lastBlockedAt`);
 * expired entries dropped; past `MAX_PENDING_RECOVERIES` the entry blocked
 * least recently dropped. A new object.
 */
function bumpedRecoveries(context: SafetyContext, tool: string, errorCode: string, at: number): Record<string, PendingRecovery> {
  const recoveryId = recoveryIdFor(errorCode, tool);
  const pendingRecoveries = liveRecoveries(context.pendingRecoveries, at);
  const previous = Object.prototype.hasOwnProperty.call(pendingRecoveries, recoveryId) ? pendingRecoveries[recoveryId] : undefined;
  pendingRecoveries[recoveryId] = previous
    ? { ...previous, lastBlockedAt: at, attempts: previous.attempts + 1 }
    : { recoveryId, errorCode, tool, createdAt: at, lastBlockedAt: at, attempts: 1 };
  const ids = Object.keys(pendingRecoveries);
  if (ids.length > MAX_PENDING_RECOVERIES) {
    const stalest = ids
      .filter((id) => id !== recoveryId)
      .reduce((a, b) => (pendingRecoveries[b]!.lastBlockedAt < pendingRecoveries[a]!.lastBlockedAt ? b : a));
    delete pendingRecoveries[stalest];
  }
  return pendingRecoveries;
}

/**
 * A failure whose result raised a recoverable error code
 * (`ToolFailedEvent.errorCode`, issue 28: `STRICT_RESOLUTION` in the Pulse
 * catalog) opens or bumps the pending recovery of its tool for that code,
 * exactly as a block of the gate does for `FSM_BLOCKED`, and emits
 * `recovery.raised` with it. Nothing for a failure without a code.
 */
const trackRaisedRecovery: SafetyActionLogic = (context, event) => {
  const errorCode = errorCodeOf(event);
  if (errorCode === null) return NOTHING;
  const at = timeOf(event);
  const tool = toolOf(event);
  const pendingRecoveries = bumpedRecoveries(context, tool, errorCode, at);
  const recovery = pendingRecoveries[recoveryIdFor(errorCode, tool)]!;
  return { context: { pendingRecoveries }, emitted: [{ type: 'recovery.raised', recovery, at }] };
};

/**
 * A failure booked to a write (the admitted write's, or a write recorded
 * without a check) that may still have happened is remembered for
 * `repeated-write` (issue 28), under the write's key: the admitted call's
 * `writeKey`, or the event's own for a record booked to no call. Nothing
 * for a failure that is no write's, a call that never ran (`neverRan`), or
 * a write without a key. The same key again replaces its entry (now the
 * latest); past `MAX_FAILED_WRITES` the oldest is dropped. In every policy.
 */
const recordFailedWrite: SafetyActionLogic = (context, event) => {
  if (isNeverRanEvent(event)) return NOTHING;
  const booked = booking(context, event);
  const call = booked === null ? undefined : context.inFlight[booked.applied];
  if ((call?.kind ?? kindOf(event)) !== 'write') return NOTHING;
  const key = call === undefined ? writeKeyOf(event) : (call.writeKey ?? null);
  if (key === null) return NOTHING;
  const targets = appliedTargets(context, event, booked);
  const entry: FailedWrite = { key, tool: call?.tool ?? toolOf(event), at: timeOf(event) };
  if (targets.length > 0) entry.targets = [...targets];
  const failedWrites = [...(context.failedWrites ?? []).filter((failed) => failed.key !== key), entry];
  return { context: { failedWrites: failedWrites.length > MAX_FAILED_WRITES ? failedWrites.slice(1) : failedWrites } };
};

/**
 * A successful resolve or read clears the failed writes it is evidence
 * about (issue 28): those whose targets it touches, any read for a failed
 * write without known targets (as verification, DESIGN.md §5.4). Timeless,
 * as the machine is: a read that ran beside the failed write clears it too
 * (the model sees the target as it is after the write was sent). In a
 * session that checks its calls, a read recorded without its check clears
 * nothing (as it verifies nothing).
 */
const clearFailedWrites: SafetyActionLogic = (context, event) => {
  const failed = context.failedWrites;
  if (failed === undefined || failed.length === 0) return NOTHING;
  const booked = booking(context, event);
  if (booked === null && context.checksCalls) return NOTHING;
  const reads = establishableTargets(context, appliedTargets(context, event, booked));
  const left = failed.filter((entry) => !touchesAny(reads, entry.targets ?? []));
  if (left.length === failed.length) return NOTHING;
  return { context: { failedWrites: left.length === 0 ? undefined : left } };
};

/** A write blocked in VERIFYING: count it. Telemetry only; it never waives anything. */
const countVerifyBlock: SafetyActionLogic = (context) => ({
  context: { consecutiveVerifyBlocks: context.consecutiveVerifyBlocks + 1 },
});

/**
 * Take the call the outcome books out of flight (`booking`). After
 * `recordWrite` in the same transition it sees the new write count; that
 * changes no choice that matters: once a write succeeded, no call still in
 * flight can verify anything, so those left are alike.
 */
const settleCall: SafetyActionLogic = (context, event) => ({ context: { inFlight: withoutSettled(context, event) } });

/**
 * A write succeeded (or, strictly, failed): it now needs verification.
 * Its targets and destructive flag are the booked call's (else the
 * event's); a confirmation is used up.
 */
const recordWrite: SafetyActionLogic = (context, event) => {
  const booked = booking(context, event);
  const call = booked === null ? undefined : context.inFlight[booked.applied];
  const writtenTargets = withWrittenTargets(context.writtenTargets, appliedTargets(context, event, booked));
  return {
    context: {
      wroteThisEpisode: true,
      readAfterWrite: false,
      consecutiveVerifyBlocks: 0,
      lastWriteTool: toolOf(event) || (call?.tool ?? ''),
      lastWriteAt: timeOf(event),
      writeSeq: context.writeSeq + 1,
      writeTargets: verificationTargets(appliedTargets(context, event, booked)),
      writeDestructive: call === undefined ? isDestructiveEvent(event) : call.destructive === true,
      confirmedSinceWrite: false,
      ...(writtenTargets === undefined ? {} : { writtenTargets }),
    },
  };
};

/**
 * A resolve or read succeeded: the last read, and its targets established
 * (`appliedTargets`), but for unknown places (`establishableTargets`: `?/…`
 * and paths at or under a kept link establish nothing, issue 24).
 */
const recordRead: SafetyActionLogic = (context, event) => ({
  context: {
    lastReadTool: toolOf(event),
    lastReadAt: timeOf(event),
    establishedTargets: establish(context.establishedTargets, establishableTargets(context, appliedTargets(context, event))),
  },
});

/**
 * An admitted write's symbolic links that lead out of their directory
 * (`ToolRequestedEvent.links`, issue 24) are kept (`keepLinks`: bounded by
 * `MAX_LINKS`, past it `LINKS_OVERFLOW`, fail closed). Nothing changes for a
 * write that names none.
 */
const recordLinks: SafetyActionLogic = (context, event) => {
  const { links, overflow } = linksOf(event);
  if (links.length === 0 && !overflow) return NOTHING;
  const kept = keepLinks(context.links, links, overflow);
  return kept === context.links ? NOTHING : { context: { links: kept as string[] } };
};

/** The read-after-write that satisfies verification. */
const recordReadAfterWrite: SafetyActionLogic = () => ({ context: { readAfterWrite: true, consecutiveVerifyBlocks: 0 } });

/**
 * The write verified itself (DESIGN.md §1): a read named `self_verify` is
 * recorded at the write's time, and read-after-write is set. It
 * establishes nothing.
 */
const recordSelfVerification: SafetyActionLogic = (_context, event) => ({
  context: { lastReadTool: SELF_VERIFY_TOOL, lastReadAt: timeOf(event), readAfterWrite: true, consecutiveVerifyBlocks: 0 },
});

/**
 * A user input succeeded: the next destructive write (DESIGN.md §5.6, with
 * `confirmDestructive`) and the next write naming an unknown place (issue
 * 24) are confirmed.
 */
const recordConfirmation: SafetyActionLogic = () => ({ context: { confirmedSinceWrite: true } });

/**
 * A successful call of a blocked tool clears its pending recoveries (a
 * recovery), of every code (`FSM_BLOCKED`, and any a result of it raised),
 * and emits `recovery.succeeded` for each, in their order. Expired entries
 * are dropped on the way; nothing changes when none is pending or expired.
 */
const clearPendingRecovery: SafetyActionLogic = (context, event) => {
  const pending = context.pendingRecoveries;
  if (isEmpty(pending)) return NOTHING; // the common case: nothing to clear or expire, nothing copied
  const at = timeOf(event);
  const tool = toolOf(event);
  const own = liveOf(pending, tool, at);
  // Nothing of this tool pending and nothing expired (a blocked tool, then other calls): nothing changes, nothing copied.
  if (own.length === 0 && !hasExpired(pending, at)) return NOTHING;
  // The live ones but this tool's, copied without them (no `delete`: it would turn the copy into a slow dictionary).
  let pendingRecoveries = liveRecoveries(pending, at);
  if (own.length === 0) return { context: { pendingRecoveries } };
  for (const recovery of own) pendingRecoveries = liveRecoveries(pendingRecoveries, at, recovery.recoveryId);
  return { context: { pendingRecoveries }, emitted: own.map((recovery) => ({ type: 'recovery.succeeded', recovery, at })) };
};

/** The pending recoveries of `tool` alive at `at` (epoch ms), of every code, in their order. */
function liveOf(recoveries: Record<string, PendingRecovery>, tool: string, at: number): PendingRecovery[] {
  const live: PendingRecovery[] = [];
  for (const id in recoveries) {
    if (!Object.prototype.hasOwnProperty.call(recoveries, id)) continue;
    const recovery = recoveries[id]!;
    if (recovery.tool === tool && !isExpired(recovery, at)) live.push(recovery);
  }
  return live;
}

/** Whether a pending recovery has expired at `at` (epoch ms), without copying them. */
function hasExpired(recoveries: Record<string, PendingRecovery>, at: number): boolean {
  for (const id in recoveries) {
    if (Object.prototype.hasOwnProperty.call(recoveries, id) && isExpired(recoveries[id]!, at)) return true;
  }
  return false;
}

/** Whether an object has no own enumerable keys, without building the list of them. */
function isEmpty(record: object): boolean {
  for (const key in record) if (Object.prototype.hasOwnProperty.call(record, key)) return false;
  return true;
}

/** Drop pending recoveries older than the TTL. */
const expirePendingRecoveries: SafetyActionLogic = (context, event) => ({
  context: { pendingRecoveries: liveRecoveries(context.pendingRecoveries, timeOf(event)) },
});

/** Emit the admission of the final answer. */
const allowAnswer: SafetyActionLogic<StateParams> = (_context, event, params) => ({
  emitted: [
    {
      type: 'gate.decided',
      subject: 'answer',
      allowed: true,
      state: params.state,
      tool: null,
      kind: null,
      callId: null,
      rule: null,
      reason: null,
      recoveryId: null,
      at: timeOf(event),
    },
  ],
});

/**
 * Refuse the final answer: count it and emit the refusal; the reason names the target it is about, if any.
 * A `phantom-claim` refusal's reason names the claim and what would support it; its target is the place
 * no write touched (`phantomClaimOf`).
 */
const refuseAnswer: SafetyActionLogic<AnswerBlockParams> = (context, event, params) => {
  const phantom = params.rule === 'phantom-claim' ? phantomClaimOf(context, event) : null;
  const target = phantom === null ? blockedTargetOf(context, event, params.rule) : phantom.place;
  const reason =
    phantom === null ? reasonWithTarget(ANSWER_BLOCK_REASONS[params.rule], target) : phantomClaimReason(phantom.claim, phantom.place);
  return {
    context: { finalAnswerBlocks: context.finalAnswerBlocks + 1 },
    emitted: [
      {
        type: 'gate.decided',
        subject: 'answer',
        allowed: false,
        state: params.state,
        tool: null,
        kind: null,
        callId: null,
        rule: params.rule,
        reason,
        recoveryId: null,
        ...(target === null ? {} : { target }),
        at: timeOf(event),
      },
    ],
  };
};

/** CompleteVerification: clear the verification cycle; `wroteThisEpisode` stays. */
const completeVerification: SafetyActionLogic = () => ({ context: { readAfterWrite: false, consecutiveVerifyBlocks: 0 } });

/**
 * Reset: clear all tracking, pending recoveries, established targets,
 * kept links, written targets and failed writes included (DESIGN.md §3.2);
 * the session's settings stay. Links, written targets and failed writes are
 * cleared by assigning `undefined` only when there are some (an assign
 * cannot drop a field, and a context that never had them keeps its shape).
 */
const resetSession: SafetyActionLogic = (context) => ({
  context: {
    ...initialSafetyContext({
      strictFailedWrites: context.strictFailedWrites,
      confirmDestructive: context.confirmDestructive,
      autoCompleteVerification: context.autoCompleteVerification,
    }),
    checksCalls: context.checksCalls,
    ...(context.links === undefined ? {} : { links: undefined }),
    ...(context.writtenTargets === undefined ? {} : { writtenTargets: undefined }),
    ...(context.failedWrites === undefined ? {} : { failedWrites: undefined }),
  },
});

/**
 * ResetKeepProgress: drop verification tracking (flags, counters, calls in
 * flight, the last write's targets, a confirmation) and
 * `wroteThisEpisode` (DESIGN.md §1: the original's own test); keep the
 * established targets, the kept links, the last read/write records,
 * pending recoveries and failed writes (issue 28: they may still have happened).
 */
const dropVerificationTracking: SafetyActionLogic = () => ({
  context: {
    wroteThisEpisode: false,
    readAfterWrite: false,
    consecutiveVerifyBlocks: 0,
    finalAnswerBlocks: 0,
    inFlight: [],
    writeTargets: [],
    writeDestructive: false,
    confirmedSinceWrite: false,
  },
});

/**
 * Every action of the safety machine, by the name the statechart uses, as
 * plain logic. `setup()` wraps each (`safety.machine.ts`); a compiled
 * interpreter runs them in a transition's order, each on the context the
 * previous one left, and emits what they return, in order.
 */
export const safetyActionLogic = {
  admitCall,
  announceAllowed,
  announceBlocked,
  trackPendingRecovery,
  trackRaisedRecovery,
  recordFailedWrite,
  clearFailedWrites,
  countVerifyBlock,
  settleCall,
  recordWrite,
  recordRead,
  recordReadAfterWrite,
  recordSelfVerification,
  recordConfirmation,
  recordLinks,
  clearPendingRecovery,
  expirePendingRecoveries,
  allowAnswer,
  refuseAnswer,
  completeVerification,
  resetSession,
  dropVerificationTracking,
} satisfies Record<string, SafetyActionLogic<never>>;

/** The names of the safety machine's actions. */
export type SafetyActionName = keyof typeof safetyActionLogic;
