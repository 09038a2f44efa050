/**
 * FSMBlockedError: its fields, its text form and the structured tool result a
 * loop sends back to the model.
 *
 * Spec: ASSISTANT_SAFETY.md "Blocked calls and recovery"; DESIGN.md §1, §3.1.
 */
import { describe, expect, it } from 'vitest';
import { createSessionGuard } from '../../src/guard/session-guard.js';
import { builtinCatalogs } from '../../src/classify/catalog/index.js';
import {
  CatalogError,
  ErrCodeFSMBlocked,
  FSMBlockedError,
  RECOVERY_TTL_MS,
  blockedMessage,
  blockedToolResult,
  SessionGuardError,
  SessionStoreError,
  SnapshotError,
  TranscriptError,
} from '../../src/errors/index.js';
import { parseCatalog } from '../../src/classify/catalog/index.js';
import { parsePersistedSnapshot } from '../../src/guard/snapshot.js';
import { readTranscript } from '../../src/audit/transcripts/index.js';
import { ANSWER_BLOCK_REASONS, TOOL_BLOCK_REASONS, reasonWithTarget } from '../../machines/safety.policy.js';
import type { BlockRule } from '../../machines/safety.types.js';

/** A write refused in RESOLVING, as the guard builds it. */
function noTargetError(): FSMBlockedError {
  const decision = createSessionGuard({ now: () => 1 }).check({ id: 'c1', name: 'pulse_control' });
  if (decision.allowed) throw new Error('expected the write to be refused');
  return decision.error;
}

/** A final answer refused in VERIFYING, as the guard builds it. */
function refusedAnswerError(): FSMBlockedError {
  const guard = createSessionGuard({ now: () => 1 });
  guard.record({ name: 'pulse_query' });
  guard.record({ name: 'pulse_control' });
  const decision = guard.finalAnswer();
  if (decision.allowed) throw new Error('expected the final answer to be refused');
  return decision.error;
}

function toolError(rule: BlockRule): FSMBlockedError {
  return new FSMBlockedError({
    state: rule === 'no-target' ? 'RESOLVING' : rule === 'write-in-flight' ? 'WRITING' : 'VERIFYING',
    toolName: 'pulse_control',
    toolKind: 'write',
    rule,
    reason: TOOL_BLOCK_REASONS[rule],
    recoveryId: 'FSM_BLOCKED:pulse_control',
  });
}

const ALL_REASONS = [...Object.values(TOOL_BLOCK_REASONS), ...Object.values(ANSWER_BLOCK_REASONS)];

describe('constants', () => {
  it("ErrCodeFSMBlocked is 'FSM_BLOCKED'", () => {
    expect(ErrCodeFSMBlocked).toBe('FSM_BLOCKED');
  });

  it('RECOVERY_TTL_MS is ten minutes', () => {
    expect(RECOVERY_TTL_MS).toBe(600_000);
  });
});

describe('FSMBlockedError fields', () => {
  it('is an Error named FSMBlockedError', () => {
    const error = noTargetError();
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('FSMBlockedError');
  });

  it("has code 'FSM_BLOCKED'", () => {
    expect(noTargetError().code).toBe('FSM_BLOCKED');
  });

  it('is recoverable', () => {
    expect(noTargetError().recoverable).toBe(true);
  });

  it('carries the state, the tool, the tool kind, the rule and the recovery id', () => {
    expect(noTargetError()).toMatchObject({
      state: 'RESOLVING',
      toolName: 'pulse_control',
      toolKind: 'write',
      rule: 'no-target',
      recoveryId: 'FSM_BLOCKED:pulse_control',
    });
  });

  it('carries the reason of its rule', () => {
    expect(noTargetError().reason).toBe(TOOL_BLOCK_REASONS['no-target']);
  });

  it('for the final answer carries no tool, kind or recovery id', () => {
    expect(refusedAnswerError()).toMatchObject({
      state: 'VERIFYING',
      toolName: null,
      toolKind: null,
      rule: 'unverified-write',
      reason: ANSWER_BLOCK_REASONS['unverified-write'],
      recoveryId: null,
    });
  });
});

describe('reasons (DESIGN §1)', () => {
  it.each(ALL_REASONS)('%s begins with POLICY_BLOCKED:', (reason) => {
    expect(reason.startsWith('POLICY_BLOCKED: ')).toBe(true);
  });

  it.each(ALL_REASONS)('%s names no tool to run', (reason) => {
    // Tools named by a plain English word (opencode's `read`, `write`, `edit`) cannot be told from the words of a reason:
    // every other tool name (snake_case, CamelCase, with digits or signs) must not appear as a word.
    const toolNames = Object.values(builtinCatalogs)
      .flatMap((catalog) => Object.keys(catalog.tools))
      .filter((tool) => !/^[a-z]+$/.test(tool));
    expect(toolNames.length).toBeGreaterThan(100);
    for (const tool of toolNames) expect(reason).not.toContain(tool);
  });

  it('a write without a target says state-changing tools need a validated target', () => {
    expect(TOOL_BLOCK_REASONS['no-target']).toMatch(/^POLICY_BLOCKED: state-changing tools need a validated target/);
  });

  it('an unverified write says the previous state-changing call still needs verification evidence', () => {
    expect(TOOL_BLOCK_REASONS['unverified-write']).toMatch(
      /^POLICY_BLOCKED: the previous state-changing call still needs verification evidence/,
    );
  });

  it('a refused final answer says verification evidence is needed before responding about its result', () => {
    expect(ANSWER_BLOCK_REASONS['unverified-write']).toMatch(
      /^POLICY_BLOCKED: the previous state-changing call needs verification evidence before responding about its result/,
    );
  });
});

