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
 * hook's modules without the bundle, to show what each step buys. Targets:
 * Read ≤ 1.5×, Bash ≤ 2.5×, SQL ≤ 3× the bare process. There is no daemon
 * (`pulse-safety hook serve`): every row is the process alone.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

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
        `the code cache is the bench's own (PULSE_SAFETY_CACHE_DIR), warm after the first round. No daemon exists yet: the rows "with the daemon" are not measured.`,
    );
    return { rows, notes };
  } finally {
    rmSync(cacheDir, { recursive: true, force: true });
  }
}
