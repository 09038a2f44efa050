/**
 * The thin adapter an agent loop calls: check a tool call before it runs,
 * record its outcome after, ask before the final answer. Each guard holds
 * its session as the safety machine's state and context, and runs every
 * event through the compiled interpreter of the machine (src/interpreter/);
 * a real XState actor is created only when `guard.actor` is asked for.
 * What a caller gives it (tool-call.ts), what it answers (decision.ts) and
 * its options (session-guard-options.ts) are defined beside it, and the
 * public ones exported from here too.
 *
 * Spec: ASSISTANT_SAFETY.md (whole); DESIGN.md §3 (correlation by call id,
 * auto-completed verification, strict failed writes, time as an input), §1
 * and §5 (targets, destructive writes, self-verifying writes).
 */
import { createActor, type Actor } from 'xstate';
import { isCallIdInFlight, safetyMachine, toolEventOf, type SafetyMachine } from '../../machines/safety.machine.js';
import { hasWriteInFlight } from '../../machines/safety.events.js';
import type {
  AnswerRequestedEvent,
  GateDecidedEvent,
  RecoverySucceededEvent,
  SafetyContext,
  SafetyEmitted,
  SafetyEvent,
  SafetyState,
  ToolKind,
} from '../../machines/safety.types.js';
import { TOOL_KINDS } from '../../machines/safety.types.js';
import { MAX_TIME_MS, RECOVERY_TTL_MS } from '../../machines/safety.policy.js';
import { unknownPlace } from '../../machines/safety.targets.js';
import { assertKnownKeys } from '../util/known-keys.js';
import type { Classification } from '../classify/classification.js';
import { classifyCall, pulseRecoveryCodes } from '../classify/catalog/index.js';
import { detectClaims } from '../claims/detect.js';
import { SessionGuardError } from '../errors/index.js';
import { safetyInterpreter, type InterpreterState, type MutableInterpreterState } from '../interpreter/index.js';
import { blockedError, type Decision, type FinalAnswerDecision, type RecordResult } from './decision.js';
import { selfVerifies } from './self-verify.js';
import { recoveryCodeOf } from './outcome.js';
import { validateSessionGuardOptions, type RaisedRecovery, type SessionGuardOptions } from './session-guard-options.js';
import { emitProcessWarning, UnknownToolsWatch, type SessionGuardWarning } from './unknown-tools.js';
import { writeKeyOf } from './write-key.js';
import { parsePersistedSnapshot, toPersistedSnapshot, type PersistedSnapshot } from './snapshot.js';
import { validCall, type RecordOptions, type ToolCall } from './tool-call.js';
import { deepFreeze } from '../util/deep-freeze.js';

// The guard's surface: what a caller gives it and what it answers, defined beside it and exported from here too.
export { refusalOf, type Decision, type FinalAnswerDecision, type RecordResult } from './decision.js';
export { type RaisedRecovery, type SessionGuardOptions } from './session-guard-options.js';
export { UNKNOWN_TOOLS_AFTER, type SessionGuardWarning } from './unknown-tools.js';
export { type RecordOptions, type ToolCall } from './tool-call.js';

/**
 * The safety gate of one chat session.
 *
 * Every method throws `SessionGuardError` (src/errors/) without touching the
 * session when called from one of the guard's own telemetry hooks
 * (`GUARD_REENTRANT`), or once the actor is stopped or failed, e.g. after
 * `guard.actor.stop()` (`GUARD_STOPPED`): never a silent no-op.
 */
