/**
 * Counters of the gate's decisions under the Go original's metric names, fed
 * by the guard's `onDecision`, `onRecovery` and `onRecoveryRaised` hooks, and collected as plain
 * data any exporter can render (examples/prometheus.ts renders the Prometheus
 * text format in a few lines).
 *
 * Spec: DESIGN.md §1 (metric names and labels), §3.5 (pending recoveries);
 * issue 28 (recoveries a tool raises).
 *
 * @example
 * const metrics = createSafetyMetrics();
 * const guard = createSessionGuard({
 *   onDecision: metrics.onDecision,
 *   onRecovery: metrics.onRecovery,
 *   onRecoveryRaised: metrics.onRecoveryRaised,
 * });
 * // ... later, on a scrape:
 * for (const family of metrics.collect()) for (const { labels, value } of family.samples) ...
 */
import { ErrCodeStrictResolution } from '../../machines/safety.policy.js';
import type { GateDecidedEvent, RecoverySucceededEvent } from '../../machines/safety.types.js';
import type { RaisedRecovery } from '../guard/session-guard-options.js';

/** The metric names of the original (DESIGN.md §1). */
export const METRIC_NAMES = {
  /** Refused tool calls, labels `state`, `tool`, `kind`. */
  toolBlocks: 'fsm_tool_block_total',
  /** Refused final answers, label `state`. */
  finalBlocks: 'fsm_final_block_total',
  /** Blocks that opened or bumped a pending recovery, labels `error_code`, `tool`. */
  recoveryAttempts: 'auto_recovery_attempt_total',
  /** Pending recoveries cleared by a later successful call of the tool, labels `error_code`, `tool`. */
  recoverySuccesses: 'auto_recovery_success_total',
  /**
   * Results of a tool that raised `STRICT_RESOLUTION` (issue 28), labels
   * `tool`, `action` (the call's `action` argument, else `operation`; `''`
   * when it has none).
   */
  strictResolutionBlocks: 'pulse_ai_strict_resolution_block_total',
  /**
   * Every pending recovery opened or bumped (issue 28): a refusal of the gate
   * (`FSM_BLOCKED`) and a recoverable code a tool's result raised, labels
   * `error_code`, `tool`. The original's full name for what
   * `auto_recovery_attempt_total` counts of the gate's own refusals.
   */
  allRecoveryAttempts: 'pulse_ai_auto_recovery_attempt_total',
} as const;

/** The `tool` label of tool names past the cardinality or length limit. */
export const OTHER_TOOL_LABEL = '_other';

/** One time series of a counter: its label values and its count. */
export interface CounterSample {
  labels: Readonly<Record<string, string>>;
  value: number;
}

/** A counter and its series, in the shape of a Prometheus metric family. */
export interface CounterFamily {
  name: string;
  help: string;
  type: 'counter';
  labelNames: readonly string[];
  /** Series in order of first appearance. */
  samples: CounterSample[];
}

/** Options of `createSafetyMetrics`. */
export interface SafetyMetricsOptions {
  /**
   * Distinct `tool` label values kept before further tools are counted under
   * `_other`; default 200. Tool names come from the model, so they are
   * untrusted: this bounds the number of series.
   */
  maxToolLabels?: number;
  /** Tool names longer than this many UTF-16 units are counted under `_other`; default 128. */
  maxToolLabelLength?: number;
}

/** The counters of one process (or of whatever the hooks are attached to). */
export interface SafetyMetrics {
  /** The guard's `onDecision` hook: counts refused tool calls, refused final answers and recovery attempts. */
  readonly onDecision: (decision: GateDecidedEvent) => void;
  /** The guard's `onRecovery` hook: counts recoveries. */
  readonly onRecovery: (event: RecoverySucceededEvent) => void;
  /** The guard's `onRecoveryRaised` hook: counts recoverable codes tools raised (issue 28). */
  readonly onRecoveryRaised: (event: RaisedRecovery) => void;
  /** The six counters, each with its series so far (fresh objects). */
  collect(): CounterFamily[];
  /** The count of one series, 0 when it has none; e.g. `value('fsm_final_block_total', { state: 'VERIFYING' })`. */
  value(name: string, labels: Readonly<Record<string, string>>): number;
  /** Zero every counter (drops every series). */
  reset(): void;
}

interface Counter {
  name: string;
  help: string;
  labelNames: readonly string[];
  series: Map<string, CounterSample & { labels: Record<string, string> }>;
}

function counter(name: string, help: string, labelNames: readonly string[]): Counter {
  return { name, help, labelNames, series: new Map() };
}

function seriesKey(counter: Counter, labels: Readonly<Record<string, string>>): string {
  return JSON.stringify(counter.labelNames.map((label) => labels[label] ?? ''));
}

function increment(counter: Counter, labels: Record<string, string>): void {
  const key = seriesKey(counter, labels);
  const sample = counter.series.get(key);
  if (sample === undefined) counter.series.set(key, { labels, value: 1 });
  else sample.value += 1;
}

