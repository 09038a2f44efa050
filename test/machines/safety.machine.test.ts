/**
 * The safety statechart driven directly as an actor: events carry their time
 * `at`, decisions are read from the emitted `gate.decided` events and
 * recoveries from `recovery.succeeded`.
 *
 * Spec: ASSISTANT_SAFETY.md "States", "The invariants", "Blocked calls and
 * recovery", "Resetting"; DESIGN.md §1 and §3.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createActor } from 'xstate';
import { initialSafetyContext, safetyMachine } from '../../machines/safety.machine.js';
import {
  ANSWER_BLOCK_REASONS,
  ErrCodeFSMBlocked,
  MAX_IN_FLIGHT,
  MAX_NAME_LENGTH,
  MAX_PENDING_RECOVERIES,
  RECOVERY_TTL_MS,
  TOOL_BLOCK_REASONS,
} from '../../machines/safety.policy.js';
import type {
  GateDecidedEvent,
  RecoverySucceededEvent,
  SafetyEvent,
  SafetyInput,
  SafetyState,
  ToolKind,
} from '../../machines/safety.types.js';

/** A fixed start time (epoch ms); every test passes its times explicitly. */
const T = 1_700_000_000_000;

/**
 * A started actor. Verification is completed by its own event
 * (`autoCompleteVerification: false`) unless `input` says otherwise, so the
 * tests see VERIFYING with its evidence; the machine's own completion is
 * tested on its own.
 */
function start(input?: SafetyInput) {
  const actor = createActor(safetyMachine, { input: { autoCompleteVerification: false, ...input } });
  const decisions: GateDecidedEvent[] = [];
  const recoveries: RecoverySucceededEvent[] = [];
  actor.on('gate.decided', (event) => decisions.push(event));
  actor.on('recovery.succeeded', (event) => recoveries.push(event));
  actor.start();
  return {
    actor,
    decisions,
    recoveries,
    send(event: SafetyEvent) {
      actor.send(event);
    },
    /** Sends something that is not a well-formed `SafetyEvent`. */
    sendRaw(event: unknown) {
      actor.send(event as SafetyEvent);
    },
    get state() {
      return actor.getSnapshot().value as SafetyState;
    },
    get context() {
      return actor.getSnapshot().context;
    },
    get lastDecision(): GateDecidedEvent {
      const decision = decisions.at(-1);
      if (decision === undefined) throw new Error('no gate.decided was emitted');
      return decision;
    },
  };
}
type Session = ReturnType<typeof start>;

function requested(tool: string, kind: ToolKind, at: number, callId?: string): SafetyEvent {
  return { type: 'tool.requested', tool, kind, at, ...(callId === undefined ? {} : { callId }) };
}
function succeeded(tool: string, kind: ToolKind, at: number, callId?: string): SafetyEvent {
  return { type: 'tool.succeeded', tool, kind, at, ...(callId === undefined ? {} : { callId }) };
}
function failed(tool: string, kind: ToolKind, at: number, callId?: string): SafetyEvent {
  return { type: 'tool.failed', tool, kind, at, ...(callId === undefined ? {} : { callId }) };
}

/** Check a call, then record its success. */
function run(s: Session, tool: string, kind: ToolKind, at: number, callId: string): void {
  s.send(requested(tool, kind, at, callId));
  s.send(succeeded(tool, kind, at, callId));
}

/** RESOLVING -> READING by a successful resolve at `at`. */
function toReading(s: Session, at = T): void {
  run(s, 'pulse_query', 'resolve', at, 'resolve-1');
}

/** RESOLVING -> READING -> WRITING: a write `pulse_control` admitted at `at + 1`, id `write-1`. */
function toWriting(s: Session, at = T): void {
  toReading(s, at);
  s.send(requested('pulse_control', 'write', at + 1, 'write-1'));
}

/** ... -> VERIFYING: the write `write-1` succeeded at `at + 2`. */
function toVerifying(s: Session, at = T): void {
  toWriting(s, at);
  s.send(succeeded('pulse_control', 'write', at + 2, 'write-1'));
}

/** ... VERIFYING with read-after-write: a read admitted and succeeded at `at + 3`. */
function toVerified(s: Session, at = T): void {
  toVerifying(s, at);
  run(s, 'pulse_metrics', 'read', at + 3, 'read-1');
}

/** A session in the given state, reached the usual way. */
function inState(state: SafetyState, input?: SafetyInput): Session {
  const s = start(input);
  if (state === 'READING') toReading(s);
  if (state === 'WRITING') toWriting(s);
  if (state === 'VERIFYING') toVerifying(s);
  return s;
}

const ALL_STATES: SafetyState[] = ['RESOLVING', 'READING', 'WRITING', 'VERIFYING'];

describe('Long names (MAX_NAME_LENGTH)', () => {
  it('keeps only the first MAX_NAME_LENGTH characters of a tool name and a call id', () => {
    const actor = createActor(safetyMachine).start();
    actor.send({ type: 'tool.requested', tool: 'r'.repeat(10_000), kind: 'read', callId: 'i'.repeat(10_000), at: 1 });
    const [call] = actor.getSnapshot().context.inFlight;
    expect([call!.tool.length, call!.key.length]).toEqual([MAX_NAME_LENGTH, MAX_NAME_LENGTH + 'id:'.length]);
  });
});

describe('States', () => {
  it('starts in RESOLVING', () => {
    expect(start().state).toBe('RESOLVING');
  });

  it('starts with no tracking at all', () => {
    expect(start().context).toEqual(initialSafetyContext({ autoCompleteVerification: false }));
  });

  it('takes strictFailedWrites from its input', () => {
    expect(start({ strictFailedWrites: true }).context.strictFailedWrites).toBe(true);
  });
});

describe('Transitions on a successful tool call', () => {
  it('a resolve in RESOLVING moves the session to READING', () => {
    const s = start();
    run(s, 'pulse_query', 'resolve', T, 'c1');
    expect(s.state).toBe('READING');
  });

  it('a read in RESOLVING moves the session to READING', () => {
    const s = start();
    run(s, 'pulse_metrics', 'read', T, 'c1');
    expect(s.state).toBe('READING');
  });

  it('an admitted resolve does not move the session before it succeeds', () => {
    const s = start();
    s.send(requested('pulse_query', 'resolve', T, 'c1'));
    expect(s.state).toBe('RESOLVING');
  });

  it('a successful read records the last read tool and its time', () => {
    const s = start();
    run(s, 'pulse_metrics', 'read', T + 5, 'c1');
    expect(s.context).toMatchObject({ lastReadTool: 'pulse_metrics', lastReadAt: T + 5 });
  });

  it('a resolve or read in READING keeps the session in READING', () => {
    const s = inState('READING');
    run(s, 'pulse_metrics', 'read', T + 10, 'c2');
    run(s, 'pulse_query', 'resolve', T + 11, 'c3');
    expect(s.state).toBe('READING');
  });

  it('a write from READING moves the session to VERIFYING', () => {
    const s = inState('READING');
    run(s, 'pulse_control', 'write', T + 10, 'w');
    expect(s.state).toBe('VERIFYING');
  });

  it('a write recorded in RESOLVING moves the session to VERIFYING', () => {
    const s = start();
    s.send(succeeded('pulse_control', 'write', T));
    expect(s.state).toBe('VERIFYING');
  });

  it('a write recorded in VERIFYING keeps the session in VERIFYING', () => {
    const s = inState('VERIFYING');
    s.send(succeeded('pulse_control_guest', 'write', T + 10));
    expect(s.state).toBe('VERIFYING');
  });

  it('a write records the tool and its timestamp', () => {
    const s = inState('READING');
    run(s, 'pulse_control', 'write', T + 42, 'w');
    expect(s.context).toMatchObject({ lastWriteTool: 'pulse_control', lastWriteAt: T + 42 });
  });

  it('a write clears the read-after-write flag', () => {
    const s = start();
    toVerified(s);
    expect(s.context.readAfterWrite).toBe(true);
    s.send(succeeded('pulse_control_guest', 'write', T + 10));
    expect(s.context.readAfterWrite).toBe(false);
  });

  it('a write sets wroteThisEpisode', () => {
    const s = inState('VERIFYING');
    expect(s.context.wroteThisEpisode).toBe(true);
  });

  it('a resolve in VERIFYING sets read-after-write', () => {
    const s = inState('VERIFYING');
    run(s, 'pulse_query', 'resolve', T + 10, 'c');
    expect(s.context.readAfterWrite).toBe(true);
  });

  it('a read in VERIFYING sets read-after-write', () => {
    const s = inState('VERIFYING');
    run(s, 'pulse_metrics', 'read', T + 10, 'c');
    expect(s.context.readAfterWrite).toBe(true);
  });

  it('a read in VERIFYING does not leave VERIFYING by itself', () => {
    const s = inState('VERIFYING');
    run(s, 'pulse_metrics', 'read', T + 10, 'c');
    expect(s.state).toBe('VERIFYING');
  });

  it('a read in VERIFYING that verifies zeroes the consecutive-block counter', () => {
    const s = inState('VERIFYING');
    s.send(requested('pulse_control', 'write', T + 10, 'blocked'));
    s.send(requested('pulse_control', 'write', T + 11, 'blocked-again'));
    expect(s.context.consecutiveVerifyBlocks).toBe(2);
    run(s, 'pulse_metrics', 'read', T + 12, 'c');
    expect(s.context.consecutiveVerifyBlocks).toBe(0);
  });

  it('a user_input call in RESOLVING does not advance the state', () => {
    const s = start();
    run(s, 'pulse_question', 'user_input', T, 'q');
    expect(s.state).toBe('RESOLVING');
  });

  it('a user_input call in READING records no read', () => {
    const s = inState('READING');
    const before = s.context;
    run(s, 'pulse_question', 'user_input', T + 10, 'q');
    expect(s.context).toEqual(before);
  });

  it('a user_input call in VERIFYING is not verification', () => {
    const s = inState('VERIFYING');
    run(s, 'pulse_question', 'user_input', T + 10, 'q');
    expect(s.context.readAfterWrite).toBe(false);
  });

  it('a user_input call in VERIFYING does not let the final answer through', () => {
    const s = inState('VERIFYING');
    run(s, 'pulse_question', 'user_input', T + 10, 'q');
    s.send({ type: 'answer.requested', at: T + 11 });
    expect(s.lastDecision.allowed).toBe(false);
  });
});

