/**
 * Telemetry: the guard's onDecision / onRecovery hooks and the counters of
 * DESIGN.md §1 (src/telemetry/metrics.ts).
 */
import { describe, expect, it } from 'vitest';
import type { GateDecidedEvent, RecoverySucceededEvent } from '../../machines/safety.types.js';
import { createSessionGuard, type SessionGuard } from '../../src/guard/session-guard.js';
import { SessionGuardError } from '../../src/errors/index.js';
import {
  METRIC_NAMES,
  OTHER_TOOL_LABEL,
  SAFETY_COUNTERS,
  createCounterHooks,
  createSafetyMetrics,
  type SafetyCounterKey,
  type SafetyHooks,
  type SafetyMetrics,
} from '../../src/telemetry/metrics.js';

const READ = 'pulse_metrics';
const WRITE = 'pulse_control';

function meteredGuard(metrics: SafetyHooks): SessionGuard {
  let t = 1_700_000_000_000;
  return createSessionGuard({ now: () => (t += 1000), onDecision: metrics.onDecision, onRecovery: metrics.onRecovery });
}

describe('the onDecision hook', () => {
  it('receives every tool decision, allowed or refused, in order', () => {
    const seen: GateDecidedEvent[] = [];
    const guard = createSessionGuard({ onDecision: (decision) => seen.push(decision) });
    guard.check({ id: 'w', name: WRITE });
    guard.check({ id: 'r', name: READ });
    expect(seen.map((d) => [d.tool, d.allowed, d.rule])).toEqual([
      [WRITE, false, 'no-target'],
      [READ, true, null],
    ]);
  });

  it('receives final-answer decisions with subject answer', () => {
    const seen: GateDecidedEvent[] = [];
    const guard = createSessionGuard({ onDecision: (decision) => seen.push(decision) });
    guard.finalAnswer();
    expect(seen).toMatchObject([{ subject: 'answer', allowed: true, state: 'RESOLVING' }]);
  });

  it('is not called by record, which decides nothing', () => {
    const seen: GateDecidedEvent[] = [];
    const guard = createSessionGuard({ onDecision: (decision) => seen.push(decision) });
    guard.record({ name: READ });
    expect(seen).toEqual([]);
  });

  it('cannot change or stop a decision by throwing', () => {
    const guard = createSessionGuard({
      onDecision: () => {
        throw new Error('exporter down');
      },
    });
    expect(guard.check({ id: 'w', name: WRITE }).allowed).toBe(false);
    expect(guard.check({ id: 'r', name: READ }).allowed).toBe(true);
    expect(guard.actor.getSnapshot().status).toBe('active');
  });
});

