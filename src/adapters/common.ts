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
import { createSessionGuard } from '../guard/session-guard.js';
import { failClosed, type CallClassifier, type Classification } from '../classify/classification.js';
import { compileCatalog, parseCatalog, type Catalog, type Classifier, type CompiledCatalog } from '../classify/catalog/index.js';
import type { FSMBlockedError } from '../errors/index.js';
import { outcomeOf } from '../guard/outcome.js';
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
  const { kind, targets, destructive, reason, links } = answer as Partial<Record<keyof Classification, unknown>>;
  if (!TOOL_KINDS.includes(kind as ToolKind)) return failClosed('the classifier gave no kind');
  return {
    kind: kind as ToolKind,
    targets: Array.isArray(targets) ? targets.filter((t): t is string => typeof t === 'string') : [],
    destructive: kind === 'write' && destructive === true,
    ...(typeof reason === 'string' ? { reason } : {}),
    // Links the call makes (issue 24): kept as given; the guard checks them.
    ...(Array.isArray(links) ? { links: links.filter((l): l is string => typeof l === 'string') } : {}),
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
    const classification = classifier.classify(name, args);
    const call: ToolCall = {
      ...(id === undefined || id === '' ? {} : { id }),
      name,
      args,
      kind: classification.kind,
      targets: classification.targets,
      destructive: classification.destructive,
      ...(classification.links === undefined ? {} : { links: classification.links }),
    };
    const admission = (decision: Decision): CallAdmission =>
      decision.allowed ? { allowed: true, call } : { allowed: false, error: decision.error };
    const decision: MaybePromise<Decision> = guard.check(call);
    return isPromise(decision) ? decision.then(admission, refused) : admission(decision);
  } catch (failure) {
    return refused(failure);
  }
}

/**
 * Records an admitted call's outcome: `'error'` when it threw, else what its
 * result says (`outcomeOf`, with the catalog's failure markers). The tool's
 * output (`content`, default the result) goes along so a self-verifying
 * write verifies itself (DESIGN.md §1, §5.8). A call with an id is settled by
 * its id alone; without one, kind and targets say which it is.
 */
export function recordCall(
  guard: AdapterGuard,
  classifier: ToolClassifier,
  call: ToolCall,
  outcome: { threw: true } | { threw: false; result: unknown; content?: unknown },
): MaybePromise<'success' | 'error'> {
  const verdict = outcome.threw ? 'error' : outcomeOf(outcome.result, { failureMarkers: classifier.failureMarkers(call.name) });
  const { args: _args, ...rest } = call;
  const keyed: ToolCall = call.id === undefined ? rest : { id: call.id, name: call.name };
  const content = outcome.threw ? undefined : 'content' in outcome ? outcome.content : outcome.result;
  return andThen(guard.record(keyed, verdict, outcome.threw ? undefined : { result: content }), () => verdict);
}

/**
 * What `finalAnswer()` would decide now, with no side effect: `mayAnswer`
 * on a `SessionGuard`; on a `SharedSessionGuard`, `mayAnswer` on the session
 * as stored now (a promise). For a stream that must not show an answer
 * before the counted decision is made.
 */
export function peekAnswer(guard: AdapterGuard): MaybePromise<FinalAnswerDecision> {
  if ('actor' in guard) return mayAnswer(guard);
  return guard.getPersistedSnapshot().then((snapshot) => mayAnswer(createSessionGuard({ snapshot })));
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
