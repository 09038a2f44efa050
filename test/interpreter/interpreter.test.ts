/**
 * The compiled interpreter (src/interpreter/): what it refuses to compile,
 * and how it runs a flat machine, one behaviour per test, on tiny machines
 * built with `setup()` here, each beside XState's own run where the
 * behaviour is XState's. The safety machine's equality with XState is
 * proved in test/interpreter.equality.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { assign, createActor, emit, fromPromise, not, setup, type AnyStateMachine, type EventObject } from 'xstate';
import { safetyMachine } from '../../machines/safety.machine.js';
import { safetyActionLogic } from '../../machines/safety.actions.js';
import { MAX_EVENTLESS_STEPS, MachineCompileError, compileMachine, safetyInterpreter } from '../../src/interpreter/index.js';

interface Counter {
  n: number;
  log: string[];
}
type CounterEvent = { type: 'inc'; by?: number } | { type: 'reset' } | { type: 'noop' } | { type: 'other' };
type CounterEmitted = { type: 'counted'; n: number };

/** A counter: guards and actions named in `setup`, with the plain logic of each action below. */
const counter = setup({
  types: { context: {} as Counter, events: {} as CounterEvent, emitted: {} as CounterEmitted, input: {} as { start?: number } | void },
  guards: {
    isBig: ({ context }, params: { over: number }) => context.n > params.over,
    isSmall: ({ context }) => context.n <= 1,
  },
  actions: {
    add: assign(({ context, event }) => ({ n: context.n + (event.type === 'inc' ? (event.by ?? 1) : 0) })),
    note: assign(({ context }, params: { text: string }) => ({ log: [...context.log, `${params.text}:${context.n}`] })),
    announce: emit(({ context }) => ({ type: 'counted' as const, n: context.n })),
    clear: assign({ n: 0 }),
  },
});

const counterLogic = {
  add: (context: Counter, event: CounterEvent) => ({ context: { n: context.n + (event.type === 'inc' ? (event.by ?? 1) : 0) } }),
  note: (context: Counter, _event: CounterEvent, params: { text: string }) => ({
    context: { log: [...context.log, `${params.text}:${context.n}`] },
  }),
  announce: (context: Counter) => ({ emitted: [{ type: 'counted' as const, n: context.n }] }),
  clear: () => ({ context: { n: 0 } }),
};

function counterMachine(extra: Record<string, unknown> = {}) {
  return counter.createMachine({
    id: 'counter',
    initial: 'low',
    context: ({ input }) => ({ n: input?.start ?? 0, log: [] }),
    on: {
      reset: { target: '.low', actions: ['clear', { type: 'note', params: { text: 'reset' } }] },
      inc: { actions: [{ type: 'note', params: { text: 'root' } }] },
    },
    states: {
      low: {
        on: {
          inc: [
            { guard: { type: 'isBig', params: { over: 2 } }, target: 'high', actions: ['add', 'announce'] },
            { guard: 'isSmall', actions: ['add', { type: 'note', params: { text: 'low' } }, 'announce'] },
          ],
        },
      },
      high: { on: { noop: {} } },
    },
    ...extra,
  });
}

/** XState's run of `events` from `input`: state, context and emitted events after each. */
function xstateRun(machine: AnyStateMachine, input: unknown, events: readonly EventObject[]) {
  const actor = createActor(machine, { input });
  const emitted: unknown[] = [];
  actor.on('*', (event) => emitted.push(event));
  actor.start();
  return events.map((event) => {
    emitted.length = 0;
    actor.send(event);
    const { value, context } = actor.getSnapshot();
    return { value, context, emitted: [...emitted] };
  });
}

/** The interpreter's run, in the same shape. */
function compiledRun(machine: AnyStateMachine, logic: Record<string, unknown>, input: unknown, events: readonly EventObject[]) {
  const compiled = compileMachine(machine, logic as never);
  let state = compiled.initial(input as never);
  return events.map((event) => {
    const step = compiled.transition(state, event as never);
    state = step.state;
    return { value: state.value, context: state.context, emitted: [...step.emitted] };
  });
}

/** The message `compileMachine` refuses `machine` with. */
function refusal(machine: AnyStateMachine, logic: Record<string, unknown> = {}): string {
  try {
    compileMachine(machine, logic as never);
  } catch (error) {
    expect(error).toBeInstanceOf(MachineCompileError);
    return (error as Error).message;
  }
  throw new Error('compiled');
}

const flat = setup({ types: { events: {} as { type: 'go' } } });

