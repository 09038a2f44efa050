/**
 * Playground sessions (src/visualizer/playground.ts): the page's controls
 * drive a real session guard; every command is logged with its decision and
 * the transitions XState took; bad commands change nothing.
 */
import { describe, expect, it } from 'vitest';
import { MAX_TIME_MS } from '../../machines/safety.policy.js';
import { RECOVERY_TTL_MS } from '../../src/errors/index.js';
import { auditRun } from '../../src/audit/audit.js';
import type { TranscriptStep } from '../../src/audit/transcripts/index.js';
import { builtinCatalogs, compileCatalog } from '../../src/classify/catalog/index.js';
import { MAX_PLAYGROUND_LOG } from '../../src/visualizer/bounds.js';
import {
  catalogView,
  CLOCK_STEP_MS,
  PlaygroundCommandError,
  PlaygroundSession,
  type PlaygroundOptions,
} from '../../src/visualizer/playground.js';

const START = Date.UTC(2026, 0, 1);

function session(options: PlaygroundOptions = {}): PlaygroundSession {
  return new PlaygroundSession('p1', { startAt: START, ...options });
}

describe('PlaygroundSession', () => {
  it('decides each call as the audit does with the same catalog, target rules included (issue 27 item 1)', () => {
    const calls = [
      { name: 'Bash', args: { command: 'ls -la' } },
      { name: 'Bash', args: { command: 'rm -rf ~/projects/old' } },
      { name: 'Read', args: { file_path: '/home/dev/proj/README.md' } },
      { name: 'Edit', args: { file_path: '/home/dev/proj/README.md', old_string: 'a', new_string: 'b' } },
    ];
    const s = session({ catalog: 'claude-code' });
    const played = calls.map((call, i) => {
      const decision = s.apply({ type: 'call', ...call }).decision!;
      if (decision.allowed) s.apply({ type: 'outcome', callId: `c${i + 1}`, outcome: 'success' });
      return { allowed: decision.allowed, rule: decision.rule };
    });
    // The same calls, each with its success when the gate admitted it, as a transcript the audit replays.
    const steps: TranscriptStep[] = calls.flatMap((call, i): TranscriptStep[] => [
      { type: 'call', id: `c${i + 1}`, ...call, position: `call ${i}` },
      ...(played[i]!.allowed
        ? [{ type: 'result' as const, id: `c${i + 1}`, name: call.name, outcome: 'success' as const, text: '', position: `result ${i}` }]
        : []),
    ]);
    const audit = auditRun({ id: 'run', reward: null, steps }, { catalog: compileCatalog(builtinCatalogs['claude-code']) });
    const audited = audit.findings.flatMap((f) =>
      f.step.type === 'call' ? [{ allowed: f.decision!.allowed, rule: f.decision!.rule }] : [],
    );
    expect(played).toEqual(audited);
    // The kind alone admits the `rm` after a read; its target, never looked at, is refused.
    expect(played.slice(0, 2)).toEqual([
      { allowed: true, rule: null },
      { allowed: false, rule: 'unknown-target' },
    ]);
  });

  it('blocks a write in RESOLVING with the structured FSM_BLOCKED tool result', () => {
    const s = session();
    const entry = s.apply({ type: 'call', name: 'pulse_control', args: { action: 'restart' } });
    expect(entry.decision).toMatchObject({ allowed: false, code: 'FSM_BLOCKED', rule: 'no-target', kind: 'write' });
    expect(entry.decision!.toolResult).toMatchObject({
      ok: false,
      error: { code: 'FSM_BLOCKED', blocked: true, state: 'RESOLVING', tool: 'pulse_control', recoveryId: 'FSM_BLOCKED:pulse_control' },
    });
    expect(s.view().state).toBe('RESOLVING');
  });

  it('logs the transition XState took for each event', () => {
    const s = session();
    s.apply({ type: 'call', name: 'pulse_query' });
    const entry = s.apply({ type: 'outcome', callId: 'c1', outcome: 'success' });
    expect(entry).toMatchObject({ events: ['tool.succeeded'], stateBefore: 'RESOLVING', stateAfter: 'READING' });
    expect(entry.taken).toEqual(['t:safety.RESOLVING:tool.succeeded:2']);
  });

  it('classifies a call with the catalog the call names', () => {
    const s = session();
    expect(s.apply({ type: 'call', name: 'get_user_details', catalog: 'tau-airline' }).decision?.kind).toBe('resolve');
    expect(s.apply({ type: 'call', name: 'get_user_details', catalog: 'pulse' }).decision?.kind).toBe('write');
  });

  it('goes through WRITING to VERIFYING when an admitted write succeeds', () => {
    const s = session();
    s.apply({ type: 'call', name: 'pulse_query' });
    s.apply({ type: 'outcome', callId: 'c1', outcome: 'success' });
    s.apply({ type: 'call', name: 'pulse_control' });
    expect(s.view().state).toBe('WRITING');
    s.apply({ type: 'outcome', callId: 'c2', outcome: 'success' });
    expect(s.view().state).toBe('VERIFYING');
  });

  it('refuses an outcome for a call that is not in flight and changes nothing', () => {
    const s = session();
    s.apply({ type: 'call', name: 'pulse_query' });
    const before = s.toResponse();
    expect(() => s.apply({ type: 'outcome', callId: 'c9', outcome: 'success' })).toThrow(
      new PlaygroundCommandError("no call 'c9' is in flight"),
    );
    expect(s.toResponse()).toEqual(before);
  });

  it('refuses a malformed command by naming the field', () => {
    expect(() => session().apply({ type: 'call', name: '  ' })).toThrow('name: a tool call needs a tool name');
    expect(() => session().apply({ type: 'launch' })).toThrow(PlaygroundCommandError);
  });

  it('expires a pending recovery once the clock passes its ten minutes', () => {
    const s = session();
    s.apply({ type: 'call', name: 'pulse_control' });
    expect(s.view().pendingRecoveries).toMatchObject([{ tool: 'pulse_control', expiresInMs: RECOVERY_TTL_MS }]);
    s.apply({ type: 'advanceClock' });
    expect(s.view().pendingRecoveries).toMatchObject([{ tool: 'pulse_control', expiresInMs: RECOVERY_TTL_MS - CLOCK_STEP_MS }]);
    s.apply({ type: 'advanceClock', ms: 1 });
    expect(s.view().pendingRecoveries).toEqual([]);
  });

  it('lets complete verification do it by hand when auto-completion is off', () => {
    const s = session({ autoCompleteVerification: false });
    for (const [name, id] of [
      ['pulse_query', 'c1'],
      ['pulse_control', 'c2'],
      ['pulse_metrics', 'c3'],
    ] as const) {
      s.apply({ type: 'call', name });
      s.apply({ type: 'outcome', callId: id, outcome: 'success' });
    }
    expect(s.view().state).toBe('VERIFYING');
    expect(s.apply({ type: 'completeVerification' }).stateAfter).toBe('READING');
  });

  it('marks the transitions enabled now, as the controls would take them', () => {
    const s = session();
    expect(s.view().enabled).toContain('t:safety.RESOLVING:tool.requested:1');
    expect(s.view().enabled).toContain('t:safety:session.reset:0');
    expect(s.view().enabled).not.toContain('t:safety.RESOLVING:tool.succeeded:2');
    s.apply({ type: 'call', name: 'pulse_query' });
    expect(s.view().enabled).toContain('t:safety.RESOLVING:tool.succeeded:2');
  });
});

