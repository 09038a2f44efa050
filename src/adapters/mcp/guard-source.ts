/**
 * Which guard gates a call of an MCP session: the options' one `guard`, their
 * `getGuard(sessionKey)`, or a session store made here; and the check that
 * the guard treats a failed write as possibly applied, since an MCP call that
 * timed out or was cancelled may well have run. Shared by the proxy and the
 * in-process server gate.
 *
 * Spec: DESIGN.md §3.8 (strict failed writes).
 */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { sessionStateOf, type SessionGuard } from '../../guard/session-guard.js';
import { createSessionStore } from '../../store/session-store.js';
import { AdapterConfigError } from '../common.js';
import { DEFAULT_SESSION_KEY, type McpGateOptions } from './gate-options.js';
import { messageOf } from './gated-call.js';

/** A guard's setting for failed writes, read from its session without a copy (and without creating its actor); false when it cannot be read. */
function isStrict(guard: SessionGuard): boolean {
  try {
    // A store's session handle is no guard of its own: its (copied) context says the same.
    return (sessionStateOf(guard)?.context ?? guard.context).strictFailedWrites === true;
  } catch {
    return false;
  }
}

function notStrictMessage(where: string): string {
  return (
    `${where}: the guard does not treat a failed write as possibly applied, but an MCP call that timed out or was ` +
    "cancelled may have run. Create it with strictFailedWrites: true (createSessionGuard, or the session store's " +
    'guard options), or pass strictFailedWrites: false to the gate to accept that'
  );
}

/**
 * Resolves the guard of a session: the options' `guard`, `getGuard`, or a
 * store made here. `sessionId` is the transport's session id (undefined
 * without one: the options' `sessionKey` is used); `key` the session key used.
 * @throws McpError (InternalError) when `getGuard` throws or gives a guard
 *   that is not strict while strictness is asked for: the call must not run.
 */
export type GuardSource = (sessionId: string | undefined) => { guard: SessionGuard; key: string };

/**
 * The guard source of `createGatingProxy` or `gateMcpServer` (`where`, named
 * in the messages), its options checked once at setup.
 *
 * @throws AdapterConfigError on both or malformed guard sources, a bad
 *   `sessionKey`, or a `guard` that is not strict while strictness is asked for.
 */
export function guardSource(options: McpGateOptions, where: string): GuardSource {
  const strict = options.strictFailedWrites ?? true;
  if (typeof strict !== 'boolean') throw new AdapterConfigError('mcp', `${where}: strictFailedWrites must be a boolean`);
  const fallbackKey = options.sessionKey ?? DEFAULT_SESSION_KEY;
  if (typeof fallbackKey !== 'string' || fallbackKey === '') {
    throw new AdapterConfigError('mcp', `${where}: sessionKey must be a non-empty string`);
  }
  if (options.guard !== undefined && options.getGuard !== undefined) {
    throw new AdapterConfigError('mcp', `${where}: give either guard or getGuard, not both`);
  }
  if (options.guard !== undefined) {
    const guard = options.guard;
    if (typeof guard?.check !== 'function' || typeof guard.record !== 'function') {
      throw new AdapterConfigError('mcp', `${where}: guard must be a SessionGuard (createSessionGuard or a session store's session)`);
    }
    if (strict && !isStrict(guard)) throw new AdapterConfigError('mcp', notStrictMessage(where));
    return (sessionId) => ({ guard, key: sessionId ?? fallbackKey });
  }
  let get: (key: string) => SessionGuard;
  if (options.getGuard !== undefined) {
    if (typeof options.getGuard !== 'function')
      throw new AdapterConfigError('mcp', `${where}: getGuard must be a function of the session key`);
    get = options.getGuard;
  } else {
    const store = createSessionStore({ guard: { strictFailedWrites: strict } });
    get = (key) => store.session(key);
  }
  return (sessionId) => {
    const key = sessionId ?? fallbackKey;
    try {
      const guard = get(key);
      if (strict && !isStrict(guard)) throw new AdapterConfigError('mcp', notStrictMessage(where));
      return { guard, key };
    } catch (error) {
      // A session whose guard cannot be had (the app's getGuard threw, or gave a lax guard) runs nothing.
      throw new McpError(ErrorCode.InternalError, `pulse-safety: ${messageOf(error)}; the call was not run`);
    }
  };
}
