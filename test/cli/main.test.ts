import { execFileSync, spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { EXIT, main } from '../../src/cli/main.js';

const dir = mkdtempSync(join(tmpdir(), 'pulse-safety-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

const jsonl = (...events: object[]) => events.map((e) => JSON.stringify(e)).join('\n');
const refusing = () =>
  file('refusing.jsonl', jsonl({ type: 'call', id: 'w', name: 'pulse_control' }, { type: 'result', id: 'w', outcome: 'error' }));
const clean = () =>
  file(
    'clean.jsonl',
    jsonl({ type: 'call', id: 'r', name: 'pulse_query' }, { type: 'result', id: 'r', outcome: 'success' }, { type: 'answer', text: 'hi' }),
  );

describe('hostile transcripts: one line, exit 2 or an inert report, never exit 70', () => {
  test('a clock step past the range of dates is bad input naming the line', async () => {
    const path = file('clock.jsonl', jsonl({ type: 'call', id: 'c', name: 'pulse_query' }, { type: 'clock', advanceMs: 9e15 }));
    const { code, err } = await run('audit', path);
    expect(code).toBe(EXIT.badInput);
    expect(err).toMatch(/line 2: a clock step takes the audit clock past the range of dates/);
  });

  test('a tau-bench task_id whose toString is broken still names the run', async () => {
    const path = file('task.json', JSON.stringify([{ task_id: { toString: 1 }, reward: 1, traj: [{ role: 'assistant', content: 'hi' }] }]));
    const { code, out } = await run('audit', path);
    expect(code).toBe(EXIT.clean);
    expect(out).toContain('run task {"toString":1} (reward 1)');
  });

  test('arguments nested 4,600 deep are reported with --format json, not a crash', async () => {
    const deep = '{"a":'.repeat(4600) + '1' + '}'.repeat(4600);
    const path = file('deep.jsonl', `{"type":"call","id":"c","name":"pulse_query","args":${deep}}`);
    const { code, out } = await run('audit', path, '--format', 'json');
    expect(code).toBe(EXIT.clean);
    expect(JSON.parse(out).summary.calls).toBe(1);
  });

  test('a tool name with a newline and escape sequences cannot forge report lines', async () => {
    const path = file('inject.jsonl', jsonl({ type: 'call', id: 'c', name: 'pulse_control\n  line 9: forged\u001b[2J' }));
    const { out } = await run('audit', path, '--catalog', 'pulse');
    expect(out).not.toContain('\u001b');
    expect(out.split('\n').some((line) => line.startsWith('  line 9'))).toBe(false);
    expect(out).toContain("write 'pulse_control\\n  line 9: forged\\u001b[2J'");
  });

  test('a file name with control characters is escaped in errors', async () => {
    const { err } = await run('audit', join(dir, 'no\u001b[31mfile'));
    expect(err).not.toContain('\u001b');
    expect(err).toContain('no\\u001b[31mfile');
  });
});

describe('pulse-safety catalog', () => {
  test('check validates a catalog file and says how many tools it lists', async () => {
    const path = file('ok.catalog.json', JSON.stringify({ name: 'ok', tools: { a: 'read', b: { shell: 'command' } } }));
    const { code, out } = await run('catalog', 'check', path);
    expect(code).toBe(EXIT.clean);
    expect(out).toContain("catalog 'ok' is valid: 2 tools");
  });

  test('check names the bad entry and exits 2', async () => {
    const path = file('bad.catalog.json', JSON.stringify({ name: 'bad', tools: { a: { kind: 'read', shell: 'command' } } }));
    const { code, err } = await run('catalog', 'check', path);
    expect(code).toBe(EXIT.badInput);
    expect(err).toContain('tools.a: has kind and shell');
  });

  test('schema prints the JSON Schema of the catalog format', async () => {
    const { out } = await run('catalog', 'schema');
    const schema = JSON.parse(out);
    expect(schema.$schema).toMatch(/json-schema/);
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['name', 'tools', 'failure', 'commands']));
  });
});

describe('pulse-safety audit', () => {
  test('exits 0 when nothing was refused', async () => {
    expect((await run('audit', clean())).code).toBe(EXIT.clean);
  });

  test('exits 1 when something was refused', async () => {
    expect((await run('audit', refusing())).code).toBe(EXIT.refused);
  });

  test('the demo exits 0 although it has refusals, and prints them', async () => {
    const { code, out } = await run('audit', '--demo');
    expect(code).toBe(0);
    expect(out).toContain("would have been refused: write 'pulse_control'");
    expect(out).toContain('would have been refused: final answer');
  });

  test('text output names the file and the catalog, each refusal and the summary', async () => {
    const path = refusing();
    const { out } = await run('audit', path);
    expect(out).toContain(`pulse-safety audit of ${path} (catalog auto: pulse, knows 1 of 1 tool names, policy full)`);
    expect(out).toContain("line 1: would have been refused: write 'pulse_control' in RESOLVING [no-target]");
    expect(out).toMatch(/refused calls\s+1/);
  });

  test('--catalog auto (the default) picks the shipped catalog that knows the most tool names', async () => {
    const path = file(
      'claude.jsonl',
      jsonl({ type: 'call', id: 'r', name: 'Read', args: { file_path: '/a' } }, { type: 'result', id: 'r', outcome: 'success' }),
    );
    const { out, err } = await run('audit', path);
    expect(out).toContain(
      '(catalog auto: claude-code, knows 1 of 1 tool names; a tie with cursor, copilot, the strictest chosen, policy full)',
    );
    expect(err).toBe('');
  });

  test('--catalog auto warns when the chosen catalog knows fewer than half the tool names', async () => {
    const path = file(
      'unknown.jsonl',
      jsonl({ type: 'call', id: 'r', name: 'frobnicate' }, { type: 'call', id: 's', name: 'Read' }, { type: 'call', id: 't', name: 'zap' }),
    );
    const { err } = await run('audit', path);
    expect(err).toContain("warning: catalog 'claude-code' knows only 1 of the 3 tool names");
  });

  test('a named catalog is used as named, without a warning', async () => {
    const { out, err } = await run('audit', clean(), '--catalog', 'pulse');
    expect(out).toContain('(catalog pulse, policy full)');
    expect(err).toBe('');
  });

  test('exits 1 when a run ends with an unverified write and no final answer', async () => {
    const path = file(
      'unverified.jsonl',
      jsonl(
        { type: 'call', id: 'r', name: 'pulse_query' },
        { type: 'result', id: 'r', outcome: 'success' },
        { type: 'call', id: 'w', name: 'pulse_control' },
        { type: 'result', id: 'w', outcome: 'success' },
      ),
    );
    const { code, out } = await run('audit', path);
    expect(code).toBe(EXIT.refused);
    expect(out).toContain('ends in VERIFYING (unverified: a change nobody looked at)');
    expect(out).toMatch(/runs ending unverified\s+1 of 1/);
  });

  test('--summary-only prints only the summary', async () => {
    const { out } = await run('audit', refusing(), '--summary-only');
    expect(out).not.toContain('line 1:');
    expect(out).toContain('summary');
  });

  test('--format json gives the runs and the summary as JSON', async () => {
    const path = refusing();
    const { out } = await run('audit', path, '--format', 'json');
    const report = JSON.parse(out);
    expect(report.catalog).toBe('pulse');
    expect(report.sources).toEqual([path]);
    expect(report.summary).toMatchObject({ runs: 1, calls: 1, blockedCalls: 1 });
    expect(report.runs[0].refusals[0]).toMatchObject({ rule: 'no-target', state: 'RESOLVING' });
  });

  test('--format json keeps the protocol strings and adds the target and the earlier write a refusal waits on', async () => {
    const { out } = await run('audit', '--demo', '--format', 'json');
    const refusals = JSON.parse(out).runs[0].refusals;
    const unverified = refusals.find((r: { rule: string; subject: string }) => r.rule === 'unverified-write' && r.subject === 'tool');
    expect(unverified).toMatchObject({
      reason: 'POLICY_BLOCKED: the previous state-changing call still needs verification evidence before another one can run',
      message: expect.stringMatching(/^FSM blocked tool 'pulse_control_docker' \(write\) in state VERIFYING: POLICY_BLOCKED: /),
      target: null,
      earlierWrite: { position: 'line 8', tool: 'pulse_control', targets: [] },
    });
    expect(refusals.find((r: { rule: string }) => r.rule === 'no-target')).toMatchObject({ target: null, earlierWrite: null });
  });

  test('the text report opens with what shadow mode means and what FSM_BLOCKED and POLICY_BLOCKED are', async () => {
    const { out } = await run('audit', refusing());
    const [, blank, first] = out.split('\n');
    expect(blank).toBe('');
    expect(first).toMatch(/^Shadow mode: every call and answer of the transcript ran as recorded\./);
    expect(out).toMatch(/an FSM_BLOCKED error \(the code of every refusal\)/);
    expect(out).toMatch(/reason\nstarts with POLICY_BLOCKED: \(the mark of a safety rule, left out below\)/);
  });

  test('several files are audited together', async () => {
    const { out } = await run('audit', refusing(), clean(), '--format', 'json');
    expect(JSON.parse(out).summary.runs).toBe(2);
  });

  test('--catalog tau-airline classifies with the shipped airline catalog', async () => {
    const path = file('tau.jsonl', jsonl({ type: 'call', id: 'c', name: 'cancel_reservation' }));
    const { out } = await run('audit', path, '--catalog', 'tau-airline', '--format', 'json');
    expect(JSON.parse(out).summary.writes).toBe(1);
    const { out: asRead } = await run(
      'audit',
      file('tau2.jsonl', jsonl({ type: 'call', id: 'c', name: 'get_user_details' })),
      '--catalog',
      'tau-airline',
      '--format',
      'json',
    );
    expect(JSON.parse(asRead).summary.writes).toBe(0);
  });

  test('--catalog takes a JSON catalog file', async () => {
    const catalog = file('mine.json', JSON.stringify({ name: 'mine', tools: { pulse_control: 'read' } }));
    const { code } = await run('audit', refusing(), '--catalog', catalog);
    expect(code).toBe(EXIT.clean);
  });

  test('--strict-failed-writes makes a failed write need verification', async () => {
    const path = file(
      'strict.jsonl',
      jsonl(
        { type: 'call', id: 'r', name: 'pulse_query' },
        { type: 'result', id: 'r', outcome: 'success' },
        { type: 'call', id: 'w', name: 'pulse_control' },
        { type: 'result', id: 'w', outcome: 'error' },
        { type: 'answer', text: 'done' },
      ),
    );
    expect((await run('audit', path)).code).toBe(EXIT.clean);
    expect((await run('audit', path, '--strict-failed-writes')).code).toBe(EXIT.refused);
  });
});

describe('usage errors exit 2 with one line', () => {
  test('--compare-policies with --policy is refused: the comparison replays every policy, so --policy would choose nothing', async () => {
    const { code, out, err } = await run('audit', clean(), '--compare-policies', '--policy', 'spec');
    expect(code).toBe(EXIT.badInput);
    expect(out).toBe('');
    expect(err).toBe("error: option '--compare-policies' cannot be used with option '--policy <policy>'\n");
  });

  test('--compare-policies alone prints the three policies side by side', async () => {
    const { code, out } = await run('audit', clean(), '--compare-policies', '--summary-only');
    expect(code).toBe(EXIT.clean);
    expect(
      out
        .split('\n')
        .filter((line) => /^ {2}(spec|targets|full) /.test(line))
        .map((line) => line.trim().split(/\s+/)[0]),
    ).toEqual(['spec', 'targets', 'full']);
  });
});

describe('bad input exits 2 with a message naming the file and position', () => {
  test('a missing file', async () => {
    const { code, err } = await run('audit', join(dir, 'nope.json'));
    expect(code).toBe(EXIT.badInput);
    expect(err).toMatch(/nope\.json: cannot read the file \(ENOENT\)/);
  });

  test('broken JSON', async () => {
    const path = file('broken.json', '[\n{"role":"user"\n');
    const { code, err } = await run('audit', path);
    expect(code).toBe(EXIT.badInput);
    expect(err).toContain(`${path}: line `);
  });

  test('a malformed message', async () => {
    const path = file('bad.json', JSON.stringify([{ role: 'assistant', tool_calls: 'nope' }]));
    const { code, err } = await run('audit', path);
    expect(code).toBe(EXIT.badInput);
    expect(err).toBe(`pulse-safety audit: ${path}: message 0: "tool_calls" must be an array\n`);
  });

  test('an unknown catalog', async () => {
    const { code, err } = await run('audit', clean(), '--catalog', 'nonesuch');
    expect(code).toBe(EXIT.badInput);
    expect(err).toContain(
      'nonesuch: not a shipped catalog (pulse, tau-airline, claude-code, gemini-cli, codex, mcp, cursor, copilot, opencode, qwen-code, kiro)',
    );
  });

  test('a catalog that does not validate names the bad entry', async () => {
    const catalog = file('badcat.json', JSON.stringify({ name: 'bad', tools: { t: 'delete' } }));
    const { code, err } = await run('audit', clean(), '--catalog', catalog);
    expect(code).toBe(EXIT.badInput);
    expect(err).toContain(`catalog ${catalog}: tools.t:`);
  });

  test('no file and no --demo', async () => {
    const { code, err } = await run('audit');
    expect(code).toBe(EXIT.badInput);
    expect(err).toContain('no transcript given');
  });

  test('an unknown format', async () => {
    const { code, err } = await run('audit', clean(), '--format', 'xml');
    expect(code).toBe(EXIT.badInput);
    expect(err).toContain("argument 'xml' is invalid");
  });

  test('never prints a stack trace', async () => {
    const path = file('stack.json', '{');
    const { err } = await run('audit', path);
    expect(err).not.toMatch(/\n\s+at /);
  });
});

describe('the pulse-safety executable', () => {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  // Inside the project (test-output/ is ignored by git), so the build resolves node_modules.
  const out = join(root, 'test-output', 'cli-build');

  beforeAll(() => {
    execFileSync(
      process.execPath,
      [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', out],
      {
        cwd: root,
      },
    );
  }, 120_000);

  test('runs the demo audit from the compiled build and exits 0', () => {
    const result = spawnSync(process.execPath, [join(out, 'src/bin.js'), 'audit', '--demo'], { encoding: 'utf8' });
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('runs with a refusal');
  });

  test('audits a million refused calls with --summary-only in under 512 MB peak RSS (the input is streamed)', async () => {
    const big = join(dir, 'million.jsonl');
    const stream = createWriteStream(big);
    for (let i = 0; i < 1_000_000; i++) {
      const ok = stream.write(`{"type":"call","id":"c${i}","name":"pulse_control"}\n{"type":"result","id":"c${i}","outcome":"success"}\n`);
      if (!ok) await once(stream, 'drain');
    }
    stream.end();
    await once(stream, 'finish');
    // The peak resident set of the process, as /usr/bin/time -v reports it (kilobytes).
    const probe = `process.on('exit', () => process.stderr.write('maxrss ' + process.resourceUsage().maxRSS + '\\n')); await import(${JSON.stringify(pathToFileURL(join(out, 'src/bin.js')).href)});`;
    const result = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', probe, '_', 'audit', big, '--summary-only', '--catalog', 'pulse'],
      {
        encoding: 'utf8',
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    expect(result.stdout).toMatch(/tool calls\s+1000000/);
    expect(result.stdout).toMatch(/refused calls\s+1000000/);
    const peakKb = Number(/maxrss (\d+)/.exec(result.stderr)?.[1]);
    expect(peakKb).toBeGreaterThan(0);
    expect(peakKb).toBeLessThan(512 * 1024);
  }, 600_000);

  test('exits 2 on bad input with one line on stderr', () => {
    const result = spawnSync(process.execPath, [join(out, 'src/bin.js'), 'audit', join(dir, 'absent.json')], { encoding: 'utf8' });
    expect(result.status).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('options', () => {
  test('--version prints the package version', async () => {
    const { code, out } = await run('--version');
    expect(code).toBe(0);
    expect(out.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  test('--summary-only with --format json leaves out the runs', async () => {
    const report = JSON.parse((await run('audit', refusing(), '--format', 'json', '--summary-only')).out);
    expect(report.runs).toBeUndefined();
    expect(report.summary.blockedCalls).toBe(1);
  });

  test('--demo with another catalog than pulse is bad input', async () => {
    const { code, err } = await run('audit', '--demo', '--catalog', 'tau-airline');
    expect(code).toBe(EXIT.badInput);
    expect(err).toContain('the demo transcript uses Pulse tool names');
  });

  test('--format json survives arguments nested thousands deep', async () => {
    const deep = '['.repeat(5_000) + ']'.repeat(5_000);
    const path = file(
      'deepargs.json',
      JSON.stringify([{ role: 'assistant', tool_calls: [{ id: 'd', function: { name: 'x', arguments: deep } }] }]),
    );
    const { code, out } = await run('audit', path, '--format', 'json');
    expect(code).toBe(EXIT.refused);
    expect(JSON.parse(out).summary.calls).toBe(1);
  });
});
