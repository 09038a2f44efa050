/**
 * What a caller gives the session guard: a tool call (`ToolCall`), the
 * options of its record (`RecordOptions`), and `validCall`, the one reading
 * of a call the guard trusts (its fields read once, of the right types).
 *
 * Spec: DESIGN.md §3 (correlation by call id), §5.1 (targets), §5.6 (destructive writes).
 */
import { MAX_NAME_LENGTH } from '../../machines/safety.policy.js';
import type { ToolKind } from '../../machines/safety.types.js';

/**
 * One tool call as the model asked for it. `id` correlates `check` and
 * `record` (parallel calls need it; an empty id counts as none); `kind`
 * given skips classification. A record without an id matches the calls of
 * its tool checked without one: when several of them are in flight, its
 * `kind` and `targets`, or its `args` classified, say which one it is, and
 * without them the worst case is assumed (see `SessionGuard.record`).
 *
 * `targets` (DESIGN.md §5.1: paths, `<argument>=<value>` ids, `table:<name>`)
 * and `destructive` (§5.6), when given, are used as they are, like `kind`;
 * otherwise the guard's classifier gives them (none, and false, for a
 * kind-only classifier). A given `kind` without `targets` has no targets.
 *
 * `links` (issue 24, `Classification.links`): canonical paths of symbolic
 * links a write creates that lead out of their own directory; used as given
 * when given, else the classifier's. Kept by the session once the write is
 * admitted: a later target at or under one is an unknown place.
 */
export interface ToolCall {
  id?: string;
  name: string;
  args?: unknown;
  kind?: ToolKind;
  targets?: string[];
  destructive?: boolean;
  links?: string[];
  /**
   * The call's result is output its arguments choose (`Classification.echoes`:
   * a shell's stdout, a query's rows): it never verifies the call itself.
   * Used as given, like `kind`; else the classifier's. An adapter gives the
   * whole classification it checked with to the record (issue 26).
   */
  echoes?: boolean;
}

/**
 * Options of `SessionGuard.record`. `result`: the tool's result (its text, or
 * an object). A successful write whose result says `verification.ok === true`
 * verifies itself (DESIGN.md §1, `selfVerifies`).
 */
export interface RecordOptions {
  result?: unknown;
  /**
   * For a failure: the call may still have applied (it threw, timed out or
   * was cancelled after it started). A failed write so recorded needs
   * verification, as under `strictFailedWrites` (DESIGN.md §3.8), whatever
   * the guard's own setting. Default false. Ignored on a success.
   */
  possiblyApplied?: boolean;
  /**
   * For a failure: the recoverable error code its result raised (issue 28,
   * e.g. `STRICT_RESOLUTION`): it opens a pending recovery of the tool for
   * that code. Not given: read from `result` against the guard's
   * `recoveryCodes` (`recoveryCodeOf`). Null: none, `result` not read for
   * one. Ignored on a success.
   */
  errorCode?: string | null;
  /**
   * For a failure: the call surely never ran (a human rejected it, it was
   * abandoned before it started). Its failure is then not remembered for
   * `repeated-write` (issue 28). Default false: a failed write may still
   * have happened. Ignored on a success.
   */
  neverRan?: boolean;
}

/**
 * Internal: the call's fields, read once into a plain object, so a getter or proxy trap
 * can neither answer differently later nor throw anything but a TypeError.
 */
export function validCall(call: unknown, method: string): ToolCall {
  const shape = () => `${method}: expected a tool call object { name: string, id?, args?, kind?, targets?, destructive?, links?, echoes? }`;
  if (typeof call !== 'object' || call === null) throw new TypeError(shape());
  let fields: {
    name?: unknown;
    id?: unknown;
    args?: unknown;
    kind?: unknown;
    targets?: unknown;
    destructive?: unknown;
    links?: unknown;
    echoes?: unknown;
  };
  try {
    const { name, id, args, kind, targets, destructive, links, echoes } = call as Record<string, unknown>;
    // Targets and links copied once, so a getter cannot answer differently to the machine.
    const copied = Array.isArray(targets) ? [...(targets as unknown[])] : targets;
    const copiedLinks = Array.isArray(links) ? [...(links as unknown[])] : links;
    fields = {
      name,
      id,
      args,
      kind,
      targets: copied,
      destructive,
      ...(copiedLinks === undefined ? {} : { links: copiedLinks }),
      ...(echoes === undefined ? {} : { echoes }),
    };
  } catch (error) {
    throw new TypeError(`${method}: the tool call could not be read (a getter or proxy trap threw)`, { cause: error });
  }
  if (typeof fields.name !== 'string') throw new TypeError(shape());
  if (fields.id !== undefined && typeof fields.id !== 'string') {
    throw new TypeError(`${method}: a tool call's id must be a string when given`);
  }
  if (fields.name.length > MAX_NAME_LENGTH || (fields.id !== undefined && fields.id.length > MAX_NAME_LENGTH)) {
    throw new TypeError(`${method}: a tool call's name and id must be at most ${MAX_NAME_LENGTH} characters (MAX_NAME_LENGTH)`);
  }
  if (fields.targets !== undefined && (!Array.isArray(fields.targets) || !fields.targets.every((t) => typeof t === 'string'))) {
    throw new TypeError(`${method}: a tool call's targets must be an array of strings when given`);
  }
  if (fields.links !== undefined && (!Array.isArray(fields.links) || !fields.links.every((t) => typeof t === 'string'))) {
    throw new TypeError(`${method}: a tool call's links must be an array of strings when given`);
  }
  if (fields.echoes !== undefined && typeof fields.echoes !== 'boolean') {
    throw new TypeError(`${method}: a tool call's echoes flag must be a boolean when given`);
  }
  if (fields.destructive !== undefined && typeof fields.destructive !== 'boolean') {
    throw new TypeError(`${method}: a tool call's destructive flag must be a boolean when given`);
  }
  return fields as ToolCall;
}
