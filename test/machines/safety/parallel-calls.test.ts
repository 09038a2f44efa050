/**
 * The safety statechart driven directly as an actor: wRITING as a real state, and parallel calls that cannot sneak past the gate.
 *
 * Spec: ASSISTANT_SAFETY.md "States", "The invariants", "Blocked calls and
 * recovery", "Resetting"; DESIGN.md §1 and §3.
 */
import { describe, expect, it } from 'vitest';
import {
  ANSWER_BLOCK_REASONS,
  ErrCodeFSMBlocked,
  MAX_IN_FLIGHT,
  MAX_PENDING_RECOVERIES,
  TOOL_BLOCK_REASONS,
} from '../../../machines/safety.policy.js';
import type { SafetyEvent } from '../../../machines/safety.types.js';
import { T, failed, inState, requested, run, start, succeeded, type Session } from '../../support/safety-session.js';

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
