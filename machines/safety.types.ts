/**
 * Types of the safety statechart: its states, context, events and emitted
 * events. Pure declarations; the machine is in `safety.machine.ts`.
 *
 * Spec: ASSISTANT_SAFETY.md "Tool kinds", "States"; DESIGN.md §1, §3.
 */
import type { AnyActorRef } from 'xstate';

/**
 * How a tool call is classified before it runs (ASSISTANT_SAFETY.md "Tool
 * kinds"). `neutral` marks pure-computation tools (a calculator, a scratchpad)
 * and behaves exactly like `user_input` (DESIGN.md §3.6).
 */
export type ToolKind = 'resolve' | 'read' | 'write' | 'user_input' | 'neutral';

/** Every tool kind, in the spec's order, `neutral` last. */
export const TOOL_KINDS: readonly ToolKind[] = ['resolve', 'read', 'write', 'user_input', 'neutral'];

/** The four states of a session (ASSISTANT_SAFETY.md "States"). */
export type SafetyState = 'RESOLVING' | 'READING' | 'WRITING' | 'VERIFYING';

/** Every state, initial first. */
export const SAFETY_STATES: readonly SafetyState[] = ['RESOLVING', 'READING', 'WRITING', 'VERIFYING'];

/**
 * Which rule refused something; a stable key for grouping blocks.
 * - `no-target`: a write in RESOLVING (no validated target).
 * - `unverified-write`: a write, or the final answer, while the last write
 *   still lacks verification evidence (VERIFYING); with known targets the
 *   reason names the one that still needs evidence (DESIGN.md §5.4).
 * - `write-in-flight`: a write, or the final answer, while an admitted write
 *   has no recorded outcome yet (WRITING, DESIGN.md §3.3).
 * - `unknown-target`: a write whose known targets were not all established
 *   by a successful resolve or read in this session (DESIGN.md §5.3); the
 *   reason names the first that was not. Also a write naming an unknown
 *   place (`?/<hint>`, or a path at or under a link kept in `links`) with no
 *   user input succeeded since the last write (issue 24): its reason is
 *   `UNKNOWN_PLACE_REASON`, its target the unknown place, and only user
 *   input clears it.
 * - `needs-confirmation`: a destructive write, with `confirmDestructive`,
 *   and no user input succeeded since the last write (DESIGN.md §5.6).
 * - `phantom-claim`: the final answer only (issue 28 item 2): it claims a
 *   change (`AnswerRequestedEvent.claims`) and no write was recorded in the
 *   session, or the claim names places and no recorded write touched any.
 * - `repeated-write`: the same write (same tool, same arguments: its
 *   `writeKey`) as one whose failure was recorded and whose target no
 *   successful resolve or read has touched since (issue 28): the failed
 *   write may still have happened. In every state and every policy; the
 *   reason names the failed write's first target, if it had any.
 */
export type BlockRule =
  'no-target' | 'unverified-write' | 'write-in-flight' | 'unknown-target' | 'needs-confirmation' | 'phantom-claim' | 'repeated-write';

/** The rules that can refuse the final answer. */
export type AnswerBlockRule = 'unverified-write' | 'write-in-flight' | 'phantom-claim';

/**
 * A pending recovery: a blocked operation the session remembers until a later
 * successful call of the same tool clears it, or it expires ten minutes
 * (`RECOVERY_TTL_MS`) after its latest block (ASSISTANT_SAFETY.md "Blocked
 * calls and recovery"; DESIGN.md §3.5). Times are epoch milliseconds.
 */
export interface PendingRecovery {
  /** Stable id, `<errorCode>:<tool>`; one entry per tool and code. */
  recoveryId: string;
  /**
   * The error code: `FSM_BLOCKED` for a block of the gate, or the
   * recoverable code a tool's own result raised (`ToolFailedEvent.errorCode`,
   * e.g. `STRICT_RESOLUTION`, issue 28).
   */
  errorCode: string;
  /** The blocked tool's name. */
  tool: string;
  /** When the first block of this entry happened (epoch ms). */
  createdAt: number;
  /** When the latest block happened (epoch ms); the TTL runs from here. */
  lastBlockedAt: number;
  /** How many times this tool was blocked while the entry was pending (>= 1). */
  attempts: number;
}

