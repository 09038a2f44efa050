/**
 * The gate's counters in a prom-client registry: `pulse-safety-fsm/prometheus`.
 *
 * `createPrometheusMetrics` registers one prom-client `Counter` per entry of
 * `SAFETY_COUNTERS` (the original's names, HELP texts and label names) and
 * returns the guard's two hooks, which increment them by the rules of
 * `createCounterHooks`. prom-client is an optional peer dependency of this
 * subpath only. Spec: DESIGN.md §1 (metric names and labels).
 *
 * @example
 * import { register } from 'prom-client';
 * import { createSessionStore } from 'pulse-safety-fsm';
 * import { createPrometheusMetrics } from 'pulse-safety-fsm/prometheus';
 *
 * const metrics = createPrometheusMetrics(); // into prom-client's default `register`
 * const sessions = createSessionStore({
  guard: { onDecision: metrics.onDecision, onRecovery: metrics.onRecovery, onRecoveryRaised: metrics.onRecoveryRaised },
});
 * // GET /metrics: res.setHeader('Content-Type', register.contentType); res.end(await register.metrics());
 */
import { Counter, register, type OpenMetricsContentType, type Registry } from 'prom-client';
import {
  SAFETY_COUNTERS,
  SAFETY_COUNTER_KEYS,
  createCounterHooks,
  type SafetyCounterKey,
  type SafetyHooks,
  type SafetyMetricsOptions,
} from './metrics.js';

/** Options of `createPrometheusMetrics`: the registry, and the `tool` label limits of `SafetyMetricsOptions`. */
export interface PrometheusMetricsOptions extends SafetyMetricsOptions {
  /** The registry the counters go into (Prometheus or OpenMetrics content type); default prom-client's global `register`. */
  registry?: Registry | Registry<OpenMetricsContentType>;
}

/** The guard's hooks, and the prom-client counters they increment. */
export interface PrometheusMetrics extends SafetyHooks {
  /** The registered counters, by key of `SAFETY_COUNTERS` (e.g. `counters.toolBlocks` is `fsm_tool_block_total`). */
  readonly counters: Readonly<Record<SafetyCounterKey, Counter>>;
  /** Removes the counters from the registry; the hooks then count into counters no scrape sees. */
  unregister(): void;
}

/**
 * Registers the gate's counters in `registry` (default prom-client's global
 * `register`) and returns the hooks that count into them: pass `onDecision`
 * `onRecovery` and `onRecoveryRaised` to every guard (or session store) whose decisions these
 * counters should count, once each, and to no `createSafetyMetrics` as well
 * (each set of hooks counts what it is given).
 *
 * Counters start with no series (a scrape shows HELP and TYPE only);
 * `registry.resetMetrics()` zeroes them. Tool names past
 * `maxToolLabels` distinct (default 200) or longer than `maxToolLabelLength`
 * (default 128) are counted under `tool="_other"`.
 *
 * @throws Error when `registry` already holds a metric of one of the names
 *   (nothing is registered then): one registry, one set of the gate's counters.
 */
export function createPrometheusMetrics(options: PrometheusMetricsOptions = {}): PrometheusMetrics {
  const registry = options.registry ?? register;
  const taken = SAFETY_COUNTER_KEYS.map((key) => SAFETY_COUNTERS[key].name).filter((name) => registry.getSingleMetric(name) !== undefined);
  if (taken.length > 0) throw new Error(`the registry already holds ${taken.join(', ')}: register the gate's counters once per registry`);
  const counters = Object.fromEntries(
    SAFETY_COUNTER_KEYS.map((key) => {
      const { name, help, labelNames } = SAFETY_COUNTERS[key];
      return [key, new Counter({ name, help, labelNames: [...labelNames], registers: [registry] })];
    }),
  ) as Record<SafetyCounterKey, Counter>;
  const hooks = createCounterHooks((key, labels) => counters[key].inc(labels), options);
  return {
    onDecision: hooks.onDecision,
    onRecovery: hooks.onRecovery,
    onRecoveryRaised: hooks.onRecoveryRaised,
    counters,
    unregister() {
      for (const key of SAFETY_COUNTER_KEYS) registry.removeSingleMetric(SAFETY_COUNTERS[key].name);
    },
  };
}
