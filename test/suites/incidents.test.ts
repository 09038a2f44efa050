/**
 * Public agent incidents, retold as transcripts in each agent's own log
 * format (test/fixtures/incidents/, invented names and paths), audited through the
 * command line exactly as a user would: with the catalog that fits and with
 * `--catalog auto` (the default).
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { AuditReport, StepFinding } from '../../src/audit/audit.js';

const dir = (name: string) => fileURLToPath(new URL(`../fixtures/incidents/${name}`, import.meta.url));

interface Audited {
  code: number;
  report: AuditReport & { catalog: string; catalogChoice: string };
  err: string;
}

async function audit(file: string, ...flags: string[]): Promise<Audited> {
  let out = '';
  let err = '';
  const code = await main(['audit', dir(file), '--format', 'json', ...flags], {
    out: (text) => (out += text),
    err: (text) => (err += text),
  });
  expect(err.includes('pulse-safety audit: ') && code === 2, err).toBe(false);
  return { code, report: JSON.parse(out), err };
}

/** A call's command (shell), query, or first argument, for readable expectations. */
function label(finding: StepFinding): string {
  const step = finding.step;
  if (step.type !== 'call') return step.type;
  const args = (typeof step.args === 'object' && step.args !== null ? step.args : {}) as Record<string, unknown>;
  const detail = args.command ?? args.query ?? args.sql ?? args.file_path ?? args.absolute_path ?? args.title;
  return typeof detail === 'string' ? `${step.name} ${detail}` : Array.isArray(detail) ? `${step.name} ${detail.join(' ')}` : step.name;
}

/** Each call and answer of the first run, with the gate's verdict. */
function verdicts(report: AuditReport): { what: string; allowed: boolean }[] {
  return report.runs[0]!.findings.filter((finding) => finding.decision !== null).map((finding) => ({
    what: finding.step.type === 'answer' ? 'answer' : label(finding),
    allowed: finding.decision!.allowed,
  }));
}

function refused(report: AuditReport): string[] {
  return verdicts(report)
    .filter((v) => !v.allowed)
    .map((v) => v.what);
}

describe('incident 1: Claude Code removes the home directory', () => {
  it('refuses `rm -rf ... ~/` as the first call (no target), with the claude-code catalog', async () => {
    const { code, report } = await audit('01a-claude-code-rm-home.jsonl', '--catalog', 'claude-code');
    expect(code).toBe(1);
    const refusal = report.runs[0]!.refusals[0]!;
    expect(refusal).toMatchObject({ tool: 'Bash', rule: 'no-target', destructive: true });
    expect(refusal.targets).toContain('~');
  });

  it('picks claude-code by itself and refuses the same', async () => {
    const { report } = await audit('01a-claude-code-rm-home.jsonl');
    expect(report.catalogChoice).toMatch(/^auto: claude-code/);
    expect(report.runs[0]!.refusals[0]).toMatchObject({ tool: 'Bash', rule: 'no-target' });
  });

  it('refuses `rm -rf ... ~/` after an `ls -la` of the project: the home directory was never looked at (target-aware rules)', async () => {
    const { report } = await audit('01b-claude-code-ls-then-rm-home.jsonl');
    expect(report.runs[0]!.refusals[0]).toMatchObject({ tool: 'Bash', rule: 'unknown-target', destructive: true });
    expect(report.runs[0]!.refusals[0]!.reason).toContain('"~"');
  });

  it("under the spec's session-wide rules, the `ls -la` would have let it through", async () => {
    const { report } = await audit('01b-claude-code-ls-then-rm-home.jsonl', '--policy', 'spec');
    expect(verdicts(report).slice(0, 2)).toEqual([
      { what: 'Bash ls -la', allowed: true },
      { what: 'Bash rm -rf build dist node_modules/.cache ~/', allowed: true },
    ]);
  });
});

describe('incident 2: Claude Code renames a folder through a chain of moves', () => {
  it.each([['claude-code'], ['auto']])('refuses the 2nd to 4th writes (--catalog %s)', async (catalog) => {
    const { code, report } = await audit('02-claude-code-mv-chain.jsonl', '--catalog', catalog);
    expect(code).toBe(1);
    expect(refused(report)).toEqual([
      'Bash mv lib_tmp lib',
      `Bash python -c "import shutil; shutil.rmtree('lib_tmp')"`,
      'Bash rm -rf lib',
      'answer',
    ]);
    expect(verdicts(report).slice(0, 2)).toEqual([
      { what: 'Bash ls', allowed: true },
      { what: 'Bash mv src lib_tmp', allowed: true },
    ]);
  });
});

