/**
 * The safety statechart's target-aware rules, driven directly as an actor:
 * validated targets, target-aware verification, destructive writes with
 * confirmation, self-verifying writes, and the targets of outcomes that
 * could belong to several calls.
 *
 * Spec: DESIGN.md §1 (self-verification, ResetKeepProgress), §5.3, §5.4,
 * §5.6, §5.8.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ANSWER_BLOCK_REASONS,
  MAX_ESTABLISHED_TARGETS,
  MAX_TARGETS_PER_EVENT,
  SELF_VERIFY_TOOL,
  TOOL_BLOCK_REASONS,
  reasonWithTarget,
} from '../../machines/safety.policy.js';
import type { SafetyEvent, SafetyInput, ToolKind } from '../../machines/safety.types.js';
import { parsePersistedSnapshot, toPersistedSnapshot } from '../../src/guard/snapshot.js';
import { start, type Session } from '../support/safety-session.js';

const T = 1_700_000_000_000;
const DIR = '/srv/app';
const FILE = '/srv/app/app.conf';
const OTHER = '/srv/other';

interface Extra {
  callId?: string;
  targets?: string[];
  destructive?: boolean;
  selfVerified?: boolean;
  kindUnstated?: boolean;
}

const event = (type: 'tool.requested' | 'tool.succeeded' | 'tool.failed', tool: string, kind: ToolKind, extra: Extra = {}): SafetyEvent =>
  ({ type, tool, kind, at: T, ...extra }) as SafetyEvent;
const requested = (tool: string, kind: ToolKind, extra?: Extra) => event('tool.requested', tool, kind, extra);
const succeeded = (tool: string, kind: ToolKind, extra?: Extra) => event('tool.succeeded', tool, kind, extra);
const failed = (tool: string, kind: ToolKind, extra?: Extra) => event('tool.failed', tool, kind, extra);

let ids = 0;
/** Check a call and record its success under a fresh id. */
function run(s: Session, tool: string, kind: ToolKind, extra: Extra = {}): void {
  const callId = `c${(ids += 1)}`;
  s.send(requested(tool, kind, { ...extra, callId }));
  s.send(succeeded(tool, kind, { ...extra, callId }));
}
const read = (s: Session, targets?: string[]) => run(s, 'read_file', 'read', targets === undefined ? {} : { targets });
const write = (s: Session, targets?: string[], extra: Extra = {}) =>
  run(s, 'write_file', 'write', { ...extra, ...(targets === undefined ? {} : { targets }) });
const checkWrite = (s: Session, targets?: string[], extra: Extra = {}) =>
  s.send(requested('write_file', 'write', { callId: `c${(ids += 1)}`, ...extra, ...(targets === undefined ? {} : { targets }) }));
const answer = (s: Session) => s.send({ type: 'answer.requested', at: T });
const complete = (s: Session) => s.send({ type: 'verification.completed', at: T });

/** READING with `targets` established by one read. */
function readingWith(targets: string[], input?: SafetyInput): Session {
  const s = start(input);
  read(s, targets);
  return s;
}

