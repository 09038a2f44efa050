/**
 * Replay frames (src/visualizer/replay.ts): each step of a transcript as the
 * audit replays it, with the transitions XState took.
 */
import { describe, expect, it } from 'vitest';
import { auditRun } from '../../src/audit.js';
import { builtinCatalogs, createClassifier } from '../../src/classifier.js';
import { demoRuns } from '../../src/demo.js';
import { readTranscript } from '../../src/transcripts.js';
import { replayRun, stepLabel } from '../../src/visualizer/replay.js';

const pulse = { classify: createClassifier(builtinCatalogs.pulse), catalog: 'pulse' };

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
      ['t:safety.RESOLVING:tool.requested:1'],
      ['t:safety.RESOLVING:tool.succeeded:2'],
      ['t:safety.READING:tool.requested:0'],
      ['t:safety.WRITING:tool.succeeded:2'],
      ['t:safety.VERIFYING:tool.requested:1'],
      ['t:safety.VERIFYING:tool.succeeded:3', 't:safety.VERIFYING:verification.completed:0'],
    ]);
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
