/**
 * The options of a session guard (`SessionGuardOptions`) and their check
 * (`validateSessionGuardOptions`), shared by `createSessionGuard` and the
 * session stores, which give every guard they make the same options: a
 * misspelled option or a flag of the wrong type is refused before any
 * session exists, instead of switching a safety rule off without a word.
 *
 * Spec: DESIGN.md §3 (auto-completed verification, strict failed writes,
 * time as an input), §5.6 (confirmation), §5.8 (self-verifying writes).
 */
import { z } from 'zod';
import type { GateDecidedEvent, RecoveryRaisedEvent, RecoverySucceededEvent, ToolKind } from '../../machines/safety.types.js';
import type { Classification } from '../classify/classification.js';
import type { SessionGuardWarning } from './unknown-tools.js';

/** Options of `createSessionGuard`. */
export interface SessionGuardOptions {
  /** The clock, epoch milliseconds; default `Date.now`. */
  now?: () => number;
  /**
   * The classifier used when a call has no `kind` (or no `targets`): a
   * kind-only `(name, args) => ToolKind`, or a full `CallClassifier`
   * returning `{ kind, targets, destructive }` (src/classify/classification.ts; told
   * apart by what it returns); default the Pulse catalog's `classifyCall`. Read totally: a
   * classifier that throws, or answers outside the vocabulary, fails closed
   * to a `write`; malformed targets are none, a malformed destructive flag false.
   */
  classify?: (name: string, args?: unknown) => ToolKind | Classification;
  /**
   * Refuse a destructive write unless a `user_input` call succeeded since the
   * last write (rule `needs-confirmation`, DESIGN.md §5.6); default false. On
   * a restored session, true turns it on whatever the snapshot says.
   */
  confirmDestructive?: boolean;
  /**
   * Tools whose successful result reports the resulting state (a catalog's
   * `selfVerifying` mark, e.g. `compileCatalog(catalog).isSelfVerifying`): a
   * successful write of one verifies itself (DESIGN.md §5.8). Default none.
   * What it throws counts as false.
   */
  selfVerifying?: (name: string) => boolean;
  /**
   * Complete verification as soon as a verifying read is recorded, as the
   * original loop does; default true. With false, call `completeVerification()`.
   * The machine does it (its input `autoCompleteVerification`, kept in the
   * context and the persisted snapshot). On a restored session, true or
   * false given here wins; not given, the snapshot's setting stays.
   */
  autoCompleteVerification?: boolean;
  /**
   * A failed write needs verification too (DESIGN.md §3.8); default false.
   * On a restored session, true makes it strict whatever the snapshot says;
   * otherwise the snapshot's setting stays.
   */
  strictFailedWrites?: boolean;
  /**
   * Check the final answer's claims of a change (issue 28 item 2): given its
   * text, `finalAnswer(text)` refuses an answer claiming a change no recorded
   * write made (rule `phantom-claim`). Default true: on the tau-bench and
   * incident transcripts every answer it flagged was a claim without a
   * change (docs/claims.md). False: the text is not read.
   */
  phantomClaims?: boolean;
  /**
   * A snapshot from `guard.getPersistedSnapshot()` (or its JSON string) to
   * resume from; validated first (`parsePersistedSnapshot`).
   */
  snapshot?: unknown;
  /**
   * Called with every decision (each `check` and `finalAnswer`, allowed or
   * refused) once it is final, e.g. to count blocks (src/telemetry/metrics.ts). It
   * gets a deep-frozen copy; a call it makes to the same guard throws
   * `SessionGuardError` (`GUARD_REENTRANT`); an exception it throws is
   * ignored: telemetry never changes or stops a decision.
   */
  onDecision?: (decision: GateDecidedEvent) => void;
  /**
   * Called when a successful call clears a pending recovery (a recovery,
   * DESIGN.md §3.5). A deep-frozen copy, no calls back, exceptions ignored, as for `onDecision`.
   */
  onRecovery?: (event: RecoverySucceededEvent) => void;
  /**
   * Called with the guard's warning when none of its first three classified
   * calls (`UNKNOWN_TOOLS_AFTER`, distinct by id) names a tool of the catalog
   * behind its classifier (the default Pulse catalog, or one from
   * `createCallClassifier` / `compileCatalog(...).classify`): every such call
   * is taken for a write and refused, reads included, and the warning says to
   * declare the tools. At most once per guard. Default: a Node process
   * warning (`PulseSafetyWarning`, code `PULSE_SAFETY_UNKNOWN_TOOLS`), at
   * most once per process and catalog; `() => {}` silences it. A deep-frozen
   * copy, no calls back, exceptions ignored, as for `onDecision`: a warning
   * never changes a decision.
   */
  onWarning?: (warning: SessionGuardWarning) => void;
  /**
   * Called when a recorded failure raised a recoverable error code (issue
   * 28: its result's `error.code` is one of `recoveryCodes`, or the record
   * gave `errorCode`) and so opened or bumped a pending recovery of its
   * tool, e.g. to count `pulse_ai_strict_resolution_block_total`
   * (src/telemetry/metrics.ts). A deep-frozen copy, no calls back,
   * exceptions ignored, as for `onDecision`.
   */
  onRecoveryRaised?: (event: RaisedRecovery) => void;
  /**
   * The recoverable error codes a failed result may raise (issue 28): a
   * failure recorded with a `result` whose `error.code` (or legacy
   * `error_code`) is one of them opens a pending recovery of its tool for
   * that code (`errorCodeOf`, src/guard/outcome.ts). Default the Pulse
   * catalog's (`STRICT_RESOLUTION`); give a catalog's own
   * (`compileCatalog(catalog).recoveryCodes`), or `[]` for none.
   */
  recoveryCodes?: readonly string[];
}