describe('validated target, target-aware (DESIGN §5.3)', () => {
  it('a write to a target nothing touched is refused: unknown-target', () => {
    const s = readingWith([OTHER]);
    checkWrite(s, [FILE]);
    expect(s.lastDecision).toMatchObject({ allowed: false, state: 'READING', rule: 'unknown-target', target: FILE });
  });

  it('the refusal names the target in its reason', () => {
    const s = readingWith([OTHER]);
    checkWrite(s, [FILE]);
    expect(s.lastDecision.reason).toBe(reasonWithTarget(TOOL_BLOCK_REASONS['unknown-target'], FILE));
  });

  it('the refused write stays READING, opens a pending recovery and is not in flight', () => {
    const s = readingWith([OTHER]);
    checkWrite(s, [FILE]);
    expect(s.state).toBe('READING');
    expect(Object.keys(s.context.pendingRecoveries)).toEqual(['FSM_BLOCKED:write_file']);
    expect(s.context.inFlight).toEqual([]);
  });

  it('a write to an established target is admitted', () => {
    const s = readingWith([FILE]);
    checkWrite(s, [FILE]);
    expect(s.lastDecision.allowed).toBe(true);
    expect(s.state).toBe('WRITING');
  });

  it('a write under an established directory is admitted (a read of a directory establishes everything under it)', () => {
    const s = readingWith([DIR]);
    checkWrite(s, [FILE]);
    expect(s.lastDecision.allowed).toBe(true);
  });

  it('a write to the directory above an established file is refused', () => {
    const s = readingWith([FILE]);
    checkWrite(s, [DIR]);
    expect(s.lastDecision.rule).toBe('unknown-target');
  });

  it('names the first target that is not established', () => {
    const s = readingWith([DIR]);
    checkWrite(s, [FILE, OTHER, '/x']);
    expect(s.lastDecision.target).toBe(OTHER);
  });

  it('compares targets in canonical form', () => {
    const s = readingWith(['/srv/./app/']);
    checkWrite(s, ['/srv/x/../app//app.conf']);
    expect(s.lastDecision.allowed).toBe(true);
  });

  it(`a write naming more than MAX_TARGETS_PER_EVENT (${MAX_TARGETS_PER_EVENT}) targets is refused, naming none`, () => {
    const s = readingWith([DIR]);
    checkWrite(
      s,
      Array.from({ length: MAX_TARGETS_PER_EVENT + 1 }, (_, i) => `${DIR}/f${i}`),
    );
    expect(s.lastDecision).toMatchObject({ allowed: false, rule: 'unknown-target' });
    expect(s.lastDecision).not.toHaveProperty('target');
    expect(s.lastDecision.reason).toBe(TOOL_BLOCK_REASONS['unknown-target']);
  });

  it('a write without known targets follows the spec: any earlier read will do', () => {
    const s = readingWith([OTHER]);
    checkWrite(s);
    expect(s.lastDecision.allowed).toBe(true);
  });

  it('a read naming no target still establishes the session (READING), but no target', () => {
    const s = readingWith([]);
    checkWrite(s, [FILE]);
    expect(s.lastDecision.rule).toBe('unknown-target');
  });

  it('in RESOLVING a write with targets is refused for want of any target (no-target)', () => {
    const s = start();
    checkWrite(s, [FILE]);
    expect(s.lastDecision.rule).toBe('no-target');
    expect(s.lastDecision).not.toHaveProperty('target');
  });

  it('an allowed write carries no target field', () => {
    const s = readingWith([FILE]);
    checkWrite(s, [FILE]);
    expect(s.lastDecision).not.toHaveProperty('target');
  });

  it('a read is never refused, whatever its targets', () => {
    const s = readingWith([OTHER]);
    s.send(requested('read_file', 'read', { callId: 'r', targets: ['/nowhere'] }));
    expect(s.lastDecision.allowed).toBe(true);
  });
});

