/**
 * `pulse-safety hook verify <host>`: runs the hook command installed in the
 * host's settings the way the host runs it (its exact command, through the
 * shell, in the host's directory, with the host's variables), feeds it a
 * canary before-tool payload of that host, and reads the answer as the host
 * reads it:
 *
 * 1. a write as the first call of a fresh session, `rm -rf <canary dir>`:
 *    must be refused by the gate (`FSM_BLOCKED` in the reason);
 * 2. then a read (`ls <canary dir>`) in the same session: must be allowed.
 *
 * Nothing is run but the hook: the canary directory is only named. The canary
 * session is removed from the state directory afterwards.
 *
 * Spec: issue 25 item 6; AGENT_HOOKS.md §1.1-1.5 (each host's payload, how it
 * runs a hook, what it reads as a refusal) and §4.11 (a self-test like `rampart verify`).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  hookSettingsFile,
  HOOK_TIMEOUT_SECONDS,
  installedHooks,
  readSettingsFile,
  shellQuote,
  type HookScope,
  type InstalledHook,
} from './install.js';
import type { HookHost } from './types.js';

/** The host's before-tool event, where the canary goes. */
const BEFORE_TOOL: Record<HookHost, string> = {
  'claude-code': 'PreToolUse',
  'gemini-cli': 'BeforeTool',
  codex: 'PreToolUse',
  cursor: 'preToolUse',
  copilot: 'preToolUse',
};

