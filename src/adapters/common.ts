/**
 * What the framework adapters share: where a tool's classification comes
 * from (a catalog, per-tool kinds, or a classifier), the configuration check
 * every adapter makes when it wraps tools (at least one must be able to
 * read), where a session's guard comes from, and the check and record of one
 * call that never lets a guard failure pass a call.
 *
 * The shape every adapter follows (a new SDK's adapter starts from it):
 *
 * - Options: one options type per entry point, extending
 *   `ClassificationOptions` (where a call's kind comes from) with a guard
 *   source (`guard` for one session, or `getGuard(key)` and a way to tell
 *   the key), all checked at setup.
 * - A tool gate around the SDK's tools or tool execution: `admitCall` before
 *   a call runs (a refusal becomes the SDK's tool result; a call the guard
 *   could not check never runs, `uncheckedText`), `recordCall` after it.
 * - An answer gate at the SDK's final-answer hook: `guard.finalAnswer()`,
 *   and a refused answer goes back to the model in words (`refusalText`) so
 *   the loop goes on.
 * - Errors: a configuration mistake is an `AdapterConfigError` naming the
 *   adapter, thrown at setup (`createToolClassifier`, `assertGuardSource`,
 *   `assertSomeToolReads`), or before a run for what only the run shows
 *   (an agent's tools); never in the middle of a tool call.
 *
 * The MCP adapter (`mcp/`) differs where the protocol does: its tools are
 * classified from their annotations (its `ToolBook` is a `ToolClassifier`),
 * it checks with a synchronous guard directly and answers what it cannot
 * decide with an `McpError`, and it has no answer gate (a proxy never sees
 * the answer: the answer state rides on each result instead).
 *
 * Spec: ASSISTANT_SAFETY.md "Tool kinds", "The invariants"; DESIGN.md §5.1
 * (a classified call is more than a kind), §5.7 (failures read from the result).
 */
import { isThenable } from '../util/thenable.js';
import type { ToolKind } from '../../machines/safety.types.js';
import { TOOL_KINDS } from '../../machines/safety.types.js';
import type { Decision, FinalAnswerDecision, SessionGuard, ToolCall } from '../guard/session-guard.js';
import { mayAnswer } from '../guard/may-answer.js';
import { mayCall } from '../guard/may-call.js';
import { createSessionGuard } from '../guard/session-guard.js';
import { failClosed, type CallClassifier, type Classification } from '../classify/classification.js';
import { compileCatalog, parseCatalog, type Catalog, type Classifier, type CompiledCatalog } from '../classify/catalog/index.js';
import type { FSMBlockedError } from '../errors/index.js';
import { outcomeOf, recoveryCodeOf } from '../guard/outcome.js';
import type { SharedSessionGuard } from '../store/shared-session-store.js';

/**
 * A session's gate as the adapters take it: a `SessionGuard` (one process,
 * synchronous: `createSessionGuard()`, `createSessionStore().session(key)`)
 * or a `SharedSessionGuard` (many processes, asynchronous:
 * `createSharedSessionStore().session(key)`, whose failures reject and so
 * refuse the call).
 */
export type AdapterGuard = SessionGuard | SharedSessionGuard;

/** A value, or a promise of it when the guard is asynchronous. */
export type MaybePromise<T> = T | Promise<T>;

/** True for a promise (or any thenable). */
export function isPromise<T>(value: MaybePromise<T>): value is Promise<T> {
  return isThenable(value);
}

/** `then` that stays synchronous for a plain value (so a synchronous guard decides before anything else runs). */
export function andThen<T, U>(value: MaybePromise<T>, next: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return isPromise(value) ? value.then(next) : next(value);
}

/**
 * A configuration mistake found when an adapter is set up (before any call
 * runs): no classification source, two guard sources, no tool that can ever
 * read, an unknown kind. `adapter` names the adapter (`ai-sdk`,
 * `openai-agents`, `langgraph`).
 */
export class AdapterConfigError extends TypeError {
  readonly adapter: string;

  constructor(adapter: string, message: string) {
    super(`pulse-safety-fsm/${adapter}: ${message}`);
    this.name = 'AdapterConfigError';
    this.adapter = adapter;
  }
}