describe('what establishes a target', () => {
  it('a successful read establishes its targets, canonical', () => {
    expect(readingWith(['/srv/./app/']).context.establishedTargets).toEqual([DIR]);
  });

  it('a successful resolve establishes its targets', () => {
    const s = start();
    run(s, 'lookup', 'resolve', { targets: ['reservation_id=A'] });
    expect(s.context.establishedTargets).toEqual(['reservation_id=A']);
  });

  it('a failed read establishes nothing', () => {
    const s = readingWith([OTHER]);
    s.send(requested('read_file', 'read', { callId: 'r', targets: [FILE] }));
    s.send(failed('read_file', 'read', { callId: 'r' }));
    expect(s.context.establishedTargets).toEqual([OTHER]);
  });

  it('a successful write establishes nothing', () => {
    const s = readingWith([DIR]);
    write(s, [FILE]);
    expect(s.context.establishedTargets).toEqual([DIR]);
  });

  it('user input establishes nothing', () => {
    const s = start();
    run(s, 'ask', 'user_input', { targets: [FILE] });
    expect(s.context.establishedTargets).toEqual([]);
  });

  it('an outcome applies the targets the call was admitted with, not those it states', () => {
    const s = readingWith([OTHER]);
    s.send(requested('read_file', 'read', { callId: 'r', targets: [FILE] }));
    s.send(succeeded('read_file', 'read', { callId: 'r', targets: ['/elsewhere'] }));
    expect(s.context.establishedTargets).toEqual([OTHER, FILE]);
  });

  it('a read recorded without a check establishes the targets its record names', () => {
    const s = start();
    s.send(succeeded('read_file', 'read', { targets: [FILE] }));
    expect(s.context.establishedTargets).toEqual([FILE]);
  });

  it('a target read again becomes the most recent', () => {
    const s = start();
    read(s, [DIR]);
    read(s, [OTHER]);
    read(s, [DIR]);
    expect(s.context.establishedTargets).toEqual([OTHER, DIR]);
  });

  it(`past MAX_ESTABLISHED_TARGETS (${MAX_ESTABLISHED_TARGETS}) the least recently established is dropped, and a write on it refused`, () => {
    const s = start();
    for (let i = 0; i <= MAX_ESTABLISHED_TARGETS; i += 1) read(s, [`/t/${i}`]);
    expect(s.context.establishedTargets).toHaveLength(MAX_ESTABLISHED_TARGETS);
    checkWrite(s, ['/t/0']);
    expect(s.lastDecision.rule).toBe('unknown-target');
    checkWrite(s, ['/t/1']);
    expect(s.lastDecision.allowed).toBe(true);
  });

  it('Reset clears the established targets', () => {
    const s = readingWith([FILE]);
    s.send({ type: 'session.reset', at: T });
    expect(s.context.establishedTargets).toEqual([]);
  });

  it('ResetKeepProgress keeps the established targets: a write on one is admitted', () => {
    const s = readingWith([DIR]);
    write(s, [FILE]);
    s.send({ type: 'session.resetKeepingProgress', at: T });
    expect(s.context.establishedTargets).toEqual([DIR]);
    checkWrite(s, [FILE]);
    expect(s.lastDecision.allowed).toBe(true);
  });
});