export interface SessionGuard {
  /** The current state. */
  readonly state: SafetyState;
  /** Whether `finalAnswer(text)` checks the answer's claims of a change (`SessionGuardOptions.phantomClaims`). */
  readonly phantomClaims: boolean;
  /** A frozen copy of the machine context; pending recoveries past their TTL at `now()` are left out. */
  readonly context: Readonly<SafetyContext>;
  /**
   * The session's XState actor (started), for live inspection and embedding:
   * created on first use from the current state and context
   * (`safetyMachine.resolveState`); from then on it drives the session (the
   * guard sends every event to it and reads the session from its snapshot),
   * so events sent to it directly change the guard's session too. Until then
   * the guard runs the compiled interpreter and no actor exists.
   */
  readonly actor: Actor<SafetyMachine>;
  /**
   * Decides whether a tool call may run (ASSISTANT_SAFETY.md "The
   * invariants"). Only writes are ever refused. An admitted call is tracked
   * until `record`.
   * @throws TypeError when `call` is not an object with a string `name`, or the clock is not a number within ±`MAX_TIME_MS`.
   * @throws TypeError `check: call id '<id>' is already in flight ...` when a call checked under the same
   *   (non-empty) id has no recorded outcome yet: its record could not tell the two apart, so the second
   *   call is not checked at all and the session is left untouched (no decision, nothing tracked). Record
   *   the first call's outcome, or give the new call its own id.
   */
  check(call: ToolCall): Decision;
  /**
   * Records a call's real outcome; default `'success'`. Works without a prior
   * `check` (the original's OnToolSuccess style). It settles the admitted
   * call of its id, or without an id a call of its tool checked without one,
   * the admitted kind applying. When several calls in flight share that key,
   * the record's own `kind`, or else its `args` classified, picks among them;
   * otherwise the worst case is assumed: a success is a write's among them,
   * a failure is never a write's (DESIGN.md §3.4). Give the record the
   * call's `args` (or `kind`) when a tool's calls run in parallel without ids.
   *
   * A success whose `options.result` says `verification.ok === true`, or of a
   * `selfVerifying` tool, verifies itself when it applies as a write
   * (DESIGN.md §1, §5.8): a read named `self_verify` is recorded and
   * verification completes at once (whatever `autoCompleteVerification` says).
   *
   * A failure (issue 28) whose result raised a recoverable code (`options.errorCode`,
   * else its `options.result` read against `recoveryCodes`) opens a pending
   * recovery of its tool for that code (`raised`). A failed write, unless
   * `options.neverRan`, is remembered: the same write (same tool and
   * arguments, `writeKeyOf`) is refused (`repeated-write`) until a
   * successful resolve or read touches its target.
   * @throws TypeError on a malformed call, an outcome other than `'success'` / `'error'`,
   *   or `options` that is not an object, has a key it does not know (`possibleApplied`), or fields of the wrong types.
   */
  record(call: ToolCall, outcome?: 'success' | 'error', options?: RecordOptions): RecordResult;
  /**
   * Decides whether the assistant may give its final answer (CanFinalAnswer).
   * Given the answer's `text`, and unless the guard's `phantomClaims` is
   * false, its claims of a change (src/claims/, `detectClaims`) go with the
   * request: a claim no recorded write supports refuses the answer, rule
   * `phantom-claim` (issue 28 item 2). Without `text` no claim is checked,
   * only the spec's rules.
   * @throws TypeError when `text` is given and is not a string.
   */
  finalAnswer(text?: string): FinalAnswerDecision;
  /** CompleteVerification: VERIFYING with read-after-write returns to READING. True when it did. */
  completeVerification(): boolean;
  /** Reset: RESOLVING, all tracking cleared. */
  reset(): void;
  /** ResetKeepProgress: verification tracking dropped, target kept. */
  resetKeepProgress(): void;
  /**
   * Time passed: sends `clock.ticked` at `now()`, so pending recoveries more
   * than `RECOVERY_TTL_MS` past their latest block leave the session
   * (ASSISTANT_SAFETY.md "Blocked calls and recovery"; DESIGN.md §3.5).
   * Decisions never need it (an expired recovery stops counting by itself);
   * it frees them, e.g. before persisting, and replays a transcript's clock
   * step on the fast path (no XState actor is created).
   * @throws TypeError when the clock is not a number within ±`MAX_TIME_MS`.
   */
  tick(): void;
  /**
   * The session as compact plain JSON with a schema version (`PersistedSnapshot`,
   * src/guard/snapshot.ts), for `createSessionGuard({ snapshot })`.
   */
  getPersistedSnapshot(): PersistedSnapshot;
}

/** Calls a predicate on a tool name; false when it throws or answers anything but true. */
function holds(predicate: ((name: string) => boolean) | undefined, name: string): boolean {
  if (predicate === undefined) return false;
  try {
    return predicate(name) === true;
  } catch {
    return false;
  }
}