/**
 * Where the kind of a tool call comes from. Give `catalog` or `classify`,
 * and/or `kinds`:
 *
 * - `catalog`: a catalog (format 2 JSON data, validated on setup: a bad one
 *   is a `CatalogError`) or a catalog compiled with `compileCatalog` (e.g.
 *   with MCP annotations). Tools it does not list are writes.
 * - `kinds`: a kind per tool name (`{ get_status: 'read', restart: 'write' }`);
 *   it wins over `catalog` and `classify` for the tools it names. Alone, every
 *   tool it does not name is a write.
 * - `classify`: a classifier `(name, args) => kind` or a full
 *   `CallClassifier` returning `{ kind, targets, destructive }`. What it
 *   throws or answers outside the vocabulary is a write.
 */
export interface ClassificationOptions {
  catalog?: Catalog | CompiledCatalog;
  kinds?: Readonly<Record<string, ToolKind>>;
  classify?: CallClassifier | Classifier;
}

/** The classification source of an adapter, resolved once at setup. Every method is total. */
export interface ToolClassifier {
  /** The full classification of a call (never throws; fails closed to a write). */
  classify(name: string, args: unknown): Classification;
  /**
   * Whether a call of the tool can ever be a `read` or `resolve`: its kind,
   * or for a catalog rule any case, pattern or fallback of it (a shell or
   * SQL tool can; trusted read-only annotations can). A classifier function
   * is asked about the tool with empty arguments `{}`.
   */
  mayRead(name: string): boolean;
  /** Failure markers of the tool's results beyond the defaults (a catalog's own). */
  failureMarkers(name: string): readonly string[];
  /** Whether the catalog marks the tool `selfVerifying` (DESIGN.md §5.8); false without a catalog. */
  isSelfVerifying(this: void, name: string): boolean;
  /**
   * The catalog's recoverable error codes (`recoveryCodes`, issue 28): a
   * failed result carrying one opens a pending recovery of its tool.
   * Undefined without a catalog: the guard's own `recoveryCodes` read the
   * result (`recordCall` gives it the result).
   */
  readonly recoveryCodes: readonly string[] | undefined;
}

const READS: readonly ToolKind[] = ['read', 'resolve'];

function isCompiled(catalog: unknown): catalog is CompiledCatalog {
  return typeof catalog === 'object' && catalog !== null && typeof (catalog as CompiledCatalog).classify === 'function';
}

/** Whether a raw catalog's rule for `name` can yield a read or resolve. */
function catalogMayRead(catalog: Catalog, name: string): boolean {
  const tool = name.trim();
  const entry = Object.entries(catalog.tools).find(([listed]) => listed.trim() === tool)?.[1];
  if (entry === undefined) return catalog.fallback !== undefined && catalog.fallback.readWords.length > 0;
  if (typeof entry === 'string') return READS.includes(entry);
  if (entry.kind !== undefined) return READS.includes(entry.kind);
  if (entry.argument !== undefined) {
    const kinds = [...Object.values(entry.cases ?? {}), ...Object.values(entry.patterns ?? {}), entry.fallback ?? 'write'];
    return kinds.some((kind) => READS.includes(kind));
  }
  if (entry.shell !== undefined || entry.sql !== undefined) return true;
  if (entry.annotations !== undefined) return entry.trusted === true && entry.annotations.readOnlyHint === true;
  return false;
}

/** A classifier's answer read totally: a kind, or a `Classification`; anything else fails closed. */
function readAnswer(answer: unknown): Classification {
  if (typeof answer === 'string') {
    return TOOL_KINDS.includes(answer as ToolKind)
      ? { kind: answer as ToolKind, targets: [], destructive: false }
      : failClosed(`the classifier answered ${JSON.stringify(answer).slice(0, 40)}`);
  }
  if (typeof answer !== 'object' || answer === null) return failClosed('the classifier gave no kind');
  const { kind, targets, destructive, reason, links, echoes } = answer as Partial<Record<keyof Classification, unknown>>;
  if (!TOOL_KINDS.includes(kind as ToolKind)) return failClosed('the classifier gave no kind');
  return {
    kind: kind as ToolKind,
    targets: Array.isArray(targets) ? targets.filter((t): t is string => typeof t === 'string') : [],
    destructive: kind === 'write' && destructive === true,
    ...(typeof reason === 'string' ? { reason } : {}),
    // Links the call makes (issue 24): kept as given; the guard checks them.
    ...(Array.isArray(links) ? { links: links.filter((l): l is string => typeof l === 'string') } : {}),
    ...(echoes === true ? { echoes: true } : {}),
  };
}

