/**
 * The `serve` and `demo` subcommands (src/cli/commands/serve.ts): their
 * options and their failures, which must be one clear line and exit code 2.
 */
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { collectOrigin, parsePort, registerServeCommand } from '../../../src/cli/commands/serve.js';
import { startVisualizer, type VisualizerServer } from '../../../src/visualizer/server.js';

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

describe('collectOrigin', () => {
  it('collects each --allow-origin, normalised as browsers send it', () => {
    expect(collectOrigin('http://LOCALHOST:5173/', collectOrigin('https://tools.example'))).toEqual([
      'https://tools.example',
      'http://localhost:5173',
    ]);
  });

  it('refuses anything but a scheme, host and port', () => {
    for (const bad of ['localhost:5173', 'http://localhost:5173/app', 'ftp://host', 'http://user@host', 'http://host?x=1', 'null']) {
      expect(() => collectOrigin(bad), bad).toThrow(
        `'${bad}' is not an origin: give a scheme, host and port only, e.g. http://localhost:5173`,
      );
    }
  });
});

/** Whether the server behind `port` lets a WebSocket with this Origin onto /inspect. */
function inspectAccepts(port: number, origin: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new WebSocket(`ws://127.0.0.1:${port}/inspect`, { origin });
    socket.once('open', () => (socket.close(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

describe('pulse-safety serve', () => {
  it('accepts the origins given with --allow-origin on /inspect, and no others', async () => {
    const sigint = process.listeners('SIGINT');
    const result = { out: '', err: '', code: 0 };
    const program = new Command('pulse-safety').exitOverride();
    registerServeCommand(program, { out: (t) => (result.out += t), err: (t) => (result.err += t), setExitCode: (c) => (result.code = c) });
    const running = program.parseAsync(
      ['serve', '--port', '0', '--allow-origin', 'http://localhost:5173', '--allow-origin', 'http://localhost:8080'],
      { from: 'user' },
    );
    await expect.poll(() => result.out).toMatch(/visualizer: http:\/\/127\.0\.0\.1:\d+\//);
    const port = Number(/127\.0\.0\.1:(\d+)/.exec(result.out)![1]);
    expect(await inspectAccepts(port, 'http://localhost:5173')).toBe(true);
    expect(await inspectAccepts(port, 'http://localhost:8080')).toBe(true);
    expect(await inspectAccepts(port, 'http://localhost:3000')).toBe(false);
    // Stop it as Ctrl+C would: call only the listener the command added.
    for (const listener of process.listeners('SIGINT').filter((l) => !sigint.includes(l))) listener('SIGINT');
    await running;
    expect(result.code).toBe(0);
  });

  it('says an --allow-origin is not an origin and exits 2', async () => {
    const result = await run(['serve', '--port', '0', '--allow-origin', 'localhost:5173']);
    expect(result.code).toBe(2);
    expect(result.err).toContain("'localhost:5173' is not an origin");
  });

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
