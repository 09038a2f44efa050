/**
 * A plain-TypeScript reference implementation of the safety gate, for the
 * benchmark's baseline: the same decisions as `safetyMachine` and
 * `createSessionGuard`, written as a hand-coded gate would be (mutable
 * fields, a switch on the state, no statechart runtime). The benchmark
 * checks it agrees with the statechart, snapshot for snapshot, before it
 * times anything.
 *
 * Spec: ASSISTANT_SAFETY.md; DESIGN.md §3 (as machines/safety.machine.ts).
 */
import {
  ANSWER_BLOCK_REASONS,
  ErrCodeFSMBlocked,
  MAX_FAILED_WRITES,
  MAX_IN_FLIGHT,
  RECOVERY_TTL_MS,
  TOOL_BLOCK_REASONS,
  recoveryIdFor,
} from '../machines/safety.policy.js';
import type {
  AnswerBlockRule,
  BlockRule,
  FailedWrite,
  GateDecidedEvent,
  InFlightCall,
  PendingRecovery,
  SafetyContext,
  SafetyEvent,
  SafetyState,
  ToolKind,
} from '../machines/safety.types.js';
import { TOOL_KINDS } from '../machines/safety.types.js';
import type { RecordResult, ToolCall } from '../src/guard/session-guard.js';
import type { AuditGate, AuditGateOf } from '../src/audit/audit.js';
import { classifyToolCall, type Classifier } from '../src/classify/catalog/index.js';
import { writeKeyOf } from '../src/guard/write-key.js';

/** What the reference decided on a request (tool call or final answer). */
export interface ReferenceDecision {
  allowed: boolean;
  kind: ToolKind | null;
  rule: BlockRule | null;
}

function isDiscovery(kind: ToolKind): boolean {
  return kind === 'resolve' || kind === 'read';
}

function validKind(kind: unknown): ToolKind {
  return TOOL_KINDS.includes(kind as ToolKind) ? (kind as ToolKind) : 'write';
}

/** The machine's semantics, event by event, on mutable fields. */
export class ReferenceMachine implements SafetyContext {
  state: SafetyState = 'RESOLVING';
  wroteThisEpisode = false;
  readAfterWrite = false;
  consecutiveVerifyBlocks = 0;
  finalAnswerBlocks = 0;
  lastWriteTool: string | null = null;
  lastWriteAt: number | null = null;
  lastReadTool: string | null = null;
  lastReadAt: number | null = null;
  pendingRecoveries: Record<string, PendingRecovery> = {};
  inFlight: InFlightCall[] = [];
  writeSeq = 0;
  anonSeq = 0;
  checksCalls = false;
  strictFailedWrites: boolean;
  // Targets and destructive confirmation (DESIGN.md §5): the benchmark's
  // workloads name no targets and leave confirmDestructive off, so the
  // reference keeps them at rest, as the machine does for such calls.
  establishedTargets: string[] = [];
  writeTargets: string[] = [];
  writeDestructive = false;
  confirmedSinceWrite = false;
  confirmDestructive = false;
  /** Failed writes that may have happened (issue 28's `repeated-write`), by key; the workloads name no targets. */
  failedWrites: FailedWrite[] | undefined = undefined;

  constructor(strictFailedWrites = false) {
    this.strictFailedWrites = strictFailedWrites;
  }

  /** A deep copy (for graph traversal). */
  clone(): ReferenceMachine {
    const copy = new ReferenceMachine(this.strictFailedWrites);
    Object.assign(copy, this);
    copy.pendingRecoveries = { ...this.pendingRecoveries };
    copy.inFlight = this.inFlight.slice();
    copy.establishedTargets = this.establishedTargets.slice();
    copy.writeTargets = this.writeTargets.slice();
    copy.failedWrites = this.failedWrites?.slice();
    return copy;
  }

  /** Applies one event; returns the decision for requests, else null. */
  send(event: SafetyEvent): ReferenceDecision | null {
    switch (event.type) {
      case 'tool.requested':
        return this.request(event.tool, validKind(event.kind), event.callId ?? null, event.at, event.writeKey);
      case 'tool.succeeded':
        this.succeeded(event.tool, validKind(event.kind), event.callId ?? null, event.at);
        return null;
      case 'tool.failed':
        this.failed(event.tool, validKind(event.kind), event.callId ?? null, event.at, event.writeKey);
        return null;
      case 'answer.requested':
        return this.answer();
      case 'verification.completed':
        if (this.canCompleteVerification()) {
          this.readAfterWrite = false;
          this.consecutiveVerifyBlocks = 0;
          this.state = 'READING';
        }
        return null;
      case 'session.reset': {
        const checksCalls = this.checksCalls;
        Object.assign(this, new ReferenceMachine(this.strictFailedWrites));
        this.checksCalls = checksCalls;
        return null;
      }
      case 'session.resetKeepingProgress':
        this.wroteThisEpisode = false; // DESIGN.md §1: ResetKeepProgress clears it
        this.writeTargets = [];
        this.writeDestructive = false;
        this.confirmedSinceWrite = false;
        this.readAfterWrite = false;
        this.consecutiveVerifyBlocks = 0;
        this.finalAnswerBlocks = 0;
        this.inFlight = [];
        if (this.state === 'WRITING' || this.state === 'VERIFYING') this.state = this.lastReadAt === null ? 'RESOLVING' : 'READING';
        return null;
      case 'clock.ticked':
        this.pendingRecoveries = this.liveRecoveries(event.at);
        return null;
    }
  }