describe('a hook observes a final decision (issue 14 item 4)', () => {
  /** A guard whose decision hook does `reach(guard)`; the guard, and what that threw (once the write below is checked). */
  function hookReaching(reach: (guard: SessionGuard) => void): { guard: SessionGuard; thrown: () => unknown } {
    let thrown: unknown;
    const guard: SessionGuard = createSessionGuard({
      onDecision: () => {
        try {
          reach(guard);
        } catch (error) {
          thrown = error;
        }
      },
    });
    return { guard, thrown: () => thrown };
  }

  it('cannot turn a refused write into an allowed one by calling check from the hook', () => {
    const { guard, thrown } = hookReaching((g) => g.check({ id: 'r', name: READ }));
    const decision = guard.check({ id: 'w', name: WRITE });
    expect(decision.allowed).toBe(false);
    expect(thrown()).toBeInstanceOf(SessionGuardError);
    expect((thrown() as SessionGuardError).code).toBe('GUARD_REENTRANT');
  });

  it("refuses a hook the same guard's actor (GUARD_REENTRANT): a hook that could send it events would decide", () => {
    const { guard, thrown } = hookReaching((g) => void g.actor);
    guard.check({ id: 'w', name: WRITE });
    expect((thrown() as SessionGuardError).code).toBe('GUARD_REENTRANT');
    expect(guard.actor.getSnapshot().status).toBe('active');
  });

  it('leaves the session untouched when the hook calls back into the guard', () => {
    let guard!: SessionGuard;
    guard = createSessionGuard({
      onDecision: () => {
        guard.record({ id: 'w', name: WRITE });
      },
    });
    guard.check({ id: 'r', name: READ });
    expect(guard.state).toBe('RESOLVING');
    expect(guard.context.inFlight).toHaveLength(1);
  });

  it('cannot allow a refused call by setting allowed on what it receives', () => {
    const guard = createSessionGuard({
      onDecision: (decision) => {
        (decision as { allowed: boolean }).allowed = true;
      },
    });
    expect(guard.check({ id: 'w', name: WRITE }).allowed).toBe(false);
  });

  it('receives a deep-frozen copy of the decision', () => {
    const seen: GateDecidedEvent[] = [];
    const guard = createSessionGuard({ onDecision: (decision) => seen.push(decision) });
    guard.check({ id: 'w', name: WRITE });
    expect(Object.isFrozen(seen[0])).toBe(true);
  });

  it('that recurses without end leaves the actor alive and the next call decided', () => {
    let guard!: SessionGuard;
    guard = createSessionGuard({ onDecision: () => void guard.finalAnswer() });
    guard.check({ id: 'w', name: WRITE });
    expect(guard.actor.getSnapshot().status).toBe('active');
    expect(guard.check({ id: 'r', name: READ }).allowed).toBe(true);
  });

  it('refuses calls from the onRecovery hook as well', () => {
    let nested: unknown;
    let guard!: SessionGuard;
    guard = createSessionGuard({
      onRecovery: () => {
        try {
          guard.reset();
        } catch (error) {
          nested = error;
        }
      },
    });
    guard.check({ id: 'w', name: WRITE });
    guard.record({ id: 'r', name: READ });
    guard.check({ id: 'w2', name: WRITE });
    guard.record({ id: 'w2', name: WRITE });
    expect((nested as SessionGuardError).code).toBe('GUARD_REENTRANT');
    expect(guard.state).toBe('VERIFYING');
  });
});

describe('an async hook', () => {
  it('that rejects is ignored like one that throws (no unhandled rejection)', async () => {
    const unhandled: unknown[] = [];
    const listen = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', listen);
    try {
      const guard = createSessionGuard({ onDecision: async () => Promise.reject(new Error('exporter down')) });
      expect(guard.check({ id: 'w', name: WRITE }).allowed).toBe(false);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', listen);
    }
  });
});

describe('a stopped actor', () => {
  const methods: [string, (guard: SessionGuard) => unknown][] = [
    ['check', (guard) => guard.check({ id: 'r', name: READ })],
    ['record', (guard) => guard.record({ id: 'r', name: READ })],
    ['finalAnswer', (guard) => guard.finalAnswer()],
    ['completeVerification', (guard) => guard.completeVerification()],
    ['reset', (guard) => guard.reset()],
    ['resetKeepProgress', (guard) => guard.resetKeepProgress()],
    ['getPersistedSnapshot', (guard) => guard.getPersistedSnapshot()],
  ];
  it.each(methods)('makes %s throw GUARD_STOPPED instead of doing nothing', (_name, call) => {
    const guard = createSessionGuard();
    guard.actor.stop();
    expect(() => call(guard)).toThrow(expect.objectContaining({ name: 'SessionGuardError', code: 'GUARD_STOPPED' }));
  });
});

describe('the onRecovery hook', () => {
  it('receives the pending recovery a successful call of the blocked tool clears', () => {
    const seen: RecoverySucceededEvent[] = [];
    const guard = createSessionGuard({ onRecovery: (event) => seen.push(event) });
    guard.check({ id: 'w', name: WRITE });
    guard.record({ id: 'r', name: READ });
    guard.check({ id: 'w2', name: WRITE });
    guard.record({ id: 'w2', name: WRITE });
    expect(seen).toMatchObject([{ type: 'recovery.succeeded', recovery: { tool: WRITE, attempts: 1 } }]);
  });
});