describe('Failed tool calls (DESIGN §1)', () => {
  it('a failed resolve in RESOLVING causes no transition', () => {
    const s = start();
    s.send(requested('pulse_query', 'resolve', T, 'c'));
    s.send(failed('pulse_query', 'resolve', T, 'c'));
    expect(s.state).toBe('RESOLVING');
  });

  it('a failed read records no read', () => {
    const s = inState('READING');
    s.send(requested('pulse_metrics', 'read', T + 10, 'c'));
    s.send(failed('pulse_metrics', 'read', T + 10, 'c'));
    expect(s.context.lastReadAt).toBe(T);
  });

  it('a failed read in VERIFYING is not verification', () => {
    const s = inState('VERIFYING');
    s.send(requested('pulse_metrics', 'read', T + 10, 'c'));
    s.send(failed('pulse_metrics', 'read', T + 10, 'c'));
    expect(s.context.readAfterWrite).toBe(false);
  });

  it('a failed write recorded in VERIFYING causes no transition', () => {
    const s = start();
    toVerified(s);
    const before = s.context;
    s.send(failed('pulse_control_guest', 'write', T + 10));
    expect(s.state).toBe('VERIFYING');
    expect(s.context).toEqual(before);
  });
});

describe('CompleteVerification', () => {
  it('returns a verified session from VERIFYING to READING', () => {
    const s = start();
    toVerified(s);
    s.send({ type: 'verification.completed', at: T + 10 });
    expect(s.state).toBe('READING');
  });

  it('does not return an unverified session to READING', () => {
    const s = inState('VERIFYING');
    s.send({ type: 'verification.completed', at: T + 10 });
    expect(s.state).toBe('VERIFYING');
  });

  it('makes further writes possible', () => {
    const s = start();
    toVerified(s);
    s.send({ type: 'verification.completed', at: T + 10 });
    s.send(requested('pulse_control', 'write', T + 11, 'w2'));
    expect(s.lastDecision.allowed).toBe(true);
  });

  it('clears read-after-write and the consecutive-block counter', () => {
    const s = start();
    toVerifying(s);
    s.send(requested('pulse_control', 'write', T + 5, 'blocked'));
    s.send(requested('pulse_metrics', 'read', T + 6, 'r'));
    s.send(requested('pulse_control', 'write', T + 7, 'blocked-again'));
    s.send(succeeded('pulse_metrics', 'read', T + 8, 'r'));
    s.send({ type: 'verification.completed', at: T + 10 });
    expect(s.context).toMatchObject({ readAfterWrite: false, consecutiveVerifyBlocks: 0 });
  });

  it('deliberately leaves wroteThisEpisode set', () => {
    const s = start();
    toVerified(s);
    s.send({ type: 'verification.completed', at: T + 10 });
    expect(s.context.wroteThisEpisode).toBe(true);
  });

  it.each(['RESOLVING', 'READING', 'WRITING'] as const)('is ignored in %s', (state) => {
    const s = inState(state);
    const before = s.actor.getPersistedSnapshot();
    s.send({ type: 'verification.completed', at: T + 10 });
    expect(s.actor.getPersistedSnapshot()).toEqual(before);
  });
});

describe('CompleteVerification by itself (autoCompleteVerification, the default)', () => {
  /** A session as a raw actor gets it without input: the machine completes verification itself. */
  const auto = () => start({ autoCompleteVerification: true });

  it('is on for an actor created without input', () => {
    const actor = createActor(safetyMachine).start();
    actor.send(requested('pulse_query', 'resolve', T, 'q'));
    actor.send(succeeded('pulse_query', 'resolve', T, 'q'));
    actor.send(requested('pulse_control', 'write', T + 1, 'w'));
    actor.send(succeeded('pulse_control', 'write', T + 2, 'w'));
    actor.send(requested('pulse_metrics', 'read', T + 3, 'r'));
    actor.send(succeeded('pulse_metrics', 'read', T + 4, 'r'));
    expect(actor.getSnapshot().value).toBe('READING');
  });

  it('a verifying read returns the session to READING at once', () => {
    const s = auto();
    toVerified(s);
    expect(s.state).toBe('READING');
  });

  it('a write after a verifying read is admitted without verification.completed', () => {
    const s = auto();
    toVerified(s);
    s.send(requested('pulse_control', 'write', T + 10, 'w2'));
    expect(s.lastDecision.allowed).toBe(true);
  });

  it('clears read-after-write and keeps wroteThisEpisode, as CompleteVerification does', () => {
    const s = auto();
    toVerified(s);
    expect(s.context).toMatchObject({ readAfterWrite: false, consecutiveVerifyBlocks: 0, wroteThisEpisode: true });
  });

  it('does not complete an unverified session', () => {
    const s = start({ autoCompleteVerification: true });
    toVerifying(s);
    run(s, 'pulse_question', 'user_input', T + 10, 'q');
    expect(s.state).toBe('VERIFYING');
  });

  /**
   * A write and a read of one tool checked without ids, then a self-verified
   * success that states no kind: booked worst case, the write stays in flight,
   * and the result may be the read's (its output can say anything).
   */
  function verifiedBesideWrite() {
    const s = auto();
    toReading(s);
    s.send({ type: 'tool.requested', tool: 'deploy', kind: 'write', at: T + 1 });
    s.send({ type: 'tool.requested', tool: 'deploy', kind: 'read', at: T + 2 });
    s.send({ type: 'tool.succeeded', tool: 'deploy', kind: 'write', kindUnstated: true, selfVerified: true, at: T + 3 });
    return s;
  }

  it('an ambiguous success of calls without ids verifies nothing of itself (the result may be the other call’s)', () => {
    const s = verifiedBesideWrite();
    expect({ state: s.state, readAfterWrite: s.context.readAfterWrite }).toEqual({ state: 'VERIFYING', readAfterWrite: false });
  });

  it('nor does the success of the write left in flight: it may be the read’s, and the session still needs a read', () => {
    const s = verifiedBesideWrite();
    s.send({ type: 'tool.succeeded', tool: 'deploy', kind: 'write', kindUnstated: true, selfVerified: true, at: T + 4 });
    expect({ state: s.state, readAfterWrite: s.context.readAfterWrite }).toEqual({ state: 'VERIFYING', readAfterWrite: false });
  });

  it('a self-verified success of a write checked under its id verifies it at once', () => {
    const s = auto();
    toReading(s);
    s.send({ type: 'tool.requested', tool: 'deploy', kind: 'write', callId: 'w', at: T + 1 });
    s.send({ type: 'tool.succeeded', tool: 'deploy', kind: 'write', callId: 'w', selfVerified: true, at: T + 2 });
    expect(s.state).toBe('READING');
  });

  it('emits nothing of its own: the read is the only decision', () => {
    const s = auto();
    toVerifying(s);
    const before = s.decisions.length;
    run(s, 'pulse_metrics', 'read', T + 3, 'read-1');
    expect(s.decisions.length).toBe(before + 1);
  });

  it('is kept by Reset', () => {
    const s = start({ autoCompleteVerification: false });
    s.send({ type: 'session.reset', at: T });
    expect(s.context.autoCompleteVerification).toBe(false);
  });

  it('with autoCompleteVerification false, a verifying read leaves the session in VERIFYING', () => {
    const s = start({ autoCompleteVerification: false });
    toVerified(s);
    expect(s.state).toBe('VERIFYING');
  });
});

