/**
 * A sandbox in which the differential harness (test/suites/bash-differential.test.ts)
 * runs a shell command with the real `/bin/bash`, to see what a command the
 * classifier calls `read` really does.
 *
 * Each command runs in bubblewrap (`bwrap`): the whole file system is bound
 * read-only, `/tmp` and `/run` are empty read-only tmpfs (so no Unix socket
 * of the host, such as a database's, can be reached), a fresh copy of a
 * template directory is bound writable at `/tmp/box` (the working
 * directory, `HOME` and `TMPDIR`), and there is no network (every namespace
 * is unshared). bash runs under `strace -f`, which logs every failing system
 * call: one failing with `EROFS` is an attempt to write outside the
 * throwaway directory, reported with its syscall.
 *
 * `PATH` is one directory of programs (bound read-only at `/run/harness/bin`):
 * - links to the real binaries of the programs the command table can call a
 *   read (so that a read program that runs another program does run it, and
 *   shells, which the classifier looks through), when installed on this
 *   machine; an inert stub (exit 0, logged but no failure) when not;
 * - stubs for every other program of the table and for payload names
 *   (`pwned`, `python3`, ...): a stub appends its name and argv to a log
 *   outside the throwaway directory (`/run/harness/log`, which no command
 *   names) and exits 0. A stub that ran is a failure.
 *
 * Two stubs pass through to the real program, and say so in the log without
 * it being a failure: an interpreter started by the `#!` line of a read
 * program (`npm` is `#!/usr/bin/env node`), and `gzip` decompressing to
 * standard output (Debian's `zcat` and `zgrep` are scripts that run it).
 *
 * Works as root (CI) and as an unprivileged user where unprivileged user
 * namespaces are allowed; where bwrap cannot create its namespaces the plan
 * says why.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The programs the harness needs, with the Debian package of each. */
const REQUIRED: readonly (readonly [string, string])[] = [
  ['/bin/bash', 'bash'],
  ['/usr/bin/bwrap', 'bubblewrap'],
  ['/usr/bin/strace', 'strace'],
];

/** Where real programs are looked up (never the PATH of the test process, which may hold shims). */
const SYSTEM_PATH = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

/** Paths inside the sandbox. */
export const SANDBOX_WORK = '/tmp/box';
const SANDBOX_BIN = '/run/harness/bin';
const SANDBOX_LOG = '/run/harness/log';

/** How the harness gets its sandbox: it can run, or why not. */
export type SandboxPlan = { kind: 'ready' } | { kind: 'missing'; reason: string };

/** What the sandbox can run, decided when the test file loads (so `describe.skipIf` can use it). */
export function sandboxPlan(): SandboxPlan {
  const absent = REQUIRED.filter(([path]) => !existsSync(path));
  if (absent.length > 0) {
    const packages = absent.map(([, pkg]) => pkg).join(' ');
    return { kind: 'missing', reason: `${absent.map(([path]) => path).join(', ')} missing (apt-get install -y ${packages})` };
  }
  const probe = spawnSync('/usr/bin/bwrap', ['--ro-bind', '/', '/', '--unshare-all', '--die-with-parent', '/bin/true'], {
    encoding: 'utf8',
    timeout: 10_000,
  });
  if (probe.status !== 0) {
    return { kind: 'missing', reason: `bwrap cannot create its namespaces here: ${(probe.stderr || String(probe.error)).trim()}` };
  }
  return { kind: 'ready' };
}

/** ' (skipped: ...)' for a test title when the sandbox cannot run here and this is no CI run; '' otherwise. */
export function sandboxSkipNote(plan: SandboxPlan): string {
  return plan.kind === 'missing' && process.env.CI !== 'true' ? ` (skipped: ${plan.reason})` : '';
}

/** A program's real binary on this machine, or null. */
export function realProgram(name: string): string | null {
  for (const dir of SYSTEM_PATH) {
    const path = join(dir, name);
    if (existsSync(path)) return path;
  }
  return null;
}