  /** VERIFYING, verified, and no write in flight. */
  canCompleteVerification(): boolean {
    return this.state === 'VERIFYING' && this.readAfterWrite && !this.hasWriteInFlight();
  }

  private hasWriteInFlight(): boolean {
    return this.inFlight.some((call) => call.kind === 'write');
  }

  private liveRecoveries(at: number): Record<string, PendingRecovery> {
    const live: Record<string, PendingRecovery> = {};
    for (const id in this.pendingRecoveries) {
      const recovery = this.pendingRecoveries[id]!;
      if (at - recovery.lastBlockedAt <= RECOVERY_TTL_MS) live[id] = recovery;
    }
    return live;
  }

  private request(tool: string, kind: ToolKind, callId: string | null, at: number, writeKey?: string): ReferenceDecision {
    const repeated = kind === 'write' && writeKey !== undefined && (this.failedWrites ?? []).some((failed) => failed.key === writeKey);
    if (kind === 'write' && (repeated || this.state !== 'READING')) {
      const rule: BlockRule = repeated
        ? 'repeated-write'
        : this.state === 'RESOLVING'
          ? 'no-target'
          : this.state === 'WRITING'
            ? 'write-in-flight'
            : 'unverified-write';
      const recoveryId = recoveryIdFor(ErrCodeFSMBlocked, tool);
      const live = this.liveRecoveries(at);
      const previous = Object.prototype.hasOwnProperty.call(live, recoveryId) ? live[recoveryId] : undefined;
      live[recoveryId] = previous
        ? { ...previous, lastBlockedAt: at, attempts: previous.attempts + 1 }
        : { recoveryId, errorCode: ErrCodeFSMBlocked, tool, createdAt: at, lastBlockedAt: at, attempts: 1 };
      this.pendingRecoveries = live;
      if (this.state === 'VERIFYING') this.consecutiveVerifyBlocks += 1;
      return { allowed: false, kind, rule };
    }
    const key = callId !== null ? `id:${callId}` : `anon:${this.anonSeq}`;
    const call: InFlightCall = {
      key,
      tool,
      kind,
      admittedAt: at,
      verifiesWrite: this.state === 'VERIFYING' && isDiscovery(kind) ? this.writeSeq : null,
      ...(writeKey === undefined ? {} : { writeKey }),
    };
    const inFlight = this.inFlight.filter((c) => c.key !== key || c.kind === 'write');
    inFlight.push(call);
    if (inFlight.length > MAX_IN_FLIGHT) {
      const oldest = inFlight.findIndex((c) => c.kind !== 'write');
      if (oldest >= 0) inFlight.splice(oldest, 1);
    }
    this.inFlight = inFlight;
    if (callId === null) this.anonSeq += 1;
    this.checksCalls = true;
    if (kind === 'write') this.state = 'WRITING';
    return { allowed: true, kind, rule: null };
  }

  private settledIndex(tool: string, callId: string | null): number {
    if (callId !== null) return this.inFlight.findIndex((call) => call.key === `id:${callId}`);
    return this.inFlight.findIndex((call) => call.key.startsWith('anon:') && call.tool === tool);
  }

  private settle(index: number): void {
    if (index >= 0) this.inFlight = this.inFlight.filter((_, i) => i !== index);
  }

  private recordWrite(tool: string, settled: InFlightCall | undefined, at: number): void {
    this.wroteThisEpisode = true;
    this.readAfterWrite = false;
    this.consecutiveVerifyBlocks = 0;
    this.lastWriteTool = tool || (settled?.tool ?? '');
    this.lastWriteAt = at;
    this.writeSeq += 1;
    this.writeTargets = [];
    this.writeDestructive = false;
    this.confirmedSinceWrite = false;
    this.state = 'VERIFYING';
  }

