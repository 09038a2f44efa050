/**
 * Which guard gates a call of an MCP session: the options' one `guard`, their
 * `getGuard(sessionKey)`, or a session store made here. A guard may be a
 * `SessionGuard` or a `SharedSessionGuard` (`createSharedSessionStore()`):
 * the gate checks and records through `admitCall` and `recordCall`, which
 * take either. Shared by the proxy and the in-process server gate.
 *
 * Strict failed writes (DESIGN.md §3.8) are the gate's own setting, passed to
 * every record (`recordCall`'s `strictFailedWrites`), whatever the guard's:
 * so any guard is accepted.
 */
import { createSessionStore } from '../../store/session-store.js';
import { AdapterConfigError, type AdapterGuard } from '../common.js';
import { DEFAULT_SESSION_KEY, type McpGateOptions } from './gate-options.js';

/**
 * Resolves the guard of a session. `sessionId` is the transport's session id
 * (undefined without one: the options' `sessionKey` is used); `key` the
 * session key used; `guard()` the session's guard, which throws what the
 * app's `getGuard` threw or a `TypeError` when it gave no guard (the call
 * must then not run).
 */
export type GuardSource = (sessionId: string | undefined) => { guard: () => AdapterGuard; key: string };

/** Whether a value has a guard's `check` and `record` (a `SessionGuard` or a `SharedSessionGuard`). */
function isGuard(value: unknown): value is AdapterGuard {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AdapterGuard).check === 'function' &&
    typeof (value as AdapterGuard).record === 'function'
  );
}

/**
 * The gate's `strictFailedWrites` (default true).
 * @throws AdapterConfigError when it is not a boolean.
 */
export function strictnessOf(options: McpGateOptions, where: string): boolean {
  const strict = options.strictFailedWrites ?? true;
  if (typeof strict !== 'boolean') throw new AdapterConfigError('mcp', `${where}: strictFailedWrites must be a boolean`);
  return strict;
}

/**
 * The guard source of `createGatingProxy` or `gateMcpServer` (`where`, named
 * in the messages), its options checked once at setup.
 *
 * @throws AdapterConfigError on both or malformed guard sources, a bad
 *   `sessionKey` or `strictFailedWrites`.
 */
export function guardSource(options: McpGateOptions, where: string): GuardSource {
  const strict = strictnessOf(options, where);
  const fallbackKey = options.sessionKey ?? DEFAULT_SESSION_KEY;
  if (typeof fallbackKey !== 'string' || fallbackKey === '') {
    throw new AdapterConfigError('mcp', `${where}: sessionKey must be a non-empty string`);
  }
  if (options.guard !== undefined && options.getGuard !== undefined) {
    throw new AdapterConfigError('mcp', `${where}: give either guard or getGuard, not both`);
  }
  if (options.guard !== undefined) {
    const guard = options.guard;
    if (!isGuard(guard)) {
      throw new AdapterConfigError(
        'mcp',
        `${where}: guard must be a session guard (createSessionGuard(), a session store's session(key), or a shared session store's session(key))`,
      );
    }
    return (sessionId) => ({ guard: () => guard, key: sessionId ?? fallbackKey });
  }
  let get: (key: string) => unknown;
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
    return {
      key,
      guard: () => {
        const guard = get(key);
        if (!isGuard(guard)) throw new TypeError(`getGuard('${key.slice(0, 64)}') gave no session guard`);
        return guard;
      },
    };
  };
}
