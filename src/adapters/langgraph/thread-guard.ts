/**
 * Where a LangGraph thread's guard lives (`pulse-safety-fsm/langgraph`): in
 * the graph state (its persisted snapshot under `safety`, saved by the
 * checkpointer with every checkpoint, keyed by `thread_id`), or outside the
 * graph through `getGuard(threadId)`, one guard per conversation.
 *
 * Spec: DESIGN.md §5.7 (a guard per session); ASSISTANT_SAFETY.md "The invariants".
 */
import { Annotation, MessagesAnnotation, type LangGraphRunnableConfig } from '@langchain/langgraph';
import { ToolMessage } from '@langchain/core/messages';
import { createSessionGuard, type SessionGuardOptions } from '../../guard/session-guard.js';
import type { PersistedSnapshot } from '../../guard/snapshot.js';
import { AdapterConfigError, type AdapterGuard } from '../common.js';

/** The adapter's name in its errors. */
export const ADAPTER = 'langgraph';

/** The default state key of the persisted guard snapshot. */
export const SAFETY_STATE_KEY = 'safety';

/**
 * The state channel of the guard's persisted snapshot (`safety`, last value
 * wins). Spread its `spec` into your own state, or use
 * `MessagesWithSafetyAnnotation`.
 */
export const SafetyAnnotation = Annotation.Root({
  safety: Annotation<PersistedSnapshot | undefined>(),
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
 *   at each node and written back with the node's update. Needs a state with
 *   that channel (`SafetyAnnotation`) and, to persist, a checkpointer. A
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
  /** The state key of the snapshot; default `safety`. */
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
  return { guard, update: () => ({ [key]: guard.getPersistedSnapshot() }), inState: true };
}
