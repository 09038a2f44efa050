/**
 * A compiled interpreter of a flat XState v5 machine: the transition table
 * is read from the machine itself at load time (each state's transitions by
 * event type, the root's `on` after them, eventless `always` transitions:
 * guard name and params, target, action names and params), and run with the
 * machine's own guard implementations (`machine.implementations.guards`) and
 * the plain logic of its actions (`(context, event, params) => { context?,
 * emitted? }`, the functions `setup()` wraps). The statechart stays the one
 * source of truth: a guard or transition changed in `machines/` changes this
 * fast path with no second edit.
 *
 * It computes what XState's `transition` computes for such a machine (the
 * same next state, context and emitted events, in order) without an actor,
 * a snapshot object or an action executor: one state object `{ value,
 * context }` per step that changes something, one context copy per step
 * that assigns, and nothing per step that does not.
 *
 * `advance` is the same step made in place, for a caller that owns its
 * state and keeps no other reference to its context (the session guard):
 * no copy at all.
 *
 * Supported: one level of atomic states under the root; transitions on exact
 * event types in states and at the root (a state's own transitions first,
 * then the root's, the first whose guard passes wins, as XState's
 * `getTransitionData`); eventless `always` transitions, taken after every
 * event (handled or not) and at start, until none is enabled; targets that
 * are states of the root; named guards with static params; named actions
 * with static params, each with plain logic. Anything else is refused by
 * `compileMachine` with a `MachineCompileError` naming it: nested, parallel,
 * final or history states, delayed transitions (`after`), `invoke`, entry or
 * exit actions, `onDone`, wildcard event descriptors, inline guard or action
 * functions, higher-order guards (`and`, `or`, `not`), params given as
 * functions, and an action name without plain logic or a guard name without
 * an implementation.
 *
 * Spec: DESIGN.md §1 (the statechart is the specification); issue 13 (the
 * compiled interpreter, the guard's fast path).
 */
import type { AnyStateMachine, ContextFrom, EmittedFrom, EventFromLogic, EventObject, InputFrom } from 'xstate';
import { safetyActionLogic } from '../../machines/safety.actions.js';
import { safetyMachine } from '../../machines/safety.machine.js';
import type { SafetyContext, SafetyEmitted, SafetyEvent, SafetyInput } from '../../machines/safety.types.js';

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

/**
 * What an action's plain logic returns: `context`, the fields it assigns
 * (merged into the context as XState's `assign` does), and `emitted`, the
 * events it emits, in order. Both absent: nothing.
 */
export interface PlainActionResult<TContext, TEmitted> {
  context?: Partial<TContext>;
  emitted?: readonly TEmitted[];
}

/**
 * An action as a plain function of the context (as left by the actions
 * before it in the same transition), the event, and the action's params
 * (undefined when it has none). Pure: no I/O, no mutation of its arguments.
 */
export type PlainActionLogic<TContext, TEvent, TEmitted> = (
  context: TContext,
  event: TEvent,
  params: never,
) => PlainActionResult<TContext, TEmitted>;

/** The plain logic of a machine's actions, by the name the statechart uses. */
export type PlainActionLogicOf<TMachine extends AnyStateMachine> = Readonly<
  Record<string, PlainActionLogic<ContextFrom<TMachine>, EventFromLogic<TMachine>, EmittedFrom<TMachine>>>
>;

/**
 * A compiled machine. `initial` and `transition` are pure: they never change
 * the state they are given, and return a new state object only when the
 * value or the context changed (otherwise the same object).
 */
