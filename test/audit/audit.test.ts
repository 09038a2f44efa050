import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { reasonWithTarget, TOOL_BLOCK_REASONS } from '../../machines/safety.policy.js';
import { createReplayGuard, createSessionGuard, type ToolCall } from '../../src/guard/session-guard.js';
import { auditRun, auditRuns, RunAuditor, summarize, type AuditGate, type AuditGateOf } from '../../src/audit/audit.js';
import { formatAuditText, formatRunText } from '../../src/audit/format.js';
import { builtinCatalogs, compileCatalog } from '../../src/classify/catalog/index.js';
import { demoRuns } from '../../src/audit/demo.js';
import { readTranscript, type TranscriptRun } from '../../src/audit/transcripts/index.js';

/** A run from JSONL lines (this project's event format). */
function run(...lines: object[]): TranscriptRun {
  return readTranscript(lines.map((line) => JSON.stringify(line)).join('\n'), 'test.jsonl')[0]!;
}
const call = (id: string, name: string, args: object = {}) => ({ type: 'call', id, name, args });
const ok = (id: string) => ({ type: 'result', id, outcome: 'success' });
const failed = (id: string) => ({ type: 'result', id, outcome: 'error' });
const answer = (text = 'done') => ({ type: 'answer', text });

describe('shadow mode', () => {
  test('a write before any target is reported as blocked, with state, rule and reason', () => {
    const audit = auditRun(run(call('w', 'pulse_control'), failed('w')));
    expect(audit.refusals).toMatchObject([
      { subject: 'tool', tool: 'pulse_control', kind: 'write', state: 'RESOLVING', rule: 'no-target', position: 'line 1' },
    ]);
    expect(audit.refusals[0]!.reason).toMatch(/^POLICY_BLOCKED:/);
  });

  test('a refused call carries the structured tool result the model would have got', () => {
    const audit = auditRun(run(call('w', 'pulse_control')));
    expect(audit.findings[0]!.decision?.toolResult?.error).toMatchObject({ code: 'FSM_BLOCKED', blocked: true, state: 'RESOLVING' });
  });

  test("a refusal's message and tool result are those of the guard's FSMBlockedError for the same call", () => {
    // The audit builds them without an Error (src/errors/ builds both); a guard driven by hand gives the reference.
    const steps = run(call('r', 'pulse_query'), ok('r'), call('w', 'pulse_control'), ok('w'), call('v', 'pulse_control'), answer());
    const audit = auditRun(steps);
    const guard = createSessionGuard({ now: () => 0 });
    guard.check({ id: 'r', name: 'pulse_query' });
    guard.record({ id: 'r', name: 'pulse_query' });
    guard.check({ id: 'w', name: 'pulse_control' });
    guard.record({ id: 'w', name: 'pulse_control' });
    const refusedCall = guard.check({ id: 'v', name: 'pulse_control' });
    const refusedAnswer = guard.finalAnswer();
    if (refusedCall.allowed || refusedAnswer.allowed) throw new Error('expected both to be refused');
    const [callFinding, answerFinding] = audit.findings.slice(4);
    expect(callFinding!.decision).toMatchObject({
      rule: refusedCall.error.rule,
      reason: refusedCall.error.reason,
      message: refusedCall.error.message,
    });
    expect(callFinding!.decision!.toolResult).toStrictEqual(refusedCall.error.toToolResult());
    expect(answerFinding!.decision).toMatchObject({
      rule: refusedAnswer.error.rule,
      message: refusedAnswer.error.message,
      toolResult: null,
    });
  });

  test.each([
    ['strictFailedWrites', 'yes', 'must be a boolean'],
    ['autoCompleteVerification', null, 'must be a boolean'],
    ['trace', 1, 'must be a boolean'],
    ['policy', 'strict', 'must be one of spec, targets, full'],
    ['detail', 'some', 'must be one of all, refusals, counts'],
    ['stepMs', -1, 'must be between 0 and MAX_TIME_MS'],
    ['startAt', Number.NaN, 'must be a number'],
    ['classify', 'tau', 'must be a function'],
    ['catalog', { name: 'x' }, 'must be a compiled catalog (compileCatalog)'],
  ])('options.%s = %o is refused with a TypeError naming it', (key, value, expected) => {
    const options = { [key]: value } as never;
    expect(() => auditRun(run(answer()), options)).toThrow(new TypeError(`audit: options.${key} ${expected}`));
    expect(() => new RunAuditor({ id: 'r', reward: null }, options)).toThrow(TypeError);
  });

  test('a misspelled option is refused by name, even with no run to audit', () => {
    expect(() => auditRuns([], { strictFailedWrite: true } as never)).toThrow(
      /^audit: options\.strictFailedWrite is not an option \(the options are catalog, classify, policy, /,
    );
  });

  test('the real outcome of a refused write is recorded, so the session follows what happened', () => {
    const audit = auditRun(run(call('w', 'pulse_control'), ok('w'), answer()));
    expect(audit.findings[1]!.stateAfter).toBe('VERIFYING');
    expect(audit.refusals.map((r) => r.subject)).toEqual(['tool', 'answer']);
  });

  test('an answer after an unverified write is refused; after a read it is allowed', () => {
    const audit = auditRun(
      run(call('r', 'pulse_query'), ok('r'), call('w', 'pulse_control'), ok('w'), answer(), call('m', 'pulse_metrics'), ok('m'), answer()),
    );
    expect(audit.refusals.map((r) => [r.subject, r.rule])).toEqual([['answer', 'unverified-write']]);
    expect(audit.findings.at(-1)!.decision).toMatchObject({ allowed: true });
  });

  test('an answer claiming a change no call made is refused as a phantom claim; the spec policy and the option turn it off', () => {
    const steps = run(call('r', 'pulse_query'), ok('r'), answer('I restarted the web server.'), answer('The web server is up.'));
    const audit = auditRun(steps);
    expect(audit.refusals.map((r) => [r.subject, r.rule, r.state, r.position])).toEqual([['answer', 'phantom-claim', 'READING', 'line 3']]);
    expect(audit.refusals[0]!.reason).toContain('"I restarted the web server."');
    expect(audit.refusalsByReason).toMatchObject([{ subject: 'answer', rule: 'phantom-claim', count: 1 }]);
    expect(formatRunText(audit)).toContain('would have been refused: final answer in READING [phantom-claim]');
    expect(auditRun(steps, { policy: 'spec' }).refusals).toEqual([]);
    expect(auditRun(steps, { phantomClaims: false }).refusals).toEqual([]);
  });

  test('reads are never refused, in any state', () => {
    const audit = auditRun(
      run(
        call('r0', 'pulse_read'),
        call('r', 'pulse_query'),
        ok('r'),
        call('w', 'pulse_control'),
        call('r2', 'pulse_read'),
        ok('w'),
        call('r3', 'pulse_read'),
      ),
    );
    const reads = audit.findings.filter((f) => f.step.type === 'call' && f.step.name === 'pulse_read');
    expect(reads.map((f) => [f.stateBefore, f.decision?.allowed])).toEqual([
      ['RESOLVING', true],
      ['WRITING', true],
      ['VERIFYING', true],
    ]);
  });

  test('a successful call of a blocked tool is reported as a recovery', () => {
    const audit = auditRun(
      run(call('w1', 'pulse_control'), failed('w1'), call('r', 'pulse_query'), ok('r'), call('w2', 'pulse_control'), ok('w2')),
    );
    expect(audit.recoveries).toBe(1);
    expect(audit.findings[5]!.recovered).toMatchObject({ tool: 'pulse_control', attempts: 1 });
  });

  test('a refused call that ran anyway and succeeded is not counted as a recovery', () => {
    const audit = auditRun(run(call('w', 'pulse_control'), ok('w')));
    expect(audit.recoveries).toBe(0);
    expect(audit.findings[1]!.recovered).toBeNull();
  });

  test('a result of no call the transcript shows, and with no name, is not recorded', () => {
    const steps = readTranscript(
      JSON.stringify([
        { role: 'tool', tool_call_id: 'ghost', content: 'ok' },
        { role: 'assistant', content: 'All good.' },
      ]),
      'orphan.json',
    )[0]!;
    const audit = auditRun(steps);
    expect(audit.findings[0]!.stateAfter).toBe('RESOLVING');
    expect(audit.refusals).toEqual([]);
  });

  test('a clock step past the TTL expires a pending recovery', () => {
    const audit = auditRun(run(call('w', 'pulse_control'), { type: 'clock', advanceMs: 600_001 }), { trace: true });
    expect(Object.keys(audit.findings[0]!.context!.pendingRecoveries)).toEqual(['FSM_BLOCKED:pulse_control']);
    expect(audit.findings[1]!.context!.pendingRecoveries).toEqual({});
  });

  test('each step advances the audit clock by stepMs from startAt', () => {
    const audit = auditRun(run(answer(), answer()), { startAt: 5_000, stepMs: 250 });
    expect(audit.findings.map((f) => f.at)).toEqual([5_250, 5_500]);
  });

  test('reset and resetKeepProgress steps reach the session', () => {
    const audit = auditRun(run(call('r', 'pulse_query'), ok('r'), { type: 'resetKeepProgress' }, { type: 'reset' }));
    expect(audit.findings.slice(2).map((f) => f.stateAfter)).toEqual(['READING', 'RESOLVING']);
  });

  test('strict failed writes make a failed write need verification', () => {
    const steps = run(call('r', 'pulse_query'), ok('r'), call('w', 'pulse_control'), failed('w'), answer());
    expect(auditRun(steps).refusals).toHaveLength(0);
    expect(auditRun(steps, { strictFailedWrites: true }).refusals.map((r) => r.subject)).toEqual(['answer']);
  });

  test('the classifier option decides the kinds', () => {
    const tau = compileCatalog(builtinCatalogs['tau-airline']).kindOf;
    const audit = auditRun(run(call('c', 'cancel_reservation')), { classify: tau });
    expect(audit.writes).toBe(1);
    expect(audit.refusals[0]!.rule).toBe('no-target');
  });
});

describe('call ids, grouping and result reading', () => {
  test('a call id reused before its result is a call of its own, and its results settle the oldest call first', () => {
    // A read and then a write under one id: the first result settles the read (the write stays in flight), the second the write.
    const steps = run(call('r', 'pulse_query'), ok('r'), call('x', 'pulse_metrics'), call('x', 'pulse_control'), ok('x'), ok('x'));
    const audit = auditRun(steps);
    expect(audit.refusals).toEqual([]);
    expect(audit.findings.slice(3).map((f) => f.stateAfter)).toEqual(['WRITING', 'WRITING', 'VERIFYING']);
  });

  test('ids with # are matched as ids without: a reused one too', () => {
    const steps = run(
      call('r#1', 'pulse_query'),
      ok('r#1'),
      call('x#1', 'pulse_metrics'),
      call('x#1', 'pulse_control'),
      ok('x#1'),
      ok('x#1'),
    );
    const audit = auditRun(steps);
    expect(audit.refusals).toEqual([]);
    expect(audit.findings.slice(3).map((f) => f.stateAfter)).toEqual(['WRITING', 'WRITING', 'VERIFYING']);
  });

  /** What the audit decided at each step: state before and after, allowed, rule, recovery. */
  const decisions = (steps: TranscriptRun) =>
    auditRun(steps).findings.map((f) => [
      f.stateBefore,
      f.stateAfter,
      f.decision?.allowed ?? null,
      f.decision?.rule ?? null,
      f.recovered?.tool ?? null,
    ]);

  test('a log id that looks like a reused id made up for the guard (a, a, then a#1) is a call of its own', () => {
    // The second `a` gets a guard id of its own; the log's own `a#1` must not collide with it.
    const reused = run(
      call('r', 'pulse_query'),
      ok('r'),
      call('a', 'pulse_metrics'),
      call('a', 'pulse_control'),
      call('a#1', 'pulse_metrics'),
      ok('a#1'),
      ok('a'),
      ok('a'),
      call('a#1', 'pulse_metrics'),
      ok('a#1'),
    );
    const unique = run(
      call('r', 'pulse_query'),
      ok('r'),
      call('x', 'pulse_metrics'),
      call('y', 'pulse_control'),
      call('z', 'pulse_metrics'),
      ok('z'),
      ok('x'),
      ok('y'),
      call('v', 'pulse_metrics'),
      ok('v'),
    );
    expect(decisions(reused)).toEqual(decisions(unique));
  });

  test('a log id of the longest length (MAX_NAME_LENGTH) reused before its result is audited as a short one', () => {
    const long = 'i'.repeat(512);
    const reused = run(call('r', 'pulse_query'), ok('r'), call(long, 'pulse_metrics'), call(long, 'pulse_control'), ok(long), ok(long));
    const short = run(call('r', 'pulse_query'), ok('r'), call('x', 'pulse_metrics'), call('x', 'pulse_control'), ok('x'), ok('x'));
    expect(decisions(reused)).toEqual(decisions(short));
  });

  test('calls in flight before the first id with # are settled as they were opened', () => {
    // v is refused while w is in flight: its success (it ran anyway), settled after an id with # came, is no recovery.
    const steps = run(
      call('r', 'pulse_query'),
      ok('r'),
      call('w', 'pulse_control'),
      call('v', 'pulse_control'),
      call('y#1', 'pulse_metrics'),
      ok('v'),
      ok('y#1'),
      ok('w'),
    );
    const audit = auditRun(steps);
    expect(audit.refusals.map((r) => r.index)).toEqual([3]);
    expect(audit.findings.slice(5).map((f) => f.stateAfter)).toEqual(['VERIFYING', 'VERIFYING', 'VERIFYING']);
    expect(audit.recoveries).toBe(0);
  });

  test('a refused call stays open across many others settled meanwhile: its late success is still no recovery', () => {
    const reads = Array.from({ length: 150 }, (_, i) => [call(`m${i}`, 'pulse_metrics'), ok(`m${i}`)]).flat();
    const steps = run(call('r', 'pulse_query'), ok('r'), call('w', 'pulse_control'), call('v', 'pulse_control'), ...reads, ok('v'));
    const audit = auditRun(steps);
    expect(audit.refusals.map((r) => r.rule)).toEqual(['write-in-flight']);
    expect(audit.findings.at(-1)!.recovered).toBeNull();
    expect(audit.recoveries).toBe(0);
  });

  test('a shell write whose output says verification.ok is not verified by it (the command chose its output)', () => {
    const claudeCode = compileCatalog(builtinCatalogs['claude-code']);
    const bashCall = (id: string, command: string) => call(id, 'Bash', { command });
    const result = (id: string, text: string) => ({ type: 'result', id, outcome: 'success', text });
    const steps = run(
      bashCall('l', 'ls /srv'),
      result('l', 'app'),
      bashCall('w', `rm -rf /srv/app; echo '{"verification":{"ok":true}}'`),
      result('w', '{"verification":{"ok":true}}'),
      answer(),
    );
    const audit = auditRun(steps, { catalog: claudeCode });
    expect(audit.refusals.map((r) => [r.subject, r.rule])).toEqual([['answer', 'unverified-write']]);
  });

  test("a result under a log's own id that is the guard id made up for another call in flight settles nothing", () => {
    const claudeCode = compileCatalog(builtinCatalogs['claude-code']);
    const read = (id: string) => call(id, 'Read', { file_path: '/tmp/f' });
    const steps = run(
      read('r'),
      ok('r'),
      read('a'),
      call('a', 'Edit', { file_path: '/tmp/f', old_string: 'x', new_string: 'y' }),
      { type: 'result', id: 'a#1', name: 'Edit', outcome: 'error' },
      answer(),
    );
    const audit = auditRun(steps, { catalog: claudeCode });
    expect(audit.findings[3]!.stateAfter).toBe('WRITING');
    expect(audit.refusals.map((r) => [r.subject, r.rule])).toEqual([['answer', 'write-in-flight']]);
  });

  test('an id reused after its result is the same id again', () => {
    const steps = run(
      call('r', 'pulse_query'),
      ok('r'),
      call('w', 'pulse_control'),
      ok('w'),
      call('r', 'pulse_metrics'),
      ok('r'),
      call('w', 'pulse_control'),
      ok('w'),
    );
    const audit = auditRun(steps);
    expect(audit.refusals).toEqual([]);
    expect(audit.findings.map((f) => f.stateAfter)).toEqual([
      'RESOLVING',
      'READING',
      'WRITING',
      'VERIFYING',
      'VERIFYING',
      'READING',
      'WRITING',
      'VERIFYING',
    ]);
  });

  test("a run's refusals are grouped by subject and rule in the order first seen, with the rule's reason and a count", () => {
    const audit = auditRun(
      run(
        call('a', 'pulse_control'),
        call('b', 'pulse_control'),
        answer(),
        call('r', 'pulse_query'),
        ok('r'),
        call('c', 'pulse_control'),
        call('d', 'pulse_control'),
      ),
    );
    expect(audit.refusalsByReason.map(({ subject, rule, count }) => [subject, rule, count])).toEqual([
      ['tool', 'no-target', 2],
      ['tool', 'write-in-flight', 1],
    ]);
    expect(audit.refusalsByReason[0]!.reason).toBe(audit.refusals[0]!.reason);
  });

  test("a group's reason is its rule's, without the target each refusal names", () => {
    const claudeCode = compileCatalog(builtinCatalogs['claude-code']);
    const bash = (id: string, command: string) => call(id, 'Bash', { command });
    const audit = auditRun(run(bash('l', 'ls'), ok('l'), bash('a', 'rm -rf ~/a'), bash('b', 'rm -rf /b')), { catalog: claudeCode });
    expect(audit.refusals.map((r) => r.reason)).toEqual([
      reasonWithTarget(TOOL_BLOCK_REASONS['unknown-target'], '~/a'),
      reasonWithTarget(TOOL_BLOCK_REASONS['unknown-target'], '/b'),
    ]);
    expect(audit.refusalsByReason).toEqual([
      { subject: 'tool', rule: 'unknown-target', reason: TOOL_BLOCK_REASONS['unknown-target'], count: 2 },
    ]);
  });

  test('a refused answer is grouped apart from refused calls', () => {
    const audit = auditRun(run(call('r', 'pulse_query'), ok('r'), call('w', 'pulse_control'), ok('w'), answer(), answer()));
    expect(audit.refusalsByReason.map(({ subject, rule, count }) => [subject, rule, count])).toEqual([['answer', 'unverified-write', 2]]);
  });

  test('with detail counts, refusals are counted and grouped but not kept', () => {
    const auditor = new RunAuditor({ id: 'x', reward: null }, { detail: 'counts' });
    for (const step of run(call('a', 'pulse_control'), call('b', 'pulse_control')).steps) auditor.step(step);
    const audit = auditor.finish();
    expect([audit.blockedCalls, audit.refusals, audit.findings]).toEqual([2, [], []]);
    expect(audit.refusalsByReason.map((group) => group.count)).toEqual([2]);
  });

  test('a refusal lists the run, step and state before its own fields', () => {
    const audit = auditRun(run(call('a', 'pulse_control')));
    expect(Object.keys(audit.refusals[0]!)).toEqual([
      'runId',
      'index',
      'position',
      'state',
      'subject',
      'tool',
      'kind',
      'targets',
      'destructive',
      'rule',
      'reason',
      'message',
      'target',
      'earlierWrite',
    ]);
  });

  test('a kind-only classifier gives no targets and no destructive flag, where the catalog would', () => {
    const steps = run(call('c', 'cancel_reservation', { reservation_id: 'ABC123' }));
    const byCatalog = auditRun(steps, { catalog: compileCatalog(builtinCatalogs['tau-airline']) });
    const byKind = auditRun(steps, { classify: compileCatalog(builtinCatalogs['tau-airline']).kindOf });
    expect(byCatalog.findings[0]!.decision!.targets).not.toEqual([]);
    expect(byKind.findings[0]!.decision).toMatchObject({ kind: 'write', targets: [], destructive: false });
  });

  test("a success whose text starts with one of the catalog's failure markers (after whitespace) is read as a failure", () => {
    const codex = compileCatalog(builtinCatalogs.codex);
    const patched = (text: string) =>
      run(
        call('l', 'list_dir', { dir_path: '/src' }),
        ok('l'),
        call('p', 'apply_patch', { input: '*** Begin Patch' }),
        { type: 'result', id: 'p', outcome: 'success', text },
        answer(),
      );
    // A failed write needs no verification (strict failed writes off): the answer is allowed.
    expect(auditRun(patched('  apply_patch verification failed: hunk 1'), { catalog: codex }).refusedAnswers).toBe(0);
    expect(auditRun(patched('Done! apply_patch verification failed'), { catalog: codex }).refusedAnswers).toBe(1);
  });
});

describe('the gate an audit replays through', () => {
  // Two different writes (the same one again after its failure would be refused as repeated-write).
  const steps = run(
    call('r', 'pulse_query'),
    ok('r'),
    call('w', 'pulse_control'),
    failed('w'),
    call('v', 'pulse_control', { action: 'stop' }),
    answer(),
  );

  test("gateOf gets the audit's clock and flags, one gate per run", () => {
    const settings: { at: number[]; strictFailedWrites: boolean; autoCompleteVerification: boolean }[] = [];
    const report = auditRuns([steps, steps], { strictFailedWrites: true, stepMs: 5, startAt: 100 }, (given) => {
      const seen = {
        at: [] as number[],
        strictFailedWrites: given.strictFailedWrites,
        autoCompleteVerification: given.autoCompleteVerification,
      };
      settings.push(seen);
      return createReplayGuard({ ...given, now: () => (seen.at.push(given.now()), given.now()) });
    });
    expect(settings.map(({ strictFailedWrites, autoCompleteVerification }) => [strictFailedWrites, autoCompleteVerification])).toEqual([
      [true, true],
      [true, true],
    ]);
    expect(settings[0]!.at.slice(0, 2)).toEqual([105, 110]);
    // Strict failed writes: the failed write needs verification, so the second write is refused.
    expect(report.runs[0]!.refusals.map((r) => r.rule)).toEqual(['unverified-write', 'unverified-write']);
  });

  test("the report is the gate's decisions: a gate that admits every call refuses nothing", () => {
    const admitting = (given: Parameters<AuditGateOf>[0]): AuditGate => {
      const inner = createReplayGuard(given);
      return {
        get state() {
          return inner.state;
        },
        get context() {
          return inner.context;
        },
        decideCall: (c: ToolCall) => ({ ...inner.decideCall({ ...c, kind: 'read' }), kind: c.kind ?? 'write' }),
        decideAnswer: () => ({ ...inner.decideAnswer(), allowed: true, rule: null, reason: null }),
        record: (c, outcome, options) => inner.record({ ...c, kind: 'read' }, outcome, options),
        reset: () => inner.reset(),
        resetKeepProgress: () => inner.resetKeepProgress(),
        tick: () => inner.tick(),
      };
    };
    // The session guard refuses the answer while the second write is in flight.
    expect(auditRun(steps).refusals.map((r) => [r.subject, r.rule])).toEqual([['answer', 'write-in-flight']]);
    const audit = auditRun(steps, {}, admitting);
    expect([audit.blockedCalls, audit.refusedAnswers, audit.refusals]).toEqual([0, 0, []]);
    expect(audit.writes).toBe(2);
  });

  test('the default gate is the session guard: the same report as a gate made by createReplayGuard', () => {
    expect(auditRun(steps, { strictFailedWrites: true }, (given) => createReplayGuard(given))).toEqual(
      auditRun(steps, { strictFailedWrites: true }),
    );
  });
});

describe('summary', () => {
  const runs = [
    { ...run(call('w', 'pulse_control'), answer()), id: 'a', reward: 1 },
    { ...run(call('r', 'pulse_query'), ok('r'), answer()), id: 'b', reward: 0 },
    {
      ...run(call('r', 'pulse_query'), ok('r'), call('w', 'pulse_control'), ok('w'), answer(), call('x', 'pulse_control')),
      id: 'c',
      reward: 0,
    },
  ];

  test('counts runs, calls, writes, blocked calls, refused answers and runs with a refusal', () => {
    const { summary } = auditRuns(runs);
    expect(summary).toMatchObject({ runs: 3, calls: 5, writes: 3, blockedCalls: 2, refusedAnswers: 1, runsWithRefusal: 2 });
  });

  test('groups blocked calls by reason, most frequent first', () => {
    const { summary } = auditRuns(runs);
    expect(summary.blocksByReason.map((g) => [g.rule, g.count])).toEqual([
      ['no-target', 1],
      ['unverified-write', 1],
    ]);
  });

  test('splits the figures by successful (reward > 0) and failed runs', () => {
    const { summary } = auditRuns(runs);
    expect(summary.byReward?.successful).toMatchObject({ runs: 1, blockedCalls: 1, runsWithRefusal: 1 });
    expect(summary.byReward?.failed).toMatchObject({ runs: 2, blockedCalls: 1, refusedAnswers: 1, runsWithRefusal: 1 });
  });

  test('has no reward split when no run has a reward', () => {
    expect(summarize([auditRun(run(answer()))]).byReward).toBeNull();
  });

  test('the text report lists each refusal with state and reason, then the summary', () => {
    const text = formatAuditText(auditRuns(runs));
    expect(text).toContain(
      "line 1: would have been refused: write 'pulse_control' in RESOLVING [no-target]: state-changing tools need a validated target;",
    );
    expect(text).toMatch(/runs with a refusal\s+2 of 3/);
    expect(text).toContain('successful (reward > 0)');
  });

  test("a run's headline counts the calls and the final answers it would have refused apart", () => {
    const [, , c] = auditRuns(runs).runs;
    expect(formatRunText(c!).split('\n')[0]).toBe(
      'run c (reward 0): 3 calls, 1 would have been refused, 1 final answer would have been refused, ends in VERIFYING (unverified: a change nobody looked at)',
    );
  });

  test("a run's headline says one call in the singular, and that nothing would have been refused when nothing was", () => {
    const [, b] = auditRuns(runs).runs;
    expect(formatRunText(b!).split('\n')[0]).toBe('run b (reward 0): 1 call, nothing would have been refused, ends in READING');
  });

  test("a run's headline leaves out the refused answers when there are none", () => {
    const [a] = auditRuns(runs).runs;
    expect(formatRunText(a!).split('\n')[0]).toMatch(/^run a \(reward 1\): 1 call, 1 would have been refused, ends in /);
  });

  test('the summary-only text report leaves out the runs', () => {
    const text = formatAuditText(auditRuns(runs), { summaryOnly: true });
    expect(text).not.toContain('line 1:');
    expect(text).toMatch(/refused calls\s+2/);
  });
});

describe('the embedded demo transcript', () => {
  const [demo] = auditRuns(demoRuns()).runs;

  test('refuses a write for each rule: no target, write in flight, unverified write', () => {
    const rules = new Set(demo!.refusals.filter((r) => r.subject === 'tool').map((r) => r.rule));
    expect([...rules].sort()).toEqual(['no-target', 'unverified-write', 'write-in-flight']);
  });

  test('refuses an answer about an unverified change, then allows one after a read', () => {
    const answers = demo!.findings.filter((f) => f.step.type === 'answer').map((f) => f.decision?.allowed);
    expect(answers.slice(0, 3)).toEqual([false, false, true]);
  });

  test('repeated blocked writes never wear the gate down', () => {
    const blocked = demo!.refusals.filter((r) => r.tool === 'pulse_control_docker' && r.rule === 'unverified-write');
    expect(blocked.length).toBeGreaterThanOrEqual(2);
  });

  test('user input between a write and its verification does not verify it', () => {
    const question = demo!.findings.findIndex((f) => f.step.type === 'call' && f.step.name === 'pulse_question');
    const nextAnswer = demo!.findings.slice(question).find((f) => f.step.type === 'answer');
    expect(nextAnswer?.decision?.allowed).toBe(false);
  });

  test('clears a pending recovery when the blocked tool later succeeds', () => {
    expect(demo!.findings.some((f) => f.recovered?.tool === 'pulse_control_docker' && f.recovered.attempts === 3)).toBe(true);
  });

  test('lets a pending recovery expire after ten minutes', () => {
    const [traced] = auditRuns(demoRuns(), { trace: true }).runs;
    const clock = traced!.findings.findIndex((f) => f.step.type === 'clock');
    expect(Object.keys(traced!.findings[clock - 1]!.context!.pendingRecoveries)).toContain('FSM_BLOCKED:pulse_file_edit');
    expect(traced!.findings[clock]!.context!.pendingRecoveries).toEqual({});
  });

  test('ends in RESOLVING after a reset, where a write is refused again for want of a target', () => {
    expect(demo!.finalState).toBe('RESOLVING');
    expect(demo!.refusals.at(-1)).toMatchObject({ rule: 'no-target', state: 'RESOLVING' });
  });
});

describe('real transcripts: tau-bench airline, GPT-4o (200 runs)', () => {
  const file = fileURLToPath(new URL('../../../shared/data/tau-bench/gpt-4o-airline.json', import.meta.url));
  const present = existsSync(file);
  if (!present) console.warn(`skipping the tau-bench audit: ${file} is absent (see docs/audit.md, "Real transcripts")`);

  test.skipIf(!present)('audits every run and every call of the file', () => {
    const text = readFileSync(file, 'utf8');
    const raw = JSON.parse(text) as { traj: { tool_calls?: unknown[] }[] }[];
    const callsInFile = raw.flatMap((r) => r.traj).reduce((n, m) => n + (m.tool_calls?.length ?? 0), 0);
    const report = auditRuns(readTranscript(text, file), { classify: compileCatalog(builtinCatalogs['tau-airline']).kindOf });
    expect(report.summary.runs).toBe(raw.length);
    expect(report.summary.calls).toBe(callsInFile);
  });

  test.skipIf(!present)('compares the policies as docs/audit.md reports: spec, target-aware, and with self-verifying writes', () => {
    const runs = readTranscript(readFileSync(file, 'utf8'), file);
    const catalog = compileCatalog(builtinCatalogs['tau-airline']);
    const rows = (['spec', 'targets', 'full'] as const).map((policy) => {
      const s = auditRuns(runs, { catalog, policy }).summary;
      return [
        policy,
        s.blockedCalls,
        s.refusedAnswers,
        s.runsWithRefusal,
        s.byReward!.successful.runsWithRefusal,
        s.byReward!.failed.runsWithRefusal,
      ];
    });
    expect(rows).toEqual([
      ['spec', 84, 184, 120, 32, 88],
      ['targets', 107, 219, 121, 33, 88],
      ['full', 30, 24, 27, 11, 16],
    ]);
  });

  test.skipIf(!present)('gives the summary figures reported in docs/audit.md', () => {
    const report = auditRuns(readTranscript(readFileSync(file, 'utf8'), file), {
      classify: compileCatalog(builtinCatalogs['tau-airline']).kindOf,
    });
    const { byReward, blocksByReason, refusedAnswersByReason, ...counts } = report.summary;
    expect(counts).toEqual({
      runs: 200,
      calls: 1164,
      writes: 298,
      blockedCalls: 84,
      refusedAnswers: 184,
      recoveries: 5,
      runsWithRefusal: 120,
      runsEndingUnverified: 50,
    });
    expect(blocksByReason.map((g) => [g.rule, g.count])).toEqual([
      ['unverified-write', 68],
      ['repeated-write', 9],
      ['no-target', 7],
    ]);
    expect(refusedAnswersByReason.map((g) => [g.rule, g.count])).toEqual([['unverified-write', 184]]);
    expect(byReward).toEqual({
      successful: {
        runs: 84,
        calls: 347,
        writes: 91,
        blockedCalls: 21,
        refusedAnswers: 47,
        recoveries: 0,
        runsWithRefusal: 32,
        runsEndingUnverified: 35,
      },
      failed: {
        runs: 116,
        calls: 817,
        writes: 207,
        blockedCalls: 63,
        refusedAnswers: 137,
        recoveries: 5,
        runsWithRefusal: 88,
        runsEndingUnverified: 15,
      },
    });
  });
});

describe("the text report in a reader's words (issue 27, item 5)", () => {
  /** Runs of this project's JSONL, Claude Code's `Bash` tool, audited with the claude-code catalog. */
  function bashRuns(lines: object[]): TranscriptRun[] {
    return readTranscript(lines.map((line) => JSON.stringify(line)).join('\n') + '\n', 'home.jsonl');
  }
  const claudeCode = compileCatalog(builtinCatalogs['claude-code']);
  const bash = (id: string, command: string, cwd = '/home/dev') => ({ type: 'call', id, name: 'Bash', args: { command }, cwd });
  const ok = (id: string) => ({ type: 'result', id, outcome: 'success', text: '' });
  const home = auditRuns(
    bashRuns([
      { type: 'run', id: 'ls ~/projects, then rm -rf ~' },
      bash('c1', 'ls ~/projects'),
      ok('c1'),
      bash('c2', 'rm -rf ~'),
      ok('c2'),
      { type: 'run', id: 'ls in /home/dev/projects, then rm -rf ~/projects/old' },
      bash('c1', 'ls', '/home/dev/projects'),
      ok('c1'),
      bash('c2', 'rm -rf ~/projects/old', '/home/dev/projects'),
      ok('c2'),
      { type: 'run', id: 'ls /srv, then rm -rf /opt/app' },
      bash('c1', 'ls /srv'),
      ok('c1'),
      bash('c2', 'rm -rf /opt/app'),
      ok('c2'),
      { type: 'run', id: 'mv, then mv again, then an answer' },
      bash('c1', 'ls /srv'),
      ok('c1'),
      bash('c2', 'mv /srv/a /srv/b'),
      ok('c2'),
      bash('c3', 'mv /srv/b /srv/c'),
      ok('c3'),
      { type: 'answer', text: 'moved' },
    ]),
    { catalog: claudeCode },
  );
  const text = formatAuditText(home, { title: 'pulse-safety audit of home.jsonl' });
  const lines = text.split('\n');

  test('the header says the transcript was audited in shadow mode: the calls ran, the report says what would have been refused', () => {
    const header = text.slice(0, text.indexOf('\nrun '));
    expect(header).toMatch(/^Shadow mode: every call and answer of the transcript ran as recorded\./m);
    expect(header).toContain('would have refused');
  });

  test('the header explains FSM_BLOCKED and POLICY_BLOCKED, once each, and the lines below leave the POLICY_BLOCKED mark out', () => {
    expect(text.split('FSM_BLOCKED').length - 1).toBe(1);
    expect(text.split('POLICY_BLOCKED').length - 1).toBe(1);
    expect(text).toMatch(/FSM_BLOCKED error \(the code of every refusal\)/);
    expect(text).toMatch(/POLICY_BLOCKED: \(the mark of a safety rule, left out below\)/);
  });

  test('every refused call and answer says "would have been refused", and none says "blocked"', () => {
    const refusalLines = lines.filter((line) => /^ {2}line \d+: /.test(line));
    expect(refusalLines).toHaveLength(home.summary.blockedCalls + home.summary.refusedAnswers);
    for (const line of refusalLines) expect(line).toMatch(/^ {2}line \d+: would have been refused: /);
    expect(text).not.toMatch(/\bblocked\b/);
  });

  test('a target ~ gets the rule in one line: only a read of ~ itself validates it, and /home/... is no ~ path', () => {
    const at = lines.findIndex((line) => line.includes("destructive write 'Bash' on ~ in READING [unknown-target]"));
    expect(lines[at]).toMatch(/has touched this target: "~"$/);
    expect(lines[at + 1]).toBe(
      '    hint: a read validates a target when it names the target or a directory above it; ~ is a root of its own, never expanded to a home directory: a read of /home/... (or a command run in a directory there) touches no ~ path; only a read of ~ itself validates ~ (a read of ~/projects does not)',
    );
  });

  test('a target under ~ gets the hint too, naming what would validate it; a target elsewhere gets none', () => {
    const at = lines.findIndex((line) => line.includes("write 'Bash' on ~/projects/old in READING [unknown-target]"));
    expect(lines[at + 1]).toMatch(/^ {4}hint: .*; a read of ~\/projects\/old or of a ~ directory above it validates it$/);
    const elsewhere = lines.findIndex((line) => line.includes("write 'Bash' on /opt/app in READING [unknown-target]"));
    expect(elsewhere).toBeGreaterThan(0);
    expect(lines[elsewhere + 1]).not.toMatch(/hint:/);
  });

  test('a path that climbs above ~ (compared as an exact string) gets no ~ hint', () => {
    const [climbing] = auditRuns(bashRuns([bash('c1', 'ls /srv'), ok('c1'), bash('c2', 'rm -rf ~/../x'), ok('c2')]), {
      catalog: claudeCode,
    }).runs;
    expect(climbing!.refusals[0]).toMatchObject({ rule: 'unknown-target', target: '~/../x' });
    expect(formatRunText(climbing!)).not.toContain('hint:');
  });

  test('the hint states the rule the machine applies: a read of ~ validates ~, a read of /home/dev does not validate ~/projects', () => {
    const [validated, notValidated] = auditRuns(
      bashRuns([
        { type: 'run', id: 'ls ~, then rm -rf ~/projects/old' },
        bash('c1', 'ls ~'),
        ok('c1'),
        bash('c2', 'rm -rf ~/projects/old'),
        ok('c2'),
        { type: 'run', id: 'ls /home/dev, then rm -rf ~/projects/old' },
        bash('c1', 'ls /home/dev'),
        ok('c1'),
        bash('c2', 'rm -rf ~/projects/old'),
        ok('c2'),
      ]),
      { catalog: claudeCode },
    ).runs;
    expect(validated!.blockedCalls).toBe(0);
    expect(notValidated!.refusals[0]).toMatchObject({ rule: 'unknown-target', target: '~/projects/old' });
  });

  test('an unverified-write refusal says which earlier write has no evidence: its line, tool and targets', () => {
    const run = home.runs[3]!;
    expect(run.refusals.map((r) => [r.position, r.rule])).toEqual([
      ['line 21', 'unverified-write'],
      ['line 23', 'unverified-write'],
    ]);
    expect(run.refusals[0]).toMatchObject({
      target: '/srv/a',
      earlierWrite: { index: 2, position: 'line 19', tool: 'Bash', targets: ['/srv/a', '/srv/b'] },
    });
    // The refused mv ran (shadow mode): it is the write the answer waits on.
    expect(run.refusals[1]!.earlierWrite).toMatchObject({ position: 'line 21', targets: ['/srv/b', '/srv/c'] });
    const line = lines.find((l) => l.startsWith("  line 21: would have been refused: write 'Bash' on /srv/b, /srv/c"));
    expect(line).toMatch(
      /\[unverified-write\]: the previous state-changing call still needs verification evidence before another one can run: the write at line 19 \('Bash' on \/srv\/a, \/srv\/b\) has none yet$/,
    );
    expect(line).not.toContain('(target:');
  });

  test('the protocol strings stay as they are in the report data: the POLICY_BLOCKED reason with its (target: …)', () => {
    expect(home.runs[3]!.refusals[0]!.reason).toBe(reasonWithTarget(TOOL_BLOCK_REASONS['unverified-write'], '/srv/a'));
    expect(home.runs[3]!.refusals[0]!.message).toMatch(/^FSM blocked tool 'Bash' \(write\) in state VERIFYING: POLICY_BLOCKED: /);
  });

  test('a write-in-flight refusal names the write still running', () => {
    const [demo] = auditRuns(demoRuns()).runs;
    const inFlight = demo!.refusals.find((r) => r.rule === 'write-in-flight')!;
    expect(inFlight.earlierWrite).toEqual({ index: 6, position: 'line 8', tool: 'pulse_control', targets: [] });
    expect(formatRunText(demo!)).toContain(
      "line 9: would have been refused: write 'pulse_control_docker' in WRITING [write-in-flight]: a state-changing call is still in flight; its outcome must be known before another one can run: the write at line 8 ('pulse_control') is still running",
    );
  });

  test('the summary says, once per rule, why it refuses and what clears it', () => {
    expect(text).toContain(
      '[unknown-target] a write on a target no read or lookup of the session validated; cleared by a read of the target itself or of a directory above it',
    );
    expect(text).toContain(
      '[unverified-write] a write or an answer while an earlier write has no evidence of its effect; cleared by a read, after that write, that touches its target',
    );
  });
});