describe('the counters', () => {
  it('count a refused tool call under fsm_tool_block_total{state,tool,kind}', () => {
    const metrics = createSafetyMetrics();
    meteredGuard(metrics).check({ id: 'w', name: WRITE });
    expect(metrics.value(METRIC_NAMES.toolBlocks, { state: 'RESOLVING', tool: WRITE, kind: 'write' })).toBe(1);
  });

  it('count a refused final answer under fsm_final_block_total{state}', () => {
    const metrics = createSafetyMetrics();
    const guard = meteredGuard(metrics);
    guard.record({ name: WRITE });
    guard.finalAnswer();
    guard.finalAnswer();
    expect(metrics.value(METRIC_NAMES.finalBlocks, { state: 'VERIFYING' })).toBe(2);
  });

  it('count each refused tool call as an auto-recovery attempt under its error code', () => {
    const metrics = createSafetyMetrics();
    const guard = meteredGuard(metrics);
    guard.check({ id: 'w1', name: WRITE });
    guard.check({ id: 'w2', name: WRITE });
    expect(metrics.value(METRIC_NAMES.recoveryAttempts, { error_code: 'FSM_BLOCKED', tool: WRITE })).toBe(2);
  });

  it('count a cleared pending recovery under auto_recovery_success_total', () => {
    const metrics = createSafetyMetrics();
    const guard = meteredGuard(metrics);
    guard.check({ id: 'w1', name: WRITE });
    guard.record({ id: 'r', name: READ });
    guard.check({ id: 'w2', name: WRITE });
    guard.record({ id: 'w2', name: WRITE });
    expect(metrics.value(METRIC_NAMES.recoverySuccesses, { error_code: 'FSM_BLOCKED', tool: WRITE })).toBe(1);
  });

  it('do not count allowed decisions', () => {
    const metrics = createSafetyMetrics();
    const guard = meteredGuard(metrics);
    guard.check({ id: 'r', name: READ });
    guard.finalAnswer();
    expect(metrics.collect().every((family) => family.samples.length === 0)).toBe(true);
  });

  it('collect the seven families of the original, with their label names', () => {
    const families = createSafetyMetrics().collect();
    expect(families.map((f) => [f.name, f.type, f.labelNames])).toEqual([
      ['fsm_tool_block_total', 'counter', ['state', 'tool', 'kind']],
      ['fsm_final_block_total', 'counter', ['state']],
      ['auto_recovery_attempt_total', 'counter', ['error_code', 'tool']],
      ['auto_recovery_success_total', 'counter', ['error_code', 'tool']],
      ['pulse_ai_phantom_detected_total', 'counter', ['provider', 'model']],
      ['pulse_ai_strict_resolution_block_total', 'counter', ['tool', 'action']],
      ['pulse_ai_auto_recovery_attempt_total', 'counter', ['error_code', 'tool']],
    ]);
  });

  it('share one set of counters across many guards', () => {
    const metrics = createSafetyMetrics();
    meteredGuard(metrics).check({ name: WRITE });
    meteredGuard(metrics).check({ name: WRITE });
    expect(metrics.value(METRIC_NAMES.toolBlocks, { state: 'RESOLVING', tool: WRITE, kind: 'write' })).toBe(2);
  });

  it('count tools past the label limit under _other, bounding the series a model can create', () => {
    const metrics = createSafetyMetrics({ maxToolLabels: 2 });
    const guard = meteredGuard(metrics);
    for (const name of ['t1', 't2', 't3', 't4']) guard.check({ name });
    const toolBlocks = metrics.collect()[0]!;
    expect(toolBlocks.samples.map((s) => [s.labels.tool, s.value])).toEqual([
      ['t1', 1],
      ['t2', 1],
      [OTHER_TOOL_LABEL, 2],
    ]);
  });

  it('count a tool name longer than the length limit under _other', () => {
    const metrics = createSafetyMetrics({ maxToolLabelLength: 8 });
    meteredGuard(metrics).check({ name: 'x'.repeat(9) });
    expect(metrics.value(METRIC_NAMES.toolBlocks, { state: 'RESOLVING', tool: OTHER_TOOL_LABEL, kind: 'write' })).toBe(1);
  });

  it('hand out copies: changing what collect returned changes no counter', () => {
    const metrics = createSafetyMetrics();
    meteredGuard(metrics).check({ name: WRITE });
    metrics.collect()[0]!.samples[0]!.value = 99;
    expect(metrics.collect()[0]!.samples[0]!.value).toBe(1);
  });

  it('start again from zero after reset', () => {
    const metrics = createSafetyMetrics();
    meteredGuard(metrics).check({ name: WRITE });
    metrics.reset();
    expect(metrics.value(METRIC_NAMES.toolBlocks, { state: 'RESOLVING', tool: WRITE, kind: 'write' })).toBe(0);
  });

  it('ignore malformed events rather than throw', () => {
    const metrics = createSafetyMetrics();
    expect(() => metrics.onDecision(null as never)).not.toThrow();
    expect(() => metrics.onRecovery({} as never)).not.toThrow();
    expect(() => metrics.onRecoveryRaised(null as never)).not.toThrow();
  });
});

