/**
 * Total readers of the safety machine's (possibly malformed) events, and the
 * pure questions its guards and actions ask of an event and the context: how
 * an outcome is booked against the calls in flight (`booking`), what evidence
 * a read is, which target a refusal names. None of them throws: a throwing
 * guard would stop the actor for good, and a malformed event fails closed
 * (an unknown kind reads as `write`).
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants"; DESIGN.md §3.3-3.5, §5.3-5.6.
 */
import { MAX_NAME_LENGTH, MAX_TARGETS_PER_EVENT, MAX_TIME_MS, RECOVERY_TTL_MS, REMOTE_PLACE } from './safety.policy.js';
import {
  commonTargets,
  isEstablished,
  isUnknownPlace,
  isUnknownTarget,
  readLinks,
  readTargets,
  sameTargets,
  touchesAny,
  unknownPlaceOf,
} from './safety.targets.js';
import type { BlockRule, FailedWrite, InFlightCall, PendingRecovery, SafetyContext, SafetyEvent, ToolKind } from './safety.types.js';
import { TOOL_KINDS } from './safety.types.js';

// ---------------------------------------------------------------------------
// Total readers of (possibly malformed) events. Never throw.

type LooseEvent = { [key: string]: unknown };

/** An own field of a (possibly malformed) event; undefined when missing, or when reading it throws. */
export function field(event: unknown, name: string): unknown {
  if (typeof event !== 'object' || event === null) return undefined;
  try {
    return Object.prototype.hasOwnProperty.call(event, name) ? (event as LooseEvent)[name] : undefined;
  } catch {
    return undefined; // a getter or proxy trap that throws reads as missing (so kinds fail closed to write)
  }
}

/** The event's time in epoch ms; 0 when missing, not a number, or outside ±`MAX_TIME_MS` (not a valid date). */
export function timeOf(event: unknown): number {
  const reading = readingOf(event);
  return reading !== undefined ? reading.at : rawTimeOf(event);
}

/** The event's tool name, its first `MAX_NAME_LENGTH` characters; '' when missing or not a string. */
export function toolOf(event: unknown): string {
  const reading = readingOf(event);
  return reading !== undefined ? reading.tool : rawToolOf(event);
}

/** The event's kind; anything unknown fails closed to `write`. */
export function kindOf(event: unknown): ToolKind {
  const reading = readingOf(event);
  if (reading !== undefined) return reading.kind;
  const kind = field(event, 'kind');
  return isToolKind(kind) ? kind : 'write';
}

/** The event's call id, its first `MAX_NAME_LENGTH` characters; null when missing, empty or not a string. */
export function callIdOf(event: unknown): string | null {
  const reading = readingOf(event);
  return reading !== undefined ? reading.callId : rawCallIdOf(event);
}

/** The event's call key: `id:<callId>`, or null for a call without an id. */
export function idKeyOf(event: unknown): string | null {
  const reading = readingOf(event);
  if (reading !== undefined) return reading.idKey;
  const id = callIdOf(event);
  return id === null ? null : `id:${id}`;
}

/** The event's targets, canonical (`readTargets`), and whether it names more than are read: none when missing or malformed. */
function targetsReadingOf(event: unknown): { targets: readonly string[]; overflow: boolean } {
  const reading = readingOf(event);
  if (reading === undefined) return readTargets(field(event, 'targets'));
  reading.targetsRead ??= readTargets(reading.targetsField);
  return reading.targetsRead;
}

/** The event's targets, canonical (`readTargets`): none when missing or malformed. */
export function targetsOf(event: unknown): readonly string[] {
  return targetsReadingOf(event).targets;
}

/**
 * The links a requested call says it creates (`ToolRequestedEvent.links`,
 * read by `readLinks`), and whether they overflow: none when missing or not
 * an array.
 */
export function linksOf(event: unknown): { links: readonly string[]; overflow: boolean } {
  const reading = readingOf(event);
  return readLinks(reading !== undefined ? reading.linksField : field(event, 'links'));
}

/** The event says it is a destructive write: `destructive: true` on a write. */
export function isDestructiveEvent(event: unknown): boolean {
  const reading = readingOf(event);
  if (reading !== undefined) return reading.destructive;
  return field(event, 'destructive') === true && kindOf(event) === 'write';
}