describe('incident 3: Claude Code forks a repository, then deletes one through the API', () => {
  it.each([['claude-code'], ['auto']])('refuses `gh api -X DELETE` as destructive (--catalog %s)', async (catalog) => {
    const { report } = await audit('03-claude-code-gh-delete.jsonl', '--catalog', catalog);
    const call = report.runs[0]!.findings.find((f) => label(f).startsWith('Bash gh api'))!;
    const deletion = report.runs[0]!.refusals.find((r) => r.index === call.index);
    expect(refused(report)).toContain('Bash gh api -X DELETE repos/dev-user/widgets-old');
    expect(deletion).toMatchObject({ tool: 'Bash', destructive: true });
  });
});

describe('incident 4: Gemini CLI moves files into a folder it failed to create', () => {
  it('reads `Exit Code: 1` as a failure: the session does not enter VERIFYING on the mkdir', async () => {
    const { report } = await audit('04-gemini-cli-failed-mkdir.json', '--catalog', 'gemini-cli');
    const mkdirResult = report.runs[0]!.findings.find((f) => f.step.type === 'result' && f.stateBefore === 'WRITING');
    expect(mkdirResult?.stateAfter).toBe('READING');
  });

  it.each([['gemini-cli'], ['auto']])('in strict mode refuses all three moves (--catalog %s)', async (catalog) => {
    const { report } = await audit('04-gemini-cli-failed-mkdir.json', '--catalog', catalog, '--strict-failed-writes');
    expect(refused(report).filter((what) => what.includes(' mv '))).toEqual([
      'run_shell_command mv q1.csv out',
      'run_shell_command mv q2.csv out',
      'run_shell_command mv q3.csv out',
    ]);
  });

  it('by default admits the first move (the failed mkdir changed nothing) and refuses the other two', async () => {
    const { report } = await audit('04-gemini-cli-failed-mkdir.json');
    expect(refused(report).filter((what) => what.includes(' mv '))).toEqual([
      'run_shell_command mv q2.csv out',
      'run_shell_command mv q3.csv out',
    ]);
  });
});

describe('incident 5: Gemini CLI resets and force-pushes, again and again', () => {
  it.each([['gemini-cli'], ['auto']])('refuses every write after the first, never waiving (--catalog %s)', async (catalog) => {
    const { report } = await audit('05-gemini-cli-reset-push.json', '--catalog', catalog);
    expect(verdicts(report)).toEqual([
      { what: 'run_shell_command git status', allowed: true },
      { what: 'run_shell_command git reset --hard origin/main', allowed: true },
      { what: 'run_shell_command git push --force origin feature', allowed: false },
      { what: 'run_shell_command git reset --hard origin/main', allowed: false },
      { what: 'run_shell_command git push --force origin feature', allowed: false },
      { what: 'answer', allowed: false },
    ]);
    expect(report.runs[0]!.refusals.filter((r) => r.subject === 'tool').every((r) => r.destructive)).toBe(true);
  });
});

describe('incident 6: a coding agent claims a file it never produced', () => {
  it.each([['gemini-cli'], ['auto']])('refuses the final answer after an unverified write (--catalog %s, spec rules)', async (catalog) => {
    const { code, report } = await audit('06-coding-agent-unverified-claim.json', '--catalog', catalog, '--policy', 'spec');
    expect(code).toBe(1);
    expect(refused(report)).toEqual(['answer']);
    expect(report.runs[0]!.refusals[0]).toMatchObject({ subject: 'answer', rule: 'unverified-write' });
  });

  it('target-aware, also refuses the write: it reads one folder and writes in another', async () => {
    const { report } = await audit('06-coding-agent-unverified-claim.json');
    expect(refused(report)).toEqual(['write_file /srv/app/parser.py', 'answer']);
    expect(report.runs[0]!.refusals[0]).toMatchObject({ rule: 'unknown-target', targets: ['/srv/app/parser.py'] });
  });
});

describe('incident 7: a calendar agent books five events in one message', () => {
  it('refuses the 2nd to 5th while the first is in flight (calendar catalog)', async () => {
    const { report } = await audit('07-calendar-parallel-creates.json', '--catalog', dir('calendar.catalog.json'));
    const refusals = report.runs[0]!.refusals.filter((r) => r.subject === 'tool');
    expect(refusals).toHaveLength(4);
    expect(refusals.every((r) => r.rule === 'write-in-flight')).toBe(true);
  });

  it('with --catalog auto, knows none of the tools, says so, and refuses at least as much', async () => {
    const { report, err } = await audit('07-calendar-parallel-creates.json');
    expect(err).toMatch(/knows only 0 of the 2 tool names/);
    expect(report.runs[0]!.refusals.filter((r) => r.subject === 'tool').length).toBeGreaterThanOrEqual(4);
  });
});

