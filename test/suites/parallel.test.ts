/**
 * Parallel tool calls (DESIGN.md §3.3-3.4): a turn's calls are checked one by
 * one and their outcomes recorded in any order, correlated by call id. One
 * write at a time; a read counts as verification only if it was admitted
 * after the write succeeded. A call id is checked once while in flight; an
 * outcome that could belong to several calls of one tool is booked in the
 * worst case, so a failure never settles a write unless it is that write's.
 */
import { describe, expect, it } from 'vitest';
import { createSessionGuard, type SessionGuard } from '../../src/guard/session-guard.js';
import type { ToolKind } from '../../machines/safety.types.js';

const READ = 'pulse_metrics';
const WRITE = 'pulse_control';

function guardAt(start = 1_700_000_000_000): SessionGuard {
  let t = start;
  return createSessionGuard({ now: () => (t += 1000) });
}

/** A guard in READING: a target was established by a checked read. */
function readingGuard(): SessionGuard {
  const guard = guardAt();
  guard.check({ id: 'setup-read', name: READ });
  guard.record({ id: 'setup-read', name: READ });
  return guard;
}

/** A guard in VERIFYING: a checked write succeeded. */
function verifyingGuard(): SessionGuard {
  const guard = readingGuard();
  guard.check({ id: 'setup-write', name: WRITE });
  guard.record({ id: 'setup-write', name: WRITE });
  return guard;
}

describe('two writes in one turn', () => {
  it('refuses the second write while the first is in flight', () => {
    const guard = readingGuard();
    expect(guard.check({ id: 'w1', name: WRITE }).allowed).toBe(true);
    const second = guard.check({ id: 'w2', name: WRITE });
    expect(second.allowed).toBe(false);
    expect(second.allowed === false && second.error.rule).toBe('write-in-flight');
    expect(guard.state).toBe('WRITING');
  });

  it('does not track the refused write, so recording it as failed leaves the first in flight', () => {
    const guard = readingGuard();
    guard.check({ id: 'w1', name: WRITE });
    guard.check({ id: 'w2', name: WRITE });
    guard.record({ id: 'w2', name: WRITE }, 'error');
    expect(guard.context.inFlight.map((call) => call.key)).toEqual(['id:w1']);
  });

  it('needs verification of the first write before the second may be retried', () => {
    const guard = readingGuard();
    guard.check({ id: 'w1', name: WRITE });
    guard.check({ id: 'w2', name: WRITE });
    guard.record({ id: 'w1', name: WRITE });
    expect(guard.check({ id: 'w2-retry', name: WRITE }).allowed).toBe(false);
    expect(guard.state).toBe('VERIFYING');
  });
});

describe('a read running beside a write', () => {
  it('does not verify the write when it finishes before the write', () => {
    const guard = readingGuard();
    guard.check({ id: 'w', name: WRITE });
    guard.check({ id: 'r', name: READ });
    guard.record({ id: 'r', name: READ });
    guard.record({ id: 'w', name: WRITE });
    expect(guard.state).toBe('VERIFYING');
    expect(guard.finalAnswer().allowed).toBe(false);
  });

  it('does not verify the write when it finishes after the write', () => {
    const guard = readingGuard();
    guard.check({ id: 'w', name: WRITE });
    guard.check({ id: 'r', name: READ });
    guard.record({ id: 'w', name: WRITE });
    guard.record({ id: 'r', name: READ });
    expect(guard.state).toBe('VERIFYING');
    expect(guard.context.readAfterWrite).toBe(false);
  });

  it('is not blocked itself', () => {
    const guard = readingGuard();
    guard.check({ id: 'w', name: WRITE });
    expect(guard.check({ id: 'r', name: READ }).allowed).toBe(true);
  });

  it('leaves the verification to a read admitted after the write succeeded', () => {
    const guard = readingGuard();
    guard.check({ id: 'w', name: WRITE });
    guard.check({ id: 'r', name: READ });
    guard.record({ id: 'w', name: WRITE });
    guard.record({ id: 'r', name: READ });
    guard.check({ id: 'r2', name: READ });
    guard.record({ id: 'r2', name: READ });
    expect(guard.state).toBe('READING');
  });
});

describe('record without check', () => {
  it('sends an unchecked write to VERIFYING: it happened, so it needs verification', () => {
    const guard = readingGuard();
    guard.record({ id: 'w', name: WRITE });
    expect(guard.state).toBe('VERIFYING');
    expect(guard.check({ id: 'w2', name: WRITE }).allowed).toBe(false);
  });

  it('sends an unchecked write in RESOLVING to VERIFYING too', () => {
    const guard = guardAt();
    guard.record({ name: WRITE });
    expect(guard.state).toBe('VERIFYING');
  });

  it('lets an unchecked read verify a write in a session that never checks (the original record-only style)', () => {
    const guard = guardAt();
    guard.record({ name: READ });
    guard.record({ name: WRITE });
    guard.record({ name: READ });
    expect(guard.state).toBe('READING');
    expect(guard.finalAnswer().allowed).toBe(true);
  });

  it('does not let an unchecked read verify a write in a session that checks its calls', () => {
    const guard = verifyingGuard();
    guard.record({ name: READ });
    expect(guard.state).toBe('VERIFYING');
    expect(guard.finalAnswer().allowed).toBe(false);
  });
});

