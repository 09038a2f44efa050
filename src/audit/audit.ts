/**
 * The audit: replays recorded transcripts through the gate in shadow mode and
 * reports what it would have refused.
 *
 * Each call is checked (what the gate would have said is reported), then its
 * real outcome is recorded, so the session follows what actually happened.
 * Each assistant text message is a final answer and is asked for.
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants", "Blocked calls and recovery";
 * DESIGN.md §3.
 */
import type { AnswerBlockRule, BlockRule, PendingRecovery, SafetyContext, SafetyState, ToolKind } from '../../machines/safety.types.js';
import { createReplayGuard, refusalOf, type ReplayGuard } from '../guard/session-guard.js';
import { z } from 'zod';
import { ANSWER_BLOCK_REASONS, MAX_NAME_LENGTH, MAX_TIME_MS, TOOL_BLOCK_REASONS } from '../../machines/safety.policy.js';
import type { CallClassifier } from '../classify/classification.js';
import { classifyCall, pulseRecoveryCodes, type Classifier, type CompiledCatalog } from '../classify/catalog/index.js';
import { recoveryCodeOf } from '../guard/outcome.js';
import { blockedMessage, blockedToolResult, type BlockedToolResult } from '../errors/index.js';
import type { AnswerStep, CallStep, ClockStep, ResultStep, TranscriptRun, TranscriptStep } from './transcripts/index.js';
import { TranscriptError } from '../errors/transcript-error.js';

/** Options of `auditRun` / `auditRuns`. */
export interface AuditOptions {
  /**
   * A compiled catalog (`compileCatalog`): classifies the calls (kind,
   * targets, destructive), adds its failure markers to the reading of
   * results (DESIGN.md §5.7), and names the recoverable error codes a
   * failed result may raise (`recoveryCodes`, issue 28: one opens a
   * pending recovery of its tool). Default the Pulse catalog.
   */
  catalog?: CompiledCatalog;
  /** A kind-only classifier, used instead of `catalog`'s when given (as before catalog format 2). */
  classify?: Classifier;
  /**
   * Which rules the replay applies (DESIGN.md §5); default `full`:
   * - `spec`: the spec's session-wide rules (no targets, no self-verification);
   * - `targets`: target-aware validated targets and verification (§5.3, §5.4),
   *   targets and the destructive flag from the classification;
   * - `full`: `targets` plus self-verifying writes (§1, §5.8): a result with
   *   `verification.ok === true`, or a success of a catalog `selfVerifying` tool.
   */
  policy?: AuditPolicy;
  /** DESIGN.md §3.8; default false. */
  strictFailedWrites?: boolean;
  /** As `createSessionGuard`; default true. */
  autoCompleteVerification?: boolean;
  /**
   * Check each final answer's claims of a change (`createSessionGuard`'s
   * `phantomClaims`, rule `phantom-claim`, issue 28 item 2); default true,
   * except under the `spec` policy (the spec's rules only) and with a
   * kind-only `classify`: both know no targets, so no claim's place could
   * be found written.
   */
  phantomClaims?: boolean;
  /** The audit clock's start, epoch ms; default 0. Transcripts carry no times. */
  startAt?: number;
  /** Milliseconds the clock advances per step; default 1000. `clock` steps add their own advance. */
  stepMs?: number;
  /** Keep the context after every step in the findings (for replay); default false. */
  trace?: boolean;
}

/** What the gate said about one step. */
export interface StepDecision {
  allowed: boolean;
  /** The call's kind (calls only). */
  kind: ToolKind | null;
  /** The call's targets (calls only; empty for answers and when none are known, DESIGN.md §5.1). */
  targets: string[];
  /** The call is a destructive write (DESIGN.md §5.6). */
  destructive: boolean;
  /** Refusals only. */
  rule: BlockRule | null;
  reason: string | null;
  /** Refusals only: the `FSMBlockedError` text form. */
  message: string | null;
  /** Refused calls only: the structured tool result the model would have got. */
  toolResult: BlockedToolResult | null;
}