/** The outcome says its write verified itself: `selfVerified: true` (DESIGN.md §1, §5.8). */
export function isSelfVerifiedEvent(event: unknown): boolean {
  const reading = readingOf(event);
  if (reading !== undefined) return reading.selfVerified;
  return field(event, 'selfVerified') === true;
}

/** The failure says its call may have applied: `possiblyApplied: true` (DESIGN.md §3.8, issue 26). */
export function isPossiblyAppliedEvent(event: unknown): boolean {
  const reading = readingOf(event);
  if (reading !== undefined) return reading.possiblyApplied;
  return field(event, 'possiblyApplied') === true;
}

/**
 * The event's write key (`ToolRequestedEvent.writeKey`, issue 28), its first
 * `MAX_NAME_LENGTH` characters; null when missing, empty or not a string.
 */
export function writeKeyOf(event: unknown): string | null {
  const reading = readingOf(event);
  return reading !== undefined ? reading.writeKey : clippedName(field(event, 'writeKey'));
}

/**
 * The recoverable error code a failure raised (`ToolFailedEvent.errorCode`,
 * issue 28), its first `MAX_NAME_LENGTH` characters; null when missing,
 * empty, not a string, or on any event but a failure.
 */
export function errorCodeOf(event: unknown): string | null {
  const reading = readingOf(event);
  if (reading !== undefined) return reading.errorCode;
  return field(event, 'type') === 'tool.failed' ? clippedName(field(event, 'errorCode')) : null;
}

/** The failure says its call never ran: `neverRan: true` (issue 28). */
export function isNeverRanEvent(event: unknown): boolean {
  const reading = readingOf(event);
  if (reading !== undefined) return reading.neverRan;
  return field(event, 'neverRan') === true;
}

/** The event is a success (`tool.succeeded`); any other type reads as a failure where an outcome is booked. */
function isSuccessEvent(event: unknown): boolean {
  const reading = readingOf(event);
  if (reading !== undefined) return reading.success;
  return field(event, 'type') === 'tool.succeeded';
}

// ---------------------------------------------------------------------------
// Events read once (issue 13: the fast path reads each event once per step).

/** What the readers above answer for a normalized event, read once at its creation; targets read on first use. */
interface EventReading {
  readonly success: boolean;
  readonly at: number;
  readonly tool: string;
  readonly kind: ToolKind;
  readonly statedKind: ToolKind | null;
  readonly callId: string | null;
  readonly idKey: string | null;
  readonly destructive: boolean;
  readonly selfVerified: boolean;
  readonly possiblyApplied: boolean;
  readonly kindUnstated: boolean;
  readonly writeKey: string | null;
  readonly errorCode: string | null;
  readonly neverRan: boolean;
  /** The event's own `targets` (a frozen copy of an array, at most one entry past what is read). */
  readonly targetsField: unknown;
  targetsRead: { targets: readonly string[]; overflow: boolean } | undefined;
  /** The event's own `links` (a frozen copy of an array, as `targetsField`). */
  readonly linksField: unknown;
  /**
   * The last booking of this event, with what it was computed from (the
   * calls in flight, the write count and the write's targets: `booking`
   * reads nothing else of the context). The context's arrays are never
   * changed in place (every action assigns new ones), so the same arrays
   * and count mean the same booking.
   */
  booked: { inFlight: readonly InFlightCall[]; writeSeq: number; writeTargets: readonly string[]; booking: Booking | null } | undefined;
}

/**
 * The values a normalized event is made from, each read once by its maker
 * (undefined: absent): `type` as XState and the interpreter dispatch on it
 * (inherited too), `success` whether the event's own `type` is
 * `tool.succeeded` (as the readers see it), `targets` already cut
 * (`cutTargets`). Always built as one literal at the call, with every key
 * in this order: the constructor reads it and keeps nothing of it, so once
 * the constructor is inlined the optimizing compiler need not allocate it,
 * and the hot path pays nothing for the grouping.
 */
interface EventFields {
  readonly type: unknown;
  readonly success: boolean;
  readonly tool: unknown;
  readonly kind: unknown;
  readonly callId: unknown;
  readonly at: unknown;
  readonly targets: unknown;
  readonly destructive: unknown;
  readonly selfVerified: unknown;
  readonly possiblyApplied: unknown;
  readonly kindUnstated: unknown;
  readonly replyTo: unknown;
  readonly links: unknown;
  /** `answer.requested`'s claims (issue 28 item 2), as given; optional, so the tool-event fast path need not name it. */
  readonly claims?: unknown;
  readonly writeKey: unknown;
  readonly errorCode: unknown;
  readonly neverRan: unknown;
}