describe('message (the text form of DESIGN §1)', () => {
  it("for a tool is FSM blocked tool '<tool>' (<kind>) in state <STATE>: <reason>", () => {
    expect(noTargetError().message).toBe(`FSM blocked tool 'pulse_control' (write) in state RESOLVING: ${TOOL_BLOCK_REASONS['no-target']}`);
  });

  it('for the final answer is FSM blocked in state <STATE>: <reason>', () => {
    expect(refusedAnswerError().message).toBe(`FSM blocked in state VERIFYING: ${ANSWER_BLOCK_REASONS['unverified-write']}`);
  });

  it('is built from the fields it is given', () => {
    const error = new FSMBlockedError({
      state: 'WRITING',
      toolName: 'run_command',
      toolKind: 'write',
      rule: 'write-in-flight',
      reason: 'POLICY_BLOCKED: x',
      recoveryId: 'FSM_BLOCKED:run_command',
    });
    expect(error.message).toBe("FSM blocked tool 'run_command' (write) in state WRITING: POLICY_BLOCKED: x");
  });
});

describe('toToolResult() (DESIGN §3.1)', () => {
  it('is exactly { ok: false, error: { code, message, blocked: true, recoverable, state, tool, kind, recoveryId, rule, clearedBy } }', () => {
    const error = noTargetError();
    expect(error.toToolResult()).toStrictEqual({
      ok: false,
      error: {
        code: 'FSM_BLOCKED',
        message: error.message,
        blocked: true,
        recoverable: true,
        state: 'RESOLVING',
        tool: 'pulse_control',
        kind: 'write',
        recoveryId: 'FSM_BLOCKED:pulse_control',
        rule: 'no-target',
        clearedBy: ['resolve', 'read'],
      },
    });
  });

  it('for the final answer has null tool, kind and recovery id', () => {
    expect(refusedAnswerError().toToolResult().error).toMatchObject({
      state: 'VERIFYING',
      tool: null,
      kind: null,
      recoveryId: null,
    });
  });

  it('survives JSON.stringify unchanged', () => {
    const result = noTargetError().toToolResult();
    expect(JSON.parse(JSON.stringify(result))).toStrictEqual(result);
  });

  it("JSON.stringify of the error itself gives the result's error object", () => {
    const error = refusedAnswerError();
    expect(JSON.parse(JSON.stringify(error))).toStrictEqual(error.toToolResult().error);
  });
});

describe('blockedMessage and blockedToolResult (a refusal without an Error)', () => {
  const targeted = new FSMBlockedError({
    state: 'READING',
    toolName: 'edit_file',
    toolKind: 'write',
    rule: 'unknown-target',
    reason: reasonWithTarget(TOOL_BLOCK_REASONS['unknown-target'], '/srv/app.conf'),
    recoveryId: 'FSM_BLOCKED:edit_file',
    target: '/srv/app.conf',
  });
  const cases: [string, FSMBlockedError][] = [
    ['a refused tool call', noTargetError()],
    ['a refused final answer', refusedAnswerError()],
    ['a refusal naming its target', targeted],
  ];

  it.each(cases)('give the message of %s, as the error does', (_name, error) => {
    expect(blockedMessage(error)).toBe(error.message);
  });

  it.each(cases)('give the tool result of %s, as the error does, key for key', (_name, error) => {
    const result = blockedToolResult(error);
    expect(result).toStrictEqual(error.toToolResult());
    expect(JSON.stringify(result)).toBe(JSON.stringify(error.toToolResult()));
  });

  it('give each result its own clearedBy list', () => {
    const error = noTargetError();
    const first = blockedToolResult(error);
    first.error.clearedBy.push('write');
    expect(blockedToolResult(error).error.clearedBy).toEqual(['resolve', 'read']);
  });
});

describe('clearedBy, per rule', () => {
  it('a write without a target is cleared by a resolve or a read', () => {
    expect(toolError('no-target').toToolResult().error.clearedBy).toEqual(['resolve', 'read']);
  });

  it('an unverified write is cleared by a resolve or a read', () => {
    expect(toolError('unverified-write').toToolResult().error.clearedBy).toEqual(['resolve', 'read']);
  });

  it('a write in flight is cleared by no call (only its own outcome)', () => {
    expect(toolError('write-in-flight').toToolResult().error.clearedBy).toEqual([]);
  });

  it('never lists write or user_input', () => {
    for (const rule of ['no-target', 'unverified-write', 'write-in-flight'] as const) {
      expect(toolError(rule).clearedBy).not.toContain('write');
      expect(toolError(rule).clearedBy).not.toContain('user_input');
    }
  });

  it('is a fresh copy: changing one result does not change the next', () => {
    const error = toolError('no-target');
    error.toToolResult().error.clearedBy.push('write');
    expect(error.toToolResult().error.clearedBy).toEqual(['resolve', 'read']);
  });
});

