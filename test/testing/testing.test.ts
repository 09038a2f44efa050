/**
 * `pulse-safety-fsm/testing` (src/testing/): the generated paths, their
 * expected decisions, and the abstraction they are enumerated over.
 *
 * Spec: ASSISTANT_SAFETY.md (whole); DESIGN.md §3, §5 (paths with targets).
 */
import { createTestModel, getShortestPaths, getSimplePaths } from '@xstate/graph';
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { safetyMachine } from '../../machines/safety.machine.js';
import { MAX_TIME_MS, RECOVERY_TTL_MS } from '../../machines/safety.policy.js';
import { TOOL_KINDS, type SafetyEvent } from '../../machines/safety.types.js';
import { createSessionGuard, type SessionGuardOptions } from '../../src/guard/session-guard.js';
import { compileCatalog, builtinCatalogs } from '../../src/classify/catalog/index.js';
import {
  CLAIM_PATH_ANSWER,
  abstractDecisionState,
  abstractSafetyState,
  DEFAULT_PATH_START,
  DEFAULT_PATH_TOOLS,
  getShortestSafetyPaths,
  getSimpleSafetyPaths,
  MAX_PATH_SPAN_MS,
  PATH_TARGETS,
  UNKNOWN_PATH_TARGET,
  recordOptionsOf,
  SELF_VERIFYING_RESULT,
  safetyEventCases,
  selectedTransitions,
  SHORTEST_PATH_CASES,
  TARGET_PATH_CASES,
  abstractTargetState,
  CLOCK_JUMP_MS,
  shortestPathsGraphOptions,
  simplePathsGraphOptions,
  targetCoverageKey,
  testModelGraphOptions,
  toolCallOf,
  transitionCoverageKey,
  type SafetyPath,
  type SafetyPathOptions,
  type SafetySnapshot,
} from '../../src/testing/index.js';

/** Computed on first use inside a test (not at import), then kept. */
function once<T>(compute: () => T): () => T {
  let value: { v: T } | undefined;
  return () => (value ??= { v: compute() }).v;
}

const defaultShortest = once(() => getShortestSafetyPaths());
const defaults = once(() => [...defaultShortest(), ...getSimpleSafetyPaths()]);

/**
 * Replays a path through a session guard whose clock reads each event's
 * time, and lists every step where the guard's decision, state or recovery
 * differs from the path's.
 */
function mismatches(path: SafetyPath, options: SafetyPathOptions = {}, guardOptions: SessionGuardOptions = {}): string[] {
  let now = 0;
  const guard = createSessionGuard({
    ...guardOptions,
    now: () => now,
    strictFailedWrites: options.strictFailedWrites === true,
    autoCompleteVerification: options.autoCompleteVerification !== false,
    confirmDestructive: options.confirmDestructive === true,
  });
  const found: string[] = [];
  path.steps.forEach((step, index) => {
    now = step.event.at;
    const call = toolCallOf(step.event);
    let decision: { allowed: boolean; rule: string | null } | null = null;
    let recoveryId: string | null = null;
    switch (step.event.type) {
      case 'tool.requested': {
        const d = guard.check(call!);
        decision = d.allowed ? { allowed: true, rule: null } : { allowed: false, rule: d.error.rule };
        break;
      }
      case 'tool.succeeded':
      case 'tool.failed':
        recoveryId =
          guard.record(call!, step.event.type === 'tool.succeeded' ? 'success' : 'error', recordOptionsOf(step.event)).recovered
            ?.recoveryId ?? null;
        break;
      case 'answer.requested': {
        const d = guard.finalAnswer(step.event.claims === undefined ? undefined : CLAIM_PATH_ANSWER);
        decision = d.allowed ? { allowed: true, rule: null } : { allowed: false, rule: d.error.rule };
        break;
      }
      case 'verification.completed':
        guard.completeVerification();
        break;
      case 'session.reset':
        guard.reset();
        break;
      case 'session.resetKeepingProgress':
        guard.resetKeepProgress();
        break;
      case 'clock.ticked':
        break;
    }
    const got = JSON.stringify({ state: guard.state, decision, recoveryId });
    const want = JSON.stringify({ state: step.state, decision: step.decision, recoveryId: step.recoveryId });
    if (got !== want) found.push(`step ${index} of "${path.description}": guard ${got}, path ${want}`);
  });
  return found;
}

function freshSnapshot(strictFailedWrites = false): SafetySnapshot {
  const actor = createActor(safetyMachine, { input: { strictFailedWrites } });
  actor.start();
  return actor.getSnapshot();
}

function snapshotAfter(events: SafetyEvent[]): SafetySnapshot {
  const actor = createActor(safetyMachine, { input: {} });
  actor.start();
  for (const event of events) actor.send(event);
  return actor.getSnapshot();
}

