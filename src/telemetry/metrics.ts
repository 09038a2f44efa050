/**
 * Counters of the gate's decisions under the Go original's metric names, fed
 * by the guard's `onDecision`, `onRecovery` and `onRecoveryRaised` hooks. One table
 * (`SAFETY_COUNTERS`) names them; one set of rules (`createCounterHooks`)
 * counts; where the counts go is the exporter's: `createSafetyMetrics` keeps
 * them in memory as plain data, `pulse-safety-fsm/prometheus`
 * (src/telemetry/prometheus.ts) in prom-client counters.
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
import { deepFreeze } from '../util/deep-freeze.js';

/** One counter of the gate: its Prometheus name, HELP text and label names. */
export interface CounterDefinition {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
}

/**
 * The gate's counters (DESIGN.md §1), the one table every exporter reads:
 * `createSafetyMetrics` keeps a series map per entry, and
 * `pulse-safety-fsm/prometheus` registers a prom-client `Counter` per entry,
 * in this order. A counter added here is exported by both once the hooks
 * (`createCounterHooks`) increment it. Frozen.
 */
export const SAFETY_COUNTERS = deepFreeze({
  /** Refused tool calls. */
  toolBlocks: {
    name: 'fsm_tool_block_total',
    help: 'Tool calls refused by the safety gate.',
    labelNames: ['state', 'tool', 'kind'],
  },
  /** Refused final answers. */
  finalBlocks: {
    name: 'fsm_final_block_total',
    help: 'Final answers refused by the safety gate.',
    labelNames: ['state'],
  },
  /** Blocks that opened or bumped a pending recovery. */
  recoveryAttempts: {
    name: 'auto_recovery_attempt_total',
    help: 'Refused tool calls that opened or bumped a pending recovery.',
    labelNames: ['error_code', 'tool'],
  },
  /** Pending recoveries cleared by a later successful call of the tool. */
  recoverySuccesses: {
    name: 'auto_recovery_success_total',
    help: 'Pending recoveries cleared by a later successful call of the same tool.',
    labelNames: ['error_code', 'tool'],
  },
  /** Final answers refused as phantom-execution claims (rule `phantom-claim`, issue 28 item 2). */
  phantomDetected: {
    name: 'pulse_ai_phantom_detected_total',
    help: 'Final answers refused for claiming a change no tool made.',
    labelNames: ['provider', 'model'],
  },
  /** Failed results of a tool that raised `STRICT_RESOLUTION` (issue 28 item 1); `action` is the call's `action` (else `operation`) argument, `''` when it has none. */
  strictResolutionBlocks: {
    name: 'pulse_ai_strict_resolution_block_total',
    help: 'Tool results that raised STRICT_RESOLUTION.',
    labelNames: ['tool', 'action'],
  },
  /**
   * Every pending recovery opened or bumped (issue 28 item 1): a refusal of
   * the gate (`FSM_BLOCKED`) and a recoverable code a tool's result raised.
   * The original's full name for what `auto_recovery_attempt_total` counts
   * of the gate's own refusals.
   */
  allRecoveryAttempts: {
    name: 'pulse_ai_auto_recovery_attempt_total',
    help: 'Pending recoveries opened or bumped: refused tool calls and recoverable codes tools raised.',
    labelNames: ['error_code', 'tool'],
  },
} as const satisfies Record<string, CounterDefinition>);

/** The key of a counter in `SAFETY_COUNTERS`, e.g. `'toolBlocks'`. */
export type SafetyCounterKey = keyof typeof SAFETY_COUNTERS;

/** The label values of one series of a counter, by label name. */
export type CounterLabels<K extends SafetyCounterKey> = Record<(typeof SAFETY_COUNTERS)[K]['labelNames'][number], string>;

/** The metric names of the original (DESIGN.md §1), by counter key: `METRIC_NAMES.toolBlocks` is `'fsm_tool_block_total'`. */
export const METRIC_NAMES = Object.fromEntries(Object.entries(SAFETY_COUNTERS).map(([key, counter]) => [key, counter.name])) as {
  readonly [K in SafetyCounterKey]: (typeof SAFETY_COUNTERS)[K]['name'];
};

