/**
 * An independent model of the assistant safety rules, for differential
 * tests: plain TypeScript written from ASSISTANT_SAFETY.md and DESIGN.md §1,
 * §3 and §5 alone. It imports nothing from the statechart or the adapter,
 * shares no names with them beyond the spec's own, and keeps its state in
 * plain fields rather than a context object, so that a slip in one is
 * unlikely to be repeated in the other. Targets are compared here as
 * segment lists (after node's own path normalization), where the machine
 * compares canonical strings.
 *
 * Where the spec is silent, the choice made here is written beside the code.
 */
import { posix } from 'node:path';

/** Tool kinds (ASSISTANT_SAFETY.md "Tool kinds"; `neutral` from DESIGN.md §3.6). */
export type OracleKind = 'resolve' | 'read' | 'write' | 'user_input' | 'neutral';

/** Session states (ASSISTANT_SAFETY.md "States"). */
export type OracleState = 'RESOLVING' | 'READING' | 'WRITING' | 'VERIFYING';

/**
 * Why something was refused, in this model's own words:
 * - `no-target`: a write before any target was established;
 * - `unverified`: a write or the final answer while the last write lacks evidence;
 * - `in-flight`: a write or the final answer while an admitted write has no outcome yet;
 * - `unknown-resource`: a write naming a resource nothing read so far covers (DESIGN.md §5.3);
 * - `unconfirmed`: a destructive write the user has not confirmed since the last write (§5.6).
 */
export type RefusalCause = 'no-target' | 'unverified' | 'in-flight' | 'unknown-resource' | 'unconfirmed';

/** Pending recoveries expire ten minutes after their latest block (ASSISTANT_SAFETY.md; DESIGN.md §3.5). */
export const TEN_MINUTES_MS = 10 * 60 * 1000;

/** The most resources read from one call; one write naming more cannot be checked (DESIGN.md §5.1 caps). */
export const RESOURCES_PER_CALL = 32;
/** The longest resource name kept, characters. */
export const RESOURCE_NAME_LIMIT = 512;
/** The most resources a session remembers as established; the least recently read go first. */
export const REMEMBERED_RESOURCES = 256;
/** The most escaping symbolic links a session remembers (issue 24); past it, every path is taken as unknown. */
export const REMEMBERED_LINKS = 64;
/** How issue 24 spells a place that is known only when the call runs. */
const UNKNOWN_PREFIX = '?/';
/** The kinds of named place `<kind>:<name>` (issue 24), compared as names, never as paths. */
const NAMED_PLACE_KINDS = new Set(['table', 'git', 'process', 'service', 'container', 'k8s', 'host']);

/**
 * A call as the loop sees it: an optional id (an empty one is none), the
 * tool's name, its kind. For an outcome, `nameOnly` says the loop named the
 * tool and nothing more (no kind, no arguments): `kind` is then only what
 * the name suggests, and says nothing about which of a tool's calls it was.
 * `targets`: the resources it touches (DESIGN.md §5.1), when known; on an
 * outcome, given means the loop states them. `destructive`: a destructive write.
 * `links` (checks only): escaping symbolic links the call makes (issue 24).
 */
export interface OracleCall {
  id?: string;
  tool: string;
  kind: OracleKind;
  nameOnly?: boolean;
  targets?: readonly string[];
  destructive?: boolean;
  links?: readonly string[];
}

/** The answer to a tool check. `state` is where the session stood when it was asked. */
export interface OracleCheck {
  allowed: boolean;
  state: OracleState;
  cause: RefusalCause | null;
  /** The resource a refusal is about: the first unknown one, or the unverified write's first; else null. */
  resource: string | null;
  /** DESIGN.md §1's text form up to the reason, for refusals: `FSM blocked tool '<tool>' (<kind>) in state <STATE>: `. */
  messagePrefix: string | null;
}

/** The answer to a final-answer request. */
export interface OracleAnswer {
  allowed: boolean;
  state: OracleState;
  cause: RefusalCause | null;
  /** The unverified write's first resource, for a refusal of an unverified write; else null. */
  resource: string | null;
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
  /** Resources established, least recently read first (normalized names). */
  established: string[];
  /** The last write's resources, and whether it was destructive (cleared by both resets). */
  writeResources: string[];
  writeDestructive: boolean;
  /** The user answered since the last write (tracked always: it also vouches for unknown places, issue 24). */
  confirmed: boolean;
  /** Escaping links remembered (issue 24), oldest first; after too many, the three roots `/`, `~`, `.`. */
  links: string[];
}