export interface CompiledMachine<TContext, TEvent extends EventObject, TEmitted, TInput> {
  /** The machine's id. */
  readonly id: string;
  /** The machine's states, in document order; the initial one is `initialValue`. */
  readonly states: readonly string[];
  /** The initial state's name. */
  readonly initialValue: string;
  /**
   * The state of a fresh session: the machine's context factory run on
   * `input` (as XState's `createActor(machine, { input })`), then any
   * eventless transitions enabled at start (what their actions emit is not
   * reported: a fresh session has no listener yet).
   * @throws Error when the context factory or an action throws, or eventless transitions do not settle.
   */
  initial(input: TInput): InterpreterState<TContext>;
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
  transition(state: InterpreterState<TContext>, event: TEvent): InterpreterStep<TContext, TEmitted>;
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
  advance(state: MutableInterpreterState<TContext>, event: TEvent): readonly TEmitted[];
  /**
   * Whether `event` would be taken from `state`: a transition whose guard
   * passes and that has a target or actions (as XState's `snapshot.can`).
   * Runs guards only, no action.
   * @throws as `transition` for a bad state or a guard that throws.
   */
  can(state: InterpreterState<TContext>, event: TEvent): boolean;
  /** Whether `value` names a state of the machine. */
  hasState(value: unknown): value is string;
}

/** A machine the interpreter cannot run, refused at compile time; the message names the state, event and feature. */
export class MachineCompileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MachineCompileError';
  }
}

/** The most eventless steps one event may take before the interpreter gives up (a cycle of `always` transitions). */
export const MAX_EVENTLESS_STEPS = 100;

type GuardImplementation = (args: { context: unknown; event: unknown }, params: unknown) => boolean;
type AnyLogic = (context: unknown, event: unknown, params: unknown) => PlainActionResult<unknown, unknown>;

interface CompiledAction {
  readonly name: string;
  readonly logic: AnyLogic;
  readonly params: unknown;
}

interface CompiledTransition {
  readonly guardName: string | null;
  readonly guard: GuardImplementation | null;
  readonly guardParams: unknown;
  /** The target state's name; null for a transition without a target (the state stays). */
  readonly target: string | null;
  readonly actions: readonly CompiledAction[];
  /** Where it was declared, for error messages: the state node's id. */
  readonly source: string;
}

interface CompiledState {
  /** Candidates by event type: the state's own, then the root's. */
  readonly on: ReadonlyMap<string, readonly CompiledTransition[]>;
  /** Eventless candidates: the state's own, then the root's. */
  readonly always: readonly CompiledTransition[];
}

const NO_EMITTED: readonly never[] = Object.freeze([]);

/**
 * The events a step emitted so far: `NO_EMITTED`, then the first action's
 * own array (not copied), then an array of the step's own (`owned`) once a
 * second action emits.
 */
interface Emitting<T> {
  emitted: readonly T[];
  owned: boolean;
  /** Whether the last transition taken changed the value or assigned to the context. */
  changed: boolean;
}

/** The keys of a state node config the interpreter reads or that change nothing at run time. */
const KNOWN_STATE_KEYS = new Set([
  'on',
  'always',
  'description',
  'meta',
  'tags',
  'id',
  'key',
  'initial',
  'states',
  'context',
  'types',
  'version',
  'schemas',
  // Checked on the state node itself (non-empty is refused, with its own message):
  'type',
  'entry',
  'exit',
  'invoke',
]);

function where(node: { id: string }): string {
  return `state '${node.id}'`;
}

/** A guard or action reference's name and static params; refuses inline functions and dynamic params. */
function reference(ref: unknown, what: 'guard' | 'action', context: string): { name: string; params: unknown } {
  if (typeof ref === 'string') return { name: ref, params: undefined };
  if (typeof ref === 'function') {
    const builtin = (ref as { type?: unknown }).type;
    throw new MachineCompileError(
      `${context}: an inline ${what} function${typeof builtin === 'string' ? ` (${builtin})` : ''} cannot be compiled; ` +
        `name it in setup() (${what === 'action' ? 'with plain logic' : 'as a plain function'})`,
    );
  }
  if (typeof ref === 'object' && ref !== null && typeof (ref as { type?: unknown }).type === 'string') {
    const { type, params } = ref as { type: string; params?: unknown };
    if (typeof params === 'function') {
      throw new MachineCompileError(`${context}: the ${what} '${type}' has params given as a function; only static params can be compiled`);
    }
    return { name: type, params };
  }
  throw new MachineCompileError(`${context}: a ${what} reference that is neither a name nor { type, params }`);
}

/**
 * Compiles `machine` for `actionLogic`, the plain logic of every action the
 * machine names (by name). Read once, at call time: call it at module load.
 *
 * @throws MachineCompileError when the machine uses anything the interpreter
 *   does not support (see the module comment), naming the state, the event
 *   and what it is; or when an action it names has no plain logic, or a
 *   guard it names has no plain implementation.
 */
