/**
 * The `hooks` section of the benchmark (`npm run bench -- hooks`; issue 25
 * item 7): the whole-process latency of `pulse-safety hook claude-code`
 * answering a before-tool event (Claude Code's `PreToolUse`), as a coding
 * agent runs it once per tool call, against a bare `node -e 0` measured in
 * the same run, interleaved (every variant once per round, medians over the
 * rounds), each run with a fresh state directory (`PULSE_SAFETY_STATE_DIR`).
 *
 * Rows: a `Read`, a `Bash` command (tree-sitter-bash loaded), a `Bash`
 * command running SQL (`psql -c`: libpg-query loaded as well), through the
 * hook bundle with its code cache warm (what an installed hook runs); then
 * the same `Read` without the code cache (its first run) and through the
 * hook's modules without the bundle, to show what each step buys; then the
 * same three calls with the daemon (`pulse-safety hook serve`,
 * `hookDaemonRows`). Targets: Read ≤ 1.5×, Bash ≤ 2.5×, SQL ≤ 3× the bare
 * process.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { daemonForwarderCommand } from '../src/hooks/daemon.js';
import { shellQuote } from '../src/hooks/install.js';

/** One row of the bench's table. */
export interface HookBenchRow {
  measure: string;
  value: string;
  baseline: string;
  ratio: string;
  target: string;
}

const BIN = fileURLToPath(new URL('../src/bin.js', import.meta.url));
const BUNDLE = fileURLToPath(new URL('../hook/hook.cjs', import.meta.url));

/** A Claude Code `PreToolUse` payload for a first call of a fresh session. */
function preToolUse(tool: string, input: Record<string, unknown>): string {
  return JSON.stringify({
    session_id: 'bench-session',
    transcript_path: '/tmp/bench-transcript.jsonl',
    cwd: '/tmp',
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    tool_name: tool,
    tool_input: input,
    tool_use_id: 'toolu_bench_1',
  });
}

interface Variant {
  label: string;
  /** The process to run, or null for the bare `node -e 0`. */
  payload: string | null;
  env?: Record<string, string>;
  /** The target ratio to the bare process, when the row has one. */
  target?: number;
}

