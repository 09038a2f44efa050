/**
 * `pulse-safety hook`: the coding agents' hooks (issue 25).
 *
 * ```
 * pulse-safety hook <host>                       one hook event: payload on stdin, the host's answer on stdout
 * pulse-safety hook install <host> [--project|--user] [--dir <project>] [--command <cmd>]
 * pulse-safety hook uninstall <host> [--project|--user] [--dir <project>] [--command <cmd>]
 * pulse-safety hook status [--json] [--decisions <n>]
 * pulse-safety hook verify <host> [--project|--user] [--dir <project>] [--json]
 * pulse-safety hook reset (<host> <session-id> | --file <path> | --all)
 * ```
 *
 * `<host>` is one of `claude-code`, `gemini-cli`, `codex`, `cursor`,
 * `copilot`. The executable answers `hook <host>` itself without loading the
 * rest of the CLI (`bin.ts`); the subcommand here is the same answer for a
 * run through `main`. Sessions live in the state directory
 * (`$PULSE_SAFETY_STATE_DIR`, else `$XDG_STATE_HOME/pulse-safety-fsm`).
 *
 * Exit codes: `install`, `uninstall`, `status`, `reset` 0 done; `verify` 0
 * when the canary write was refused by the gate and the read allowed, 1
 * otherwise (allowed, not installed, the hook failed); `reset` 1 when there
 * was no such session; 2 bad input (an unknown host, a settings file that is
 * not JSON, a usage error).
 */
import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { printable } from '../../util/printable.js';
import { HOOK_HOSTS, isHookHost, type HookHost } from '../../hooks/types.js';
import {
  defaultHookCommand,
  hookFollowUp,
  hookSettingsFile,
  HookSettingsError,
  installHookSettings,
  readSettingsFile,
  uninstallHookSettings,
  writeSettingsFile,
  type HookScope,
} from '../../hooks/install.js';
import { EXIT, InputError, withDefaults, type CommandIo, type CommandSink } from '../io.js';

/** Exit codes of `pulse-safety hook verify`. */
export const HOOK_VERIFY_EXIT = { refused: 0, notRefused: 1, badInput: 2 } as const;

interface ScopeOptions {
  project?: boolean;
  user?: boolean;
  dir?: string;
  command?: string;
  daemon?: string;
}

/** The host argument. @throws InputError when it is not a host. */
function hostOf(value: string): HookHost {
  if (!isHookHost(value)) throw new InputError(`unknown host '${value}': one of ${HOOK_HOSTS.join(', ')}`);
  return value;
}

function scopeOf(options: ScopeOptions): HookScope {
  return options.user === true ? 'user' : 'project';
}

/** Adds `--project`, `--user` and `--dir` to a subcommand. */
function withScope(command: Command): Command {
  return command
    .addOption(new Option('--project', "the project's settings (the default)").conflicts('user'))
    .addOption(new Option('--user', "the user's settings (every project)").conflicts('project'))
    .option('--dir <project>', 'the project directory (default: the current directory)');
}

/** Runs `action`, reporting bad input (and a settings file that cannot be edited) in one line, exit 2. */
async function guarded(sink: CommandSink, name: string, action: () => Promise<void>): Promise<void> {
  try {
    await action();
  } catch (error) {
    if (error instanceof InputError || error instanceof HookSettingsError) {
      sink.err(`pulse-safety hook ${name}: ${printable(error.message)}\n`);
      sink.setExitCode(EXIT.badInput);
      return;
    }
    throw error;
  }
}

/** Reads all of stdin as UTF-8 text. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The state directory of the hook sessions. */
async function stateDirectory(): Promise<string> {
  const { hookStateDirectory } = await import('../../hooks/session-file.js');
  return hookStateDirectory(process.env);
}

/** Adds `hook` and its subcommands to a commander program. */
export function registerHookCommand(program: Command, io: CommandIo = {}): Command {
  const sink = withDefaults(io);
  const hook = program
    .command('hook')
    .description("coding agents' hooks: answer one hook event (hook <host>), install, uninstall, status, verify, reset")
    .exitOverride();

  for (const host of HOOK_HOSTS) {
    hook
      .command(host)
      .description(`answer one ${host} hook event: its payload on stdin, the answer on stdout, in ${host}'s format`)
      .exitOverride()
      .action(async () => {
        const { runHook } = await import('../../hooks/run.js');
        const output = await runHook(host, await readStdin());
        if (output.stderr !== '') sink.err(output.stderr);
        sink.out(output.stdout);
        sink.setExitCode(output.exitCode);
      });
  }

  registerServe(hook, sink);
  registerInstall(hook, sink);
  registerUninstall(hook, sink);
  registerStatus(hook, sink);
  registerVerify(hook, sink);
  registerReset(hook, sink);
  return hook;
}