describe('verification, target-aware (DESIGN §5.4)', () => {
  it('a read of the written target verifies the write', () => {
    const s = readingWith([FILE]);
    write(s, [FILE]);
    read(s, [FILE]);
    expect(s.context.readAfterWrite).toBe(true);
  });

  it('a read of another target does not verify it', () => {
    const s = readingWith([FILE]);
    write(s, [FILE]);
    read(s, [OTHER]);
    expect(s.context.readAfterWrite).toBe(false);
    expect(s.state).toBe('VERIFYING');
  });

  it('a read of another target still establishes it', () => {
    const s = readingWith([FILE]);
    write(s, [FILE]);
    read(s, [OTHER]);
    expect(s.context.establishedTargets).toEqual([FILE, OTHER]);
  });

  it('a read without known targets does not verify a write with targets', () => {
    const s = readingWith([FILE]);
    write(s, [FILE]);
    read(s);
    expect(s.context.readAfterWrite).toBe(false);
  });

  it('a read of the directory verifies a write of a file under it', () => {
    const s = readingWith([DIR]);
    write(s, [FILE]);
    read(s, [DIR]);
    expect(s.context.readAfterWrite).toBe(true);
  });

  it('a read of a file under the written directory verifies it', () => {
    const s = readingWith([DIR]);
    write(s, [DIR]);
    read(s, [FILE]);
    expect(s.context.readAfterWrite).toBe(true);
  });

  it('a read touching one of several written targets verifies the write', () => {
    const s = readingWith([DIR, OTHER]);
    write(s, [OTHER, FILE]);
    read(s, [FILE]);
    expect(s.context.readAfterWrite).toBe(true);
  });

  it('a write without known targets is verified by any read', () => {
    const s = readingWith([OTHER]);
    write(s);
    read(s, [OTHER]);
    expect(s.context.readAfterWrite).toBe(true);
  });

  it('a read on target admitted before the write succeeded still does not verify it', () => {
    const s = readingWith([FILE]);
    s.send(requested('write_file', 'write', { callId: 'w', targets: [FILE] }));
    s.send(requested('read_file', 'read', { callId: 'r', targets: [FILE] }));
    s.send(succeeded('write_file', 'write', { callId: 'w' }));
    s.send(succeeded('read_file', 'read', { callId: 'r' }));
    expect(s.context.readAfterWrite).toBe(false);
  });

  it('the write’s targets are the ones it was admitted with', () => {
    const s = readingWith([DIR]);
    s.send(requested('write_file', 'write', { callId: 'w', targets: [FILE] }));
    s.send(succeeded('write_file', 'write', { callId: 'w', targets: [OTHER] }));
    expect(s.context.writeTargets).toEqual([FILE]);
  });

  it('a write recorded without a check keeps the targets its record names', () => {
    const s = start();
    s.send(succeeded('write_file', 'write', { targets: [FILE] }));
    expect(s.context.writeTargets).toEqual([FILE]);
  });

  it('a write refused in VERIFYING names the target still without evidence', () => {
    const s = readingWith([DIR]);
    write(s, [FILE]);
    checkWrite(s, [FILE]);
    expect(s.lastDecision).toMatchObject({ rule: 'unverified-write', target: FILE });
    expect(s.lastDecision.reason).toBe(reasonWithTarget(TOOL_BLOCK_REASONS['unverified-write'], FILE));
  });

  it('the final answer refused names the target still without evidence', () => {
    const s = readingWith([DIR]);
    write(s, [FILE]);
    read(s, [OTHER]);
    answer(s);
    expect(s.lastDecision).toMatchObject({ subject: 'answer', allowed: false, rule: 'unverified-write', target: FILE });
    expect(s.lastDecision.reason).toBe(reasonWithTarget(ANSWER_BLOCK_REASONS['unverified-write'], FILE));
  });

  it('an unverified write without targets names none', () => {
    const s = readingWith([DIR]);
    write(s);
    answer(s);
    expect(s.lastDecision).not.toHaveProperty('target');
    expect(s.lastDecision.reason).toBe(ANSWER_BLOCK_REASONS['unverified-write']);
  });

  it('read A, write A, read B: the final answer is refused; read A: allowed', () => {
    const a = 'reservation_id=A';
    const b = 'reservation_id=B';
    const s = readingWith([a]);
    write(s, [a]);
    read(s, [b]);
    answer(s);
    expect(s.lastDecision.allowed).toBe(false);
    read(s, [a]);
    answer(s);
    expect(s.lastDecision.allowed).toBe(true);
  });

  it('in a session that never checks, a read recorded on target verifies the write', () => {
    const s = start();
    s.send(succeeded('write_file', 'write', { targets: [FILE] }));
    s.send(succeeded('read_file', 'read', { targets: [DIR] }));
    expect(s.context.readAfterWrite).toBe(true);
  });

  it('in a session that never checks, a read recorded off target does not', () => {
    const s = start();
    s.send(succeeded('write_file', 'write', { targets: [FILE] }));
    s.send(succeeded('read_file', 'read', { targets: [OTHER] }));
    expect(s.context.readAfterWrite).toBe(false);
  });

  it('in a session that checks its calls, an unchecked read on target still does not verify', () => {
    const s = readingWith([FILE]);
    write(s, [FILE]);
    s.send(succeeded('read_file', 'read', { targets: [FILE] }));
    expect(s.context.readAfterWrite).toBe(false);
  });

  it('an off-target read leaves the blocked-write counter as it was', () => {
    const s = readingWith([FILE]);
    write(s, [FILE]);
    checkWrite(s, [FILE]);
    read(s, [OTHER]);
    expect(s.context.consecutiveVerifyBlocks).toBe(1);
  });
});

