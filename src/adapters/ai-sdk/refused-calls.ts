/**
 * The calls the AI SDK tool gate refused, by the SDK's `toolCallId`, for
 * the stream gate of the same session to read: it knows a call of its step
 * was refused from the gate's own decision, never from the shape of the tool
 * result (a custom `refusal` may return anything).
 *
 * Kept per guard source: the `guard` object, or the `getGuard` function and
 * the conversation's `sessionKey`, so a `gateTools` and a `gateTextStream`
 * built with the same source share it (as `withSafetyGate` builds them).
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants" (no final answer about an
 * unverified change); DESIGN.md §3.4 (a call's outcome is known by its id).
 */
import type { GuardSourceOptions } from './guard-source.js';

/** At most this many refused ids are kept per session (the oldest go first): a stream reads an id within its own step. */
const KEPT = 1_000;

const bySource = new WeakMap<object, Map<string, Set<string>>>();

/** The refused ids of one guard source (a new, empty set the first time); undefined when the source is not an object. */
function idsOf(source: GuardSourceOptions): Set<string> | undefined {
  const owner: unknown = source.guard ?? source.getGuard;
  if ((typeof owner !== 'object' && typeof owner !== 'function') || owner === null) return undefined;
  const key = source.guard === undefined ? `key:${source.sessionKey ?? ''}` : 'guard';
  let sessions = bySource.get(owner);
  if (sessions === undefined) bySource.set(owner, (sessions = new Map<string, Set<string>>()));
  let ids = sessions.get(key);
  if (ids === undefined) sessions.set(key, (ids = new Set()));
  return ids;
}

/**
 * The refused calls of one guard source: `add` when the tool gate refuses a
 * call (or cannot check it: it does not run either), `clear` when it admits
 * one (an id the SDK reuses is not refused twice), `has` for the stream
 * gate. Never throws.
 */
export interface RefusedCalls {
  add(toolCallId: string | undefined): void;
  clear(toolCallId: string | undefined): void;
  has(toolCallId: string): boolean;
}

/** The refused calls of the session `source` names (shared by every gate built with the same source). */
export function refusedCallsOf(source: GuardSourceOptions): RefusedCalls {
  const ids = idsOf(source) ?? new Set<string>();
  return {
    add(toolCallId) {
      if (typeof toolCallId !== 'string' || toolCallId === '') return;
      ids.delete(toolCallId);
      ids.add(toolCallId);
      if (ids.size > KEPT) ids.delete(ids.values().next().value as string);
    },
    clear(toolCallId) {
      if (typeof toolCallId === 'string') ids.delete(toolCallId);
    },
    has: (toolCallId) => ids.has(toolCallId),
  };
}

const withheldBySource = new WeakMap<object, Map<string, { text: string }>>();

/**
 * The text the stream gate last withheld from a step of one guard source
 * (the step's answer, taken out of the stream, the step and the result), for
 * the answer gate of the same source to decide on that text and not on the
 * empty one its step is left with: `put` by the stream gate, `take` (which
 * empties it) by the answer gate at the step's end. Never throws.
 */
export interface WithheldText {
  put(text: string): void;
  take(): string;
}

/** The withheld text of the session `source` names (shared by every gate built with the same source). */
export function withheldTextOf(source: GuardSourceOptions): WithheldText {
  const owner: unknown = source.guard ?? source.getGuard;
  let slot = { text: '' };
  if ((typeof owner === 'object' || typeof owner === 'function') && owner !== null) {
    const key = source.guard === undefined ? `key:${source.sessionKey ?? ''}` : 'guard';
    let sessions = withheldBySource.get(owner);
    if (sessions === undefined) withheldBySource.set(owner, (sessions = new Map<string, { text: string }>()));
    slot = sessions.get(key) ?? slot;
    sessions.set(key, slot);
  }
  return {
    put(text) {
      slot.text = text;
    },
    take() {
      const text = slot.text;
      slot.text = '';
      return text;
    },
  };
}
