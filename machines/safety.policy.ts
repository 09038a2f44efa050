/**
 * The policy data the safety machine decides with: the error code, the
 * recovery TTL, the bounds of its context, and the refusal reasons. Pure
 * constants (and two pure string helpers).
 *
 * Spec: ASSISTANT_SAFETY.md "Blocked calls and recovery"; DESIGN.md §1, §3.5, §5.
 */
import type { AnswerBlockRule, BlockRule, ToolKind } from './safety.types.js';

/** The stable code of a blocked call (DESIGN.md §1, `ErrCodeFSMBlocked`). */
export const ErrCodeFSMBlocked = 'FSM_BLOCKED';

/**
 * The largest time, in absolute value, the gate keeps, epoch ms: the range of
 * JavaScript dates (ECMA-262 "Time Values and Time Range"), so every time in
 * a context is a valid date and survives a persisted snapshot.
 */
export const MAX_TIME_MS = 8.64e15;

/** Pending recoveries expire this many milliseconds after their latest block: ten minutes. */
export const RECOVERY_TTL_MS = 600_000;

/**
 * The most admitted-but-unrecorded calls a session tracks. Past it the oldest
 * non-write entry is dropped, so a loop that never records cannot grow the
 * context without bound; a dropped read simply cannot verify anything.
 */
export const MAX_IN_FLIGHT = 64;

/**
 * The most pending recoveries a session keeps. Tool names come from the model:
 * past the cap the entry blocked least recently is dropped, so inventing names
 * cannot grow the context (or the persisted snapshot) without bound. Dropping
 * one only forgets telemetry; no rule depends on it.
 */
export const MAX_PENDING_RECOVERIES = 32;

/**
 * The most failed writes a session remembers for `repeated-write` (issue 28,
 * `SafetyContext.failedWrites`). Past it the oldest is dropped, so a loop
 * failing many different writes cannot grow the context without bound; a
 * dropped one is simply no longer refused when repeated (32 failed writes
 * none of whose targets was read since is far past any real session).
 */
export const MAX_FAILED_WRITES = 32;

/**
 * The recoverable error code the Pulse catalog lists (`recoveryCodes`,
 * issue 28): a tool refused to act on a resource that was not resolved
 * strictly (DESIGN.md §1, the sibling code of `FSM_BLOCKED`).
 */
export const ErrCodeStrictResolution = 'STRICT_RESOLUTION';

/**
 * The most targets a session keeps established (DESIGN.md §5.3). Past it the
 * target established least recently (by a successful resolve or read) is
 * dropped: a write on it is then refused (`unknown-target`) until it is read
 * again, so the bound can only make the gate stricter. 256 covers a long
 * session on one project (each read names its own files) while a persisted
 * snapshot stays bounded.
 */
export const MAX_ESTABLISHED_TARGETS = 256;

/**
 * The most targets the machine reads from one event. Mirrors
 * `MAX_TARGETS_PER_CALL` of src/classify/classification.ts (machines/ imports nothing
 * from src/; a test checks the two agree). A write event naming more is
 * refused as `unknown-target`: its targets cannot all be checked.
 */
export const MAX_TARGETS_PER_EVENT = 32;

/**
 * The prefix of a target in a place not known: `?/<hint>` (issue 24; built by
 * `unknownPlace` of safety.targets.ts, which re-exports this). Such a target
 * is never established, equal to, above or under anything.
 */
export const UNKNOWN_PLACE = '?/';

/**
 * The most symbolic links a session keeps (`SafetyContext.links`, issue 24).
 * Past it the list becomes `LINKS_OVERFLOW`, which makes every path an
 * unknown place until Reset: the bound can only make the gate stricter.
 */
export const MAX_LINKS = 64;

/**
 * The link list of a session that created more links than it keeps
 * (`MAX_LINKS`), or named more in one call than are read: the three roots,
 * which every absolute, home-relative and relative path is at or under, so
 * every path target is an unknown place until Reset (fail closed).
 */
export const LINKS_OVERFLOW: readonly string[] = Object.freeze(['/', '~', '.']);

/**
 * The longest target string kept whole, characters; a longer one is cut to
 * its first ones and a mark (`cutTarget` in safety.targets.ts). Mirrors
 * `MAX_TARGET_LENGTH` of src/classify/classification.ts (a test checks the two agree).
 */
export const MAX_TARGET_LENGTH = 512;

/**
 * Longest tool name and call id a session keeps, characters: the machine
 * keeps the first `MAX_NAME_LENGTH` of a longer one (so a raw actor holds no
 * more), the adapter refuses one with a `TypeError`, and a persisted snapshot
 * naming a longer one is refused (src/guard/snapshot.ts). Real names are far
 * shorter: MCP advises at most 128 characters for a tool name, OpenAI allows
 * 64 for a function name.
 */
export const MAX_NAME_LENGTH = 512;

/**
 * The tool name recorded as the last read when a write verifies itself
 * (DESIGN.md §1: the original loop records a read named `self_verify`).
 */
export const SELF_VERIFY_TOOL = 'self_verify';

/**
 * The `POLICY_BLOCKED:` reason of a refused tool call, by rule. Reasons say
 * what evidence is missing, never which tool to run (DESIGN.md §1).
 */
