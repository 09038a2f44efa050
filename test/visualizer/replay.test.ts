/**
 * Replay frames (src/visualizer/replay.ts): each step of a transcript as the
 * audit replays it, with the transitions XState took.
 */
import { describe, expect, it } from 'vitest';
import { safetyMachine } from '../../machines/safety.machine.js';
import { auditRun } from '../../src/audit/audit.js';
import { builtinCatalogs, compileCatalog } from '../../src/classify/catalog/index.js';
import { demoRuns } from '../../src/audit/demo.js';
import { readTranscript } from '../../src/audit/transcripts/index.js';
import { MAX_REPLAY_PAGE } from '../../src/visualizer/bounds.js';
import { replayRun, stepLabel } from '../../src/visualizer/replay.js';
import type { TranscriptRun } from '../../src/audit/transcripts/index.js';

/** The replay of the Pulse catalog under the audit's default policy, as `pulse-safety audit --catalog pulse`. */
const pulse = {
  audit: { catalog: compileCatalog(builtinCatalogs.pulse), policy: 'full' as const, strictFailedWrites: false },
  settings: { catalog: 'pulse', policy: 'full' as const, strictFailedWrites: false },
};

/**
 * Whether the machine completes verification by itself (an eventless
 * transition in VERIFYING, issue 12 item 2); before, the guard sent
 * `verification.completed`. The replay shows whichever XState took.
 */
const machineCompletesVerification = (safetyMachine.states.VERIFYING!.always ?? []).length > 0;
const completion = machineCompletesVerification ? 't:safety.VERIFYING:always:0' : 't:safety.VERIFYING:verification.completed:0';

describe('replayRun', () => {
  it("marks exactly the audit's refusals", () => {
    const run = demoRuns()[0]!;
    const frames = replayRun(run, 0, pulse);
    expect(frames.refusedSteps).toEqual(auditRun(run).refusals.map((r) => r.index));
    expect(frames.frames.filter((f) => f.refused).map((f) => f.index)).toEqual(frames.refusedSteps);
  });

  it("follows the audit's state after every step", () => {
    const run = demoRuns()[0]!;
    const audit = auditRun(run);
    expect(replayRun(run, 0, pulse).frames.map((f) => f.view.state)).toEqual(audit.findings.map((f) => f.stateAfter));
  });

  it('gives each step the transitions it took', () => {
    const run = readTranscript(
      [
        { type: 'call', id: 'a', name: 'pulse_query' },
        { type: 'result', id: 'a', outcome: 'success' },
        { type: 'call', id: 'b', name: 'pulse_control' },
        { type: 'result', id: 'b', outcome: 'success' },
        { type: 'call', id: 'c', name: 'pulse_metrics' },
        { type: 'result', id: 'c', outcome: 'success' },
      ]
        .map((e) => JSON.stringify(e))
        .join('\n'),
      'steps.jsonl',
    )[0]!;
    expect(replayRun(run, 0, pulse).frames.map((f) => f.entry.taken)).toEqual([
      ['t:safety.RESOLVING:tool.requested:2'],
      ['t:safety.RESOLVING:tool.succeeded:2'],
      ['t:safety.READING:tool.requested:1'],
      ['t:safety.WRITING:tool.succeeded:2'],
      ['t:safety.VERIFYING:tool.requested:2'],
      ['t:safety.VERIFYING:tool.succeeded:3', completion],
    ]);
  });

  it('names the events the guard sent for each step, verification.completed only when the machine did not complete it itself', () => {
    const run = readTranscript(
      [
        { type: 'call', id: 'b', name: 'pulse_control' },
        { type: 'result', id: 'b', outcome: 'success' },
        { type: 'call', id: 'c', name: 'pulse_metrics' },
        { type: 'result', id: 'c', outcome: 'success' },
      ]
        .map((e) => JSON.stringify(e))
        .join('\n'),
      'verify.jsonl',
    )[0]!;
    const last = replayRun(run, 0, pulse).frames.at(-1)!.entry;
    expect(last.events).toEqual(machineCompletesVerification ? ['tool.succeeded'] : ['tool.succeeded', 'verification.completed']);
    expect(last.stateAfter).toBe('READING');
  });

  it('starts from a fresh session in RESOLVING', () => {
    expect(replayRun(demoRuns()[0]!, 0, pulse).initial).toMatchObject({ state: 'RESOLVING', pendingRecoveries: [], inFlight: [] });
  });
});

describe('stepLabel', () => {
  it('shortens a long answer to one line', () => {
    const label = stepLabel({ type: 'answer', text: `line one\n${'x'.repeat(200)}`, position: 'line 1' });
    expect(label).toMatch(/^answer "line one x+…"$/);
    expect(label.length).toBeLessThan(100);
  });
});

/** A run of `steps` steps in this project's JSONL: reads and their successes, a refused write every tenth step. */
function longRun(steps: number): TranscriptRun {
  const lines: string[] = [];
  for (let i = 0; lines.length < steps; i++) {
    if (i % 5 === 4) lines.push(JSON.stringify({ type: 'call', id: `w${i}`, name: 'pulse_control', args: { action: 'restart' } }));
    else
      lines.push(
        JSON.stringify({ type: 'call', id: `r${i}`, name: 'pulse_query' }),
        JSON.stringify({ type: 'result', id: `r${i}`, outcome: 'success' }),
      );
  }
  return readTranscript(lines.slice(0, steps).join('\n'), 'long.jsonl')[0]!;
}

describe('replayRun: one page of a long run (issue 14 item 9)', () => {
  it(`answers at most ${MAX_REPLAY_PAGE} steps, and says where the next page starts`, () => {
    const page = replayRun(longRun(450), 0, pulse);
    expect(page).toMatchObject({ from: 0, total: 450, nextFrom: MAX_REPLAY_PAGE });
    expect(page.frames.map((f) => f.index)).toEqual([...Array(MAX_REPLAY_PAGE).keys()]);
  });

  it('answers a later page with the same frames the whole run has there', () => {
    const run = longRun(450);
    const whole = [0, 200, 400].flatMap((from) => replayRun(run, 0, pulse, { from }).frames);
    const page = replayRun(run, 0, pulse, { from: 230, limit: 5 });
    expect(page).toMatchObject({ from: 230, nextFrom: 235 });
    expect(page.frames).toEqual(whole.slice(230, 235));
  });

  it('answers no frames past the end of the run', () => {
    expect(replayRun(longRun(10), 0, pulse, { from: 10 })).toMatchObject({ from: 10, frames: [], nextFrom: null });
  });
});