describe('PlaygroundSession: bounded and validated (issue 14 item 9)', () => {
  it(`keeps the newest ${MAX_PLAYGROUND_LOG} log entries of a long session, numbered on`, () => {
    const s = session();
    for (let i = 0; i < MAX_PLAYGROUND_LOG + 10; i++) s.apply({ type: 'advanceClock', ms: 1 });
    const response = s.toResponse();
    expect(response.log).toHaveLength(MAX_PLAYGROUND_LOG);
    expect(response.log[0]!.seq).toBe(11);
    expect(response.logged).toBe(MAX_PLAYGROUND_LOG + 10);
  });

  it("answers a command with the command's own entry, not the log", () => {
    const s = session();
    for (let i = 0; i < 20; i++) s.apply({ type: 'advanceClock', ms: 1 });
    const answer = s.toCommandResponse(s.apply({ type: 'answer' }));
    expect(answer).not.toHaveProperty('log');
    expect(answer.entry).toMatchObject({ seq: 21, label: 'final answer' });
  });

  it('refuses a start time that is not a finite epoch-ms number within the time range', () => {
    for (const startAt of ['soon', 1e300, Infinity, Number.NaN, MAX_TIME_MS + 1, -MAX_TIME_MS - 1, null]) {
      expect(() => new PlaygroundSession('p1', { startAt }), String(startAt)).toThrow(
        new PlaygroundCommandError(
          `startAt: must be a finite number of epoch milliseconds within ±${MAX_TIME_MS} (the machine's time range, that of JavaScript dates)`,
        ),
      );
    }
  });

  it('refuses a clock advance past the time range and changes nothing', () => {
    const s = session({ startAt: MAX_TIME_MS - 1 });
    const before = s.toResponse();
    expect(() => s.apply({ type: 'advanceClock' })).toThrow(PlaygroundCommandError);
    expect(s.toResponse()).toEqual(before);
    expect(s.apply({ type: 'call', name: 'pulse_query' }).at).toBe(MAX_TIME_MS - 1);
  });
});

describe('catalogView', () => {
  it('offers an example call of each kind a catalog has, classified as that kind', () => {
    const view = catalogView('tau-airline');
    expect(Object.keys(view.examples).sort()).toEqual(['neutral', 'read', 'resolve', 'write']);
    const s = session();
    for (const [kind, example] of Object.entries(view.examples)) {
      expect(s.apply({ type: 'call', name: example!.name, args: example!.args, catalog: 'tau-airline' }).decision?.kind).toBe(kind);
    }
  });
});