describe('Invariant: no writing without a validated target', () => {
  it('a write attempted in RESOLVING is blocked', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    expect(s.lastDecision).toEqual({
      type: 'gate.decided',
      subject: 'tool',
      allowed: false,
      state: 'RESOLVING',
      tool: 'pulse_control',
      kind: 'write',
      callId: 'w',
      rule: 'no-target',
      reason: TOOL_BLOCK_REASONS['no-target'],
      recoveryId: `${ErrCodeFSMBlocked}:pulse_control`,
      at: T,
    });
  });

  it('a blocked write leaves the session in RESOLVING', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    expect(s.state).toBe('RESOLVING');
  });

  it('a write stays blocked while the resolve that would establish the target has not succeeded', () => {
    const s = start();
    s.send(requested('pulse_query', 'resolve', T, 'q'));
    s.send(requested('pulse_control', 'write', T + 1, 'w'));
    expect(s.lastDecision.allowed).toBe(false);
  });

  it('a write stays blocked after a failed resolve', () => {
    const s = start();
    s.send(requested('pulse_query', 'resolve', T, 'q'));
    s.send(failed('pulse_query', 'resolve', T, 'q'));
    s.send(requested('pulse_control', 'write', T + 1, 'w'));
    expect(s.lastDecision.allowed).toBe(false);
  });

  it('a write stays blocked after user input', () => {
    const s = start();
    run(s, 'pulse_question', 'user_input', T, 'q');
    s.send(requested('pulse_control', 'write', T + 1, 'w'));
    expect(s.lastDecision.allowed).toBe(false);
  });

  it('a write is admitted once a resolve succeeded', () => {
    const s = inState('READING');
    s.send(requested('pulse_control', 'write', T + 1, 'w'));
    expect(s.lastDecision).toMatchObject({ allowed: true, state: 'READING', kind: 'write', rule: null, reason: null });
  });
});

describe('Invariant: no writing again until the last write is verified', () => {
  it('a write attempted in VERIFYING is blocked', () => {
    const s = inState('VERIFYING');
    s.send(requested('pulse_control_guest', 'write', T + 10, 'w2'));
    expect(s.lastDecision).toMatchObject({
      allowed: false,
      state: 'VERIFYING',
      tool: 'pulse_control_guest',
      rule: 'unverified-write',
      reason: TOOL_BLOCK_REASONS['unverified-write'],
    });
  });

  it('a blocked write leaves the session in VERIFYING', () => {
    const s = inState('VERIFYING');
    s.send(requested('pulse_control', 'write', T + 10, 'w2'));
    expect(s.state).toBe('VERIFYING');
  });

  it('a write in VERIFYING stays blocked after a read until verification is completed', () => {
    const s = start();
    toVerified(s);
    s.send(requested('pulse_control', 'write', T + 10, 'w2'));
    expect(s.lastDecision.allowed).toBe(false);
  });
});

describe('Invariant: no final answer about an unverified change', () => {
  it('the final answer is refused in VERIFYING with no read-after-write', () => {
    const s = inState('VERIFYING');
    s.send({ type: 'answer.requested', at: T + 10 });
    expect(s.lastDecision).toEqual({
      type: 'gate.decided',
      subject: 'answer',
      allowed: false,
      state: 'VERIFYING',
      tool: null,
      kind: null,
      callId: null,
      rule: 'unverified-write',
      reason: ANSWER_BLOCK_REASONS['unverified-write'],
      recoveryId: null,
      at: T + 10,
    });
  });

  it('the final answer is allowed in VERIFYING once a read ran after the write', () => {
    const s = start();
    toVerified(s);
    s.send({ type: 'answer.requested', at: T + 10 });
    expect(s.lastDecision).toMatchObject({ subject: 'answer', allowed: true, state: 'VERIFYING' });
  });

  it.each(['RESOLVING', 'READING'] as const)('the final answer is allowed in %s', (state) => {
    const s = inState(state);
    s.send({ type: 'answer.requested', at: T + 10 });
    expect(s.lastDecision).toMatchObject({ subject: 'answer', allowed: true, state, rule: null, reason: null });
  });

  it('a refused final answer is counted in finalAnswerBlocks', () => {
    const s = inState('VERIFYING');
    s.send({ type: 'answer.requested', at: T + 10 });
    s.send({ type: 'answer.requested', at: T + 11 });
    expect(s.context.finalAnswerBlocks).toBe(2);
  });

  it('a refused final answer opens no pending recovery', () => {
    const s = inState('VERIFYING');
    s.send({ type: 'answer.requested', at: T + 10 });
    expect(s.context.pendingRecoveries).toEqual({});
  });

  it('a refused final answer does not change the state', () => {
    const s = inState('VERIFYING');
    s.send({ type: 'answer.requested', at: T + 10 });
    expect(s.state).toBe('VERIFYING');
  });
});

describe('Invariant: repeated attempts do not wear the gate down', () => {
  it('each write blocked in VERIFYING increments the consecutive-block counter', () => {
    const s = inState('VERIFYING');
    for (let i = 0; i < 3; i++) s.send(requested('pulse_control', 'write', T + 10 + i, `w${i}`));
    expect(s.context.consecutiveVerifyBlocks).toBe(3);
  });

  it('the 51st write in VERIFYING is still blocked after 50 blocked writes', () => {
    const s = inState('VERIFYING');
    for (let i = 0; i < 50; i++) s.send(requested('pulse_control', 'write', T + 10 + i, `w${i}`));
    expect(s.context.consecutiveVerifyBlocks).toBe(50);
    s.send(requested('pulse_control', 'write', T + 100, 'w50'));
    expect(s.lastDecision.allowed).toBe(false);
  });

  it('the counter is telemetry only: the 51st refusal is the same as the first', () => {
    const s = inState('VERIFYING');
    for (let i = 0; i < 51; i++) s.send(requested('pulse_control', 'write', T + 10, 'w'));
    const toolDecisions = s.decisions.filter((d) => d.subject === 'tool' && d.state === 'VERIFYING');
    expect(toolDecisions).toHaveLength(51);
    expect(toolDecisions.at(-1)).toEqual(toolDecisions[0]);
  });

  it('the final answer stays refused however many writes were blocked', () => {
    const s = inState('VERIFYING');
    for (let i = 0; i < 50; i++) s.send(requested('pulse_control', 'write', T + 10 + i, `w${i}`));
    s.send({ type: 'answer.requested', at: T + 100 });
    expect(s.lastDecision.allowed).toBe(false);
  });

  it('writes blocked in RESOLVING are not counted', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    expect(s.context.consecutiveVerifyBlocks).toBe(0);
  });

  it('writes blocked in WRITING are not counted', () => {
    const s = inState('WRITING');
    s.send(requested('pulse_control_guest', 'write', T + 10, 'w2'));
    expect(s.context.consecutiveVerifyBlocks).toBe(0);
  });

  it('a new successful write zeroes the counter', () => {
    const s = inState('VERIFYING');
    s.send(requested('pulse_control', 'write', T + 10, 'w2'));
    s.send(succeeded('pulse_control_guest', 'write', T + 11));
    expect(s.context.consecutiveVerifyBlocks).toBe(0);
  });
});

describe('Invariant: reads are never blocked', () => {
  const neverBlocked: ToolKind[] = ['resolve', 'read', 'user_input', 'neutral'];
  const cases = ALL_STATES.flatMap((state) => neverBlocked.map((kind) => [state, kind] as const));

  it.each(cases)('in %s a %s call is admitted', (state, kind) => {
    const s = inState(state);
    s.send(requested('some_tool', kind, T + 10, 'c'));
    expect(s.lastDecision).toMatchObject({ subject: 'tool', allowed: true, state, kind, callId: 'c' });
  });

  it.each(ALL_STATES)('in %s an admitted read does not change the state', (state) => {
    const s = inState(state);
    s.send(requested('pulse_metrics', 'read', T + 10, 'c'));
    expect(s.state).toBe(state);
  });
});

describe('Gate decisions are emitted events', () => {
  it('every tool check emits exactly one gate.decided', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'a'));
    s.send(requested('pulse_query', 'resolve', T, 'b'));
    expect(s.decisions.map((d) => [d.callId, d.allowed])).toEqual([
      ['a', false],
      ['b', true],
    ]);
  });

  it('every final answer request emits exactly one gate.decided', () => {
    const s = start();
    s.send({ type: 'answer.requested', at: T });
    expect(s.decisions).toHaveLength(1);
  });

  it('recording an outcome emits no gate.decided', () => {
    const s = start();
    s.send(succeeded('pulse_query', 'resolve', T, 'a'));
    s.send(failed('pulse_control', 'write', T, 'b'));
    expect(s.decisions).toEqual([]);
  });

  it('a call without an id is decided with callId null', () => {
    const s = start();
    s.send(requested('pulse_query', 'resolve', T));
    expect(s.lastDecision.callId).toBeNull();
  });
});

