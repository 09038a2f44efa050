/**
 * pulse-safety-fsm: a structural safety gate for LLM agents' tool calls.
 *
 * - `createSessionGuard`: the adapter an agent loop calls (check / record / final answer).
 * - `safetyMachine`: the XState v5 statechart, to embed as an actor.
 * - `classifyCall`, `compileCatalog`, `createCallClassifier`, `classifyShellCommand`,
 *   `classifySql`, `outcomeOf`: classification (kind, targets, destructive) and
 *   reading results; `classifyToolCall`: the kind alone.
 * - `FSMBlockedError`, `ErrCodeFSMBlocked`: the structured, recoverable block.
 *
 * Spec: ASSISTANT_SAFETY.md; DESIGN.md.
 */
// Every parser loaded before this entry's classifiers are used (`classify/parsers.ts`).
import './classify/eager.js';
export { safetyMachine, initialSafetyContext, normalizeEvent, type SafetyMachine } from '../machines/safety.machine.js';
export {
  TOOL_KINDS,
  SAFETY_STATES,
  type ToolKind,
  type SafetyState,
  type SafetyContext,
  type SafetyEvent,
  type SafetyEmitted,
  type SafetyParentEvent,
  type SafetyInput,
  type GateDecidedEvent,
  type RecoverySucceededEvent,
  type PendingRecovery,
  type InFlightCall,
  type BlockRule,
  type AnswerBlockRule,
  type AnswerClaim,
} from '../machines/safety.types.js';
export {
  MAX_IN_FLIGHT,
  MAX_NAME_LENGTH,
  MAX_PENDING_RECOVERIES,
  MAX_ESTABLISHED_TARGETS,
  SELF_VERIFY_TOOL,
  TOOL_BLOCK_REASONS,
  ANSWER_BLOCK_REASONS,
  CLEARED_BY,
  reasonWithTarget,
} from '../machines/safety.policy.js';
export { canonicalTarget } from '../machines/safety.targets.js';
export { selfVerifies } from './guard/self-verify.js';
export {
  FSMBlockedError,
  CatalogError,
  SessionGuardError,
  SessionStoreError,
  SnapshotError,
  ErrCodeFSMBlocked,
  RECOVERY_TTL_MS,
  type BlockedToolResult,
  type FSMBlockedErrorInit,
  type SessionGuardErrorCode,
  type SessionStoreErrorCode,
} from './errors/index.js';
export {
  classifyToolCall,
  classifyCall,
  createCallClassifier,
  compileCatalog,
  parseCatalog,
  pickCatalog,
  kindFromMcpAnnotations,
  builtinCatalogs,
  catalogSchema,
  catalogJsonSchema,
  type Catalog,
  type ToolRule,
  type Classifier,
  type CompiledCatalog,
  type CompileOptions,
  type CatalogChoice,
  type BuiltinCatalogName,
} from './classify/catalog/index.js';
export {
  failClosed,
  pathTarget,
  idTarget,
  tableTarget,
  type Classification,
  type CallClassifier,
  type CallContext,
} from './classify/classification.js';
export { classifyShellCommand, defaultShellTable, shellTableSchema, type ShellTable } from './classify/shell/index.js';
export { classifySql, type SqlDialect } from './classify/sql/index.js';
export { outcomeOf, failureReason, resultText, DEFAULT_FAILURE_MARKERS, type OutcomeOptions } from './guard/outcome.js';
export { mayAnswer } from './guard/may-answer.js';
export { detectClaims, type Claim } from './claims/detect.js';
export { compileClaimWords, ENGLISH_CLAIM_WORDS, type ClaimWords, type CompiledClaimWords } from './claims/words.js';
export { mayCall } from './guard/may-call.js';
export { AdapterConfigError } from './adapters/common.js';
export { refusalText } from './guard/refusal-text.js';
export {
  createSessionGuard,
  type SessionGuard,
  type SessionGuardOptions,
  type ToolCall,
  type Decision,
  type FinalAnswerDecision,
  type RecordResult,
  type RecordOptions,
  type SessionGuardWarning,
  UNKNOWN_TOOLS_AFTER,
} from './guard/session-guard.js';
export {
  SNAPSHOT_VERSION,
  READABLE_SNAPSHOT_VERSIONS,
  parsePersistedSnapshot,
  toPersistedSnapshot,
  persistedSnapshotSchema,
  type PersistedSnapshot,
} from './guard/snapshot.js';
export {
  createSafetyMetrics,
  createCounterHooks,
  METRIC_NAMES,
  SAFETY_COUNTERS,
  OTHER_TOOL_LABEL,
  type CounterDefinition,
  type CounterHooks,
  type CounterLabels,
  type CounterSink,
  type SafetyCounterKey,
  type SafetyHooks,
  type SafetyMetrics,
  type SafetyMetricsOptions,
  type CounterFamily,
  type CounterSample,
} from './telemetry/metrics.js';
export {
  createSessionStore,
  createMemoryStore,
  createSqliteStore,
  DEFAULT_IDLE_MS,
  type SessionStore,
  type SessionStoreOptions,
  type SnapshotStore,
  type SqliteStoreOptions,
} from './store/session-store.js';
export {
  createSharedSessionStore,
  createMemoryVersionedStore,
  createSqliteVersionedStore,
  firstSnapshotVersion,
  DEFAULT_SESSION_TTL_MS,
  type SharedSessionStore,
  type SharedSessionStoreOptions,
  type SharedSessionGuard,
  type Committed,
  type VersionedSnapshot,
  type VersionedSnapshotStore,
  type PrunableVersionedSnapshotStore,
  type CompareAndSetResult,
  type VersionedStoreOptions,
  type SqliteVersionedStoreOptions,
} from './store/shared-session-store.js';
export {
  createRedisSnapshotStore,
  DEFAULT_REDIS_KEY_PREFIX,
  type RedisSnapshotStoreOptions,
  type RedisClientLike,
} from './store/redis-store.js';
