/**
 * The gate's counters on a Prometheus `/metrics` endpoint, through prom-client.
 *
 * `createPrometheusMetrics` (`pulse-safety-fsm/prometheus`) registers the
 * original's counters in a prom-client registry and hands back the
 * guard's two hooks; a plain `node:http` server answers `GET /metrics` with
 * `registry.metrics()`.
 *
 * Run it (after `npm run build`): `node dist/examples/prometheus.js`, then
 * `curl http://127.0.0.1:9464/metrics` (`--port 0` picks a free port). In your own code import
 * from `pulse-safety-fsm` and `pulse-safety-fsm/prometheus` rather than `../src/...`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { Registry, register } from 'prom-client';
import { createSessionGuard } from '../src/index.js';
import { createPrometheusMetrics } from '../src/telemetry/prometheus.js';

/** A short session with a refused write, a recovery and a refused final answer, counted into `registry`. */
export function demo(registry: Registry = register): void {
  const metrics = createPrometheusMetrics({ registry });
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
}

/**
 * Serves `registry` at `GET /metrics` on 127.0.0.1:`port` (0: a free port);
 * any other path answers 404. Resolves once listening, to the server and the
 * endpoint's URL.
 */
export async function serveMetrics(registry: Registry = register, port = 9464): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics` };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({ options: { port: { type: 'string', default: '9464' } } });
  demo(register);
  const { url } = await serveMetrics(register, Number(values.port));
  process.stdout.write(`serving the gate's counters at ${url}\n`);
}
