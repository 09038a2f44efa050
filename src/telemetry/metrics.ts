/**
 * Counters of the gate's decisions under the Go original's metric names, fed
 * by the guard's `onDecision` and `onRecovery` hooks, and collected as plain
 * data any exporter can render (examples/prometheus.ts renders the Prometheus
 * text format in a few lines).
 *
 * Spec: DESIGN.md §1 (metric names and labels), §3.5 (pending recoveries).
 *
 * @example
 * const metrics = createSafetyMetrics();
 * const guard = createSessionGuard({ onDecision: metrics.onDecision, onRecovery: metrics.onRecovery });
 * // ... later, on a scrape:
 * for (const family of metrics.collect()) for (const { labels, value } of family.samples) ...
 */
import type { GateDecidedEvent, RecoverySucceededEvent } from '../../machines/safety.types.js';

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
  /** Final answers refused as phantom-execution claims (rule `phantom-claim`, issue 28 item 2), labels `provider`, `model`. */
  phantomDetected: 'pulse_ai_phantom_detected_total',
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
  /**
   * The `provider` label of `pulse_ai_phantom_detected_total` (the model's
   * provider, e.g. `openai`), as the caller knows it; default `''`. One set
   * of metrics per provider and model gives a series each.
   */
  provider?: string;
  /** The `model` label of `pulse_ai_phantom_detected_total` (e.g. `gpt-4o`); default `''`. */
  model?: string;
}

/** The counters of one process (or of whatever the hooks are attached to). */
export interface SafetyMetrics {
  /** The guard's `onDecision` hook: counts refused tool calls, refused final answers and recovery attempts. */
  readonly onDecision: (decision: GateDecidedEvent) => void;
  /** The guard's `onRecovery` hook: counts recoveries. */
  readonly onRecovery: (event: RecoverySucceededEvent) => void;
  /** The five counters, each with its series so far (fresh objects). */
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
 * Creates the counters of DESIGN.md §1:
 * - `fsm_tool_block_total{state,tool,kind}`: every refused tool call;
 * - `fsm_final_block_total{state}`: every refused final answer;
 * - `auto_recovery_attempt_total{error_code,tool}`: every refused tool call,
 *   as each opens or bumps a pending recovery the model may recover from;
 * - `auto_recovery_success_total{error_code,tool}`: every pending recovery
 *   cleared by a later successful call of its tool;
 * - `pulse_ai_phantom_detected_total{provider,model}`: every final answer
 *   refused as a phantom-execution claim (rule `phantom-claim`), also
 *   counted in `fsm_final_block_total`; the labels are `options.provider`
 *   and `options.model`.
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
  const phantoms = counter(METRIC_NAMES.phantomDetected, 'Final answers refused for claiming a change no tool made.', [
    'provider',
    'model',
  ]);
  const phantomLabels = { provider: String(options.provider ?? ''), model: String(options.model ?? '') };
  const counters = [toolBlocks, finalBlocks, attempts, successes, phantoms];
  const toolLabels = new Set<string>();

  /** The `tool` label of a tool name: itself, or `_other` past the limits. */
  function toolLabel(tool: unknown): string {
    const name = typeof tool === 'string' ? tool : '';
    if (toolLabels.has(name)) return name;
    if (name.length > maxToolLabelLength || toolLabels.size >= maxToolLabels) return OTHER_TOOL_LABEL;
    toolLabels.add(name);
    return name;
  }

  return {
    onDecision(decision) {
      if (decision?.allowed !== false) return;
      const state = String(decision.state);
      if (decision.subject === 'answer') {
        increment(finalBlocks, { state });
        if (decision.rule === 'phantom-claim') increment(phantoms, { ...phantomLabels });
        return;
      }
      const tool = toolLabel(decision.tool);
      increment(toolBlocks, { state, tool, kind: String(decision.kind) });
      if (decision.recoveryId !== null) {
        // A tool block always carries the recovery id `<error code>:<tool>`.
        const errorCode = String(decision.recoveryId).split(':', 1)[0]!;
        increment(attempts, { error_code: errorCode, tool });
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
    },
  };
}
