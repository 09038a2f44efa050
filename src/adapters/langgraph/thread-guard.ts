/**
 * Where a LangGraph thread's guard lives (`pulse-safety-fsm/langgraph`): in
 * the graph state (its persisted snapshot under `safety`, saved by the
 * checkpointer with every checkpoint, keyed by `thread_id`), or outside the
 * graph through `getGuard(threadId)`, one guard per conversation.
 *
 * Spec: DESIGN.md §5.7 (a guard per session); ASSISTANT_SAFETY.md "The invariants".
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  Annotation,
  BaseChannel,
  EmptyChannelError,
  InvalidUpdateError,
  MessagesAnnotation,
  type LangGraphRunnableConfig,
} from '@langchain/langgraph';
import { ToolMessage } from '@langchain/core/messages';
import { createSessionGuard, type SessionGuardOptions } from '../../guard/session-guard.js';
import type { PersistedSnapshot } from '../../guard/snapshot.js';
import { AdapterConfigError, type AdapterGuard } from '../common.js';

/** The adapter's name in its errors. */
export const ADAPTER = 'langgraph';

/** The default state key of the persisted guard snapshot. */
export const SAFETY_STATE_KEY = 'safety';

/** This process's key for sealing the snapshots its gated nodes write (never leaves the process). */
const SEAL_KEY = randomBytes(32);

/**
 * A guard snapshot as a gated node writes it to the state: its JSON and an
 * HMAC-SHA256 of that JSON under a key only this process knows. The
 * `safety` channel (`SafetySnapshotChannel`) stores the snapshot only when
 * the seal is this process's, so graph input cannot replace the gate.
 */
export interface SealedSnapshot {
  readonly sealedSnapshot: string;
  readonly seal: string;
}

/** The hex HMAC of a snapshot's JSON under this process's key. */
function sealOf(json: string): string {
  return createHmac('sha256', SEAL_KEY).update(json).digest('hex');
}

/** A snapshot sealed for the `safety` channel (what a gated node's update carries). */
export function sealSnapshot(snapshot: PersistedSnapshot): SealedSnapshot {
  const json = JSON.stringify(snapshot);
  return { sealedSnapshot: json, seal: sealOf(json) };
}

/** True for a value shaped as a sealed snapshot (whatever its seal). */
function isSealedShape(value: unknown): value is SealedSnapshot {
  if (typeof value !== 'object' || value === null) return false;
  const { sealedSnapshot, seal } = value as Record<string, unknown>;
  return typeof sealedSnapshot === 'string' && typeof seal === 'string';
}