/**
 * An event read once: an immutable copy of the fields the machine reads,
 * whose readings (`toolOf`, `kindOf`, `booking`...) are computed once and
 * kept, instead of at every guard and action of a step. Made by
 * `normalizeEvent`; the readings sit in a private field, which a proxy or
 * another object cannot forge (`#reading in value` is false for them).
 */
class NormalizedEvent {
  readonly #reading: EventReading;
  // The fields the machine reads, as given (`declare`: set in the constructor only, absent ones left out).
  declare readonly type: unknown;
  declare readonly tool?: unknown;
  declare readonly kind?: unknown;
  declare readonly callId?: unknown;
  declare readonly at?: unknown;
  declare readonly targets?: unknown;
  declare readonly destructive?: unknown;
  declare readonly selfVerified?: unknown;
  declare readonly possiblyApplied?: unknown;
  declare readonly kindUnstated?: unknown;
  declare readonly replyTo?: unknown;
  declare readonly links?: unknown;
  declare readonly claims?: unknown;
  declare readonly writeKey?: unknown;
  declare readonly errorCode?: unknown;
  declare readonly neverRan?: unknown;

  /**
   * From `fields`, the fields' values, each read once by the caller; the
   * object is read here and not kept (see `EventFields`).
   */
  constructor(fields: EventFields) {
    const {
      type,
      success,
      tool,
      kind,
      callId,
      at,
      targets,
      destructive,
      selfVerified,
      possiblyApplied,
      kindUnstated,
      replyTo,
      links,
      writeKey,
      errorCode,
      neverRan,
    } = fields;
    const own = this as { -readonly [K in keyof NormalizedEvent]: unknown };
    own.type = type;
    if (tool !== undefined) own.tool = tool;
    if (kind !== undefined) own.kind = kind;
    if (callId !== undefined) own.callId = callId;
    if (at !== undefined) own.at = at;
    if (targets !== undefined) own.targets = targets;
    if (destructive !== undefined) own.destructive = destructive;
    if (selfVerified !== undefined) own.selfVerified = selfVerified;
    if (possiblyApplied !== undefined) own.possiblyApplied = possiblyApplied;
    if (kindUnstated !== undefined) own.kindUnstated = kindUnstated;
    if (replyTo !== undefined) own.replyTo = replyTo;
    if (links !== undefined) own.links = links;
    if (fields.claims !== undefined) own.claims = fields.claims;
    if (writeKey !== undefined) own.writeKey = writeKey;
    if (errorCode !== undefined) own.errorCode = errorCode;
    if (neverRan !== undefined) own.neverRan = neverRan;
    // The readings, by the same rules as the readers' for any event.
    const known = isToolKind(kind);
    const unstated = kindUnstated === true;
    const id = clippedName(callId);
    this.#reading = {
      success,
      at: validTime(at),
      tool: clippedName(tool) ?? '',
      kind: known ? kind : 'write',
      statedKind: !unstated && known ? kind : null,
      callId: id,
      idKey: id === null ? null : `id:${id}`,
      destructive: destructive === true && (!known || kind === 'write'),
      selfVerified: selfVerified === true,
      possiblyApplied: possiblyApplied === true,
      kindUnstated: unstated,
      writeKey: clippedName(writeKey),
      errorCode: type === 'tool.failed' ? clippedName(errorCode) : null,
      neverRan: neverRan === true,
      targetsField: targets,
      targetsRead: undefined,
      linksField: links,
      booked: undefined,
    };
  }

  /** The readings of a normalized event; undefined for any other value. Never throws. */
  static readingOf(value: unknown): EventReading | undefined {
    return typeof value === 'object' && value !== null && #reading in value ? value.#reading : undefined;
  }
}

/**
 * A `targets` value as a normalized event keeps it: of an array, a frozen
 * copy of exactly what `readTargets` reads (its length once, its first
 * `MAX_TARGETS_PER_EVENT` entries by index, one more slot when it is
 * longer, so the overflow shows), with the same expressions, so the copy
 * reads as the array did. Reading no other property (not `slice`, which
 * would ask the array for its constructor). When a read throws, an empty
 * list, as `readTargets` reads it. Anything else as it is.
 */