/** One replayed step. `at` is the audit clock (epoch ms). */
export interface StepFinding {
  index: number;
  step: TranscriptStep;
  at: number;
  stateBefore: SafetyState;
  stateAfter: SafetyState;
  /** For calls and answers. */
  decision: StepDecision | null;
  /** For results: the pending recovery the success cleared. */
  recovered: PendingRecovery | null;
  /** With `trace`: the context after the step. */
  context?: SafetyContext;
}

/** A refused call or answer. */
export interface Refusal {
  runId: string;
  index: number;
  position: string;
  subject: 'tool' | 'answer';
  tool: string | null;
  kind: ToolKind | null;
  /** The refused call's targets (empty for answers). */
  targets: string[];
  /** The refused call is a destructive write (DESIGN.md §5.6). */
  destructive: boolean;
  state: SafetyState;
  rule: BlockRule;
  reason: string;
  message: string;
  /**
   * The target the refusal names, still without evidence (DESIGN.md
   * §5.3-5.4; the `target` of the refusal's tool result), or null: for
   * `unknown-target` the write's target no read validated, for
   * `unverified-write` the earlier write's first target.
   */
  target: string | null;
  /**
   * For `unverified-write`, the earlier write without evidence of its
   * effect; for `write-in-flight`, the write still running; null for other
   * rules, or when the transcript does not show it (a write recorded
   * without a call, or none kept with `detail` `counts`).
   */
  earlierWrite: EarlierWrite | null;
}

/** A write a refusal waits on (`Refusal.earlierWrite`): the step of its call, its tool and its targets. */
export interface EarlierWrite {
  index: number;
  position: string;
  tool: string;
  targets: string[];
}

/** The audit of one run. */
export interface RunAudit {
  id: string;
  reward: number | null;
  calls: number;
  writes: number;
  /** Refused calls and answers in this run (kept even when `refusals` is not). */
  blockedCalls: number;
  refusedAnswers: number;
  /** The refusals, step by step (empty with `detail` `counts`). */
  refusals: Refusal[];
  /** The refusals grouped by subject and rule, with the rule's reason (`TOOL_BLOCK_REASONS`, `ANSWER_BLOCK_REASONS`: without the target one refusal names). */
  refusalsByReason: { subject: 'tool' | 'answer'; rule: BlockRule; reason: string; count: number }[];
  recoveries: number;
  finalState: SafetyState;
  /**
   * The run ends with a write unverified or still in flight (final state
   * VERIFYING or WRITING) and no final answer asked for since the last write
   * (a refused one is a refusal already): a change nobody looked at and
   * nobody reported. Counts like a refusal for the exit code.
   */
  endsUnverified: boolean;
  /** Every step with `detail` `all`; with `refusals`, the steps that cleared a pending recovery; none with `counts`. */
  findings: StepFinding[];
}

/** Counts over a set of runs. */
export interface AuditCounts {
  runs: number;
  calls: number;
  writes: number;
  blockedCalls: number;
  refusedAnswers: number;
  recoveries: number;
  runsWithRefusal: number;
  /** Runs that end with a write unverified or in flight (`RunAudit.endsUnverified`). */
  runsEndingUnverified: number;
}

/** The figures of an audit. `byReward` is null when no run has a reward; a run with reward > 0 counts as successful. */
export interface AuditSummary extends AuditCounts {
  /** Blocked calls grouped by rule (with the rule's reason, no target), most frequent first. */
  blocksByReason: { rule: BlockRule; reason: string; count: number }[];
  /** Refused answers grouped by rule (with the rule's reason, no target), most frequent first. */
  refusedAnswersByReason: { rule: BlockRule; reason: string; count: number }[];
  byReward: { successful: AuditCounts; failed: AuditCounts } | null;
}

/** The audit of a set of runs. */
export interface AuditReport {
  runs: RunAudit[];
  summary: AuditSummary;
}

/** The rule sets an audit can replay with (see `AuditOptions.policy`). */
export type AuditPolicy = 'spec' | 'targets' | 'full';

/** Every policy, from the spec's rules to all the catalog knows. */
export const AUDIT_POLICIES: readonly AuditPolicy[] = ['spec', 'targets', 'full'];

/** The policy an audit applies unless told (`AuditOptions.policy`, `pulse-safety audit --policy`). */
export const DEFAULT_AUDIT_POLICY: AuditPolicy = 'full';

