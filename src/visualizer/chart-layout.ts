/**
 * Graphviz layout off the server's event loop: a worker thread runs
 * `@viz-js/viz` (Graphviz compiled to WebAssembly) and lays out one chart at
 * a time. A layout that takes longer than its time limit is stopped (the
 * worker is terminated; the next layout starts a fresh one), so a machine
 * whose layout would take minutes neither blocks the server nor occupies
 * the worker for long. Waiting layouts are bounded too.
 *
 * Spec: none (the visualizer's own robustness); bounds in bounds.ts.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { CHART_LAYOUT_TIMEOUT_MS, MAX_QUEUED_LAYOUTS } from './bounds.js';

/** A chart that cannot be laid out: too slow, too many waiting, or Graphviz refused it. */
export class ChartLayoutError extends Error {
  /** `timeout`: stopped at the time limit; `busy`: too many layouts waiting; `graphviz`: Graphviz reported an error. */
  readonly reason: 'timeout' | 'busy' | 'graphviz' | 'closed';
  constructor(reason: ChartLayoutError['reason'], message: string) {
    super(message);
    this.name = 'ChartLayoutError';
    this.reason = reason;
  }
}

// The worker's code: CommonJS, given Graphviz's CommonJS build by path. It
// says when Graphviz is loaded, so the time limit counts the layout alone.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const viz = require(workerData.vizPath).instance();
viz.then(() => parentPort.postMessage({ ready: true }), (error) => { throw error; });
parentPort.on('message', async ({ dot }) => {
  try {
    const result = (await viz).render(dot, { format: 'svg' });
    if (result.status === 'success') parentPort.postMessage({ svg: result.output });
    else parentPort.postMessage({ error: result.errors.map((e) => e.message).join('; ') });
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message ? error.message : error) });
  }
});
`;

interface Job {
  dot: string;
  resolve: (svg: string) => void;
  reject: (error: Error) => void;
}

/** Lays out Graphviz DOT as SVG in a worker thread, one chart at a time. */
export class ChartRenderer {
  private worker: Worker | null = null;
  /** Whether the current worker has loaded Graphviz. */
  private ready = false;
  private readonly queue: Job[] = [];
  private running: Job | null = null;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly timeoutMs: number;
  private readonly maxQueued: number;
  private readonly vizPath = createRequire(import.meta.url).resolve('@viz-js/viz');

  /**
   * @param options.timeoutMs the time limit of one layout, ms (default `CHART_LAYOUT_TIMEOUT_MS`).
   * @param options.maxQueued layouts that may wait (default `MAX_QUEUED_LAYOUTS`).
   */
  constructor(options: { timeoutMs?: number; maxQueued?: number } = {}) {
    this.timeoutMs = options.timeoutMs ?? CHART_LAYOUT_TIMEOUT_MS;
    this.maxQueued = options.maxQueued ?? MAX_QUEUED_LAYOUTS;
  }

  /**
   * The SVG of `dot`.
   * @throws ChartLayoutError (as a rejection) when the layout passes the
   *   time limit, too many layouts wait, Graphviz reports an error, or the
   *   renderer is closed.
   */
  render(dot: string): Promise<string> {
    if (this.closed) return Promise.reject(new ChartLayoutError('closed', 'the visualizer is shutting down'));
    if (this.queue.length >= this.maxQueued) {
      return Promise.reject(new ChartLayoutError('busy', `${this.queue.length} charts are waiting to be laid out; try again shortly`));
    }
    return new Promise<string>((resolve, reject) => {
      this.queue.push({ dot, resolve, reject });
      this.next();
    });
  }

  private start(): Worker {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { vizPath: this.vizPath } });
    worker.unref();
    worker.on('message', (message: { ready?: boolean; svg?: string; error?: string }) => {
      if (message.ready === true) {
        if (this.worker !== worker) return;
        this.ready = true;
        if (this.running !== null) this.startTimer(worker, this.running);
        return;
      }
      const job = this.finish();
      if (job === null) return;
      if (typeof message.svg === 'string') job.resolve(message.svg);
      else job.reject(new ChartLayoutError('graphviz', `Graphviz could not render the chart: ${message.error ?? 'unknown error'}`));
      this.next();
    });
    const lost = (why: string) => {
      if (this.worker !== worker) return;
      this.worker = null;
      const job = this.finish();
      job?.reject(new ChartLayoutError('graphviz', `the layout worker stopped (${why})`));
      this.next();
    };
    worker.on('error', (error) => lost(error.message));
    worker.on('exit', (code) => lost(`exit code ${code}`));
    return worker;
  }

  /** The running job, now finished (its timer cleared), or null. */
  private finish(): Job | null {
    const job = this.running;
    this.running = null;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    return job;
  }

  private next(): void {
    if (this.running !== null || this.closed) return;
    const job = this.queue.shift();
    if (job === undefined) return;
    this.running = job;
    if (this.worker === null) {
      this.ready = false;
      this.worker = this.start();
    }
    this.worker.postMessage({ dot: job.dot });
    // The time limit runs from when Graphviz is loaded (now, or at the worker's `ready`).
    if (this.ready) this.startTimer(this.worker, job);
  }

  private startTimer(worker: Worker, job: Job): void {
    this.timer = setTimeout(() => {
      if (this.running !== job) return;
      this.worker = null; // its exit event is then ignored
      this.finish();
      void worker.terminate();
      job.reject(new ChartLayoutError('timeout', `laying out the chart took longer than ${this.timeoutMs / 1000} s, so it was stopped`));
      this.next();
    }, this.timeoutMs);
    this.timer.unref();
  }

  /** Stops the worker; waiting and running layouts are rejected. */
  async close(): Promise<void> {
    this.closed = true;
    const jobs = [...(this.running ? [this.running] : []), ...this.queue.splice(0)];
    this.finish();
    for (const job of jobs) job.reject(new ChartLayoutError('closed', 'the visualizer is shutting down'));
    const worker = this.worker;
    this.worker = null;
    if (worker !== null) await worker.terminate();
  }
}
