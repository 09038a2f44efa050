/**
 * The session guard on the compiled interpreter (src/guard/session-guard.ts): no XState
 * actor until `guard.actor` is read; then one, created from the session as
 * it is, which drives the session from then on; `mayAnswer` never creates
 * it; a step that throws stops the guard as a failed actor does. The
 * equality of the two ways, step by step over every generated path, is in
 * test/interpreter.equality.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createSessionGuard, sessionStateOf, type SessionGuard } from '../../src/guard/session-guard.js';
import { mayAnswer } from '../../src/guard/may-answer.js';
import { safetyInterpreter } from '../../src/interpreter/index.js';

/** Whether the guard has created its XState actor (read from the guard's private field: nothing public may create it). */
function hasActor(guard: SessionGuard): boolean {
  return (guard as unknown as { live: unknown }).live !== null;
}

/** A guard in WRITING: a read, then a write admitted and not recorded. */
function writingGuard(): SessionGuard {
  let t = 1_700_000_000_000;
  const guard = createSessionGuard({ now: () => (t += 1) });
  guard.check({ id: 'q', name: 'pulse_query' });
  guard.record({ id: 'q', name: 'pulse_query' });
  guard.check({ id: 'w', name: 'pulse_control', args: { action: 'restart' } });
  return guard;
}

const advance = safetyInterpreter.advance;
afterEach(() => {
  safetyInterpreter.advance = advance;
});

describe('the guard on the compiled interpreter', () => {
  it('creates no actor while it decides', () => {
    const guard = writingGuard();
    guard.finalAnswer();
    void guard.state;
    void guard.context;
    guard.getPersistedSnapshot();
    expect(hasActor(guard)).toBe(false);
  });

  it('does not create the actor for mayAnswer', () => {
    const guard = writingGuard();
    expect(mayAnswer(guard)).toMatchObject({ allowed: false });
    expect(hasActor(guard)).toBe(false);
  });

  it('creates the actor on first use, started, in the state and context of the session', () => {
    const guard = writingGuard();
    const snapshot = guard.actor.getSnapshot();
    expect(snapshot.status).toBe('active');
    expect(snapshot.value).toBe('WRITING');
    expect(snapshot.context).toEqual(guard.context);
  });

  it('gives the same actor every time', () => {
    const guard = writingGuard();
    expect(guard.actor).toBe(guard.actor);
  });

  it('lets the actor drive once created: an event sent to it directly changes the guard', () => {
    const guard = writingGuard();
    guard.actor.send({ type: 'tool.succeeded', callId: 'w', tool: 'pulse_control', kind: 'write', at: 1_700_000_001_000 });
    expect(guard.state).toBe('VERIFYING');
  });

  it('sends its own events to the actor once created', () => {
    const guard = writingGuard();
    const actor = guard.actor;
    guard.record({ id: 'w', name: 'pulse_control' });
    expect(actor.getSnapshot().value).toBe('VERIFYING');
    expect(guard.check({ id: 'w2', name: 'pulse_control', args: { action: 'stop' } })).toMatchObject({ allowed: false });
    expect(actor.getSnapshot().context.consecutiveVerifyBlocks).toBe(1);
  });

  it('sends the actor only frozen events: what an actor or its inspectors see cannot change under the guard', () => {
    const guard = writingGuard();
    const actor = guard.actor;
    const seen: unknown[] = [];
    const send = actor.send.bind(actor);
    actor.send = (event) => {
      seen.push(event);
      send(event);
    };
    guard.record({ id: 'w', name: 'pulse_control' });
    guard.check({ id: 'r', name: 'pulse_query' });
    guard.finalAnswer();
    expect(seen).toHaveLength(3);
    expect(seen.every((event) => Object.isFrozen(event))).toBe(true);
  });

  it('reads its session without a copy for the library (sessionStateOf), and null for anything else', () => {
    const guard = writingGuard();
    expect(sessionStateOf(guard)).toBe(sessionStateOf(guard));
    expect(sessionStateOf(guard)?.value).toBe('WRITING');
    expect(sessionStateOf({ actor: guard.actor })).toBeNull();
  });

  it('stops, as a failed actor does, when a step throws: that call and every later one throw GUARD_STOPPED', () => {
    const guard = writingGuard();
    const bug = new Error('a bug in an action');
    safetyInterpreter.advance = () => {
      throw bug;
    };
    expect(() => guard.finalAnswer()).toThrow(expect.objectContaining({ name: 'SessionGuardError', code: 'GUARD_STOPPED', cause: bug }));
    safetyInterpreter.advance = advance;
    expect(() => guard.check({ id: 'r', name: 'pulse_query' })).toThrow(expect.objectContaining({ code: 'GUARD_STOPPED' }));
  });
});

describe("autoCompleteVerification, now the machine's input", () => {
  /** A session with a write recorded and a verifying read checked, persisted; its read still to record. */
  function persistedBeforeTheRead(autoCompleteVerification: boolean) {
    let t = 1_700_000_000_000;
    const guard = createSessionGuard({ now: () => (t += 1), autoCompleteVerification });
    for (const [id, name, args] of [
      ['q', 'pulse_query', undefined],
      ['w', 'pulse_control', { action: 'restart' }],
    ] as const) {
      guard.check({ id, name, args });
      guard.record({ id, name, args });
    }
    guard.check({ id: 'r', name: 'pulse_metrics' });
    return guard.getPersistedSnapshot();
  }

  it('keeps the persisted setting when the restoring guard gives none', () => {
    const guard = createSessionGuard({ snapshot: persistedBeforeTheRead(false) });
    guard.record({ id: 'r', name: 'pulse_metrics' });
    expect(guard.state).toBe('VERIFYING');
  });

  it('takes the setting the restoring guard gives over the persisted one', () => {
    const guard = createSessionGuard({ snapshot: persistedBeforeTheRead(false), autoCompleteVerification: true });
    guard.record({ id: 'r', name: 'pulse_metrics' });
    expect(guard.state).toBe('READING');
  });
});