/** A call's classification as the guard sends it: the kind, targets and flag, and whether the call states them (`classificationOf`). */
interface CallClassification {
  readonly kind: ToolKind;
  readonly targets: string[];
  readonly destructive: boolean;
  /** Links the call creates that lead out of their directory (`Classification.links`); empty when none. */
  readonly links: readonly string[];
  readonly stated: boolean;
  /** The result is output the call's arguments choose (`Classification.echoes`): never its own verification. */
  readonly echoes: boolean;
}

/**
 * What a classifier answered, read totally: a kind (a kind-only
 * classifier), or a `Classification` object (a full one). Anything else, or
 * a field that cannot be read, fails closed: a write, no targets, not destructive.
 */
function readClassification(answer: unknown): { kind: unknown; targets: string[]; destructive: boolean; echoes: boolean; links: string[] } {
  if (typeof answer !== 'object' || answer === null) return { kind: answer, targets: [], destructive: false, echoes: false, links: [] };
  try {
    const { kind, targets, destructive, echoes, links } = answer as Partial<Record<keyof Classification, unknown>>;
    const list = Array.isArray(targets) ? (targets as unknown[]).filter((t): t is string => typeof t === 'string') : [];
    // Links fail closed: anything but an array of strings where links are given is every path (the machine reads `/`, `~`, `.`).
    const linkList =
      links === undefined
        ? []
        : Array.isArray(links) && links.every((t) => typeof t === 'string')
          ? (links as string[]).slice()
          : ['/', '~', '.'];
    return { kind, targets: list, destructive: destructive === true, echoes: echoes === true, links: linkList };
  } catch {
    return { kind: undefined, targets: [], destructive: false, echoes: false, links: [] };
  }
}

/** The options `record` takes (`RecordOptions`); any other key is refused. */
const RECORD_OPTIONS: readonly string[] = ['result', 'possiblyApplied', 'errorCode', 'neverRan'];

/**
 * A guard's session, read without a copy: its state and context as they are
 * now (the actor's, once `guard.actor` was created). Null for an object that
 * is not a guard made by `createSessionGuard`. Internal: for modules of this
 * library that must read a session without forcing its actor into existence
 * or copying its context (`mayAnswer`); the context must not be changed.
 */
export function sessionStateOf(guard: unknown): InterpreterState<SafetyContext> | null {
  return guard instanceof Guard ? guard.current() : null;
}

/**
 * The `action` of a call's arguments, for telemetry (`RaisedRecovery`): its
 * `action`, else its `operation`, when a string (arguments given as a JSON
 * string are parsed); else null. Never throws.
 */
function actionOf(args: unknown): string | null {
  try {
    const object: unknown = typeof args === 'string' ? JSON.parse(args) : args;
    if (typeof object !== 'object' || object === null) return null;
    const { action, operation } = object as { action?: unknown; operation?: unknown };
    return typeof action === 'string' ? action : typeof operation === 'string' ? operation : null;
  } catch {
    return null;
  }
}

/** The last event of `type` a step emitted, if any. */
function lastEmitted<T extends SafetyEmitted['type']>(
  emitted: readonly SafetyEmitted[],
  type: T,
): Extract<SafetyEmitted, { type: T }> | undefined {
  for (let i = emitted.length - 1; i >= 0; i--) if (emitted[i]!.type === type) return emitted[i] as Extract<SafetyEmitted, { type: T }>;
  return undefined;
}

/**
 * The guard. Decisions run through the compiled interpreter of the safety
 * machine (src/interpreter/) on a plain `{ value, context }` state: no
 * actor, no snapshot object, no listener per session. `actor` creates a real
 * XState actor on first use, from the current state
 * (`safetyMachine.resolveState`), and from then on the actor is the driver:
 * every event goes to it and the session is read from its snapshot, so
 * whatever else sends it events (an inspector, a parent machine, code holding
 * the actor) and the guard see one session, as before the interpreter. A
 * class, so a live session holds its fields and no closure per method.
 */