function cutTargets(targets: unknown): unknown {
  try {
    if (!Array.isArray(targets)) return targets;
    const length = targets.length;
    const copy: unknown[] = [];
    for (let i = 0; i < Math.min(length, MAX_TARGETS_PER_EVENT); i += 1) copy.push(targets[i]);
    if (length > MAX_TARGETS_PER_EVENT) copy.push(undefined);
    return copy.length === 0 ? NO_TARGETS_GIVEN : Object.freeze(copy);
  } catch {
    return NO_TARGETS_GIVEN; // a revoked proxy or a throwing trap: given, and read as none (as `readTargets` reads it)
  }
}

const NO_TARGETS_GIVEN: readonly string[] = Object.freeze([]);

function isToolKind(kind: unknown): kind is ToolKind {
  return TOOL_KINDS.includes(kind as ToolKind);
}

/** A name or id: its first `MAX_NAME_LENGTH` characters; null when not a string or empty. */
function clippedName(value: unknown): string | null {
  if (typeof value !== 'string' || value === '') return null;
  return value.length > MAX_NAME_LENGTH ? value.slice(0, MAX_NAME_LENGTH) : value;
}

/** An event time: epoch ms within ±`MAX_TIME_MS`, else 0. */
function validTime(at: unknown): number {
  return typeof at === 'number' && Math.abs(at) <= MAX_TIME_MS ? at : 0;
}

// A static method that reads no `this`: taken off its class once, for the hot path.
// eslint-disable-next-line @typescript-eslint/unbound-method
const readingOf = NormalizedEvent.readingOf;

function rawTimeOf(event: unknown): number {
  return validTime(field(event, 'at'));
}

function rawToolOf(event: unknown): string {
  return clippedName(field(event, 'tool')) ?? '';
}

function rawCallIdOf(event: unknown): string | null {
  return clippedName(field(event, 'callId'));
}

/**
 * The event read once (issue 13): an immutable copy of the fields the
 * machine reads (`type`, as dispatched on, inherited too; `tool`, `kind`,
 * `callId`, `at`, `targets`, `destructive`, `selfVerified`, `kindUnstated`,
 * `replyTo`, `links`, `writeKey`, `errorCode`, `neverRan`, own fields only, as the readers read them; of a `targets` array,
 * what is read of it: `cutTargets`), which every guard
 * and action reads exactly as it reads `event`, but from readings computed
 * once, with its booking against the calls in flight kept for the step.
 * Decisions, contexts and emitted events are the same as for `event`
 * itself (test/machines/safety.events.test.ts). Send the result in place
 * of `event`, to the compiled interpreter or an actor; do not build it
 * for an event you will change later (the copy would not follow). A
 * normalized event is returned as it is. Never throws: a field whose getter
 * or proxy trap throws reads as missing, as everywhere.
 *
 * Spec: DESIGN.md §3.3-3.5 (what is read of an event); issue 13 (the fast path).
 */
export function normalizeEvent<TEvent extends SafetyEvent>(event: TEvent): TEvent {
  if (readingOf(event) !== undefined) return event;
  const normalized = new NormalizedEvent({
    type: dispatchTypeOf(event),
    success: field(event, 'type') === 'tool.succeeded',
    tool: field(event, 'tool'),
    kind: field(event, 'kind'),
    callId: field(event, 'callId'),
    at: field(event, 'at'),
    targets: cutTargets(field(event, 'targets')),
    destructive: field(event, 'destructive'),
    selfVerified: field(event, 'selfVerified'),
    possiblyApplied: field(event, 'possiblyApplied'),
    kindUnstated: field(event, 'kindUnstated'),
    replyTo: field(event, 'replyTo'),
    links: cutTargets(field(event, 'links')),
    claims: field(event, 'claims'),
    writeKey: field(event, 'writeKey'),
    errorCode: field(event, 'errorCode'),
    neverRan: field(event, 'neverRan'),
  });
  return Object.freeze(normalized) as unknown as TEvent;
}

/**
 * The type XState and the interpreter dispatch an event on: `event.type`,
 * inherited too (the readers read own fields only); undefined when reading
 * it throws.
 */
function dispatchTypeOf(event: unknown): unknown {
  try {
    return (event as { type?: unknown }).type;
  } catch {
    return undefined;
  }
}

