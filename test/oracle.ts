/**
 * An independent model of the assistant safety rules, for differential
 * tests: plain TypeScript written from ASSISTANT_SAFETY.md and DESIGN.md §3
 * alone. It imports nothing from the statechart or the adapter, shares no
 * names with them beyond the spec's own, and keeps its state in plain fields
 * rather than a context object, so that a slip in one is unlikely to be
 * repeated in the other.
 *
 * Where the spec is silent, the choice made here is written beside the code.
 */

/** Tool kinds (ASSISTANT_SAFETY.md "Tool kinds"; `neutral` from DESIGN.md §3.6). */
export type OracleKind = 'resolve' | 'read' | 'write' | 'user_input' | 'neutral';

/** Session states (ASSISTANT_SAFETY.md "States"). */
export type OracleState = 'RESOLVING' | 'READING' | 'WRITING' | 'VERIFYING';

/**
 * Why something was refused, in this model's own words:
 * - `no-target`: a write before any target was established;
 * - `unverified`: a write or the final answer while the last write lacks evidence;
 * - `in-flight`: a write or the final answer while an admitted write has no outcome yet.
 */
export type RefusalCause = 'no-target' | 'unverified' | 'in-flight';

/** Pending recoveries expire ten minutes after their latest block (ASSISTANT_SAFETY.md; DESIGN.md §3.5). */
export const TEN_MINUTES_MS = 10 * 60 * 1000;

/** A call as the loop sees it: an optional id, the tool's name, its kind. */
export interface OracleCall {
  id?: string;
  tool: string;
  kind: OracleKind;
}

/** The answer to a tool check. `state` is where the session stood when it was asked. */
export interface OracleCheck {
  allowed: boolean;
  state: OracleState;
  cause: RefusalCause | null;
  /** DESIGN.md §1's text form up to the reason, for refusals: `FSM blocked tool '<tool>' (<kind>) in state <STATE>: `. */
  messagePrefix: string | null;
}

/** The answer to a final-answer request. */
export interface OracleAnswer {
  allowed: boolean;
  state: OracleState;
  cause: RefusalCause | null;
  /** `FSM blocked in state <STATE>: ` for refusals. */
  messagePrefix: string | null;
}

/** A remembered blocked operation (ASSISTANT_SAFETY.md "Blocked calls and recovery"). */
export interface OraclePending {
  tool: string;
  attempts: number;
  firstBlockedAt: number;
  lastBlockedAt: number;
}

/** Everything the model says about a session at a moment (times in epoch ms). */
export interface OracleView {
  state: OracleState;
  wroteThisEpisode: boolean;
  readAfterWrite: boolean;
  blockedWritesWhileVerifying: number;
  refusedAnswers: number;
  lastWrite: { tool: string; at: number } | null;
  lastRead: { tool: string; at: number } | null;
  /** Live pending recoveries, by tool name (sorted). */
  pending: OraclePending[];
}

/** Options, as DESIGN.md §3.8 and the seed's CompleteVerification describe them. */
export interface OracleOptions {
  /** A failed write may have applied: it needs verification like a successful one. */
  strictFailedWrites?: boolean;
  /** Complete verification as soon as it is possible after a recorded outcome (the original loop's habit); default true. */
  autoCompleteVerification?: boolean;
}

interface AdmittedCall {
  id: string | null;
  tool: string;
  kind: OracleKind;
  /**
   * The number of the successful write this call can serve as evidence for:
   * set when a resolve or read is admitted in VERIFYING (so after that
   * write succeeded); null otherwise (DESIGN.md §3.4).
   */
  evidenceFor: number | null;
}

const isDiscovery = (kind: OracleKind) => kind === 'resolve' || kind === 'read';

/**
 * The safety rules of one session. Every method takes the time of the event
 * (epoch ms); times given to one session never go backwards.
 */
