/**
 * The public errors, one per file, each with a `name` and a stable `code` to
 * branch on. `FSMBlockedError` is the one a model sees; the others report
 * bad input or a store that cannot commit, and never leave a session changed.
 */
export { CatalogError } from './catalog-error.js';
export {
  blockedMessage,
  blockedToolResult,
  ErrCodeFSMBlocked,
  FSMBlockedError,
  RECOVERY_TTL_MS,
  type BlockedToolResult,
  type FSMBlockedErrorInit,
} from './fsm-blocked-error.js';
export { SessionGuardError, type SessionGuardErrorCode } from './session-guard-error.js';
export { SessionStoreError, type SessionStoreErrorCode } from './session-store-error.js';
export { SnapshotError } from './snapshot-error.js';
export { TranscriptError } from './transcript-error.js';