/**
 * Resolves an adapter's classification source (see `ClassificationOptions`).
 *
 * @throws AdapterConfigError when no source is given, when both `catalog`
 *   and `classify` are, or when `kinds` names a kind outside the vocabulary.
 * @throws CatalogError when a raw catalog does not validate.
 */
export function createToolClassifier(options: ClassificationOptions, adapter: string): ToolClassifier {
  const { catalog, kinds, classify } = options;
  if (catalog === undefined && kinds === undefined && classify === undefined) {
    throw new AdapterConfigError(
      adapter,
      'no classification source: give `catalog` (a catalog or compileCatalog(...)), `kinds` ({ tool: kind }) or `classify` ' +
        '(without one every tool would be a write, and every write refused forever)',
    );
  }
  if (catalog !== undefined && classify !== undefined) {
    throw new AdapterConfigError(adapter, 'give `catalog` or `classify`, not both (`kinds` may go with either)');
  }
  const kindOf = new Map<string, ToolKind>();
  for (const [name, kind] of Object.entries(kinds ?? {})) {
    if (!TOOL_KINDS.includes(kind)) {
      throw new AdapterConfigError(adapter, `kinds.${name}: ${JSON.stringify(kind)} is not one of ${TOOL_KINDS.join(', ')}`);
    }
    kindOf.set(name, kind);
  }
  const raw = catalog === undefined || isCompiled(catalog) ? undefined : parseCatalog(catalog);
  const compiled = catalog === undefined ? undefined : isCompiled(catalog) ? catalog : compileCatalog(raw);

  function base(name: string, args: unknown): Classification {
    if (compiled !== undefined) return compiled.classify(name, args);
    if (classify !== undefined) {
      try {
        return readAnswer((classify as (name: string, args?: unknown) => unknown)(name, args));
      } catch {
        return failClosed('the classifier threw');
      }
    }
    return failClosed(`'${name.slice(0, 64)}' has no kind in \`kinds\``);
  }

  function judge(name: string, args: unknown): Classification {
    const kind = kindOf.get(name);
    if (kind !== undefined) return { kind, targets: [], destructive: false };
    return base(name, args);
  }

  return {
    classify(name, args) {
      try {
        return judge(name, args);
      } catch {
        return failClosed('the call could not be classified');
      }
    },
    mayRead(name) {
      const kind = kindOf.get(name);
      if (kind !== undefined) return READS.includes(kind);
      if (raw !== undefined) return catalogMayRead(raw, name);
      try {
        return READS.includes(base(name, {}).kind);
      } catch {
        return false;
      }
    },
    failureMarkers: (name) => compiled?.failureMarkers(name) ?? [],
    isSelfVerifying: (name) => compiled?.isSelfVerifying(name) ?? false,
    recoveryCodes: compiled?.recoveryCodes,
  };
}

/**
 * The configuration check of every adapter (issue: a tool called
 * `get_reservation` judged a write by the default catalog refused every call
 * of a session, and nothing said why): at least one wrapped tool must be
 * able to read or resolve, or no write could ever be admitted.
 *
 * @throws AdapterConfigError naming each tool and its kind when none can.
 */
export function assertSomeToolReads(names: readonly string[], classifier: ToolClassifier, adapter: string): void {
  if (names.length === 0) {
    throw new AdapterConfigError(adapter, 'no tools to gate');
  }
  if (names.some((name) => classifier.mayRead(name))) return;
  const listed = names
    .slice(0, 10)
    .map((name) => `'${name}' (${classifier.classify(name, {}).kind})`)
    .join(', ');
  throw new AdapterConfigError(
    adapter,
    `no tool can read or resolve: ${listed}${names.length > 10 ? ', ...' : ''}. Every write would be refused forever ` +
      '(nothing could establish a target or verify a change). Give the read tools their kind in `kinds` or the catalog',
  );
}

