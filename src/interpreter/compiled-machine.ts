/**
 * The runner half of the compiled interpreter: `CompiledMachine` runs a
 * machine's transition table (`compileMachineTable`) with the machine's own
 * guards and the plain logic of its actions, as XState's `transition`
 * computes for such a machine (the same next state, context and emitted
 * events, in order) without an actor, a snapshot object or an action
 * executor: one state object `{ value, context }` per step that changes
 * something, one context copy per step that assigns, and nothing per step
 * that does not.
 *
 * `advance` is the same step made in place, for a caller that owns its
 * state and keeps no other reference to its context (the session guard):
 * no copy at all.
 *
 * A class, as XState's `Actor`: one object per compiled machine holds the
 * table, and every step runs the same methods (one shape, so the guard's
 * hot path stays monomorphic), with one scratch object per step for what
 * it emits.
 *
 * Spec: DESIGN.md §1 (the statechart is the specification); issue 13 (the
 * compiled interpreter, the guard's fast path).
 */
import type { EventObject } from 'xstate';
import type { CompiledState, CompiledTransition, MachineTable } from './compile-machine-table.js';

/** The state of a compiled machine: the state's name and the context. Never mutated by the interpreter. */
export interface InterpreterState<TContext> {
  readonly value: string;
  readonly context: TContext;
}

/** A state that `advance` changes in place: the caller's own. */
export interface MutableInterpreterState<TContext> {
  value: string;
  context: TContext;
}

/** One step of a compiled machine: the state after it and the events it emitted, in order (a shared empty array when none). */
export interface InterpreterStep<TContext, TEmitted> {
  readonly state: InterpreterState<TContext>;
  readonly emitted: readonly TEmitted[];
}

/** The most eventless steps one event may take before the interpreter gives up (a cycle of `always` transitions). */
export const MAX_EVENTLESS_STEPS = 100;

const NO_EMITTED: readonly never[] = Object.freeze([]);

/**
 * One step's scratch, made once per step: the events it emitted so far
 * (`NO_EMITTED`, then the first action's own array, not copied, then an
 * array of the step's own, `owned`, once a second action emits), whether
 * the last transition taken changed anything, and how the step is made.
 */
interface Step<T> {
  emitted: readonly T[];
  owned: boolean;
  /** Whether the last transition taken changed the value or assigned to the context. */
  changed: boolean;
  /** In place (`advance`): assign into the state's own context and set its value; otherwise copy (`transition`). */
  readonly inPlace: boolean;
}

/** The guard argument of one selection: `{ context, event }`, as XState passes it. */
interface GuardArgs<TContext> {
  context: TContext;
  event: unknown;
}

/**
 * Whether a transition's guard passes. `args` is the selection's one guard
 * argument object, shared by its guards: guards are pure and keep nothing.
 * @throws Error naming the guard, event and state when the guard throws (XState's wording), with it as the cause.
 */
function passes(transition: CompiledTransition, args: GuardArgs<unknown>, eventType: string): boolean {
  if (transition.guard === null) return true;
  try {
    return transition.guard(args, transition.guardParams);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(
      `Unable to evaluate guard '${transition.guardName}' in transition for event '${eventType}' in state node '${transition.source}':\n${message}`,
      { cause: error },
    );
  }
}

/** Appends what one action emitted to the step's events: the action's own array first, a copy of the step's own once a second one emits. */
function collect<T>(step: Step<T>, emitted: readonly T[] | undefined): void {
  if (emitted === undefined || emitted.length === 0) return;
  if (step.emitted === NO_EMITTED) {
    step.emitted = emitted;
    return;
  }
  if (!step.owned) {
    step.emitted = [...step.emitted];
    step.owned = true;
  }
  (step.emitted as T[]).push(...emitted);
}

/**
 * A compiled machine, running its table. `initial` and `transition` are
 * pure: they never change the state they are given, and return a new state
 * object only when the value or the context changed (otherwise the same
 * object). Made by `compileMachine` (index.ts).
 */
