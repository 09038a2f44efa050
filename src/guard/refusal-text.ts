/**
 * A refusal as words for the model, beside its JSON form: what evidence is
 * missing and that the session can go on, never which tool to call (the
 * reasons' rule, DESIGN.md §1). For frameworks that can only refuse a final
 * answer by putting a message in front of the model, and for tool results
 * read by models that do better with prose than with JSON.
 *
 * Spec: ASSISTANT_SAFETY.md "Blocked calls and recovery"; DESIGN.md §1, §3.1.
 */
import { UNKNOWN_PLACE } from '../../machines/safety.policy.js';
import type { BlockRule } from '../../machines/safety.types.js';
import type { FSMBlockedError } from '../errors/index.js';

/** What is missing, by rule, for a refused tool call. */
const TOOL_WORDS: Partial<Record<BlockRule, string>> = {
  'no-target':
    'nothing has been looked up or read in this session yet, so there is no validated target to change. Establish what you are acting on first',
  'unverified-write':
    'the previous change has not been checked since it was made. Gather evidence of its effect first; reading is always allowed',
  'write-in-flight': 'another change is still running. Its outcome must be known first',
};

/** What is missing, by rule, for a refused final answer. */
const ANSWER_WORDS: Partial<Record<BlockRule, string>> = {
  'unverified-write': 'the change you made has not been checked since it was made. Gather evidence of its effect, then answer',
  'write-in-flight': 'a change is still running. Wait for its outcome, then answer',
};

/** What is missing for a write naming an unknown place (`unknown-target` naming `?/…`, issue 24). */
const UNKNOWN_PLACE_WORDS =
  'the call changes a place known only when it runs (a path held in a variable, a script, an expansion), so no read can establish it. Name the path literally after reading it, or ask the user: their answer confirms the next change';

/** The reason without its `POLICY_BLOCKED:` prefix, for rules without words of their own. */
function bareReason(reason: string): string {
  return reason.replace(/^POLICY_BLOCKED:\s*/, '');
}

/**
 * The refusal in words for the model, e.g. `The call to 'pulse_control' was
 * not run (FSM_BLOCKED, rule unverified-write): the previous change has not
 * been checked since it was made. ...`. Starts with the stable code and the
 * rule, so a model or a log can still branch on them.
 *
 * @param error the `FSMBlockedError` of a refused call or final answer.
 * @returns one paragraph of plain text; never names a tool to call.
 */
export function refusalText(error: FSMBlockedError): string {
  const answer = error.toolName === null;
  const unknownPlace = !answer && error.rule === 'unknown-target' && error.target !== null && error.target.startsWith(UNKNOWN_PLACE);
  const words = unknownPlace ? UNKNOWN_PLACE_WORDS : ((answer ? ANSWER_WORDS : TOOL_WORDS)[error.rule] ?? bareReason(error.reason));
  const what = answer ? 'Your final answer was not given' : `The call to '${error.toolName}' was not run`;
  return `${what} (${error.code}, rule ${error.rule}): ${words}. This is recoverable: the session goes on.`;
}