const T = DEFAULT_PATH_START;
const w = { tool: 'pulse_control', kind: 'write' as const, callId: 'w' };
const q = { tool: 'pulse_query', kind: 'resolve' as const, callId: 'q' };

describe('getShortestSafetyPaths and getSimpleSafetyPaths', () => {
  it('the session guard decides every step of every default path as the path expects', () => {
    expect(defaults().flatMap((path) => mismatches(path))).toEqual([]);
  });

  for (const options of [
    { strictFailedWrites: true },
    { autoCompleteVerification: false },
    { autoCompleteVerification: false, includeUncheckedOutcomes: true, strictFailedWrites: true },
  ] satisfies SafetyPathOptions[]) {
    it(`the session guard decides every step as the paths expect, ${JSON.stringify(options)}`, () => {
      const paths = [...getShortestSafetyPaths(options), ...getSimpleSafetyPaths(options)];
      expect(paths.flatMap((path) => mismatches(path, options))).toEqual([]);
    });
  }

  it('the shortest paths end in every state', () => {
    expect(new Set(defaultShortest().map((path) => path.steps.at(-1)?.state))).toEqual(
      new Set(['RESOLVING', 'READING', 'WRITING', 'VERIFYING']),
    );
  });

  it('the shortest paths refuse writes in RESOLVING, WRITING and VERIFYING, and the final answer in WRITING and VERIFYING', () => {
    const refusals = new Set(
      defaultShortest().flatMap((path) =>
        path.steps.flatMap((step, i) =>
          step.decision?.allowed === false
            ? [`${step.event.type} in ${i === 0 ? 'RESOLVING' : path.steps[i - 1]!.state}: ${step.decision.rule}`]
            : [],
        ),
      ),
    );
    expect(refusals).toEqual(
      new Set([
        'tool.requested in RESOLVING: no-target',
        'tool.requested in WRITING: write-in-flight',
        'tool.requested in VERIFYING: unverified-write',
        'answer.requested in WRITING: write-in-flight',
        'answer.requested in VERIFYING: unverified-write',
      ]),
    );
  });

  it('every path can be replayed by a loop that records only calls it ran', () => {
    for (const path of defaults()) {
      const running = new Set<string>();
      for (const step of path.steps) {
        const { event } = step;
        if (event.type === 'session.reset' || event.type === 'session.resetKeepingProgress') running.clear();
        if (event.type === 'tool.requested') {
          expect(running.has(event.callId!), path.description).toBe(false);
          if (step.decision!.allowed) running.add(event.callId!);
        }
        if (event.type === 'tool.succeeded' || event.type === 'tool.failed') {
          expect(running.delete(event.callId!), path.description).toBe(true);
        }
      }
    }
  });

  it('with includeUncheckedOutcomes, some path records an outcome of a call that was never checked', () => {
    const paths = getShortestSafetyPaths({ includeUncheckedOutcomes: true });
    const unchecked = paths.some((path) => {
      const first = path.steps[0]?.event;
      return first !== undefined && (first.type === 'tool.succeeded' || first.type === 'tool.failed');
    });
    expect(unchecked).toBe(true);
  });

  it('paths complete verification themselves only with autoCompleteVerification false', () => {
    const completes = (paths: SafetyPath[]) =>
      paths.some((path) => path.steps.some((step) => step.event.type === 'verification.completed'));
    expect(completes(defaults())).toBe(false);
    expect(completes(getShortestSafetyPaths({ autoCompleteVerification: false }))).toBe(true);
  });

  it('no path is a prefix of another, and none repeats', () => {
    const keys = defaultShortest().map((path) => path.steps.map((step) => JSON.stringify(step.event)).join('\n'));
    expect(new Set(keys).size).toBe(keys.length);
    const prefixes = new Set(keys.flatMap((key) => key.split('\n').map((_, i, all) => all.slice(0, i).join('\n'))));
    expect(keys.filter((key) => prefixes.has(key))).toEqual([]);
  });

  it('time starts at startAt and grows by a millisecond a step, ten minutes and one millisecond at a clock jump', () => {
    for (const path of getShortestSafetyPaths({ startAt: 5_000 })) {
      let expected = 5_000;
      path.steps.forEach((step, i) => {
        if (i > 0) expected += 1;
        if (step.event.type === 'clock.ticked') expected += RECOVERY_TTL_MS + 1;
        expect(step.event.at).toBe(expected);
      });
    }
  });

  it('refuses a start time that is not a finite number', () => {
    expect(() => getShortestSafetyPaths({ startAt: Number.NaN })).toThrow(TypeError);
    expect(() => getSimpleSafetyPaths({ startAt: Number.POSITIVE_INFINITY })).toThrow(TypeError);
  });

  it('refuses a start time so late that a step would pass the range of JavaScript dates', () => {
    expect(() => getShortestSafetyPaths({ startAt: MAX_TIME_MS })).toThrow(/startAt: must be an epoch-millisecond number/);
    expect(() => getSimpleSafetyPaths({ startAt: -MAX_TIME_MS })).toThrow(/startAt/);
  });

  it('keeps every path within MAX_PATH_SPAN_MS of its start, so the latest allowed start is replayable', () => {
    const startAt = MAX_TIME_MS - MAX_PATH_SPAN_MS;
    for (const path of getShortestSafetyPaths({ startAt })) {
      expect(path.steps.at(-1)!.event.at - startAt).toBeLessThan(MAX_PATH_SPAN_MS);
    }
    expect(mismatches(getShortestSafetyPaths({ startAt }).at(-1)!)).toEqual([]);
  });

  it.each([
    [{ strictFailedWrite: true }, /strictFailedWrite/],
    [{ strictFailedWrites: 'yes' }, /strictFailedWrites: .*boolean/],
    [{ autoCompleteVerification: 0 }, /autoCompleteVerification: .*boolean/],
    [{ tools: 'x' }, /tools: /],
    [{ tools: { write: 42 } }, /tools\.write: /],
    [{ tools: { write: '' } }, /tools\.write: must be a non-empty tool name/],
    [{ tools: { writer: 'deploy' } }, /writer/],
    [{ startAt: '2024' }, /startAt: .*received string/],
    [null, /invalid path options/],
  ])('refuses bad options %j with a TypeError naming them', (options, message) => {
    for (const generate of [getShortestSafetyPaths, getSimpleSafetyPaths]) {
      expect(() => generate(options as SafetyPathOptions)).toThrow(TypeError);
      expect(() => generate(options as SafetyPathOptions)).toThrow(message);
    }
  });

  it('uses default tool names the built-in catalogs classify as their kinds (neutral: tau-airline)', () => {
    for (const kind of TOOL_KINDS) {
      const classify = compileCatalog(builtinCatalogs[kind === 'neutral' ? 'tau-airline' : 'pulse']).kindOf;
      expect(classify(DEFAULT_PATH_TOOLS[kind], {})).toBe(kind);
    }
  });

  it('names tools as told, and keeps each call id to one kind', () => {
    const paths = getShortestSafetyPaths({ tools: { write: 'book_reservation', read: 'get_reservation_details' } });
    const named = new Map<string, Set<string>>();
    for (const path of paths) {
      for (const { event } of path.steps) {
        const call = toolCallOf(event);
        if (call === null) continue;
        if (!named.has(call.kind)) named.set(call.kind, new Set());
        named.get(call.kind)!.add(call.name);
        expect(call.id).toMatch(new RegExp(`^${call.kind}-[12]$`));
      }
    }
    expect(named.get('write')).toEqual(new Set(['book_reservation']));
    expect(named.get('read')).toEqual(new Set(['get_reservation_details']));
    expect(named.get('resolve')).toEqual(new Set([DEFAULT_PATH_TOOLS.resolve]));
  });

  it('a decision is expected exactly at tool checks and final answers', () => {
    for (const path of defaults()) {
      for (const step of path.steps) {
        const decides = step.event.type === 'tool.requested' || step.event.type === 'answer.requested';
        expect(step.decision !== null).toBe(decides);
      }
    }
  });

  it('a later success of a blocked tool is expected to recover it', () => {
    const recoveries = defaultShortest().flatMap((path) => path.steps.filter((step) => step.recoveryId !== null));
    expect(recoveries.length).toBeGreaterThan(0);
    expect(new Set(recoveries.map((step) => step.recoveryId))).toEqual(new Set(['FSM_BLOCKED:pulse_control']));
  });

  it('a clock jump lets a pending recovery expire on some path', () => {
    const expires = defaultShortest().some((path) => {
      let now = 0;
      const guard = createSessionGuard({ now: () => now });
      return path.steps.some((step) => {
        const pending = Object.keys(guard.context.pendingRecoveries).length;
        now = step.event.at;
        const call = toolCallOf(step.event);
        if (step.event.type === 'tool.requested') guard.check(call!);
        if (step.event.type === 'tool.succeeded') guard.record(call!);
        if (step.event.type === 'tool.failed') guard.record(call!, 'error');
        if (step.event.type === 'session.reset') guard.reset();
        if (step.event.type === 'session.resetKeepingProgress') guard.resetKeepProgress();
        if (step.event.type === 'answer.requested') guard.finalAnswer(step.event.claims === undefined ? undefined : CLAIM_PATH_ANSWER);
        return step.event.type === 'clock.ticked' && pending > 0 && Object.keys(guard.context.pendingRecoveries).length === 0;
      });
    });
    expect(expires).toBe(true);
  });

  it('describes a path by its last state and its steps', () => {
    const path = defaultShortest().find(
      (p) => p.steps.length === 2 && p.steps[0]!.event.type === 'tool.requested' && p.steps[1]!.event.type === 'tool.succeeded',
    )!;
    expect(path.description).toMatch(/^(RESOLVING|READING|WRITING|VERIFYING): check \S+ (allowed|blocked) → (ok|fail) \S+$/);
    expect(path.description.startsWith(`${path.steps[1]!.state}:`)).toBe(true);
  });
});