/** Milliseconds of one whole process of `variant`; throws when the hook refused (a read must be allowed) or failed. */
function runOnce(variant: Variant, cacheDir: string): number {
  const stateDir = variant.payload === null ? null : mkdtempSync(join(os.tmpdir(), 'pulse-safety-bench-hook-'));
  try {
    const args = variant.payload === null ? ['-e', '0'] : [BIN, 'hook', 'claude-code'];
    const env = {
      ...process.env,
      PULSE_SAFETY_CACHE_DIR: cacheDir,
      ...(stateDir === null ? {} : { PULSE_SAFETY_STATE_DIR: stateDir }),
      ...variant.env,
    };
    const start = process.hrtime.bigint();
    const result = spawnSync(process.execPath, args, { input: variant.payload ?? '', env, encoding: 'utf8' });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (result.status !== 0 || result.stdout.includes('"deny"')) {
      throw new Error(
        `hook bench: ${variant.label} answered exit ${String(result.status)}: ${result.stdout.slice(0, 300)} ${result.stderr.slice(0, 300)}`,
      );
    }
    return ms;
  } finally {
    if (stateDir !== null) rmSync(stateDir, { recursive: true, force: true });
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * The hook latency rows, and notes. `rounds` (default `BENCH_HOOK_ROUNDS`, else
 * 11) runs of every variant, interleaved, after one warm-up round (which also
 * writes the code cache, into a directory of the bench's own).
 */
export function hookLatencyRows(rounds = Number(process.env.BENCH_HOOK_ROUNDS ?? 11)): { rows: HookBenchRow[]; notes: string[] } {
  const notes: string[] = [];
  const bundled = existsSync(BUNDLE);
  if (!bundled)
    notes.push(
      `hooks: no hook bundle at dist/hook/hook.cjs (run \`npm run build\` or \`node scripts/bundle-hook.mjs\`): every row runs the modules.`,
    );
  const read = preToolUse('Read', { file_path: '/tmp/bench/README.md' });
  const bash = preToolUse('Bash', { command: 'git status && ls -la src | grep -v test' });
  const sql = preToolUse('Bash', { command: 'psql -d shop -c "select id, total from orders where id = 42"' });
  const variants: Variant[] = [
    { label: 'node -e 0', payload: null },
    { label: 'before-tool hook, Read', payload: read, target: 1.5 },
    { label: 'before-tool hook, Bash (`git status && ls -la src \\| grep -v test`)', payload: bash, target: 2.5 },
    { label: 'before-tool hook, SQL (`psql -c "select …"`)', payload: sql, target: 3 },
    { label: 'before-tool hook, Read, no code cache', payload: read, env: { PULSE_SAFETY_CODE_CACHE: '0' } },
    { label: 'before-tool hook, Read, modules (no bundle)', payload: read, env: { PULSE_SAFETY_HOOK_BUNDLE: '0' } },
  ];
  const cacheDir = mkdtempSync(join(os.tmpdir(), 'pulse-safety-bench-cache-'));
  try {
    for (const variant of variants) runOnce(variant, cacheDir); // warm-up: the code cache written, the disk cache warm
    const samples = variants.map(() => [] as number[]);
    for (let round = 0; round < rounds; round++) variants.forEach((variant, i) => samples[i]!.push(runOnce(variant, cacheDir)));
    const base = median(samples[0]!);
    const rows = variants.slice(1).map((variant, i) => {
      const ms = median(samples[i + 1]!);
      const ratio = ms / base;
      return {
        measure: `${variant.label}, whole process (ms, median of ${rounds}; no daemon)`,
        value: ms.toFixed(0),
        baseline: `${base.toFixed(0)} (node -e 0)`,
        ratio: `${ratio.toFixed(2)}×`,
        target: variant.target === undefined ? '' : `≤ ${variant.target}×: ${ratio <= variant.target ? 'met' : 'missed'}`,
      };
    });
    notes.push(
      `hooks: ${rounds} interleaved rounds; each hook run is a fresh process with a fresh state directory, answering the first call of a session (allowed: a read); ` +
        `the code cache is the bench's own (PULSE_SAFETY_CACHE_DIR), warm after the first round.`,
    );
    return { rows, notes };
  } finally {
    rmSync(cacheDir, { recursive: true, force: true });
  }
}

/** A Claude Code `PreToolUse` payload of the session `session`. */
function preToolUseOf(session: string, tool: string, input: Record<string, unknown>): string {
  return JSON.stringify({ ...(JSON.parse(preToolUse(tool, input)) as object), session_id: session });
}

/** Blocks the thread for `ms` milliseconds (the bench is synchronous). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** The child script that times HTTP requests alone (Claude Code's http hook: no process): argv url, rounds, payloads (JSON); prints medians in ms. */
const HTTP_TIMER = `
const [url, rounds, payloads] = [process.argv[1], Number(process.argv[2]), JSON.parse(process.argv[3])];
const median = (v) => { const s = [...v].sort((a, b) => a - b), m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
(async () => {
  const samples = payloads.map(() => []);
  let n = 0;
  for (let round = -1; round < rounds; round++) {
    for (let i = 0; i < payloads.length; i++) {
      const body = payloads[i].replace('"bench-session"', '"bench-http-' + n++ + '"');
      const start = process.hrtime.bigint();
      const response = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
      const text = await response.text();
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      if (response.status !== 200 || text.includes('"deny"')) throw new Error('http ' + response.status + ': ' + text.slice(0, 300));
      if (round >= 0) samples[i].push(ms);
    }
  }
  process.stdout.write(JSON.stringify(samples.map(median)));
})().catch((error) => { process.stderr.write(String(error)); process.exitCode = 1; });
`;

/**
 * The rows "with the daemon" (`pulse-safety hook serve`, started here on a
 * free port with a state directory of its own): the whole command hook as
 * `hook install <host> --daemon` writes it for a command-hook host (the curl
 * forwarder, `bash -c '<command>'`, payload on stdin) for a Read, a Bash and
 * a SQL call, against `node -e 0` in the same run, interleaved; and the HTTP
 * request alone (Claude Code's http hook: no process), in ms. Each call is
 * the first of a fresh session. Throws when the daemon does not start or a
 * call was answered by the forwarder's fallback (the process hook) instead.
 */
export function hookDaemonRows(rounds = Number(process.env.BENCH_HOOK_ROUNDS ?? 11)): { rows: HookBenchRow[]; notes: string[] } {
  const work = mkdtempSync(join(os.tmpdir(), 'pulse-safety-bench-daemon-'));
  const stateDir = join(work, 'state');
  const fallbackDir = join(work, 'fallback-state');
  const log = join(work, 'daemon.out');
  const out = openSync(log, 'w');
  const daemon = spawn(process.execPath, [BIN, 'hook', 'serve', '--port', '0'], {
    env: { ...process.env, PULSE_SAFETY_STATE_DIR: stateDir },
    stdio: ['ignore', out, 'ignore'],
  });
  try {
    let url: string | null = null;
    for (let waited = 0; url === null && waited < 60_000; waited += 50) {
      url = /http:\/\/127\.0\.0\.1:\d+/.exec(readFileSync(log, 'utf8'))?.[0] ?? null;
      if (url === null) sleepSync(50);
    }
    if (url === null) throw new Error(`hook bench: the daemon did not start: ${readFileSync(log, 'utf8').slice(0, 300)}`);
    const port = Number(new URL(url).port);
    const forwarder = daemonForwarderCommand('claude-code', port, `${shellQuote(process.execPath)} ${shellQuote(BIN)} hook claude-code`);
    const calls = [
      { label: 'Read', target: 1.5, input: ['Read', { file_path: '/tmp/bench/README.md' }] as const },
      {
        label: 'Bash (`git status && ls -la src \\| grep -v test`)',
        target: 2.5,
        input: ['Bash', { command: 'git status && ls -la src | grep -v test' }] as const,
      },
      {
        label: 'SQL (`psql -c "select …"`)',
        target: 3,
        input: ['Bash', { command: 'psql -d shop -c "select id, total from orders where id = 42"' }] as const,
      },
    ];
    let n = 0;
    const env = { ...process.env, PULSE_SAFETY_STATE_DIR: fallbackDir };
    const once = (index: number): number => {
      const start = process.hrtime.bigint();
      const result =
        index < 0
          ? spawnSync(process.execPath, ['-e', '0'], { encoding: 'utf8' })
          : spawnSync('bash', ['-c', forwarder], {
              input: preToolUseOf(`bench-cmd-${n++}`, calls[index]!.input[0], { ...calls[index]!.input[1] }),
              env,
              encoding: 'utf8',
            });
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      if (result.status !== 0 || result.stdout.includes('"deny"'))
        throw new Error(`hook bench: the forwarder answered exit ${String(result.status)}: ${result.stdout.slice(0, 300)}`);
      return ms;
    };
    for (let i = -1; i < calls.length; i++) once(i);
    const samples = [-1, 0, 1, 2].map(() => [] as number[]);
    for (let round = 0; round < rounds; round++) [-1, 0, 1, 2].forEach((index, i) => samples[i]!.push(once(index)));
    if (existsSync(fallbackDir)) throw new Error('hook bench: the forwarder fell back to the process hook: the daemon did not answer');
    const http = spawnSync(
      process.execPath,
      [
        '-e',
        HTTP_TIMER,
        `${url}/hook/claude-code`,
        String(rounds),
        JSON.stringify(calls.map((call) => preToolUse(call.input[0], { ...call.input[1] }))),
      ],
      { encoding: 'utf8' },
    );
    if (http.status !== 0) throw new Error(`hook bench: the http timer failed: ${http.stderr.slice(0, 300)}`);
    const httpMs = JSON.parse(http.stdout) as number[];
    const base = median(samples[0]!);
    const rows: HookBenchRow[] = calls.flatMap((call, i) => {
      const ms = median(samples[i + 1]!);
      const ratio = ms / base;
      return [
        {
          measure: `before-tool hook, ${call.label}, with the daemon: the curl forwarder, whole process (ms, median of ${rounds})`,
          value: ms.toFixed(0),
          baseline: `${base.toFixed(0)} (node -e 0)`,
          ratio: `${ratio.toFixed(2)}×`,
          target: `≤ ${call.target}×: ${ratio <= call.target ? 'met' : 'missed'}`,
        },
        {
          measure: `before-tool hook, ${call.label}, with the daemon: the HTTP request alone (Claude Code's http hook; ms, median of ${rounds})`,
          value: httpMs[i]!.toFixed(1),
          baseline: '',
          ratio: '',
          target: '',
        },
      ];
    });
    return {
      rows,
      notes: [
        `hooks: the daemon rows: \`pulse-safety hook serve\` on 127.0.0.1, parsers loaded at its start; the forwarder is \`bash -c\` with curl, ` +
          `as \`hook install <host> --daemon\` writes it for a command-hook host; the HTTP rows time one request each from a Node client (fetch, keep-alive) with no process started.`,
      ],
    };
  } finally {
    daemon.kill('SIGTERM');
    closeSync(out);
    rmSync(work, { recursive: true, force: true });
  }
}