export function compileMachine<TMachine extends AnyStateMachine>(
  machine: TMachine,
  actionLogic: PlainActionLogicOf<TMachine>,
): CompiledMachine<ContextFrom<TMachine>, EventFromLogic<TMachine>, EmittedFrom<TMachine>, InputFrom<TMachine>> {
  type C = ContextFrom<TMachine>;
  type Em = EmittedFrom<TMachine>;
  const root = machine.root;
  const guards = machine.implementations.guards as Record<string, unknown>;
  const implementedActions = machine.implementations.actions as Record<string, unknown>;
  const logicOf = actionLogic as unknown as Readonly<Record<string, unknown>>;

  const refuseNodeFeatures = (node: typeof root): void => {
    const config = node.config as Record<string, unknown>;
    // `after` first: XState implements it with entry and exit actions of its own.
    if (config.after !== undefined) throw new MachineCompileError(`${where(node)}: delayed transitions (after) are not supported`);
    if (node.entry.length > 0) throw new MachineCompileError(`${where(node)}: entry actions are not supported`);
    if (node.exit.length > 0) throw new MachineCompileError(`${where(node)}: exit actions are not supported`);
    if (node.invoke.length > 0) throw new MachineCompileError(`${where(node)}: invoke is not supported`);
    if (config.onDone !== undefined) throw new MachineCompileError(`${where(node)}: onDone is not supported`);
    if (config.route !== undefined) throw new MachineCompileError(`${where(node)}: route is not supported`);
    for (const key of Object.keys(config)) {
      if (!KNOWN_STATE_KEYS.has(key) && config[key] !== undefined) {
        throw new MachineCompileError(`${where(node)}: the state config key '${key}' is not supported`);
      }
    }
  };

  if (root.type !== 'compound') {
    throw new MachineCompileError(`machine '${machine.id}': the root must have child states (it is ${root.type})`);
  }
  refuseNodeFeatures(root);
  const children = Object.values(root.states);
  for (const child of children) {
    if (child.type !== 'atomic') {
      const kind = child.type === 'compound' ? 'nested states' : `${child.type} states`;
      throw new MachineCompileError(`${where(child)}: ${kind} are not supported (only atomic states under the root)`);
    }
    refuseNodeFeatures(child);
  }
  const names = children.map((child) => child.key);
  const stateNames = new Set(names);
  const initialValue = root.config.initial;
  if (typeof initialValue !== 'string' || !stateNames.has(initialValue)) {
    throw new MachineCompileError(`machine '${machine.id}': the initial state must be the name of one of its states`);
  }

  const compileTransition = (definition: {
    guard?: unknown;
    target?: readonly { key: string; parent?: unknown; id: string }[] | undefined;
    actions: readonly unknown[];
    eventType: string;
    source: { id: string };
  }): CompiledTransition => {
    const context = `${where(definition.source)}, ${definition.eventType === '' ? 'always' : `on '${definition.eventType}'`}`;
    let guardName: string | null = null;
    let guard: GuardImplementation | null = null;
    let guardParams: unknown;
    if (definition.guard !== undefined) {
      const ref = reference(definition.guard, 'guard', context);
      const implementation = Object.prototype.hasOwnProperty.call(guards, ref.name) ? guards[ref.name] : undefined;
      if (typeof implementation !== 'function') {
        throw new MachineCompileError(`${context}: the guard '${ref.name}' has no implementation in setup()`);
      }
      if ('check' in implementation) {
        throw new MachineCompileError(
          `${context}: the guard '${ref.name}' is a higher-order guard (and, or, not); only plain guard functions are supported`,
        );
      }
      guardName = ref.name;
      guard = implementation as GuardImplementation;
      guardParams = ref.params;
    }
    let target: string | null = null;
    if (definition.target !== undefined && definition.target.length > 0) {
      const [node, ...more] = definition.target;
      if (more.length > 0 || node === undefined || node.parent !== root || !stateNames.has(node.key)) {
        throw new MachineCompileError(`${context}: targets must be one state under the root`);
      }
      target = node.key;
    }
    const actions = definition.actions.map((action): CompiledAction => {
      const ref = reference(action, 'action', context);
      const logic = Object.prototype.hasOwnProperty.call(logicOf, ref.name) ? logicOf[ref.name] : undefined;
      if (typeof logic !== 'function') {
        throw new MachineCompileError(`${context}: the action '${ref.name}' has no plain logic to run it with`);
      }
      if (!Object.prototype.hasOwnProperty.call(implementedActions, ref.name)) {
        throw new MachineCompileError(`${context}: the action '${ref.name}' is not implemented in setup()`);
      }
      return { name: ref.name, logic: logic as AnyLogic, params: ref.params };
    });
    return { guardName, guard, guardParams, target, actions, source: definition.source.id };
  };

  const compileOn = (node: typeof root): Map<string, CompiledTransition[]> => {
    const on = new Map<string, CompiledTransition[]>();
    for (const [eventType, definitions] of node.transitions) {
      if (eventType === '*' || eventType.endsWith('.*')) {
        throw new MachineCompileError(`${where(node)}: the wildcard event descriptor '${eventType}' is not supported`);
      }
      on.set(
        eventType,
        definitions.map((definition) => compileTransition(definition as never)),
      );
    }
    return on;
  };
  const compileAlways = (node: typeof root): CompiledTransition[] =>
    (node.always ?? []).map((definition) => compileTransition({ ...(definition as object), eventType: '' } as never));

  const rootOn = compileOn(root);
  const rootAlways = compileAlways(root);
  const table = new Map<string, CompiledState>();
  for (const child of children) {
    const on = compileOn(child);
    for (const [eventType, definitions] of rootOn) on.set(eventType, [...(on.get(eventType) ?? []), ...definitions]);
    table.set(child.key, { on, always: [...compileAlways(child), ...rootAlways] });
  }

  const contextConfig = (machine.config as { context?: unknown }).context;

  const compiledStateOf = (state: InterpreterState<C>): CompiledState => {
    const compiled = typeof state?.value === 'string' ? table.get(state.value) : undefined;
    if (compiled === undefined) {
      throw new TypeError(`machine '${machine.id}': '${String(state?.value)}' is not one of its states (${names.join(', ')})`);
    }
    return compiled;
  };

  /**
   * Whether a transition's guard passes. `args` is the step's one guard
   * argument object ({ context, event }, as XState passes), shared by the
   * guards of one selection: guards are pure and keep nothing.
   */
  const passes = (transition: CompiledTransition, args: { context: C; event: unknown }, eventType: string): boolean => {
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
  };

  const select = (candidates: readonly CompiledTransition[] | undefined, context: C, event: unknown, eventType: string) => {
    if (candidates === undefined) return null;
    const args = { context, event };
    for (const candidate of candidates) if (passes(candidate, args, eventType)) return candidate;
    return null;
  };

  /**
   * Runs one selected transition from `state`; what its actions emit is
   * appended to `out.emitted` (created on the first). Pure (`inPlace`
   * false): returns a new state, with one context copy for the step, or
   * `state` itself when nothing changed. In place: assigns into
   * `state.context` and sets `state.value`, and returns `state`; `out.changed`
   * says whether anything changed, either way.
   */
  const take = (
    transition: CompiledTransition,
    state: InterpreterState<C>,
    event: unknown,
    out: Emitting<Em>,
    inPlace: boolean,
  ): InterpreterState<C> => {
    let context = state.context;
    let copied = inPlace;
    let assigned = false;
    for (const action of transition.actions) {
      const result = action.logic(context, event, action.params);
      if (result.context !== undefined) {
        // As XState's assign: the context so far, with the assigned fields over it. One copy per step,
        // private to it until returned, so later actions of the step assign into the same copy.
        if (!copied) {
          context = { ...(context as object) } as C;
          copied = true;
        }
        Object.assign(context as object, result.context);
        assigned = true;
      }
      const emitted = result.emitted as readonly Em[] | undefined;
      if (emitted !== undefined && emitted.length > 0) {
        if (out.emitted === NO_EMITTED) out.emitted = emitted;
        else {
          if (!out.owned) {
            out.emitted = [...out.emitted];
            out.owned = true;
          }
          (out.emitted as Em[]).push(...emitted);
        }
      }
    }
    const value = transition.target ?? state.value;
    out.changed = assigned || value !== state.value;
    if (inPlace) {
      (state as { value: string }).value = value;
      return state;
    }
    return out.changed ? { value, context } : state;
  };

  /**
   * Eventless transitions until none is enabled, or a step changes nothing
   * (as XState's macrostep). `compiled` is `state`'s own entry of the table.
   */
  const settle = (
    state: InterpreterState<C>,
    compiled: CompiledState,
    event: unknown,
    out: Emitting<Em>,
    inPlace: boolean,
  ): InterpreterState<C> => {
    for (let steps = 0; ; steps++) {
      const always = compiled.always;
      if (always.length === 0) return state;
      const transition = select(always, state.context, event, '');
      if (transition === null) return state;
      if (steps >= MAX_EVENTLESS_STEPS) {
        throw new Error(
          `machine '${machine.id}': eventless transitions did not settle after ${MAX_EVENTLESS_STEPS} steps (a cycle of always transitions)`,
        );
      }
      state = take(transition, state, event, out, inPlace);
      if (!out.changed) return state;
      if (transition.target !== null) compiled = table.get(state.value)!;
    }
  };

  /** One event from `state`: its transition, then eventless ones. */
  const run = (state: InterpreterState<C>, event: unknown, out: Emitting<Em>, inPlace: boolean): InterpreterState<C> => {
    let compiled = compiledStateOf(state);
    const eventType = (event as { type?: unknown } | null)?.type;
    let next = state;
    if (typeof eventType === 'string') {
      const transition = select(compiled.on.get(eventType), state.context, event, eventType);
      if (transition !== null) {
        next = take(transition, state, event, out, inPlace);
        if (transition.target !== null) compiled = table.get(next.value)!;
      }
    }
    return settle(next, compiled, event, out, inPlace);
  };

  return {
    id: machine.id,
    states: Object.freeze(names),
    initialValue,
    initial(input) {
      let context: C;
      if (typeof contextConfig === 'function') {
        const spawn = () => {
          throw new Error(`machine '${machine.id}': spawning actors is not supported by the compiled interpreter`);
        };
        context = { ...((contextConfig as (args: unknown) => object)({ input, spawn, self: undefined }) as object) } as C;
      } else {
        context = { ...((contextConfig ?? {}) as object) } as C;
      }
      const out: Emitting<Em> = { emitted: NO_EMITTED, owned: false, changed: false };
      return settle({ value: initialValue, context }, table.get(initialValue)!, { type: 'xstate.init', input }, out, false);
    },
    transition(state, event) {
      const out: Emitting<Em> = { emitted: NO_EMITTED, owned: false, changed: false };
      const next = run(state, event, out, false);
      return { state: next, emitted: out.emitted };
    },
    advance(state, event) {
      const out: Emitting<Em> = { emitted: NO_EMITTED, owned: false, changed: false };
      run(state, event, out, true);
      return out.emitted;
    },
    can(state, event) {
      const compiled = compiledStateOf(state);
      const eventType = (event as { type?: unknown } | null)?.type;
      if (typeof eventType !== 'string') return false;
      const transition = select(compiled.on.get(eventType), state.context, event, eventType);
      return transition !== null && (transition.target !== null || transition.actions.length > 0);
    },
    hasState(value): value is string {
      return typeof value === 'string' && table.has(value);
    },
  };
}

/**
 * The safety machine (machines/safety.machine.ts) compiled with the plain
 * logic of its actions (machines/safety.actions.ts), at load: the fast path
 * `createSessionGuard` and `mayAnswer` run. A change to the machine that the
 * interpreter cannot run fails here, at import, with a `MachineCompileError`.
 */
// Typed explicitly, so the declarations name the machine's own types rather than the package root (which would pull in
// the optional stores' declarations for a consumer).
export const safetyInterpreter: CompiledMachine<SafetyContext, SafetyEvent, SafetyEmitted, SafetyInput | void> = compileMachine(
  safetyMachine,
  safetyActionLogic,
);