/** What an audit keeps of each run: `all` (default), `refusals` (no findings), or `counts` (neither: a summary only). */
export type AuditDetail = 'all' | 'refusals' | 'counts';

/** The options an auditor takes (`AuditOptions` plus `detail`), each optional and of its type; any other key is refused. */
const auditOptionsSchema = z.strictObject({
  catalog: z
    .custom<CompiledCatalog>(
      (value) =>
        typeof value === 'object' &&
        value !== null &&
        typeof (value as CompiledCatalog).classify === 'function' &&
        typeof (value as CompiledCatalog).failureMarkers === 'function',
      { message: 'must be a compiled catalog (compileCatalog)' },
    )
    .optional(),
  classify: z.custom<Classifier>((value) => typeof value === 'function', { message: 'must be a function' }).optional(),
  policy: z.enum(AUDIT_POLICIES as ['spec', 'targets', 'full'], { message: `must be one of ${AUDIT_POLICIES.join(', ')}` }).optional(),
  strictFailedWrites: z.boolean({ message: 'must be a boolean' }).optional(),
  autoCompleteVerification: z.boolean({ message: 'must be a boolean' }).optional(),
  phantomClaims: z.boolean({ message: 'must be a boolean' }).optional(),
  startAt: z
    .number({ message: 'must be a number' })
    .min(-MAX_TIME_MS, { message: `must be within ±${MAX_TIME_MS} ms` })
    .max(MAX_TIME_MS, { message: `must be within ±${MAX_TIME_MS} ms` })
    .optional(),
  stepMs: z
    .number({ message: 'must be a number' })
    .min(0, { message: 'must be between 0 and MAX_TIME_MS' })
    .max(MAX_TIME_MS, { message: 'must be between 0 and MAX_TIME_MS' })
    .optional(),
  trace: z.boolean({ message: 'must be a boolean' }).optional(),
  detail: z.enum(['all', 'refusals', 'counts'], { message: 'must be one of all, refusals, counts' }).optional(),
});

/**
 * Checks an audit's options (about 0.15 µs, once per run): a misspelled option (`strictFailedWrite`)
 * would otherwise be ignored without a word, and a flag of the wrong type
 * change the rules replayed.
 * @throws TypeError naming the first bad option, e.g.
 *   `audit: options.strictFailedWrite is not an option (the options are catalog, classify, ...)`
 *   or `audit: options.policy must be one of spec, targets, full`.
 */
function checkAuditOptions(options: AuditOptions & { detail?: AuditDetail }): void {
  const parsed = auditOptionsSchema.safeParse(options);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const known = Object.keys(auditOptionsSchema.shape).join(', ');
    if (issue.code === 'unrecognized_keys')
      throw new TypeError(`audit: options.${issue.keys[0]} is not an option (the options are ${known})`);
    if (issue.path.length === 0) throw new TypeError(`audit: the options must be an object { ${known} } when given`);
    throw new TypeError(`audit: options.${String(issue.path[0])} ${issue.message}`);
  }
}

/** A call the audit checked, until its result: its guard id, name, checked kind and whether it was admitted. */
interface OpenCall {
  readonly id: string;
  readonly name: string;
  readonly kind: ToolKind;
  readonly allowed: boolean;
  /** Its result is output its arguments choose (`Classification.echoes`): not read for self-verification. */
  readonly echoes: boolean;
  /** The call's step, tool and targets, for a refusal that waits on it (`Refusal.earlierWrite`). */
  readonly step: EarlierWrite;
}

/** How many writes whose outcome was recorded the audit remembers, to name the one a refusal waits on. */
const RECORDED_WRITES_KEPT = 4;

/**
 * What an audit replays a run through: the part of the session guard it
 * calls (`ReplayGuard`: decisions as the machine emits them, no Error per
 * refusal). The statechart's own guard by default; `AuditGateOf` lets a
 * caller put another gate with the same decisions in its place (the
 * benchmark's hand-written reference, to measure the report's own cost).
 */
