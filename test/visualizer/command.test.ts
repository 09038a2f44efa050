/**
 * The `serve` and `demo` subcommands (src/visualizer/command.ts): their
 * options and their failures, which must be one clear line and exit code 2.
 */
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePort, registerServeCommand } from '../../src/visualizer/command.js';
import { startVisualizer, type VisualizerServer } from '../../src/visualizer/server.js';

let taken: VisualizerServer;
beforeAll(async () => {
  taken = await startVisualizer({ port: 0 });
});
afterAll(async () => {
  await taken.close();
});

/** Runs `args` through a program with only the serve commands; returns its output and exit code. */
async function run(args: string[]): Promise<{ out: string; err: string; code: number }> {
  const result = { out: '', err: '', code: 0 };
  const program = new Command('pulse-safety').exitOverride();
  program.configureOutput({ writeOut: (t) => (result.out += t), writeErr: (t) => (result.err += t) });
  registerServeCommand(program, { out: (t) => (result.out += t), err: (t) => (result.err += t), setExitCode: (c) => (result.code = c) });
  try {
    await program.parseAsync(args, { from: 'user' });
  } catch {
    result.code ||= 2;
  }
  return result;
}

describe('parsePort', () => {
  it('accepts 0 to 65535', () => {
    expect([parsePort('0'), parsePort('4310'), parsePort('65535')]).toEqual([0, 4310, 65535]);
  });

  it('refuses anything else with the rule', () => {
    for (const bad of ['', 'abc', '-1', '65536', '1.5', '80x']) {
      expect(() => parsePort(bad), bad).toThrow('the port must be a whole number from 0 to 65535 (0 picks any free port)');
    }
  });
});

describe('pulse-safety serve', () => {
  it('says the port is taken and exits 2', async () => {
    const result = await run(['serve', '--port', String(taken.port)]);
    expect(result.code).toBe(2);
    expect(result.err).toBe(
      `pulse-safety: port ${taken.port} on 127.0.0.1 is already in use; stop the program using it, or choose another port with --port <n> (--port 0 picks any free port)\n`,
    );
    expect(result.out).toBe('');
  });

  it('names a transcript file it cannot read and exits 2', async () => {
    const result = await run(['serve', '--port', '0', '--transcript', 'no/such/file.json']);
    expect(result.code).toBe(2);
    expect(result.err).toBe('pulse-safety serve: no/such/file.json: cannot read the file (ENOENT)\n');
  });
});

describe('pulse-safety demo', () => {
  it('prints the audit of the embedded transcript before serving, and says when the port is taken', async () => {
    const result = await run(['demo', '--port', String(taken.port)]);
    expect(result.out).toMatch(/^pulse-safety audit of demo\.jsonl \(catalog pulse\)\n/);
    expect(result.out).toContain('runs with a refusal');
    expect(result.err).toContain('is already in use');
    expect(result.code).toBe(2);
  });
});
