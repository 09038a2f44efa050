/**
 * The differential harness against real bash (issue 23, "What to build" 3):
 * every command the shell classifier calls `read` is run by `/bin/bash` in
 * a sandbox (test/support/bash-sandbox.ts: bubblewrap, the file system
 * read-only but for a throwaway directory, no network, strace watching for
 * writes that fail with EROFS), with `PATH` pointing at the table's read
 * programs (real) and stubs for every other program and for payload names.
 * A stub that ran, or a write attempted outside the throwaway directory, is
 * an escape: a harmful command the classifier admits as a read. The test
 * prints the command, its classification and what it did.
 *
 * Inputs: the corpus (test/support/bash-corpus.ts: issue 23's examples and
 * forms near them) and commands generated with fast-check from the command
 * table's read rules (test/support/bash-generator.ts). `npm run test:deep` runs the
 * corpus and a bounded number of generated commands; `npm run test:exhaustive`
 * (EXHAUSTIVE=1) many more. fast-check prints the seed and the shrunk command of a
 * failure; `SEED=<n>` replays one.
 *
 * Under `CI=true` a missing bash, bwrap or strace (or a bwrap that cannot
 * create namespaces) fails the tests; elsewhere they are skipped, saying why.
 *
 * Spec: DESIGN.md §5.5 (commands are parsed; what is not known is a write).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyShellCommand } from '../../src/classify/shell/index.js';
import { bashCorpus } from '../support/bash-corpus.js';
import { PAYLOAD_PROGRAMS, generatedCommands, readForms, sandboxPrograms } from '../support/bash-generator.js';
import shellTable from '../../src/catalogs/shell-commands.json' with { type: 'json' };
import { SANDBOX_WORK, createSandbox, sandboxPlan, sandboxSkipNote, type Sandbox, type SandboxRun } from '../support/bash-sandbox.js';

const EXHAUSTIVE = process.env.EXHAUSTIVE === '1';
/** Generated commands per run: a bounded count by default (under a minute on 2 cores), many more when deep. */
const RUNS = EXHAUSTIVE ? 5_000 : 150;
/** Commands run side by side in one property run (a failure shrinks to the one that escapes). */
const BATCH = 3;
/** Per-command time limit in the sandbox: generated commands, and the corpus (npm starts slowly under strace). */
const GENERATED_LIMIT_MS = 2_000;
const CORPUS_LIMIT_MS = 10_000;
/** Time limit of a test that runs hundreds of sandboxes: seconds on an idle machine, minutes on a loaded one. */
const LONG_TEST_MS = EXHAUSTIVE ? 3_600_000 : 300_000;

const plan = sandboxPlan();
const skipNote = sandboxSkipNote(plan);

/** What a run shows of an escape, or null when it did nothing harmful. */
function harm(run: SandboxRun): string | null {
  const lines = [
    ...run.stubs.map((stub) => `  stub ran: ${stub}`),
    ...run.readOnlyWrites.map((syscall) => `  write outside the directory: ${syscall}`),
  ];
  return lines.length === 0 ? null : lines.join('\n');
}

/** The report of an escape: the command, its classification, and what it did. */
function escapeReport(command: string, reason: string, seen: string, run: SandboxRun): string {
  return [
    `classified read (${reason}), but when bash runs it:`,
    `  command: ${JSON.stringify(command)}`,
    seen,
    ...(run.timedOut ? ['  (killed at the time limit)'] : []),
    ...run.notes.map((note) => `  note: ${note}`),
    `  stderr: ${JSON.stringify(run.stderr.slice(0, 400))}`,
  ].join('\n');
}

/** The command classified; when a read, run: an escape report, or null. */
async function escapeOf(sandbox: Sandbox, command: string, limitMs: number): Promise<string | null> {
  const result = classifyShellCommand(command, { cwd: SANDBOX_WORK });
  if (result.kind !== 'read') return null;
  const run = await sandbox.run(command, limitMs);
  const seen = harm(run);
  return seen === null ? null : escapeReport(command, result.reason ?? 'no reason', seen, run);
}

describe("the harness's programs", () => {
  it('every command of the table is real (it has a read form, or is a shell) or a stub; every payload name is a stub', () => {
    const { real, stubs } = sandboxPrograms();
    const readPrograms = new Set(readForms().map((form) => form.words[0]));
    expect(real.filter((name) => stubs.includes(name))).toEqual([]);
    expect(stubs).toEqual(expect.arrayContaining([...PAYLOAD_PROGRAMS, 'rm', 'tar', 'python3', 'make']));
    expect(real).toEqual(expect.arrayContaining(['git', 'sort', 'sed', 'awk', 'jq', 'curl', 'find', 'xargs', 'env', 'bash', 'sh']));
    expect(real.filter((name) => !readPrograms.has(name))).toEqual(['bash', 'sh', 'dash']);
    expect(new Set([...real, ...stubs])).toEqual(new Set([...Object.keys(shellTable.commands), ...PAYLOAD_PROGRAMS]));
  });
});