export const TOOL_BLOCK_REASONS: Readonly<Record<BlockRule, string>> = {
  'no-target': 'POLICY_BLOCKED: state-changing tools need a validated target; nothing has been resolved or read in this session yet',
  'unverified-write': 'POLICY_BLOCKED: the previous state-changing call still needs verification evidence before another one can run',
  'write-in-flight': 'POLICY_BLOCKED: a state-changing call is still in flight; its outcome must be known before another one can run',
  'unknown-target':
    'POLICY_BLOCKED: state-changing tools need a validated target; nothing resolved or read in this session has touched this target',
  'needs-confirmation':
    "POLICY_BLOCKED: a destructive state-changing call needs the user's confirmation, and none was given since the last state-changing call",
  // Never a tool call's: the final answer's (`ANSWER_BLOCK_REASONS`), here because every rule has a reason.
  'phantom-claim': 'POLICY_BLOCKED: the final answer claims a change no tool made',
  'repeated-write':
    'POLICY_BLOCKED: this same state-changing call (same tool, same arguments) failed or timed out before and may still have happened; its target must be read before it can run again',
};

/**
 * The `POLICY_BLOCKED:` reason of an `unknown-target` refusal whose target is
 * an unknown place (issue 24: `?/<hint>`, or a path through a symbolic link
 * that leads out of its directory). The rule stays `unknown-target` (stable
 * for users); this reason says what is missing and how to recover.
 */
export const UNKNOWN_PLACE_REASON =
  'POLICY_BLOCKED: state-changing tools need a validated target; this one changes a place known only when the call runs, so no read can establish it. Name the path literally after reading it, or ask the user: their answer confirms the next state-changing call';

/**
 * The `POLICY_BLOCKED:` reason of an `unknown-target` refusal naming a
 * remote place (`host:<host>:<path>`, issue 24): a read of it clears it, and
 * so does the user's confirmation, as few reads reach another machine.
 */
export const REMOTE_PLACE_REASON =
  'POLICY_BLOCKED: state-changing tools need a validated target; this one changes a place on another machine that nothing resolved or read in this session has touched. Read it first, or ask the user: their answer confirms the next state-changing call';

/** The prefix of a remote place, `host:<host>:<path>` (issue 24). */
export const REMOTE_PLACE = 'host:';

/**
 * The reason of a refused final answer, by rule. The final answer is never
 * refused for want of a target or a confirmation, so those rules have none.
 */
export const ANSWER_BLOCK_REASONS: Readonly<Record<AnswerBlockRule, string>> = {
  'unverified-write': 'POLICY_BLOCKED: the previous state-changing call needs verification evidence before responding about its result',
  'write-in-flight':
    'POLICY_BLOCKED: a state-changing call is still in flight; its outcome must be known before responding about its result',
  // The claim, and what would support it, follow in the reason (`phantomClaimReason`, machines/safety.claims.ts).
  'phantom-claim': 'POLICY_BLOCKED: the final answer claims a change no tool made',
};

/**
 * The kinds of call that clear a block of each rule. A write in flight is
 * cleared by its own recorded outcome, which is no new call: empty. An
 * unknown target, or an unverified write with known targets, is cleared
 * only by a resolve or read that touches the target the reason names. A
 * phantom claim, by a write that makes the change (or an answer without it).
 */
export const CLEARED_BY: Readonly<Record<BlockRule, readonly ToolKind[]>> = {
  'no-target': ['resolve', 'read'],
  'unverified-write': ['resolve', 'read'],
  'write-in-flight': [],
  'unknown-target': ['resolve', 'read'],
  'needs-confirmation': ['user_input'],
  'phantom-claim': ['write'],
  'repeated-write': ['resolve', 'read'],
};

/**
 * The kinds of call that clear a block of `rule` naming `target`
 * (`CLEARED_BY`), except that an `unknown-target` block naming an unknown
 * place (`?/…`) is cleared only by user input (issue 24). A fresh array.
 */
export function clearedByFor(rule: BlockRule, target: string | null | undefined): ToolKind[] {
  if (rule === 'unknown-target' && typeof target === 'string' && target.startsWith(UNKNOWN_PLACE)) return ['user_input'];
  if (rule === 'unknown-target' && typeof target === 'string' && target.startsWith(REMOTE_PLACE)) return ['resolve', 'read', 'user_input'];
  return [...CLEARED_BY[rule]];
}

/**
 * The `POLICY_BLOCKED:` reason of a refused tool call of `rule` naming
 * `target` (or null): `UNKNOWN_PLACE_REASON` for an `unknown-target` refusal
 * naming an unknown place, else `TOOL_BLOCK_REASONS[rule]`; then the target
 * (`reasonWithTarget`).
 */
export function toolBlockReason(rule: BlockRule, target: string | null): string {
  const unknownPlace = rule === 'unknown-target' && target !== null && target.startsWith(UNKNOWN_PLACE);
  const remotePlace = rule === 'unknown-target' && target !== null && target.startsWith(REMOTE_PLACE);
  const reason = unknownPlace ? UNKNOWN_PLACE_REASON : remotePlace ? REMOTE_PLACE_REASON : TOOL_BLOCK_REASONS[rule];
  return reasonWithTarget(reason, target);
}

/**
 * A reason naming the target it is about (DESIGN.md §5.4: the refusal names
 * the target that still needs evidence): `<reason> (target: "<target>")`, the
 * target as a JSON string (quotes and control characters escaped). The
 * reason alone when `target` is null.
 */
export function reasonWithTarget(reason: string, target: string | null): string {
  return target === null ? reason : `${reason} (target: ${JSON.stringify(target)})`;
}

/** The recovery id of a block: one pending recovery per error code and tool. */
export function recoveryIdFor(errorCode: string, tool: string): string {
  return `${errorCode}:${tool}`;
}
