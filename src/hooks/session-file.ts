/**
 * STAND-IN, NOT THE STORE. A minimal local copy of the hook session store's
 * API (`readHookSessions`, `updateHookSession`, `sessionFilePath`,
 * `hookStateDirectory`), only so that `pulse-safety serve --hooks` compiles
 * and its tests run before the real store lands. It has no lock. At merge,
 * take the real `src/hooks/session-file.ts` and drop this one.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { ToolKind } from '../../machines/safety.types.js';
import type { PersistedSnapshot } from '../guard/snapshot.js';
import type { HookFailureCode, HookHost } from './types.js';

/** Decisions kept per session (stand-in). */
export const MAX_HOOK_DECISIONS = 50;

/** A call admitted and not yet settled (stand-in). */
export interface HookCallRecord {
  name: string;
  kind: ToolKind;
  targets: string[];
  echoes: boolean;
  catalog: string;
  at: number;
  asked?: boolean;
}

/** One decision of the gate (stand-in). */
export interface HookDecisionRecord {
  at: number;
  event: string;
  tool?: string;
  answer: string;
  code?: string;
  rule?: string;
  reason?: string;
}

/** A hook session on disk (stand-in). */
export interface HookSessionRecord {
  version: 1;
  host: HookHost;
  sessionId: string;
  cwd?: string;
  transcriptPath?: string;
  createdAt: number;
  updatedAt: number;
  snapshot: PersistedSnapshot | null;
  calls: Record<string, HookCallRecord>;
  decisions: HookDecisionRecord[];
  stopBlocks: number;
}

/** A session file that cannot be read (stand-in). */
export class HookStateError extends Error {
  override readonly name = 'HookStateError';
  readonly code: HookFailureCode;
  constructor(code: HookFailureCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** The state directory (stand-in): `$PULSE_SAFETY_STATE_DIR`, else `$XDG_STATE_HOME/pulse-safety-fsm`, else `~/.local/state/pulse-safety-fsm`. */
export function hookStateDirectory(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PULSE_SAFETY_STATE_DIR) return env.PULSE_SAFETY_STATE_DIR;
  return join(env.XDG_STATE_HOME || join(homedir(), '.local', 'state'), 'pulse-safety-fsm');
}

/** The file of a session (stand-in): `<stateDir>/<host>/<sha256 of the session id>.json`. */
export function sessionFilePath(stateDir: string, host: HookHost, sessionId: string): string {
  return join(stateDir, host, `${createHash('sha256').update(sessionId).digest('hex')}.json`);
}

async function readRecord(path: string): Promise<HookSessionRecord | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new HookStateError('HOOK_STATE_UNREADABLE', `${path}: ${(error as Error).message}`);
  }
  try {
    const record = JSON.parse(text) as HookSessionRecord;
    if (typeof record !== 'object' || record === null || record.version !== 1) throw new Error('not a session record');
    return record;
  } catch (error) {
    throw new HookStateError('HOOK_STATE_UNREADABLE', `${path}: ${(error as Error).message}`);
  }
}

/** Every session file under `stateDir` (stand-in). */
export async function readHookSessions(
  stateDir: string,
): Promise<Array<{ path: string; record: HookSessionRecord } | { path: string; error: HookStateError }>> {
  const out: Array<{ path: string; record: HookSessionRecord } | { path: string; error: HookStateError }> = [];
  let hosts: string[];
  try {
    hosts = await readdir(stateDir);
  } catch {
    return out;
  }
  for (const host of hosts) {
    let names: string[];
    try {
      names = (await readdir(join(stateDir, host))).filter((name) => name.endsWith('.json'));
    } catch {
      continue;
    }
    for (const name of names) {
      const path = join(stateDir, host, name);
      try {
        const record = await readRecord(path);
        if (record !== null) out.push({ path, record });
      } catch (error) {
        out.push({ path, error: error as HookStateError });
      }
    }
  }
  return out;
}

/** Reads, changes and replaces a session by rename (stand-in: no lock). `next: null` removes it. */
export async function updateHookSession<T>(
  stateDir: string,
  host: HookHost,
  sessionId: string,
  update: (current: HookSessionRecord | null) => { next: HookSessionRecord | null; value: T },
  _options: { lockTimeoutMs?: number } = {},
): Promise<T> {
  const path = sessionFilePath(stateDir, host, sessionId);
  const { next, value } = update(await readRecord(path));
  if (next === null) {
    await rm(path, { force: true });
    return value;
  }
  await mkdir(join(stateDir, host), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, JSON.stringify(next));
  await rename(temporary, path);
  return value;
}