class Guard implements ReplayGuard {
  private readonly now: () => number;
  private readonly classify: (name: string, args?: unknown) => ToolKind | Classification;
  private readonly onDecision: ((decision: GateDecidedEvent) => void) | undefined;
  private readonly onRecovery: ((event: RecoverySucceededEvent) => void) | undefined;
  private readonly onRecoveryRaised: ((event: RaisedRecovery) => void) | undefined;
  /** The recoverable codes a failed result is read for (issue 28). */
  private readonly recoveryCodes: readonly string[];
  private readonly selfVerifying: ((name: string) => boolean) | undefined;
  private readonly onWarning: (warning: SessionGuardWarning) => void;
  /** The unknown-tools warning's watch (unknown-tools.ts): made on the first classified call, dropped (null) once done. */
  private unknownTools: UnknownToolsWatch | null | undefined;
  readonly phantomClaims: boolean;
  /**
   * The session while no actor exists, the guard's own (the interpreter
   * steps it in place: nothing else holds its context); null once the actor drives.
   */
  private session: MutableInterpreterState<SafetyContext> | null;
  /** Set when a step threw (a bug in an action): the session may be part-way through it, so every method refuses. */
  private failure: { error: unknown } | null = null;
  private live: Actor<SafetyMachine> | null = null;
  /** What the actor emitted during the current send, in order (set by its listeners). */
  private heard: SafetyEmitted[] | null = null;
  /** True while a telemetry hook runs: the guard then refuses every call (`GUARD_REENTRANT`). */
  private reporting = false;
  /**
   * The classification of the call last admitted, until its record (`classificationOf`): a
   * record of that call (its id, name and args object, no kind, targets or flag given) is
   * not classified again.
   */
  private checked: { id: string; name: string; args: unknown; classification: CallClassification } | null = null;

  constructor(options: SessionGuardOptions) {
    this.now = options.now ?? Date.now;
    this.classify = options.classify ?? classifyCall;
    // Not `options` itself: the guard must not keep the snapshot it was given.
    this.onDecision = options.onDecision;
    this.onRecovery = options.onRecovery;
    this.onRecoveryRaised = options.onRecoveryRaised;
    this.recoveryCodes = options.recoveryCodes === undefined ? pulseRecoveryCodes() : [...options.recoveryCodes];
    this.selfVerifying = options.selfVerifying;
    this.onWarning = options.onWarning ?? emitProcessWarning;
    this.phantomClaims = options.phantomClaims !== false;
    if (options.snapshot === undefined) {
      const { value, context } = safetyInterpreter.initial({
        strictFailedWrites: options.strictFailedWrites === true,
        confirmDestructive: options.confirmDestructive === true,
        autoCompleteVerification: options.autoCompleteVerification !== false,
      });
      this.session = { value, context };
    } else {
      const restored = parsePersistedSnapshot(options.snapshot);
      if (options.strictFailedWrites === true) restored.context.strictFailedWrites = true;
      if (options.confirmDestructive === true) restored.context.confirmDestructive = true;
      // The context keeps the setting only when false (absent means true, as `initialSafetyContext`).
      if (options.autoCompleteVerification === false) restored.context.autoCompleteVerification = false;
      else if (options.autoCompleteVerification === true) delete restored.context.autoCompleteVerification;
      this.session = { value: restored.state, context: restored.context };
    }
  }

  /** The session now, without a copy. */
  current(): InterpreterState<SafetyContext> {
    if (this.session !== null) return this.session;
    const snapshot = this.live!.getSnapshot();
    return { value: snapshot.value, context: snapshot.context };
  }

  get state(): SafetyState {
    return this.current().value as SafetyState;
  }

  get context(): Readonly<SafetyContext> {
    const context = structuredClone(this.current().context);
    const at = this.now();
    for (const [id, recovery] of Object.entries(context.pendingRecoveries)) {
      if (at - recovery.lastBlockedAt > RECOVERY_TTL_MS) delete context.pendingRecoveries[id];
    }
    return deepFreeze(context);
  }

  get actor(): Actor<SafetyMachine> {
    // A hook that could reach the actor could send it events: hooks observe, they never decide.
    if (this.reporting) {
      throw new SessionGuardError(
        'GUARD_REENTRANT',
        'actor: read from a telemetry hook (onDecision or onRecovery) of the same guard; hooks observe a final decision, they cannot send the session events',
      );
    }
    if (this.live !== null) return this.live;
    const { value, context } = this.session!;
    const actor = createActor(safetyMachine, { snapshot: safetyMachine.resolveState({ value, context }) });
    actor.on('gate.decided', (event) => {
      if (this.heard !== null) this.heard.push(event);
    });
    actor.on('recovery.succeeded', (event) => {
      if (this.heard !== null) this.heard.push(event);
    });
    actor.on('recovery.raised', (event) => {
      if (this.heard !== null) this.heard.push(event);
    });
    actor.start();
    this.live = actor;
    this.session = null;
    return actor;
  }

