/**
 * `SessionStoreError`: a shared session store that could not commit a
 * decision, so the gate fails closed.
 */
/** Why a `SessionStoreError` was thrown. */
export type SessionStoreErrorCode = 'unavailable' | 'conflict' | 'closed';

/**
 * The session store could not commit a decision, so there is none: the
 * call must not run (the gate fails closed). `code`: `unavailable` (the
 * medium cannot be reached, timed out or failed; `cause` has its error),
 * `conflict` (other processes kept committing first for `maxRetries`
 * retries), `closed` (used after `close`).
 */
export class SessionStoreError extends Error {
  readonly code: SessionStoreErrorCode;

  constructor(code: SessionStoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SessionStoreError';
    this.code = code;
  }
}