/**
 * Exactly one of a fixed `guard` or a `getGuard(sessionKey)` (e.g.
 * `(key) => sessions.session(key)` over `createSessionStore`).
 *
 * @throws AdapterConfigError when neither or both are given, or one is not what it should be.
 */
export function assertGuardSource(options: { guard?: unknown; getGuard?: unknown }, adapter: string): void {
  const hasGuard = options.guard !== undefined;
  const hasGetter = options.getGuard !== undefined;
  if (hasGuard === hasGetter) {
    throw new AdapterConfigError(
      adapter,
      hasGuard
        ? 'give `guard` or `getGuard`, not both'
        : 'no guard: give `guard` (one session) or `getGuard(sessionKey)` (a session store)',
    );
  }
  if (hasGuard && typeof (options.guard as SessionGuard).check !== 'function') {
    throw new AdapterConfigError(
      adapter,
      '`guard` must be a session guard (createSessionGuard(), or sessions.session(key) of a session store)',
    );
  }
  if (hasGetter && typeof options.getGuard !== 'function') {
    throw new AdapterConfigError(adapter, '`getGuard` must be a function (sessionKey: string) => SessionGuard');
  }
}

/** The call as the guard is given it: the framework's id and arguments, and the whole classification (issue 26). */
function toolCallOf(id: string | undefined, name: string, args: unknown, classification: Classification): ToolCall {
  return {
    ...(id === undefined || id === '' ? {} : { id }),
    name,
    args,
    kind: classification.kind,
    targets: classification.targets,
    destructive: classification.destructive,
    echoes: classification.echoes === true,
    ...(classification.links === undefined ? {} : { links: classification.links }),
  };
}

/** The gate's answer on one call, as adapters use it. */
export type CallAdmission =
  | { allowed: true; call: ToolCall }
  | { allowed: false; error: FSMBlockedError }
  /** The guard threw (a duplicate id in flight, a store that cannot save): the call must not run. */
  | { allowed: false; error: null; failure: unknown };

/** One call for `admitCall`: the call as the framework gives it, and the guard and classification source that judge it. */
export interface CallToAdmit {
  guard: AdapterGuard;
  classifier: ToolClassifier;
  /** The framework's call id (an empty or missing id counts as none). */
  id: string | undefined;
  name: string;
  args: unknown;
}

/**
 * Checks one call: classifies it with the adapter's source and asks the
 * guard, passing kind, targets and destructive flag. Never throws or
 * rejects: a guard that throws (or rejects) refuses the call (`failure`),
 * and the call is not tracked. Synchronous with a `SessionGuard` (the check
 * is made before this returns); a promise with a `SharedSessionGuard`.
 */
export function admitCall(request: CallToAdmit): MaybePromise<CallAdmission> {
  const { guard, classifier, id, name, args } = request;
  const refused = (failure: unknown): CallAdmission => ({ allowed: false, error: null, failure });
  try {
    const call = toolCallOf(id, name, args, classifier.classify(name, args));
    const admission = (decision: Decision): CallAdmission =>
      decision.allowed ? { allowed: true, call } : { allowed: false, error: decision.error };
    const decision: MaybePromise<Decision> = guard.check(call);
    return isPromise(decision) ? decision.then(admission, refused) : admission(decision);
  } catch (failure) {
    return refused(failure);
  }
}

/**
 * The calls an adapter admitted and has not recorded yet, each with the
 * whole classification it was checked with (`CallAdmission.call`), keyed by
 * the framework's call id: for adapters whose check and record happen in
 * different callbacks, so the record books exactly what was checked
 * (issue 26: a record classified again could let a shell's own output
 * verify its write).
 */
export class InFlightCalls {
  private readonly calls = new Map<string, ToolCall>();

  /** Keeps an admitted call under `key` until `take`; a second call under the same key replaces it. */
  hold(key: string, call: ToolCall): void {
    this.calls.set(key, call);
  }

