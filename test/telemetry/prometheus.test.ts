/**
 * `pulse-safety-fsm/prometheus` (src/telemetry/prometheus.ts): the gate's
 * counters in a real prom-client registry, driven by a real guard, read back
 * by parsing the registry's own exposition text. Spec: DESIGN.md §1.
 */
import { Counter, Registry, register, type OpenMetricsContentType } from 'prom-client';
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createSessionGuard, type SessionGuard } from '../../src/guard/session-guard.js';
import type { SafetyHooks } from '../../src/telemetry/metrics.js';
import { OTHER_TOOL_LABEL, SAFETY_COUNTERS, createSafetyMetrics } from '../../src/telemetry/metrics.js';
import { createPrometheusMetrics, type PrometheusMetrics } from '../../src/telemetry/prometheus.js';
import { parseExposition, sampleValue } from '../support/prometheus-text.js';

const READ = 'pulse_metrics';
const WRITE = 'pulse_control';

function meteredGuard(hooks: SafetyHooks): SessionGuard {
  let t = 1_700_000_000_000;
  return createSessionGuard({
    now: () => (t += 1000),
    onDecision: hooks.onDecision,
    onRecovery: hooks.onRecovery,
    onRecoveryRaised: hooks.onRecoveryRaised,
  });
}

/** A refused write, a read, the write admitted and succeeding (clearing the recovery), a refused final answer, a refused write again. */
function session(guard: SessionGuard): void {
  guard.check({ id: 'w1', name: WRITE, args: { action: 'restart' } });
  guard.check({ id: 'r', name: READ });
  guard.record({ id: 'r', name: READ });
  guard.check({ id: 'w2', name: WRITE, args: { action: 'restart' } });
  guard.record({ id: 'w2', name: WRITE });
  guard.finalAnswer();
  guard.finalAnswer();
  guard.check({ id: 'w3', name: WRITE, args: { action: 'restart' } });
}

async function scrape(registry: Registry) {
  return parseExposition(await registry.metrics());
}

describe('createPrometheusMetrics', () => {
  it('registers one counter per entry of SAFETY_COUNTERS, with its HELP text, and no series before a decision', async () => {
    const registry = new Registry();
    createPrometheusMetrics({ registry });
    const families = await scrape(registry);
    expect([...families.values()].map((f) => [f.name, f.type, f.help, f.samples])).toEqual(
      Object.values(SAFETY_COUNTERS).map((c) => [c.name, 'counter', c.help, []]),
    );
  });

  it('counts a session’s refusals and its recovery under the original’s names and labels', async () => {
    const registry = new Registry();
    session(meteredGuard(createPrometheusMetrics({ registry })));
    const families = await scrape(registry);
    expect(families.get('fsm_tool_block_total')!.samples).toEqual([
      { name: 'fsm_tool_block_total', labels: { state: 'RESOLVING', tool: WRITE, kind: 'write' }, value: 1 },
      { name: 'fsm_tool_block_total', labels: { state: 'VERIFYING', tool: WRITE, kind: 'write' }, value: 1 },
    ]);
    expect(families.get('fsm_final_block_total')!.samples).toEqual([
      { name: 'fsm_final_block_total', labels: { state: 'VERIFYING' }, value: 2 },
    ]);
    expect(sampleValue(families, 'auto_recovery_attempt_total', { error_code: 'FSM_BLOCKED', tool: WRITE })).toBe(2);
    expect(sampleValue(families, 'auto_recovery_success_total', { error_code: 'FSM_BLOCKED', tool: WRITE })).toBe(1);
  });

  it('counts exactly what createSafetyMetrics counts from the same decisions', async () => {
    const registry = new Registry();
    const prometheus = createPrometheusMetrics({ registry, maxToolLabels: 3 });
    const memory = createSafetyMetrics({ maxToolLabels: 3 });
    const guard = meteredGuard({
      onDecision: (d) => (prometheus.onDecision(d), memory.onDecision(d)),
      onRecovery: (e) => (prometheus.onRecovery(e), memory.onRecovery(e)),
      onRecoveryRaised: (e) => (prometheus.onRecoveryRaised(e), memory.onRecoveryRaised(e)),
    });
    session(guard);
    for (const name of ['t1', 't2', 't3', 't4', 't1']) guard.check({ name });
    const families = await scrape(registry);
    for (const family of memory.collect()) {
      const scraped = families.get(family.name)!.samples.map(({ labels, value }) => ({ labels, value }));
      expect(scraped, family.name).toEqual(expect.arrayContaining(family.samples));
      expect(scraped).toHaveLength(family.samples.length);
    }
  });

  it('counts tools past the label limit under _other', async () => {
    const registry = new Registry();
    const guard = meteredGuard(createPrometheusMetrics({ registry, maxToolLabels: 2, maxToolLabelLength: 5 }));
    for (const name of ['t1', 'too_long', 't2', 't3', 't4']) guard.check({ name });
    const families = await scrape(registry);
    expect(families.get('fsm_tool_block_total')!.samples.map((s) => [s.labels.tool, s.value])).toEqual([
      ['t1', 1],
      [OTHER_TOOL_LABEL, 3],
      ['t2', 1],
    ]);
  });

  it('gives back a tool name with quotes, backslashes and a line feed intact through the exposition', async () => {
    const registry = new Registry();
    const tool = 'a"b\\c\nd';
    meteredGuard(createPrometheusMetrics({ registry })).check({ name: tool });
    expect(sampleValue(await scrape(registry), 'fsm_tool_block_total', { state: 'RESOLVING', tool, kind: 'write' })).toBe(1);
  });

  it('shares its counters across many guards', async () => {
    const registry = new Registry();
    const metrics = createPrometheusMetrics({ registry });
    meteredGuard(metrics).finalAnswer();
    const writer = meteredGuard(metrics);
    writer.record({ name: WRITE });
    writer.finalAnswer();
    meteredGuard(metrics).record({ name: WRITE });
    const other = meteredGuard(metrics);
    other.record({ name: WRITE });
    other.finalAnswer();
    expect(sampleValue(await scrape(registry), 'fsm_final_block_total', { state: 'VERIFYING' })).toBe(2);
  });

  it('is zeroed by the registry’s resetMetrics', async () => {
    const registry = new Registry();
    meteredGuard(createPrometheusMetrics({ registry })).check({ name: WRITE });
    registry.resetMetrics();
    expect([...(await scrape(registry)).values()].every((f) => f.samples.length === 0)).toBe(true);
  });

  it('refuses a registry that already holds one of the names, and registers nothing in it', async () => {
    const registry = new Registry();
    new Counter({ name: 'fsm_final_block_total', help: 'someone else’s', registers: [registry] });
    expect(() => createPrometheusMetrics({ registry })).toThrow(/fsm_final_block_total/);
    expect([...(await scrape(registry)).keys()]).toEqual(['fsm_final_block_total']);
  });

  it('refuses a second registration in the same registry', () => {
    const registry = new Registry();
    createPrometheusMetrics({ registry });
    expect(() => createPrometheusMetrics({ registry })).toThrow(/once per registry/);
  });

  it('works in an OpenMetrics registry too', async () => {
    const registry = new Registry<OpenMetricsContentType>();
    registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    meteredGuard(createPrometheusMetrics({ registry })).check({ name: WRITE });
    expect(await registry.metrics()).toContain('fsm_tool_block_total{state="RESOLVING",tool="pulse_control",kind="write"} 1');
  });

  it('ignores malformed events rather than throw', () => {
    const metrics = createPrometheusMetrics({ registry: new Registry() });
    expect(() => metrics.onDecision(null as never)).not.toThrow();
    expect(() => metrics.onRecovery({} as never)).not.toThrow();
  });
});