/** Which programs the sandbox's PATH holds, and as what. */
export interface SandboxPrograms {
  /** Programs linked to their real binary (when installed; else an inert stub). */
  real: readonly string[];
  /** Programs replaced by a recording stub: running one is a failure. */
  stubs: readonly string[];
}

/** What one command did in the sandbox. */
export interface SandboxRun {
  /** Stubs that ran: name and arguments, one string each. */
  stubs: string[];
  /** Read programs that are not installed here and ran as inert stubs, and pass-throughs: for information. */
  notes: string[];
  /** Failing system calls with `EROFS`: writes attempted outside the throwaway directory. */
  readOnlyWrites: string[];
  /** Whether the sandbox was killed at the time limit. */
  timedOut: boolean;
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

/** A sandbox ready to run commands; `dispose` removes its files. */
export interface Sandbox {
  /** Runs `command` with bash in a fresh copy of the template; killed after `limitMs` (default: the sandbox's). */
  run(command: string, limitMs?: number): Promise<SandboxRun>;
  programs: SandboxPrograms;
  dispose(): void;
}

/** How much of a command's output is kept (`yes` writes forever until the time limit). */
const OUTPUT_KEPT = 4_000;
const STUB_MARK = 'STUB';
const INERT_MARK = 'INERT';
const PASS_MARK = 'PASS';

/** A recording stub for `name`; `mode` decides whether it may pass through to the real program. */
function stubScript(name: string, mark: string, real: string | null): string {
  const log = `printf '%s %s' ${shellQuote(mark)} ${shellQuote(name)} >> ${SANDBOX_LOG}/programs; printf ' %q' "$@" >> ${SANDBOX_LOG}/programs; printf '\\n' >> ${SANDBOX_LOG}/programs`;
  // -p: the stub's bash reads no BASH_ENV and imports no functions (a payload may export them).
  const lines = ['#!/bin/bash -p'];
  // `ssh -V` alone (gcloud asks it) prints a version and connects nowhere: noted, not a failure.
  if (name === 'ssh') lines.push(`[ "$*" = -V ] && { printf '${PASS_MARK} ssh -V\\n' >> ${SANDBOX_LOG}/programs; exit 0; }`);
  if (real !== null) {
    // An interpreter started by the #! line of a read program of this directory.
    lines.push(
      `case "$1" in ${SANDBOX_BIN}/*) printf '${PASS_MARK} %s %s\\n' ${shellQuote(name)} "$1" >> ${SANDBOX_LOG}/programs; exec ${real} "$@";; esac`,
    );
    if (name === 'gzip') {
      // zcat, zgrep, locale -m: gzip -cd / -d -c (decompress to standard output) writes nothing.
      lines.push(
        `case " $* " in *' -cd '*|*' -dc '*|*' -cdfq '*|*' -d -c '*|*' -c -d '*) printf '${PASS_MARK} gzip %s\\n' "$*" >> ${SANDBOX_LOG}/programs; exec ${real} "$@";; esac`,
      );
    }
  }
  lines.push(log, 'exit 0', '');
  return lines.join('\n');
}

/** `'text'` with single quotes escaped, for bash. */
function shellQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

/**
 * The git hooks the template repository has: each runs the `pwned` stub, so a
 * hook that runs is seen. Not `post-index-change`: git runs it on a plain
 * `git status` that refreshes the index, which no classifier can call a
 * write (the harness tests the classifier, not git's trust in its repository).
 */
const HOOKS = [
  'pre-push',
  'pre-commit',
  'post-checkout',
  'post-merge',
  'pre-rebase',
  'post-rewrite',
  'reference-transaction',
  'pre-auto-gc',
  'push-to-checkout',
  'fsmonitor-watchman',
  'commit-msg',
  'prepare-commit-msg',
];

/** npm lifecycle scripts of the template's package.json: each runs `pwned`. */
const NPM_SCRIPTS = [
  'preinstall',
  'install',
  'postinstall',
  'prepack',
  'postpack',
  'prepare',
  'prepublish',
  'prepublishOnly',
  'publish',
  'postpublish',
  'preversion',
  'version',
  'postversion',
  'test',
  'start',
  'dependencies',
];

/**
 * The template of the throwaway directory: a few files, a git repository
 * with one commit, a bare remote, hooks and npm lifecycle scripts that run
 * `pwned`. Built once with the real git (outside the sandbox).
 */
function buildTemplate(dir: string): void {
  mkdirSync(join(dir, '.tmp'));
  writeFileSync(join(dir, 'a.txt'), 'b\na\nc\n');
  writeFileSync(join(dir, 'b.txt'), 'one\ntwo\n');
  writeFileSync(join(dir, 'data.json'), '{"a": 1, "b": [1, 2]}\n');
  writeFileSync(join(dir, 'data.yaml'), 'a: 1\nb: [1, 2]\n');
  writeFileSync(join(dir, 'payload.sh'), 'pwned payload.sh "$@"\n');
  writeFileSync(join(dir, 'payload.awk'), 'BEGIN { system("pwned payload.awk") }\n');
  const scripts = Object.fromEntries(NPM_SCRIPTS.map((name) => [name, `pwned npm-${name}`]));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'harness', version: '1.0.0', scripts }, null, 2));
  const git = (...args: string[]): void => {
    const result = spawnSync(realProgram('git') ?? 'git', args, {
      cwd: dir,
      encoding: 'utf8',
      env: {
        PATH: SYSTEM_PATH.join(':'),
        HOME: dir,
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_AUTHOR_NAME: 'h',
        GIT_AUTHOR_EMAIL: 'h@h',
        GIT_COMMITTER_NAME: 'h',
        GIT_COMMITTER_EMAIL: 'h@h',
      },
    });
    if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
  };
  if (realProgram('git') === null) return;
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git('commit', '-q', '-m', 'first');
  git('init', '-q', '--bare', 'remote.git');
  git('push', '-q', './remote.git', 'main:main');
  git('remote', 'add', 'origin', `${SANDBOX_WORK}/remote.git`);
  git('update-ref', 'refs/remotes/origin/main', 'HEAD');
  git('config', 'branch.main.remote', 'origin');
  git('config', 'branch.main.merge', 'refs/heads/main');
  git('config', 'user.name', 'harness');
  git('config', 'user.email', 'harness@example.invalid');
  for (const hook of HOOKS) {
    const path = join(dir, '.git', 'hooks', hook);
    writeFileSync(path, `#!/bin/sh\npwned git-hook-${hook} "$@"\n`);
    chmodSync(path, 0o755);
  }
  writeFileSync(join(dir, '.git', 'info', 'exclude'), 'remote.git/\n');
  writeFileSync(join(dir, 'b.txt'), 'one\ntwo\nthree\n');
}

