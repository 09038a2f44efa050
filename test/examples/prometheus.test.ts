/**
 * The Prometheus example (examples/prometheus.ts): the text exposition
 * format of the gate's counters.
 */
import { describe, expect, it } from 'vitest';
import { demo, toPrometheusText } from '../../examples/prometheus.js';
import { createSafetyMetrics } from '../../src/telemetry/metrics.js';

describe('the Prometheus example', () => {
  it('renders the demo session’s counters in the text exposition format', () => {
    expect(demo()).toBe(
      [
        '# HELP fsm_tool_block_total Tool calls refused by the safety gate.',
        '# TYPE fsm_tool_block_total counter',
        'fsm_tool_block_total{state="RESOLVING",tool="pulse_control",kind="write"} 1',
        '# HELP fsm_final_block_total Final answers refused by the safety gate.',
        '# TYPE fsm_final_block_total counter',
        'fsm_final_block_total{state="VERIFYING"} 1',
        '# HELP auto_recovery_attempt_total Refused tool calls that opened or bumped a pending recovery.',
        '# TYPE auto_recovery_attempt_total counter',
        'auto_recovery_attempt_total{error_code="FSM_BLOCKED",tool="pulse_control"} 1',
        '# HELP auto_recovery_success_total Pending recoveries cleared by a later successful call of the same tool.',
        '# TYPE auto_recovery_success_total counter',
        'auto_recovery_success_total{error_code="FSM_BLOCKED",tool="pulse_control"} 1',
        '# HELP pulse_ai_strict_resolution_block_total Tool results that raised STRICT_RESOLUTION.',
        '# TYPE pulse_ai_strict_resolution_block_total counter',
        '# HELP pulse_ai_auto_recovery_attempt_total Pending recoveries opened or bumped: refused tool calls and recoverable codes tools raised.',
        '# TYPE pulse_ai_auto_recovery_attempt_total counter',
        'pulse_ai_auto_recovery_attempt_total{error_code="FSM_BLOCKED",tool="pulse_control"} 1',
        '',
      ].join('\n'),
    );
  });

  it('escapes backslashes, quotes and line feeds in label values', () => {
    const metrics = createSafetyMetrics();
    metrics.onDecision({
      type: 'gate.decided',
      subject: 'tool',
      allowed: false,
      state: 'RESOLVING',
      tool: 'a"b\\c\nd',
      kind: 'write',
      callId: null,
      rule: 'no-target',
      reason: 'POLICY_BLOCKED: x',
      recoveryId: 'FSM_BLOCKED:a"b\\c\nd',
      at: 0,
    });
    expect(toPrometheusText(metrics.collect())).toContain('tool="a\\"b\\\\c\\nd"');
  });

  it('writes HELP and TYPE but no sample for a counter without series', () => {
    const text = toPrometheusText(createSafetyMetrics().collect());
    expect(text.split('\n').filter((line) => line !== '' && !line.startsWith('#'))).toEqual([]);
    expect(text).toContain('# TYPE fsm_final_block_total counter');
  });
});