describe('record twice', () => {
  it('keeps a write recorded twice in need of verification', () => {
    const guard = readingGuard();
    guard.check({ id: 'w', name: WRITE });
    guard.record({ id: 'w', name: WRITE });
    guard.record({ id: 'w', name: WRITE });
    expect(guard.state).toBe('VERIFYING');
    expect(guard.finalAnswer().allowed).toBe(false);
  });

  it('does not let a read recorded again verify a later write (with ids)', () => {
    const guard = verifyingGuard();
    guard.check({ id: 'r1', name: READ });
    guard.record({ id: 'r1', name: READ });
    expect(guard.state).toBe('READING');
    guard.check({ id: 'w2', name: WRITE });
    guard.record({ id: 'w2', name: WRITE });
    guard.record({ id: 'r1', name: READ });
    expect(guard.state).toBe('VERIFYING');
    expect(guard.check({ id: 'w3', name: WRITE }).allowed).toBe(false);
  });

  it('does not let a read recorded again verify a later write (without ids)', () => {
    const guard = guardAt();
    guard.check({ name: READ });
    guard.record({ name: READ });
    guard.check({ name: WRITE });
    guard.record({ name: WRITE });
    guard.check({ name: READ });
    guard.record({ name: READ });
    guard.check({ name: WRITE });
    guard.record({ name: WRITE });
    guard.record({ name: READ });
    expect(guard.state).toBe('VERIFYING');
    expect(guard.finalAnswer().allowed).toBe(false);
  });

  it('leaves a verified session verified when a verifying read is recorded again', () => {
    const guard = verifyingGuard();
    guard.check({ id: 'r', name: READ });
    guard.record({ id: 'r', name: READ });
    guard.record({ id: 'r', name: READ });
    expect(guard.state).toBe('READING');
  });
});

describe('record of an unknown id', () => {
  it('treats an unknown write as a write that happened', () => {
    const guard = readingGuard();
    guard.record({ id: 'never-checked', name: WRITE });
    expect(guard.state).toBe('VERIFYING');
  });

  it('does not count an unknown read as verification in a session that checks its calls', () => {
    const guard = verifyingGuard();
    guard.record({ id: 'never-checked', name: READ });
    expect(guard.state).toBe('VERIFYING');
  });

  it('leaves the calls in flight untouched', () => {
    const guard = readingGuard();
    guard.check({ id: 'w', name: WRITE });
    guard.record({ id: 'never-checked', name: READ });
    expect(guard.context.inFlight.map((call) => call.key)).toEqual(['id:w']);
    expect(guard.state).toBe('WRITING');
  });

  it('applies the admitted kind, not the recorded name, when the id is known', () => {
    const guard = readingGuard();
    guard.check({ id: 'w', name: WRITE });
    guard.record({ id: 'w', name: READ });
    expect(guard.state).toBe('VERIFYING');
  });
});

describe('records out of order', () => {
  it('lets either of two reads admitted after the write verify it, whichever finishes first', () => {
    const guard = verifyingGuard();
    guard.check({ id: 'r1', name: READ });
    guard.check({ id: 'r2', name: READ });
    guard.record({ id: 'r2', name: READ });
    expect(guard.state).toBe('READING');
    guard.record({ id: 'r1', name: READ });
    expect(guard.state).toBe('READING');
  });

  it('settles each call by its id, not by arrival order', () => {
    const guard = readingGuard();
    guard.check({ id: 'a', name: READ });
    guard.check({ id: 'b', name: 'pulse_query' });
    guard.check({ id: 'c', name: WRITE });
    guard.record({ id: 'b', name: 'pulse_query' });
    expect(guard.context.inFlight.map((call) => call.key)).toEqual(['id:a', 'id:c']);
  });

  it('does not let a read admitted before a second write verify that write, even if recorded after it', () => {
    const guard = verifyingGuard();
    guard.check({ id: 'r1', name: READ });
    guard.check({ id: 'r2', name: READ });
    guard.record({ id: 'r1', name: READ });
    guard.check({ id: 'w2', name: WRITE });
    guard.record({ id: 'w2', name: WRITE });
    guard.record({ id: 'r2', name: READ });
    expect(guard.state).toBe('VERIFYING');
  });
});