describe('Blocked calls and recovery', () => {
  it('a blocked call opens a pending recovery for its tool', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    expect(s.context.pendingRecoveries).toEqual({
      'FSM_BLOCKED:pulse_control': {
        recoveryId: 'FSM_BLOCKED:pulse_control',
        errorCode: 'FSM_BLOCKED',
        tool: 'pulse_control',
        createdAt: T,
        lastBlockedAt: T,
        attempts: 1,
      },
    });
  });

  it('the refusal names the pending recovery it opened', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    expect(Object.keys(s.context.pendingRecoveries)).toEqual([s.lastDecision.recoveryId]);
  });

  it('a later successful call of the same tool clears the pending recovery', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    toReading(s, T + 1);
    run(s, 'pulse_control', 'write', T + 2, 'w2');
    expect(s.context.pendingRecoveries).toEqual({});
  });

  it('the cleared pending recovery is emitted as recovery.succeeded', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    const pending = s.context.pendingRecoveries['FSM_BLOCKED:pulse_control'];
    toReading(s, T + 1);
    run(s, 'pulse_control', 'write', T + 2, 'w2');
    expect(s.recoveries).toEqual([{ type: 'recovery.succeeded', recovery: pending, at: T + 2 }]);
  });

  it('a successful call of another tool leaves the pending recovery', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    toReading(s, T + 1);
    run(s, 'pulse_control_guest', 'write', T + 2, 'w2');
    expect(Object.keys(s.context.pendingRecoveries)).toEqual(['FSM_BLOCKED:pulse_control']);
    expect(s.recoveries).toEqual([]);
  });

  it('a failed call of the same tool leaves the pending recovery', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    toReading(s, T + 1);
    s.send(requested('pulse_control', 'write', T + 2, 'w2'));
    s.send(failed('pulse_control', 'write', T + 3, 'w2'));
    expect(Object.keys(s.context.pendingRecoveries)).toEqual(['FSM_BLOCKED:pulse_control']);
    expect(s.recoveries).toEqual([]);
  });

  it('a successful call of the same tool under another kind still clears it (by tool name)', () => {
    const s = start();
    s.send(requested('pulse_docker', 'write', T, 'w'));
    run(s, 'pulse_docker', 'read', T + 1, 'r');
    expect(s.context.pendingRecoveries).toEqual({});
    expect(s.recoveries).toHaveLength(1);
  });

  it('a blocked write in VERIFYING recovers once verification completed and the write succeeds', () => {
    const s = inState('VERIFYING');
    s.send(requested('pulse_control_guest', 'write', T + 10, 'w2'));
    run(s, 'pulse_metrics', 'read', T + 11, 'r');
    s.send({ type: 'verification.completed', at: T + 12 });
    run(s, 'pulse_control_guest', 'write', T + 13, 'w3');
    expect(s.recoveries.map((r) => r.recovery.tool)).toEqual(['pulse_control_guest']);
  });
});

describe('Pending recoveries per tool with attempts and a ten-minute TTL (DESIGN §3.5)', () => {
  it('a repeated block of the same tool bumps attempts in one entry', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'a'));
    s.send(requested('pulse_control', 'write', T + 1000, 'b'));
    s.send(requested('pulse_control', 'write', T + 2000, 'c'));
    expect(s.context.pendingRecoveries).toEqual({
      'FSM_BLOCKED:pulse_control': expect.objectContaining({ createdAt: T, lastBlockedAt: T + 2000, attempts: 3 }),
    });
  });

  it('blocks of different tools are tracked separately', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'a'));
    s.send(requested('pulse_run_command', 'write', T + 1, 'b'));
    expect(Object.keys(s.context.pendingRecoveries).sort()).toEqual(['FSM_BLOCKED:pulse_control', 'FSM_BLOCKED:pulse_run_command']);
  });

  it('the TTL is ten minutes', () => {
    expect(RECOVERY_TTL_MS).toBe(10 * 60 * 1000);
  });

  it('a pending recovery is kept exactly ten minutes after its block', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    s.send({ type: 'clock.ticked', at: T + 600_000 });
    expect(Object.keys(s.context.pendingRecoveries)).toEqual(['FSM_BLOCKED:pulse_control']);
  });

  it('a pending recovery is gone 1 ms after ten minutes', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    s.send({ type: 'clock.ticked', at: T + 600_001 });
    expect(s.context.pendingRecoveries).toEqual({});
  });

  it('a success exactly ten minutes after the block is a recovery', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    s.send(succeeded('pulse_control', 'write', T + 600_000));
    expect(s.recoveries).toHaveLength(1);
  });

  it('a success 1 ms after the TTL is no recovery', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    s.send(succeeded('pulse_control', 'write', T + 600_001));
    expect(s.recoveries).toEqual([]);
  });

  it('an expired entry is dropped by the next successful call of any tool', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    run(s, 'pulse_query', 'resolve', T + 600_001, 'q');
    expect(s.context.pendingRecoveries).toEqual({});
  });

  it('the TTL runs from the latest block', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'a'));
    s.send(requested('pulse_control', 'write', T + 500_000, 'b'));
    s.send({ type: 'clock.ticked', at: T + 1_100_000 });
    expect(Object.keys(s.context.pendingRecoveries)).toEqual(['FSM_BLOCKED:pulse_control']);
    s.send({ type: 'clock.ticked', at: T + 1_100_001 });
    expect(s.context.pendingRecoveries).toEqual({});
  });

  it('a block after the entry expired opens a fresh entry with one attempt', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'a'));
    s.send(requested('pulse_control', 'write', T + 600_001, 'b'));
    expect(s.context.pendingRecoveries['FSM_BLOCKED:pulse_control']).toMatchObject({
      createdAt: T + 600_001,
      lastBlockedAt: T + 600_001,
      attempts: 1,
    });
  });

  it('a clock tick keeps entries still alive for other tools', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'a'));
    s.send(requested('pulse_run_command', 'write', T + 100, 'b'));
    s.send({ type: 'clock.ticked', at: T + 600_050 });
    expect(Object.keys(s.context.pendingRecoveries)).toEqual(['FSM_BLOCKED:pulse_run_command']);
  });
});

describe('Resetting', () => {
  it.each(ALL_STATES)('Reset returns a %s session to RESOLVING', (state) => {
    const s = inState(state);
    s.send({ type: 'session.reset', at: T + 10 });
    expect(s.state).toBe('RESOLVING');
  });

  it('Reset clears all tracking', () => {
    const s = inState('VERIFYING');
    s.send(requested('pulse_control', 'write', T + 10, 'blocked'));
    s.send(requested('pulse_metrics', 'read', T + 11, 'in-flight'));
    s.send({ type: 'answer.requested', at: T + 12 });
    s.send({ type: 'session.reset', at: T + 13 });
    // checksCalls is how the session is driven (a setting, like strictFailedWrites), not tracking.
    expect(s.context).toEqual({ ...initialSafetyContext({ autoCompleteVerification: false }), checksCalls: true });
  });

  it('Reset clears pending recoveries (DESIGN §3.2)', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    s.send({ type: 'session.reset', at: T + 1 });
    expect(s.context.pendingRecoveries).toEqual({});
  });

  it('a success after Reset reports no recovery of a block from before it', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w'));
    s.send({ type: 'session.reset', at: T + 1 });
    s.send(succeeded('pulse_control', 'write', T + 2));
    expect(s.recoveries).toEqual([]);
  });

  it('Reset keeps the strict failed-writes option', () => {
    const s = inState('VERIFYING', { strictFailedWrites: true });
    s.send({ type: 'session.reset', at: T + 10 });
    expect(s.context.strictFailedWrites).toBe(true);
  });

  it('ResetKeepProgress moves a VERIFYING session back to READING', () => {
    const s = inState('VERIFYING');
    s.send({ type: 'session.resetKeepingProgress', at: T + 10 });
    expect(s.state).toBe('READING');
  });

  it('ResetKeepProgress moves a WRITING session back to READING (DESIGN §3.2)', () => {
    const s = inState('WRITING');
    s.send({ type: 'session.resetKeepingProgress', at: T + 10 });
    expect(s.state).toBe('READING');
  });

  it('ResetKeepProgress keeps a READING session in READING', () => {
    const s = inState('READING');
    s.send({ type: 'session.resetKeepingProgress', at: T + 10 });
    expect(s.state).toBe('READING');
  });

  it('ResetKeepProgress keeps a RESOLVING session in RESOLVING', () => {
    const s = start();
    s.send({ type: 'session.resetKeepingProgress', at: T });
    expect(s.state).toBe('RESOLVING');
  });

  it('ResetKeepProgress does not discard that a target was established: a write is admitted', () => {
    const s = inState('VERIFYING');
    s.send({ type: 'session.resetKeepingProgress', at: T + 10 });
    s.send(requested('pulse_control', 'write', T + 11, 'w2'));
    expect(s.lastDecision.allowed).toBe(true);
  });

  it('ResetKeepProgress drops verification tracking: flags and counters', () => {
    const s = start();
    toVerifying(s);
    s.send(requested('pulse_control', 'write', T + 5, 'blocked'));
    s.send({ type: 'answer.requested', at: T + 6 });
    run(s, 'pulse_metrics', 'read', T + 7, 'r');
    s.send({ type: 'session.resetKeepingProgress', at: T + 10 });
    expect(s.context).toMatchObject({ readAfterWrite: false, consecutiveVerifyBlocks: 0, finalAnswerBlocks: 0 });
  });

  it('ResetKeepProgress drops the calls in flight', () => {
    const s = inState('WRITING');
    s.send(requested('pulse_metrics', 'read', T + 5, 'r'));
    s.send({ type: 'session.resetKeepingProgress', at: T + 10 });
    expect(s.context.inFlight).toEqual([]);
  });

  it('ResetKeepProgress keeps the last read and write records', () => {
    const s = start();
    toVerified(s);
    s.send({ type: 'session.resetKeepingProgress', at: T + 10 });
    expect(s.context).toMatchObject({
      lastWriteTool: 'pulse_control',
      lastWriteAt: T + 2,
      lastReadTool: 'pulse_metrics',
      lastReadAt: T + 3,
    });
  });

  it('ResetKeepProgress keeps pending recoveries (DESIGN §3.2)', () => {
    const s = inState('VERIFYING');
    s.send(requested('pulse_control_guest', 'write', T + 5, 'blocked'));
    const before = s.context.pendingRecoveries;
    s.send({ type: 'session.resetKeepingProgress', at: T + 10 });
    expect(s.context.pendingRecoveries).toEqual(before);
  });

  it('a write whose outcome arrives after ResetKeepProgress dropped it still needs verification', () => {
    const s = inState('WRITING');
    s.send({ type: 'session.resetKeepingProgress', at: T + 10 });
    s.send(succeeded('pulse_control', 'write', T + 11, 'write-1'));
    expect(s.state).toBe('VERIFYING');
  });

  it("ResetKeepProgress clears wroteThisEpisode (DESIGN §1: the original's own test)", () => {
    const s = inState('VERIFYING');
    s.send({ type: 'session.resetKeepingProgress', at: T + 10 });
    expect(s.context.wroteThisEpisode).toBe(false);
  });

  it('wroteThisEpisode is cleared by Reset', () => {
    const s = inState('VERIFYING');
    s.send({ type: 'session.reset', at: T + 10 });
    expect(s.context.wroteThisEpisode).toBe(false);
  });
});

