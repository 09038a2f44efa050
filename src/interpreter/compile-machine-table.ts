/**
 * The compiler half of the compiled interpreter: a flat XState v5 machine
 * read into a transition table at load time (each state's transitions by
 * event type, the root's `on` after them, eventless `always` transitions:
 * guard name and params, target, action names and params), with the
 * machine's own guard implementations (`machine.implementations.guards`) and
 * the plain logic of its actions (`(context, event, params) => { context?,
 * emitted? }`, the functions `setup()` wraps). The statechart stays the one
 * source of truth: a guard or transition changed in `machines/` changes the
 * table with no second edit. `CompiledMachine` (compiled-machine.ts) runs it.
 *
 * Pure: the table is plain data (maps, arrays, the named functions), the
 * same for the same machine and logic, so a test can snapshot it.
 *
 * Supported: one level of atomic states under the root; transitions on exact
 * event types in states and at the root (a state's own transitions first,
 * then the root's, the first whose guard passes wins, as XState's
 * `getTransitionData`); eventless `always` transitions, taken after every
 * event (handled or not) and at start, until none is enabled; targets that
 * are states of the root; named guards with static params; named actions
 * with static params, each with plain logic. Anything else is refused with
 * a `MachineCompileError` naming it: nested, parallel, final or history
 * states, delayed transitions (`after`), `invoke`, entry or exit actions,
 * `onDone`, wildcard event descriptors, inline guard or action functions,
 * higher-order guards (`and`, `or`, `not`), params given as functions, and
 * an action name without plain logic or a guard name without an
 * implementation.
 *
 * Spec: DESIGN.md §1 (the statechart is the specification); issue 13 (the
 * compiled interpreter, the guard's fast path).
 */
import type { AnyStateMachine, AnyStateNode, ContextFrom, EmittedFrom, EventFromLogic } from 'xstate';
import { MachineCompileError } from './machine-compile-error.js';

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

/** A guard as `setup()` holds it: `({ context, event }, params) => boolean`. */
export type GuardImplementation = (args: { context: unknown; event: unknown }, params: unknown) => boolean;

/** An action's plain logic, with the machine's types erased. */
export type ActionLogic = (context: unknown, event: unknown, params: unknown) => PlainActionResult<unknown, unknown>;

/** One action of a transition: its name, plain logic and static params. */
export interface CompiledAction {
  readonly name: string;
  readonly logic: ActionLogic;
  readonly params: unknown;
}

/** One transition: its guard (null: none), target and actions, and where it was declared. */
export interface CompiledTransition {
  readonly guardName: string | null;
  readonly guard: GuardImplementation | null;
  readonly guardParams: unknown;
  /** The target state's name; null for a transition without a target (the state stays). */
  readonly target: string | null;
  readonly actions: readonly CompiledAction[];
  /** Where it was declared, for error messages: the state node's id. */
  readonly source: string;
}

/** One state's entry of the table. */
export interface CompiledState {
  /** Candidates by event type: the state's own, then the root's. */
  readonly on: ReadonlyMap<string, readonly CompiledTransition[]>;
  /** Eventless candidates: the state's own, then the root's. */
  readonly always: readonly CompiledTransition[];
}