describe('a write that fails while a read is in flight', () => {
  it('returns to READING and keeps tracking the read', () => {
    const guard = readingGuard();
    guard.check({ id: 'w', name: WRITE });
    guard.check({ id: 'r', name: READ });
    guard.record({ id: 'w', name: WRITE }, 'error');
    expect(guard.state).toBe('READING');
    expect(guard.context.inFlight.map((call) => call.key)).toEqual(['id:r']);
  });

  it('admits a new write afterwards, and the late read does not verify it', () => {
    const guard = readingGuard();
    guard.check({ id: 'w', name: WRITE });
    guard.check({ id: 'r', name: READ });
    guard.record({ id: 'w', name: WRITE }, 'error');
    expect(guard.check({ id: 'w2', name: WRITE }).allowed).toBe(true);
    guard.record({ id: 'w2', name: WRITE });
    guard.record({ id: 'r', name: READ });
    expect(guard.state).toBe('VERIFYING');
  });

  it('with strict failed writes, needs verification that the read in flight cannot give', () => {
    let t = 1_700_000_000_000;
    const guard = createSessionGuard({ now: () => (t += 1000), strictFailedWrites: true });
    guard.check({ id: 'setup', name: READ });
    guard.record({ id: 'setup', name: READ });
    guard.check({ id: 'w', name: WRITE });
    guard.check({ id: 'r', name: READ });
    guard.record({ id: 'w', name: WRITE }, 'error');
    guard.record({ id: 'r', name: READ });
    expect(guard.state).toBe('VERIFYING');
    expect(guard.finalAnswer().allowed).toBe(false);
  });
});

describe('a call id checked again while in flight', () => {
  it('is refused with a TypeError naming the id', () => {
    const guard = readingGuard();
    guard.check({ id: 'X', name: WRITE });
    expect(() => guard.check({ id: 'X', name: READ })).toThrow(
      new TypeError(
        "check: call id 'X' is already in flight; record its outcome before checking another call under it, " +
          'or give the new call its own id (one record could not tell the two apart)',
      ),
    );
  });

  it('leaves the session untouched: the write alone is in flight, still WRITING', () => {
    const guard = readingGuard();
    guard.check({ id: 'X', name: WRITE });
    const before = guard.getPersistedSnapshot();
    expect(() => guard.check({ id: 'X', name: READ })).toThrow(TypeError);
    expect(guard.getPersistedSnapshot()).toEqual(before);
    expect(guard.state).toBe('WRITING');
  });

  it('makes no decision, so no decision reaches onDecision', () => {
    const decisions: unknown[] = [];
    const guard = createSessionGuard({ onDecision: (decision) => decisions.push(decision) });
    guard.check({ id: 'X', name: READ });
    expect(() => guard.check({ id: 'X', name: READ })).toThrow(TypeError);
    expect(decisions).toHaveLength(1);
  });

  it('is refused for a read under a read’s id too', () => {
    const guard = readingGuard();
    guard.check({ id: 'r', name: READ });
    expect(() => guard.check({ id: 'r', name: READ })).toThrow(/^check: call id 'r' is already in flight/);
  });

  it('is admitted again once its outcome is recorded', () => {
    const guard = readingGuard();
    guard.check({ id: 'r', name: READ });
    guard.record({ id: 'r', name: READ });
    expect(guard.check({ id: 'r', name: READ }).allowed).toBe(true);
  });

  it('is admitted again after a refusal: a refused write is not in flight', () => {
    const guard = verifyingGuard();
    guard.check({ id: 'w2', name: WRITE });
    expect(guard.check({ id: 'w2', name: READ }).allowed).toBe(true);
  });

  it('does not apply to an empty id, which is no id', () => {
    const guard = readingGuard();
    guard.check({ id: '', name: READ });
    expect(guard.check({ id: '', name: READ }).allowed).toBe(true);
  });

  it('the reported reproduction: the read is not admitted under the write’s id, so the write still needs verification', () => {
    const guard = createSessionGuard();
    guard.check({ name: 'pulse_query' });
    guard.record({ name: 'pulse_query' });
    guard.check({ id: 'X', name: 'pulse_control' });
    expect(() => guard.check({ id: 'X', name: 'pulse_metrics' })).toThrow(TypeError);
    guard.record({ id: 'X', name: 'pulse_control' }, 'success');
    expect(guard.finalAnswer().allowed).toBe(false);
  });
});

/** `pulse_docker` is a write or a read by its `action` (DESIGN.md §2): one tool, two kinds. */
const DOCKER = 'pulse_docker';
const RESTART = { name: DOCKER, args: { action: 'restart' } };
const SERVICES = { name: DOCKER, args: { action: 'services' } };