describe('recoveries a tool raises (issue 28)', () => {
  const STRICT = { ok: false, error: { code: 'STRICT_RESOLUTION', message: 'resolve the guest first' } };

  function strictGuard(metrics: SafetyMetrics): SessionGuard {
    let t = 1_700_000_000_000;
    return createSessionGuard({
      now: () => (t += 1000),
      onDecision: metrics.onDecision,
      onRecovery: metrics.onRecovery,
      onRecoveryRaised: metrics.onRecoveryRaised,
    });
  }

  it('count a STRICT_RESOLUTION result by tool and action, as a recovery attempt, and its later success as a recovery', () => {
    const metrics = createSafetyMetrics();
    const guard = strictGuard(metrics);
    guard.check({ id: 'w0', name: WRITE, args: { action: 'restart' } }); // refused in RESOLVING: FSM_BLOCKED
    guard.record({ name: 'pulse_query' });
    const call = { id: 'w1', name: WRITE, args: { action: 'restart', guest: 'web' } };
    expect(guard.check(call).allowed).toBe(true);
    expect(guard.record(call, 'error', { result: STRICT }).raised).toMatchObject({ errorCode: 'STRICT_RESOLUTION', tool: WRITE });
    expect(metrics.value(METRIC_NAMES.strictResolutionBlocks, { tool: WRITE, action: 'restart' })).toBe(1);
    expect(metrics.value(METRIC_NAMES.allRecoveryAttempts, { error_code: 'STRICT_RESOLUTION', tool: WRITE })).toBe(1);
    expect(metrics.value(METRIC_NAMES.allRecoveryAttempts, { error_code: 'FSM_BLOCKED', tool: WRITE })).toBe(1);
    // The original's short name keeps counting the gate's own refusals only.
    expect(metrics.value(METRIC_NAMES.recoveryAttempts, { error_code: 'STRICT_RESOLUTION', tool: WRITE })).toBe(0);
    guard.record({ name: 'pulse_query' });
    const again = { id: 'w2', name: WRITE, args: { action: 'restart', guest: 'web-01' } };
    expect(guard.check(again).allowed).toBe(true);
    guard.record(again, 'success');
    expect(metrics.value(METRIC_NAMES.recoverySuccesses, { error_code: 'STRICT_RESOLUTION', tool: WRITE })).toBe(1);
    expect(metrics.value(METRIC_NAMES.recoverySuccesses, { error_code: 'FSM_BLOCKED', tool: WRITE })).toBe(1);
  });

  it("count another catalog code as an attempt only, and a call without an action under ''", () => {
    const metrics = createSafetyMetrics();
    const guard = createSessionGuard({ recoveryCodes: ['NEEDS_LOOKUP'], onRecoveryRaised: metrics.onRecoveryRaised });
    guard.record({ name: WRITE, kind: 'write' }, 'error', { result: { error: { code: 'NEEDS_LOOKUP' } } });
    guard.record({ name: WRITE, kind: 'write', args: {} }, 'error', { errorCode: 'STRICT_RESOLUTION' });
    expect(metrics.value(METRIC_NAMES.allRecoveryAttempts, { error_code: 'NEEDS_LOOKUP', tool: WRITE })).toBe(1);
    expect(metrics.value(METRIC_NAMES.strictResolutionBlocks, { tool: WRITE, action: '' })).toBe(1);
    expect(metrics.collect().find((family) => family.name === METRIC_NAMES.strictResolutionBlocks)!.samples).toHaveLength(1);
  });

  it('bound the action label as tool names are bounded', () => {
    const metrics = createSafetyMetrics({ maxToolLabels: 1 });
    const raised = (action: string) => ({
      type: 'recovery.raised' as const,
      recovery: {
        recoveryId: `STRICT_RESOLUTION:${WRITE}`,
        errorCode: 'STRICT_RESOLUTION',
        tool: WRITE,
        createdAt: 0,
        lastBlockedAt: 0,
        attempts: 1,
      },
      at: 0,
      action,
    });
    metrics.onRecoveryRaised(raised('restart'));
    metrics.onRecoveryRaised(raised('stop'));
    expect(metrics.value(METRIC_NAMES.strictResolutionBlocks, { tool: WRITE, action: 'restart' })).toBe(1);
    expect(metrics.value(METRIC_NAMES.strictResolutionBlocks, { tool: WRITE, action: OTHER_TOOL_LABEL })).toBe(1);
  });
});