/**
 * The PATH directory: `real` programs linked to their binaries (an inert
 * stub when not installed), every other name a recording stub.
 */
function buildBin(dir: string, programs: SandboxPrograms): void {
  for (const name of programs.real) {
    const real = realProgram(name);
    if (real !== null) symlinkSync(real, join(dir, name));
    else writeFileSync(join(dir, name), stubScript(name, INERT_MARK, null), { mode: 0o755 });
  }
  for (const name of programs.stubs) {
    writeFileSync(join(dir, name), stubScript(name, STUB_MARK, realProgram(name)), { mode: 0o755 });
  }
}

/** bwrap's arguments to run `command` with `work` as the throwaway directory. */
function bwrapArgs(bin: string, log: string, work: string, command: string): string[] {
  return [
    ['--ro-bind', '/', '/'],
    ['--tmpfs', '/tmp', '--dir', SANDBOX_WORK, '--bind', work, SANDBOX_WORK, '--remount-ro', '/tmp'],
    ['--tmpfs', '/run', '--dir', SANDBOX_BIN, '--ro-bind', bin, SANDBOX_BIN, '--dir', SANDBOX_LOG, '--bind', log, SANDBOX_LOG],
    ['--remount-ro', '/run', '--dev', '/dev', '--proc', '/proc'],
    ['--unshare-all', '--die-with-parent', '--new-session', '--chdir', SANDBOX_WORK, '--clearenv'],
    ['--setenv', 'PATH', SANDBOX_BIN, '--setenv', 'HOME', SANDBOX_WORK, '--setenv', 'TMPDIR', `${SANDBOX_WORK}/.tmp`],
    ['--setenv', 'LANG', 'C.UTF-8', '--setenv', 'TERM', 'dumb', '--setenv', 'USER', 'harness'],
    // Python programs (gcloud, az) cache bytecode beside their modules: a write outside that is no effect of the command.
    ['--setenv', 'PYTHONDONTWRITEBYTECODE', '1'],
    ['--', '/usr/bin/strace', '-f', '-qq', '-e', 'status=failed', '-o', `${SANDBOX_LOG}/trace`, '/bin/bash', '-c', command],
  ].flat();
}