export class SafetyOracle {
  private state: OracleState = 'RESOLVING';
  private wroteThisEpisode = false;
  private readAfterWrite = false;
  private blockedWritesWhileVerifying = 0;
  private refusedAnswers = 0;
  private lastWrite: { tool: string; at: number } | null = null;
  private lastRead: { tool: string; at: number } | null = null;
  /** Successful (or, strictly, failed) writes so far; numbers the write that evidence is for. */
  private writes = 0;
  /** Admitted calls without a recorded outcome, oldest first. */
  private admitted: AdmittedCall[] = [];
  private pending = new Map<string, OraclePending>();
  /**
   * Whether this session has ever admitted a call. DESIGN.md §3.4 counts a
   * read as evidence only if it was admitted after the write; a loop that
   * never checks anything (the seed's record-only style) would then never
   * verify, so such a session keeps the seed's rule: a read recorded in
   * VERIFYING is evidence. It describes the loop, not the conversation, so
   * resets keep it.
   */
  private checksCalls = false;
  private readonly strict: boolean;
  private readonly autoComplete: boolean;

  constructor(options: OracleOptions = {}) {
    this.strict = options.strictFailedWrites === true;
    this.autoComplete = options.autoCompleteVerification !== false;
  }

  /** A tool call asks to run. Only writes are ever refused (ASSISTANT_SAFETY.md "Reads are never blocked"). */
  check(call: OracleCall, at: number): OracleCheck {
    const state = this.state;
    if (call.kind === 'write') {
      const cause: RefusalCause | null =
        state === 'RESOLVING' ? 'no-target' : state === 'VERIFYING' ? 'unverified' : state === 'WRITING' ? 'in-flight' : null;
      if (cause !== null) {
        if (state === 'VERIFYING') this.blockedWritesWhileVerifying += 1;
        this.remember(call.tool, at);
        return { allowed: false, state, cause, messagePrefix: `FSM blocked tool '${call.tool}' (${call.kind}) in state ${state}: ` };
      }
      this.state = 'WRITING'; // DESIGN.md §3.3: entered when a write is admitted
    }
    this.admit(call);
    return { allowed: true, state, cause: null, messagePrefix: null };
  }

  /** A call ran: record its outcome. Returns the pending recovery a success cleared, if any. */
  record(call: OracleCall, outcome: 'success' | 'error', at: number): OraclePending | null {
    const settled = this.settle(call);
    const kind = settled?.kind ?? call.kind; // the admitted kind wins
    let recovered: OraclePending | null = null;
    if (outcome === 'success') {
      if (kind === 'write') this.wrote(call.tool, at);
      else if (isDiscovery(kind)) this.readSucceeded(call.tool, at, settled);
      recovered = this.recover(call.tool, at);
    } else if (kind === 'write') {
      if (this.strict) this.wrote(call.tool, at);
      else if (settled !== null && this.state === 'WRITING' && !this.writeInFlight()) this.state = 'READING';
      // Otherwise a failed call changes nothing (DESIGN.md §1).
    }
    if (this.autoComplete) this.completeVerification(at);
    return recovered;
  }

  /** CanFinalAnswer: refused while a write is unverified or in flight. */
  finalAnswer(at: number): OracleAnswer {
    void at;
    const state = this.state;
    const cause: RefusalCause | null =
      state === 'VERIFYING' && !this.readAfterWrite ? 'unverified' : this.writeInFlight() ? 'in-flight' : null;
    if (cause === null) return { allowed: true, state, cause, messagePrefix: null };
    this.refusedAnswers += 1;
    return { allowed: false, state, cause, messagePrefix: `FSM blocked in state ${state}: ` };
  }

  /** CompleteVerification: a verified session with no write in flight goes back to READING. True when it did. */
  completeVerification(at: number): boolean {
    void at;
    if (this.state !== 'VERIFYING' || !this.readAfterWrite || this.writeInFlight()) return false;
    this.state = 'READING';
    this.readAfterWrite = false;
    this.blockedWritesWhileVerifying = 0;
    return true;
  }

  /** Reset: RESOLVING, all tracking cleared, pending recoveries included (DESIGN.md §3.2). */
  reset(at: number): void {
    void at;
    this.state = 'RESOLVING';
    this.wroteThisEpisode = false;
    this.readAfterWrite = false;
    this.blockedWritesWhileVerifying = 0;
    this.refusedAnswers = 0;
    this.lastWrite = null;
    this.lastRead = null;
    this.writes = 0;
    this.admitted = [];
    this.pending.clear();
  }

  /**
   * ResetKeepProgress: verification tracking dropped (flags, counters, the
   * calls in flight); the target, the last read and write, pending
   * recoveries and "wrote this episode" kept (DESIGN.md §3.2).
   */
  resetKeepProgress(at: number): void {
    void at;
    if (this.state === 'VERIFYING' || this.state === 'WRITING') this.state = 'READING';
    this.readAfterWrite = false;
    this.blockedWritesWhileVerifying = 0;
    this.refusedAnswers = 0;
    this.admitted = [];
  }

