/**
 * Every write names its target: each write of the target issue
 * (`test/fixtures/unrelated-reads.ts`) is refused after a read of something
 * else, with rule `unknown-target` naming the place it changes, and admitted
 * after what clears it (a read of that place, or the user's confirmation
 * when the place is only known when the command runs), through the session
 * guard and through the audit of a transcript; under `--policy spec` the
 * spec's session-wide rule admits it after the unrelated read, as before.
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants" (no write without a validated
 * target); DESIGN.md §5.1, §5.3.
 */
import { describe, expect, it } from 'vitest';
import { auditRuns, type AuditPolicy } from '../../src/audit/audit.js';
import { readTranscript } from '../../src/audit/transcripts/index.js';
import { builtinCatalogs, compileCatalog, createCallClassifier } from '../../src/classify/catalog/index.js';
import { createSessionGuard, type SessionGuard } from '../../src/guard/session-guard.js';
import { UNRELATED_READ_CASES, type CaseCall, type UnrelatedReadCase } from '../fixtures/unrelated-reads.js';

/** The user's confirmation: Claude Code's question to the user; a caller-given user input elsewhere. */
function confirmation(c: UnrelatedReadCase): CaseCall & { kind?: 'user_input' } {
  return c.catalog === 'claude-code'
    ? { name: 'AskUserQuestion', args: { questions: [{ question: 'Go ahead?' }] } }
    : { name: 'ask_user', args: {}, kind: 'user_input' };
}

/** A guard classifying with the case's catalog, in its working directory. */
function guardFor(c: UnrelatedReadCase): SessionGuard {
  const classify = createCallClassifier(builtinCatalogs[c.catalog]);
  return createSessionGuard({ classify: (name, args) => classify(name, args, c.cwd === undefined ? undefined : { cwd: c.cwd }) });
}

let ids = 0;
/** Checks a call and, when admitted, records its success; returns the decision. */
function run(guard: SessionGuard, call: CaseCall & { kind?: 'user_input' }) {
  const id = `c${(ids += 1)}`;
  const decision = guard.check({ id, ...call });
  if (decision.allowed) guard.record({ id, name: call.name }, 'success');
  return decision;
}

/** The calls before the write: the earlier writes with their reads, then the unrelated read. */
function prelude(c: UnrelatedReadCase): CaseCall[] {
  return [...(c.before ?? []).flatMap(({ read, write }) => [read, write]), c.unrelated];
}

function expectTarget(actual: string | null | undefined, expected: string | RegExp): void {
  if (typeof expected === 'string') expect(actual).toBe(expected);
  else expect(actual).toMatch(expected);
}

describe('through the session guard', () => {
  it.each(UNRELATED_READ_CASES.map((c) => [c.title, c] as const))('%s: refused after the unrelated read', (_, c) => {
    const guard = guardFor(c);
    for (const call of prelude(c)) expect(run(guard, call).allowed, JSON.stringify(call)).toBe(true);
    const decision = run(guard, c.write);
    expect(decision.allowed).toBe(false);
    if (decision.allowed) return;
    expect(decision.error.code).toBe('FSM_BLOCKED');
    expect(decision.error.rule).toBe('unknown-target');
    expectTarget(decision.error.target, c.refusedTarget);
    // Refused again, however often it is tried.
    expect(run(guard, c.write).allowed).toBe(false);
  });

  it.each(UNRELATED_READ_CASES.map((c) => [c.title, c] as const))('%s: admitted after what clears it', (_, c) => {
    const guard = guardFor(c);
    for (const call of prelude(c)) run(guard, call);
    expect(run(guard, c.write).allowed).toBe(false);
    const clearing = c.clearedBy === 'user' ? confirmation(c) : c.clearedBy;
    expect(run(guard, clearing).allowed).toBe(true);
    expect(run(guard, c.write).allowed).toBe(true);
  });

  it.each(UNRELATED_READ_CASES.filter((c) => c.clearedBy === 'user').map((c) => [c.title, c] as const))(
    '%s: a confirmation clears one write only',
    (_, c) => {
      const guard = guardFor(c);
      for (const call of prelude(c)) run(guard, call);
      run(guard, confirmation(c));
      expect(run(guard, c.write).allowed).toBe(true);
      // Verified by a later read (its place is not known, so any read is its evidence), then needs confirming again.
      expect(run(guard, c.unrelated).allowed).toBe(true);
      expect(run(guard, c.write).allowed).toBe(false);
    },
  );
});

/** A transcript of the case's calls, each successful, in the generic JSON lines format. */
function transcript(c: UnrelatedReadCase, calls: (CaseCall & { kind?: string })[]) {
  const lines = calls.flatMap(({ name, args }, i) => [
    { type: 'call', id: `t${i}`, name, args, ...(c.cwd === undefined ? {} : { cwd: c.cwd }) },
    { type: 'result', id: `t${i}`, outcome: 'success' },
  ]);
  return readTranscript(lines.map((line) => JSON.stringify(line)).join('\n'), `${c.catalog}.jsonl`)[0]!;
}

/** The audit's decision on the last call of the transcript. */
function lastDecision(c: UnrelatedReadCase, calls: CaseCall[], policy?: AuditPolicy) {
  const report = auditRuns([transcript(c, calls)], { catalog: compileCatalog(builtinCatalogs[c.catalog]), ...(policy ? { policy } : {}) });
  const decisions = report.runs[0]!.findings.filter((f) => f.step.type === 'call').map((f) => f.decision!);
  expect(decisions).toHaveLength(calls.length);
  return decisions[decisions.length - 1]!;
}

describe('through the audit', () => {
  it.each(UNRELATED_READ_CASES.map((c) => [c.title, c] as const))('%s: refused after the unrelated read', (_, c) => {
    const decision = lastDecision(c, [...prelude(c), c.write]);
    expect(decision.allowed).toBe(false);
    expect(decision.rule).toBe('unknown-target');
    const named = /\(target: ("(?:[^"\\]|\\.)*")\)/.exec(decision.reason ?? '');
    expectTarget(named === null ? null : (JSON.parse(named[1]!) as string), c.refusedTarget);
  });

  it.each(UNRELATED_READ_CASES.filter((c) => c.catalog === 'claude-code').map((c) => [c.title, c] as const))(
    '%s: admitted after what clears it',
    (_, c) => {
      const clearing = c.clearedBy === 'user' ? confirmation(c) : c.clearedBy;
      expect(lastDecision(c, [...prelude(c), clearing, c.write]).allowed).toBe(true);
    },
  );

  it.each(UNRELATED_READ_CASES.filter((c) => c.before === undefined).map((c) => [c.title, c] as const))(
    "%s: --policy spec keeps the spec's session-wide rule",
    (_, c) => {
      expect(lastDecision(c, [...prelude(c), c.write], 'spec').allowed).toBe(true);
    },
  );
});