describe.skipIf(skipNote !== '')(`the differential harness against real bash${skipNote}`, () => {
  let sandbox: Sandbox;
  beforeAll(() => {
    if (plan.kind === 'missing') {
      throw new Error(`CI=true and the bash sandbox cannot run: ${plan.reason} (.ci/run installs bash, bubblewrap and strace)`);
    }
    sandbox = createSandbox(sandboxPrograms(), GENERATED_LIMIT_MS);
  });
  afterAll(() => sandbox?.dispose());

  describe.concurrent('the sandbox sees what a command does', () => {
    it('a stub that ran, with its arguments', async () => {
      const run = await sandbox.run("pwned 'a b' c; rm -rf ~");
      expect(run.stubs).toEqual(['pwned a\\ b c', 'rm -rf /tmp/box']);
    });

    it('a payload run by a real read program (git runs --upload-pack through /bin/sh)', async () => {
      const run = await sandbox.run('git ls-remote --upload-pack=pwned origin', CORPUS_LIMIT_MS);
      expect(run.stubs.map((stub) => stub.split(' ')[0])).toContain('pwned');
    });

    it('a git hook of the template repository', async () => {
      const run = await sandbox.run('git commit -q --allow-empty -m x', CORPUS_LIMIT_MS);
      expect(run.stubs).toContain('pwned git-hook-pre-commit');
    });

    it('a write outside the throwaway directory, by bash and by a program, with the syscall', async () => {
      const run = await sandbox.run('echo x > /etc/hostname; sort -o /p a.txt');
      expect(run.readOnlyWrites).toHaveLength(2);
      expect(run.readOnlyWrites[0]).toMatch(/open.*"\/etc\/hostname".*EROFS/);
      expect(run.readOnlyWrites[1]).toMatch(/open.*"\/p".*EROFS/);
    });

    it('writes to /tmp and /run are writes outside (both are read-only and empty)', async () => {
      const run = await sandbox.run('echo x > /tmp/x; echo x > /run/x; ls /run/postgresql');
      expect(run.readOnlyWrites).toHaveLength(2);
      expect(run.stderr).toContain('No such file or directory');
    });

    it('nothing for a write inside the throwaway directory, nor for a plain read', async () => {
      const run = await sandbox.run('echo x > out.txt; cat out.txt a.txt | sort; git status --short b.txt; zcat --version >/dev/null');
      expect({ stubs: run.stubs, writes: run.readOnlyWrites, out: run.stdout }).toEqual({
        stubs: [],
        writes: [],
        out: 'a\nb\nc\nx\n M b.txt\n',
      });
    });

    it('no network', async () => {
      const run = await sandbox.run('curl -sS --max-time 1 http://1.1.1.1/');
      expect(run.stderr).toMatch(/curl: \(7\)/);
    });

    it('a command that does not end is killed at the time limit', async () => {
      const run = await sandbox.run('sleep 30', 500);
      expect(run.timedOut).toBe(true);
    });
  });

  describe.concurrent('corpus: each is a write, or harmless when bash runs it', () => {
    it.each(bashCorpus.map((entry) => [JSON.stringify(entry.command), entry] as const))('%s', async (_name, entry) => {
      if (entry.expect === 'write') {
        expect(classifyShellCommand(entry.command, { cwd: SANDBOX_WORK }), entry.why).toMatchObject({ kind: 'write' });
        return;
      }
      expect(await escapeOf(sandbox, entry.command, CORPUS_LIMIT_MS), entry.why).toBeNull();
    });
  });

  it(
    `generated from the command table's read forms: ${RUNS} batches of ${BATCH} commands`,
    async () => {
      const forms = readForms();
      await fc.assert(
        fc.asyncProperty(fc.array(generatedCommands(forms), { minLength: 1, maxLength: BATCH }), async (commands) => {
          const escapes = await Promise.all(commands.map((command) => escapeOf(sandbox, command, GENERATED_LIMIT_MS)));
          const found = escapes.filter((escape) => escape !== null);
          if (found.length > 0) throw new Error(found.join('\n\n'));
        }),
        { numRuns: RUNS, ...(process.env.SEED === undefined ? {} : { seed: Number(process.env.SEED) }) },
      );
    },
    LONG_TEST_MS,
  );
});
