/**
 * Where an AI SDK gate's session guard comes from: one `guard`, or
 * `getGuard(sessionKey)` with the conversation's key (one guard per
 * conversation, DESIGN.md §3: the session is the chat).
 */
import { AdapterConfigError, assertGuardSource, type AdapterGuard } from '../common.js';

/** The adapter's name in its errors (`pulse-safety-fsm/ai-sdk: ...`). */
export const ADAPTER = 'ai-sdk';

/**
 * Where the session's guard comes from: `guard` (one session), or
 * `getGuard(sessionKey)` with the `sessionKey` of this conversation, so each
 * conversation has its own guard (e.g. `getGuard: (chatId) =>
 * sessions.session(chatId)` over `createSessionStore`, or over
 * `createSharedSessionStore` for many processes: an asynchronous guard, whose
 * failure to commit refuses the call).
 */
export interface GuardSourceOptions {
  guard?: AdapterGuard;
  getGuard?: (sessionKey: string) => AdapterGuard;
  /** The conversation's key for `getGuard` (your app's conversation or chat id); required with it. */
  sessionKey?: string;
}

/**
 * The guard getter of the options, validated.
 *
 * @throws AdapterConfigError without a guard source, with both, or with `getGuard` but no non-empty `sessionKey`.
 */
export function guardGetter(options: GuardSourceOptions): () => AdapterGuard {
  assertGuardSource(options, ADAPTER);
  if (options.guard !== undefined) {
    const guard = options.guard;
    return () => guard;
  }
  const { getGuard, sessionKey } = options;
  if (typeof sessionKey !== 'string' || sessionKey === '') {
    throw new AdapterConfigError(ADAPTER, "`getGuard` needs the conversation's `sessionKey` (a non-empty string)");
  }
  return () => getGuard!(sessionKey);
}
