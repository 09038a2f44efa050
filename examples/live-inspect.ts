/**
 * Streaming a live session to the visualizer with `@statelyai/inspect`.
 *
 * An application that embeds the gate streams its actor to the visualizer's
 * server with the WebSocket inspector; the page's Live tab lists the
 * sessions it sees and follows the chosen one on the chart.
 *
 *   npm start                                  # or: node dist/src/bin.js serve
 *   npm run build && node dist/examples/live-inspect.js [--url <ws url>] [--step-ms <ms>] [--manual]
 *
 * It plays a short agent session through `createSessionGuard`: a resolve, a
 * write, a refused final answer, a refused second write, a verifying read,
 * an allowed answer. `--manual` runs one step per line read from standard
 * input (press Enter), for driving it by hand or from a test. In your own
 * code import from `pulse-safety-fsm` rather than `../src/index.js`.
 *
 * Two ways to stream an actor (`@xstate/inspect` only works with XState v4;
 * `@statelyai/inspect` is its XState v5 successor):
 * - an actor you create yourself: `createActor(safetyMachine, { inspect: inspector.inspect })`;
 * - the actor inside a session guard (below): announce it with
 *   `inspector.actor(...)`, then `guard.actor.system.inspect(inspector.inspect)`.
 *
 * `@statelyai/inspect`'s WebSocket inspector retries a failed connection
 * every 5 s without saying so, so the example first checks that the
 * endpoint answers and, when it does not, prints one line and exits 1.
 */
import { createInterface } from 'node:readline';
import { createWebSocketInspector } from '@statelyai/inspect';
import { Command, InvalidArgumentError } from 'commander';
import { WebSocket } from 'ws';
import { createSessionGuard, type SessionGuard } from '../src/index.js';

/** The visualizer's inspection endpoint when it runs on its default port. */
export const DEFAULT_INSPECT_URL = 'ws://127.0.0.1:4310/inspect';

/** One step of the scripted agent session: what it does, as a line of text. */
type Step = (guard: SessionGuard) => string;

function check(id: string, name: string, args: object): Step {
  return (guard) => {
    const decision = guard.check({ id, name, args });
    return `check ${id} ${name} (${decision.kind}): ${decision.allowed ? 'allowed' : `blocked ${decision.error.code}`}`;
  };
}

function succeed(id: string, name: string): Step {
  return (guard) => {
    guard.record({ id, name }, 'success');
    return `${id} ${name} succeeded`;
  };
}

const finalAnswer: Step = (guard) => {
  const decision = guard.finalAnswer();
  return `final answer: ${decision.allowed ? 'allowed' : `refused ${decision.error.code}`}`;
};

/** The scripted session, in Pulse tool names (DESIGN.md §2). */
export const STEPS: readonly Step[] = [
  check('c1', 'pulse_search_resources', { query: 'web-01' }),
  succeed('c1', 'pulse_search_resources'),
  check('c2', 'pulse_control', { action: 'restart', target: 'web-01' }),
  succeed('c2', 'pulse_control'),
  finalAnswer,
  check('c3', 'pulse_control_docker', { action: 'stop', container: 'cache' }),
  check('c4', 'pulse_metrics', { resource: 'web-01' }),
  succeed('c4', 'pulse_metrics'),
  finalAnswer,
];

function positiveInteger(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('expected a whole number of milliseconds');
  return n;
}

const program = new Command('live-inspect')
  .description('stream a scripted session guard to the pulse-safety visualizer')
  .option('--url <url>', "the visualizer's inspection endpoint", DEFAULT_INSPECT_URL)
  .option('--step-ms <ms>', 'pause between steps', positiveInteger, 1500)
  .option('--manual', 'run one step per line read from standard input')
  .parse();
const options = program.opts<{ url: string; stepMs: number; manual?: boolean }>();

/**
 * Resolves once a WebSocket to `url` opens (then closes it); rejects with the
 * reason when it cannot connect within 5 s.
 */
function checkReachable(url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let socket: WebSocket;
    try {
      socket = new WebSocket(url, { handshakeTimeout: 5_000 });
    } catch (error) {
      return reject(error as Error);
    }
    socket.once('open', () => {
      socket.close();
      resolve();
    });
    socket.once('error', reject);
  });
}

try {
  await checkReachable(options.url);
} catch (error) {
  console.error(
    `live-inspect: cannot connect to ${options.url} (${(error as Error).message || 'connection failed'}); start the visualizer first (npm start)`,
  );
  process.exit(1);
}

// 1. The inspector: a WebSocket client of the visualizer's server.
const inspector = createWebSocketInspector({ url: options.url });

// 2. The application's session guard; stream its actor: announce it, then every event and snapshot.
const guard = createSessionGuard();
inspector.actor(guard.actor, guard.actor.getSnapshot());
guard.actor.system.inspect(inspector.inspect);

console.log(`streaming session ${guard.actor.sessionId} to ${options.url} (state ${guard.state})`);

function runStep(index: number): void {
  const line = STEPS[index]!(guard);
  console.log(`step ${index + 1}/${STEPS.length}: ${line} -> ${guard.state}`);
}

function stop(): void {
  inspector.stop();
  process.exit(0);
}
process.once('SIGINT', stop);
process.once('SIGTERM', stop);

if (options.manual) {
  let next = 0;
  const input = createInterface({ input: process.stdin });
  input.on('line', () => {
    if (next >= STEPS.length) return;
    runStep(next++);
    if (next === STEPS.length) console.log('done: the session stays connected until standard input closes');
  });
  input.on('close', stop);
} else {
  let next = 0;
  const timer = setInterval(() => {
    runStep(next++);
    if (next === STEPS.length) {
      clearInterval(timer);
      console.log('done: the session stays connected; press Ctrl+C to stop');
    }
  }, options.stepMs);
}