/** What one run of the hook printed, and how the host reads it. */
export interface HookProbe {
  /** The shell command the canary ran (`rm -rf ...` or `ls ...`). */
  canary: string;
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** How the host reads the answer: `deny` (the call does not run), `ask` (the user is asked), `allow` (it runs), `failed` (a hook failure: the host's failure rule applies). */
  verdict: 'deny' | 'ask' | 'allow' | 'failed';
  /** The reason the hook gave, when it gave one. */
  reason?: string;
}

/** The result of `verifyHook`. */
export interface HookVerifyResult {
  /** True when the canary write was refused by the gate (`FSM_BLOCKED`) and the read was allowed. */
  ok: boolean;
  /** One line: why `ok` is what it is. */
  summary: string;
  /** The settings file read. */
  file: string;
  /** The command installed for the host's before-tool event; null when none is installed. */
  command: string | null;
  write?: HookProbe;
  read?: HookProbe;
}

/** Options of `verifyHook`. */
export interface HookVerifyOptions {
  /** The project's directory (absolute): the project scope's settings, and the session's `cwd`. */
  projectDir: string;
  /** The hook's environment (default `process.env`): where it keeps sessions (`PULSE_SAFETY_STATE_DIR`, `XDG_STATE_HOME`), `HOME`. */
  env?: NodeJS.ProcessEnv;
  /**
   * Removes the canary session from the state directory; `verifyHook` calls
   * it with the host and the canary's session id once both probes ran.
   */
  removeSession?: (host: HookHost, sessionId: string) => Promise<void>;
}

/** The canary payload of `host`'s before-tool event for a shell command. */
export function canaryPayload(
  host: HookHost,
  canary: { sessionId: string; cwd: string; command: string; callId: string },
): Record<string, unknown> {
  const { sessionId, cwd, command, callId } = canary;
  switch (host) {
    case 'claude-code':
      return {
        session_id: sessionId,
        transcript_path: join(cwd, '.pulse-safety-verify.jsonl'),
        cwd,
        permission_mode: 'default',
        hook_event_name: 'PreToolUse',
        tool_name: 'Bash',
        tool_input: { command, description: 'pulse-safety hook verify canary' },
        tool_use_id: `toolu_${callId}`,
      };
    case 'gemini-cli':
      return {
        session_id: sessionId,
        transcript_path: join(cwd, '.pulse-safety-verify.json'),
        cwd,
        hook_event_name: 'BeforeTool',
        timestamp: new Date().toISOString(),
        tool_name: 'run_shell_command',
        tool_input: { command, description: 'pulse-safety hook verify canary' },
      };
    case 'codex':
      return {
        session_id: sessionId,
        turn_id: `turn-${callId}`,
        transcript_path: null,
        cwd,
        hook_event_name: 'PreToolUse',
        model: 'gpt-5-codex',
        permission_mode: 'default',
        tool_name: 'Bash',
        tool_use_id: `call_${callId}`,
        tool_input: { command },
      };
    case 'cursor':
      return {
        conversation_id: sessionId,
        generation_id: `gen-${callId}`,
        model: 'default',
        hook_event_name: 'preToolUse',
        cursor_version: '2.0.0',
        workspace_roots: [cwd],
        user_email: null,
        transcript_path: null,
        tool_name: 'Shell',
        tool_input: { command, cwd },
        tool_use_id: `tool_${callId}`,
        cwd,
        agent_message: '',
      };
    case 'copilot':
      return {
        sessionId,
        timestamp: Date.now(),
        cwd,
        toolName: 'bash',
        toolArgs: JSON.stringify({ command, description: 'pulse-safety hook verify canary' }),
      };
  }
}

/** Reads stdout as the host's JSON answer; null when it is empty or not a JSON object. */
function answerOf(stdout: string): Record<string, unknown> | null {
  const text = stdout.trim();
  if (text === '') return null;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

/**
 * How `host` reads a before-tool hook's exit code and output (AGENT_HOOKS.md §1):
 * - Claude Code, Codex: exit 2 refuses (Codex: with a reason on stderr);
 *   exit 0 reads `hookSpecificOutput.permissionDecision` (or the legacy
 *   `decision: "block"`); other exits are failures;
 * - Gemini CLI: exit 2 refuses; exit 0 reads `decision` (`deny`/`block`, `ask`);
 * - Cursor: exit 2 refuses; exit 0 reads `permission`;
 * - Copilot CLI: only JSON refuses (`permissionDecision`); exit 2 is a warning.
 */
export function readVerdict(
  host: HookHost,
  exitCode: number | null,
  stdout: string,
  stderr: string,
): Pick<HookProbe, 'verdict' | 'reason'> {
  const answer = answerOf(stdout);
  const reasonOf = (...values: unknown[]): { reason?: string } => {
    const found = values.find((v) => typeof v === 'string' && v !== '');
    return found === undefined ? {} : { reason: found as string };
  };
  if (exitCode === 2 && host !== 'copilot') {
    if (host === 'codex' && stderr.trim() === '') return { verdict: 'failed' };
    return { verdict: 'deny', ...reasonOf(stderr.trim()) };
  }
  if (exitCode !== 0) return { verdict: 'failed', ...reasonOf(stderr.trim()) };
  if (answer === null) return stdout.trim() === '' ? { verdict: 'allow' } : { verdict: host === 'gemini-cli' ? 'allow' : 'failed' };
  switch (host) {
    case 'claude-code':
    case 'codex': {
      const specific = answer.hookSpecificOutput;
      const decision = field(specific, 'permissionDecision');
      const reason = reasonOf(field(specific, 'permissionDecisionReason'), answer.reason);
      if (decision === 'deny' || answer.decision === 'block') return { verdict: 'deny', ...reason };
      if (decision === 'ask') return { verdict: host === 'codex' ? 'failed' : 'ask', ...reason };
      return { verdict: 'allow', ...reason };
    }
    case 'gemini-cli': {
      const reason = reasonOf(answer.reason);
      if (answer.decision === 'deny' || answer.decision === 'block') return { verdict: 'deny', ...reason };
      if (answer.decision === 'ask') return { verdict: 'ask', ...reason };
      return { verdict: 'allow', ...reason };
    }
    case 'cursor': {
      const reason = reasonOf(answer.agent_message, answer.user_message);
      if (answer.permission === 'deny') return { verdict: 'deny', ...reason };
      if (answer.permission === 'ask') return { verdict: 'ask', ...reason };
      return { verdict: 'allow', ...reason };
    }
    case 'copilot': {
      const decision = answer.permissionDecision ?? field(answer.hookSpecificOutput, 'permissionDecision');
      const reason = reasonOf(answer.permissionDecisionReason, field(answer.hookSpecificOutput, 'permissionDecisionReason'));
      if (decision === 'deny') return { verdict: 'deny', ...reason };
      if (decision === 'ask') return { verdict: 'ask', ...reason };
      return { verdict: 'allow', ...reason };
    }
  }
}

/** Where and with what the host runs a hook command: its directory, its variables, and the command after the host's own substitutions. */
function hostRun(
  host: HookHost,
  scope: HookScope,
  hook: InstalledHook,
  where: { projectDir: string; sessionId: string; env: NodeJS.ProcessEnv },
) {
  const { projectDir, sessionId, env } = where;
  const home = env.HOME !== undefined && env.HOME !== '' ? env.HOME : homedir();
  switch (host) {
    case 'claude-code':
      return { cwd: projectDir, command: hook.command, env: { ...env, CLAUDE_PROJECT_DIR: projectDir } };
    case 'gemini-cli': {
      // Gemini CLI substitutes these in the command text itself, shell-quoted, before it runs it.
      const quoted = shellQuote(projectDir);
      const command = hook.command
        .replace(/\$GEMINI_PROJECT_DIR/g, () => quoted)
        .replace(/\$GEMINI_CWD/g, () => quoted)
        .replace(/\$GEMINI_SESSION_ID/g, () => shellQuote(sessionId))
        .replace(/\$CLAUDE_PROJECT_DIR/g, () => quoted);
      return {
        cwd: projectDir,
        command,
        env: {
          ...env,
          GEMINI_PROJECT_DIR: projectDir,
          GEMINI_CWD: projectDir,
          GEMINI_SESSION_ID: sessionId,
          CLAUDE_PROJECT_DIR: projectDir,
        },
      };
    }
    case 'codex':
      return { cwd: projectDir, command: hook.command, env: { ...env } };
    case 'cursor':
      return {
        cwd: scope === 'project' ? projectDir : join(home, '.cursor'),
        command: hook.command,
        env: { ...env, CURSOR_PROJECT_DIR: projectDir, CLAUDE_PROJECT_DIR: projectDir },
      };
    case 'copilot':
      return { cwd: projectDir, command: hook.command, env: { ...env } };
  }
}

/** The host's timeout for the entry, in ms. */
function timeoutOf(host: HookHost, entry: Record<string, unknown>): number {
  const value = host === 'copilot' ? entry.timeoutSec : entry.timeout;
  if (typeof value !== 'number' || !(value > 0)) return HOOK_TIMEOUT_SECONDS * 1000;
  return host === 'gemini-cli' ? value : value * 1000;
}

/** Runs `command` through bash with `stdin`; resolves with what it printed (a timeout kills it: exit code null). */
function runShell(
  stdin: string,
  { command, cwd, env, timeoutMs }: { command: string; cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<{ exitCode: number | null; stdout: string; stderr: string }> {
  return new Promise((resolvePromise) => {
    const child = spawn('bash', ['-c', command], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolvePromise({ exitCode: null, stdout, stderr: stderr + error.message });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ exitCode: code, stdout, stderr });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(stdin);
  });
}

/**
 * Verifies the hook installed for `host` at `scope` (see the module's doc).
 * Never throws for a missing or broken install: `ok` is false and `summary`
 * says why.
 *
 * @throws HookSettingsError when the settings file is not JSON.
 */
export async function verifyHook(host: HookHost, scope: HookScope, options: HookVerifyOptions): Promise<HookVerifyResult> {
  const env = options.env ?? process.env;
  const projectDir = resolve(options.projectDir);
  const file = hookSettingsFile(host, scope, { projectDir, env });
  const hook = installedHooks(host, readSettingsFile(file), file).find((h) => h.event === BEFORE_TOOL[host]);
  if (hook === undefined) {
    return {
      ok: false,
      file,
      command: null,
      summary: `no pulse-safety hook for ${BEFORE_TOOL[host]} in ${file}: run \`pulse-safety hook install ${host}${scope === 'user' ? ' --user' : ''}\``,
    };
  }
  const canaryDir = mkdtempSync(join(tmpdir(), 'pulse-safety-canary-'));
  writeFileSync(join(canaryDir, 'canary.txt'), 'pulse-safety hook verify: this file must survive\n');
  const sessionId = `pulse-safety-verify-${randomUUID()}`;
  const run = hostRun(host, scope, hook, { projectDir, sessionId, env });
  const timeoutMs = timeoutOf(host, hook.entry);
  const probe = async (canary: string, callId: string): Promise<HookProbe> => {
    const payload = JSON.stringify(canaryPayload(host, { sessionId, cwd: projectDir, command: canary, callId }));
    const out = await runShell(payload, { ...run, timeoutMs });
    return { canary, ...out, ...readVerdict(host, out.exitCode, out.stdout, out.stderr) };
  };
  try {
    const write = await probe(`rm -rf ${shellQuote(canaryDir)}`, 'verify-write');
    const read = await probe(`ls -la ${shellQuote(canaryDir)}`, 'verify-read');
    const gateRefused = write.verdict === 'deny' && (write.reason ?? '').includes('FSM_BLOCKED');
    const readAllowed = read.verdict === 'allow';
    let summary: string;
    if (gateRefused && readAllowed)
      summary = `the canary write was refused (FSM_BLOCKED) and the read allowed: the ${host} hook gates this ${scope === 'project' ? 'project' : 'user'}`;
    else if (write.verdict === 'allow') summary = `the canary write \`${write.canary}\` was ALLOWED: the hook does not gate writes`;
    else if (write.verdict === 'failed')
      summary = `the hook failed (exit ${String(write.exitCode)}${write.stderr.trim() === '' ? '' : `: ${firstLine(write.stderr)}`}); ${failureRule(host, hook)}`;
    else if (!gateRefused)
      summary = `the canary write was refused, but not by the gate: ${write.reason === undefined ? 'no reason given' : firstLine(write.reason)}`;
    else
      summary = `the canary write was refused, but the read \`${read.canary}\` was not allowed (${read.verdict}${read.reason === undefined ? '' : `: ${firstLine(read.reason)}`})`;
    return { ok: gateRefused && readAllowed, summary, file, command: hook.command, write, read };
  } finally {
    rmSync(canaryDir, { recursive: true, force: true });
    if (options.removeSession !== undefined) await options.removeSession(host, sessionId).catch(() => undefined);
  }
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0]!.slice(0, 300);
}

/** What the host does when the hook fails, for the summary. */
function failureRule(host: HookHost, hook: InstalledHook): string {
  if (host === 'claude-code')
    return hook.entry.onFailure === 'block'
      ? 'Claude Code refuses the call (onFailure: block), and every other call too'
      : 'Claude Code lets the call through';
  if (host === 'cursor')
    return hook.entry.failClosed === true
      ? 'Cursor refuses the call (failClosed), and every other call too'
      : 'Cursor lets the call through';
  return `${host} lets the call through`;
}