describe('WRITING is real (DESIGN §3.3)', () => {
  it('an admitted write enters WRITING', () => {
    const s = inState('READING');
    s.send(requested('pulse_control', 'write', T + 10, 'w'));
    expect(s.state).toBe('WRITING');
  });

  it('a successful outcome of the write moves WRITING to VERIFYING', () => {
    const s = inState('WRITING');
    s.send(succeeded('pulse_control', 'write', T + 10, 'write-1'));
    expect(s.state).toBe('VERIFYING');
  });

  it('a failed outcome of the write moves WRITING back to READING', () => {
    const s = inState('WRITING');
    s.send(failed('pulse_control', 'write', T + 10, 'write-1'));
    expect(s.state).toBe('READING');
  });

  it('a failed write leaves no trace of a write', () => {
    const s = inState('WRITING');
    s.send(failed('pulse_control', 'write', T + 10, 'write-1'));
    expect(s.context).toMatchObject({ wroteThisEpisode: false, lastWriteTool: null, inFlight: [] });
  });

  it('a second write while one is in flight is refused', () => {
    const s = inState('WRITING');
    s.send(requested('pulse_control_guest', 'write', T + 10, 'w2'));
    expect(s.lastDecision).toMatchObject({
      allowed: false,
      state: 'WRITING',
      rule: 'write-in-flight',
      reason: TOOL_BLOCK_REASONS['write-in-flight'],
      recoveryId: 'FSM_BLOCKED:pulse_control_guest',
    });
  });

  it('a refused second write opens a pending recovery', () => {
    const s = inState('WRITING');
    s.send(requested('pulse_control_guest', 'write', T + 10, 'w2'));
    expect(Object.keys(s.context.pendingRecoveries)).toEqual(['FSM_BLOCKED:pulse_control_guest']);
  });

  it('the final answer is refused while a write is in flight', () => {
    const s = inState('WRITING');
    s.send({ type: 'answer.requested', at: T + 10 });
    expect(s.lastDecision).toMatchObject({
      subject: 'answer',
      allowed: false,
      state: 'WRITING',
      rule: 'write-in-flight',
      reason: ANSWER_BLOCK_REASONS['write-in-flight'],
    });
  });

  it('a read is admitted while a write is in flight', () => {
    const s = inState('WRITING');
    s.send(requested('pulse_metrics', 'read', T + 10, 'r'));
    expect(s.lastDecision.allowed).toBe(true);
  });

  it("a read's outcome while a write is in flight keeps WRITING", () => {
    const s = inState('WRITING');
    run(s, 'pulse_metrics', 'read', T + 10, 'r');
    expect(s.state).toBe('WRITING');
  });

  it("a read's failure while a write is in flight keeps WRITING", () => {
    const s = inState('WRITING');
    s.send(requested('pulse_metrics', 'read', T + 10, 'r'));
    s.send(failed('pulse_metrics', 'read', T + 10, 'r'));
    expect(s.state).toBe('WRITING');
  });

  it('the outcome is matched to the admitted write by its call id', () => {
    const s = inState('WRITING');
    s.send(succeeded('pulse_control', 'write', T + 10, 'write-1'));
    expect(s.context.inFlight).toEqual([]);
  });

  it('the admitted kind wins over the kind the outcome reports', () => {
    const s = inState('WRITING');
    s.send(succeeded('pulse_control', 'read', T + 10, 'write-1'));
    expect(s.state).toBe('VERIFYING');
  });

  it('a write checked without an id is settled by an outcome of the same tool without an id', () => {
    const s = inState('READING');
    s.send(requested('pulse_control', 'write', T + 10));
    s.send(succeeded('pulse_control', 'write', T + 11));
    expect(s.state).toBe('VERIFYING');
    expect(s.context.inFlight).toEqual([]);
  });

  it('a final answer is refused in VERIFYING while another admitted write is still in flight', () => {
    const s = inState('WRITING');
    s.send(succeeded('pulse_control_guest', 'write', T + 10));
    run(s, 'pulse_metrics', 'read', T + 11, 'r');
    s.send({ type: 'answer.requested', at: T + 12 });
    expect(s.lastDecision).toMatchObject({ allowed: false, state: 'VERIFYING', rule: 'write-in-flight' });
  });
});