/** Default options; a target, then a write and a read of one tool admitted side by side without ids. */
function writeBesideReadOfOneTool(): SessionGuard {
  const guard = createSessionGuard();
  guard.check({ name: 'pulse_query' });
  guard.record({ name: 'pulse_query' });
  expect(guard.check(RESTART)).toEqual({ allowed: true, kind: 'write' });
  expect(guard.check(SERVICES)).toEqual({ allowed: true, kind: 'read' });
  return guard;
}

describe('an outcome that could belong to more than one call in flight', () => {
  it('a failure recorded by tool name alone leaves the write in flight (the reported reproduction)', () => {
    const guard = writeBesideReadOfOneTool();
    guard.record({ name: DOCKER }, 'error');
    expect(guard.state).toBe('WRITING');
    expect(guard.context.inFlight.map((call) => call.kind)).toEqual(['write']);
  });

  it('refuses the final answer once the other call succeeds: a write succeeded, nothing verified it', () => {
    const guard = writeBesideReadOfOneTool();
    guard.record({ name: DOCKER }, 'error');
    guard.record({ name: DOCKER }, 'success');
    expect(guard.state).toBe('VERIFYING');
    expect(guard.finalAnswer().allowed).toBe(false);
  });

  it('refuses a second write once the other call succeeds', () => {
    const guard = writeBesideReadOfOneTool();
    guard.record({ name: DOCKER }, 'error');
    guard.record({ name: DOCKER }, 'success');
    const second = guard.check({ name: 'pulse_control' });
    expect(second.allowed === false && second.error.rule).toBe('unverified-write');
  });

  it('takes a success recorded by name alone as the write’s: VERIFYING', () => {
    const guard = writeBesideReadOfOneTool();
    guard.record({ name: DOCKER }, 'success');
    expect(guard.state).toBe('VERIFYING');
  });

  it('keeps the write in flight after that success until the other call is recorded: no final answer', () => {
    const guard = writeBesideReadOfOneTool();
    guard.record({ name: DOCKER }, 'success');
    guard.check({ id: 'later', name: READ });
    guard.record({ id: 'later', name: READ });
    const answer = guard.finalAnswer();
    expect(answer.allowed === false && answer.error.rule).toBe('write-in-flight');
  });

  it('lets a read admitted after that success verify the write once the other call is recorded', () => {
    const guard = writeBesideReadOfOneTool();
    guard.record({ name: DOCKER }, 'success');
    guard.check({ id: 'later', name: READ });
    guard.record({ id: 'later', name: READ });
    guard.record({ name: DOCKER }, 'error');
    expect(guard.state).toBe('READING');
  });

  it('needs verification when the records come the other way round (success, then failure)', () => {
    const guard = writeBesideReadOfOneTool();
    guard.record({ name: DOCKER }, 'success');
    guard.record({ name: DOCKER }, 'error');
    expect(guard.state).toBe('VERIFYING');
    expect(guard.finalAnswer().allowed).toBe(false);
  });

  it('settles the write as failed when the record’s arguments say it is the write’s', () => {
    const guard = writeBesideReadOfOneTool();
    guard.record(RESTART, 'error');
    expect(guard.state).toBe('READING');
  });

  it('settles the read when the record’s arguments say it is the read’s, leaving the write in flight', () => {
    const guard = writeBesideReadOfOneTool();
    guard.record(SERVICES, 'error');
    expect(guard.state).toBe('WRITING');
    expect(guard.context.inFlight.map((call) => call.kind)).toEqual(['write']);
  });

  it('settles the write as failed when the record’s kind says it is the write’s', () => {
    const guard = writeBesideReadOfOneTool();
    guard.record({ name: DOCKER, kind: 'write' }, 'error');
    expect(guard.state).toBe('READING');
  });

  it('settles the read’s success, not the write’s, when the record’s arguments say so', () => {
    const guard = writeBesideReadOfOneTool();
    guard.record(SERVICES, 'success');
    expect(guard.state).toBe('WRITING');
  });

  it('does not take a kind outside the vocabulary as the record’s word: the write stays in flight', () => {
    const guard = writeBesideReadOfOneTool();
    guard.record({ name: DOCKER, kind: 'mystery' as ToolKind }, 'error');
    expect(guard.state).toBe('WRITING');
  });

  it('does not let a failure whose arguments name a read settle a write that is alone in flight', () => {
    const guard = createSessionGuard();
    guard.record({ name: 'pulse_query' });
    guard.check(RESTART);
    guard.record(SERVICES, 'error');
    expect(guard.state).toBe('WRITING');
  });

  it('still settles a lone write recorded by name alone as failed', () => {
    const guard = createSessionGuard();
    guard.record({ name: 'pulse_query' });
    guard.check(RESTART);
    guard.record({ name: DOCKER }, 'error');
    expect(guard.state).toBe('READING');
  });
});
