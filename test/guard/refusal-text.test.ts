/** `refusalText`: a refusal as words for the model, never naming a tool to call (DESIGN §1). */
import { describe, expect, it } from 'vitest';
import { TOOL_BLOCK_REASONS, ANSWER_BLOCK_REASONS } from '../../machines/safety.policy.js';
import type { BlockRule } from '../../machines/safety.types.js';
import { FSMBlockedError } from '../../src/errors/index.js';
import { refusalText } from '../../src/guard/refusal-text.js';

const toolError = (rule: BlockRule) =>
  new FSMBlockedError({
    state: 'VERIFYING',
    toolName: 'pulse_control',
    toolKind: 'write',
    rule,
    reason: TOOL_BLOCK_REASONS[rule],
    recoveryId: 'FSM_BLOCKED:pulse_control',
  });
const answerError = (rule: keyof typeof ANSWER_BLOCK_REASONS) =>
  new FSMBlockedError({ state: 'VERIFYING', toolName: null, toolKind: null, rule, reason: ANSWER_BLOCK_REASONS[rule], recoveryId: null });

describe('refusalText', () => {
  it('names the refused call, the stable code and the rule', () => {
    expect(refusalText(toolError('unverified-write'))).toMatch(
      /^The call to 'pulse_control' was not run \(FSM_BLOCKED, rule unverified-write\): /,
    );
  });

  it('says a final answer was not given', () => {
    expect(refusalText(answerError('unverified-write'))).toMatch(
      /^Your final answer was not given \(FSM_BLOCKED, rule unverified-write\): /,
    );
  });

  it('says the block is recoverable', () => {
    expect(refusalText(toolError('no-target'))).toContain('recoverable');
  });

  it.each(Object.keys(TOOL_BLOCK_REASONS) as BlockRule[])('never names a tool to call (tool refusal, rule %s)', (rule) => {
    const text = refusalText(toolError(rule)).replace("'pulse_control'", '');
    expect(text).not.toMatch(/pulse_|'[a-z_]+'/);
  });

  it('says what is missing in words, not the POLICY_BLOCKED reason', () => {
    expect(refusalText(answerError('write-in-flight'))).not.toContain('POLICY_BLOCKED');
  });
});