/**
 * Label values from the model, bounded: `label(value)` is the value (`''`
 * for a non-string), or `_other` once `maxCount` distinct values are kept or
 * when it is longer than `maxLength`; `clear()` forgets the values kept.
 */
function boundedLabels(maxCount: number, maxLength: number): { label: (value: unknown) => string; clear: () => void } {
  const seen = new Set<string>();
  return {
    label(value) {
      const name = typeof value === 'string' ? value : '';
      if (seen.has(name)) return name;
      if (name.length > maxLength || seen.size >= maxCount) return OTHER_TOOL_LABEL;
      seen.add(name);
      return name;
    },
    clear: () => seen.clear(),
  };
}

/**
 * Creates the counters of DESIGN.md §1:
 * - `fsm_tool_block_total{state,tool,kind}`: every refused tool call;
 * - `fsm_final_block_total{state}`: every refused final answer;
 * - `auto_recovery_attempt_total{error_code,tool}`: every refused tool call,
 *   as each opens or bumps a pending recovery the model may recover from;
 * - `auto_recovery_success_total{error_code,tool}`: every pending recovery
 *   cleared by a later successful call of its tool (of any code);
 * - `pulse_ai_strict_resolution_block_total{tool,action}`: every failed
 *   result that raised `STRICT_RESOLUTION` (issue 28);
 * - `pulse_ai_auto_recovery_attempt_total{error_code,tool}`: every pending
 *   recovery opened or bumped, by a refused call or by a code a result raised.
 *
 * Never throws from its hooks, whatever the events hold.
 */
export function createSafetyMetrics(options: SafetyMetricsOptions = {}): SafetyMetrics {
  const maxToolLabels = options.maxToolLabels ?? 200;
  const maxToolLabelLength = options.maxToolLabelLength ?? 128;
  const toolBlocks = counter(METRIC_NAMES.toolBlocks, 'Tool calls refused by the safety gate.', ['state', 'tool', 'kind']);
  const finalBlocks = counter(METRIC_NAMES.finalBlocks, 'Final answers refused by the safety gate.', ['state']);
  const attempts = counter(METRIC_NAMES.recoveryAttempts, 'Refused tool calls that opened or bumped a pending recovery.', [
    'error_code',
    'tool',
  ]);
  const successes = counter(METRIC_NAMES.recoverySuccesses, 'Pending recoveries cleared by a later successful call of the same tool.', [
    'error_code',
    'tool',
  ]);
  const strictBlocks = counter(METRIC_NAMES.strictResolutionBlocks, 'Tool results that raised STRICT_RESOLUTION.', ['tool', 'action']);
  const allAttempts = counter(
    METRIC_NAMES.allRecoveryAttempts,
    'Pending recoveries opened or bumped: refused tool calls and recoverable codes tools raised.',
    ['error_code', 'tool'],
  );
  const counters = [toolBlocks, finalBlocks, attempts, successes, strictBlocks, allAttempts];
  // Tool names and actions come from the model: both labels are bounded alike.
  const toolLabels = boundedLabels(maxToolLabels, maxToolLabelLength);
  const toolLabel = toolLabels.label;
  const actionLabels = boundedLabels(maxToolLabels, maxToolLabelLength);

  return {
    onDecision(decision) {
      if (decision?.allowed !== false) return;
      const state = String(decision.state);
      if (decision.subject === 'answer') {
        increment(finalBlocks, { state });
        return;
      }
      const tool = toolLabel(decision.tool);
      increment(toolBlocks, { state, tool, kind: String(decision.kind) });
      if (decision.recoveryId !== null) {
        // A tool block always carries the recovery id `<error code>:<tool>`.
        const errorCode = String(decision.recoveryId).split(':', 1)[0]!;
        increment(attempts, { error_code: errorCode, tool });
        increment(allAttempts, { error_code: errorCode, tool });
      }
    },
    onRecoveryRaised(event) {
      const recovery = event?.recovery;
      if (recovery === undefined) return;
      const tool = toolLabel(recovery.tool);
      const errorCode = String(recovery.errorCode);
      increment(allAttempts, { error_code: errorCode, tool });
      if (errorCode === ErrCodeStrictResolution) {
        increment(strictBlocks, { tool, action: actionLabels.label(event.action) });
      }
    },
    onRecovery(event) {
      const recovery = event?.recovery;
      if (recovery === undefined) return;
      increment(successes, { error_code: String(recovery.errorCode), tool: toolLabel(recovery.tool) });
    },
    collect() {
      return counters.map((c) => ({
        name: c.name,
        help: c.help,
        type: 'counter' as const,
        labelNames: [...c.labelNames],
        samples: [...c.series.values()].map((sample) => ({ labels: { ...sample.labels }, value: sample.value })),
      }));
    },
    value(name, labels) {
      const c = counters.find((candidate) => candidate.name === name);
      return c === undefined ? 0 : (c.series.get(seriesKey(c, labels))?.value ?? 0);
    },
    reset() {
      for (const c of counters) c.series.clear();
      toolLabels.clear();
      actionLabels.clear();
    },
  };
}