export type AuditGate = Pick<
  ReplayGuard,
  'decideCall' | 'decideAnswer' | 'record' | 'reset' | 'resetKeepProgress' | 'tick' | 'state' | 'context'
>;

/**
 * Makes the gate of one run from the audit's settings: `now` (the audit
 * clock, epoch ms), the three flags, and `selfVerifying` (tools whose success
 * verifies itself, with the `full` policy and a catalog).
 */
export type AuditGateOf = (settings: {
  now: () => number;
  autoCompleteVerification: boolean;
  strictFailedWrites: boolean;
  phantomClaims: boolean;
  selfVerifying?: (name: string) => boolean;
}) => AuditGate;

/** The default gate: the safety machine's session guard (its options were checked with the audit's). */
const statechartGate: AuditGateOf = (settings) => createReplayGuard(settings);

/**
 * Replays one run through a fresh session guard in shadow mode, one step at
 * a time, so a run of any length can be audited as it is read
 * (`auditRun` does it for a run in memory). With `detail` `counts`, memory
 * stays bounded by the calls in flight, whatever the run's length.
 */
export class RunAuditor {
  private at: number;
  private readonly stepMs: number;
  private readonly policy: AuditPolicy;
  /** The full classifier; null when `kindOnly` classifies. */
  private readonly classify: CallClassifier | null;
  /** `options.classify`: a kind-only classifier, called without building a classification (no targets, not destructive). */
  private readonly kindOnly: Classifier | null;
  private readonly catalog: CompiledCatalog | undefined;
  /** The recoverable error codes a failed result is read for (issue 28): the catalog's, else the Pulse catalog's. */
  private readonly recoveryCodes: readonly string[];
  private readonly detail: AuditDetail;
  private readonly trace: boolean;
  private readonly guard: AuditGate;
  private readonly audit: RunAudit;
  private index = 0;
  /** An answer was asked for since the last write call (an unverified one was refused, and so counted). */
  private answeredSinceWrite = false;
  /**
   * The calls without a result yet, by transcript id, oldest first: the one
   * call, or a list when a log reuses an id before its result (the guard
   * refuses a second check under an id in flight), whose later calls get a
   * guard id of their own (`madeUpId`). A result settles its id's oldest
   * call, and is recorded as what was called.
   */
  private readonly open = new Map<string, OpenCall | OpenCall[]>();
  /** The made-up guard ids of open calls: none unless a log reuses an id before its result. */
  private readonly madeUp = new Set<string>();
  private reused = 0;
  /**
   * The latest writes whose outcome was recorded, newest last, each with the
   * audit clock of its result (the machine's `lastWriteAt` when it recorded
   * it as the last write): the one an `unverified-write` refusal waits on.
   */
  private readonly recordedWrites: { at: number; write: EarlierWrite }[] = [];
  /** The refusals grouped by subject and rule, in the order first seen (a run has a handful). */
  private readonly reasons: { subject: 'tool' | 'answer'; rule: BlockRule; reason: string; count: number }[] = [];

  /**
   * @param run the run's id and reward (its steps come through `step`).
   * @param options as `auditRun`'s, plus `detail` (default `all`); read once, here.
   * @param gateOf the gate to replay through (default: the statechart's session guard).
   * @throws TypeError naming the option when one is unknown or not of its type (see `AuditOptions`).
   */
  constructor(
    run: { id: string; reward: number | null },
    options: AuditOptions & { detail?: AuditDetail } = {},
    gateOf: AuditGateOf = statechartGate,
  ) {
    checkAuditOptions(options);
    this.at = options.startAt ?? 0;
    this.stepMs = options.stepMs ?? 1000;
    this.kindOnly = options.classify || null;
    this.classify = this.kindOnly === null ? (options.catalog?.classify ?? classifyCall) : null;
    this.policy = options.policy ?? DEFAULT_AUDIT_POLICY;
    this.detail = options.detail ?? 'all';
    this.trace = Boolean(options.trace);
    const catalog = options.catalog;
    this.catalog = catalog;
    this.recoveryCodes = catalog?.recoveryCodes ?? pulseRecoveryCodes();
    // Options of the types createSessionGuard checks (the flags just above): no schema pass per run.
    this.guard = gateOf({
      now: () => this.at,
      autoCompleteVerification: options.autoCompleteVerification ?? true,
      strictFailedWrites: options.strictFailedWrites ?? false,
      phantomClaims: options.phantomClaims ?? (this.policy !== 'spec' && this.kindOnly === null),
      ...(this.policy === 'full' && catalog !== undefined ? { selfVerifying: (name: string) => catalog.isSelfVerifying(name) } : {}),
    });
    this.audit = {
      id: run.id,
      reward: run.reward,
      calls: 0,
      writes: 0,
      blockedCalls: 0,
      refusedAnswers: 0,
      refusals: [],
      refusalsByReason: [],
      recoveries: 0,
      finalState: this.guard.state,
      endsUnverified: false,
      findings: [],
    };
  }

