/**
 * The policy data the safety machine decides with: the error code, the
 * recovery TTL, and the refusal reasons. Pure constants.
 *
 * Spec: ASSISTANT_SAFETY.md "Blocked calls and recovery"; DESIGN.md §1, §3.5.
 */
import type { BlockRule, ToolKind } from './safety.types.js';

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
 * The `POLICY_BLOCKED:` reason of a refused tool call, by rule. Reasons say
 * what evidence is missing, never which tool to run (DESIGN.md §1).
 */
export const TOOL_BLOCK_REASONS: Readonly<Record<BlockRule, string>> = {
  'no-target':
    'POLICY_BLOCKED: state-changing tools need a validated target; nothing has been resolved or read in this session yet',
  'unverified-write':
    'POLICY_BLOCKED: the previous state-changing call still needs verification evidence before another one can run',
  'write-in-flight':
    'POLICY_BLOCKED: a state-changing call is still in flight; its outcome must be known before another one can run',
};

/**
 * The reason of a refused final answer, by rule. The final answer is never
 * refused for want of a target, so `no-target` has none.
 */
export const ANSWER_BLOCK_REASONS: Readonly<Record<Exclude<BlockRule, 'no-target'>, string>> = {
  'unverified-write':
    'POLICY_BLOCKED: the previous state-changing call needs verification evidence before responding about its result',
  'write-in-flight':
    'POLICY_BLOCKED: a state-changing call is still in flight; its outcome must be known before responding about its result',
};

/**
 * The kinds of call that clear a block of each rule. A write in flight is
 * cleared by its own recorded outcome, which is no new call: empty.
 */
export const CLEARED_BY: Readonly<Record<BlockRule, readonly ToolKind[]>> = {
  'no-target': ['resolve', 'read'],
  'unverified-write': ['resolve', 'read'],
  'write-in-flight': [],
};

/** The recovery id of a block: one pending recovery per error code and tool. */
export function recoveryIdFor(errorCode: string, tool: string): string {
  return `${errorCode}:${tool}`;
}