/** The snapshot a value seals, or undefined when it is not sealed by this process (never throws). */
export function unsealSnapshot(value: unknown): PersistedSnapshot | undefined {
  if (!isSealedShape(value)) return undefined;
  const expected = Buffer.from(sealOf(value.sealedSnapshot), 'hex');
  const given = Buffer.from(value.seal, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  try {
    return JSON.parse(value.sealedSnapshot) as PersistedSnapshot;
  } catch {
    return undefined;
  }
}

/**
 * The state channel of the guard's persisted snapshot: it holds the last
 * snapshot a gated node wrote, and accepts nothing else. A write that is
 * not sealed by this process (graph input such as `invoke({ safety })`, a
 * `Command({ update })`, `updateState`, LangGraph's `Overwrite`) throws
 * `InvalidUpdateError` and the run stops: no input can replace the gate.
 * A write of `undefined` is no write. Its value and checkpoint are the
 * plain `PersistedSnapshot` (a checkpoint loaded from the checkpointer is
 * trusted as the checkpointer is). Spec: ASSISTANT_SAFETY.md "The invariants".
 */
export class SafetySnapshotChannel extends BaseChannel<PersistedSnapshot | undefined, SealedSnapshot, PersistedSnapshot> {
  lc_graph_name = 'PulseSafetySnapshot';
  private value: PersistedSnapshot[] = [];

  /** A copy holding a checkpoint's snapshot. */
  fromCheckpoint(checkpoint?: PersistedSnapshot): this {
    const channel = new SafetySnapshotChannel() as this;
    if (checkpoint !== undefined) channel.value = [checkpoint];
    return channel;
  }

  /**
   * Stores the snapshot a gated node sealed.
   * @throws InvalidUpdateError for a value not sealed by this process, or two writes in one step.
   */
  update(values: unknown[]): boolean {
    const written = values.filter((value) => value !== undefined);
    if (written.length === 0) return false;
    if (written.length !== 1) {
      throw new InvalidUpdateError(`pulse-safety-fsm/${ADAPTER}: two gated nodes wrote the guard's snapshot in one step`);
    }
    const snapshot = unsealSnapshot(written[0]);
    if (snapshot === undefined) {
      throw new InvalidUpdateError(
        `pulse-safety-fsm/${ADAPTER}: the guard's snapshot is written only by the gated nodes of this process; ` +
          'graph input, Command updates and updateState cannot set it',
      );
    }
    this.value = [snapshot];
    return true;
  }

  /** @throws EmptyChannelError before any snapshot. */
  get(): PersistedSnapshot {
    const [snapshot] = this.value;
    if (snapshot === undefined) throw new EmptyChannelError();
    return snapshot;
  }

  /** @throws EmptyChannelError before any snapshot. */
  checkpoint(): PersistedSnapshot {
    return this.get();
  }

  /** True once a snapshot was written. */
  override isAvailable(): boolean {
    return this.value.length > 0;
  }

  /** Any two such channels are the same kind. */
  override equals(other: BaseChannel): boolean {
    return other instanceof SafetySnapshotChannel;
  }
}

/**
 * The state channel of the guard's persisted snapshot (`safety`), written
 * only by the gated nodes (`SafetySnapshotChannel`). Spread its `spec` into
 * your own state, or use `MessagesWithSafetyAnnotation`.
 */
export const SafetyAnnotation = Annotation.Root({
  safety: new SafetySnapshotChannel(),
});

/** `MessagesAnnotation` plus the `safety` channel: the state of a gated chat agent. */
export const MessagesWithSafetyAnnotation = Annotation.Root({
  ...MessagesAnnotation.spec,
  ...SafetyAnnotation.spec,
});

/**
 * Where a thread's guard lives. Give every gated node of a graph the same.
 *
 * - Default: its snapshot in the graph state under `stateKey` (default
 *   `safety`), restored with `createSessionGuard({ ...guardOptions, snapshot })`
 *   at each node and written back with the node's update, sealed so that
 *   only the gated nodes of this process can set it (`SafetySnapshotChannel`:
 *   graph input cannot). Needs a state with that channel (`SafetyAnnotation`)
 *   and, to persist, a checkpointer. A
 *   node that finds tool results in the thread but no snapshot throws (a
 *   state without the channel silently drops the snapshot).
 * - `getGuard(threadId)`: one guard per conversation, the guard of the run's
 *   `configurable.thread_id` (a string or number, as a string), e.g.
 *   `(id) => sessions.session(id)` over `createSessionStore`, or
 *   `createSharedSessionStore` for many processes; the graph state then
 *   holds nothing of it. A run without a `thread_id` fails (`TypeError`).
 */
export interface ThreadGuardOptions {
  getGuard?: (threadId: string) => AdapterGuard;
  /**
   * The state key of the snapshot; default `safety`. Its channel must be a
   * `SafetySnapshotChannel` (e.g. `{ audit: new SafetySnapshotChannel() }`):
   * a node that finds a snapshot another channel stored throws.
   */
  stateKey?: string;
  /** Options of the guards restored from the state (clock `now` in epoch ms, `confirmDestructive`, ...). */
  guardOptions?: Omit<SessionGuardOptions, 'snapshot'>;
}

/** A thread's guard for one node run, and the update that persists it. */
export interface ThreadGuard {
  guard: AdapterGuard;
  /** The state update to return: the new snapshot in snapshot mode, nothing with `getGuard`. */
  update(): Record<string, unknown>;
  /** True when the guard lives in the graph state (a node that throws loses what it recorded). */
  inState: boolean;
}

/**
 * The run's `configurable.thread_id` as a string.
 * @throws TypeError when the run has none (a string or number).
 */
export function threadIdOf(config: LangGraphRunnableConfig | undefined): string {
  const id = config?.configurable?.thread_id as unknown;
  if (typeof id !== 'string' && typeof id !== 'number') {
    throw new TypeError(`pulse-safety-fsm/${ADAPTER}: getGuard needs the run's configurable.thread_id`);
  }
  return String(id);
}

/**
 * Checks a guard source at setup.
 * @throws AdapterConfigError when `getGuard` is given but is not a function.
 */
export function assertThreadGuardOptions(options: ThreadGuardOptions): void {
  if (options.getGuard !== undefined && typeof options.getGuard !== 'function') {
    throw new AdapterConfigError(ADAPTER, '`getGuard` must be a function (threadId: string) => SessionGuard');
  }
}

/**
 * The thread's guard for one node run (see `ThreadGuardOptions`).
 * @throws TypeError when the state is not an object, or tools ran but it holds no snapshot, or
 *   `getGuard` finds no `thread_id`.
 */
export function openThreadGuard(
  options: ThreadGuardOptions,
  selfVerifying: ((name: string) => boolean) | undefined,
  state: unknown,
  config: LangGraphRunnableConfig | undefined,
): ThreadGuard {
  if (options.getGuard !== undefined) {
    const guard = options.getGuard(threadIdOf(config));
    return { guard, update: () => ({}), inState: false };
  }
  const key = options.stateKey ?? SAFETY_STATE_KEY;
  if (typeof state !== 'object' || state === null || Array.isArray(state)) {
    throw new TypeError(
      `pulse-safety-fsm/${ADAPTER}: the guard's snapshot lives in the graph state under '${key}': use a state object ` +
        '(e.g. MessagesWithSafetyAnnotation), or pass getGuard',
    );
  }
  const snapshot = (state as Record<string, unknown>)[key];
  if (isSealedShape(snapshot)) {
    // A channel of another kind stored the sealed write as is: it would take any input as well.
    throw new TypeError(
      `pulse-safety-fsm/${ADAPTER}: the state's '${key}' channel must be SafetyAnnotation's (SafetySnapshotChannel): ` +
        'another channel lets graph input replace the guard',
    );
  }
  const messages = (state as { messages?: unknown }).messages;
  const toolsRan = Array.isArray(messages) && messages.some((m) => m instanceof ToolMessage);
  if ((snapshot === undefined || snapshot === null) && toolsRan) {
    // LangGraph drops an update for a key the state does not have: the gate would start afresh at every node.
    throw new TypeError(
      `pulse-safety-fsm/${ADAPTER}: tools have run in this thread but the state holds no guard snapshot under '${key}': ` +
        'give the state that channel (MessagesWithSafetyAnnotation, or SafetyAnnotation.spec), or pass getGuard',
    );
  }
  const guard = createSessionGuard({
    ...(selfVerifying === undefined ? {} : { selfVerifying }),
    ...options.guardOptions,
    ...(snapshot === undefined || snapshot === null ? {} : { snapshot }),
  });
  return { guard, update: () => ({ [key]: sealSnapshot(guard.getPersistedSnapshot()) }), inState: true };
}