/**
 * A tool event read once, from its fields' values (what `normalizeEvent`
 * makes of `{ type, tool, kind, at, callId?, targets?, destructive?,
 * selfVerified?, kindUnstated?, links? }`, without reading an object): for a caller
 * that has the values at hand, the session guard. Not frozen (freezing
 * costs more than the rest of it): for a caller that keeps the event to
 * itself until the step is over, and freezes it before anyone else may see
 * it (the guard does before an actor does). Its readings never change
 * either way.
 *
 * Spec: DESIGN.md §3.3-3.5; issue 13 (the fast path).
 * @throws only what a getter of `fields` throws (the guard passes a plain object).
 */
// eslint-disable-next-line max-params -- a documented public signature (README, its tests call it positionally): grouping its values would break every caller.
export function toolEventOf(
  type: 'tool.requested' | 'tool.succeeded' | 'tool.failed',
  tool: string,
  kind: ToolKind,
  at: number,
  fields: {
    callId?: string | undefined;
    targets?: readonly string[] | undefined;
    destructive?: boolean;
    selfVerified?: boolean;
    possiblyApplied?: boolean;
    kindUnstated?: boolean;
    links?: readonly string[] | undefined;
    writeKey?: string | undefined;
    errorCode?: string | undefined;
    neverRan?: boolean;
  },
): SafetyEvent {
  const normalized = new NormalizedEvent({
    type,
    success: type === 'tool.succeeded',
    tool,
    kind,
    callId: fields.callId,
    at,
    targets: cutTargets(fields.targets),
    destructive: fields.destructive,
    selfVerified: fields.selfVerified,
    possiblyApplied: fields.possiblyApplied,
    kindUnstated: fields.kindUnstated,
    replyTo: undefined,
    links: cutTargets(fields.links),
    writeKey: fields.writeKey,
    errorCode: fields.errorCode,
    neverRan: fields.neverRan,
  });
  return normalized as unknown as SafetyEvent;
}

/**
 * Whether a call id is in flight in `context`: a call checked under it has
 * no recorded outcome yet. An empty id is no id (as in events). The adapter
 * refuses a second check under such an id (`SessionGuard.check`).
 */
export function isCallIdInFlight(context: SafetyContext, callId: string): boolean {
  const { inFlight } = context;
  if (callId === '' || inFlight.length === 0) return false;
  // `id:<callId>`, compared without building it (a check asks this of every call with an id).
  for (const call of inFlight) {
    const key = call.key;
    if (key.length === callId.length + 3 && key.startsWith('id:') && key.endsWith(callId)) return true;
  }
  return false;
}

/**
 * The kind a record states about its own call: its `kind`, unless that is
 * missing or outside the vocabulary, or the event says `kindUnstated` (the
 * classifier's reading of a bare tool name, which cannot tell two calls of
 * one tool apart). Null when it states none.
 */
export function statedKindOf(event: unknown): ToolKind | null {
  const reading = readingOf(event);
  if (reading !== undefined) return reading.statedKind;
  if (field(event, 'kindUnstated') === true) return null;
  const kind = field(event, 'kind');
  return isToolKind(kind) ? kind : null;
}

/** The targets a record states about its own call: its `targets`, unless absent or the kind is unstated. */
export function statedTargetsOf(event: unknown): readonly string[] | null {
  const reading = readingOf(event);
  if (
    reading !== undefined
      ? reading.kindUnstated || reading.targetsField === undefined
      : field(event, 'kindUnstated') === true || field(event, 'targets') === undefined
  ) {
    return null;
  }
  return targetsOf(event);
}

/**
 * How much a call's success would let the session do, least first: 0 a
 * write (its success demands verification); 1 user input or neutral
 * computation (nothing, or a confirmation); 2 a resolve or read (a target,
 * the last read); 3 a resolve or read that would verify the current write
 * (admitted after it, touching one of its known targets). Ranks the
 * candidates of an ambiguous outcome, and two calls checked under one id.
 */
export function leeway(call: InFlightCall, context: SafetyContext): number {
  if (call.kind === 'write') return 0;
  if (!isDiscovery(call.kind)) return 1;
  return call.verifiesWrite === context.writeSeq && touchesAny(call.targets ?? [], context.writeTargets) ? 3 : 2;
}