export class CompiledMachine<TContext, TEvent extends EventObject, TEmitted, TInput> {
  /** The machine's id. */
  readonly id: string;
  /** The machine's states, in document order; the initial one is `initialValue`. */
  readonly states: readonly string[];
  /** The initial state's name. */
  readonly initialValue: string;
  private readonly byState: ReadonlyMap<string, CompiledState>;
  private readonly contextConfig: unknown;

  constructor(table: MachineTable) {
    this.id = table.id;
    this.states = table.states;
    this.initialValue = table.initialValue;
    this.byState = table.byState;
    this.contextConfig = table.context;
  }

  /**
   * The state of a fresh session: the machine's context factory run on
   * `input` (as XState's `createActor(machine, { input })`), then any
   * eventless transitions enabled at start (what their actions emit is not
   * reported: a fresh session has no listener yet).
   * @throws Error when the context factory or an action throws, or eventless transitions do not settle.
   */
  initial(input: TInput): InterpreterState<TContext> {
    let context: TContext;
    if (typeof this.contextConfig === 'function') {
      const spawn = () => {
        throw new Error(`machine '${this.id}': spawning actors is not supported by the compiled interpreter`);
      };
      context = { ...((this.contextConfig as (args: unknown) => object)({ input, spawn, self: undefined }) as object) } as TContext;
    } else {
      context = { ...((this.contextConfig ?? {}) as object) } as TContext;
    }
    const step: Step<TEmitted> = { emitted: NO_EMITTED, owned: false, changed: false, inPlace: false };
    const state = { value: this.initialValue, context };
    return this.settle(state, this.byState.get(this.initialValue)!, { type: 'xstate.init', input }, step);
  }

  /**
   * The step of `event` from `state`: the first transition of the state,
   * then of the root, for the event's type whose guard passes (evaluated on
   * the context before the step), its actions in order, each on the context
   * the previous ones left, then eventless transitions until none is
   * enabled. An event no transition takes leaves the state as it is (the
   * same object; eventless transitions are still tried).
   * @throws TypeError when `state.value` is not a state of the machine.
   * @throws Error naming the guard, event and state when a guard throws (XState's wording); what an action throws, as is.
   */
  transition(state: InterpreterState<TContext>, event: TEvent): InterpreterStep<TContext, TEmitted> {
    const step: Step<TEmitted> = { emitted: NO_EMITTED, owned: false, changed: false, inPlace: false };
    const next = this.run(state, event, step);
    return { state: next, emitted: step.emitted };
  }

  /**
   * The step `transition` takes, made in place: `state.value` is set and the
   * assigned fields are written into `state.context` itself (no copy), and
   * the emitted events are returned. For a caller that owns `state` and
   * keeps no other reference to its context (any other holder would see it
   * change). Guards still see the context before the step, and each action
   * the context the actions before it left, as in `transition`.
   * @throws as `transition`; when an action throws, `state` may be left
   *   part-way through the step (discard it, as XState stops an actor).
   */
  advance(state: MutableInterpreterState<TContext>, event: TEvent): readonly TEmitted[] {
    const step: Step<TEmitted> = { emitted: NO_EMITTED, owned: false, changed: false, inPlace: true };
    this.run(state, event, step);
    return step.emitted;
  }

  /**
   * Whether `event` would be taken from `state`: a transition whose guard
   * passes and that has a target or actions (as XState's `snapshot.can`).
   * Runs guards only, no action.
   * @throws as `transition` for a bad state or a guard that throws.
   */
  can(state: InterpreterState<TContext>, event: TEvent): boolean {
    const compiled = this.compiledStateOf(state);
    const eventType = (event as { type?: unknown } | null)?.type;
    if (typeof eventType !== 'string') return false;
    const transition = this.select(compiled.on.get(eventType), state.context, event, eventType);
    return transition !== null && (transition.target !== null || transition.actions.length > 0);
  }

  /** Whether `value` names a state of the machine. */
  hasState(value: unknown): value is string {
    return typeof value === 'string' && this.byState.has(value);
  }