/**
 * A call admitted by a check whose outcome has not been recorded yet
 * (DESIGN.md §3.3-3.4).
 */
export interface InFlightCall {
  /**
   * Correlation key: `id:<tool call id>`, or `anon:<n>` for a call checked
   * without an id. An outcome without an id matches the `anon:` calls of its
   * tool. Two calls share an `id:` key only when a raw actor checks an id
   * still in flight (the adapter refuses it): a write first, then one other call.
   */
  key: string;
  /** Tool name. */
  tool: string;
  /** The kind it was admitted as; its outcome is applied with this kind. */
  kind: ToolKind;
  /** When it was admitted (epoch ms). */
  admittedAt: number;
  /**
   * The successful-write count (`writeSeq`) when a read or resolve was
   * admitted in VERIFYING, else null. Such a read verifies the write only if
   * no other write succeeded in between (read-after-write, DESIGN.md §3.4),
   * and, when the write has known targets, it touches one of them (§5.4).
   */
  verifiesWrite: number | null;
  /**
   * The call's targets, canonical (machines/safety.targets.ts), in the order
   * given, at most `MAX_TARGETS_PER_EVENT`; absent when none are known. Its
   * outcome is applied with them.
   */
  targets?: string[];
  /** A destructive write (DESIGN.md §5.6); absent when not. Only writes carry it. */
  destructive?: true;
  /**
   * The write's identity for `repeated-write` (`ToolRequestedEvent.writeKey`):
   * absent when the check gave none, and on calls that are not writes.
   */
  writeKey?: string;
}

/**
 * A write whose failure was recorded, which may still have happened (issue
 * 28): the same write again is refused (`repeated-write`) until a successful
 * resolve or read touches one of its targets (any one, for a write without
 * known targets).
 */
export interface FailedWrite {
  /** The write's key (`ToolRequestedEvent.writeKey`). */
  key: string;
  /** Its tool name. */
  tool: string;
  /** When its failure was recorded (epoch ms); reported, never decides. */
  at: number;
  /** Its known targets, canonical, as its failure applied them; absent when none. */
  targets?: string[];
}

/**
 * The machine's context. All plain JSON (no `Map`), so a persisted snapshot
 * survives a round trip. Times are epoch milliseconds or null.
 */
