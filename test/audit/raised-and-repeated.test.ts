/**
 * The audit replays what issue 28 added: a recoverable error code a tool's
 * result raised opens a pending recovery of the tool (the catalog's
 * `recoveryCodes`, the Pulse catalog's `STRICT_RESOLUTION` by default), and
 * the same write as one that failed is refused (`repeated-write`) until its
 * target is read.
 *
 * Spec: issue 28 items 1 and 3; DESIGN.md §1 (`STRICT_RESOLUTION`), §3.5, §3.8.
 */
import { describe, expect, test } from 'vitest';
import { auditRun } from '../../src/audit/audit.js';
import { compileCatalog } from '../../src/classify/catalog/index.js';
import { readTranscript, type TranscriptRun } from '../../src/audit/transcripts/index.js';

/** A run from JSONL lines (this project's event format). */
function run(...lines: object[]): TranscriptRun {
  return readTranscript(lines.map((line) => JSON.stringify(line)).join('\n'), 'test.jsonl')[0]!;
}
const call = (id: string, name: string, args: object = {}) => ({ type: 'call', id, name, args });
const ok = (id: string) => ({ type: 'result', id, outcome: 'success' });
const failed = (id: string, text = 'Error: ReadTimeout') => ({ type: 'result', id, outcome: 'error', text });
const STRICT = JSON.stringify({ ok: false, error: { code: 'STRICT_RESOLUTION', message: 'resolve the resource first' } });

describe('a recoverable code a result raised (issue 28 item 1)', () => {
  test("opens a pending recovery of the tool with the Pulse catalog's STRICT_RESOLUTION, which its next success clears", () => {
    const audit = auditRun(
      run(
        call('q', 'pulse_query'),
        ok('q'),
        call('c1', 'pulse_control', { action: 'restart', target: 'vm-1' }),
        failed('c1', STRICT),
        call('c2', 'pulse_control', { action: 'restart', target: 'vm-101' }),
        ok('c2'),
      ),
      { trace: true },
    );
    const raisedAt = audit.findings[3]!;
    expect(raisedAt.context?.pendingRecoveries).toEqual({
      'STRICT_RESOLUTION:pulse_control': expect.objectContaining({ errorCode: 'STRICT_RESOLUTION', tool: 'pulse_control', attempts: 1 }),
    });
    expect(audit.findings[5]!.recovered).toMatchObject({ errorCode: 'STRICT_RESOLUTION', tool: 'pulse_control' });
    expect(audit.recoveries).toBe(1);
  });

  test("reads the legacy error_code too, and only the catalog's codes", () => {
    const legacy = JSON.stringify({ error_code: 'STRICT_RESOLUTION', error: 'not resolved' });
    const steps = run(call('q', 'pulse_query'), ok('q'), call('c', 'pulse_control'), failed('c', legacy));
    expect(Object.keys(auditRun(steps, { trace: true }).findings[3]!.context!.pendingRecoveries)).toEqual([
      'STRICT_RESOLUTION:pulse_control',
    ]);
    const none = compileCatalog({ name: 'none', tools: { pulse_query: 'resolve', pulse_control: 'write' } });
    expect(auditRun(steps, { trace: true, catalog: none }).findings[3]!.context!.pendingRecoveries).toEqual({});
    const own = compileCatalog({ name: 'own', recoveryCodes: ['NEEDS_LOOKUP'], tools: { pulse_query: 'resolve', pulse_control: 'write' } });
    const ownSteps = run(call('q', 'pulse_query'), ok('q'), call('c', 'pulse_control'), failed('c', '{"error":{"code":"NEEDS_LOOKUP"}}'));
    expect(Object.keys(auditRun(ownSteps, { trace: true, catalog: own }).findings[3]!.context!.pendingRecoveries)).toEqual([
      'NEEDS_LOOKUP:pulse_control',
    ]);
  });
});

describe('a failed write repeated (issue 28 item 3)', () => {
  const steps = (...after: object[]) =>
    run(
      call('q', 'pulse_query'),
      ok('q'),
      call('w1', 'pulse_control', { action: 'restart', guest: 'vm-1' }),
      failed('w1'),
      ...after,
      call('w2', 'pulse_control', { guest: 'vm-1', action: 'restart' }),
      ok('w2'),
    );

  test('is refused with rule repeated-write in every policy, strict or not', () => {
    for (const policy of ['spec', 'targets', 'full'] as const) {
      for (const strictFailedWrites of [false, true]) {
        const audit = auditRun(steps(), { policy, strictFailedWrites });
        expect(
          audit.refusals.map((r) => r.rule),
          `${policy} strict=${strictFailedWrites}`,
        ).toEqual(['repeated-write']);
      }
    }
  });

  test('is admitted after a read, and a different write is never refused as repeated', () => {
    expect(auditRun(steps(call('r', 'pulse_metrics'), ok('r'))).refusals).toEqual([]);
    const other = run(
      call('q', 'pulse_query'),
      ok('q'),
      call('w1', 'pulse_control', { action: 'restart', guest: 'vm-1' }),
      failed('w1'),
      call('w2', 'pulse_control', { action: 'restart', guest: 'vm-2' }),
    );
    expect(auditRun(other).refusals).toEqual([]);
  });
});