  private clearPendingRecovery(tool: string, at: number): void {
    const recoveryId = recoveryIdFor(ErrCodeFSMBlocked, tool);
    const live = this.liveRecoveries(at);
    if (Object.prototype.hasOwnProperty.call(live, recoveryId)) {
      delete live[recoveryId];
      this.pendingRecoveries = live;
    } else if (Object.keys(live).length !== Object.keys(this.pendingRecoveries).length) {
      this.pendingRecoveries = live;
    }
  }

  private succeeded(tool: string, eventKind: ToolKind, callId: string | null, at: number): void {
    const index = this.settledIndex(tool, callId);
    const settled = index >= 0 ? this.inFlight[index] : undefined;
    const kind = settled?.kind ?? eventKind;
    if (kind === 'write') {
      this.recordWrite(tool, settled, at);
    } else if (isDiscovery(kind)) {
      const verifies = this.state === 'VERIFYING' && (settled === undefined ? !this.checksCalls : settled.verifiesWrite === this.writeSeq);
      this.lastReadTool = tool;
      this.lastReadAt = at;
      if (verifies) {
        this.readAfterWrite = true;
        this.consecutiveVerifyBlocks = 0;
      }
      if (this.state === 'RESOLVING') this.state = 'READING';
      // A read clears the failed writes without targets (all of them here), unless it was never checked in a checking session.
      if (this.failedWrites !== undefined && (settled !== undefined || !this.checksCalls)) this.failedWrites = undefined;
    } else if (kind === 'user_input' && (!this.checksCalls || settled !== undefined)) {
      this.confirmedSinceWrite = true; // confirms the next write to a place known only at run time (issue 24)
    }
    this.settle(index);
    this.clearPendingRecovery(tool, at);
  }

  private failed(tool: string, eventKind: ToolKind, callId: string | null, at: number, writeKey?: string): void {
    const index = this.settledIndex(tool, callId);
    const settled = index >= 0 ? this.inFlight[index] : undefined;
    const kind = settled?.kind ?? eventKind;
    const key = settled === undefined ? writeKey : settled.writeKey;
    if (kind === 'write' && key !== undefined) {
      const kept = [...(this.failedWrites ?? []).filter((failed) => failed.key !== key), { key, tool: settled?.tool ?? tool, at }];
      this.failedWrites = kept.length > MAX_FAILED_WRITES ? kept.slice(1) : kept;
    }
    if (this.strictFailedWrites && kind === 'write') {
      this.recordWrite(tool, settled, at);
    }
    this.settle(index);
    if (!this.strictFailedWrites && kind === 'write' && this.state === 'WRITING' && !this.hasWriteInFlight()) {
      this.state = 'READING';
    }
  }

  private answer(): ReferenceDecision {
    let rule: BlockRule | null = null;
    if (this.state === 'WRITING') rule = 'write-in-flight';
    else if (this.state === 'VERIFYING') {
      rule = !this.readAfterWrite ? 'unverified-write' : this.hasWriteInFlight() ? 'write-in-flight' : null;
    }
    if (rule !== null) this.finalAnswerBlocks += 1;
    return { allowed: rule === null, kind: null, rule };
  }
}

/** The reference's adapter: classification, a clock, auto-completed verification, as `createSessionGuard`. */
export class ReferenceGuard {
  readonly machine: ReferenceMachine;

  constructor(
    private readonly now: () => number,
    private readonly classify: Classifier = classifyToolCall,
    strictFailedWrites = false,
  ) {
    this.machine = new ReferenceMachine(strictFailedWrites);
  }

  /** The call last checked and its kind, so its record is not classified again (as the guard does). */
  private checked: { call: ToolCall; kind: ToolKind } | null = null;

  private kindOf(call: ToolCall): ToolKind {
    if (call.kind !== undefined) return validKind(call.kind);
    try {
      return validKind(this.classify(call.name, call.args));
    } catch {
      return 'write';
    }
  }

  check(call: ToolCall): ReferenceDecision {
    const kind = this.kindOf(call);
    const writeKey = kind === 'write' ? writeKeyOf(call.name, call.args) : undefined;
    const decision = this.machine.send({
      type: 'tool.requested',
      tool: call.name,
      kind,
      at: this.now(),
      ...(call.id === undefined ? {} : { callId: call.id }),
      ...(writeKey === undefined ? {} : { writeKey }),
    })!;
    this.checked = decision.allowed && call.id !== undefined ? { call, kind } : null;
    return decision;
  }