export interface SafetyContext {
  /** A write succeeded at some point in this session (kept by CompleteVerification). */
  wroteThisEpisode: boolean;
  /** A read or resolve admitted after the last write succeeded has succeeded. */
  readAfterWrite: boolean;
  /** Writes blocked in VERIFYING since the last verifying read; telemetry only, never waives. */
  consecutiveVerifyBlocks: number;
  /** Final answers refused in this session. */
  finalAnswerBlocks: number;
  /** Name of the last write that succeeded (or, with strict failed writes, failed). */
  lastWriteTool: string | null;
  /** When it was recorded (epoch ms). */
  lastWriteAt: number | null;
  /** Name of the last read or resolve that succeeded. */
  lastReadTool: string | null;
  /** When it was recorded (epoch ms). */
  lastReadAt: number | null;
  /** Pending recoveries by recovery id. */
  pendingRecoveries: Record<string, PendingRecovery>;
  /** Admitted calls without a recorded outcome, oldest first (at most `MAX_IN_FLIGHT`). */
  inFlight: InFlightCall[];
  /** Count of successful writes; ties a verifying read to the write it verifies. */
  writeSeq: number;
  /** Counter for `anon:<n>` keys of calls checked without an id. */
  anonSeq: number;
  /**
   * The session admits its calls by check: some call has been admitted since
   * it began (kept by both resets). From then on only an admitted read counts
   * as verification, so a read recorded twice, or under an unknown id, never
   * verifies a later write (DESIGN.md §3.4). Before, an unchecked read does,
   * as in the original's record-only style.
   */
  checksCalls: boolean;
  /** Treat a failed write as possibly applied: it needs verification too (DESIGN.md §3.8). */
  strictFailedWrites: boolean;
  /**
   * Targets established by successful resolves and reads (DESIGN.md §5.3),
   * canonical, least recently established first, at most
   * `MAX_ESTABLISHED_TARGETS` (the least recent dropped past it). A write
   * with known targets is admitted only if each is one of these or under
   * one. Cleared by Reset; kept by ResetKeepProgress.
   */
  establishedTargets: string[];
  /**
   * The known targets of the last recorded write, canonical; empty when it
   * named none (or none was recorded since a reset). While VERIFYING, only a
   * read touching one of them verifies it (DESIGN.md §5.4). Cleared by both
   * resets (ResetKeepProgress drops the write's pending verification).
   */
  writeTargets: string[];
  /** The last recorded write was destructive (DESIGN.md §5.6). Cleared by both resets. Reported, never decides. */
  writeDestructive: boolean;
  /**
   * A `user_input` call succeeded since the last recorded write (or since the
   * session began): a destructive write is confirmed (DESIGN.md §5.6, with
   * `confirmDestructive`), and so is a write naming an unknown place (issue
   * 24, whatever `confirmDestructive` says). Recorded whatever
   * `confirmDestructive` says. Cleared by a recorded write and by both resets.
   */
  confirmedSinceWrite: boolean;
  /** Refuse destructive writes without a confirmation (`needs-confirmation`, DESIGN.md §5.6). */
  confirmDestructive: boolean;
  /**
   * CompleteVerification happens by itself (DESIGN.md §1): in VERIFYING, as
   * soon as the write is verified and no write is in flight, the machine
   * returns to READING without a `verification.completed` event, as the
   * session guard does by default. False: only that event completes it.
   * Kept by both resets. Absent means true: `initialSafetyContext` sets it
   * only when false, and so does a restored snapshot.
   */
  autoCompleteVerification?: boolean;
  /**
   * Symbolic links admitted writes created that lead out of their own
   * directory (issue 24, `ToolRequestedEvent.links`): canonical paths, oldest
   * first, at most `MAX_LINKS`. A target at or under one is an unknown place:
   * a write naming it is refused (`unknown-target`) unless confirmed, a read
   * of it establishes nothing. Past `MAX_LINKS` (or on a link list that cannot
   * be read whole) the list becomes `LINKS_OVERFLOW` (`/`, `~`, `.`), which
   * every path is under: fail closed until Reset. Cleared by Reset; kept by
   * ResetKeepProgress. Absent means none (a fresh session, and snapshots
   * persisted before links existed): present only when non-empty.
   */
  links?: string[];
  /**
   * The known targets of every write recorded in this session (issue 28
   * item 2), canonical, least recently written first, at most
   * `MAX_ESTABLISHED_TARGETS`: a final answer's claim naming places is
   * supported only by a write that touched one. Cleared by Reset; kept by
   * ResetKeepProgress. Absent means none: present only when non-empty.
   */
  writtenTargets?: string[];
  /**
   * Failed writes that may still have happened (issue 28, `FailedWrite`),
   * oldest first, at most `MAX_FAILED_WRITES` (the oldest dropped past it),
   * one per key. Cleared by Reset; kept by ResetKeepProgress (the failed
   * write may still have happened whatever the context holds). Absent means
   * none: present only when non-empty.
   */
  failedWrites?: FailedWrite[];
}

/** Input of the machine (`createActor(safetyMachine, { input })`). */
export interface SafetyInput {
  /** DESIGN.md §3.8; default false. */
  strictFailedWrites?: boolean;
  /** DESIGN.md §5.6; default false. */
  confirmDestructive?: boolean;
  /**
   * Complete verification by itself as soon as a verified session has no
   * write in flight (`SafetyContext.autoCompleteVerification`); default
   * true, as `createSessionGuard`. False: send `verification.completed`.
   */
  autoCompleteVerification?: boolean;
}