describe('destructive writes (DESIGN §5.6)', () => {
  it('without confirmDestructive a destructive write is admitted as any write', () => {
    const s = readingWith([FILE]);
    checkWrite(s, [FILE], { destructive: true });
    expect(s.lastDecision.allowed).toBe(true);
  });

  it('with confirmDestructive a destructive write without confirmation is refused: needs-confirmation', () => {
    const s = readingWith([FILE], { confirmDestructive: true });
    checkWrite(s, [FILE], { destructive: true });
    expect(s.lastDecision).toMatchObject({
      allowed: false,
      rule: 'needs-confirmation',
      reason: TOOL_BLOCK_REASONS['needs-confirmation'],
    });
    expect(s.lastDecision).not.toHaveProperty('target');
  });

  it('with confirmDestructive a write that is not destructive needs no confirmation', () => {
    const s = readingWith([FILE], { confirmDestructive: true });
    checkWrite(s, [FILE], { destructive: false });
    expect(s.lastDecision.allowed).toBe(true);
  });

  it('a successful user input confirms it', () => {
    const s = readingWith([FILE], { confirmDestructive: true });
    run(s, 'ask_user', 'user_input');
    checkWrite(s, [FILE], { destructive: true });
    expect(s.lastDecision.allowed).toBe(true);
  });

  it('a failed user input does not', () => {
    const s = readingWith([FILE], { confirmDestructive: true });
    s.send(requested('ask_user', 'user_input', { callId: 'q' }));
    s.send(failed('ask_user', 'user_input', { callId: 'q' }));
    checkWrite(s, [FILE], { destructive: true });
    expect(s.lastDecision.rule).toBe('needs-confirmation');
  });

  it('neutral computation does not', () => {
    const s = readingWith([FILE], { confirmDestructive: true });
    run(s, 'calculate', 'neutral');
    checkWrite(s, [FILE], { destructive: true });
    expect(s.lastDecision.rule).toBe('needs-confirmation');
  });

  it('a read does not', () => {
    const s = readingWith([FILE], { confirmDestructive: true });
    read(s, [FILE]);
    checkWrite(s, [FILE], { destructive: true });
    expect(s.lastDecision.rule).toBe('needs-confirmation');
  });

  it('a recorded write uses the confirmation up', () => {
    const s = readingWith([FILE], { confirmDestructive: true });
    run(s, 'ask_user', 'user_input');
    write(s, [FILE], { destructive: true });
    read(s, [FILE]);
    complete(s);
    checkWrite(s, [FILE], { destructive: true });
    expect(s.lastDecision.rule).toBe('needs-confirmation');
  });

  it('a target not established is refused first, as unknown-target', () => {
    const s = readingWith([OTHER], { confirmDestructive: true });
    checkWrite(s, [FILE], { destructive: true });
    expect(s.lastDecision.rule).toBe('unknown-target');
  });

  it('user input is tracked as a confirmation whatever confirmDestructive says (issue 24), and confirms nothing destructive without it', () => {
    const s = readingWith([FILE]);
    run(s, 'ask_user', 'user_input');
    expect(s.context.confirmedSinceWrite).toBe(true);
    write(s, [FILE], { destructive: true });
    expect(s.context.confirmedSinceWrite).toBe(false);
  });

  it('the write’s destructive flag is recorded', () => {
    const s = readingWith([FILE]);
    write(s, [FILE], { destructive: true });
    expect(s.context.writeDestructive).toBe(true);
  });

  it('a destructive flag on a read is ignored', () => {
    const s = start();
    s.send(requested('read_file', 'read', { callId: 'r', destructive: true }));
    expect(s.context.inFlight[0]).not.toHaveProperty('destructive');
  });

  it('a write recorded without a check keeps its record’s destructive flag', () => {
    const s = start();
    s.send(succeeded('rm', 'write', { destructive: true }));
    expect(s.context.writeDestructive).toBe(true);
  });

  it('ResetKeepProgress drops a confirmation and the last write’s flag and targets', () => {
    const s = readingWith([FILE], { confirmDestructive: true });
    write(s, [FILE], { destructive: true });
    run(s, 'ask_user', 'user_input');
    s.send({ type: 'session.resetKeepingProgress', at: T });
    expect(s.context).toMatchObject({ confirmedSinceWrite: false, writeDestructive: false, writeTargets: [] });
  });

  it('Reset keeps confirmDestructive', () => {
    const s = readingWith([FILE], { confirmDestructive: true });
    s.send({ type: 'session.reset', at: T });
    expect(s.context.confirmDestructive).toBe(true);
  });
});