describe('toolCallOf', () => {
  it('gives the call of a tool event, with its id when it has one', () => {
    expect(toolCallOf({ type: 'tool.requested', at: T, ...w })).toEqual({ id: 'w', name: 'pulse_control', kind: 'write' });
    expect(toolCallOf({ type: 'tool.failed', at: T, tool: 'pulse_control', kind: 'write' })).toEqual({
      name: 'pulse_control',
      kind: 'write',
    });
  });

  it('gives null for events that are not tool calls', () => {
    expect(toolCallOf({ type: 'answer.requested', at: T })).toBeNull();
    expect(toolCallOf({ type: 'clock.ticked', at: T })).toBeNull();
  });
});

describe('the abstraction', () => {
  it('a fresh session is offered a check of every kind, the answer, both resets and a clock jump past the TTL', () => {
    const events = safetyEventCases(freshSnapshot());
    expect(events.filter((e) => e.type === 'tool.requested').map((e) => (e as { kind: string }).kind)).toEqual([
      'resolve',
      'read',
      'write',
      'user_input',
      'neutral',
    ]);
    expect(events.some((e) => e.type === 'tool.succeeded')).toBe(false);
    const tick = events.find((e) => e.type === 'clock.ticked')!;
    const other = events.find((e) => e.type === 'answer.requested')!;
    expect(tick.at - other.at).toBe(RECOVERY_TTL_MS + 1);
    expect(events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['session.reset', 'session.resetKeepingProgress', 'answer.requested']),
    );
    expect(events.some((e) => e.type === 'verification.completed')).toBe(false);
  });

  it('with unchecked outcomes, every kind may be recorded at once, and a write without an id', () => {
    const events = safetyEventCases(freshSnapshot(), { includeUncheckedOutcomes: true }, SHORTEST_PATH_CASES);
    expect(events.filter((e) => e.type === 'tool.succeeded')).toHaveLength(6);
    expect(events.some((e) => e.type === 'tool.succeeded' && e.callId === undefined && e.kind === 'write')).toBe(true);
  });

  it('offers an outcome only for a call in flight, and no second check of its id', () => {
    const snapshot = snapshotAfter([{ type: 'tool.requested', at: T, tool: 'pulse_query', kind: 'resolve', callId: 'resolve-1' }]);
    const events = safetyEventCases(snapshot);
    expect(events.filter((e) => e.type === 'tool.succeeded').map((e) => (e as { callId?: string }).callId)).toEqual(['resolve-1']);
    // One non-write call in flight at a time: only a write may be checked beside it.
    expect(events.filter((e) => e.type === 'tool.requested').map((e) => (e as { kind: string }).kind)).toEqual(['write']);
  });

  it('times do not change the abstract state', () => {
    const at = (t: number): SafetyEvent[] => [
      { type: 'tool.requested', at: t, ...q },
      { type: 'tool.succeeded', at: t + 1, ...q },
      { type: 'tool.succeeded', at: t + 2, ...w },
    ];
    expect(abstractSafetyState(snapshotAfter(at(T)))).toBe(abstractSafetyState(snapshotAfter(at(T + 12_345))));
  });

  it('blocked writes in a row count up to three, then look alike', () => {
    const blocked = (n: number) =>
      snapshotAfter([
        { type: 'tool.succeeded', at: T, ...w },
        ...Array.from({ length: n }, (_, i): SafetyEvent => ({ type: 'tool.requested', at: T + i + 1, ...w })),
      ]);
    const keys = [0, 1, 2, 3, 4, 5].map((n) => abstractSafetyState(blocked(n)));
    expect(new Set(keys.slice(0, 4)).size).toBe(4);
    expect(keys[4]).toBe(keys[3]);
    expect(keys[5]).toBe(keys[3]);
  });

  it('tells a read that verifies the current write from one admitted before it', () => {
    const verifying = snapshotAfter([
      { type: 'tool.succeeded', at: T, ...w },
      { type: 'tool.requested', at: T + 1, ...q },
    ]);
    const stale = snapshotAfter([
      { type: 'tool.succeeded', at: T, ...w },
      { type: 'tool.requested', at: T + 1, ...q },
      { type: 'tool.succeeded', at: T + 2, tool: 'pulse_control', kind: 'write' },
    ]);
    expect(abstractSafetyState(verifying)).not.toBe(abstractSafetyState(stale));
    expect(abstractDecisionState(verifying)).not.toBe(abstractDecisionState(stale));
  });

  it('the decision abstraction ignores counters and recoveries', () => {
    const once = snapshotAfter([{ type: 'tool.requested', at: T, ...w }]);
    const twice = snapshotAfter([
      { type: 'tool.requested', at: T, ...w },
      { type: 'tool.requested', at: T + 1, ...w },
    ]);
    expect(abstractDecisionState(once)).toBe(abstractDecisionState(freshSnapshot()));
    expect(abstractDecisionState(twice)).toBe(abstractDecisionState(once));
    expect(abstractSafetyState(twice)).not.toBe(abstractSafetyState(once));
  });

  it('names the transition an event selects, and none when it selects nothing', () => {
    const fresh = freshSnapshot();
    expect(selectedTransitions(fresh, { type: 'tool.requested', at: T, ...w })).toBe('RESOLVING|safety.RESOLVING|tool.requested#1');
    expect(selectedTransitions(fresh, { type: 'tool.requested', at: T, ...q })).toBe('RESOLVING|safety.RESOLVING|tool.requested#2');
    expect(selectedTransitions(fresh, { type: 'session.reset', at: T })).toBe('RESOLVING|safety|session.reset#0');
    expect(selectedTransitions(fresh, { type: 'verification.completed', at: T })).toBe('RESOLVING|none');
  });
});