describe('createPrometheusMetrics without a registry', () => {
  let metrics: PrometheusMetrics | undefined;
  afterEach(() => metrics?.unregister());

  it('registers in prom-client’s global register, and unregister takes the counters out again', async () => {
    metrics = createPrometheusMetrics();
    meteredGuard(metrics).check({ name: WRITE });
    expect(
      sampleValue(parseExposition(await register.metrics()), 'fsm_tool_block_total', { state: 'RESOLVING', tool: WRITE, kind: 'write' }),
    ).toBe(1);
    metrics.unregister();
    const names = [...parseExposition(await register.metrics()).keys()];
    expect(names.filter((name) => Object.values(SAFETY_COUNTERS).some((c) => c.name === name))).toEqual([]);
    metrics = createPrometheusMetrics();
    expect(register.getSingleMetric('fsm_tool_block_total')).toBeDefined();
  });
});

describe('the subpath', () => {
  it('is pulse-safety-fsm/prometheus, built from src/telemetry/prometheus.ts, with prom-client an optional peer', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      exports: Record<string, { types: string; import: string; require: string }>;
      peerDependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
    };
    expect(pkg.exports['./prometheus']).toEqual({
      types: './dist/src/telemetry/prometheus.d.ts',
      import: './dist/src/telemetry/prometheus.js',
      require: './esm-only.cjs',
    });
    expect(existsSync(new URL('../../src/telemetry/prometheus.ts', import.meta.url))).toBe(true);
    expect(pkg.peerDependencies['prom-client']).toBeDefined();
    expect(pkg.peerDependenciesMeta['prom-client']?.optional).toBe(true);
  });

  it('is not loaded by the main entry, so an app without prom-client can import the package', () => {
    const seen = new Set<string>();
    const pending = [new URL('../../src/index.ts', import.meta.url).href];
    const bare = new Set<string>();
    for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
      if (seen.has(file)) continue;
      seen.add(file);
      const source = readFileSync(new URL(file), 'utf8');
      for (const [, specifier] of source.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)) {
        if (specifier!.startsWith('.')) pending.push(new URL(specifier!.replace(/\.js$/, '.ts'), file).href);
        else bare.add(specifier!);
      }
    }
    expect(seen.size).toBeGreaterThan(20);
    expect([...seen].filter((file) => file.endsWith('/telemetry/prometheus.ts'))).toEqual([]);
    expect(bare).not.toContain('prom-client');
    expect(bare).toContain('xstate');
  });
});
