/**
 * `FSMBlockedError`: the structured error of a blocked call or refused final
 * answer, and the tool result a loop sends back to the model.
 *
 * Spec: ASSISTANT_SAFETY.md "Blocked calls and recovery"; DESIGN.md §1, §3.1.
 */
import { ErrCodeFSMBlocked, RECOVERY_TTL_MS, clearedByFor } from '../../machines/safety.policy.js';
import type { BlockRule, SafetyState, ToolKind } from '../../machines/safety.types.js';

export { ErrCodeFSMBlocked, RECOVERY_TTL_MS };

/** The fields of an `FSMBlockedError`. */
export interface FSMBlockedErrorInit {
  /** The state the session was in when the call or answer was refused. */
  state: SafetyState;
  /** The refused tool's name; null for the final answer. */
  toolName: string | null;
  /** The refused tool's kind; null for the final answer. */
  toolKind: ToolKind | null;
  /** The rule that refused it. */
  rule: BlockRule;
  /** The `POLICY_BLOCKED:` reason. */
  reason: string;
  /** The pending recovery opened or bumped by the block; null for the final answer. */
  recoveryId: string | null;
  /**
   * The target the reason names (DESIGN.md §5.3-5.4): the first not
   * established (`unknown-target`), or the last write's, still without
   * evidence (`unverified-write`); null or absent when none is named.
   */
  target?: string | null;
}

/**
 * The JSON object a loop sends back to the model as the refused tool's
 * result (DESIGN.md §3.1). `clearedBy` lists the kinds of call that clear the
 * block (empty when only the in-flight write's outcome can; only
 * `user_input` for an `unknown-target` refusal naming an unknown place
 * `?/…`, issue 24). `rule` names the rule that refused (`BlockRule`:
 * `unknown-target`, `unverified-write`, ..., issue 26). `target`, present
 * only when the refusal names one, is the target still without evidence
 * (DESIGN.md §5.3-5.4): a resolve or read clears the block only if it touches it.
 */
export interface BlockedToolResult {
  ok: false;
  error: {
    code: typeof ErrCodeFSMBlocked;
    message: string;
    blocked: true;
    recoverable: boolean;
    state: SafetyState;
    tool: string | null;
    kind: ToolKind | null;
    recoveryId: string | null;
    /** The rule that refused (`FSMBlockedError.rule`). */
    rule: BlockRule;
    clearedBy: ToolKind[];
    target?: string;
  };
}

/**
 * The text form of a refusal (DESIGN.md §1), as `FSMBlockedError.message`:
 * `FSM blocked tool '<tool>' (<kind>) in state <STATE>: <reason>`, or
 * `FSM blocked in state <STATE>: <reason>` for the final answer. For code
 * that reports refusals without an `Error` per refusal (the audit).
 */
export function blockedMessage(init: Pick<FSMBlockedErrorInit, 'state' | 'toolName' | 'toolKind' | 'reason'>): string {
  return init.toolName === null
    ? `FSM blocked in state ${init.state}: ${init.reason}`
    : `FSM blocked tool '${init.toolName}' (${init.toolKind}) in state ${init.state}: ${init.reason}`;
}

/**
 * The tool result of a refusal (DESIGN.md §3.1), as
 * `FSMBlockedError.toToolResult()`, built from the refusal's fields and its
 * `message` (default `blockedMessage(init)`), without an `Error`.
 */
export function blockedToolResult(init: FSMBlockedErrorInit, message: string = blockedMessage(init)): BlockedToolResult {
  const error: BlockedToolResult['error'] = {
    code: ErrCodeFSMBlocked,
    message,
    blocked: true,
    recoverable: true,
    state: init.state,
    tool: init.toolName,
    kind: init.toolKind,
    recoveryId: init.recoveryId,
    rule: init.rule,
    clearedBy: clearedByFor(init.rule, init.target),
  };
  if (typeof init.target === 'string') error.target = init.target;
  return { ok: false, error };
}

/**
 * A blocked tool call or a refused final answer. Recoverable: the session
 * goes on and the block clears once the missing evidence exists.
 *
 * `message` is the text form of DESIGN.md §1:
 * `FSM blocked tool '<tool>' (<kind>) in state <STATE>: <reason>`, or
 * `FSM blocked in state <STATE>: <reason>` for the final answer.
 */
export class FSMBlockedError extends Error {
  /** Always `FSM_BLOCKED`. */
  readonly code = ErrCodeFSMBlocked;
  readonly state: SafetyState;
  readonly toolName: string | null;
  readonly toolKind: ToolKind | null;
  readonly rule: BlockRule;
  readonly reason: string;
  /** Always true: a block is never terminal. */
  readonly recoverable = true;
  readonly recoveryId: string | null;
  /** The target the reason names, or null (see `FSMBlockedErrorInit.target`). */
  readonly target: string | null;

  constructor(init: FSMBlockedErrorInit) {
    super(blockedMessage(init));
    this.name = 'FSMBlockedError';
    this.state = init.state;
    this.toolName = init.toolName;
    this.toolKind = init.toolKind;
    this.rule = init.rule;
    this.reason = init.reason;
    this.recoveryId = init.recoveryId;
    this.target = typeof init.target === 'string' ? init.target : null;
  }

  /** The kinds of call that clear this block (`clearedByFor`: only user input for an unknown place). */
  get clearedBy(): ToolKind[] {
    return clearedByFor(this.rule, this.target);
  }

  /** The structured tool result to send back to the model (DESIGN.md §3.1). */
  toToolResult(): BlockedToolResult {
    return blockedToolResult(this, this.message);
  }

  /** JSON form: the tool result's `error` object. */
  toJSON(): BlockedToolResult['error'] {
    return this.toToolResult().error;
  }
}