describe('paths with targets (DESIGN §5)', () => {
  const options: SafetyPathOptions = { targets: true, confirmDestructive: true };
  const targeted = once(() => getShortestSafetyPaths(options));
  const steps = () => targeted().flatMap((path) => path.steps);

  it('the session guard decides every step as the paths expect', () => {
    expect(targeted().flatMap((path) => mismatches(path, options))).toEqual([]);
  });

  it('some step refuses a write as unknown-target, and some as needs-confirmation', () => {
    const rules = new Set(steps().map((step) => step.decision?.rule));
    expect(rules).toContain('unknown-target');
    expect(rules).toContain('needs-confirmation');
  });

  it('some step records a self-verifying write, which leaves the session READING', () => {
    const selfVerified = steps().filter((step) => recordOptionsOf(step.event) !== undefined);
    expect(selfVerified.length).toBeGreaterThan(0);
    expect(selfVerified.some((step) => step.state === 'READING')).toBe(true);
  });

  it('calls name no target, one of PATH_TARGETS, or the unknown place UNKNOWN_PATH_TARGET', () => {
    const lists = new Set(steps().map((step) => JSON.stringify(toolCallOf(step.event)?.targets ?? [])));
    expect([...lists].sort()).toEqual(
      [
        JSON.stringify([]),
        JSON.stringify([PATH_TARGETS[0]]),
        JSON.stringify([PATH_TARGETS[1]]),
        JSON.stringify([UNKNOWN_PATH_TARGET]),
      ].sort(),
    );
  });

  it('some step admits a write to the unknown place (after user input), and some refuses it', () => {
    const unknownWrites = steps().filter(
      (step) => step.event.type === 'tool.requested' && step.event.kind === 'write' && step.event.targets?.[0] === UNKNOWN_PATH_TARGET,
    );
    expect(unknownWrites.some((step) => step.decision?.allowed === true)).toBe(true);
    expect(unknownWrites.some((step) => step.decision?.allowed === false && step.decision.rule === 'unknown-target')).toBe(true);
  });

  it('the simple paths ignore targets', () => {
    expect(getSimpleSafetyPaths({ targets: true }).length).toBe(getSimpleSafetyPaths().length);
  });

  it('refuses a targets option that is not a boolean', () => {
    expect(() => getShortestSafetyPaths({ targets: 'yes' } as unknown as SafetyPathOptions)).toThrow(/^invalid path options: targets: /);
  });

  it('a fresh session is offered a read and a write per target list, a destructive write, and user input without targets', () => {
    const checks = safetyEventCases(freshSnapshot(), options, TARGET_PATH_CASES).filter((e) => e.type === 'tool.requested');
    const described = checks.map((e) => `${e.kind} ${JSON.stringify(e.targets ?? [])}${e.destructive ? ' destructive' : ''}`);
    expect(described).toEqual([
      'read []',
      `read ["${PATH_TARGETS[0]}"]`,
      `read ["${PATH_TARGETS[1]}"]`,
      `read ["${UNKNOWN_PATH_TARGET}"]`,
      'write []',
      `write ["${PATH_TARGETS[0]}"]`,
      `write ["${PATH_TARGETS[1]}"]`,
      `write ["${UNKNOWN_PATH_TARGET}"]`,
      `write ["${PATH_TARGETS[0]}"] destructive`,
      'user_input []',
    ]);
  });

  it('an outcome of a call in flight names the targets it was checked with; a write’s success is also offered self-verified', () => {
    const snapshot = snapshotAfter([
      { type: 'tool.succeeded', at: T, tool: 'pulse_metrics', kind: 'read', targets: [PATH_TARGETS[0]] },
      { type: 'tool.requested', at: T, tool: 'pulse_control', kind: 'write', callId: 'write-1', targets: [PATH_TARGETS[1]] },
    ]);
    const outcomes = safetyEventCases(snapshot, options, TARGET_PATH_CASES).filter((e) => e.type !== 'tool.requested' && 'callId' in e);
    expect(outcomes).toEqual([
      { type: 'tool.succeeded', callId: 'write-1', tool: 'pulse_control', kind: 'write', at: 0, targets: [PATH_TARGETS[1]] },
      { type: 'tool.failed', callId: 'write-1', tool: 'pulse_control', kind: 'write', at: 0, targets: [PATH_TARGETS[1]] },
      {
        type: 'tool.succeeded',
        callId: 'write-1',
        tool: 'pulse_control',
        kind: 'write',
        at: 0,
        targets: [PATH_TARGETS[1]],
        selfVerified: true,
      },
    ]);
  });

  it('with unchecked outcomes, only writes are recorded without a check, and without targets', () => {
    const events = safetyEventCases(freshSnapshot(), { ...options, includeUncheckedOutcomes: true }, TARGET_PATH_CASES);
    const unchecked = events.filter((e) => e.type === 'tool.succeeded' || e.type === 'tool.failed');
    expect(new Set(unchecked.map((e) => e.kind))).toEqual(new Set(['write']));
    expect(unchecked.every((e) => e.targets === undefined)).toBe(true);
  });

  it('the target abstraction keeps established targets and the write’s, but not counters', () => {
    const established = snapshotAfter([{ type: 'tool.succeeded', at: T, tool: 'r', kind: 'read', targets: ['/b', '/a'] }]);
    const plain = snapshotAfter([{ type: 'tool.succeeded', at: T, tool: 'r', kind: 'read' }]);
    expect(abstractTargetState(established)).not.toBe(abstractTargetState(plain));
    expect(abstractTargetState(established)).toContain('["/a","/b"]');
    const blocked = snapshotAfter([
      { type: 'tool.succeeded', at: T, tool: 'r', kind: 'read' },
      { type: 'tool.succeeded', at: T, tool: 'w', kind: 'write' },
      { type: 'tool.requested', at: T, tool: 'w', kind: 'write' },
    ]);
    const unblocked = snapshotAfter([
      { type: 'tool.succeeded', at: T, tool: 'r', kind: 'read' },
      { type: 'tool.succeeded', at: T, tool: 'w', kind: 'write' },
    ]);
    expect(abstractTargetState(blocked)).toBe(abstractTargetState(unblocked));
  });

  it('the paths without targets abstract a session without targets as before', () => {
    expect(abstractSafetyState(freshSnapshot())).toBe(JSON.stringify(['RESOLVING', false, 0, [], [], false, false, true]));
  });

  it('keys a step by its abstract state and transition, but the final answer, completion and the clock by the state alone', () => {
    const fresh = freshSnapshot();
    const answer = { type: 'answer.requested' as const, at: T };
    expect(targetCoverageKey(fresh, answer, fresh)).toBe(abstractTargetState(fresh));
    const read = { type: 'tool.succeeded' as const, at: T, tool: 'r', kind: 'read' as const };
    const after = snapshotAfter([read]);
    expect(targetCoverageKey(after, read, fresh)).toBe(`${abstractTargetState(after)} via ${selectedTransitions(fresh, read)}`);
  });
});