describe('self-verifying writes (DESIGN §1, §5.8)', () => {
  it('a write that verified itself returns to READING at once', () => {
    const s = readingWith([FILE]);
    write(s, [FILE], { selfVerified: true });
    expect(s.state).toBe('READING');
  });

  it('records a read named self_verify at the write’s time, and wrote this episode', () => {
    const s = readingWith([FILE]);
    write(s, [FILE], { selfVerified: true });
    expect(s.context).toMatchObject({
      lastReadTool: SELF_VERIFY_TOOL,
      lastReadAt: T,
      lastWriteTool: 'write_file',
      wroteThisEpisode: true,
      readAfterWrite: false,
      writeSeq: 1,
    });
  });

  it('then the next write is admitted and the final answer allowed', () => {
    const s = readingWith([FILE]);
    write(s, [FILE], { selfVerified: true });
    answer(s);
    expect(s.lastDecision.allowed).toBe(true);
    checkWrite(s, [FILE]);
    expect(s.lastDecision.allowed).toBe(true);
  });

  it('establishes nothing', () => {
    const s = readingWith([DIR]);
    write(s, ['/srv/app/new'], { selfVerified: true });
    expect(s.context.establishedTargets).toEqual([DIR]);
  });

  it('zeroes the blocked-write counter', () => {
    const s = readingWith([FILE]);
    write(s, [FILE]);
    checkWrite(s, [FILE]);
    s.send(succeeded('write_file', 'write', { selfVerified: true }));
    expect(s.context.consecutiveVerifyBlocks).toBe(0);
  });

  it('a write recorded without a check that verified itself goes from RESOLVING to READING', () => {
    const s = start();
    s.send(succeeded('write_file', 'write', { selfVerified: true }));
    expect(s.state).toBe('READING');
  });

  it('one recorded in VERIFYING verifies itself too', () => {
    const s = readingWith([FILE]);
    write(s, [FILE]);
    s.send(succeeded('write_file', 'write', { selfVerified: true }));
    expect(s.state).toBe('READING');
  });

  it('one recorded in READING stays READING, verified', () => {
    const s = readingWith([FILE]);
    s.send(succeeded('write_file', 'write', { selfVerified: true }));
    expect(s.state).toBe('READING');
    expect(s.context.lastReadTool).toBe(SELF_VERIFY_TOOL);
  });

  it('selfVerified that is not the boolean true is no self-verification', () => {
    const s = readingWith([FILE]);
    s.send(requested('write_file', 'write', { callId: 'w' }));
    s.send({ ...(succeeded('write_file', 'write', { callId: 'w' }) as object), selfVerified: 'true' } as unknown as SafetyEvent);
    expect(s.state).toBe('VERIFYING');
  });

  it('is ignored on a read', () => {
    const s = readingWith([FILE]);
    write(s, [FILE]);
    read(s, [OTHER]);
    s.send(requested('read_file', 'read', { callId: 'r2', targets: [OTHER] }));
    s.send(succeeded('read_file', 'read', { callId: 'r2', selfVerified: true }));
    expect(s.state).toBe('VERIFYING');
    expect(s.context.lastReadTool).toBe('read_file');
  });

  it('is ignored on a failure', () => {
    const s = readingWith([FILE], { strictFailedWrites: true });
    s.send(requested('write_file', 'write', { callId: 'w' }));
    s.send({ ...(failed('write_file', 'write', { callId: 'w' }) as object), selfVerified: true } as unknown as SafetyEvent);
    expect(s.state).toBe('VERIFYING');
  });

  it('beside a write it could be mistaken for, it verifies but cannot complete until that write’s outcome is known', () => {
    const s = readingWith([FILE]);
    // A raw actor checks one id twice: a write, then a read; a record of the id cannot say which it is.
    s.send(requested('write_file', 'write', { callId: 'x' }));
    s.send(requested('write_file', 'read', { callId: 'x' }));
    s.send(succeeded('write_file', 'write', { callId: 'x', kindUnstated: true, selfVerified: true }));
    expect(s.state).toBe('VERIFYING');
    expect(s.context.readAfterWrite).toBe(true);
    answer(s);
    expect(s.lastDecision.rule).toBe('write-in-flight');
    s.send(failed('write_file', 'write', { callId: 'x' }));
    complete(s);
    expect(s.state).toBe('READING');
  });

  it('the same beside a write, recorded in VERIFYING', () => {
    const s = readingWith([FILE]);
    s.send(requested('write_file', 'write', { callId: 'x' }));
    s.send(requested('write_file', 'read', { callId: 'x' }));
    s.send(succeeded('write_file', 'write', { callId: 'x', kindUnstated: true }));
    expect(s.state).toBe('VERIFYING');
    s.send(succeeded('write_file', 'write', { callId: 'y', selfVerified: true }));
    expect(s.state).toBe('VERIFYING');
    expect(s.context.readAfterWrite).toBe(true);
  });
});