  record(call: ToolCall, outcome: 'success' | 'error' = 'success'): void {
    const checked = this.checked;
    this.checked = null;
    const same =
      checked !== null &&
      call.kind === undefined &&
      checked.call.id === call.id &&
      checked.call.name === call.name &&
      checked.call.args === call.args;
    const kind = same ? checked.kind : this.kindOf(call);
    const type = outcome === 'success' ? 'tool.succeeded' : 'tool.failed';
    const writeKey = type === 'tool.failed' && kind === 'write' ? writeKeyOf(call.name, call.args) : undefined;
    this.machine.send({
      type,
      tool: call.name,
      kind,
      at: this.now(),
      ...(call.id === undefined ? {} : { callId: call.id }),
      ...(writeKey === undefined ? {} : { writeKey }),
    });
    if (this.machine.canCompleteVerification()) {
      this.machine.send({ type: 'verification.completed', at: this.now() });
    }
  }

  finalAnswer(): ReferenceDecision {
    return this.machine.send({ type: 'answer.requested', at: this.now() })!;
  }

  reset(): void {
    this.machine.send({ type: 'session.reset', at: this.now() });
  }

  resetKeepProgress(): void {
    this.machine.send({ type: 'session.resetKeepingProgress', at: this.now() });
  }
}

/**
 * The reference as the gate an audit replays through (`AuditGateOf`): the
 * same decision events and recoveries as the session guard, for the calls
 * an audit sends (a kind given, no targets, no self-verifying results; the
 * benchmark checks the two audits' reports are identical). So an audit
 * through it costs the reference's decisions plus the report's own work.
 */
export class ReferenceAuditGate implements AuditGate {
  readonly machine: ReferenceMachine;

  constructor(
    private readonly now: () => number,
    strictFailedWrites = false,
  ) {
    this.machine = new ReferenceMachine(strictFailedWrites);
  }

  get state(): SafetyState {
    return this.machine.state;
  }

  get context(): SafetyContext {
    return this.machine;
  }

  decideCall(call: ToolCall): GateDecidedEvent {
    const state = this.machine.state;
    const at = this.now();
    const kind = validKind(call.kind);
    const writeKey = kind === 'write' ? writeKeyOf(call.name, call.args) : undefined;
    const decision = this.machine.send({
      type: 'tool.requested',
      tool: call.name,
      kind,
      at,
      ...(call.id === undefined ? {} : { callId: call.id }),
      ...(writeKey === undefined ? {} : { writeKey }),
    })!;
    const rule = decision.rule;
    return {
      type: 'gate.decided',
      subject: 'tool',
      allowed: decision.allowed,
      state,
      tool: call.name,
      kind,
      callId: call.id ?? null,
      rule,
      reason: rule === null ? null : TOOL_BLOCK_REASONS[rule],
      recoveryId: rule === null ? null : recoveryIdFor(ErrCodeFSMBlocked, call.name),
      at,
    };
  }

  decideAnswer(): GateDecidedEvent {
    const state = this.machine.state;
    const at = this.now();
    const { allowed, rule } = this.machine.send({ type: 'answer.requested', at })!;
    return {
      type: 'gate.decided',
      subject: 'answer',
      allowed,
      state,
      tool: null,
      kind: null,
      callId: null,
      rule,
      reason: rule === null ? null : ANSWER_BLOCK_REASONS[rule as AnswerBlockRule],
      recoveryId: null,
      at,
    };
  }

  record(call: ToolCall, outcome: 'success' | 'error' = 'success'): RecordResult {
    const at = this.now();
    // A success clears its tool's live pending recovery: that is the recovery.
    const pending = outcome === 'success' ? this.machine.pendingRecoveries[recoveryIdFor(ErrCodeFSMBlocked, call.name)] : undefined;
    const recovered = pending !== undefined && at - pending.lastBlockedAt <= RECOVERY_TTL_MS ? pending : undefined;
    const type = outcome === 'success' ? 'tool.succeeded' : 'tool.failed';
    const kind = validKind(call.kind);
    const writeKey = type === 'tool.failed' && kind === 'write' ? writeKeyOf(call.name, call.args) : undefined;
    this.machine.send({
      type,
      tool: call.name,
      kind,
      at,
      ...(call.id === undefined ? {} : { callId: call.id }),
      ...(writeKey === undefined ? {} : { writeKey }),
    });
    if (this.machine.canCompleteVerification()) this.machine.send({ type: 'verification.completed', at });
    return recovered === undefined ? {} : { recovered };
  }

  reset(): void {
    this.machine.send({ type: 'session.reset', at: this.now() });
  }

  resetKeepProgress(): void {
    this.machine.send({ type: 'session.resetKeepingProgress', at: this.now() });
  }

  tick(): void {
    this.machine.send({ type: 'clock.ticked', at: this.now() });
  }
}

/** Makes a `ReferenceAuditGate` per run, as `auditRuns` takes it. */
export const referenceAuditGateOf: AuditGateOf = ({ now, strictFailedWrites }) => new ReferenceAuditGate(now, strictFailedWrites);