describe('toolCallOf and recordOptionsOf with targets', () => {
  it('toolCallOf gives the targets and the destructive flag the event has', () => {
    expect(toolCallOf({ type: 'tool.requested', at: T, ...w, targets: ['/a'], destructive: true })).toEqual({
      id: 'w',
      name: 'pulse_control',
      kind: 'write',
      targets: ['/a'],
      destructive: true,
    });
  });

  it('recordOptionsOf gives a self-verifying result for a self-verified success, and nothing otherwise', () => {
    expect(recordOptionsOf({ type: 'tool.succeeded', at: T, ...w, selfVerified: true })).toEqual({ result: SELF_VERIFYING_RESULT });
    expect(recordOptionsOf({ type: 'tool.succeeded', at: T, ...w })).toBeUndefined();
    expect(recordOptionsOf({ type: 'tool.failed', at: T, ...w })).toBeUndefined();
  });
});

/**
 * Calls in flight after each step of a path, as a loop that records only
 * the calls it ran sees them: an admitted check adds its id, an outcome
 * removes it, a reset clears them all.
 */
function inFlightCounts(path: SafetyPath): number[] {
  const running = new Set<string>();
  return path.steps.map(({ event, decision }) => {
    if (event.type === 'session.reset' || event.type === 'session.resetKeepingProgress') running.clear();
    if (event.type === 'tool.requested' && decision?.allowed === true) running.add(event.callId!);
    if (event.type === 'tool.succeeded' || event.type === 'tool.failed') running.delete(event.callId!);
    return running.size;
  });
}