/**
 * How an outcome event is booked against the calls in flight: `applied`, the
 * index of the call whose kind (and verification standing) the outcome is
 * applied with, `removed`, the index of the call it takes out of flight, and
 * `pool`, the indexes of every call it could belong to (one when it is
 * unambiguous). Null when no call matches (a record without a check: its own
 * kind and targets apply). Read only: a normalized event keeps its booking
 * and gives the same object to every guard and action of the step.
 */
export interface Booking {
  readonly applied: number;
  readonly removed: number;
  readonly pool: readonly number[];
}

/**
 * Books an outcome event (DESIGN.md §3.3-3.4): one outcome is never booked
 * against the wrong call in the permissive direction.
 *
 * The candidates share the outcome's key: its id, or, without one, the tool
 * of the calls checked without an id. A single candidate is settled whatever
 * kind the record names (the admitted kind wins), except that a failure
 * whose record states another kind never settles a write: that failure is of
 * some other call, and the write stays in flight.
 *
 * Several candidates (calls of one tool checked without ids, or an id a raw
 * actor checked twice) make the outcome ambiguous. The kind the record
 * states (`statedKindOf`) narrows them to the candidates of that kind, if any
 * has it, then the targets it states to the candidates naming the same ones,
 * if any has them; among the rest the worst case is assumed, ranked by `leeway`:
 * - a success is applied as the success of the candidate whose success
 *   permits least (a write first: a write among them succeeded). That call
 *   leaves flight, except a write: it stays in flight until the last of its
 *   candidates is recorded, since it may in truth still be running (so no
 *   final answer and no completed verification until then), and the
 *   candidate whose success would permit most leaves instead;
 * - a failure is applied as the failure of the candidate whose success would
 *   permit most (a write last: a failure settles a write only when it is
 *   unambiguously that write's), which leaves flight.
 * So the calls left in flight are always the least permissive reading of
 * what is still to come. The oldest wins among equals. Targets follow the
 * same reading (`appliedTargets`, `withoutSettled`): an ambiguous success of
 * a resolve or read establishes only the targets every candidate names, and
 * after an ambiguous failure the resolves and reads left among the
 * candidates keep only the targets they share with the one that left.
 */
export function booking(context: SafetyContext, event: unknown): Booking | null {
  if (context.inFlight.length === 0) return null;
  const reading = readingOf(event);
  if (reading === undefined) return bookingOf(context, event);
  const { inFlight, writeSeq, writeTargets } = context;
  const kept = reading.booked;
  if (kept !== undefined && kept.inFlight === inFlight && kept.writeSeq === writeSeq && kept.writeTargets === writeTargets) {
    return kept.booking;
  }
  const booked = bookingOf(context, event);
  reading.booked = { inFlight, writeSeq, writeTargets, booking: booked };
  return booked;
}

/** `booking`, computed. */
function bookingOf(context: SafetyContext, event: unknown): Booking | null {
  const key = idKeyOf(event);
  const tool = toolOf(event);
  const candidates: number[] = [];
  const { inFlight } = context;
  for (let i = 0; i < inFlight.length; i += 1) {
    const call = inFlight[i]!;
    if (key !== null ? call.key === key : call.key.startsWith('anon:') && call.tool === tool) candidates.push(i);
  }
  if (candidates.length === 0) return null;
  const stated = statedKindOf(event);
  if (candidates.length === 1) {
    // Unambiguous (the common case): what follows would pick this call, without the narrowing.
    const only = candidates[0]!;
    const failure = !isSuccessEvent(event);
    if (failure && context.inFlight[only]!.kind === 'write' && stated !== null && stated !== 'write') return null;
    return { applied: only, removed: only, pool: candidates };
  }
  const ofStatedKind = candidates.filter((i) => context.inFlight[i]!.kind === stated);
  const byKind = ofStatedKind.length > 0 ? ofStatedKind : candidates;
  const statedTargets = statedTargetsOf(event);
  const ofStatedTargets =
    statedTargets === null ? [] : byKind.filter((i) => sameTargets(context.inFlight[i]!.targets ?? [], statedTargets));
  const pool = ofStatedTargets.length > 0 ? ofStatedTargets : byKind;
  if (pool.length === 0) return null;
  const leewayOf = (i: number) => leeway(context.inFlight[i]!, context);
  const least = pool.reduce((best, i) => (leewayOf(i) < leewayOf(best) ? i : best));
  const most = pool.reduce((best, i) => (leewayOf(i) > leewayOf(best) ? i : best));
  if (isSuccessEvent(event)) {
    return { applied: least, removed: context.inFlight[least]!.kind === 'write' ? most : least, pool };
  }
  if (context.inFlight[most]!.kind === 'write' && stated !== null && stated !== 'write') return null;
  return { applied: most, removed: most, pool };
}