/** Fields common to the tool events. `at` is epoch milliseconds. */
interface ToolEventBase {
  /** Tool call id, correlating check and record; optional. */
  callId?: string;
  /** Tool name. */
  tool: string;
  /**
   * Classified kind. For a record of an admitted call the admitted kind wins;
   * among several calls sharing the record's key it picks the call (see `kindUnstated`).
   */
  kind: ToolKind;
  at: number;
  /**
   * The resources the call touches (DESIGN.md §5.1): paths, `<argument>=<value>`
   * ids, `table:<name>`. Read totally: anything but an array of strings is
   * none; only the first `MAX_TARGETS_PER_EVENT` are read (a write naming more
   * is refused as `unknown-target`); each is made canonical, and one longer
   * than `MAX_TARGET_LENGTH` cut (`cutTarget`: such a target never matches
   * itself, only a whole path above it). On an outcome, absent means the record states none (the
   * admitted call's apply). Default none: the spec's session-wide rules.
   */
  targets?: string[];
  /** The call is a destructive write (DESIGN.md §5.6); anything but `true` is false. */
  destructive?: boolean;
  /**
   * On `tool.requested` only: canonical paths of symbolic links the call
   * creates that lead out of their own directory (issue 24,
   * `Classification.links`). Kept in `SafetyContext.links` when the call is
   * an admitted write; ignored otherwise. Read totally like `targets`
   * (paths only; a cut one stands for its longest whole parent); more than
   * `MAX_TARGETS_PER_EVENT` fail closed (`LINKS_OVERFLOW`).
   */
  links?: string[];
}

/**
 * Where a request's decision goes when the machine runs as a child actor
 * (XState's "sending responses": the sender puts its own ref in the event):
 * an actor ref that receives `SafetyParentEvent`s, typically the requesting
 * machine's `self`. It gets the decision instead of the parent. Anything
 * that is not an actor ref (no `send`) is ignored: the parent, if any, gets
 * it. Never persisted (events are not part of a snapshot).
 */
export interface ReplyTo {
  replyTo?: AnyActorRef;
}

/** A tool call asks to run: the gate decides (emits `gate.decided`, and sends it to `replyTo` or the parent). */
export interface ToolRequestedEvent extends ToolEventBase, ReplyTo {
  type: 'tool.requested';
  /**
   * The call's identity for `repeated-write` (issue 28): the same string for
   * the same tool and the same arguments (src/guard/write-key.ts computes it
   * from the canonical JSON of the arguments). Kept with an admitted write;
   * a write whose key matches a failed write's is refused. Anything but a
   * non-empty string is none (its first `MAX_NAME_LENGTH` characters kept):
   * a call checked without its arguments is never taken for another.
   */
  writeKey?: string;
}
/**
 * Fields of a recorded outcome. Which admitted call it settles is decided by
 * its id, or without one by its tool; when several calls in flight share
 * that key, by the kind it states and the worst case (DESIGN.md §3.4).
 */
interface ToolOutcomeBase extends ToolEventBase {
  /**
   * True when `kind` states nothing about which call this was: the loop gave
   * neither a kind nor the call's arguments, so it is the classifier's
   * reading of the bare tool name (or a fail-closed `write`), which cannot
   * tell two calls of one tool apart. It then still applies to an outcome no
   * check admitted. Default false: a `kind` from the vocabulary is stated.
   */
  kindUnstated?: boolean;
}
/** A tool call ran and succeeded; a recovery it clears goes to `replyTo` or the parent too. */
export interface ToolSucceededEvent extends ToolOutcomeBase, ReplyTo {
  type: 'tool.succeeded';
  /**
   * The result shows the write verified its own effect (DESIGN.md §1, §5.8:
   * `verification.ok === true`, or a catalog's `selfVerifying` tool). A write
   * so recorded is verified at once: a read named `self_verify` is recorded
   * and verification completes. Ignored on anything the outcome does not
   * apply as a write. Anything but `true` is false.
   */
  selfVerified?: boolean;
}
/** A tool call ran and failed. */
export interface ToolFailedEvent extends ToolOutcomeBase {
  type: 'tool.failed';
  /**
   * The runner says the failed call may still have applied (it threw, timed
   * out or was cancelled after it started): a failed write so reported needs
   * verification as under `strictFailedWrites` (DESIGN.md §3.8), whatever
   * the session's setting. The adapters report every failure so by default
   * (issue 26). Anything but `true` is false.
   */
  possiblyApplied?: boolean;
  /**
   * The recoverable error code the tool's result raised (issue 28: `error.code`
   * or the legacy `error_code`, when a catalog lists it in `recoveryCodes`,
   * e.g. `STRICT_RESOLUTION`): it opens a pending recovery of the tool for
   * that code, as a block of the gate does (emits `recovery.raised`).
   * Anything but a non-empty string is none (its first `MAX_NAME_LENGTH`
   * characters kept).
   */
  errorCode?: string;
  /**
   * The call surely never ran (a human rejected it, it was abandoned before
   * it started): its failure is not remembered for `repeated-write`.
   * Anything but `true` is false: a failure may have happened.
   */
  neverRan?: boolean;
  /**
   * For a record without a check (no call in flight it books to): the
   * write's key, as `ToolRequestedEvent.writeKey`. A failure booked to an
   * admitted write uses the key that write was checked with.
   */
  writeKey?: string;
}
/**
 * A claim of a change in the final answer (issue 28 item 2), found in its
 * text outside the machine (src/claims/): the sentence, and the places it
 * names as changed (paths, file names, ids; free text, not canonical).
 */