/** `hook serve`: the hook daemon, until SIGINT or SIGTERM. */
function registerServe(hook: Command, sink: CommandSink): void {
  hook
    .command('serve')
    .description('answer hook events over HTTP on 127.0.0.1 (POST /hook/<host>): one process for every tool call')
    .option('--port <n>', 'the port (0: any free one)', '4311')
    .option('--host <address>', 'the address; 127.0.0.1 only', '127.0.0.1')
    .exitOverride()
    .action((options: { port: string; host: string }) =>
      guarded(sink, 'serve', async () => {
        const port = Number(options.port);
        if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InputError('--port: expected a port, 0 to 65535');
        const { startHookDaemon, HookDaemonAddressError } = await import('../../hooks/daemon.js');
        let daemon;
        try {
          daemon = await startHookDaemon({ port, host: options.host });
        } catch (error) {
          if (error instanceof HookDaemonAddressError) throw new InputError(error.message);
          throw error;
        }
        sink.out(`pulse-safety hook daemon: ${daemon.url}/hook/<host> (state: ${await stateDirectory()})\n`);
        await new Promise<void>((resolve) => {
          const stop = (): void => {
            process.off('SIGINT', stop);
            process.off('SIGTERM', stop);
            void daemon.close().then(resolve);
          };
          process.on('SIGINT', stop);
          process.on('SIGTERM', stop);
        });
        sink.setExitCode(EXIT.clean);
      }),
    );
}

/** `hook install <host>`: merges our entries into the host's settings and says what to do next. */
function registerInstall(hook: Command, sink: CommandSink): void {
  withScope(hook.command('install'))
    .description("write the host's settings so it runs `pulse-safety hook <host>` (merged with what is there)")
    .argument('<host>', HOOK_HOSTS.join(', '))
    .option('--command <cmd>', 'the hook command to write (default: see docs/hooks.md)')
    .option(
      '--daemon <port>',
      'reach `pulse-safety hook serve` on this port (Claude Code: an http hook; others: curl, the process hook as fallback)',
    )
    .exitOverride()
    .action((hostName: string, options: ScopeOptions) =>
      guarded(sink, 'install', async () => {
        const host = hostOf(hostName);
        const scope = scopeOf(options);
        const projectDir = resolve(options.dir ?? process.cwd());
        const file = hookSettingsFile(host, scope, { projectDir });
        let choice =
          options.command === undefined
            ? defaultHookCommand(host, scope, { projectDir })
            : { command: options.command, how: 'given' as const, why: 'given with --command' };
        if (choice.command.trim() === '') throw new InputError('--command is empty');
        if (options.daemon !== undefined) {
          const port = Number(options.daemon);
          if (!Number.isInteger(port) || port < 1 || port > 65535) throw new InputError('--daemon: expected a port, 1 to 65535');
          const { daemonForwarderCommand, HOOK_DAEMON_ADDRESS } = await import('../../hooks/daemon.js');
          choice =
            host === 'claude-code'
              ? {
                  command: `http://${HOOK_DAEMON_ADDRESS}:${port}/hook/${host}`,
                  how: choice.how,
                  why: 'the daemon, as an http hook (onFailure block: a stopped daemon refuses)',
                }
              : {
                  command: daemonForwarderCommand(host, port, choice.command),
                  how: choice.how,
                  why: `the daemon through curl; when it does not answer: ${choice.command}`,
                };
        }
        const result = installHookSettings(host, readSettingsFile(file), choice.command, file);
        if (result.changed) await writeSettingsFile(file, result.text);
        sink.out(
          result.changed
            ? `${file}: installed the ${host} hook for ${result.events.join(', ')}\n`
            : `${file}: the ${host} hook is already installed; nothing changed\n`,
        );
        sink.out(`command: ${choice.command}\n  (${choice.why})\n`);
        sink.out(`next: ${hookFollowUp(host, scope)}\n`);
        sink.out(
          `check: pulse-safety hook verify ${host}${scope === 'user' ? ' --user' : ''}${options.dir === undefined ? '' : ` --dir ${options.dir}`}\n`,
        );
        sink.setExitCode(EXIT.clean);
      }),
    );
}

/** `hook uninstall <host>`: removes exactly our entries. */
function registerUninstall(hook: Command, sink: CommandSink): void {
  withScope(hook.command('uninstall'))
    .description("remove exactly our entries from the host's settings")
    .argument('<host>', HOOK_HOSTS.join(', '))
    .option('--command <cmd>', 'also remove entries running this command (one given to install with --command)')
    .exitOverride()
    .action((hostName: string, options: ScopeOptions) =>
      guarded(sink, 'uninstall', async () => {
        const host = hostOf(hostName);
        const scope = scopeOf(options);
        const file = hookSettingsFile(host, scope, { projectDir: resolve(options.dir ?? process.cwd()) });
        const result = uninstallHookSettings(host, readSettingsFile(file), file, options.command);
        if (result.changed) await writeSettingsFile(file, result.text);
        if (!result.changed) sink.out(`${file}: no ${host} hook of pulse-safety there; nothing changed\n`);
        else
          sink.out(
            `${file}: removed the ${host} hook from ${result.events.join(', ')}${result.text === null ? ' (the file held nothing else: removed)' : ''}\n`,
          );
        sink.setExitCode(EXIT.clean);
      }),
    );
}