/**
 * The outcome says its write verified itself (`isSelfVerifiedEvent`), and it
 * is surely that write's: booked to a call checked under an id, or to no
 * call (a record without a check). A success booked to a call checked
 * without an id may be another call's of the same tool (an earlier ambiguous
 * success left the write in flight in its place, `booking`), so what its
 * result says verifies nothing.
 */
export function isTrustedSelfVerification(context: SafetyContext, event: unknown): boolean {
  if (!isSelfVerifiedEvent(event)) return false;
  const booked = booking(context, event);
  return booked === null || context.inFlight[booked.applied]!.key.startsWith('id:');
}

/** The admitted call an outcome is applied with, if any. */
export function settledCall(context: SafetyContext, event: unknown): InFlightCall | undefined {
  const booked = booking(context, event);
  return booked === null ? undefined : context.inFlight[booked.applied];
}

/** The kind an outcome applies with: the admitted kind, else the event's own. */
export function outcomeKind(context: SafetyContext, event: unknown): ToolKind {
  return settledCall(context, event)?.kind ?? kindOf(event);
}

/** A resolve or read: a call that discovers (establishes targets, can verify a write). */
export function isDiscovery(kind: ToolKind): boolean {
  return kind === 'resolve' || kind === 'read';
}

/**
 * The targets an outcome applies with: the booked call's; for an ambiguous
 * success of a resolve or read, only those every candidate names (one of
 * them succeeded, which is not known); the event's own for a record without
 * a check.
 */
export function appliedTargets(
  context: SafetyContext,
  event: unknown,
  booked: Booking | null = booking(context, event),
): readonly string[] {
  if (booked === null) return targetsOf(event);
  const call = context.inFlight[booked.applied]!;
  if (booked.pool.length === 1 || call.kind === 'write') return call.targets ?? [];
  return commonTargets(booked.pool.map((i) => context.inFlight[i]!.targets ?? []));
}

/**
 * The calls in flight once an outcome is booked: without the call it takes
 * out of flight. After an ambiguous failure, the resolves and reads left
 * among its candidates keep only the targets they share with the call that
 * left: whichever of them is still running, its success is certain only of those.
 */
export function withoutSettled(context: SafetyContext, event: unknown): InFlightCall[] {
  const booked = booking(context, event);
  if (booked === null) return context.inFlight;
  const removed = context.inFlight[booked.removed]!;
  const narrow = !isSuccessEvent(event) && booked.pool.length > 1;
  if (!narrow) return context.inFlight.filter((_, i) => i !== booked.removed);
  const left: InFlightCall[] = [];
  context.inFlight.forEach((call, i) => {
    if (i === booked.removed) return;
    if (!booked.pool.includes(i) || !isDiscovery(call.kind) || call.targets === undefined) left.push(call);
    else left.push(withTargets(call, commonTargets([call.targets, removed.targets ?? []])));
  });
  return left;
}

/** A call in flight with other targets: `targets` left out when empty. */
export function withTargets(call: InFlightCall, targets: string[]): InFlightCall {
  const { targets: _dropped, ...rest } = call;
  return targets.length === 0 ? rest : { ...rest, targets };
}

/**
 * What a successful resolve or read is evidence of (DESIGN.md §3.4, §5.4):
 * `verifies` when the call it is booked to was admitted in VERIFYING after
 * the current write succeeded (or it ran unchecked in a session that never
 * checks its calls) and touches one of the write's known targets (any read
 * does, for a write without known targets); `off-target` when it would
 * verify but touches none of them; `none` otherwise.
 */
export function evidenceOf(context: SafetyContext, event: unknown): 'verifies' | 'off-target' | 'none' {
  const call = settledCall(context, event);
  let targets: readonly string[];
  if (call === undefined) {
    if (context.checksCalls || !isDiscovery(kindOf(event))) return 'none';
    targets = targetsOf(event);
  } else {
    if (!isDiscovery(call.kind) || call.verifiesWrite !== context.writeSeq) return 'none';
    targets = call.targets ?? [];
  }
  return touchesAny(targets, context.writeTargets) ? 'verifies' : 'off-target';
}