  /** The call held under `key`, removed; undefined when none is. */
  take(key: string): ToolCall | undefined {
    const call = this.calls.get(key);
    this.calls.delete(key);
    return call;
  }

  /** The call held under `key`, kept; undefined when none is. */
  peek(key: string): ToolCall | undefined {
    return this.calls.get(key);
  }

  /** How many calls are held. */
  get size(): number {
    return this.calls.size;
  }
}

/** Options of `recordCall`. */
export interface RecordCallOptions {
  /**
   * A failed write is recorded as possibly applied (`RecordOptions.possiblyApplied`):
   * the next write needs a read first, whatever the guard's own setting. Default
   * true in every adapter (issue 26): a call that threw, timed out or was
   * cancelled may have run (DESIGN.md §3.8).
   */
  strictFailedWrites?: boolean;
}

/** A call's outcome as an adapter saw it. */
export type CallOutcome =
  | { threw: true }
  | {
      threw: false;
      /** The tool's result as the framework returned it. */
      result: unknown;
      /** The tool's output to read for self-verification, when not `result` itself (given as undefined: none). */
      content?: unknown;
      /** The runner says the call failed (the framework's error status, an exit code the runner reports). */
      failed?: boolean;
    };

/**
 * The verdict on an admitted call's outcome. A throw, or a failure the
 * runner reports (`failed`), is an error. Otherwise the result is read
 * (`outcomeOf`, with the catalog's failure markers), except for a write
 * whose output its arguments choose (`call.echoes`: a shell's stdout),
 * where only the result's own envelope counts (`envelopeOnly`): the command
 * could print a failure it did not have. A read's text is still read: a
 * failure there only withholds evidence.
 */
export function verdictOf(classifier: ToolClassifier, call: ToolCall, outcome: CallOutcome): 'success' | 'error' {
  if (outcome.threw || outcome.failed === true) return 'error';
  if (call.echoes === true && call.kind === 'write') return outcomeOf(outcome.result, { envelopeOnly: true });
  return outcomeOf(outcome.result, { failureMarkers: classifier.failureMarkers(call.name) });
}

/**
 * Records an admitted call's outcome (`verdictOf`) with the whole
 * classification it was checked with (`call` as `admitCall` gave it: kind,
 * targets, destructive flag, links, echoes), so the guard never classifies
 * it again. The tool's output (`content`, default the result) goes along so
 * a self-verifying write verifies itself (DESIGN.md §1, §5.8), unless the
 * call's arguments chose it (`echoes`). A failure is recorded as possibly
 * applied unless `options.strictFailedWrites` is false, with its result and
 * arguments: the recoverable error code the result raised (issue 28: the
 * catalog's `recoveryCodes`, else the guard's) opens a pending recovery,
 * and the arguments give its `action` to telemetry.
 */
// eslint-disable-next-line max-params -- the four of every adapter's record, plus the adapter's one option
export function recordCall(
  guard: AdapterGuard,
  classifier: ToolClassifier,
  call: ToolCall,
  outcome: CallOutcome,
  options: RecordCallOptions = {},
): MaybePromise<'success' | 'error'> {
  const verdict = verdictOf(classifier, call, outcome);
  const { args: _args, ...classified } = call;
  if (verdict === 'error') {
    const possiblyApplied = options.strictFailedWrites !== false;
    const result = outcome.threw ? undefined : outcome.result;
    const codes = classifier.recoveryCodes;
    // The catalog's codes decide when there is a catalog; otherwise the guard reads the result against its own.
    const errorCode = codes === undefined ? undefined : recoveryCodeOf(result, codes);
    const failedCall = call.args === undefined ? classified : { ...classified, args: call.args };
    return andThen(guard.record(failedCall, 'error', { possiblyApplied, result, errorCode }), () => verdict);
  }
  const content = outcome.threw ? undefined : 'content' in outcome ? outcome.content : outcome.result;
  return andThen(guard.record(classified, 'success', { result: content }), () => verdict);
}

/**
 * Records a call that was admitted but never ran (a human rejected it, the
 * run was abandoned before it started): a failure that did not apply, so
 * the session leaves no write in flight and needs no verification for it,
 * nor remembers it as a failed write (`neverRan`, issue 28).
 */