describe('ResetKeepProgress (DESIGN §1)', () => {
  it('after a write gives READING and wroteThisEpisode === false', () => {
    const s = start();
    run(s, 'lookup', 'resolve');
    write(s);
    s.send({ type: 'session.resetKeepingProgress', at: T });
    expect(s.state).toBe('READING');
    expect(s.context.wroteThisEpisode).toBe(false);
  });

  it('drops the write’s pending verification: the final answer is allowed', () => {
    const s = readingWith([FILE]);
    write(s, [FILE]);
    s.send({ type: 'session.resetKeepingProgress', at: T });
    answer(s);
    expect(s.lastDecision.allowed).toBe(true);
  });
});

describe('targets of an outcome that could belong to several calls (DESIGN §3.4)', () => {
  /** Two reads of one tool checked without ids, on different targets. */
  function twoReads(input?: SafetyInput): Session {
    const s = readingWith([OTHER], input);
    s.send(requested('read_file', 'read', { targets: [DIR] }));
    s.send(requested('read_file', 'read', { targets: [FILE] }));
    return s;
  }

  it('a success that states no targets establishes only what both name (nothing here)', () => {
    const s = twoReads();
    s.send(succeeded('read_file', 'read', {}));
    expect(s.context.establishedTargets).toEqual([OTHER]);
  });

  it('a success of two reads naming a common target establishes it', () => {
    const s = readingWith([OTHER]);
    s.send(requested('read_file', 'read', { targets: [DIR, FILE] }));
    s.send(requested('read_file', 'read', { targets: [FILE] }));
    s.send(succeeded('read_file', 'read', {}));
    expect(s.context.establishedTargets).toEqual([OTHER, FILE]);
  });

  it('a success that states its targets is the read naming them', () => {
    const s = twoReads();
    s.send(succeeded('read_file', 'read', { targets: [FILE] }));
    expect(s.context.establishedTargets).toEqual([OTHER, FILE]);
    expect(s.context.inFlight.map((c) => c.targets)).toEqual([[DIR]]);
  });

  it('stated targets no call names narrow nothing', () => {
    const s = twoReads();
    s.send(succeeded('read_file', 'read', { targets: ['/x'] }));
    expect(s.context.establishedTargets).toEqual([OTHER]);
  });

  it('targets stated by a record that states no kind narrow nothing', () => {
    const s = twoReads();
    s.send(succeeded('read_file', 'read', { targets: [FILE], kindUnstated: true }));
    expect(s.context.establishedTargets).toEqual([OTHER]);
  });

  it('after a failure that states no targets, the read left keeps only what it shares with the one that left', () => {
    const s = twoReads();
    s.send(failed('read_file', 'read', {}));
    expect(s.context.inFlight).toHaveLength(1);
    expect(s.context.inFlight[0]).not.toHaveProperty('targets');
    s.send(succeeded('read_file', 'read', {}));
    expect(s.context.establishedTargets).toEqual([OTHER]);
  });

  it('a failure that states its targets settles the read naming them, and the other keeps its own', () => {
    const s = twoReads();
    s.send(failed('read_file', 'read', { targets: [DIR] }));
    expect(s.context.inFlight.map((c) => c.targets)).toEqual([[FILE]]);
  });

  it('an unambiguous failure leaves the other calls’ targets alone', () => {
    const s = readingWith([OTHER]);
    s.send(requested('read_file', 'read', { callId: 'a', targets: [DIR] }));
    s.send(requested('read_file', 'read', { callId: 'b', targets: [FILE] }));
    s.send(failed('read_file', 'read', { callId: 'a' }));
    expect(s.context.inFlight.map((c) => c.targets)).toEqual([[FILE]]);
  });

  it('an ambiguous success of a read on target and one off target does not verify the write', () => {
    const s = readingWith([DIR]);
    write(s, [FILE]);
    s.send(requested('read_file', 'read', { targets: [FILE] }));
    s.send(requested('read_file', 'read', { targets: [OTHER] }));
    s.send(succeeded('read_file', 'read', {}));
    expect(s.context.readAfterWrite).toBe(false);
  });

  it('its failure is taken as the one on target’s: the one left cannot verify', () => {
    const s = readingWith([DIR]);
    write(s, [FILE]);
    s.send(requested('read_file', 'read', { targets: [OTHER] }));
    s.send(requested('read_file', 'read', { targets: [FILE] }));
    s.send(failed('read_file', 'read', {}));
    s.send(succeeded('read_file', 'read', {}));
    expect(s.context.readAfterWrite).toBe(false);
  });

  it('a write among the candidates keeps its own targets', () => {
    const s = readingWith([DIR]);
    s.send(requested('edit', 'write', { targets: [FILE] }));
    s.send(requested('edit', 'read', { targets: [OTHER] }));
    s.send(succeeded('edit', 'write', { kindUnstated: true }));
    expect(s.context.writeTargets).toEqual([FILE]);
  });

  it('a failure booked to a read does not narrow a write left in flight', () => {
    const s = readingWith([DIR]);
    s.send(requested('edit', 'write', { targets: [FILE] }));
    s.send(requested('edit', 'read', { targets: [OTHER] }));
    s.send(failed('edit', 'read', { kindUnstated: true }));
    expect(s.context.inFlight.map((c) => [c.kind, c.targets])).toEqual([['write', [FILE]]]);
  });
});