describe('paths for a turn-based loop (turnBased)', () => {
  const turnBased = once(() => [...getShortestSafetyPaths({ turnBased: true }), ...getSimpleSafetyPaths({ turnBased: true })]);

  it('no path has two calls in flight', () => {
    const two = turnBased().filter((path) => inFlightCounts(path).some((count) => count > 1));
    expect(two.map((path) => path.description)).toEqual([]);
  });

  it('the default paths do have two calls in flight somewhere (what turnBased leaves out)', () => {
    expect(defaults().some((path) => inFlightCounts(path).some((count) => count > 1))).toBe(true);
  });

  it('the step after an admitted check records that call', () => {
    for (const path of turnBased()) {
      path.steps.forEach((step, i) => {
        const next = path.steps[i + 1];
        if (step.event.type !== 'tool.requested' || step.decision?.allowed !== true || next === undefined) return;
        expect(['tool.succeeded', 'tool.failed'], path.description).toContain(next.event.type);
        expect(toolCallOf(next.event)?.id, path.description).toBe(step.event.callId);
      });
    }
  });

  for (const options of [
    { turnBased: true },
    { turnBased: true, strictFailedWrites: true },
    { turnBased: true, autoCompleteVerification: false, includeUncheckedOutcomes: true },
  ] satisfies SafetyPathOptions[]) {
    it(`the session guard decides every step as the paths expect, ${JSON.stringify(options)}`, () => {
      const paths = [...getShortestSafetyPaths(options), ...getSimpleSafetyPaths(options)];
      expect(paths.flatMap((path) => mismatches(path, options))).toEqual([]);
    });
  }

  it('with unchecked outcomes, an outcome of a call never checked comes only while no call is in flight', () => {
    for (const path of getShortestSafetyPaths({ turnBased: true, includeUncheckedOutcomes: true })) {
      const counts = inFlightCounts(path);
      path.steps.forEach(({ event }, i) => {
        if ((event.type !== 'tool.succeeded' && event.type !== 'tool.failed') || i === 0) return;
        const previous = path.steps[i - 1]!.event;
        const recordsRunning = previous.type === 'tool.requested' && previous.callId === event.callId;
        if (!recordsRunning) expect(counts[i - 1], path.description).toBe(0);
      });
    }
  });

  it('reach the refusals a turn-based loop can meet, and not write-in-flight', () => {
    const rules = new Set(turnBased().flatMap((path) => path.steps.map((step) => step.decision?.rule).filter(Boolean)));
    expect(rules).toEqual(new Set(['no-target', 'unverified-write']));
  });

  it('pass through every state (none ends in WRITING: a path that checks a write goes on to record it)', () => {
    expect(new Set(turnBased().flatMap((path) => path.steps.map((step) => step.state)))).toEqual(
      new Set(['RESOLVING', 'READING', 'WRITING', 'VERIFYING']),
    );
    expect(turnBased().filter((path) => path.steps.at(-1)?.state === 'WRITING')).toEqual([]);
  });

  it('while a call is in flight, only its outcomes are tried', () => {
    const snapshot = snapshotAfter([{ type: 'tool.requested', at: T, tool: 'pulse_query', kind: 'resolve', callId: 'resolve-1' }]);
    const events = safetyEventCases(snapshot, { turnBased: true, includeUncheckedOutcomes: true, autoCompleteVerification: false });
    expect(events.map((e) => `${e.type} ${'callId' in e ? e.callId : ''}`)).toEqual(['tool.succeeded resolve-1', 'tool.failed resolve-1']);
  });

  it('refuses a turnBased that is not a boolean', () => {
    expect(() => getShortestSafetyPaths({ turnBased: 1 } as unknown as SafetyPathOptions)).toThrow(/^invalid path options: turnBased: /);
  });
});

