/**
 * Phantom-execution claims (issue 28 item 2): the final answer claims a
 * change no tool made. The claims are found outside the machine
 * (src/claims/, from the answer's text) and come on `answer.requested` as
 * `claims`; here they are read totally and judged against the session's
 * successful writes. Pure; never throws.
 *
 * Spec: issue 28 item 2; DESIGN.md §1 (`pulse_ai_phantom_detected_total`).
 */
import { field } from './safety.events.js';
import { MAX_ESTABLISHED_TARGETS, MAX_TARGETS_PER_EVENT } from './safety.policy.js';
import type { AnswerClaim, SafetyContext } from './safety.types.js';

/** The most claims read from one `answer.requested`. */
export const MAX_CLAIMS_PER_ANSWER = 32;

/** The longest claim text kept in a reason, characters; a longer one is cut and ends in `…`. */
export const MAX_CLAIM_TEXT = 200;

/** The text of a claim whose `text` is not a string. */
const UNREADABLE_CLAIM = '(a claim that could not be read)';

/** A string cut to `max` characters, with `…` when cut. */
function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * The claims of an `answer.requested`, read totally: anything but an array
 * is none; only the first `MAX_CLAIMS_PER_ANSWER` are read; each object
 * entry is a claim (fail closed: one whose text is unreadable still
 * counts), its text cut to `MAX_CLAIM_TEXT`, its places the strings among
 * the first `MAX_TARGETS_PER_EVENT` of `places`, non-empty. Anything but an
 * object is no claim.
 */
export function claimsOf(event: unknown): AnswerClaim[] {
  let raw: unknown;
  try {
    raw = field(event, 'claims');
    if (!Array.isArray(raw)) return [];
    const claims: AnswerClaim[] = [];
    for (const entry of raw.slice(0, MAX_CLAIMS_PER_ANSWER) as unknown[]) {
      if (typeof entry !== 'object' || entry === null) continue;
      const text = field(entry, 'text');
      const places = field(entry, 'places');
      claims.push({
        text: typeof text === 'string' ? cut(text.trim(), MAX_CLAIM_TEXT) : UNREADABLE_CLAIM,
        places: Array.isArray(places)
          ? (places.slice(0, MAX_TARGETS_PER_EVENT) as unknown[]).filter((p): p is string => typeof p === 'string' && p.length > 0)
          : [],
      });
    }
    return claims;
  } catch {
    return [{ text: UNREADABLE_CLAIM, places: [] }]; // a getter or proxy trap that throws: fail closed
  }
}

/**
 * Whether the written target `target` (canonical, machines/safety.targets.ts)
 * touches the place `place` a claim names (free text: a path, a file name, an
 * id): the same, or the target ends in it after a `/`, `=` or `:`
 * (`/srv/app/orders.json` touches `orders.json`, `reservation_id=ABC123`
 * touches `ABC123`), or the target is at or under the place as a directory
 * (`/repo/build/x` touches `/repo/build` and `build`).
 */
export function touchesPlace(target: string, place: string): boolean {
  const p = place.replace(/\/+$/u, '');
  if (p.length === 0) return false;
  if (target === p) return true;
  for (const sep of ['/', '=', ':']) if (target.endsWith(sep + p)) return true;
  return target.startsWith(`${p}/`) || target.includes(`/${p}/`);
}

/**
 * The first claim no successful write supports, and the place it names that
 * no write touched (null when the session wrote nothing at all), or null
 * when every claim is supported. A claim is unsupported when no write was
 * recorded in the session (`writeSeq` 0), or it names places and no written
 * target (`writtenTargets`) touches any of them (`touchesPlace`). A claim
 * naming no place is supported by any recorded write.
 */
export function phantomClaimOf(context: SafetyContext, event: unknown): { claim: AnswerClaim; place: string | null } | null {
  const claims = claimsOf(event);
  if (claims.length === 0) return null;
  if (context.writeSeq === 0) return { claim: claims[0]!, place: null };
  const written = context.writtenTargets ?? [];
  for (const claim of claims) {
    if (claim.places.length === 0) continue;
    if (!claim.places.some((p) => written.some((t) => touchesPlace(t, p)))) return { claim, place: claim.places[0]! };
  }
  return null;
}

/**
 * `writtenTargets` after a write with `targets` was recorded: each appended
 * (a repeat moved to the end), the least recent dropped past
 * `MAX_ESTABLISHED_TARGETS` (so a claim about it may be refused: the bound
 * only makes the gate stricter). Undefined when still empty.
 */
export function withWrittenTargets(written: readonly string[] | undefined, targets: readonly string[]): string[] | undefined {
  if (targets.length === 0) return written === undefined ? undefined : [...written];
  const next = (written ?? []).filter((t) => !targets.includes(t));
  next.push(...targets);
  return next.length > MAX_ESTABLISHED_TARGETS ? next.slice(next.length - MAX_ESTABLISHED_TARGETS) : next;
}

/**
 * The `POLICY_BLOCKED:` reason of a `phantom-claim` refusal: which claim,
 * and what would support it.
 */
export function phantomClaimReason(claim: AnswerClaim, place: string | null): string {
  const quoted = JSON.stringify(claim.text);
  const missing =
    place === null
      ? 'no state-changing call succeeded in this session'
      : `no state-changing call that succeeded in this session touched ${JSON.stringify(place)}`;
  return `POLICY_BLOCKED: the final answer claims a change no tool made: ${quoted}; ${missing}. Make the change with a call that succeeds, or say that it was not done`;
}