  /** `state`'s entry of the table. @throws TypeError when `state.value` is not a state of the machine. */
  private compiledStateOf(state: InterpreterState<TContext>): CompiledState {
    const compiled = typeof state?.value === 'string' ? this.byState.get(state.value) : undefined;
    if (compiled === undefined) {
      throw new TypeError(`machine '${this.id}': '${String(state?.value)}' is not one of its states (${this.states.join(', ')})`);
    }
    return compiled;
  }

  /** The first of `candidates` whose guard passes on `context`, or null. */
  private select(
    candidates: readonly CompiledTransition[] | undefined,
    context: TContext,
    event: unknown,
    eventType: string,
  ): CompiledTransition | null {
    if (candidates === undefined) return null;
    const args: GuardArgs<TContext> = { context, event };
    for (const candidate of candidates) if (passes(candidate, args, eventType)) return candidate;
    return null;
  }

  /** One event from `state`: its transition, then eventless ones. */
  private run(state: InterpreterState<TContext>, event: unknown, step: Step<TEmitted>): InterpreterState<TContext> {
    let compiled = this.compiledStateOf(state);
    const eventType = (event as { type?: unknown } | null)?.type;
    let next = state;
    if (typeof eventType === 'string') {
      const transition = this.select(compiled.on.get(eventType), state.context, event, eventType);
      if (transition !== null) {
        next = this.take(transition, state, event, step);
        if (transition.target !== null) compiled = this.byState.get(next.value)!;
      }
    }
    return this.settle(next, compiled, event, step);
  }

  /**
   * Runs one selected transition from `state`; what its actions emit is
   * appended to `step.emitted`. Pure (`step.inPlace` false): returns a new
   * state, with one context copy for the step, or `state` itself when
   * nothing changed. In place: assigns into `state.context` and sets
   * `state.value`, and returns `state`. `step.changed` says whether anything
   * changed, either way.
   */
  private take(
    transition: CompiledTransition,
    state: InterpreterState<TContext>,
    event: unknown,
    step: Step<TEmitted>,
  ): InterpreterState<TContext> {
    let context = state.context;
    let copied = step.inPlace;
    let assigned = false;
    for (const action of transition.actions) {
      const result = action.logic(context, event, action.params);
      if (result.context !== undefined) {
        // As XState's assign: the context so far, with the assigned fields over it. One copy per step,
        // private to it until returned, so later actions of the step assign into the same copy.
        if (!copied) {
          context = { ...(context as object) } as TContext;
          copied = true;
        }
        Object.assign(context as object, result.context);
        assigned = true;
      }
      collect(step, result.emitted as readonly TEmitted[] | undefined);
    }
    const value = transition.target ?? state.value;
    step.changed = assigned || value !== state.value;
    if (step.inPlace) {
      (state as { value: string }).value = value;
      return state;
    }
    return step.changed ? { value, context } : state;
  }

  /**
   * Eventless transitions until none is enabled, or a step changes nothing
   * (as XState's macrostep). `compiled` is `state`'s own entry of the table.
   * @throws Error when they have not settled after `MAX_EVENTLESS_STEPS` (a cycle of always transitions).
   */
  private settle(
    state: InterpreterState<TContext>,
    compiled: CompiledState,
    event: unknown,
    step: Step<TEmitted>,
  ): InterpreterState<TContext> {
    for (let steps = 0; ; steps++) {
      const always = compiled.always;
      if (always.length === 0) return state;
      const transition = this.select(always, state.context, event, '');
      if (transition === null) return state;
      if (steps >= MAX_EVENTLESS_STEPS) {
        throw new Error(
          `machine '${this.id}': eventless transitions did not settle after ${MAX_EVENTLESS_STEPS} steps (a cycle of always transitions)`,
        );
      }
      state = this.take(transition, state, event, step);
      if (!step.changed) return state;
      if (transition.target !== null) compiled = this.byState.get(state.value)!;
    }
  }
}