describe('the kind of every call is stated', () => {
  /** A classifier that throws: the guard fails such a call closed to a write, so a read asked of it would change the decisions. */
  const throwing = () => {
    throw new Error('no call of a path may need classifying');
  };

  it('every tool event of every path gives its call with the kind, so the guard classifies nothing', () => {
    const paths = [...defaults(), ...getShortestSafetyPaths({ turnBased: true })];
    expect(paths.flatMap((path) => mismatches(path, {}, { classify: throwing }))).toEqual([]);
  });

  it('the default classifier, given the calls as they are, decides every default and turn-based path as expected', () => {
    const paths = [...defaults(), ...getShortestSafetyPaths({ turnBased: true }), ...getSimpleSafetyPaths({ turnBased: true })];
    expect(paths.flatMap((path) => mismatches(path, {}, {}))).toEqual([]);
  });
});

describe('options for @xstate/graph on safetyMachine', () => {
  const fresh = () => freshSnapshot();

  it("the shortest paths try the path tests' event cases over the abstract state", () => {
    const options = shortestPathsGraphOptions();
    expect(options.events(fresh())).toEqual(safetyEventCases(fresh(), {}, SHORTEST_PATH_CASES));
    expect(options.serializeState(fresh(), undefined)).toBe(abstractSafetyState(fresh()));
  });

  it('verification completes by itself, as the guard does, unless autoCompleteVerification is false', () => {
    const completes = (options: ReturnType<typeof shortestPathsGraphOptions>) => [
      options.input.autoCompleteVerification,
      options.events(fresh()).some((e) => e.type === 'verification.completed'),
    ];
    expect(completes(shortestPathsGraphOptions())).toEqual([true, false]);
    expect(completes(shortestPathsGraphOptions({ autoCompleteVerification: false }))).toEqual([false, true]);
    expect(completes(simplePathsGraphOptions({ autoCompleteVerification: false }))).toEqual([false, true]);
  });

  it('coverage transitions keys a state by the transition that entered it', () => {
    const options = shortestPathsGraphOptions({ coverage: 'transitions' });
    const read = { type: 'tool.succeeded' as const, at: T, tool: 'pulse_metrics', kind: 'read' as const };
    const after = snapshotAfter([read]);
    expect(options.serializeState(after, read, fresh())).toBe(transitionCoverageKey(after, read, fresh()));
  });

  it('with targets, the shortest paths try the target cases over the target abstraction', () => {
    const options = shortestPathsGraphOptions({ targets: true, confirmDestructive: true });
    expect(options.input).toEqual({ strictFailedWrites: false, confirmDestructive: true, autoCompleteVerification: true });
    expect(options.events(fresh())).toEqual(safetyEventCases(fresh(), { targets: true, confirmDestructive: true }, TARGET_PATH_CASES));
  });

  it('getShortestPaths and getSimplePaths end over the options, and reach every state', () => {
    for (const paths of [
      getShortestPaths(safetyMachine, shortestPathsGraphOptions({ strictFailedWrites: true })),
      getSimplePaths(safetyMachine, simplePathsGraphOptions()),
    ]) {
      expect(new Set(paths.map((path) => path.state.value))).toEqual(new Set(['RESOLVING', 'READING', 'WRITING', 'VERIFYING']));
    }
  });

  it('turn-based graph paths never have two calls in flight', () => {
    for (const paths of [
      getShortestPaths(safetyMachine, shortestPathsGraphOptions({ turnBased: true })),
      getSimplePaths(safetyMachine, simplePathsGraphOptions({ turnBased: true })),
    ]) {
      expect(paths.filter((path) => path.steps.some((step) => step.state.context.inFlight.length > 1))).toEqual([]);
    }
  });

  it('createTestModel adds no bare event: every step of every path has its time, and every tool step its call', () => {
    for (const options of [testModelGraphOptions(), testModelGraphOptions({ strictFailedWrites: true, autoCompleteVerification: false })]) {
      const events = createTestModel(safetyMachine, options)
        .getShortestPaths()
        .flatMap((path) => path.steps.slice(1).map((step) => step.event)); // after the `xstate.init` step
      expect(events.filter((event) => typeof (event as SafetyEvent).at !== 'number')).toEqual([]);
      expect(events.filter((event) => event.type.startsWith('tool.') && toolCallOf(event as SafetyEvent)?.kind === undefined)).toEqual([]);
    }
  });

  it('testModelGraphOptions tries every event type the machine handles, in every state a path reaches', () => {
    for (const options of [testModelGraphOptions(), testModelGraphOptions({ autoCompleteVerification: false })]) {
      const handled = [
        'tool.requested',
        'tool.succeeded',
        'tool.failed',
        'answer.requested',
        'verification.completed',
        'session.reset',
        'session.resetKeepingProgress',
        'clock.ticked',
      ];
      for (const path of getShortestPaths(safetyMachine, options)) {
        expect(new Set(options.events(path.state).map((e) => e.type))).toEqual(new Set(handled));
      }
    }
  });

  it('a clock.ticked event is CLOCK_JUMP_MS after the others', () => {
    const events = shortestPathsGraphOptions().events(fresh());
    expect(events.find((e) => e.type === 'clock.ticked')!.at - events[0]!.at).toBe(CLOCK_JUMP_MS);
  });

  it('testModelGraphOptions refuses turnBased', () => {
    expect(() => testModelGraphOptions({ turnBased: true } as never)).toThrow(/^invalid test model graph options: turnBased: /);
  });

  it.each([
    [{ strictFailedWrite: true }, /strictFailedWrite/],
    [{ coverage: 'edges' }, /coverage: /],
    [{ startAt: 0 }, /startAt/],
    [{ tools: { write: '' } }, /tools\.write: must be a non-empty tool name/],
    [null, /invalid .* options/],
  ])('refuses bad options %j with a TypeError naming them', (options, message) => {
    for (const make of [shortestPathsGraphOptions, simplePathsGraphOptions, testModelGraphOptions]) {
      expect(() => make(options as never)).toThrow(TypeError);
      expect(() => make(options as never)).toThrow(message);
    }
  });
});