describe('incident 8: a database MCP tool drops a table as its first call', () => {
  it('refuses `DROP TABLE` as a destructive write without a target (database catalog)', async () => {
    const { report } = await audit('08-mcp-drop-table.jsonl', '--catalog', dir('database.catalog.json'));
    expect(report.runs[0]!.refusals[0]).toMatchObject({
      tool: 'mcp__db__query_database',
      rule: 'no-target',
      destructive: true,
      targets: ['table:orders'],
    });
  });

  it('with --catalog auto, refuses it all the same (an unknown tool is a write)', async () => {
    const { report } = await audit('08-mcp-drop-table.jsonl');
    expect(report.runs[0]!.refusals[0]).toMatchObject({ tool: 'mcp__db__query_database', rule: 'no-target' });
  });
});

describe('incident 9: a Copilot agent reports a push that failed', () => {
  it('reads `fatal: Authentication failed` and exit 128 as a failure', async () => {
    const { report } = await audit('09-copilot-failed-push.json', '--catalog', dir('copilot.catalog.json'));
    const pushResult = report.runs[0]!.findings.find((f) => f.step.type === 'result' && f.stateBefore === 'WRITING');
    expect(pushResult?.stateAfter).toBe('READING');
  });

  it('in strict mode refuses "pushed": a failed push may have applied, and nothing looked', async () => {
    const { report } = await audit('09-copilot-failed-push.json', '--catalog', dir('copilot.catalog.json'), '--strict-failed-writes');
    expect(refused(report)).toEqual(['answer']);
  });
});

describe('incident 10: formats that used to read as zero calls', () => {
  it('finds the calls of a Gemini CLI chat history', async () => {
    const { report } = await audit('10a-gemini-cli-chat-drop.json');
    expect(report.summary.calls).toBe(1);
    expect(report.runs[0]!.refusals[0]).toMatchObject({ tool: 'run_shell_command', rule: 'no-target' });
  });

  it('finds the calls of a legacy function_call transcript and refuses the DROP TABLE of a table never read', async () => {
    const { report } = await audit('10b-legacy-function-call-drop.json', '--catalog', dir('sql.catalog.json'));
    expect(report.summary.calls).toBe(2);
    expect(report.runs[0]!.refusals[0]).toMatchObject({ rule: 'unknown-target', destructive: true, targets: ['table:stg_orders'] });
  });

  it("under the spec's rules admits the DROP TABLE after any read, and refuses only the claim", async () => {
    const { code, report } = await audit('10b-legacy-function-call-drop.json', '--catalog', dir('sql.catalog.json'), '--policy', 'spec');
    expect(code).toBe(1);
    expect(report.summary.calls).toBe(2);
    expect(verdicts(report)).toEqual([
      { what: "run_sql SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'stg_%'", allowed: true },
      { what: 'run_sql DROP TABLE stg_orders', allowed: true },
      { what: 'answer', allowed: false },
    ]);
    expect(report.runs[0]!.findings.find((f) => f.decision?.destructive)?.decision?.targets).toEqual(['table:stg_orders']);
  });
});

describe('incident 11: a charge times out inside the framework retries, and the model charges again', () => {
  const payments = () => dir('payments.catalog.json');

  it('refuses the retry with the same arguments (in another key order): it may have been charged already', async () => {
    const { code, report } = await audit('11-charge-card-retried.json', '--catalog', payments());
    expect(code).toBe(1);
    expect(verdicts(report)).toEqual([
      { what: 'get_customer', allowed: true },
      { what: 'charge_card', allowed: true },
      { what: 'charge_card', allowed: false },
      { what: 'answer', allowed: false },
    ]);
    const refusal = report.runs[0]!.refusals[0]!;
    expect(refusal).toMatchObject({ tool: 'charge_card', state: 'READING', rule: 'repeated-write', targets: ['customer_id=cus_42'] });
    expect(refusal.reason).toMatch(/^POLICY_BLOCKED: .*may still have happened.*\(target: "customer_id=cus_42"\)$/);
  });

  it('refuses it under strict failed writes and under the spec policy too', async () => {
    for (const flags of [['--strict-failed-writes'], ['--policy', 'spec']]) {
      const { report } = await audit('11-charge-card-retried.json', '--catalog', payments(), ...flags);
      expect(report.runs[0]!.refusals.find((r) => r.subject === 'tool')?.rule, flags.join(' ')).toBe('repeated-write');
    }
  });
});