/**
 * The first target of a requested write that is not established (DESIGN.md
 * §5.3): `{ target }`, with `target` null when the write names more targets
 * than are read (`MAX_TARGETS_PER_EVENT`) and the first ones are all
 * established. An unknown place (`?/…`, or a path at or under a kept link:
 * `isUnknownTarget`) counts as established only when a user input succeeded
 * since the last write (`confirmedSinceWrite`, issue 24); otherwise it is
 * the one named, as an unknown place (`unknownPlaceOf`). Null when every
 * known target is established (or confirmed), or none is known.
 */
export function unknownTargetOf(context: SafetyContext, event: unknown): { target: string | null } | null {
  const { targets, overflow } = targetsReadingOf(event);
  const { establishedTargets, links, confirmedSinceWrite } = context;
  for (const target of targets) {
    if (isUnknownTarget(target, links)) {
      if (!confirmedSinceWrite) return { target: unknownPlaceOf(target) };
    } else if (!isEstablished(establishedTargets, target) && !(confirmedSinceWrite && target.startsWith(REMOTE_PLACE))) {
      return { target }; // a remote place not read: the user's confirmation admits it too
    }
  }
  return overflow ? { target: null } : null;
}

/**
 * The targets a successful resolve or read establishes, of those its outcome
 * applies with: all but unknown places (`isUnknownTarget`: `?/…`, or at or
 * under a kept link), which nothing establishes (issue 24). `targets` itself
 * when none is dropped.
 */
export function establishableTargets(context: SafetyContext, targets: readonly string[]): readonly string[] {
  const { links } = context;
  return targets.some((target) => isUnknownTarget(target, links)) ? targets.filter((target) => !isUnknownTarget(target, links)) : targets;
}

/**
 * The verification targets of a recorded write, of those its outcome applies
 * with: all but `?/…` unknown places, which no read can touch (issue 24: a
 * write whose targets are all unknown places is verified by any later read).
 */
export function verificationTargets(targets: readonly string[]): string[] {
  return targets.filter((target) => !isUnknownPlace(target));
}

/** With `confirmDestructive`, a destructive write and no user input succeeded since the last write (DESIGN.md §5.6). */
export function isUnconfirmedDestructive(context: SafetyContext, event: unknown): boolean {
  return context.confirmDestructive && !context.confirmedSinceWrite && isDestructiveEvent(event);
}

/**
 * The failed write a requested write repeats (issue 28): the entry of
 * `context.failedWrites` with the event's write key, when the event is a
 * write with a key; else undefined.
 */
export function repeatedFailedWrite(context: SafetyContext, event: unknown): FailedWrite | undefined {
  const failed = context.failedWrites;
  if (failed === undefined || failed.length === 0 || kindOf(event) !== 'write') return undefined;
  const key = writeKeyOf(event);
  return key === null ? undefined : failed.find((entry) => entry.key === key);
}

/** The target a refusal of `rule` names, or null (see `GateDecidedEvent.target`). */
export function blockedTargetOf(context: SafetyContext, event: unknown, rule: BlockRule): string | null {
  if (rule === 'unknown-target') return unknownTargetOf(context, event)?.target ?? null;
  if (rule === 'repeated-write') return repeatedFailedWrite(context, event)?.targets?.[0] ?? null;
  if (rule === 'unverified-write') return context.writeTargets[0] ?? null;
  return null;
}

/** Some call among `calls` is a write. */
export function hasWriteInFlight(calls: readonly InFlightCall[]): boolean {
  return calls.some((call) => call.kind === 'write');
}

/** The pending recovery's TTL (`RECOVERY_TTL_MS` after its latest block) has run out at `at` (epoch ms). */
export function isExpired(recovery: PendingRecovery, at: number): boolean {
  return at - recovery.lastBlockedAt > RECOVERY_TTL_MS;
}

/**
 * Pending recoveries still alive at `at`, as a new object, in their order,
 * without `except` (a recovery id) when given.
 */
export function liveRecoveries(recoveries: Record<string, PendingRecovery>, at: number, except?: string): Record<string, PendingRecovery> {
  const live: Record<string, PendingRecovery> = {};
  for (const id in recoveries) {
    if (!Object.prototype.hasOwnProperty.call(recoveries, id) || id === except) continue;
    const recovery = recoveries[id]!;
    if (!isExpired(recovery, at)) live[id] = recovery;
  }
  return live;
}