describe('hostile target fields never stop the machine', () => {
  const hostileTargets = fc.oneof(
    fc.anything(),
    fc.array(fc.oneof(fc.string(), fc.constantFrom('/', '~', '.', '..', '~/..', '/a/../..', 'x=/y', 'table:', ''), fc.anything()), {
      maxLength: 40,
    }),
    fc.constant(
      new Proxy([], {
        get: () => {
          throw new Error('trap');
        },
      }),
    ),
    fc.constant(new Array(1_000_000)),
    fc.constant([`/${'a/'.repeat(2000)}`]),
  );
  const rawEvent = fc.record({
    type: fc.constantFrom('tool.requested', 'tool.succeeded', 'tool.failed', 'answer.requested', 'session.resetKeepingProgress'),
    tool: fc.constantFrom('read_file', 'write_file', 'ask'),
    kind: fc.constantFrom<unknown>('read', 'write', 'user_input', 'resolve', 'bogus', undefined),
    callId: fc.constantFrom<unknown>('a', 'b', undefined, 7),
    targets: hostileTargets,
    destructive: fc.anything(),
    selfVerified: fc.anything(),
    kindUnstated: fc.anything(),
    at: fc.constantFrom(T, T + 1),
  });

  it('any event with any targets leaves the actor running and its context one a snapshot can hold', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.array(rawEvent, { maxLength: 25 }), (confirmDestructive, events) => {
        const s = start({ confirmDestructive });
        read(s, ['/srv']);
        for (const event of events) s.send(event as unknown as SafetyEvent);
        expect(s.actor.getSnapshot().status).toBe('active');
        const restored = parsePersistedSnapshot(toPersistedSnapshot(s.state, s.context));
        expect(restored.context).toEqual(s.context);
      }),
      { numRuns: 300 },
    );
  });
});
