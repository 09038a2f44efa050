/**
 * The safety machine as a child actor (issue 12): every decision and every
 * cleared recovery reaches its parent as an event, or the `replyTo` actor a
 * request names; without either, it is only emitted, and nothing throws.
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants"; XState v5 "Sending responses"
 * (an actor ref in the event) and `sendParent`.
 */
import { describe, expect, it } from 'vitest';
import { assign, createActor, createMachine, sendTo, setup, spawnChild, type AnyActorRef } from 'xstate';
import { safetyMachine } from '../../machines/safety.machine.js';
import type { GateDecidedEvent, SafetyEvent, SafetyParentEvent } from '../../machines/safety.types.js';

const T = 1_700_000_000_000;

/** What a parent forwards to its gate: any safety event, sent to the child `gate`. */
type Forward = { type: 'forward'; event: SafetyEvent };

/** A parent that invokes the gate, forwards events to it and keeps what it hears back. */
const parentMachine = setup({
  types: {
    context: {} as { heard: SafetyParentEvent[] },
    events: {} as SafetyParentEvent | Forward,
  },
  actors: { safety: safetyMachine },
}).createMachine({
  context: { heard: [] },
  invoke: { id: 'gate', src: 'safety' },
  on: {
    forward: { actions: sendTo('gate', ({ event }) => event.event) },
    'gate.decided': { actions: assign({ heard: ({ context, event }) => [...context.heard, event] }) },
    'recovery.succeeded': { actions: assign({ heard: ({ context, event }) => [...context.heard, event] }) },
  },
});

function startParent() {
  const parent = createActor(parentMachine).start();
  const send = (event: SafetyEvent) => parent.send({ type: 'forward', event });
  return { parent, send, heard: () => parent.getSnapshot().context.heard };
}

describe('the safety machine invoked by a parent', () => {
  it('sends the parent the decision on a tool call as a gate.decided event', () => {
    const { send, heard } = startParent();
    send({ type: 'tool.requested', tool: 'get_status', kind: 'read', at: T, callId: 'c1' });
    expect(heard()).toEqual([expect.objectContaining({ type: 'gate.decided', allowed: true, tool: 'get_status', callId: 'c1' })]);
  });

  it('sends the parent a refusal with its rule', () => {
    const { send, heard } = startParent();
    send({ type: 'tool.requested', tool: 'restart', kind: 'write', at: T, callId: 'w1' });
    expect(heard()).toEqual([expect.objectContaining({ type: 'gate.decided', allowed: false, rule: 'no-target' })]);
  });

  it('sends the parent the decision on the final answer', () => {
    const { send, heard } = startParent();
    send({ type: 'answer.requested', at: T });
    expect(heard()).toEqual([expect.objectContaining({ type: 'gate.decided', subject: 'answer', allowed: true })]);
  });

  it('sends the parent a cleared recovery as a recovery.succeeded event', () => {
    const { send, heard } = startParent();
    send({ type: 'tool.requested', tool: 'restart', kind: 'write', at: T });
    send({ type: 'tool.requested', tool: 'get_status', kind: 'read', at: T + 1, callId: 'r' });
    send({ type: 'tool.succeeded', tool: 'get_status', kind: 'read', at: T + 2, callId: 'r' });
    send({ type: 'tool.requested', tool: 'restart', kind: 'write', at: T + 3, callId: 'w' });
    send({ type: 'tool.succeeded', tool: 'restart', kind: 'write', at: T + 4, callId: 'w' });
    expect(heard().at(-1)).toEqual(expect.objectContaining({ type: 'recovery.succeeded', at: T + 4 }));
  });

  it('sends the parent the decisions in the order they were taken', () => {
    const { send, heard } = startParent();
    send({ type: 'tool.requested', tool: 'a', kind: 'read', at: T, callId: '1' });
    send({ type: 'tool.requested', tool: 'b', kind: 'write', at: T + 1, callId: '2' });
    send({ type: 'answer.requested', at: T + 2 });
    expect(heard().map((e) => (e as GateDecidedEvent).tool)).toEqual(['a', 'b', null]);
  });

  it('still emits each decision to actor.on() listeners of the child', () => {
    const { parent, send } = startParent();
    const child = parent.getSnapshot().children.gate!;
    const emitted: GateDecidedEvent[] = [];
    child.on('gate.decided', (event) => emitted.push(event));
    send({ type: 'tool.requested', tool: 'get_status', kind: 'read', at: T });
    expect(emitted).toHaveLength(1);
  });
});

describe('the safety machine spawned by a parent', () => {
  it('sends the parent its decisions as events too', () => {
    const spawning = setup({
      types: { context: {} as { heard: SafetyParentEvent[] }, events: {} as SafetyParentEvent | Forward },
      actors: { safety: safetyMachine },
    }).createMachine({
      context: { heard: [] },
      entry: spawnChild('safety', { id: 'gate' }),
      on: {
        forward: { actions: sendTo('gate', ({ event }) => event.event) },
        'gate.decided': { actions: assign({ heard: ({ context, event }) => [...context.heard, event] }) },
      },
    });
    const parent = createActor(spawning).start();
    parent.send({ type: 'forward', event: { type: 'answer.requested', at: T } });
    expect(parent.getSnapshot().context.heard).toEqual([expect.objectContaining({ type: 'gate.decided', subject: 'answer' })]);
  });
});

describe('replyTo', () => {
  /** An actor that records every event it receives. */
  function recorder() {
    const received: SafetyParentEvent[] = [];
    const actor = createActor(
      createMachine({ on: { '*': { actions: ({ event }) => received.push(event as SafetyParentEvent) } } }),
    ).start();
    return { actor, received };
  }

  it('sends the decision to the replyTo actor instead of the parent', () => {
    const { send, heard } = startParent();
    const { actor, received } = recorder();
    send({ type: 'tool.requested', tool: 'get_status', kind: 'read', at: T, replyTo: actor });
    expect({ replyTo: received.length, parent: heard().length }).toEqual({ replyTo: 1, parent: 0 });
  });

  it('answers a raw actor (no parent) at its replyTo', () => {
    const gate = createActor(safetyMachine).start();
    const { actor, received } = recorder();
    gate.send({ type: 'answer.requested', at: T, replyTo: actor });
    expect(received).toEqual([expect.objectContaining({ type: 'gate.decided', subject: 'answer', allowed: true })]);
  });

  it('ignores a replyTo that is not an actor ref: the parent gets the decision', () => {
    const { send, heard } = startParent();
    send({ type: 'tool.requested', tool: 'get_status', kind: 'read', at: T, replyTo: { send: 1 } as unknown as AnyActorRef });
    expect(heard()).toHaveLength(1);
  });
});

describe('without a parent', () => {
  it('a raw actor decides and emits without error', () => {
    const gate = createActor(safetyMachine);
    const errors: unknown[] = [];
    gate.subscribe({ error: (error) => errors.push(error) });
    gate.start();
    const decisions: GateDecidedEvent[] = [];
    gate.on('gate.decided', (event) => decisions.push(event));
    gate.send({ type: 'tool.requested', tool: 'restart', kind: 'write', at: T });
    gate.send({ type: 'answer.requested', at: T + 1 });
    expect({ errors, decisions: decisions.length, status: gate.getSnapshot().status }).toEqual({
      errors: [],
      decisions: 2,
      status: 'active',
    });
  });
});
