/**
 * Replay: a recorded transcript, run by run and step by step, as the audit
 * sees it. Each step's decision and the session after it come from the audit
 * itself (`auditRun` with `trace`), so the timeline's refusals are exactly
 * the audit's; the page adds the chart, the transitions each step took and
 * those enabled after it.
 *
 * Spec: ASSISTANT_SAFETY.md (whole), as applied by the audit in shadow mode.
 */
import type { AnyEventObject, AnyMachineSnapshot, AnyStateMachine } from 'xstate';
import { safetyMachine, initialSafetyContext } from '../../machines/safety.machine.js';
import type { SafetyState, ToolKind } from '../../machines/safety.types.js';
import { ErrCodeFSMBlocked } from '../../machines/safety.policy.js';
import { auditRun, type AuditOptions, type RunAudit, type StepFinding } from '../audit/audit.js';
import type { TranscriptRun, TranscriptStep } from '../audit/transcripts/index.js';
import { MAX_REFUSED_STEPS_LISTED, MAX_REPLAY_PAGE } from './bounds.js';
import { argsText, short } from './labels.js';
import { sessionView, takeEvents } from './model.js';
import type { DecisionView, LogEntry, ReplayFrame, ReplayRunResponse, ReplayRunSummary, ReplaySettings } from './protocol.js';

/** The audit clock's start and step: the audit's defaults (epoch 0, one second a step). */
const START_AT = 0;

/** A step as one line of text, e.g. `call c4 pulse_control {"action":"restart"}`. */
export function stepLabel(step: TranscriptStep): string {
  switch (step.type) {
    case 'call':
      return `call ${step.id} ${step.name} ${argsText(step.args)}`.trimEnd();
    case 'result':
      return `${step.id} ${step.name} ${step.outcome === 'success' ? 'succeeded' : 'failed'}`;
    case 'answer':
      return `answer "${short(step.text, 80)}"`;
    case 'reset':
      return 'reset';
    case 'resetKeepProgress':
      return 'reset keeping progress';
    case 'clock':
      return `clock +${Math.round(step.advanceMs / 1000)} s`;
  }
}

/** The machine events the audit sent for a step (the adapter's calls, in order). */
function eventsOf(step: TranscriptStep, finding: StepFinding, kind: ToolKind | null): AnyEventObject[] {
  const at = finding.at;
  switch (step.type) {
    case 'call':
      return [{ type: 'tool.requested', tool: step.name, kind: kind ?? 'write', callId: step.id, at }];
    case 'result': {
      const events: AnyEventObject[] = [
        {
          type: step.outcome === 'success' ? 'tool.succeeded' : 'tool.failed',
          tool: step.name,
          kind: kind ?? 'write',
          callId: step.id,
          at,
        },
      ];
      // The guard completes verification itself right after a verifying read.
      if (finding.stateBefore === 'VERIFYING' && finding.stateAfter === 'READING') events.push({ type: 'verification.completed', at });
      return events;
    }
    case 'answer':
      return [{ type: 'answer.requested', at }];
    case 'reset':
      return [{ type: 'session.reset', at }];
    case 'resetKeepProgress':
      return [{ type: 'session.resetKeepingProgress', at }];
    case 'clock':
      return [{ type: 'clock.ticked', at }];
  }
}

function decisionOf(finding: StepFinding): DecisionView | null {
  const decision = finding.decision;
  if (decision === null) return null;
  return {
    subject: finding.step.type === 'answer' ? 'answer' : 'tool',
    allowed: decision.allowed,
    code: decision.allowed ? null : ErrCodeFSMBlocked,
    rule: decision.rule,
    reason: decision.reason,
    message: decision.message,
    toolResult: decision.toolResult,
    kind: decision.kind,
  };
}

function resolve(state: SafetyState, context: unknown): AnyMachineSnapshot {
  return safetyMachine.resolveState({ value: state, context: context as never });
}

/**
 * Sends a step's events to the safety machine from the session before it, as
 * the guard did: the events sent and every transition XState took, eventless
 * ones included. A `verification.completed` is not sent when the machine has
 * already left VERIFYING by itself.
 */
function replayEvents(before: AnyMachineSnapshot, events: AnyEventObject[]): { sent: string[]; taken: string[] } {
  const { sent, taken } = takeEvents(
    safetyMachine as unknown as AnyStateMachine,
    before,
    events,
    (snapshot, event) => event.type === 'verification.completed' && snapshot.value !== 'VERIFYING',
  );
  return { sent, taken };
}

/** A run's summary under its audit. */
export function runSummary(run: TranscriptRun, index: number, audit: RunAudit): ReplayRunSummary {
  return { index, id: run.id, reward: run.reward, steps: run.steps.length, refusals: audit.refusals.length };
}

/** Which steps of a run to answer: from step `from` (0-based), at most `limit` (capped at `MAX_REPLAY_PAGE`). */
export interface ReplayPage {
  from?: number;
  limit?: number;
}