  private clock(): number {
    const at = this.now();
    if (typeof at !== 'number' || !(Math.abs(at) <= MAX_TIME_MS)) {
      throw new TypeError(`the guard's clock returned ${String(at)}, not an epoch-millisecond number within ±${MAX_TIME_MS}`);
    }
    return at;
  }

  /**
   * The call's classification, and whether it is stated. A call with a
   * `kind` is not classified (the spec's API): its targets and destructive
   * flag are those given, or none. Otherwise the classifier gives the kind,
   * and the targets and flag not given. The classifier's reading of a bare
   * name, and any fail-closed `write` (unknown kind, classifier that throws
   * or answers outside the vocabulary), state nothing about which call it is.
   */
  private classificationOf(call: ToolCall, requested: boolean): CallClassification {
    const checked = this.checked;
    this.checked = null;
    if (call.kind !== undefined) {
      const known = TOOL_KINDS.includes(call.kind);
      // Stated by the host's own code, result included (it knows better than the classifier, README).
      return {
        kind: known ? call.kind : 'write',
        targets: call.targets ?? [],
        destructive: call.destructive === true,
        links: call.links ?? [],
        stated: known,
        echoes: call.echoes === true,
      };
    }
    const plain = call.targets === undefined && call.destructive === undefined && call.links === undefined && call.echoes === undefined;
    // The record of the call just checked, as it was checked: classified once (a classifier is a function of name and args).
    if (!requested && plain && checked !== null && checked.id === call.id && checked.name === call.name && checked.args === call.args) {
      return checked.classification;
    }
    const classification = this.classified(call);
    if (requested && plain && call.id !== undefined) this.checked = { id: call.id, name: call.name, args: call.args, classification };
    return classification;
  }

  /** `classificationOf` for a call without a given kind: what the classifier answers, read totally. */
  private classified(call: ToolCall): CallClassification {
    let classified: ReturnType<typeof readClassification>;
    try {
      classified = readClassification(this.classify(call.name, call.args));
    } catch {
      // A classifier that throws fails closed: a write on a place nobody named, its result trusted for nothing.
      classified = { kind: undefined, targets: [unknownPlace('<classifier threw>')], destructive: false, echoes: true, links: [] };
    }
    if (this.unknownTools !== null) {
      const watch = (this.unknownTools ??= new UnknownToolsWatch(this.classify));
      const warning = watch.observe(call.name, call.id);
      if (watch.done) this.unknownTools = null;
      if (warning !== null) this.report(this.onWarning, warning);
    }
    const known = TOOL_KINDS.includes(classified.kind as ToolKind);
    // A kind the classifier did not give is a write; one naming no target is on a place nobody named.
    const targets = call.targets ?? (known || classified.targets.length > 0 ? classified.targets : [unknownPlace('<no kind>')]);
    const destructive = call.destructive ?? classified.destructive;
    const links = call.links ?? classified.links;
    const echoes = call.echoes ?? classified.echoes;
    return known
      ? { kind: classified.kind as ToolKind, targets, destructive, links, stated: call.args !== undefined, echoes }
      : { kind: 'write', targets, destructive, links, stated: false, echoes };
  }

  /**
   * Every method's first step: refuses a call from a telemetry hook, and any
   * call once the actor is stopped or failed (then the session cannot go on,
   * and a silent no-op would look like success).
   * @throws SessionGuardError `GUARD_REENTRANT` or `GUARD_STOPPED`.
   */
  private enter(method: string): void {
    if (this.reporting) {
      throw new SessionGuardError(
        'GUARD_REENTRANT',
        `${method}: called from a telemetry hook (onDecision or onRecovery) of the same guard; hooks observe a final decision, they cannot make another one`,
      );
    }
    if (this.failure !== null) {
      throw new SessionGuardError(
        'GUARD_STOPPED',
        `${method}: the session guard failed (a step of the safety machine threw); restore the last persisted snapshot into a new guard`,
        { cause: this.failure.error },
      );
    }
    if (this.live === null) return;
    const snapshot = this.live.getSnapshot();
    if (snapshot.status !== 'active') {
      throw new SessionGuardError(
        'GUARD_STOPPED',
        `${method}: the session guard's actor is ${snapshot.status === 'error' ? 'failed' : 'stopped'}; ` +
          'restore the last persisted snapshot into a new guard',
        snapshot.status === 'error' ? { cause: snapshot.error } : undefined,
      );
    }
  }