/** A machine compiled into its transition table: what `CompiledMachine` runs. */
export interface MachineTable {
  /** The machine's id. */
  readonly id: string;
  /** The machine's states, in document order (frozen). */
  readonly states: readonly string[];
  /** The initial state's name, one of `states`. */
  readonly initialValue: string;
  /** Each state's transitions, by the state's name. */
  readonly byState: ReadonlyMap<string, CompiledState>;
  /**
   * The machine's `context` config as given: a factory `({ input, spawn,
   * self }) => context`, an object, or undefined (an empty context).
   */
  readonly context: unknown;
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

/** What the transitions of a machine are compiled against: its root and states, guards, actions and their plain logic. */
interface CompileScope {
  readonly root: AnyStateNode;
  readonly stateNames: ReadonlySet<string>;
  readonly guards: Readonly<Record<string, unknown>>;
  readonly implementedActions: Readonly<Record<string, unknown>>;
  readonly logicOf: Readonly<Record<string, unknown>>;
}

/** A transition as XState defines it, with the fields the compiler reads; `eventType` '' for an eventless one. */
interface TransitionDefinitionLike {
  guard?: unknown;
  target?: readonly { key: string; parent?: unknown; id: string }[] | undefined;
  actions: readonly unknown[];
  eventType: string;
  source: { id: string };
}

function where(node: { id: string }): string {
  return `state '${node.id}'`;
}

function hasOwn(record: Readonly<Record<string, unknown>>, name: string): boolean {
  return Object.prototype.hasOwnProperty.call(record, name);
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

/** Refuses what a state node (the root or a child) may declare that the interpreter does not run. */
function refuseNodeFeatures(node: AnyStateNode): void {
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
}

/** The root's child states, once the root and each child are checked to be of the one supported form. */
function flatChildren(machine: AnyStateMachine): AnyStateNode[] {
  const root = machine.root;
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
  return children;
}

/** A transition's guard: the plain implementation `setup()` names, with its static params. */
function compileGuard(ref: unknown, scope: CompileScope, context: string): { name: string; guard: GuardImplementation; params: unknown } {
  const { name, params } = reference(ref, 'guard', context);
  const implementation = hasOwn(scope.guards, name) ? scope.guards[name] : undefined;
  if (typeof implementation !== 'function') {
    throw new MachineCompileError(`${context}: the guard '${name}' has no implementation in setup()`);
  }
  if ('check' in implementation) {
    throw new MachineCompileError(
      `${context}: the guard '${name}' is a higher-order guard (and, or, not); only plain guard functions are supported`,
    );
  }
  return { name, guard: implementation as GuardImplementation, params };
}

/** A transition's target: the name of one state under the root, or null for none. */
function compileTarget(target: TransitionDefinitionLike['target'], scope: CompileScope, context: string): string | null {
  if (target === undefined || target.length === 0) return null;
  const [node, ...more] = target;
  if (more.length > 0 || node === undefined || node.parent !== scope.root || !scope.stateNames.has(node.key)) {
    throw new MachineCompileError(`${context}: targets must be one state under the root`);
  }
  return node.key;
}

/** One action of a transition: named in `setup()`, with plain logic. */
function compileAction(action: unknown, scope: CompileScope, context: string): CompiledAction {
  const { name, params } = reference(action, 'action', context);
  const logic = hasOwn(scope.logicOf, name) ? scope.logicOf[name] : undefined;
  if (typeof logic !== 'function') {
    throw new MachineCompileError(`${context}: the action '${name}' has no plain logic to run it with`);
  }
  if (!hasOwn(scope.implementedActions, name)) {
    throw new MachineCompileError(`${context}: the action '${name}' is not implemented in setup()`);
  }
  return { name, logic: logic as ActionLogic, params };
}

function compileTransition(definition: TransitionDefinitionLike, scope: CompileScope): CompiledTransition {
  const context = `${where(definition.source)}, ${definition.eventType === '' ? 'always' : `on '${definition.eventType}'`}`;
  const guard = definition.guard === undefined ? null : compileGuard(definition.guard, scope, context);
  const target = compileTarget(definition.target, scope, context);
  const actions = definition.actions.map((action) => compileAction(action, scope, context));
  return {
    guardName: guard === null ? null : guard.name,
    guard: guard === null ? null : guard.guard,
    guardParams: guard === null ? undefined : guard.params,
    target,
    actions,
    source: definition.source.id,
  };
}

/** A node's own transitions by event type (wildcards refused). */
function compileOn(node: AnyStateNode, scope: CompileScope): Map<string, CompiledTransition[]> {
  const on = new Map<string, CompiledTransition[]>();
  for (const [eventType, definitions] of node.transitions) {
    if (eventType === '*' || eventType.endsWith('.*')) {
      throw new MachineCompileError(`${where(node)}: the wildcard event descriptor '${eventType}' is not supported`);
    }
    on.set(
      eventType,
      definitions.map((definition) => compileTransition(definition as never, scope)),
    );
  }
  return on;
}

/** A node's own eventless transitions. */
function compileAlways(node: AnyStateNode, scope: CompileScope): CompiledTransition[] {
  return (node.always ?? []).map((definition) => compileTransition({ ...(definition as object), eventType: '' } as never, scope));
}

/**
 * Compiles `machine` into its transition table, for `actionLogic`, the plain
 * logic of every action the machine names (by name). Reads the machine once;
 * keeps no reference to it but its guard implementations, its context config
 * and the logic given.
 *
 * @throws MachineCompileError when the machine uses anything the interpreter
 *   does not support (see the module comment), naming the state, the event
 *   and what it is; or when an action it names has no plain logic, or a
 *   guard it names has no plain implementation.
 */
export function compileMachineTable<TMachine extends AnyStateMachine>(
  machine: TMachine,
  actionLogic: PlainActionLogicOf<TMachine>,
): MachineTable {
  const root = machine.root;
  const children = flatChildren(machine);
  const names = children.map((child) => child.key);
  const stateNames = new Set(names);
  const initialValue = root.config.initial;
  if (typeof initialValue !== 'string' || !stateNames.has(initialValue)) {
    throw new MachineCompileError(`machine '${machine.id}': the initial state must be the name of one of its states`);
  }
  const scope: CompileScope = {
    root,
    stateNames,
    guards: machine.implementations.guards as Record<string, unknown>,
    implementedActions: machine.implementations.actions as Record<string, unknown>,
    logicOf: actionLogic as unknown as Readonly<Record<string, unknown>>,
  };
  const rootOn = compileOn(root, scope);
  const rootAlways = compileAlways(root, scope);
  const byState = new Map<string, CompiledState>();
  for (const child of children) {
    const on = compileOn(child, scope);
    for (const [eventType, definitions] of rootOn) on.set(eventType, [...(on.get(eventType) ?? []), ...definitions]);
    byState.set(child.key, { on, always: [...compileAlways(child, scope), ...rootAlways] });
  }
  const context = (machine.config as { context?: unknown }).context;
  return { id: machine.id, states: Object.freeze(names), initialValue, byState, context };
}
