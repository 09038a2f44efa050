/**
 * Exporting the gate's counters to Prometheus, without a client library.
 *
 * The counters (src/telemetry/metrics.ts) are plain data; `toPrometheusText` renders
 * them in the Prometheus text exposition format (version 0.0.4), which is
 * what a `/metrics` endpoint serves:
 *
 *   import { createServer } from 'node:http';
 *   createServer((_req, res) => {
 *     res.setHeader('Content-Type', PROMETHEUS_CONTENT_TYPE);
 *     res.end(toPrometheusText(metrics.collect()));
 *   }).listen(9464);
 *
 * With prom-client instead, create four `Counter`s with the same names and
 * label names, and `inc(labels)` them from the same two hooks.
 *
 * Run it (after `npm run build`) to print the counters of a short session:
 * `node dist/examples/prometheus.js`. In your own code import from
 * `pulse-safety-fsm` rather than `../src/index.js`.
 */
import { pathToFileURL } from 'node:url';
import { createSafetyMetrics, createSessionGuard, type CounterFamily } from '../src/index.js';

/** The Content-Type of the text exposition format. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** A label value, escaped: backslash, double quote and line feed. */
function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** HELP text, escaped: backslash and line feed. */
function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/**
 * Renders counter families in the Prometheus text exposition format: a
 * `# HELP` and `# TYPE` line per family, then one `name{label="value",...} count`
 * line per series; a family without series gets no sample line.
 */
export function toPrometheusText(families: readonly CounterFamily[]): string {
  const lines: string[] = [];
  for (const family of families) {
    lines.push(`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} ${family.type}`);
    for (const { labels, value } of family.samples) {
      const pairs = family.labelNames.map((name) => `${name}="${escapeLabel(labels[name] ?? '')}"`);
      lines.push(`${family.name}{${pairs.join(',')}} ${value}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** A short session with a refused write, a refused final answer and a recovery; returns the exposition. */
export function demo(): string {
  const metrics = createSafetyMetrics();
  const guard = createSessionGuard({
    onDecision: metrics.onDecision,
    onRecovery: metrics.onRecovery,
    onRecoveryRaised: metrics.onRecoveryRaised,
  });
  guard.check({ id: '1', name: 'pulse_control', args: { action: 'restart' } }); // refused: no target yet
  guard.check({ id: '2', name: 'pulse_query' });
  guard.record({ id: '2', name: 'pulse_query' });
  guard.check({ id: '3', name: 'pulse_control', args: { action: 'restart' } }); // admitted now
  guard.record({ id: '3', name: 'pulse_control' }); // succeeds, clearing the pending recovery
  guard.finalAnswer(); // refused: the restart is unverified
  return toPrometheusText(metrics.collect());
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.stdout.write(demo());
}