  /**
   * Replays the run's next step.
   * @returns what happened at that step (also kept in the run's findings with `detail` `all`).
   * @throws TranscriptError (naming the run and the step) when a `clock` step
   *   takes the audit clock past the range of dates.
   */
  step(step: TranscriptStep): StepFinding {
    const guard = this.guard;
    const index = this.index++;
    this.at += this.stepMs;
    const stateBefore = guard.state;
    let decision: StepDecision | null = null;
    let recovered: PendingRecovery | null = null;
    switch (step.type) {
      case 'call':
        decision = this.call(step, index, stateBefore);
        break;
      case 'result':
        recovered = this.result(step);
        break;
      case 'answer':
        decision = this.answer(step, index, stateBefore);
        break;
      case 'reset':
        guard.reset();
        this.recordedWrites.length = 0;
        break;
      case 'resetKeepProgress':
        guard.resetKeepProgress();
        this.recordedWrites.length = 0;
        break;
      case 'clock':
        this.clock(step);
        break;
    }

    const finding: StepFinding = { index, step, at: this.at, stateBefore, stateAfter: guard.state, decision, recovered };
    if (this.trace) finding.context = guard.context as SafetyContext;
    if (this.detail === 'all' || (this.detail === 'refusals' && recovered !== null)) this.audit.findings.push(finding);
    return finding;
  }

  /** A call: classified, checked (what the gate would have said, counted), and kept open until its result. */
  private call(step: CallStep, index: number, stateBefore: SafetyState): StepDecision {
    const audit = this.audit;
    let kind: ToolKind;
    let targets: string[];
    let destructive: boolean;
    let echoes = false;
    let links: string[] | undefined;
    if (this.kindOnly !== null) {
      kind = this.kindOnly(step.name, step.args);
      targets = [];
      destructive = false;
    } else {
      const classification = this.classify!(step.name, step.args, step.cwd === undefined ? undefined : { cwd: step.cwd });
      kind = classification.kind;
      targets = classification.targets;
      destructive = classification.destructive;
      echoes = classification.echoes === true;
      links = classification.links;
    }
    const pending = this.open.get(step.id);
    const id = pending === undefined && (this.madeUp.size === 0 || !this.madeUp.has(step.id)) ? step.id : this.madeUpId(step.id);
    // A given kind without targets has none: the spec's session-wide rules.
    const decided = this.guard.decideCall(
      this.policy === 'spec'
        ? { id, name: step.name, args: step.args, kind }
        : { id, name: step.name, args: step.args, kind, targets, destructive, ...(links === undefined ? {} : { links }) },
    );
    kind = decided.kind ?? 'write';
    if (kind === 'write') this.answeredSinceWrite = false;
    this.keepOpen(step.id, pending, {
      id,
      name: step.name,
      kind,
      allowed: decided.allowed,
      echoes,
      step: { index, position: step.position, tool: step.name, targets },
    });
    audit.calls += 1;
    if (kind === 'write') audit.writes += 1;
    if (decided.allowed) return { allowed: true, kind, targets, destructive, rule: null, reason: null, message: null, toolResult: null };
    // The refusal as FSMBlockedError would give it (src/errors/ builds both), without an Error per refusal.
    const refusal = refusalOf(decided);
    const message = blockedMessage(refusal);
    audit.blockedCalls += 1;
    const refused = { kind, targets, destructive, rule: refusal.rule, reason: refusal.reason, message };
    this.refused({
      runId: audit.id,
      index,
      position: step.position,
      state: stateBefore,
      subject: 'tool',
      tool: step.name,
      ...refused,
      target: refusal.target ?? null,
      earlierWrite: this.earlierWrite(refusal.rule),
    });
    return { allowed: false, ...refused, toolResult: blockedToolResult(refusal, message) };
  }