describe('CatalogError', () => {
  it('has an empty path when none is given', () => {
    expect(new CatalogError('catalog x: bad').path).toEqual([]);
  });
});

describe('target-aware refusals (DESIGN §5.3-5.6)', () => {
  function targetError(target?: unknown): FSMBlockedError {
    return new FSMBlockedError({
      state: 'READING',
      toolName: 'Edit',
      toolKind: 'write',
      rule: 'unknown-target',
      reason: reasonWithTarget(TOOL_BLOCK_REASONS['unknown-target'], typeof target === 'string' ? target : null),
      recoveryId: 'FSM_BLOCKED:Edit',
      ...(target === undefined ? {} : { target: target as string }),
    });
  }

  it('carries the target the reason names', () => {
    expect(targetError('/srv/app.conf').target).toBe('/srv/app.conf');
  });

  it('puts the target in the tool result and the JSON form', () => {
    const error = targetError('/srv/app.conf');
    expect(error.toToolResult().error.target).toBe('/srv/app.conf');
    expect(JSON.parse(JSON.stringify(error))).toStrictEqual(error.toToolResult().error);
  });

  it('has a null target and no target field when none is named', () => {
    const error = targetError();
    expect(error.target).toBeNull();
    expect(error.toToolResult().error).not.toHaveProperty('target');
  });

  it('reads a target that is not a string as none', () => {
    expect(targetError(42).target).toBeNull();
  });

  it('an unknown target is cleared by a resolve or a read (one that touches it)', () => {
    expect(targetError('/x').clearedBy).toEqual(['resolve', 'read']);
  });

  it('a destructive write without confirmation is cleared by user input only', () => {
    expect(toolError('needs-confirmation').clearedBy).toEqual(['user_input']);
  });

  it('the reason names the target as a JSON string, quotes and line breaks escaped', () => {
    expect(reasonWithTarget('POLICY_BLOCKED: r', 'a"b\nc')).toBe('POLICY_BLOCKED: r (target: "a\\"b\\nc")');
  });

  it('the reason is unchanged when no target is named', () => {
    expect(reasonWithTarget('POLICY_BLOCKED: r', null)).toBe('POLICY_BLOCKED: r');
  });

  it('an unknown target says state-changing tools need a validated target', () => {
    expect(TOOL_BLOCK_REASONS['unknown-target']).toMatch(/^POLICY_BLOCKED: state-changing tools need a validated target/);
  });

  it('a destructive write without confirmation says the user’s confirmation is needed', () => {
    expect(TOOL_BLOCK_REASONS['needs-confirmation']).toMatch(
      /^POLICY_BLOCKED: a destructive state-changing call needs the user's confirmation/,
    );
  });

  it('the final answer has no reason for the rules that never refuse it', () => {
    expect(Object.keys(ANSWER_BLOCK_REASONS).sort()).toEqual(['phantom-claim', 'unverified-write', 'write-in-flight']);
  });
});

describe('every public error', () => {
  /** The error a call throws, or a failure when it throws none. */
  function thrown(run: () => unknown): unknown {
    try {
      run();
    } catch (error) {
      return error;
    }
    throw new Error('expected a throw');
  }

  it.each([
    ['FSMBlockedError', FSMBlockedError, noTargetError(), 'FSM_BLOCKED'],
    ['CatalogError', CatalogError, thrown(() => parseCatalog({ tools: 3 })), 'CATALOG_INVALID'],
    ['SnapshotError', SnapshotError, thrown(() => parsePersistedSnapshot({ v: 'x' })), 'SNAPSHOT_INVALID'],
    ['TranscriptError', TranscriptError, thrown(() => readTranscript('{not json', 'bad.jsonl')), 'TRANSCRIPT_UNREADABLE'],
    ['SessionGuardError', SessionGuardError, new SessionGuardError('GUARD_STOPPED', 'stopped'), 'GUARD_STOPPED'],
    ['SessionStoreError', SessionStoreError, new SessionStoreError('closed', 'closed'), 'closed'],
  ])('%s has its name and a stable code to branch on', (name, errorClass, error, code) => {
    expect(error).toBeInstanceOf(errorClass);
    expect((error as Error).name).toBe(name);
    expect((error as { code: unknown }).code).toBe(code);
  });

  it('is the same class whether imported from errors/ or from the package root', async () => {
    const root = await import('../../src/index.js');
    expect(root.CatalogError).toBe(CatalogError);
    expect(root.SnapshotError).toBe(SnapshotError);
    expect(root.SessionStoreError).toBe(SessionStoreError);
    expect(root.FSMBlockedError).toBe(FSMBlockedError);
  });
});