export interface AnswerClaim {
  text: string;
  places: string[];
}
/** The assistant wants to give its final answer: the gate decides (sent to `replyTo` or the parent too). */
export interface AnswerRequestedEvent extends ReplyTo {
  type: 'answer.requested';
  at: number;
  /**
   * The answer's claims of a change (`AnswerClaim`, issue 28 item 2). Absent
   * or empty: the answer claims nothing, or its text was not checked; no
   * `phantom-claim` refusal. Read totally (`claimsOf`, machines/safety.claims.ts).
   */
  claims?: AnswerClaim[];
}
/** CompleteVerification: a verified session goes from VERIFYING back to READING. */
export interface VerificationCompletedEvent {
  type: 'verification.completed';
  at: number;
}
/** Reset: back to RESOLVING, all tracking cleared. */
export interface SessionResetEvent {
  type: 'session.reset';
  at: number;
}
/** ResetKeepProgress: verification tracking dropped, the target kept. */
export interface SessionResetKeepingProgressEvent {
  type: 'session.resetKeepingProgress';
  at: number;
}
/** Time passed; expired pending recoveries are dropped. */
export interface ClockTickedEvent {
  type: 'clock.ticked';
  at: number;
}

/** Every event the safety machine accepts. */
export type SafetyEvent =
  | ToolRequestedEvent
  | ToolSucceededEvent
  | ToolFailedEvent
  | AnswerRequestedEvent
  | VerificationCompletedEvent
  | SessionResetEvent
  | SessionResetKeepingProgressEvent
  | ClockTickedEvent;

/** A decision of the gate, emitted as `gate.decided` for every tool check and final answer. */
export interface GateDecidedEvent {
  type: 'gate.decided';
  /** What was decided about: a tool call, or the final answer. */
  subject: 'tool' | 'answer';
  allowed: boolean;
  /** The state the decision was taken in. */
  state: SafetyState;
  /** Tool name and kind; null for the final answer. */
  tool: string | null;
  kind: ToolKind | null;
  callId: string | null;
  /** Refusals only: which rule, the `POLICY_BLOCKED:` reason, the recovery id (null for answers). */
  rule: BlockRule | null;
  reason: string | null;
  recoveryId: string | null;
  /**
   * Refusals naming a target only (DESIGN.md §5.3-5.4): for `unknown-target`
   * the first target not established, for `unverified-write` the last
   * write's first target, for `phantom-claim` the first place of the claim
   * that no write touched. Absent otherwise.
   */
  target?: string;
  at: number;
}

/**
 * A tool's result raised a recoverable error code (`ToolFailedEvent.errorCode`,
 * issue 28): the pending recovery it opened or bumped, as it now is.
 */
export interface RecoveryRaisedEvent {
  type: 'recovery.raised';
  recovery: PendingRecovery;
  at: number;
}

/** A pending recovery was cleared by a successful call of its tool (a recovery). */
export interface RecoverySucceededEvent {
  type: 'recovery.succeeded';
  recovery: PendingRecovery;
  at: number;
}

/** Every event the safety machine emits. */
export type SafetyEmitted = GateDecidedEvent | RecoverySucceededEvent | RecoveryRaisedEvent;

/**
 * The events a parent actor (or a `replyTo` actor) receives from the safety
 * machine running as its child: every emitted event, as is. Add it to the
 * parent's events (`types: { events: {} as SafetyParentEvent | MyEvent }`)
 * to write `on: { 'gate.decided': ... }` without casts.
 */
export type SafetyParentEvent = SafetyEmitted;
