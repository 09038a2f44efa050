/**
 * The audit's text report: a header saying what shadow mode means and what
 * the codes are, one headline per run with what the gate would have
 * refused and the recoveries, the summary's figures with each rule in
 * words, and the policies side by side. Every line that can carry text from
 * the input (a tool name, run id or file name) passes through `printable`,
 * so it cannot forge a line or drive the terminal. Kept apart from the
 * replay, which builds the figures printed here. The protocol's own strings
 * (the `POLICY_BLOCKED:` reasons, the `FSM_BLOCKED` code) stay as they are
 * in the JSON report and in the tool results; only this report words them.
 *
 * Spec: ASSISTANT_SAFETY.md "Blocked calls and recovery"; DESIGN.md §3.1,
 * §5.3-5.4 (validated targets, evidence that touches the target).
 */
import type { BlockRule } from '../../machines/safety.types.js';
import { printable } from '../util/printable.js';
import type { AuditPolicy, AuditReport, AuditSummary, EarlierWrite, Refusal, RunAudit } from './audit.js';

/**
 * The report's words for each rule (`BlockRule`), printed in the summary:
 * what it refuses and what clears it (`CLEARED_BY`, with the target rule of
 * machines/safety.targets.ts). A new rule adds a row (the type asks for one).
 */
const RULE_WORDS: Readonly<Record<BlockRule, { why: string; clearedBy: string }>> = {
  'no-target': {
    why: 'a write before anything was looked up or read in the session',
    clearedBy: 'any read or lookup that succeeds',
  },
  'unknown-target': {
    why: 'a write on a target no read or lookup of the session validated',
    clearedBy:
      "a read of the target itself or of a directory above it (a place known only when the call runs, ?/…, only by the user's answer)",
  },
  'unverified-write': {
    why: 'a write or an answer while an earlier write has no evidence of its effect',
    clearedBy: 'a read, after that write, that touches its target (the target, a directory above it, or a path in it)',
  },
  'write-in-flight': {
    why: 'a write or an answer while an earlier write is still running',
    clearedBy: "that write's outcome",
  },
  'needs-confirmation': {
    why: 'a destructive write the user has not confirmed since the last write',
    clearedBy: "the user's answer to a question",
  },
  'repeated-write': {
    why: 'the same write (same tool, same arguments) as one that failed or timed out and may still have happened',
    clearedBy: "a successful read or lookup that touches that write's target",
  },
  'phantom-claim': {
    why: 'a final answer claiming a change no successful write of the session made',
    clearedBy: 'a successful write that makes the change (touching the place the claim names), or an answer that does not claim it',
  },
};

/** The prefix of every rule's reason in the protocol (the original's marker), left out of the report's lines. */
const REASON_PREFIX = 'POLICY_BLOCKED: ';

/**
 * The report's header, after its title: what shadow mode means (every call
 * ran; a refusal is what the gate would have done) and the two codes of the
 * protocol, explained once.
 */
export function formatAuditHeader(): string {
  return [
    'Shadow mode: every call and answer of the transcript ran as recorded. The gate checked each one',
    'and this report lists those it would have refused; the session then follows what really happened.',
    'A refusal would have reached the model as an FSM_BLOCKED error (the code of every refusal) whose reason',
    'starts with POLICY_BLOCKED: (the mark of a safety rule, left out below) and says what evidence was',
    'missing. [rule] names the rule; the summary says what each rule refuses and what clears it.',
    '',
  ].join('\n');
}

/** `write 'Bash' on /a, /b` (a write's tool and targets). */
function describeCall(kind: string, tool: string, targets: readonly string[], destructive = false): string {
  return `${destructive ? 'destructive ' : ''}${kind} '${tool}'${targets.length > 0 ? ` on ${targets.join(', ')}` : ''}`;
}

/** The earlier write a refusal waits on, in words: `the write at line 5 ('Bash' on /a)`. */
function describeEarlierWrite(write: EarlierWrite): string {
  return `the write at ${write.position} ('${write.tool}'${write.targets.length > 0 ? ` on ${write.targets.join(', ')}` : ''})`;
}

/**
 * A refusal's reason in the report's words: the protocol's reason without
 * its `POLICY_BLOCKED:` mark and `(target: …)` suffix, then what the target
 * is: which earlier write has no evidence or is still running, or the target
 * no read validated.
 */
function reasonWords(refusal: Refusal): string {
  let reason = refusal.reason.startsWith(REASON_PREFIX) ? refusal.reason.slice(REASON_PREFIX.length) : refusal.reason;
  const suffix = refusal.target === null ? null : ` (target: ${JSON.stringify(refusal.target)})`;
  if (suffix !== null && reason.endsWith(suffix)) reason = reason.slice(0, -suffix.length);
  const earlier = refusal.earlierWrite;
  if (refusal.rule === 'unverified-write') {
    if (earlier !== null) return `${reason}: ${describeEarlierWrite(earlier)} has none yet`;
    if (refusal.target !== null) return `${reason}: the earlier write on ${JSON.stringify(refusal.target)} has none yet`;
    return reason;
  }
  if (refusal.rule === 'write-in-flight' && earlier !== null) return `${reason}: ${describeEarlierWrite(earlier)} is still running`;
  return refusal.target === null ? reason : `${reason}: ${JSON.stringify(refusal.target)}`;
}

/**
 * A path rooted at `~`, as the targets compare it: `~` or `~/…`, but not
 * `~user` (another user's home) nor a path that climbs above `~` (`~/../x`),
 * which are compared as exact strings.
 */
function isHomeRooted(target: string): boolean {
  return (target === '~' || target.startsWith('~/')) && target !== '~/..' && !target.startsWith('~/../');
}

