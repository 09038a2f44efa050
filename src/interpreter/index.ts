/**
 * The compiled interpreter of a flat XState v5 machine, the session guard's
 * fast path: `compileMachineTable` (compile-machine-table.ts) reads the
 * statechart into a transition table once, at load, and a
 * `CompiledMachine` (compiled-machine.ts) runs it with the machine's own
 * guards and the plain logic of its actions, computing what XState's
 * `transition` computes without an actor. `compileMachine` makes one of
 * the other; `safetyInterpreter` is the safety machine's, compiled at import.
 *
 * Spec: DESIGN.md §1 (the statechart is the specification); issue 13 (the
 * compiled interpreter, the guard's fast path).
 */
import type { AnyStateMachine, ContextFrom, EmittedFrom, EventFromLogic, InputFrom } from 'xstate';
import { safetyActionLogic } from '../../machines/safety.actions.js';
import { safetyMachine } from '../../machines/safety.machine.js';
import type { SafetyContext, SafetyEmitted, SafetyEvent, SafetyInput } from '../../machines/safety.types.js';
import { compileMachineTable, type PlainActionLogicOf } from './compile-machine-table.js';
import { CompiledMachine } from './compiled-machine.js';

export { compileMachineTable } from './compile-machine-table.js';
export { CompiledMachine, MAX_EVENTLESS_STEPS, type InterpreterState, type MutableInterpreterState } from './compiled-machine.js';
export { MachineCompileError } from './machine-compile-error.js';

/**
 * Compiles `machine` for `actionLogic`, the plain logic of every action the
 * machine names (by name), into a runnable `CompiledMachine`. Read once, at
 * call time: call it at module load.
 *
 * @throws MachineCompileError when the machine uses anything the interpreter
 *   does not support (see compile-machine-table.ts), naming the state, the
 *   event and what it is; or when an action it names has no plain logic, or
 *   a guard it names has no plain implementation.
 */
export function compileMachine<TMachine extends AnyStateMachine>(
  machine: TMachine,
  actionLogic: PlainActionLogicOf<TMachine>,
): CompiledMachine<ContextFrom<TMachine>, EventFromLogic<TMachine>, EmittedFrom<TMachine>, InputFrom<TMachine>> {
  return new CompiledMachine(compileMachineTable(machine, actionLogic));
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