describe('Parallel calls cannot sneak past (DESIGN §3.4)', () => {
  it('a read admitted before the write succeeded does not verify it', () => {
    const s = inState('WRITING');
    s.send(requested('pulse_metrics', 'read', T + 10, 'r'));
    s.send(succeeded('pulse_control', 'write', T + 11, 'write-1'));
    s.send(succeeded('pulse_metrics', 'read', T + 12, 'r'));
    expect(s.context.readAfterWrite).toBe(false);
  });

  it('a read admitted before the write succeeded does not let the final answer through', () => {
    const s = inState('WRITING');
    s.send(requested('pulse_metrics', 'read', T + 10, 'r'));
    s.send(succeeded('pulse_control', 'write', T + 11, 'write-1'));
    s.send(succeeded('pulse_metrics', 'read', T + 12, 'r'));
    s.send({ type: 'answer.requested', at: T + 13 });
    expect(s.lastDecision.allowed).toBe(false);
  });

  it('a read admitted before the write succeeded is still recorded as the last read', () => {
    const s = inState('WRITING');
    s.send(requested('pulse_metrics', 'read', T + 10, 'r'));
    s.send(succeeded('pulse_control', 'write', T + 11, 'write-1'));
    s.send(succeeded('pulse_metrics', 'read', T + 12, 'r'));
    expect(s.context).toMatchObject({ lastReadTool: 'pulse_metrics', lastReadAt: T + 12 });
  });

  it('a read admitted before the write was even requested does not verify it', () => {
    const s = inState('READING');
    s.send(requested('pulse_metrics', 'read', T + 10, 'r'));
    run(s, 'pulse_control', 'write', T + 11, 'w');
    s.send(succeeded('pulse_metrics', 'read', T + 12, 'r'));
    expect(s.context.readAfterWrite).toBe(false);
  });

  it('a read admitted after the write succeeded verifies it', () => {
    const s = inState('VERIFYING');
    s.send(requested('pulse_metrics', 'read', T + 10, 'r'));
    s.send(succeeded('pulse_metrics', 'read', T + 11, 'r'));
    expect(s.context.readAfterWrite).toBe(true);
  });

  it('outcomes are matched by call id, not by arrival order', () => {
    const s = inState('WRITING');
    s.send(requested('pulse_metrics', 'read', T + 10, 'early'));
    s.send(succeeded('pulse_control', 'write', T + 11, 'write-1'));
    s.send(requested('pulse_metrics', 'read', T + 12, 'late'));
    s.send(succeeded('pulse_metrics', 'read', T + 13, 'late'));
    expect(s.context.readAfterWrite).toBe(true);
    expect(s.context.inFlight.map((c) => c.key)).toEqual(['id:early']);
  });

  it('a read admitted after one write does not verify a later write', () => {
    const s = inState('VERIFYING');
    s.send(requested('pulse_metrics', 'read', T + 10, 'r'));
    s.send(succeeded('pulse_control_guest', 'write', T + 11));
    s.send(succeeded('pulse_metrics', 'read', T + 12, 'r'));
    expect(s.context.readAfterWrite).toBe(false);
  });

  it('in a session that never checks, a read recorded after a write verifies it (record-only loops)', () => {
    const s = start();
    s.send(succeeded('pulse_query', 'resolve', T));
    s.send(succeeded('pulse_control', 'write', T + 1));
    s.send(succeeded('pulse_metrics', 'read', T + 2));
    expect(s.context.readAfterWrite).toBe(true);
  });

  it('in a session that checks its calls, a read recorded without a check does not verify', () => {
    const s = inState('VERIFYING');
    s.send(succeeded('pulse_metrics', 'read', T + 10));
    expect(s.context.readAfterWrite).toBe(false);
  });

  it('calls checked without an id settle oldest first per tool', () => {
    const s = inState('READING');
    s.send(requested('pulse_metrics', 'read', T + 10));
    s.send(requested('pulse_metrics', 'read', T + 11));
    s.send(succeeded('pulse_metrics', 'read', T + 12));
    expect(s.context.inFlight).toEqual([expect.objectContaining({ key: 'anon:1', admittedAt: T + 11 })]);
  });

  it('calls in flight are bounded by MAX_IN_FLIGHT', () => {
    const s = inState('READING');
    for (let i = 0; i < MAX_IN_FLIGHT + 10; i++) s.send(requested('pulse_metrics', 'read', T + i, `r${i}`));
    expect(s.context.inFlight).toHaveLength(MAX_IN_FLIGHT);
  });

  /** Blocks a write of each tool at its time (epoch ms) from a fresh session; the tools left with a pending recovery. */
  function pendingAfterBlocks(blocks: readonly (readonly [string, number])[]): string[] {
    const s = start();
    blocks.forEach(([tool, at], i) => s.send(requested(tool, 'write', at, `b${i}`)));
    return Object.keys(s.context.pendingRecoveries).map((id) => id.replace(`${ErrCodeFSMBlocked}:`, ''));
  }

  /** `count` other tools, `tool_0` first, blocked one millisecond apart from `from`. */
  const others = (count: number, from: number) => Array.from({ length: count }, (_, i) => [`tool_${i}`, from + i] as const);

  it('pending recoveries are bounded by MAX_PENDING_RECOVERIES, dropping the one blocked least recently', () => {
    const tools = pendingAfterBlocks([['tool_first', T], ...others(MAX_PENDING_RECOVERIES + 5, T + 1), ['tool_first', T + 100]]);
    expect(tools).toHaveLength(MAX_PENDING_RECOVERIES);
    expect(tools).toContain('tool_first');
    expect(tools).not.toContain('tool_0');
  });

  it('a pending recovery blocked again is kept over one listed after it but blocked less recently', () => {
    const tools = pendingAfterBlocks([['tool_a', T], ['tool_b', T + 1], ['tool_a', T + 2], ...others(MAX_PENDING_RECOVERIES - 1, T + 3)]);
    expect(tools).toHaveLength(MAX_PENDING_RECOVERIES);
    expect(tools).toContain('tool_a');
    expect(tools).not.toContain('tool_b');
  });

  it('among pending recoveries blocked at the same time, the one opened first is dropped', () => {
    const tools = pendingAfterBlocks(others(MAX_PENDING_RECOVERIES + 1, T).map(([tool]) => [tool, T] as const));
    expect(tools).toHaveLength(MAX_PENDING_RECOVERIES);
    expect(tools).not.toContain('tool_0');
    expect(tools).toContain(`tool_${MAX_PENDING_RECOVERIES}`);
  });

  it('an admitted write is never dropped from the calls in flight', () => {
    const s = inState('WRITING');
    for (let i = 0; i < MAX_IN_FLIGHT + 10; i++) s.send(requested('pulse_metrics', 'read', T + 10 + i, `r${i}`));
    expect(s.context.inFlight.map((c) => c.key)).toContain('id:write-1');
    expect(s.state).toBe('WRITING');
  });
});

describe('an outcome that could belong to several calls in flight (DESIGN §3.4)', () => {
  /** WRITING with a write and a read of one tool (`pulse_docker`) admitted side by side without ids. */
  function writeBesideRead(): Session {
    const s = inState('READING');
    s.send(requested('pulse_docker', 'write', T + 10));
    s.send(requested('pulse_docker', 'read', T + 11));
    return s;
  }
  /** A record of `pulse_docker` that names the tool alone (`kindUnstated`), its kind the name's fail-closed write. */
  const byName = (type: 'tool.succeeded' | 'tool.failed', at: number): SafetyEvent => ({
    type,
    tool: 'pulse_docker',
    kind: 'write',
    kindUnstated: true,
    at,
  });
  const kindsInFlight = (s: Session) => s.context.inFlight.map((c) => c.kind);

  it('a failure that states no kind settles the read, not the write', () => {
    const s = writeBesideRead();
    s.send(byName('tool.failed', T + 12));
    expect(kindsInFlight(s)).toEqual(['write']);
  });

  it('a failure that states no kind leaves the session WRITING', () => {
    const s = writeBesideRead();
    s.send(byName('tool.failed', T + 12));
    expect(s.state).toBe('WRITING');
  });

  it('a failure without any kind field states none either: the write stays in flight', () => {
    const s = writeBesideRead();
    s.sendRaw({ type: 'tool.failed', tool: 'pulse_docker', at: T + 12 });
    expect(kindsInFlight(s)).toEqual(['write']);
  });

  it('a failure of a kind outside the vocabulary states none either', () => {
    const s = writeBesideRead();
    s.sendRaw({ type: 'tool.failed', tool: 'pulse_docker', kind: 'mystery', at: T + 12 });
    expect(kindsInFlight(s)).toEqual(['write']);
  });

  it('a failure that states the write kind settles the write: back to READING', () => {
    const s = writeBesideRead();
    s.send(failed('pulse_docker', 'write', T + 12));
    expect(s.state).toBe('READING');
  });

  it('a failure that states the write kind leaves the read in flight', () => {
    const s = writeBesideRead();
    s.send(failed('pulse_docker', 'write', T + 12));
    expect(kindsInFlight(s)).toEqual(['read']);
  });

  it('a kindUnstated flag makes even a write kind state nothing', () => {
    const s = writeBesideRead();
    s.send({ ...failed('pulse_docker', 'write', T + 12), kindUnstated: true } as SafetyEvent);
    expect(s.state).toBe('WRITING');
  });

  it('a success that states no kind is the write’s: VERIFYING', () => {
    const s = writeBesideRead();
    s.send(byName('tool.succeeded', T + 12));
    expect(s.state).toBe('VERIFYING');
  });

  it('a success taken as the write’s keeps the write in flight and ends the read', () => {
    const s = writeBesideRead();
    s.send(byName('tool.succeeded', T + 12));
    expect(kindsInFlight(s)).toEqual(['write']);
  });

  it('while that write stays in flight, the final answer is refused even after a verifying read', () => {
    const s = writeBesideRead();
    s.send(byName('tool.succeeded', T + 12));
    run(s, 'pulse_metrics', 'read', T + 13, 'later');
    s.send({ type: 'answer.requested', at: T + 14 });
    expect(s.lastDecision).toMatchObject({ allowed: false, rule: 'write-in-flight' });
  });

  it('while that write stays in flight, verification cannot be completed', () => {
    const s = writeBesideRead();
    s.send(byName('tool.succeeded', T + 12));
    run(s, 'pulse_metrics', 'read', T + 13, 'later');
    s.send({ type: 'verification.completed', at: T + 14 });
    expect(s.state).toBe('VERIFYING');
  });

  it('the last record of the pair ends the write kept in flight; a second success needs verification again', () => {
    const s = writeBesideRead();
    s.send(byName('tool.succeeded', T + 12));
    run(s, 'pulse_metrics', 'read', T + 13, 'later');
    s.send(byName('tool.succeeded', T + 14));
    expect(s.context).toMatchObject({ inFlight: [], readAfterWrite: false, writeSeq: 2 });
  });

  it('a success that states the read kind settles the read: still WRITING', () => {
    const s = writeBesideRead();
    s.send(succeeded('pulse_docker', 'read', T + 12));
    expect(s.state).toBe('WRITING');
  });

  it('a failure that states a kind no candidate has falls back to the worst case: the read', () => {
    const s = writeBesideRead();
    s.send(failed('pulse_docker', 'user_input', T + 12));
    expect(kindsInFlight(s)).toEqual(['write']);
  });

  it('a failure that states a read kind never settles a write alone in flight', () => {
    const s = inState('WRITING');
    s.send(failed('pulse_control', 'read', T + 12, 'write-1'));
    expect(s.state).toBe('WRITING');
  });

  it('a failure that states no kind still settles a write alone in flight', () => {
    const s = inState('WRITING');
    s.send({ ...failed('pulse_control', 'write', T + 12, 'write-1'), kindUnstated: true } as SafetyEvent);
    expect(s.state).toBe('READING');
  });

  it('in RESOLVING, a success that states no kind among a read and a user input establishes no target', () => {
    const s = start();
    s.send(requested('t', 'read', T));
    s.send(requested('t', 'user_input', T + 1));
    s.send({ ...succeeded('t', 'read', T + 2), kindUnstated: true } as SafetyEvent);
    expect(s.state).toBe('RESOLVING');
  });

  it('a success among a read admitted before the write succeeded and one after is booked to the earlier: no verification', () => {
    const s = inState('WRITING');
    s.send(requested('pulse_metrics', 'read', T + 10));
    s.send(succeeded('pulse_control', 'write', T + 11, 'write-1'));
    s.send(requested('pulse_metrics', 'read', T + 12));
    s.send(succeeded('pulse_metrics', 'read', T + 13));
    expect(s.context.readAfterWrite).toBe(false);
  });

  it('the second success of that pair verifies the write: both reads succeeded', () => {
    const s = inState('WRITING');
    s.send(requested('pulse_metrics', 'read', T + 10));
    s.send(succeeded('pulse_control', 'write', T + 11, 'write-1'));
    s.send(requested('pulse_metrics', 'read', T + 12));
    s.send(succeeded('pulse_metrics', 'read', T + 13));
    s.send(succeeded('pulse_metrics', 'read', T + 14));
    expect(s.context.readAfterWrite).toBe(true);
  });

  it('a failure among a verifying read and a user input of one tool is booked to the read', () => {
    const s = inState('VERIFYING');
    s.send(requested('t', 'read', T + 10));
    s.send(requested('t', 'user_input', T + 11));
    s.send({ ...failed('t', 'read', T + 12), kindUnstated: true } as SafetyEvent);
    s.send({ ...succeeded('t', 'read', T + 13), kindUnstated: true } as SafetyEvent);
    expect(s.context.readAfterWrite).toBe(false);
  });
});

