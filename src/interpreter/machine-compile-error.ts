/**
 * `MachineCompileError`: a statechart the compiled interpreter cannot run,
 * refused when it is compiled (`compileMachineTable`), never at run time.
 */

/** A machine the interpreter cannot run, refused at compile time; the message names the state, event and feature. */
export class MachineCompileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MachineCompileError';
  }
}