/** The counter keys of `SAFETY_COUNTERS`, in table order. */
export const SAFETY_COUNTER_KEYS = Object.keys(SAFETY_COUNTERS) as SafetyCounterKey[];

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

/** Options of `createSafetyMetrics`, `createCounterHooks` and `createPrometheusMetrics`. */
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

/** The guard's three hooks, for `createSessionGuard({ onDecision, onRecovery, onRecoveryRaised })` (or a session store's `guard` options). */
export interface SafetyHooks {
  /** The guard's `onDecision` hook: counts refused tool calls, refused final answers and recovery attempts. */
  readonly onDecision: (decision: GateDecidedEvent) => void;
  /** The guard's `onRecovery` hook: counts recoveries. */
  readonly onRecovery: (event: RecoverySucceededEvent) => void;
  /** The guard's `onRecoveryRaised` hook: counts recoverable codes tools raised (issue 28). */
  readonly onRecoveryRaised: (event: RaisedRecovery) => void;
}

/**
 * Receives every increment the hooks make: the counter's key in
 * `SAFETY_COUNTERS` and the series' label values, one per label name of that
 * counter (the `tool` label already capped). Adds 1 to that series.
 */
export type CounterSink = <K extends SafetyCounterKey>(counter: K, labels: CounterLabels<K>) => void;

/** The hooks of `createCounterHooks`, and a way to forget the `tool` label values seen so far. */
export interface CounterHooks extends SafetyHooks {
  /** Forgets the tool names seen, so the `tool` label limit counts afresh (after the counters are zeroed). */
  forgetToolLabels(): void;
}

/**
 * A bounded label: the value as it is (a string; `''` for a non-string), or
 * `_other` once `maxCount` distinct values are kept or when it is longer
 * than `maxLength`; `clear()` forgets the values kept.
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
 * The counting rules of DESIGN.md §1, apart from where the counts are kept:
 * - `fsm_tool_block_total{state,tool,kind}`: every refused tool call;
 * - `fsm_final_block_total{state}`: every refused final answer;
 * - `auto_recovery_attempt_total{error_code,tool}`: every refused tool call,
 *   as each opens or bumps a pending recovery the model may recover from;
 * - `auto_recovery_success_total{error_code,tool}`: every pending recovery
 *   cleared by a later successful call of its tool (of any code);
 * - `pulse_ai_strict_resolution_block_total{tool,action}`: every failed
 *   result that raised `STRICT_RESOLUTION` (issue 28);
 * - `pulse_ai_auto_recovery_attempt_total{error_code,tool}`: every pending
 *   recovery opened or bumped, by a refused call or by a code a result raised;
 * - `pulse_ai_phantom_detected_total{provider,model}`: every final answer
 *   refused as a phantom-execution claim (rule `phantom-claim`), also
 *   counted in `fsm_final_block_total`; the labels are `options.provider`
 *   and `options.model`.
 *
 * Each increment goes to `sink` (an exporter's counters: an OpenTelemetry
 * `Counter.add(1, labels)`, a StatsD client). The hooks never throw on
 * malformed events; what `sink` throws propagates (the guard ignores it).
 */