/** `hook status`: the live sessions and the unreadable files. */
function registerStatus(hook: Command, sink: CommandSink): void {
  hook
    .command('status')
    .description('each live hook session: host, id, cwd, state, calls in flight, last decisions; unreadable files')
    .option('--json', 'machine-readable')
    .option('--decisions <n>', 'how many last decisions per session', '5')
    .exitOverride()
    .action((options: { json?: boolean; decisions: string }) =>
      guarded(sink, 'status', async () => {
        const decisions = Number(options.decisions);
        if (!Number.isInteger(decisions) || decisions < 0) throw new InputError('--decisions: expected a whole number');
        const { hookStatus, formatHookStatus } = await import('../../hooks/status.js');
        const status = await hookStatus(await stateDirectory(), { decisions });
        sink.out(options.json === true ? JSON.stringify(status, null, 2) + '\n' : formatHookStatus(status));
        sink.setExitCode(EXIT.clean);
      }),
    );
}

/** `hook verify <host>`: the canary write and read through the installed command. */
function registerVerify(hook: Command, sink: CommandSink): void {
  withScope(hook.command('verify'))
    .description('run the installed hook as the host would on a canary write (must be refused) and a read (must be allowed)')
    .argument('<host>', HOOK_HOSTS.join(', '))
    .option('--json', 'machine-readable')
    .exitOverride()
    .action((hostName: string, options: ScopeOptions & { json?: boolean }) =>
      guarded(sink, 'verify', async () => {
        const host = hostOf(hostName);
        const { verifyHook } = await import('../../hooks/verify.js');
        const { removeHookSession } = await import('../../hooks/session-file.js');
        const stateDir = await stateDirectory();
        const result = await verifyHook(host, scopeOf(options), {
          projectDir: resolve(options.dir ?? process.cwd()),
          removeSession: async (h, id) => {
            await removeHookSession(stateDir, h, id);
          },
        });
        if (options.json === true) sink.out(JSON.stringify(result, null, 2) + '\n');
        else {
          sink.out(`${result.ok ? 'ok' : 'FAILED'}: ${printable(result.summary)}\n`);
          sink.out(`settings: ${result.file}\n`);
          if (result.command !== null) sink.out(`command: ${printable(result.command)}\n`);
          for (const probe of [result.write, result.read]) {
            if (probe === undefined) continue;
            sink.out(
              `  ${printable(probe.canary)}: ${probe.verdict} (exit ${String(probe.exitCode)})${probe.reason === undefined ? '' : `: ${printable(probe.reason.split('\n')[0]!.slice(0, 240))}`}\n`,
            );
          }
        }
        sink.setExitCode(result.ok ? HOOK_VERIFY_EXIT.refused : HOOK_VERIFY_EXIT.notRefused);
      }),
    );
}

/** `hook reset`: removes a session, a file, or all of them. */
function registerReset(hook: Command, sink: CommandSink): void {
  hook
    .command('reset')
    .description('remove a hook session (also a corrupt one) so it starts fresh')
    .argument('[host]', HOOK_HOSTS.join(', '))
    .argument('[session-id]', "the host's session id")
    .option('--file <path>', 'a session file as `hook status` lists it (for a corrupt one)')
    .option('--all', 'every session')
    .exitOverride()
    .action((hostName: string | undefined, sessionId: string | undefined, options: { file?: string; all?: boolean }) =>
      guarded(sink, 'reset', async () => {
        const chosen = [hostName !== undefined, options.file !== undefined, options.all === true].filter(Boolean).length;
        if (chosen !== 1 || (hostName !== undefined && sessionId === undefined)) {
          throw new InputError('name one session (<host> <session-id>), one file (--file <path>), or --all');
        }
        const { resetAllHookSessions, resetHookSession, resetHookSessionFile } = await import('../../hooks/status.js');
        const stateDir = await stateDirectory();
        if (options.all === true) {
          const removed = await resetAllHookSessions(stateDir);
          sink.out(`removed ${removed} session file(s) from ${stateDir}\n`);
          sink.setExitCode(EXIT.clean);
          return;
        }
        if (options.file !== undefined) {
          try {
            await resetHookSessionFile(stateDir, options.file);
          } catch (error) {
            throw new InputError((error as Error).message);
          }
          sink.out(`removed ${options.file}\n`);
          sink.setExitCode(EXIT.clean);
          return;
        }
        const host = hostOf(hostName!);
        const removed = await resetHookSession(stateDir, host, sessionId!);
        sink.out(
          removed
            ? `removed the ${host} session ${printable(sessionId!)}\n`
            : `no ${host} session ${printable(sessionId!)} in ${stateDir}\n`,
        );
        sink.setExitCode(removed ? EXIT.clean : EXIT.refused);
      }),
    );
}