  /**
   * Reports a final decision or recovery to a telemetry hook: a deep-frozen
   * copy, so the hook can neither change what the caller gets nor keep a
   * live reference; the guard refuses calls while it runs, and what it
   * throws is ignored (telemetry never changes or stops a decision).
   */
  private report<T>(hook: ((event: T) => void) | undefined, event: T): void {
    if (hook === undefined) return;
    this.reporting = true;
    try {
      const returned: unknown = hook(deepFreeze(structuredClone(event)));
      // An async hook's rejection is ignored too, rather than left unhandled (which would end the process).
      if (typeof returned === 'object' && returned !== null && typeof (returned as PromiseLike<unknown>).then === 'function') {
        Promise.resolve(returned).catch(() => undefined);
      }
    } catch {
      // telemetry never changes or stops a decision
    } finally {
      this.reporting = false;
    }
  }

  /**
   * Runs an event: through the interpreter, or, once it exists, the actor
   * (failing loudly when the actor did not survive it). Returns what it emitted, in order.
   */
  private send(method: string, event: SafetyEvent): readonly SafetyEmitted[] {
    if (this.session !== null) {
      try {
        return safetyInterpreter.advance(this.session, event);
      } catch (error) {
        // As a failed actor: the session cannot go on (it may be part-way through the step).
        this.failure = { error };
        this.enter(method);
        throw error;
      }
    }
    const heard: SafetyEmitted[] = [];
    this.heard = heard;
    try {
      // Frozen before the actor (and its inspectors) see it: the interpreter's events stay the guard's own.
      this.live!.send(Object.freeze(event));
    } finally {
      this.heard = null;
    }
    if (this.live!.getSnapshot().status !== 'active') this.enter(method);
    return heard;
  }

  private decide(method: string, event: SafetyEvent): GateDecidedEvent {
    const decision = lastEmitted(this.send(method, event), 'gate.decided');
    if (decision === undefined) throw new Error(`the safety machine made no decision on ${event.type}`);
    this.report(this.onDecision, decision);
    return decision;
  }

  /**
   * The machine event of a call. A check carries its targets when it has
   * any; an outcome when it states them (given, or classified from its
   * arguments), even none: otherwise the admitted call's apply. `result`,
   * for a success: the tool's result, read for self-verification
   * (`selfVerifiedBy`). A write's check, and a write's failure, carry its
   * write key (`writeKeyOf`, issue 28) when its arguments are given; a
   * failure the code its result raised (`failure.errorCode`).
   */
  private toolEvent(
    type: 'tool.requested' | 'tool.succeeded' | 'tool.failed',
    call: ToolCall,
    result?: unknown,
    failure?: { possiblyApplied: boolean; errorCode: string | null; neverRan: boolean },
  ): SafetyEvent {
    const requested = type === 'tool.requested';
    const { kind, targets, destructive, links, stated, echoes } = this.classificationOf(call, requested);
    const at = this.clock();
    // A script tool (its result echoes its arguments) is keyed by its places: its words are free text a retry rewords.
    const writeKey = kind === 'write' && type !== 'tool.succeeded' ? writeKeyOf(call.name, call.args, echoes ? targets : []) : undefined;
    // Read once (`toolEventOf`): every guard and action of the step reads the same readings, and an outcome is booked once.
    return toolEventOf(type, call.name, kind, at, {
      callId: call.id,
      // A check without targets leaves the field out (none), the common case; an outcome states none explicitly.
      targets: (requested ? targets.length > 0 : call.targets !== undefined || (stated && call.kind === undefined)) ? targets : undefined,
      destructive: destructive ? true : undefined,
      selfVerified: type === 'tool.succeeded' && this.selfVerifiedBy(call.name, kind, echoes ? undefined : result) ? true : undefined,
      possiblyApplied: failure?.possiblyApplied === true ? true : undefined,
      kindUnstated: !requested && !stated ? true : undefined,
      // Only a check carries links (kept when the write is admitted); left out when none, the common case.
      links: requested && links.length > 0 ? links : undefined,
      writeKey,
      errorCode: failure?.errorCode ?? undefined,
      neverRan: failure?.neverRan === true ? true : undefined,
    });
  }

