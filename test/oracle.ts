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

/**
 * A call as the loop sees it: an optional id (an empty one is none), the
 * tool's name, its kind. For an outcome, `nameOnly` says the loop named the
 * tool and nothing more (no kind, no arguments): `kind` is then only what
 * the name suggests, and says nothing about which of a tool's calls it was.
 */
export interface OracleCall {
  id?: string;
  tool: string;
  kind: OracleKind;
  nameOnly?: boolean;
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

/** A call's id; an empty id is no id. */
const idOf = (call: OracleCall): string | null => (call.id === undefined || call.id === '' ? null : call.id);

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

  /**
   * A tool call asks to run. Only writes are ever refused (ASSISTANT_SAFETY.md "Reads are never blocked").
   * @throws TypeError when a call of the same id is still in flight: one outcome could not say which
   *   of the two it belongs to, so the second is not looked at, and nothing changes.
   */
  check(call: OracleCall, at: number): OracleCheck {
    const id = idOf(call);
    if (id !== null && this.admitted.some((c) => c.id === id)) throw new TypeError(`call id ${id} is in flight already`);
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
    const settled = this.settle(call, outcome);
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

  /** Track an admitted call (its id is not in flight: `check` saw to that). */
  private admit(call: OracleCall): void {
    this.checksCalls = true;
    this.admitted.push({
      id: idOf(call),
      tool: call.tool,
      kind: call.kind,
      evidenceFor: this.state === 'VERIFYING' && isDiscovery(call.kind) ? this.writes : null,
    });
  }

  /**
   * What a success of an admitted call would give the session: nothing but
   * a duty for a write (it must then be verified), nothing for user input
   * or computation, a target for a resolve or read, and, for one admitted
   * after the current write succeeded, the evidence that verifies it.
   */
  private gain(c: AdmittedCall): number {
    if (c.kind === 'write') return 0;
    if (!isDiscovery(c.kind)) return 1;
    return c.evidenceFor === this.writes ? 3 : 2;
  }

  /**
   * The admitted call an outcome is taken as, and the call in flight it
   * ends. It may belong to any admitted call that shares its id or, without
   * an id, to any call of its tool that was checked without one. Null when
   * there is none (an outcome recorded without a check).
   *
   * Where it could belong to more than one (DESIGN.md §3.4 matches by id;
   * the spec is silent on calls that share one), the loop's own word is
   * taken first: a kind it gave (not merely read from the name) keeps only
   * the calls of that kind, if any. Whatever is left unsure is resolved
   * against the session: a success is taken as the one whose success gains
   * least (a write before anything else), a failure as the one whose success
   * would gain most (a write last). The calls still in flight must be the
   * least generous guess at what is to come, so the one that leaves is the
   * one taken, except a write taken as succeeded: it may still be running,
   * so it stays in flight until every call it could be mistaken for has its
   * outcome, and the most generous of the others leaves instead. A failure
   * that says it is not a write's never ends a write. Among equals the
   * oldest call is taken.
   */
  private settle(call: OracleCall, outcome: 'success' | 'error'): AdmittedCall | null {
    const id = idOf(call);
    const sharing = this.admitted.filter((c) => (id !== null ? c.id === id : c.id === null && c.tool === call.tool));
    if (sharing.length === 0) return null;
    const sameKind = call.nameOnly === true ? [] : sharing.filter((c) => c.kind === call.kind);
    const open = sameKind.length > 0 ? sameKind : sharing;
    const ordered = [...open].sort((a, b) => this.gain(a) - this.gain(b)); // stable: oldest first among equals
    const meekest = ordered[0]!;
    const boldest = ordered.find((c) => this.gain(c) === this.gain(ordered[ordered.length - 1]!))!;
    if (outcome === 'success') {
      this.admitted.splice(this.admitted.indexOf(meekest.kind === 'write' ? boldest : meekest), 1);
      return meekest;
    }
    if (boldest.kind === 'write' && call.nameOnly !== true && call.kind !== 'write') return null;
    this.admitted.splice(this.admitted.indexOf(boldest), 1);
    return boldest;
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
