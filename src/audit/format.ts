/**
 * The audit's text report: one headline per run with its refusals and
 * recoveries, the summary's figures, and the policies side by side. Every
 * line that can carry text from the input (a tool name, run id or file name)
 * passes through `printable`, so it cannot forge a line or drive the
 * terminal. Kept apart from the replay, which builds the figures printed here.
 */
import { printable } from '../util/printable.js';
import type { AuditPolicy, AuditReport, AuditSummary, Refusal, RunAudit } from './audit.js';

/** One refusal's line: where, what was refused, in which state, by which rule and why. */
function describeRefusal(refusal: Refusal): string {
  const what =
    refusal.subject === 'tool'
      ? `blocked ${refusal.destructive ? 'destructive ' : ''}${refusal.kind} '${refusal.tool}'${refusal.targets.length > 0 ? ` on ${refusal.targets.join(', ')}` : ''}`
      : 'refused final answer';
  return `${refusal.position}: ${what} in ${refusal.state} [${refusal.rule}]: ${refusal.reason}`;
}

/** `1 call`, `2 calls`: a count and its noun, singular for one. */
function counted(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/**
 * The text report's lines for one run: its headline, each refusal and recovery. Lines pass through `printable`.
 * The headline counts refused calls and refused final answers apart (answers are not calls):
 * `run c (reward 0): 3 calls, 1 refused call, 1 refused answer, ends in VERIFYING ...`, or `run b: 1 call, nothing refused, ...`.
 */
export function formatRunText(run: RunAudit): string {
  const reward = run.reward === null ? '' : ` (reward ${run.reward})`;
  const refused = [
    ...(run.blockedCalls > 0 ? [counted(run.blockedCalls, 'refused call')] : []),
    ...(run.refusedAnswers > 0 ? [counted(run.refusedAnswers, 'refused answer')] : []),
  ];
  const lines = [
    `run ${run.id}${reward}: ${counted(run.calls, 'call')}, ${refused.length === 0 ? 'nothing refused' : refused.join(', ')}, ends in ${run.finalState}${run.endsUnverified ? ' (unverified: a change nobody looked at)' : ''}`,
  ];
  const recoveries = new Map(run.findings.filter((f) => f.recovered).map((f) => [f.index, f]));
  const indices = [...new Set([...run.refusals.map((r) => r.index), ...recoveries.keys()])].sort((a, b) => a - b);
  const refusals = new Map(run.refusals.map((refusal) => [refusal.index, refusal]));
  for (const index of indices) {
    const refusal = refusals.get(index);
    if (refusal) lines.push(`  ${describeRefusal(refusal)}`);
    const finding = recoveries.get(index);
    if (finding?.recovered) {
      lines.push(
        `  ${finding.step.position}: recovered '${finding.recovered.tool}' after ${finding.recovered.attempts} blocked attempt(s)`,
      );
    }
  }
  return lines.map(printable).join('\n') + '\n';
}

/** The text report's summary block (figures, reasons, split by reward). */
export function formatSummaryText(s: AuditSummary): string {
  const lines: string[] = [];
  const pad = (label: string) => `  ${label.padEnd(24)}`;
  lines.push('summary');
  lines.push(`${pad('runs')}${s.runs}`);
  lines.push(`${pad('tool calls')}${s.calls}`);
  lines.push(`${pad('writes')}${s.writes}`);
  lines.push(`${pad('blocked calls')}${s.blockedCalls}`);
  for (const group of s.blocksByReason) lines.push(`    ${String(group.count).padStart(5)}  [${group.rule}] ${group.reason}`);
  lines.push(`${pad('refused answers')}${s.refusedAnswers}`);
  for (const group of s.refusedAnswersByReason) lines.push(`    ${String(group.count).padStart(5)}  [${group.rule}] ${group.reason}`);
  lines.push(`${pad('recoveries')}${s.recoveries}`);
  lines.push(`${pad('runs with a refusal')}${s.runsWithRefusal} of ${s.runs}`);
  lines.push(`${pad('runs ending unverified')}${s.runsEndingUnverified} of ${s.runs}`);
  if (s.byReward) {
    const { successful: ok, failed: ko } = s.byReward;
    lines.push('', `  by reward                successful (reward > 0)   failed`);
    const row = (label: string, a: number, b: number) => `${pad(label)}${String(a).padEnd(26)}${b}`;
    lines.push(row('runs', ok.runs, ko.runs));
    lines.push(row('tool calls', ok.calls, ko.calls));
    lines.push(row('writes', ok.writes, ko.writes));
    lines.push(row('blocked calls', ok.blockedCalls, ko.blockedCalls));
    lines.push(row('refused answers', ok.refusedAnswers, ko.refusedAnswers));
    lines.push(row('runs with a refusal', ok.runsWithRefusal, ko.runsWithRefusal));
    lines.push(row('runs ending unverified', ok.runsEndingUnverified, ko.runsEndingUnverified));
  }
  return lines.map(printable).join('\n') + '\n';
}

/**
 * The policies side by side (DESIGN.md §5): for each, blocked calls, refused
 * answers and runs with a refusal, split by reward when the runs have one.
 */
export function formatPolicyComparison(summaries: readonly { policy: AuditPolicy; summary: AuditSummary }[]): string {
  const lines = [
    '',
    `${'policies compared'.padEnd(24)}${'blocked calls'.padEnd(16)}${'refused answers'.padEnd(18)}runs with a refusal (successful / failed)`,
  ];
  for (const { policy, summary } of summaries) {
    const split = summary.byReward ? ` (${summary.byReward.successful.runsWithRefusal} / ${summary.byReward.failed.runsWithRefusal})` : '';
    lines.push(
      `  ${policy.padEnd(22)}${String(summary.blockedCalls).padEnd(16)}${String(summary.refusedAnswers).padEnd(18)}${summary.runsWithRefusal} of ${summary.runs}${split}`,
    );
  }
  return lines.join('\n') + '\n';
}

/**
 * The text report: per run, each refused call and answer with state and
 * reason (`summaryOnly` leaves them out), then the summary. Every line is
 * passed through `printable`, so a tool name, run id or file name cannot
 * forge a line or drive the terminal.
 */
export function formatAuditText(report: AuditReport, options: { title?: string; summaryOnly?: boolean } = {}): string {
  let text = options.title ? `${printable(options.title)}\n\n` : '';
  if (!options.summaryOnly) text += report.runs.map(formatRunText).join('') + '\n';
  return text + formatSummaryText(report.summary);
}