  /**
   * Whether a success of `name` (of `kind`) verifies itself. It matters only
   * to an outcome that applies as a write: one of the write kind, or one
   * that may be booked to a write in flight. Otherwise the result is not
   * read (no JSON parsed).
   */
  private selfVerifiedBy(name: string, kind: ToolKind, result: unknown): boolean {
    return (
      (kind === 'write' || hasWriteInFlight(this.current().context.inFlight)) && (holds(this.selfVerifying, name) || selfVerifies(result))
    );
  }

  check(call: ToolCall): Decision {
    const decision = this.decideCall(call);
    const kind = decision.kind ?? 'write';
    return decision.allowed ? { allowed: true, kind } : { allowed: false, kind, error: blockedError(decision) };
  }

  /** `check`'s decision as the machine emitted it, without an `FSMBlockedError` (see `ReplayGuard`). */
  decideCall(call: ToolCall): GateDecidedEvent {
    this.enter('check');
    const valid = validCall(call, 'check');
    if (valid.id !== undefined && isCallIdInFlight(this.current().context, valid.id)) {
      const id = valid.id.length > 80 ? `${valid.id.slice(0, 80)}…` : valid.id;
      throw new TypeError(
        `check: call id '${id}' is already in flight; record its outcome before checking another call under it, ` +
          'or give the new call its own id (one record could not tell the two apart)',
      );
    }
    const decision = this.decide('check', this.toolEvent('tool.requested', valid));
    if (!decision.allowed) this.checked = null; // a refused call is not run: nothing to keep for its record
    return decision;
  }

  record(call: ToolCall, outcome: 'success' | 'error' = 'success', options?: RecordOptions): RecordResult {
    this.enter('record');
    const valid = validCall(call, 'record');
    if (outcome !== 'success' && outcome !== 'error') {
      throw new TypeError(`record: outcome must be 'success' or 'error', got ${JSON.stringify(outcome)}`);
    }
    if (options !== undefined && (typeof options !== 'object' || options === null)) {
      throw new TypeError('record: options must be an object { result?, possiblyApplied?, errorCode?, neverRan? } when given');
    }
    let result: unknown;
    let possiblyApplied: unknown;
    let errorCode: unknown;
    let neverRan: unknown;
    try {
      // A misspelt option (`possibleApplied`) would silently drop a safety check: refused.
      if (options !== undefined) assertKnownKeys(options, RECORD_OPTIONS, 'record');
      result = options?.result;
      possiblyApplied = options?.possiblyApplied;
      errorCode = options?.errorCode;
      neverRan = options?.neverRan;
    } catch (error) {
      if (error instanceof TypeError && error.message.startsWith('record: options.')) throw error;
      throw new TypeError('record: options could not be read (a getter or proxy trap threw)', { cause: error });
    }
    if (possiblyApplied !== undefined && typeof possiblyApplied !== 'boolean') {
      throw new TypeError('record: options.possiblyApplied must be a boolean when given');
    }
    if (neverRan !== undefined && typeof neverRan !== 'boolean') {
      throw new TypeError('record: options.neverRan must be a boolean when given');
    }
    if (errorCode !== undefined && errorCode !== null && (typeof errorCode !== 'string' || errorCode === '')) {
      throw new TypeError('record: options.errorCode must be a non-empty string or null when given');
    }
    const failed = outcome === 'error';
    const failure = failed
      ? {
          possiblyApplied: possiblyApplied === true,
          // Given, or read from the result against the guard's recoverable codes (issue 28).
          errorCode: errorCode === undefined ? recoveryCodeOf(result, this.recoveryCodes) : (errorCode as string | null),
          neverRan: neverRan === true,
        }
      : undefined;
    const outcomeEvent = this.toolEvent(failed ? 'tool.failed' : 'tool.succeeded', valid, result, failure);
    // A verifying read completes verification in the same step when the session auto-completes
    // (the machine's eventless transition out of VERIFYING).
    const emitted = this.send('record', outcomeEvent);
    const answer: RecordResult = {};
    for (const event of emitted) {
      if (event.type === 'recovery.raised') {
        answer.raised = event.recovery;
        this.report(this.onRecoveryRaised, { ...event, action: actionOf(valid.args) });
      } else if (event.type === 'recovery.succeeded') {
        answer.recovered ??= event.recovery;
        this.report(this.onRecovery, event);
      }
    }
    return answer;
  }