  /** Keeps a checked call open under its transcript id, after the calls already open under it (`pending`). */
  private keepOpen(transcriptId: string, pending: OpenCall | OpenCall[] | undefined, call: OpenCall): void {
    if (pending === undefined) this.open.set(transcriptId, call);
    else if (Array.isArray(pending)) pending.push(call);
    else this.open.set(transcriptId, [pending, call]);
  }

  /**
   * A result: recorded as its call's outcome, so the session follows what
   * actually happened.
   * @returns the pending recovery its success cleared, or null.
   */
  private result(step: ResultStep): PendingRecovery | null {
    const call = this.closeCall(step.id);
    // A result of no open call is recorded under its own id, unless that is the guard id this audit made up for
    // another call in flight: then under one nobody holds, so it settles nothing it is not.
    const id = call?.id ?? (this.madeUp.has(step.id) ? this.unheldId(step.id) : step.id);
    const name = call?.name ?? step.name;
    if (name === '') return null; // the result of no call the transcript shows: nothing to record
    // The transcript's reading (src/guard/outcome.ts), plus the catalog's own failure markers (DESIGN.md §5.7).
    const failed = step.outcome === 'error' || this.failsByMarker(name, step.text);
    if (call?.kind === 'write' && this.detail !== 'counts') {
      if (this.recordedWrites.length === RECORDED_WRITES_KEPT) this.recordedWrites.shift();
      this.recordedWrites.push({ at: this.at, write: call.step });
    }
    const result = this.guard.record(
      call ? { id, name, kind: call.kind } : { id, name },
      failed ? 'error' : 'success',
      failed
        ? // The recoverable code the result raised, if any, opens a pending recovery (issue 28).
          { errorCode: recoveryCodeOf(step.text, this.recoveryCodes) }
        : // A result its call's arguments chose (a shell command's output) is no verification (`Classification.echoes`).
          this.policy === 'full' && !(call?.echoes ?? this.classify?.(name).echoes === true)
          ? { result: step.text }
          : undefined,
    );
    // A refused call that ran anyway clears its own pending recovery: that is no recovery.
    if (result.recovered && call?.allowed !== false) {
      this.audit.recoveries += 1;
      return result.recovered;
    }
    return null;
  }

  /** The result text of tool `name` starts with one of the catalog's failure markers for it (DESIGN.md §5.7). */
  private failsByMarker(name: string, resultText: string): boolean {
    if (this.catalog === undefined) return false;
    const markers = this.catalog.failureMarkers(name);
    if (markers.length === 0) return false;
    const text = resultText.trimStart();
    for (const marker of markers) {
      if (text.startsWith(marker)) return true;
    }
    return false;
  }

  /** A final answer: asked for (what the gate would have said, counted). */
  private answer(step: AnswerStep, index: number, stateBefore: SafetyState): StepDecision {
    this.answeredSinceWrite = true;
    const decided = this.guard.decideAnswer(step.text);
    if (decided.allowed) {
      return { allowed: true, kind: null, targets: [], destructive: false, rule: null, reason: null, message: null, toolResult: null };
    }
    const refusal = refusalOf(decided);
    const message = blockedMessage(refusal);
    this.audit.refusedAnswers += 1;
    this.refused({
      runId: this.audit.id,
      index,
      position: step.position,
      state: stateBefore,
      subject: 'answer',
      tool: null,
      kind: null,
      targets: [],
      destructive: false,
      rule: refusal.rule,
      reason: refusal.reason,
      message,
      target: refusal.target ?? null,
      earlierWrite: this.earlierWrite(refusal.rule),
    });
    return {
      allowed: false,
      kind: null,
      targets: [],
      destructive: false,
      rule: refusal.rule,
      reason: refusal.reason,
      message,
      toolResult: null,
    };
  }