/** What a whole run's audit says, kept apart from its pages: its summary and the refused steps listed. */
export interface ReplayRunTotals {
  summary: ReplayRunSummary;
  /** Ascending; the first `MAX_REFUSED_STEPS_LISTED`. */
  refusedSteps: number[];
}

/** A run's totals from its audit (`auditRun` of the whole run, with or without `trace`). */
export function runTotals(run: TranscriptRun, index: number, audit: RunAudit): ReplayRunTotals {
  return {
    summary: runSummary(run, index, audit),
    refusedSteps: audit.refusals
      .map((refusal) => refusal.index)
      .sort((a, b) => a - b)
      .slice(0, MAX_REFUSED_STEPS_LISTED),
  };
}

/** What a replay's audit is given: the catalog the settings chose, compiled, the policy and the flag (as `pulse-safety audit` gives them). */
export type ReplayAuditOptions = Required<Pick<AuditOptions, 'catalog' | 'policy' | 'strictFailedWrites'>>;

/** Options of `replayRun`: the audit's options, the settings they were chosen by, and the run's totals when known. */
export interface ReplayOptions {
  audit: ReplayAuditOptions;
  /** Echoed in the answer. */
  settings: ReplaySettings;
  /** The whole run's totals under these settings, kept by a server from the transcript's summary; worked out when absent. */
  totals?: ReplayRunTotals;
}

/**
 * One page of the frames of one run: the audit's findings (with `trace`),
 * each with its log entry, whether the audit refused it, and the session view
 * after it. Only the steps up to the page's end are replayed with `trace`,
 * and views and transitions are worked out for the page's steps only; the
 * whole run's totals come from `options.totals` (a server keeps them from
 * the transcript's summary), else from an audit without `trace`. `page.from`
 * past the end answers no frames.
 *
 * @throws TranscriptError (from `auditRun`) when a clock step takes the
 *   audit clock past the range of dates; nothing else on a run produced by
 *   `readTranscript`.
 */
export function replayRun(run: TranscriptRun, index: number, options: ReplayOptions, page: ReplayPage = {}): ReplayRunResponse {
  const auditOptions: AuditOptions = { ...options.audit, startAt: START_AT };
  const whole = options.totals ?? runTotals(run, index, auditRun(run, auditOptions));
  const total = run.steps.length;
  const from = Math.min(Math.max(0, Math.trunc(page.from ?? 0)), total);
  const limit = Math.min(Math.max(1, Math.trunc(page.limit ?? MAX_REPLAY_PAGE)), MAX_REPLAY_PAGE);
  const to = Math.min(total, from + limit);
  // The audit is sequential: the steps up to the page's end decide alike in the whole run.
  const audit = auditRun(to === total ? run : { ...run, steps: run.steps.slice(0, to) }, { ...auditOptions, trace: true });
  const refused = new Set(audit.refusals.map((refusal) => refusal.index));
  const kinds = new Map<string, ToolKind>();
  const start = resolve('RESOLVING', initialSafetyContext({ strictFailedWrites: options.audit.strictFailedWrites }));
  const initial = sessionView(safetyMachine, start, START_AT);
  // The kinds of the calls before the page (a result's kind is its call's).
  for (const finding of audit.findings.slice(0, from)) {
    if (finding.step.type === 'call' && finding.decision?.kind) kinds.set(finding.step.id, finding.decision.kind);
  }
  const previous = from > 0 ? audit.findings[from - 1]! : null;
  let before = previous === null ? start : resolve(previous.stateAfter, previous.context);
  const frames: ReplayFrame[] = audit.findings.slice(from, to).map((finding) => {
    const step = finding.step;
    if (step.type === 'call' && finding.decision?.kind) kinds.set(step.id, finding.decision.kind);
    const kind = step.type === 'call' ? (finding.decision?.kind ?? null) : step.type === 'result' ? (kinds.get(step.id) ?? null) : null;
    // The transitions each event took, as XState selects them from the session before it.
    const { sent, taken } = replayEvents(before, eventsOf(step, finding, kind));
    const after = resolve(finding.stateAfter, finding.context);
    before = after;
    const entry: LogEntry = {
      seq: finding.index + 1,
      at: finding.at,
      label: stepLabel(step),
      events: sent,
      stateBefore: finding.stateBefore,
      stateAfter: finding.stateAfter,
      decision: decisionOf(finding),
      recovered: finding.recovered,
      taken,
    };
    return {
      index: finding.index,
      position: step.position,
      entry,
      refused: refused.has(finding.index),
      view: sessionView(safetyMachine, after, finding.at, taken),
    };
  });
  return {
    run: whole.summary,
    settings: options.settings,
    initial,
    from,
    frames,
    total,
    nextFrom: to < total ? to : null,
    refusedSteps: whole.refusedSteps,
  };
}