export function recordRejected(guard: AdapterGuard, call: ToolCall): MaybePromise<void> {
  const { args: _args, ...classified } = call;
  return andThen(guard.record(classified, 'error', { possiblyApplied: false, neverRan: true }), () => undefined);
}

/** The tool call a human's approval is recorded as: a `user_input` (ASSISTANT_SAFETY.md "Tool kinds"). */
export const APPROVAL_CALL_NAME = 'user_approval';

/**
 * Records that a human approved a call: the approval is the user's
 * confirmation (a `user_input`), which is what `confirmDestructive` asks
 * of a destructive write and what an unknown place (`?/…`) asks of a write
 * naming it (DESIGN.md §5.6; issue 24). Call it when the approval is given,
 * right before the approved call's `admitCall`: the confirmation clears
 * one write, the next. Never rejects because of the call; rejects (or
 * throws) only what the guard does (a store that cannot commit).
 */
export function recordApproval(guard: AdapterGuard): MaybePromise<void> {
  const approval: ToolCall = { name: APPROVAL_CALL_NAME, kind: 'user_input' };
  return andThen(guard.check(approval), () => andThen(guard.record(approval, 'success'), () => undefined));
}

/** A call to ask about with `previewCall`. */
export interface CallToPreview {
  guard: AdapterGuard;
  classifier: ToolClassifier;
  name: string;
  args: unknown;
}

/**
 * Would this call be allowed now? `check`'s decision on the call as the
 * adapter classifies it, with no side effect on the session (`mayCall`):
 * for the moment before a human is asked to approve it, so nobody approves
 * a call the gate will refuse (issue 26). On a `SharedSessionGuard`, the
 * session as stored now (a promise). Never throws: a guard or store that
 * fails refuses (`failure`), as `admitCall`.
 */
export function previewCall(request: CallToPreview): MaybePromise<CallAdmission> {
  const { guard, classifier, name, args } = request;
  const refused = (failure: unknown): CallAdmission => ({ allowed: false, error: null, failure });
  try {
    const classification = classifier.classify(name, args);
    const call = toolCallOf(undefined, name, args, classification);
    const decide = (session: Pick<SessionGuard, 'actor'>): CallAdmission => {
      const decision = mayCall(session, { ...call, kind: classification.kind });
      return decision.allowed ? { allowed: true, call } : { allowed: false, error: decision.error };
    };
    if ('actor' in guard) return decide(guard);
    return guard.getPersistedSnapshot().then((snapshot) => decide(createSessionGuard({ snapshot })), refused);
  } catch (failure) {
    return refused(failure);
  }
}

/**
 * What `finalAnswer(text)` would decide now, with no side effect: `mayAnswer`
 * on a `SessionGuard`; on a `SharedSessionGuard`, `mayAnswer` on the session
 * as stored now (a promise), the claims of `text` checked (the store's
 * `phantomClaims` is not known here). For a stream that must not show an
 * answer before the counted decision is made.
 */
export function peekAnswer(guard: AdapterGuard, text?: string): MaybePromise<FinalAnswerDecision> {
  if ('actor' in guard) return mayAnswer(guard, text);
  // A shared session's guard options are its store's: the claims are checked as by default.
  return guard.getPersistedSnapshot().then((snapshot) => mayAnswer(createSessionGuard({ snapshot }), text));
}

/** The words given to the model for a call the guard could not check (`CallAdmission.failure`). */
export function uncheckedText(name: string, failure: unknown): string {
  const reason = failure instanceof Error ? failure.message : String(failure);
  return `The call to '${name}' was not run: the safety gate could not check it (${reason.slice(0, 300)}).`;
}

/** True when a value is `FSMBlockedError.toToolResult()`'s shape (a refusal), also after a JSON round trip. */
export function isBlockedToolResult(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const error = (value as { ok?: unknown; error?: unknown }).error;
  return (
    (value as { ok?: unknown }).ok === false &&
    typeof error === 'object' &&
    error !== null &&
    (error as { code?: unknown }).code === 'FSM_BLOCKED' &&
    (error as { blocked?: unknown }).blocked === true
  );
}