/**
 * The rule of targets in one line, for a refusal that names a target
 * rooted at `~` (machines/safety.targets.ts: `~` is a root of its own,
 * never expanded; a write is validated by a read of its target or a
 * directory above it, and verified by a read that touches its target).
 * Null for other refusals.
 */
function homeHint(refusal: Refusal): string | null {
  const target = refusal.target;
  if (target === null || !isHomeRooted(target)) return null;
  const root =
    '~ is a root of its own, never expanded to a home directory: a read of /home/... (or a command run in a directory there) touches no ~ path';
  if (refusal.rule === 'unknown-target') {
    const above =
      target === '~'
        ? 'only a read of ~ itself validates ~ (a read of ~/projects does not)'
        : `a read of ${target} or of a ~ directory above it validates it`;
    return `a read validates a target when it names the target or a directory above it; ${root}; ${above}`;
  }
  if (refusal.rule === 'unverified-write') {
    return `a read verifies a write when it touches its target (the target, a directory above it, or a path in it); ${root}`;
  }
  return null;
}

/** One refusal's lines: where, what would have been refused, in which state, by which rule and why; a hint for a `~` target. */
function describeRefusal(refusal: Refusal): string[] {
  const what =
    refusal.subject === 'tool'
      ? describeCall(refusal.kind ?? 'write', refusal.tool ?? '', refusal.targets, refusal.destructive)
      : 'final answer';
  const lines = [`${refusal.position}: would have been refused: ${what} in ${refusal.state} [${refusal.rule}]: ${reasonWords(refusal)}`];
  const hint = homeHint(refusal);
  if (hint !== null) lines.push(`  hint: ${hint}`);
  return lines;
}

/** `1 call`, `2 calls`: a count and its noun, singular for one. */
function counted(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/**
 * The text report's lines for one run: its headline, each refusal and recovery. Lines pass through `printable`.
 * The headline counts calls and final answers apart (answers are not calls):
 * `run c (reward 0): 3 calls, 1 would have been refused, 1 final answer would have been refused, ends in VERIFYING ...`,
 * or `run b: 1 call, nothing would have been refused, ...`.
 */
export function formatRunText(run: RunAudit): string {
  const reward = run.reward === null ? '' : ` (reward ${run.reward})`;
  const refused = [
    ...(run.blockedCalls > 0 ? [`${run.blockedCalls} would have been refused`] : []),
    ...(run.refusedAnswers > 0 ? [`${counted(run.refusedAnswers, 'final answer')} would have been refused`] : []),
  ];
  const lines = [
    `run ${run.id}${reward}: ${counted(run.calls, 'call')}, ${refused.length === 0 ? 'nothing would have been refused' : refused.join(', ')}, ends in ${run.finalState}${run.endsUnverified ? ' (unverified: a change nobody looked at)' : ''}`,
  ];
  const recoveries = new Map(run.findings.filter((f) => f.recovered).map((f) => [f.index, f]));
  const indices = [...new Set([...run.refusals.map((r) => r.index), ...recoveries.keys()])].sort((a, b) => a - b);
  const refusals = new Map(run.refusals.map((refusal) => [refusal.index, refusal]));
  for (const index of indices) {
    const refusal = refusals.get(index);
    if (refusal) lines.push(...describeRefusal(refusal).map((line) => `  ${line}`));
    const finding = recoveries.get(index);
    if (finding?.recovered) {
      lines.push(
        `  ${finding.step.position}: recovered: '${finding.recovered.tool}' succeeded after ${counted(finding.recovered.attempts, 'call')} the gate would have refused`,
      );
    }
  }
  return lines.map(printable).join('\n') + '\n';
}

/** A group of the summary: its count, its rule, and the rule in words (why it refuses, what clears it). */
function ruleLine(group: { rule: BlockRule; count: number }): string {
  const words = RULE_WORDS[group.rule];
  return `    ${String(group.count).padStart(5)}  [${group.rule}] ${words.why}; cleared by ${words.clearedBy}`;
}

/** The text report's summary block (figures, reasons, split by reward). */
export function formatSummaryText(s: AuditSummary): string {
  const lines: string[] = [];
  const pad = (label: string) => `  ${label.padEnd(24)}`;
  lines.push('summary (what the gate would have refused)');
  lines.push(`${pad('runs')}${s.runs}`);
  lines.push(`${pad('tool calls')}${s.calls}`);
  lines.push(`${pad('writes')}${s.writes}`);
  lines.push(`${pad('refused calls')}${s.blockedCalls}`);
  for (const group of s.blocksByReason) lines.push(ruleLine(group));
  lines.push(`${pad('refused answers')}${s.refusedAnswers}`);
  for (const group of s.refusedAnswersByReason) lines.push(ruleLine(group));
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
    lines.push(row('refused calls', ok.blockedCalls, ko.blockedCalls));
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
    `${'policies compared'.padEnd(24)}${'refused calls'.padEnd(16)}${'refused answers'.padEnd(18)}runs with a refusal (successful / failed)`,
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
 * The text report: the header (`formatAuditHeader`), per run each call and
 * answer the gate would have refused, with state and reason (`summaryOnly`
 * leaves them out), then the summary. Every line is passed through
 * `printable`, so a tool name, run id or file name cannot forge a line or
 * drive the terminal.
 */
export function formatAuditText(report: AuditReport, options: { title?: string; summaryOnly?: boolean } = {}): string {
  let text = options.title ? `${printable(options.title)}\n\n` : '';
  text += `${formatAuditHeader()}\n`;
  if (!options.summaryOnly) text += report.runs.map(formatRunText).join('') + '\n';
  return text + formatSummaryText(report.summary);
}
