/**
 * The Prometheus example (examples/prometheus.ts): the gate's counters in a
 * prom-client registry, served at `/metrics` on 127.0.0.1 and scraped over
 * HTTP, in this process and as the example's own Node process.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { demo, serveMetrics } from '../../examples/prometheus.js';
import { SAFETY_COUNTERS } from '../../src/telemetry/metrics.js';
import { parseExposition, sampleValue, type ScrapedFamily } from '../support/prometheus-text.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REGISTER_TS = fileURLToPath(new URL('../support/ts-register.mjs', import.meta.url));

/** What the demo session counts: one refused write, its recovery, one refused final answer. */
function expectDemoCounts(families: Map<string, ScrapedFamily>): void {
  expect(sampleValue(families, 'fsm_tool_block_total', { state: 'RESOLVING', tool: 'pulse_control', kind: 'write' })).toBe(1);
  expect(sampleValue(families, 'fsm_final_block_total', { state: 'VERIFYING' })).toBe(1);
  expect(sampleValue(families, 'auto_recovery_attempt_total', { error_code: 'FSM_BLOCKED', tool: 'pulse_control' })).toBe(1);
  expect(sampleValue(families, 'auto_recovery_success_total', { error_code: 'FSM_BLOCKED', tool: 'pulse_control' })).toBe(1);
  const original = ['fsm_tool_block_total', 'fsm_final_block_total', 'auto_recovery_attempt_total', 'auto_recovery_success_total'];
  expect(original.flatMap((name) => families.get(name)?.samples ?? [])).toHaveLength(4);
}

describe('the Prometheus example', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const cleanup of cleanups.splice(0)) cleanup();
  });

  it('serves the demo session’s counters at /metrics, scraped over HTTP', async () => {
    const registry = new Registry();
    demo(registry);
    const { server, url } = await serveMetrics(registry, 0);
    cleanups.push(() => server.close());
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(registry.contentType);
    const families = parseExposition(await response.text());
    expect([...families.values()].map((f) => [f.name, f.type])).toEqual(Object.values(SAFETY_COUNTERS).map((c) => [c.name, 'counter']));
    expectDemoCounts(families);
  });

  it('answers 404 off /metrics', async () => {
    const { server, url } = await serveMetrics(new Registry(), 0);
    cleanups.push(() => server.close());
    expect((await fetch(url.replace('/metrics', '/'))).status).toBe(404);
    expect((await fetch(url, { method: 'POST' })).status).toBe(404);
  });

  it('runs as its own process, serving prom-client’s default registry on 127.0.0.1', async () => {
    const child = spawn(process.execPath, ['--import', REGISTER_TS, 'examples/prometheus.ts', '--port', '0'], {
      cwd: ROOT,
      timeout: 60_000,
    });
    cleanups.push(() => child.kill());
    const stdout = await new Promise<string>((resolve, reject) => {
      let out = '';
      let err = '';
      child.stderr.on('data', (data: Buffer) => (err += data.toString()));
      child.stdout.on('data', (data: Buffer) => {
        out += data.toString();
        if (out.includes('\n')) resolve(out);
      });
      child.on('exit', (code) => reject(new Error(`the example exited (${code}) before serving: ${out}${err}`)));
    });
    const url = /serving the gate's counters at (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(stdout)?.[1];
    expect(url, stdout).toBeDefined();
    expectDemoCounts(parseExposition(await (await fetch(url!)).text()));
  });
});