/**
 * A pending recovery a failure's code opened or bumped (the machine's
 * `recovery.raised`), with the `action` of the call that raised it: its
 * arguments' `action` (else `operation`) when a string, else null. For the
 * `action` label of `pulse_ai_strict_resolution_block_total`.
 */
export interface RaisedRecovery extends RecoveryRaisedEvent {
  action: string | null;
}

/** A function-valued option (zod checks only that it is callable). */
const callable = z.custom<(...args: never[]) => unknown>((value) => typeof value === 'function', { message: 'must be a function' });

/** The options `createSessionGuard` takes, each optional and of its type; any other key is refused. */
const sessionGuardOptionsSchema = z.strictObject({
  now: callable.optional(),
  classify: callable.optional(),
  confirmDestructive: z.boolean().optional(),
  selfVerifying: callable.optional(),
  autoCompleteVerification: z.boolean().optional(),
  strictFailedWrites: z.boolean().optional(),
  phantomClaims: z.boolean().optional(),
  snapshot: z.unknown().optional(),
  onDecision: callable.optional(),
  onRecovery: callable.optional(),
  onWarning: callable.optional(),
  onRecoveryRaised: callable.optional(),
  recoveryCodes: z.array(z.string().min(1)).optional(),
});

/**
 * Checks the options of a session guard (or of a store's guards) before any
 * session exists: a misspelled option, or a flag that is not a boolean
 * (`confirmDestructive: 'true'`), would otherwise switch a safety rule off
 * without a word.
 *
 * @param options what the caller passed; `undefined` is no options.
 * @param where the function named in the message, e.g. `createSessionGuard`.
 * @param omitted options the caller may not give there (a store sets `now` and `snapshot` itself).
 * @throws TypeError naming the first bad option and what it must be, e.g.
 *   `createSessionGuard: options.confirmDestrutive is not an option (the options are now, classify, ...)`.
 */
export function validateSessionGuardOptions(options: unknown, where: string, omitted: readonly string[] = []): void {
  if (options === undefined) return;
  const schema =
    omitted.length === 0
      ? sessionGuardOptionsSchema
      : sessionGuardOptionsSchema.omit(Object.fromEntries(omitted.map((key) => [key, true])) as never);
  const parsed = schema.safeParse(options);
  if (parsed.success) return;
  const issue = parsed.error.issues[0]!;
  const known = Object.keys(schema.shape).join(', ');
  if (issue.code === 'unrecognized_keys') {
    throw new TypeError(`${where}: options.${issue.keys[0]} is not an option (the options are ${known})`);
  }
  if (issue.path.length === 0) throw new TypeError(`${where}: the options must be an object { ${known} } when given`);
  const key = String(issue.path[0]);
  const expected =
    key === 'now' || key === 'classify' || key === 'selfVerifying' || key.startsWith('on')
      ? 'a function'
      : key === 'recoveryCodes'
        ? 'an array of non-empty strings'
        : 'a boolean';
  throw new TypeError(`${where}: options.${key} must be ${expected} when given`);
}