describe('compileMachine refuses', () => {
  it('nested states', () => {
    const machine = flat.createMachine({ initial: 'a', states: { a: { initial: 'x', states: { x: {} } } } });
    expect(refusal(machine)).toMatch(/state '\(machine\)\.a': nested states are not supported/);
  });

  it('parallel states', () => {
    const machine = flat.createMachine({ initial: 'a', states: { a: { type: 'parallel', states: { x: {}, y: {} } } } });
    expect(refusal(machine)).toMatch(/parallel states are not supported/);
  });

  it('a parallel root', () => {
    const machine = flat.createMachine({ type: 'parallel', states: { x: {}, y: {} } });
    expect(refusal(machine)).toMatch(/the root must have child states \(it is parallel\)/);
  });

  it('final states', () => {
    const machine = flat.createMachine({ initial: 'a', states: { a: { on: { go: 'b' } }, b: { type: 'final' } } });
    expect(refusal(machine)).toMatch(/'\(machine\)\.b': final states are not supported/);
  });

  it('delayed transitions', () => {
    const machine = flat.createMachine({ initial: 'a', states: { a: { after: { 1000: 'b' } }, b: {} } });
    expect(refusal(machine)).toMatch(/state '\(machine\)\.a': delayed transitions \(after\) are not supported/);
  });

  it('invoke', () => {
    const machine = setup({ actors: { job: fromPromise(async () => 1) } }).createMachine({
      initial: 'a',
      states: { a: { invoke: { src: 'job' } } },
    });
    expect(refusal(machine)).toMatch(/state '\(machine\)\.a': invoke is not supported/);
  });

  it('entry actions', () => {
    const machine = setup({ actions: { hello: () => {} } }).createMachine({ initial: 'a', states: { a: { entry: 'hello' } } });
    expect(refusal(machine, { hello: () => ({}) })).toMatch(/state '\(machine\)\.a': entry actions are not supported/);
  });

  it('exit actions', () => {
    const machine = setup({ actions: { bye: () => {} } }).createMachine({ initial: 'a', states: { a: { exit: 'bye' } } });
    expect(refusal(machine, { bye: () => ({}) })).toMatch(/state '\(machine\)\.a': exit actions are not supported/);
  });

  it('an inline action function', () => {
    const machine = setup({ types: { context: {} as { n: number }, events: {} as { type: 'go' } } }).createMachine({
      context: { n: 0 },
      initial: 'a',
      states: { a: { on: { go: { actions: assign({ n: 1 }) } } } },
    });
    expect(refusal(machine)).toMatch(/on 'go': an inline action function \(xstate\.assign\) cannot be compiled/);
  });

  it('an inline guard function', () => {
    const machine = flat.createMachine({ initial: 'a', states: { a: { on: { go: { guard: () => true, target: 'b' } } }, b: {} } });
    expect(refusal(machine)).toMatch(/on 'go': an inline guard function cannot be compiled/);
  });

  it('a higher-order guard', () => {
    const machine = setup({ guards: { yes: () => true, no: not('yes') } }).createMachine({
      initial: 'a',
      states: { a: { on: { go: { guard: 'no', target: 'b' } } }, b: {} },
    });
    expect(refusal(machine)).toMatch(/the guard 'no' is a higher-order guard/);
  });

  it('an action named in the machine without plain logic', () => {
    const machine = setup({ actions: { bump: assign({}) } }).createMachine({
      initial: 'a',
      states: { a: { on: { go: { actions: 'bump' } } } },
    });
    expect(refusal(machine)).toMatch(/state '\(machine\)\.a', on 'go': the action 'bump' has no plain logic to run it with/);
  });

  it('an action with plain logic that setup() does not implement', () => {
    const machine = flat.createMachine({ initial: 'a', states: { a: { on: { go: { actions: 'ghost' as never } } } } });
    expect(refusal(machine, { ghost: () => ({}) })).toMatch(/the action 'ghost' is not implemented in setup\(\)/);
  });

  it('a guard without an implementation', () => {
    const machine = flat.createMachine({ initial: 'a', states: { a: { on: { go: { guard: 'ghost' as never, target: 'a' } } } } });
    expect(refusal(machine)).toMatch(/the guard 'ghost' has no implementation in setup\(\)/);
  });

  it('params given as a function', () => {
    const machine = setup({ actions: { bump: assign({}) } }).createMachine({
      initial: 'a',
      states: { a: { on: { go: { actions: { type: 'bump', params: () => ({}) } } } } },
    });
    expect(refusal(machine, { bump: () => ({}) })).toMatch(/the action 'bump' has params given as a function/);
  });

  it('a wildcard event descriptor', () => {
    const machine = flat.createMachine({ initial: 'a', states: { a: { on: { '*': 'b' } }, b: {} } });
    expect(refusal(machine)).toMatch(/the wildcard event descriptor '\*' is not supported/);
  });

  it('a partial wildcard event descriptor', () => {
    const machine = setup({ types: { events: {} as { type: 'tool.go' } } }).createMachine({
      initial: 'a',
      states: { a: { on: { 'tool.*': 'b' } }, b: {} },
    });
    expect(refusal(machine)).toMatch(/the wildcard event descriptor 'tool\.\*' is not supported/);
  });
});