  finalAnswer(text?: string): FinalAnswerDecision {
    const decision = this.decideAnswer(text);
    return decision.allowed ? { allowed: true } : { allowed: false, error: blockedError(decision) };
  }

  /** `finalAnswer`'s decision as the machine emitted it, without an `FSMBlockedError` (see `ReplayGuard`). */
  decideAnswer(text?: string): GateDecidedEvent {
    if (text !== undefined && typeof text !== 'string') throw new TypeError('finalAnswer: text must be a string when given');
    this.enter('finalAnswer');
    const claims = text === undefined || !this.phantomClaims ? [] : detectClaims(text);
    const event: AnswerRequestedEvent = { type: 'answer.requested', at: this.clock() };
    if (claims.length > 0) event.claims = claims.map((c) => ({ text: c.text, places: c.places }));
    return this.decide('finalAnswer', event);
  }

  completeVerification(): boolean {
    this.enter('completeVerification');
    const before = this.current().value;
    this.send('completeVerification', { type: 'verification.completed', at: this.clock() });
    return before !== this.current().value;
  }

  reset(): void {
    this.enter('reset');
    this.send('reset', { type: 'session.reset', at: this.clock() });
  }

  resetKeepProgress(): void {
    this.enter('resetKeepProgress');
    this.send('resetKeepProgress', { type: 'session.resetKeepingProgress', at: this.clock() });
  }

  tick(): void {
    this.enter('tick');
    this.send('tick', { type: 'clock.ticked', at: this.clock() });
  }

  getPersistedSnapshot(): PersistedSnapshot {
    this.enter('getPersistedSnapshot');
    const { value, context } = this.current();
    return toPersistedSnapshot(value as SafetyState, context);
  }
}

/**
 * Internal: a session guard that also gives its decisions as the machine
 * emitted them (`gate.decided`), for this library's own replays (the audit),
 * which report refusals as data and need no `FSMBlockedError` per refusal (an
 * `Error` costs V8 about a third of a microsecond even without a stack trace).
 * Not exported from the package.
 */
export interface ReplayGuard extends SessionGuard {
  /**
   * As `check`, returning the decision event (`allowed`, `state`, `tool`,
   * `kind`, `rule`, `reason`, `recoveryId`, `target`) instead of a `Decision`.
   * @throws as `check`.
   */
  decideCall(call: ToolCall): GateDecidedEvent;
  /** As `finalAnswer`, returning the decision event. @throws as `finalAnswer`. */
  decideAnswer(text?: string): GateDecidedEvent;
}

/**
 * Internal: a `ReplayGuard` from options this library built itself, of the
 * types `createSessionGuard` checks (the caller checks what it took from its
 * own caller), so a replay of many short runs pays no schema pass per run.
 * Not exported from the package; anything else calls `createSessionGuard`.
 */
export function createReplayGuard(options: SessionGuardOptions): ReplayGuard {
  // An audit reports the tools its catalog knows itself: no process warning per replayed run.
  return new Guard({ ...options, onWarning: options.onWarning ?? (() => undefined) });
}

/**
 * Creates the safety gate of one session. Its decisions run through the
 * compiled interpreter of the safety machine (src/interpreter/), the
 * statechart's own transitions, guards and actions; `guard.actor` creates a
 * real XState actor from the session on first use, which then drives it.
 *
 * @example
 * const guard = createSessionGuard();
 * const decision = guard.check({ id: 'c1', name: 'pulse_control', args: { action: 'restart' } });
 * if (!decision.allowed) return decision.error.toToolResult(); // { ok: false, error: { code: 'FSM_BLOCKED', ... } }
 * guard.record({ id: 'c1', name: 'pulse_control' }, ok ? 'success' : 'error');
 *
 * @throws TypeError naming the option when an option is unknown or of the wrong
 *   type (`validateSessionGuardOptions`).
 * @throws SnapshotError (a TypeError) naming the bad field when `options.snapshot`
 *   is not a snapshot this machine could have persisted.
 */
export function createSessionGuard(options: SessionGuardOptions = {}): SessionGuard {
  validateSessionGuardOptions(options, 'createSessionGuard');
  return new Guard(options);
}