/** Options, as DESIGN.md §3.8, §5.6, §5.8 and the seed's CompleteVerification describe them. */
export interface OracleOptions {
  /** A failed write may have applied: it needs verification like a successful one. */
  strictFailedWrites?: boolean;
  /** Complete verification as soon as it is possible after a recorded outcome (the original loop's habit); default true. */
  autoCompleteVerification?: boolean;
  /** A destructive write needs the user's answer since the last write. */
  confirmDestructive?: boolean;
  /** Tools whose successful result reports their own effect (a catalog's `selfVerifying`). */
  selfVerifyingTools?: readonly string[];
}

// ---------------------------------------------------------------------------
// Resources (DESIGN.md §5.1, §5.3, §5.4), as segment lists.

/** `<kind>` of a named place `<kind>:<name>` (issue 24), else null. */
function placeKind(name: string): string | null {
  const colon = name.indexOf(':');
  return colon > 0 && NAMED_PLACE_KINDS.has(name.slice(0, colon)) ? name.slice(0, colon) : null;
}

/** A normalized resource is a path (climbing out of its root or not), not an id, URL, named or unknown place. */
function isPath(resource: string): boolean {
  if (resource.startsWith(UNKNOWN_PREFIX) || placeKind(resource) !== null || /^[a-z][a-z0-9+.-]*:\/\//i.test(resource)) return false;
  const equals = resource.indexOf('=');
  return resource.startsWith('/') || resource === '~' || resource.startsWith('~/') || equals < 0 || resource.slice(0, equals).includes('/');
}

/** A resource name, normalized: paths by node's posix rules (`~` kept as the first segment); ids, tables, named and unknown places as given. */
export function normalizeResource(raw: string): string {
  const name = raw.slice(0, RESOURCE_NAME_LIMIT);
  if (name.startsWith(UNKNOWN_PREFIX) || placeKind(name) !== null || /^[a-z][a-z0-9+.-]*:\/\//i.test(name)) return name;
  const equals = name.indexOf('=');
  const isId = equals >= 0 && !name.slice(0, equals).includes('/');
  if (name.startsWith('table:') || (isId && !name.startsWith('/') && name !== '~' && !name.startsWith('~/'))) return name;
  const trim = (path: string) => (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path);
  if (name === '~' || name.startsWith('~/')) {
    const rest = trim(posix.normalize(name.slice(2) || '.'));
    return rest === '.' ? '~' : `~/${rest}`;
  }
  return trim(posix.normalize(name));
}

/** A normalized resource as a root and segments; `exact` for ids, tables, and paths climbing above `~` or `.`. */
function shapeOf(resource: string): { root: string; segments: string[] } {
  const equals = resource.indexOf('=');
  const isId = equals >= 0 && !resource.slice(0, equals).includes('/');
  const path = resource.startsWith('/') || resource === '~' || resource.startsWith('~/');
  if (placeKind(resource) !== null || (isId && !path)) return { root: `exact:${resource}`, segments: [] };
  const parts = resource.split('/').filter((part) => part !== '');
  if (resource.startsWith('/')) return { root: '/', segments: parts };
  if (parts[0] === '~') {
    return parts[1] === '..' ? { root: `exact:${resource}`, segments: [] } : { root: '~', segments: parts.slice(1) };
  }
  if (parts[0] === '..') return { root: `exact:${resource}`, segments: [] };
  return { root: '.', segments: resource === '.' ? [] : parts };
}

/** `inner` is `outer` or inside it. An unknown place is inside nothing, and nothing is inside it. */
function within(inner: string, outer: string): boolean {
  if (inner.startsWith(UNKNOWN_PREFIX) || outer.startsWith(UNKNOWN_PREFIX)) return false;
  const kind = placeKind(outer);
  if (kind !== null && placeKind(inner) === kind && inner !== outer) {
    // `<kind>:*` covers its whole kind; `k8s:<resource>/*` the one resource (issue 24).
    const name = outer.slice(kind.length + 1);
    if (name === '*') return true;
    if (kind === 'k8s' && /^[^/*]+\/\*$/.test(name)) return inner.startsWith(outer.slice(0, -1));
    return false;
  }
  const a = shapeOf(inner);
  const b = shapeOf(outer);
  if (a.root !== b.root) return false;
  return b.segments.length <= a.segments.length && b.segments.every((segment, i) => a.segments[i] === segment);
}

/** Evidence about `written` (any resource when it names none): some read resource is one of them, inside one, or contains one. */
function evidenceFor(read: readonly string[], written: readonly string[]): boolean {
  if (written.length === 0) return true;
  return read.some((r) => written.some((w) => within(r, w) || within(w, r)));
}

/** The resources a call names, as read: the first `RESOURCES_PER_CALL` non-empty strings, normalized, once each; and whether it named more. */
function resourcesOf(call: { targets?: readonly string[] }): { resources: string[]; tooMany: boolean } {
  const given = call.targets ?? [];
  const resources: string[] = [];
  for (const raw of given.slice(0, RESOURCES_PER_CALL)) {
    if (raw === '') continue;
    const resource = normalizeResource(raw);
    if (!resources.includes(resource)) resources.push(resource);
  }
  return { resources, tooMany: given.length > RESOURCES_PER_CALL };
}

/** What DESIGN.md §1 says a self-verifying result is: an object, or text whose part from the first `{` parses as one, with `verification.ok === true`. */
function verifiesItself(result: unknown): boolean {
  let value = result;
  if (typeof value === 'string') {
    const brace = value.indexOf('{');
    if (brace === -1) return false;
    try {
      value = JSON.parse(value.substring(brace));
    } catch {
      return false;
    }
  }
  const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isRecord(value) || !Object.hasOwn(value, 'verification')) return false;
  const verification = value['verification'];
  return isRecord(verification) && Object.hasOwn(verification, 'ok') && verification['ok'] === true;
}

interface AdmittedCall {
  id: string | null;
  tool: string;
  kind: OracleKind;
  /** Normalized resources; its outcome is applied with them. */
  resources: string[];
  destructive: boolean;
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
  private readonly confirmDestructive: boolean;
  private readonly selfVerifying: ReadonlySet<string>;
  /** Resources read so far, least recently read first (DESIGN.md §5.3). */
  private established: string[] = [];
  private writeResources: string[] = [];
  private writeDestructive = false;
  /** The user answered since the last write: tracked always (issue 24: it vouches for unknown places too). */
  private confirmed = false;
  /** Escaping symbolic links that admitted writes made (issue 24), oldest first. */
  private links: string[] = [];
  /** More links than remembered: every path is taken as unknown until a reset. */
  private tooManyLinks = false;

  constructor(options: OracleOptions = {}) {
    this.strict = options.strictFailedWrites === true;
    this.autoComplete = options.autoCompleteVerification !== false;
    this.confirmDestructive = options.confirmDestructive === true;
    this.selfVerifying = new Set(options.selfVerifyingTools ?? []);
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
      let cause: RefusalCause | null =
        state === 'RESOLVING' ? 'no-target' : state === 'VERIFYING' ? 'unverified' : state === 'WRITING' ? 'in-flight' : null;
      let resource: string | null = cause === 'unverified' ? (this.writeResources[0] ?? null) : null;
      if (cause === null) {
        // DESIGN.md §5.3, then §5.6: only in READING, where the spec would admit the write.
        // Issue 24: a place known only at run time needs the user's word since the last write, whatever the settings.
        const { resources, tooMany } = resourcesOf(call);
        let unknown: string | undefined;
        for (const r of resources) {
          if (this.unknownPlace(r)) {
            if (!this.confirmed) {
              unknown = r.startsWith(UNKNOWN_PREFIX) ? r : `${UNKNOWN_PREFIX}${`${r} (through a link)`.slice(0, 120)}`;
              break;
            }
          } else if (!this.established.some((known) => within(r, known))) {
            // A remote place (`host:…`) no read reached: the user's word since the last write admits it too.
            if (r.startsWith('host:') && this.confirmed) continue;
            unknown = r;
            break;
          }
        }
        if (unknown !== undefined || tooMany) {
          cause = 'unknown-resource';
          resource = unknown ?? null;
        } else if (this.confirmDestructive && call.destructive === true && !this.confirmed) {
          cause = 'unconfirmed';
        }
      }
      if (cause !== null) {
        if (state === 'VERIFYING') this.blockedWritesWhileVerifying += 1;
        this.remember(call.tool, at);
        return {
          allowed: false,
          state,
          cause,
          resource,
          messagePrefix: `FSM blocked tool '${call.tool}' (${call.kind}) in state ${state}: `,
        };
      }
      this.state = 'WRITING'; // DESIGN.md §3.3: entered when a write is admitted
      this.rememberLinks(call.links);
    }
    this.admit(call);
    return { allowed: true, state, cause: null, resource: null, messagePrefix: null };
  }

  /**
   * A call ran: record its outcome, with the tool's result when known.
   * Returns the pending recovery a success cleared, if any.
   */
  record(call: OracleCall, outcome: 'success' | 'error', at: number, result?: unknown): OraclePending | null {
    const { taken, resources } = this.settle(call, outcome);
    const kind = taken?.kind ?? call.kind; // the admitted kind wins
    const destructive = taken !== null ? taken.destructive : call.destructive === true && kind === 'write';
    let recovered: OraclePending | null = null;
    if (outcome === 'success') {
      if (kind === 'write') {
        this.wrote(call.tool, at, resources, destructive);
        // A success taken as that of a call checked without an id may be another call's of its tool: it verifies nothing of itself.
        if ((taken === null || taken.id !== null) && (this.selfVerifying.has(call.tool) || verifiesItself(result))) {
          // DESIGN.md §1: the loop records a read named self_verify, then completes verification.
          this.lastRead = { tool: 'self_verify', at };
          this.readAfterWrite = true;
          this.blockedWritesWhileVerifying = 0;
          this.completeVerification(at);
        }
      } else if (isDiscovery(kind)) this.readSucceeded(call.tool, at, taken, resources);
      // A user input that was never checked confirms nothing in a session that checks its calls (as a read verifies nothing).
      else if (kind === 'user_input' && (taken !== null || !this.checksCalls)) this.confirmed = true;
      recovered = this.recover(call.tool, at);
    } else if (kind === 'write') {
      if (this.strict) this.wrote(call.tool, at, resources, destructive);
      else if (taken !== null && this.state === 'WRITING' && !this.writeInFlight()) this.state = 'READING';
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
    if (cause === null) return { allowed: true, state, cause, resource: null, messagePrefix: null };
    this.refusedAnswers += 1;
    const resource = cause === 'unverified' ? (this.writeResources[0] ?? null) : null;
    return { allowed: false, state, cause, resource, messagePrefix: `FSM blocked in state ${state}: ` };
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
    this.established = [];
    this.writeResources = [];
    this.writeDestructive = false;
    this.confirmed = false;
    this.links = [];
    this.tooManyLinks = false;
  }

  /**
   * ResetKeepProgress: verification tracking dropped (flags, counters, the
   * calls in flight, the last write's resources, a confirmation) and "wrote
   * this episode" cleared (DESIGN.md §1); the target, the resources read, the
   * last read and write and pending recoveries kept (DESIGN.md §3.2).
   */
  resetKeepProgress(at: number): void {
    void at;
    // The target is kept; with none ever established (a write recorded unchecked), there is none: RESOLVING.
    if (this.state === 'VERIFYING' || this.state === 'WRITING') this.state = this.lastRead === null ? 'RESOLVING' : 'READING';
    this.wroteThisEpisode = false;
    this.readAfterWrite = false;
    this.blockedWritesWhileVerifying = 0;
    this.refusedAnswers = 0;
    this.admitted = [];
    this.writeResources = [];
    this.writeDestructive = false;
    this.confirmed = false;
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
      established: [...this.established],
      writeResources: [...this.writeResources],
      writeDestructive: this.writeDestructive,
      confirmed: this.confirmed,
      links: this.tooManyLinks ? ['/', '~', '.'] : [...this.links],
    };
  }

  // -------------------------------------------------------------------------

  /**
   * A resource no read can vouch for (issue 24): a place known only at run
   * time, or a path reached through an escaping link (any path at all,
   * once too many links were made).
   */
  private unknownPlace(resource: string): boolean {
    if (resource.startsWith(UNKNOWN_PREFIX)) return true;
    const { root } = shapeOf(resource);
    if (this.tooManyLinks) return root === '/' || root === '~' || root === '.';
    return this.links.some((link) => within(resource, link));
  }

  /**
   * An admitted write made these escaping links: remember the paths among
   * them (a long one by its longest whole parent), unless one remembered
   * already covers it. Too many (in one call, or in all) and every path is
   * unknown from now on.
   */
  private rememberLinks(links: readonly string[] | undefined): void {
    if (links === undefined || this.tooManyLinks) return;
    if (links.length > RESOURCES_PER_CALL) {
      this.tooManyLinks = true;
      return;
    }
    for (const raw of links) {
      if (raw === '') continue;
      let link = normalizeResource(raw);
      if (raw.length > RESOURCE_NAME_LIMIT) link = posix.dirname(link);
      if (!isPath(link)) continue; // a link is a path: ids, named and unknown places are not
      if (this.links.some((kept) => within(link, kept))) continue;
      this.links.push(link);
      if (this.links.length > REMEMBERED_LINKS) {
        this.tooManyLinks = true;
        return;
      }
    }
  }

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
      resources: resourcesOf(call).resources,
      destructive: call.kind === 'write' && call.destructive === true,
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
    return c.evidenceFor === this.writes && evidenceFor(c.resources, this.writeResources) ? 3 : 2;
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
   *
   * Resources (DESIGN.md §5.3) are read the same way: resources the loop
   * states narrow the calls further to those naming the same ones; a
   * success that could be any of several reads establishes only what all of
   * them name; after a failure that could be any of several, the reads left
   * keep only what they share with the one that left. Returns the call
   * taken and the resources its outcome applies with.
   */
  private settle(call: OracleCall, outcome: 'success' | 'error'): { taken: AdmittedCall | null; resources: string[] } {
    const id = idOf(call);
    const own = resourcesOf(call).resources;
    const sharing = this.admitted.filter((c) => (id !== null ? c.id === id : c.id === null && c.tool === call.tool));
    if (sharing.length === 0) return { taken: null, resources: call.nameOnly === true ? [] : own };
    const sameKind = call.nameOnly === true ? [] : sharing.filter((c) => c.kind === call.kind);
    const byKind = sameKind.length > 0 ? sameKind : sharing;
    const stated = call.nameOnly !== true && call.targets !== undefined;
    const sameResources = stated
      ? byKind.filter((c) => c.resources.length === own.length && c.resources.every((r) => own.includes(r)))
      : [];
    const open = sameResources.length > 0 ? sameResources : byKind;
    const ordered = [...open].sort((a, b) => this.gain(a) - this.gain(b)); // stable: oldest first among equals
    const meekest = ordered[0]!;
    const boldest = ordered.find((c) => this.gain(c) === this.gain(ordered[ordered.length - 1]!))!;
    const shared = (calls: readonly AdmittedCall[]) => calls[0]!.resources.filter((r) => calls.every((c) => c.resources.includes(r)));
    if (outcome === 'success') {
      this.admitted.splice(this.admitted.indexOf(meekest.kind === 'write' ? boldest : meekest), 1);
      const resources = open.length === 1 || meekest.kind === 'write' ? meekest.resources : shared(open);
      return { taken: meekest, resources };
    }
    if (boldest.kind === 'write' && call.nameOnly !== true && call.kind !== 'write') return { taken: null, resources: own };
    this.admitted.splice(this.admitted.indexOf(boldest), 1);
    if (open.length > 1) {
      for (const other of open) {
        if (other !== boldest && isDiscovery(other.kind)) other.resources = shared([other, boldest]);
      }
    }
    return { taken: boldest, resources: boldest.resources };
  }

  private writeInFlight(): boolean {
    return this.admitted.some((c) => c.kind === 'write');
  }

  /** A write happened (or, strictly, may have): VERIFYING, evidence needed again, about its resources. */
  private wrote(tool: string, at: number, resources: string[], destructive: boolean): void {
    this.state = 'VERIFYING';
    this.wroteThisEpisode = true;
    this.readAfterWrite = false;
    this.blockedWritesWhileVerifying = 0; // the run of blocked writes is broken by a write
    this.lastWrite = { tool, at };
    this.writes += 1;
    this.writeResources = resources.filter((r) => !r.startsWith(UNKNOWN_PREFIX)); // no read touches a place known only at run time
    this.writeDestructive = destructive;
    this.confirmed = false; // a confirmation is for the next write only
  }

  /**
   * A resolve or read succeeded: its resources established; a target in
   * RESOLVING; evidence in VERIFYING if admitted after the write and about
   * one of its resources (DESIGN.md §5.4).
   */
  private readSucceeded(tool: string, at: number, settled: AdmittedCall | null, resources: string[]): void {
    this.lastRead = { tool, at };
    const known = resources.filter((r) => !this.unknownPlace(r)); // nothing vouches for an unknown place (issue 24)
    if (known.length > 0) {
      this.established = [...this.established.filter((r) => !known.includes(r)), ...known];
      while (this.established.length > REMEMBERED_RESOURCES) this.established.shift();
    }
    if (this.state === 'RESOLVING') this.state = 'READING';
    if (this.state !== 'VERIFYING') return;
    const inTime = settled !== null ? settled.evidenceFor === this.writes : !this.checksCalls;
    const about = evidenceFor(settled !== null ? settled.resources : resources, this.writeResources);
    if (inTime && about) {
      this.readAfterWrite = true;
      this.blockedWritesWhileVerifying = 0;
    }
  }
}