export function createCounterHooks(sink: CounterSink, options: SafetyMetricsOptions = {}): CounterHooks {
  const maxToolLabels = options.maxToolLabels ?? 200;
  const maxToolLabelLength = options.maxToolLabelLength ?? 128;
  const phantomLabels = { provider: String(options.provider ?? ''), model: String(options.model ?? '') };
  // Tool names and actions come from the model: both labels are bounded alike.
  const toolLabels = boundedLabels(maxToolLabels, maxToolLabelLength);
  const toolLabel = toolLabels.label;
  const actionLabels = boundedLabels(maxToolLabels, maxToolLabelLength);

  return {
    onDecision(decision) {
      if (decision?.allowed !== false) return;
      const state = String(decision.state);
      if (decision.subject === 'answer') {
        sink('finalBlocks', { state });
        if (decision.rule === 'phantom-claim') sink('phantomDetected', { ...phantomLabels });
        return;
      }
      const tool = toolLabel(decision.tool);
      sink('toolBlocks', { state, tool, kind: String(decision.kind) });
      if (decision.recoveryId !== null) {
        // A tool block always carries the recovery id `<error code>:<tool>`.
        const errorCode = String(decision.recoveryId).split(':', 1)[0]!;
        sink('recoveryAttempts', { error_code: errorCode, tool });
        sink('allRecoveryAttempts', { error_code: errorCode, tool });
      }
    },
    onRecoveryRaised(event) {
      const recovery = event?.recovery;
      if (recovery === undefined) return;
      const tool = toolLabel(recovery.tool);
      const errorCode = String(recovery.errorCode);
      sink('allRecoveryAttempts', { error_code: errorCode, tool });
      if (errorCode === ErrCodeStrictResolution) sink('strictResolutionBlocks', { tool, action: actionLabels.label(event.action) });
    },
    onRecovery(event) {
      const recovery = event?.recovery;
      if (recovery === undefined) return;
      sink('recoverySuccesses', { error_code: String(recovery.errorCode), tool: toolLabel(recovery.tool) });
    },
    forgetToolLabels() {
      toolLabels.clear();
      actionLabels.clear();
    },
  };
}

/** The counters of one process (or of whatever the hooks are attached to), kept in memory. */
export interface SafetyMetrics extends SafetyHooks {
  /** The counters of `SAFETY_COUNTERS`, in its order, each with its series so far (fresh objects). */
  collect(): CounterFamily[];
  /** The count of one series, 0 when it has none; e.g. `value('fsm_final_block_total', { state: 'VERIFYING' })`. */
  value(name: string, labels: Readonly<Record<string, string>>): number;
  /** Zero every counter (drops every series). */
  reset(): void;
}

interface Counter extends CounterDefinition {
  series: Map<string, CounterSample & { labels: Record<string, string> }>;
}

function seriesKey(counter: Counter, labels: Readonly<Record<string, string>>): string {
  return JSON.stringify(counter.labelNames.map((label) => labels[label] ?? ''));
}

/**
 * Creates the counters of `SAFETY_COUNTERS` in memory, fed by the hooks of
 * `createCounterHooks` (see there for what each counts), for any exporter to
 * read with `collect()`. For Prometheus, `pulse-safety-fsm/prometheus`
 * counts into prom-client counters instead.
 *
 * Never throws from its hooks, whatever the events hold.
 */
export function createSafetyMetrics(options: SafetyMetricsOptions = {}): SafetyMetrics {
  const counters = new Map<string, Counter>(
    SAFETY_COUNTER_KEYS.map((key) => [key, { ...SAFETY_COUNTERS[key], series: new Map() }] as const),
  );
  const hooks = createCounterHooks((key, labels: Record<string, string>) => {
    const counter = counters.get(key)!;
    const id = seriesKey(counter, labels);
    const sample = counter.series.get(id);
    if (sample === undefined) counter.series.set(id, { labels: { ...labels }, value: 1 });
    else sample.value += 1;
  }, options);

  return {
    onDecision: hooks.onDecision,
    onRecovery: hooks.onRecovery,
    onRecoveryRaised: hooks.onRecoveryRaised,
    collect() {
      return [...counters.values()].map((c) => ({
        name: c.name,
        help: c.help,
        type: 'counter' as const,
        labelNames: [...c.labelNames],
        samples: [...c.series.values()].map((sample) => ({ labels: { ...sample.labels }, value: sample.value })),
      }));
    },
    value(name, labels) {
      const c = [...counters.values()].find((candidate) => candidate.name === name);
      return c === undefined ? 0 : (c.series.get(seriesKey(c, labels))?.value ?? 0);
    },
    reset() {
      for (const c of counters.values()) c.series.clear();
      hooks.forgetToolLabels();
    },
  };
}