  /**
   * The earlier write a refusal of `rule` waits on (`Refusal.earlierWrite`):
   * for `write-in-flight` the oldest admitted write still open; for
   * `unverified-write` the write the machine recorded last (its
   * `lastWriteTool` and `lastWriteAt`, read only here, at a refusal); null
   * for other rules, with `detail` `counts`, or when no call shown matches.
   */
  private earlierWrite(rule: BlockRule): EarlierWrite | null {
    if (this.detail === 'counts') return null;
    if (rule === 'write-in-flight') {
      let oldest: EarlierWrite | null = null;
      for (const pending of this.open.values()) {
        for (const call of Array.isArray(pending) ? pending : [pending]) {
          if (call.kind === 'write' && call.allowed && (oldest === null || call.step.index < oldest.index)) oldest = call.step;
        }
      }
      return oldest;
    }
    if (rule !== 'unverified-write') return null;
    const { lastWriteTool, lastWriteAt } = this.guard.context;
    for (let i = this.recordedWrites.length - 1; i >= 0; i--) {
      const { at, write } = this.recordedWrites[i]!;
      if (at === lastWriteAt && write.tool === lastWriteTool) return write;
    }
    return null;
  }

  /**
   * Time passes: the audit clock advances by the step's own advance.
   * @throws TranscriptError (naming the run and the step) when that takes the clock past the range of dates.
   */
  private clock(step: ClockStep): void {
    this.at += step.advanceMs;
    if (!(Math.abs(this.at) <= MAX_TIME_MS)) {
      throw new TranscriptError(
        this.audit.id,
        step.position,
        `a clock step takes the audit clock past the range of dates (±${MAX_TIME_MS} ms)`,
      );
    }
    this.guard.tick();
  }

  /**
   * A guard id for a call whose transcript id is taken by a call in flight:
   * `<id>#<n>`, the id cut to leave room for the suffix within
   * `MAX_NAME_LENGTH`, and never one an open call holds (a log may itself use
   * ids such as `a#1`).
   */
  private madeUpId(transcriptId: string): string {
    for (;;) {
      const suffix = `#${++this.reused}`;
      const id =
        transcriptId.length + suffix.length > MAX_NAME_LENGTH
          ? transcriptId.slice(0, MAX_NAME_LENGTH - suffix.length) + suffix
          : transcriptId + suffix;
      if (this.madeUp.has(id)) continue;
      const holder = this.open.get(id);
      if (holder !== undefined && (Array.isArray(holder) ? holder.some((call) => call.id === id) : holder.id === id)) continue;
      this.madeUp.add(id);
      return id;
    }
  }

  /** A guard id no open call holds, for a result of no call (`madeUpId`, not kept). */
  private unheldId(transcriptId: string): string {
    const id = this.madeUpId(transcriptId);
    this.madeUp.delete(id);
    return id;
  }

  /** The call a result settles: its transcript id's oldest call without a result, if any. */
  private closeCall(transcriptId: string): OpenCall | undefined {
    const pending = this.open.get(transcriptId);
    if (pending === undefined) return undefined;
    let call: OpenCall;
    if (!Array.isArray(pending)) {
      this.open.delete(transcriptId);
      call = pending;
    } else {
      call = pending.shift()!;
      if (pending.length === 0) this.open.delete(transcriptId);
    }
    if (call.id !== transcriptId) this.madeUp.delete(call.id);
    return call;
  }

  /** Counts a refusal in its group (by rule, with the rule's reason: one line per target would bury the figures) and keeps it unless `detail` is `counts`. */
  private refused(refusal: Refusal): void {
    const { subject, rule } = refusal;
    let group: { subject: 'tool' | 'answer'; rule: BlockRule; reason: string; count: number } | undefined;
    for (const known of this.reasons) {
      if (known.subject === subject && known.rule === rule) {
        group = known;
        break;
      }
    }
    if (group === undefined) {
      group = {
        subject,
        rule,
        reason: subject === 'tool' ? TOOL_BLOCK_REASONS[rule] : ANSWER_BLOCK_REASONS[rule as AnswerBlockRule],
        count: 0,
      };
      this.reasons.push(group);
    }
    group.count += 1;
    if (this.detail !== 'counts') this.audit.refusals.push(refusal);
  }