describe('the counter table and the counting rules', () => {
  it('name the counters of the original in SAFETY_COUNTERS, and METRIC_NAMES by the same keys', () => {
    expect(Object.entries(SAFETY_COUNTERS).map(([key, c]) => [key, c.name, c.labelNames])).toEqual([
      ['toolBlocks', 'fsm_tool_block_total', ['state', 'tool', 'kind']],
      ['finalBlocks', 'fsm_final_block_total', ['state']],
      ['recoveryAttempts', 'auto_recovery_attempt_total', ['error_code', 'tool']],
      ['recoverySuccesses', 'auto_recovery_success_total', ['error_code', 'tool']],
      ['phantomDetected', 'pulse_ai_phantom_detected_total', ['provider', 'model']],
      ['strictResolutionBlocks', 'pulse_ai_strict_resolution_block_total', ['tool', 'action']],
      ['allRecoveryAttempts', 'pulse_ai_auto_recovery_attempt_total', ['error_code', 'tool']],
    ]);
    expect(Object.entries(METRIC_NAMES)).toEqual(Object.entries(SAFETY_COUNTERS).map(([key, c]) => [key, c.name]));
  });

  it('hand the sink every increment, each with exactly the label names of its counter', () => {
    const increments: [SafetyCounterKey, Record<string, string>][] = [];
    const hooks = createCounterHooks((key, labels) => increments.push([key, labels]));
    const guard = meteredGuard(hooks);
    guard.check({ id: 'w1', name: WRITE });
    guard.record({ id: 'r', name: READ });
    guard.check({ id: 'w2', name: WRITE });
    guard.record({ id: 'w2', name: WRITE });
    guard.finalAnswer();
    expect(increments).toEqual([
      ['toolBlocks', { state: 'RESOLVING', tool: WRITE, kind: 'write' }],
      ['recoveryAttempts', { error_code: 'FSM_BLOCKED', tool: WRITE }],
      ['allRecoveryAttempts', { error_code: 'FSM_BLOCKED', tool: WRITE }],
      ['recoverySuccesses', { error_code: 'FSM_BLOCKED', tool: WRITE }],
      ['finalBlocks', { state: 'VERIFYING' }],
    ]);
    for (const [key, labels] of increments) expect(Object.keys(labels).sort()).toEqual([...SAFETY_COUNTERS[key].labelNames].sort());
  });

  it('count tools afresh after forgetToolLabels', () => {
    const tools: string[] = [];
    const hooks = createCounterHooks((key, labels) => key === 'toolBlocks' && tools.push((labels as { tool: string }).tool), {
      maxToolLabels: 1,
    });
    const guard = createSessionGuard({ onDecision: hooks.onDecision });
    guard.check({ name: 't1' });
    guard.check({ name: 't2' });
    hooks.forgetToolLabels();
    guard.check({ name: 't2' });
    expect(tools).toEqual(['t1', OTHER_TOOL_LABEL, 't2']);
  });
});