describe('the compiled safety machine', () => {
  it('is compiled at load with the states of the chart, RESOLVING first', () => {
    expect(safetyInterpreter.states).toEqual(Object.keys(safetyMachine.root.states));
    expect(safetyInterpreter.initialValue).toBe('RESOLVING');
  });

  it("starts with XState's initial context for every input", () => {
    for (const input of [{}, { strictFailedWrites: true }, { confirmDestructive: true }]) {
      const actor = createActor(safetyMachine, { input }).start();
      expect(safetyInterpreter.initial(input)).toEqual({ value: 'RESOLVING', context: actor.getSnapshot().context });
    }
  });

  it('compiles again from the machine and the logic alone', () => {
    const compiled = compileMachine(safetyMachine, safetyActionLogic);
    const step = compiled.transition(compiled.initial({}), { type: 'answer.requested', at: 5 });
    expect(step.emitted).toEqual([expect.objectContaining({ type: 'gate.decided', subject: 'answer', allowed: true, at: 5 })]);
  });
});

describe('a compiled machine', () => {
  const events: CounterEvent[] = [
    { type: 'inc' },
    { type: 'inc', by: 5 },
    { type: 'inc' },
    { type: 'noop' },
    { type: 'reset' },
    { type: 'inc' },
  ];

  it("takes XState's steps: states, contexts and emitted events", () => {
    const machine = counterMachine();
    expect(compiledRun(machine, counterLogic, { start: 0 }, events)).toEqual(xstateRun(machine, { start: 0 }, events));
  });

  it("falls back to the root's transitions when none of the state's own passes its guard", () => {
    const compiled = compileMachine(counterMachine(), counterLogic);
    const step = compiled.transition({ value: 'low', context: { n: 2, log: [] } }, { type: 'inc' });
    expect(step.state).toEqual({ value: 'low', context: { n: 2, log: ['root:2'] } });
  });

  it("tries the state's own transitions before the root's", () => {
    const compiled = compileMachine(counterMachine(), counterLogic);
    expect(compiled.transition({ value: 'low', context: { n: 0, log: [] } }, { type: 'inc' }).state.context.log).toEqual(['low:1']);
  });

  it('runs each action on the context the actions before it left', () => {
    const compiled = compileMachine(counterMachine(), counterLogic);
    const step = compiled.transition({ value: 'low', context: { n: 1, log: [] } }, { type: 'inc', by: 2 });
    expect(step.state.context).toEqual({ n: 3, log: ['low:3'] });
    expect(step.emitted).toEqual([{ type: 'counted', n: 3 }]);
  });

  it('evaluates guards on the context before the step', () => {
    const compiled = compileMachine(counterMachine(), counterLogic);
    // n = 3 is over 2 before the step: to high, though `add` makes it 4 first.
    expect(compiled.transition({ value: 'low', context: { n: 3, log: [] } }, { type: 'inc' }).state.value).toBe('high');
  });

  it('returns the same state object for an event no transition takes', () => {
    const compiled = compileMachine(counterMachine(), counterLogic);
    const state = { value: 'high', context: { n: 9, log: [] } };
    const step = compiled.transition(state, { type: 'other' });
    expect(step.state).toBe(state);
    expect(step.emitted).toEqual([]);
  });

  it('never changes the state it is given', () => {
    const compiled = compileMachine(counterMachine(), counterLogic);
    const state = Object.freeze({ value: 'low', context: Object.freeze({ n: 1, log: Object.freeze([]) as unknown as string[] }) });
    const step = compiled.transition(state, { type: 'inc' });
    expect(state.context).toEqual({ n: 1, log: [] });
    expect(step.state.context).not.toBe(state.context);
  });

  it('refuses a state that is not one of the machine', () => {
    const compiled = compileMachine(counterMachine(), counterLogic);
    expect(() => compiled.transition({ value: 'middle', context: { n: 0, log: [] } }, { type: 'inc' })).toThrow(
      new TypeError("machine 'counter': 'middle' is not one of its states (low, high)"),
    );
  });

  it('names the guard, event and state when a guard throws, as XState does', () => {
    const machine = setup({
      types: { context: {} as { n: number }, events: {} as { type: 'go' } },
      guards: {
        broken: () => {
          throw new Error('boom');
        },
      },
    }).createMachine({ id: 'm', context: { n: 0 }, initial: 'a', states: { a: { on: { go: { guard: 'broken', target: 'a' } } } } });
    const compiled = compileMachine(machine, {});
    expect(() => compiled.transition(compiled.initial(undefined), { type: 'go' })).toThrow(
      "Unable to evaluate guard 'broken' in transition for event 'go' in state node 'm.a':\nboom",
    );
  });

  it('answers can() as XState does: a transition that passes its guard and has a target or actions', () => {
    const machine = counterMachine();
    const compiled = compileMachine(machine, counterLogic);
    for (const [value, n, event] of [
      ['low', 0, 'inc'],
      ['high', 5, 'noop'],
      ['high', 5, 'other'],
      ['low', 5, 'noop'],
    ] as const) {
      const snapshot = machine.resolveState({ value, context: { n, log: [] } });
      expect(compiled.can({ value, context: { n, log: [] } }, { type: event }), `${value} ${event}`).toBe(snapshot.can({ type: event }));
    }
  });

  it('takes eventless transitions after an event, with that event, until none is enabled', () => {
    const machine = setup({
      types: { context: {} as { n: number; seen: string[] }, events: {} as { type: 'go' } | { type: 'stay' } },
      guards: { isOdd: ({ context }) => context.n % 2 === 1, isFour: ({ context }) => context.n === 4 },
      actions: {
        bump: assign(({ context }) => ({ n: context.n + 1 })),
        see: assign(({ context, event }) => ({ seen: [...context.seen, event.type] })),
      },
    }).createMachine({
      context: { n: 0, seen: [] },
      initial: 'a',
      states: {
        a: { on: { go: { actions: 'bump' } }, always: { guard: 'isOdd', target: 'b', actions: ['bump', 'see'] } },
        b: {
          always: [
            { guard: 'isFour', target: 'c' },
            { guard: 'isOdd', actions: 'bump' },
          ],
          on: { go: { actions: 'bump' } },
        },
        c: {},
      },
    });
    const logic = {
      bump: (context: { n: number }) => ({ context: { n: context.n + 1 } }),
      see: (context: { seen: string[] }, event: { type: string }) => ({ context: { seen: [...context.seen, event.type] } }),
    };
    const events = [{ type: 'go' }, { type: 'stay' }, { type: 'go' }, { type: 'go' }] as const;
    expect(compiledRun(machine, logic, undefined, events)).toEqual(xstateRun(machine, undefined, events));
  });

  it('takes eventless transitions enabled at start', () => {
    const machine = setup({
      types: { context: {} as { ready: boolean } },
      guards: { isReady: ({ context }) => context.ready },
    }).createMachine({
      context: { ready: true },
      initial: 'a',
      states: { a: { always: { guard: 'isReady', target: 'b' } }, b: {} },
    });
    expect(compileMachine(machine, {}).initial(undefined).value).toBe(createActor(machine).start().getSnapshot().value);
  });

  it('gives up on a cycle of eventless transitions with an error', () => {
    const machine = setup({
      types: { context: {} as { n: number }, events: {} as { type: 'go' } },
      guards: { isOn: ({ context }) => context.n >= 1 },
      actions: { bump: assign(({ context }) => ({ n: context.n + 1 })) },
    }).createMachine({
      id: 'loop',
      context: { n: 0 },
      initial: 'a',
      states: { a: { on: { go: { actions: 'bump' } }, always: { guard: 'isOn', actions: 'bump' } } },
    });
    const compiled = compileMachine(machine, { bump: (context: { n: number }) => ({ context: { n: context.n + 1 } }) });
    expect(() => compiled.transition(compiled.initial(undefined), { type: 'go' })).toThrow(
      `machine 'loop': eventless transitions did not settle after ${MAX_EVENTLESS_STEPS} steps (a cycle of always transitions)`,
    );
  });

  it("builds the initial context with the machine's own factory and input", () => {
    const compiled = compileMachine(counterMachine(), counterLogic);
    expect(compiled.initial({ start: 7 })).toEqual({ value: 'low', context: { n: 7, log: [] } });
  });
});

describe('advance, the step made in place', () => {
  const events: CounterEvent[] = [
    { type: 'inc' },
    { type: 'inc', by: 5 },
    { type: 'inc' },
    { type: 'noop' },
    { type: 'reset' },
    { type: 'inc' },
  ];

  it('takes the steps transition takes, emitting the same events', () => {
    const compiled = compileMachine(counterMachine(), counterLogic);
    let pure = compiled.initial({ start: 0 });
    const owned = { ...compiled.initial({ start: 0 }) };
    for (const event of events) {
      const step = compiled.transition(pure, event);
      pure = step.state;
      expect(compiled.advance(owned, event)).toEqual(step.emitted);
      expect(owned).toEqual(pure);
    }
  });

  it('writes into the context it is given instead of copying it', () => {
    const compiled = compileMachine(counterMachine(), counterLogic);
    const context = { n: 0, log: [] };
    const state = { value: 'low', context };
    compiled.advance(state, { type: 'inc', by: 3 });
    expect(state.context).toBe(context);
    expect(context.n).toBe(3);
  });
});