  /** The session at time `at`: pending recoveries past their ten minutes are left out. */
  view(at: number): OracleView {
    const pending = [...this.pending.values()]
      .filter((entry) => this.alive(entry, at))
      .map((entry) => ({ ...entry }))
      .sort((a, b) => (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0));
    return {
      state: this.state,
      wroteThisEpisode: this.wroteThisEpisode,
      readAfterWrite: this.readAfterWrite,
      blockedWritesWhileVerifying: this.blockedWritesWhileVerifying,
      refusedAnswers: this.refusedAnswers,
      lastWrite: this.lastWrite && { ...this.lastWrite },
      lastRead: this.lastRead && { ...this.lastRead },
      pending,
    };
  }

  // -------------------------------------------------------------------------

  /** An entry lives for ten minutes after its latest block, the tenth minute included. */
  private alive(entry: OraclePending, at: number): boolean {
    return at - entry.lastBlockedAt <= TEN_MINUTES_MS;
  }

  /** A block opens a pending recovery for the tool, or bumps the live one (DESIGN.md §3.5). */
  private remember(tool: string, at: number): void {
    const entry = this.pending.get(tool);
    if (entry !== undefined && this.alive(entry, at)) {
      entry.attempts += 1;
      entry.lastBlockedAt = at;
    } else {
      this.pending.set(tool, { tool, attempts: 1, firstBlockedAt: at, lastBlockedAt: at });
    }
  }

  /** A successful call of a tool clears its live pending recovery: a recovery. */
  private recover(tool: string, at: number): OraclePending | null {
    const entry = this.pending.get(tool);
    if (entry === undefined) return null;
    this.pending.delete(tool);
    return this.alive(entry, at) ? { ...entry } : null;
  }

  /**
   * Track an admitted call. A call id names one call: checking an id again
   * replaces the earlier call of that id, except an admitted write, which
   * stays in flight until its own outcome is recorded (the spec never lets
   * anything but that outcome end a write in flight); the new call then
   * waits behind it under the same id.
   */
  private admit(call: OracleCall): void {
    this.checksCalls = true;
    const id = call.id ?? null;
    if (id !== null) this.admitted = this.admitted.filter((c) => c.id !== id || c.kind === 'write');
    this.admitted.push({
      id,
      tool: call.tool,
      kind: call.kind,
      evidenceFor: this.state === 'VERIFYING' && isDiscovery(call.kind) ? this.writes : null,
    });
  }

  /**
   * The admitted call an outcome belongs to, removed from the calls in
   * flight: by id when the outcome has one; without an id, the oldest call
   * of the same tool that was checked without one. Null when none matches
   * (an outcome recorded without a check).
   */
  private settle(call: OracleCall): AdmittedCall | null {
    const id = call.id ?? null;
    const index = this.admitted.findIndex((c) => (id !== null ? c.id === id : c.id === null && c.tool === call.tool));
    if (index < 0) return null;
    const [settled] = this.admitted.splice(index, 1);
    return settled ?? null;
  }

  private writeInFlight(): boolean {
    return this.admitted.some((c) => c.kind === 'write');
  }

  /** A write happened (or, strictly, may have): VERIFYING, evidence needed again. */
  private wrote(tool: string, at: number): void {
    this.state = 'VERIFYING';
    this.wroteThisEpisode = true;
    this.readAfterWrite = false;
    this.blockedWritesWhileVerifying = 0; // the run of blocked writes is broken by a write
    this.lastWrite = { tool, at };
    this.writes += 1;
  }

  /** A resolve or read succeeded: a target in RESOLVING; evidence in VERIFYING if admitted after the write. */
  private readSucceeded(tool: string, at: number, settled: AdmittedCall | null): void {
    this.lastRead = { tool, at };
    if (this.state === 'RESOLVING') this.state = 'READING';
    if (this.state !== 'VERIFYING') return;
    const evidence = settled !== null ? settled.evidenceFor === this.writes : !this.checksCalls;
    if (evidence) {
      this.readAfterWrite = true;
      this.blockedWritesWhileVerifying = 0;
    }
  }
}