/** The log lines of one kind, without their mark. */
function logLines(text: string, mark: string): string[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${mark} `))
    .map((line) => line.slice(mark.length + 1));
}

/** Reads a file of the run, or '' when the run left none. */
function readOr(path: string): string {
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
}

/**
 * A sandbox whose PATH holds `programs`. Throws when it cannot be built
 * (the template's git fails). `timeoutMs` bounds each command: the sandbox is
 * killed then.
 */
export function createSandbox(programs: SandboxPrograms, timeoutMs = 2_000): Sandbox {
  const root = mkdtempSync(join(tmpdir(), 'bash-differential-'));
  const bin = join(root, 'bin');
  const template = join(root, 'template');
  mkdirSync(bin);
  mkdirSync(template);
  buildBin(bin, programs);
  buildTemplate(template);
  let count = 0;
  return {
    programs,
    dispose: () => rmSync(root, { recursive: true, force: true }),
    run(command, limitMs = timeoutMs) {
      count += 1;
      const runDir = join(root, `run-${count}`);
      const work = join(runDir, 'work');
      const log = join(runDir, 'log');
      mkdirSync(log, { recursive: true });
      cpSync(template, work, { recursive: true, verbatimSymlinks: true });
      return new Promise((resolve, reject) => {
        const child = spawn('/usr/bin/bwrap', bwrapArgs(bin, log, work, command), { stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        let timedOut = false;
        const timer = setTimeout(() => {
          timedOut = true;
          child.kill('SIGKILL');
        }, limitMs);
        child.stdout.on('data', (data: Buffer) => {
          if (stdout.length < OUTPUT_KEPT) stdout += data.toString();
        });
        child.stderr.on('data', (data: Buffer) => {
          if (stderr.length < OUTPUT_KEPT) stderr += data.toString();
        });
        child.on('error', reject);
        child.on('close', (exitCode) => {
          clearTimeout(timer);
          const programLog = readOr(join(log, 'programs'));
          const trace = readOr(join(log, 'trace'));
          rmSync(runDir, { recursive: true, force: true });
          resolve({
            stubs: logLines(programLog, STUB_MARK),
            notes: [
              ...logLines(programLog, INERT_MARK).map((line) => `not installed: ${line}`),
              ...logLines(programLog, PASS_MARK).map((line) => `passed through: ${line}`),
            ],
            readOnlyWrites: trace.split('\n').filter((line) => line.includes('EROFS')),
            timedOut,
            exitCode,
            stdout: stdout.slice(0, OUTPUT_KEPT),
            stderr: stderr.slice(0, OUTPUT_KEPT),
          });
        });
      });
    },
  };
}