describe('a call id checked again while in flight (raw actor; the adapter refuses it)', () => {
  it('a read checked under a write’s id is admitted, never blocked', () => {
    const s = inState('WRITING');
    s.send(requested('pulse_metrics', 'read', T + 10, 'write-1'));
    expect(s.lastDecision.allowed).toBe(true);
  });

  it('keeps the write first under the id and the new call beside it', () => {
    const s = inState('WRITING');
    s.send(requested('pulse_metrics', 'read', T + 10, 'write-1'));
    expect(s.context.inFlight.map((c) => [c.key, c.kind])).toEqual([
      ['id:write-1', 'write'],
      ['id:write-1', 'read'],
    ]);
  });

  it('a failure under that id stating the read kind settles the read: still WRITING', () => {
    const s = inState('WRITING');
    s.send(requested('pulse_metrics', 'read', T + 10, 'write-1'));
    s.send(failed('pulse_metrics', 'read', T + 11, 'write-1'));
    expect(s.state).toBe('WRITING');
  });

  it('after that, a second failure stating the read kind cannot settle the write', () => {
    const s = inState('WRITING');
    s.send(requested('pulse_metrics', 'read', T + 10, 'write-1'));
    s.send(failed('pulse_metrics', 'read', T + 11, 'write-1'));
    s.send(failed('pulse_metrics', 'read', T + 12, 'write-1'));
    expect(s.state).toBe('WRITING');
  });

  it('a failure under that id stating no kind settles the read, not the write', () => {
    const s = inState('WRITING');
    s.send(requested('pulse_metrics', 'read', T + 10, 'write-1'));
    s.send({ type: 'tool.failed', tool: 'pulse_metrics', kind: 'read', kindUnstated: true, at: T + 11, callId: 'write-1' });
    expect(s.context.inFlight.map((c) => c.kind)).toEqual(['write']);
  });

  it('a failure under that id stating the write kind settles the write: READING', () => {
    const s = inState('WRITING');
    s.send(requested('pulse_metrics', 'read', T + 10, 'write-1'));
    s.send(failed('pulse_control', 'write', T + 11, 'write-1'));
    expect(s.state).toBe('READING');
  });

  it('a write checked under an id a read holds goes first under the id', () => {
    const s = inState('READING');
    s.send(requested('pulse_metrics', 'read', T + 10, 'x'));
    s.send(requested('pulse_control', 'write', T + 11, 'x'));
    expect(s.context.inFlight.map((c) => c.kind)).toEqual(['write', 'read']);
  });

  it('of two reads under one id, the one admitted before the write succeeded is kept', () => {
    const s = inState('WRITING');
    s.send(requested('pulse_metrics', 'read', T + 10, 'r'));
    s.send(succeeded('pulse_control', 'write', T + 11, 'write-1'));
    s.send(requested('pulse_metrics', 'read', T + 12, 'r'));
    expect(s.context.inFlight).toEqual([expect.objectContaining({ key: 'id:r', admittedAt: T + 10, verifiesWrite: null })]);
  });

  it('a user input checked under a verifying read’s id replaces it: a success under the id verifies nothing', () => {
    const s = inState('VERIFYING');
    s.send(requested('pulse_metrics', 'read', T + 10, 'r'));
    s.send(requested('pulse_question', 'user_input', T + 11, 'r'));
    s.send(succeeded('pulse_metrics', 'read', T + 12, 'r'));
    expect(s.context.readAfterWrite).toBe(false);
  });
});

describe('neutral behaves like user_input (DESIGN §3.6)', () => {
  it('a neutral call in RESOLVING does not advance the state', () => {
    const s = start();
    run(s, 'calculate', 'neutral', T, 'n');
    expect(s.state).toBe('RESOLVING');
  });

  it('a neutral call in VERIFYING is not verification', () => {
    const s = inState('VERIFYING');
    run(s, 'think', 'neutral', T + 10, 'n');
    expect(s.context.readAfterWrite).toBe(false);
  });

  it('a session with neutral calls ends exactly like the same session with user_input calls', () => {
    function session(kind: ToolKind) {
      const s = start();
      run(s, 'calc', kind, T, 'a');
      s.send(requested('pulse_control', 'write', T + 1, 'w0'));
      toReading(s, T + 2);
      run(s, 'calc', kind, T + 3, 'b');
      run(s, 'pulse_control', 'write', T + 4, 'w1');
      run(s, 'calc', kind, T + 5, 'c');
      s.send({ type: 'answer.requested', at: T + 6 });
      s.send(requested('calc', kind, T + 7, 'd'));
      s.send(failed('calc', kind, T + 8, 'd'));
      return { snapshot: s.actor.getPersistedSnapshot(), decisions: s.decisions.map((d) => ({ ...d, kind: null })) };
    }
    expect(session('neutral')).toEqual(session('user_input'));
  });
});

describe('the machine reads no clock (DESIGN §3.7)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  function replay(systemTime: number) {
    vi.useFakeTimers({ now: systemTime });
    const s = start();
    s.send(requested('pulse_control', 'write', T, 'w0'));
    toVerifying(s, T + 1);
    s.send(requested('pulse_control', 'write', T + 10, 'w1'));
    s.send({ type: 'answer.requested', at: T + 11 });
    run(s, 'pulse_metrics', 'read', T + 12, 'r');
    s.send({ type: 'clock.ticked', at: T + 13 });
    s.send({ type: 'verification.completed', at: T + 14 });
    run(s, 'pulse_control', 'write', T + 15, 'w2');
    const result = { snapshot: s.actor.getPersistedSnapshot(), decisions: s.decisions, recoveries: s.recoveries };
    vi.useRealTimers();
    return result;
  }

  it('the same events give the same snapshots and emitted events, whatever the wall clock says', () => {
    expect(replay(0)).toEqual(replay(T + 5 * RECOVERY_TTL_MS));
  });

  it('times in the context come from the events', () => {
    const s = start();
    toVerifying(s, 7);
    expect(s.context).toMatchObject({ lastReadAt: 7, lastWriteAt: 9 });
  });

  it('expiry is decided by event time, not wall time', () => {
    const s = start();
    s.send(requested('pulse_control', 'write', 0, 'w'));
    s.send({ type: 'clock.ticked', at: RECOVERY_TTL_MS });
    expect(Object.keys(s.context.pendingRecoveries)).toEqual(['FSM_BLOCKED:pulse_control']);
  });
});

