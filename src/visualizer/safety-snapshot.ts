/**
 * Validation of a safety machine snapshot that an application streams to
 * the visualizer (`@xstate.actor` or `@xstate.snapshot`), before any session
 * or view sees it. The rules are the persisted snapshot's (src/guard/snapshot.ts,
 * validated with zod by `persistedSnapshotSchema`): the state must be one
 * of the machine's, and state and context must be a combination the machine
 * can reach, with every field of the right type and range. A context is
 * accepted only when it survives the round trip
 * `parsePersistedSnapshot(toPersistedSnapshot(state, context))` unchanged
 * (lossless for every context the machine reaches), so the rules follow the
 * machine's context as it grows, without a second copy of them here.
 *
 * Spec: ASSISTANT_SAFETY.md "States", "The invariants"; DESIGN.md §3.3-3.5.
 */
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import type { SafetyContext, SafetyState } from '../../machines/safety.types.js';
import { SAFETY_STATES } from '../../machines/safety.types.js';
import { parsePersistedSnapshot, toPersistedSnapshot } from '../guard/snapshot.js';
import { errorMessage } from './bounds.js';

/** The states of the safety machine, as a streamed state value. */
export const safetyStateSchema = z.enum(SAFETY_STATES as [SafetyState, ...SafetyState[]]);

/**
 * The outline of a streamed safety context, checked first for clear
 * messages: an object whose calls in flight (if any) are objects in an
 * array, and whose pending recoveries (if any) are objects by id. The
 * fields are then checked by the round trip.
 */
const contextOutlineSchema = z.looseObject({
  inFlight: z.array(z.looseObject({})).optional(),
  pendingRecoveries: z.record(z.string(), z.looseObject({})).optional(),
});

/** A validated safety snapshot: the parts that were present. */
export interface SafetySnapshotParts {
  value?: SafetyState;
  /** A fresh context built from the validated snapshot; fields the machine does not have are left out. */
  context?: SafetyContext;
}

/** The first issue of a zod error as `<prefix><path>: message`. */
function issueText(error: z.ZodError, prefix: string): string {
  const issue = error.issues[0]!;
  const path = issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
  return `${prefix}${path}: ${issue.message}`;
}

/**
 * Validates the state value and context of a safety machine snapshot;
 * either may be absent (`undefined`), but a context needs its state.
 *
 * @returns the validated parts, or an error naming what is wrong, e.g.
 *   `context.inFlight[0]: Invalid input: expected object, received null`.
 *   Never throws.
 */
export function validateSafetySnapshot(
  value: unknown,
  context: unknown,
): { ok: true; parts: SafetySnapshotParts } | { ok: false; error: string } {
  const state = safetyStateSchema.safeParse(value);
  if (value !== undefined && !state.success) return { ok: false, error: issueText(state.error, 'value') };
  if (context === undefined) return { ok: true, parts: state.success ? { value: state.data } : {} };
  if (!state.success) return { ok: false, error: 'context: a safety context needs the state it belongs to' };

  const outline = contextOutlineSchema.safeParse(context);
  if (!outline.success) return { ok: false, error: issueText(outline.error, 'context') };
  let rebuilt: SafetyContext;
  try {
    rebuilt = parsePersistedSnapshot(toPersistedSnapshot(state.data, context as SafetyContext)).context;
  } catch (error) {
    return { ok: false, error: `context: not a context the safety machine can have in ${state.data} (${errorMessage(error)})` };
  }
  // Every field sent must be what the machine keeps; one left out (another version of the machine) takes its initial value.
  const sent = context as Record<string, unknown>;
  for (const [field, kept] of Object.entries(rebuilt)) {
    if (Object.prototype.hasOwnProperty.call(sent, field) && !isDeepStrictEqual(sent[field], kept)) {
      return { ok: false, error: `context.${field}: not a value the safety machine keeps in ${state.data}` };
    }
  }
  return { ok: true, parts: { value: state.data, context: rebuilt } };
}