  /** The run's audit, once its last step is in. */
  finish(): RunAudit {
    const { guard, audit } = this;
    audit.finalState = guard.state;
    audit.endsUnverified = (guard.state === 'VERIFYING' || guard.state === 'WRITING') && !this.answeredSinceWrite;
    audit.refusalsByReason = [...this.reasons];
    return audit;
  }
}

/**
 * Replays one run through a fresh session guard in shadow mode (or through
 * the gate `gateOf` makes: see `AuditGateOf`).
 *
 * @throws TypeError naming the option when one is unknown or not of its type (see `AuditOptions`).
 * @throws TranscriptError (naming the run and the step) when a `clock` step
 *   takes the audit clock past the range of dates; nothing else on a run
 *   produced by `readTranscript`.
 */
export function auditRun(run: TranscriptRun, options: AuditOptions = {}, gateOf?: AuditGateOf): RunAudit {
  const auditor = new RunAuditor(run, options, gateOf);
  for (const step of run.steps) auditor.step(step);
  return auditor.finish();
}

function zeroCounts(): AuditCounts {
  return { runs: 0, calls: 0, writes: 0, blockedCalls: 0, refusedAnswers: 0, recoveries: 0, runsWithRefusal: 0, runsEndingUnverified: 0 };
}

function addRun(counts: AuditCounts, run: RunAudit): void {
  counts.runs += 1;
  counts.calls += run.calls;
  counts.writes += run.writes;
  counts.recoveries += run.recoveries;
  counts.blockedCalls += run.blockedCalls;
  counts.refusedAnswers += run.refusedAnswers;
  if (run.blockedCalls + run.refusedAnswers > 0) counts.runsWithRefusal += 1;
  if (run.endsUnverified) counts.runsEndingUnverified += 1;
}

/**
 * The figures of an audit, built run by run (memory: the reasons seen, not
 * the runs), so a stream of runs of any length can be summarized.
 */
export class AuditSummarizer {
  private readonly all = zeroCounts();
  private readonly successful = zeroCounts();
  private readonly failed = zeroCounts();
  private rewarded = false;
  private readonly reasons = new Map<string, { subject: 'tool' | 'answer'; rule: BlockRule; reason: string; count: number }>();

  /** Adds a run's figures. */
  add(run: RunAudit): void {
    addRun(this.all, run);
    if (run.reward !== null) {
      this.rewarded = true;
      addRun(run.reward > 0 ? this.successful : this.failed, run);
    }
    for (const group of run.refusalsByReason) {
      const key = `${group.subject}\u0000${group.rule}`;
      const known = this.reasons.get(key);
      if (known) known.count += group.count;
      else this.reasons.set(key, { ...group });
    }
  }

  /** The summary of the runs added so far. */
  summary(): AuditSummary {
    const grouped = (subject: 'tool' | 'answer') =>
      [...this.reasons.values()]
        .filter((group) => group.subject === subject)
        .map(({ rule, reason, count }) => ({ rule, reason, count }))
        .sort((a, b) => b.count - a.count || a.rule.localeCompare(b.rule));
    return {
      ...this.all,
      blocksByReason: grouped('tool'),
      refusedAnswersByReason: grouped('answer'),
      byReward: this.rewarded ? { successful: { ...this.successful }, failed: { ...this.failed } } : null,
    };
  }
}

/** The figures of a set of run audits (see `AuditSummary`). */
export function summarize(runs: readonly RunAudit[]): AuditSummary {
  const summarizer = new AuditSummarizer();
  for (const run of runs) summarizer.add(run);
  return summarizer.summary();
}

/**
 * Audits every run (each in a fresh session) and summarizes; `gateOf` as
 * `auditRun`'s.
 * @throws as `auditRun` (bad options before the first run).
 */
export function auditRuns(runs: readonly TranscriptRun[], options: AuditOptions = {}, gateOf?: AuditGateOf): AuditReport {
  checkAuditOptions(options);
  const audits = runs.map((run) => auditRun(run, options, gateOf));
  return { runs: audits, summary: summarize(audits) };
}