describe('strict failed writes (DESIGN §3.8)', () => {
  it('by default a failed write never leads to VERIFYING', () => {
    const s = start();
    toReading(s);
    s.send(requested('pulse_control', 'write', T + 10, 'w'));
    s.send(failed('pulse_control', 'write', T + 11, 'w'));
    expect(s.state).toBe('READING');
  });

  it('strictly, a failed write moves WRITING to VERIFYING', () => {
    const s = inState('WRITING', { strictFailedWrites: true });
    s.send(failed('pulse_control', 'write', T + 10, 'write-1'));
    expect(s.state).toBe('VERIFYING');
  });

  it('strictly, a failed write is recorded as a write', () => {
    const s = inState('WRITING', { strictFailedWrites: true });
    s.send(failed('pulse_control', 'write', T + 10, 'write-1'));
    expect(s.context).toMatchObject({
      wroteThisEpisode: true,
      readAfterWrite: false,
      lastWriteTool: 'pulse_control',
      lastWriteAt: T + 10,
      inFlight: [],
    });
  });

  it('strictly, a failed write refuses the final answer until a read ran after it', () => {
    const s = inState('WRITING', { strictFailedWrites: true });
    s.send(failed('pulse_control', 'write', T + 10, 'write-1'));
    s.send({ type: 'answer.requested', at: T + 11 });
    expect(s.lastDecision.allowed).toBe(false);
  });

  it('strictly, a failed write recorded without a check in READING moves to VERIFYING', () => {
    const s = inState('READING', { strictFailedWrites: true });
    s.send(failed('pulse_control', 'write', T + 10));
    expect(s.state).toBe('VERIFYING');
  });

  it('strictly, a failed write in VERIFYING clears read-after-write', () => {
    const s = start({ strictFailedWrites: true });
    toVerified(s);
    s.send(failed('pulse_control_guest', 'write', T + 10));
    expect(s.context.readAfterWrite).toBe(false);
  });

  it('strictly, a failed read still causes no transition', () => {
    const s = start({ strictFailedWrites: true });
    s.send(requested('pulse_query', 'resolve', T, 'q'));
    s.send(failed('pulse_query', 'resolve', T + 1, 'q'));
    expect(s.state).toBe('RESOLVING');
  });

  it('strictly, a failed write is no recovery of its pending block', () => {
    const s = start({ strictFailedWrites: true });
    s.send(requested('pulse_control', 'write', T, 'blocked'));
    s.send(failed('pulse_control', 'write', T + 1));
    expect(s.recoveries).toEqual([]);
  });
});

describe('malformed events', () => {
  const malformed: [string, unknown][] = [
    ['a tool.requested with no fields', { type: 'tool.requested' }],
    ['a tool.requested with null fields', { type: 'tool.requested', tool: null, kind: null, at: null, callId: null }],
    ['a tool.requested with wrongly typed fields', { type: 'tool.requested', tool: 42, kind: ['read'], at: '1', callId: {} }],
    ['a tool.requested with a non-finite time', { type: 'tool.requested', tool: 'x', kind: 'read', at: Number.NaN }],
    ['a tool.succeeded with no fields', { type: 'tool.succeeded' }],
    ['a tool.succeeded with null fields', { type: 'tool.succeeded', tool: null, kind: null, at: null, callId: null }],
    ['a tool.failed with wrongly typed fields', { type: 'tool.failed', tool: {}, kind: 7, at: Infinity, callId: 3 }],
    ['an answer.requested with no time', { type: 'answer.requested' }],
    ['a clock.ticked with a string time', { type: 'clock.ticked', at: 'soon' }],
    ['a verification.completed with null time', { type: 'verification.completed', at: null }],
    ['a session.reset with an object time', { type: 'session.reset', at: {} }],
    ['a session.resetKeepingProgress with no time', { type: 'session.resetKeepingProgress' }],
    [
      'a tool.requested with a __proto__ key',
      JSON.parse('{"type":"tool.requested","__proto__":{"kind":"read","callId":"x"},"tool":"t","at":1}'),
    ],
    [
      'a tool.succeeded with a __proto__ key',
      JSON.parse('{"type":"tool.succeeded","__proto__":{"kind":"read"},"tool":"__proto__","at":1}'),
    ],
    [
      'a tool.requested whose tool and id are prototype names',
      { type: 'tool.requested', tool: 'constructor', kind: 'write', at: 1, callId: '__proto__' },
    ],
    [
      'a tool.succeeded whose kind getter throws',
      {
        type: 'tool.succeeded',
        tool: 'q',
        at: 1,
        get kind(): string {
          throw new Error('boom');
        },
      },
    ],
    ['an unknown event type', { type: 'tool.exploded', tool: 'x' }],
    ['an event type naming a prototype property', { type: 'constructor' }],
  ];

  it.each(malformed)('%s never puts the actor into an error status', (_, event) => {
    for (const state of ALL_STATES) {
      const s = inState(state);
      s.sendRaw(event);
      s.send(requested('pulse_query', 'resolve', T + 100, 'after'));
      expect(s.actor.getSnapshot().status).toBe('active');
      expect(s.lastDecision.callId).toBe('after');
    }
  });

  it('a tool.requested without fields is decided as a write and blocked in RESOLVING', () => {
    const s = start();
    s.sendRaw({ type: 'tool.requested' });
    expect(s.lastDecision).toMatchObject({ allowed: false, kind: 'write', tool: '', callId: null, at: 0 });
  });

  it.each(['delete', 'READ', '', 'toString', '__proto__'])('an unknown kind %j fails closed to write', (kind) => {
    const s = inState('READING');
    s.sendRaw({ type: 'tool.requested', tool: 'x', kind, at: T + 10, callId: 'c' });
    expect(s.lastDecision).toMatchObject({ allowed: true, kind: 'write' });
    expect(s.state).toBe('WRITING');
  });

  it('an unknown kind is blocked in RESOLVING', () => {
    const s = start();
    s.sendRaw({ type: 'tool.requested', tool: 'x', kind: 'mystery', at: T });
    expect(s.lastDecision.allowed).toBe(false);
  });

  it('an outcome of unknown kind recorded without a check counts as a write', () => {
    const s = start();
    s.sendRaw({ type: 'tool.succeeded', tool: 'x', kind: 'mystery', at: T });
    expect(s.state).toBe('VERIFYING');
  });

  it('a kind inherited through __proto__ is not trusted', () => {
    const s = start();
    s.sendRaw(JSON.parse('{"type":"tool.requested","__proto__":{"kind":"read"},"tool":"t","at":1}'));
    expect(s.lastDecision).toMatchObject({ allowed: false, kind: 'write' });
  });

  it('a pending recovery of a tool named like a prototype property is kept as its own entry', () => {
    const s = start();
    s.send(requested('__proto__', 'write', T, 'a'));
    s.send(requested('constructor', 'write', T, 'b'));
    expect(Object.keys(s.context.pendingRecoveries).sort()).toEqual(['FSM_BLOCKED:__proto__', 'FSM_BLOCKED:constructor']);
  });

  it('a success of a tool named like a prototype property reports no recovery it did not have', () => {
    const s = start();
    s.send(succeeded('constructor', 'read', T));
    s.send(succeeded('hasOwnProperty', 'read', T));
    expect(s.recoveries).toEqual([]);
  });

  it('an unknown event type changes nothing', () => {
    const s = inState('VERIFYING');
    const before = s.actor.getPersistedSnapshot();
    s.sendRaw({ type: 'tool.exploded', tool: 'x', kind: 'write', at: T + 10 });
    expect(s.actor.getPersistedSnapshot()).toEqual(before);
  });

  it('a non-finite time is recorded as 0, keeping the context plain JSON', () => {
    const s = start();
    s.sendRaw({ type: 'tool.succeeded', tool: 'pulse_query', kind: 'resolve', at: Number.NaN });
    expect(s.context.lastReadAt).toBe(0);
  });
});

describe('the chart as designers read it', () => {
  it('every state and every transition carries a description', () => {
    const missing: string[] = [];
    for (const node of Object.values(safetyMachine.root.states)) {
      if (!node.description?.trim()) missing.push(node.id);
      for (const [eventType, transitions] of node.transitions) {
        transitions.forEach((t, i) => {
          if (!t.description?.trim()) missing.push(`${node.id} ${eventType}#${i}`);
        });
      }
      node.always?.forEach((t, i) => {
        if (!t.description?.trim()) missing.push(`${node.id} always#${i}`);
      });
    }
    for (const [eventType, transitions] of safetyMachine.root.transitions) {
      transitions.forEach((t, i) => {
        if (!t.description?.trim()) missing.push(`(root) ${eventType}#${i}`);
      });
    }
    expect(missing).toEqual([]);
  });
});
