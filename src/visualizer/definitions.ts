/**
 * Machine definitions streamed by inspected applications (`@xstate.actor`'s
 * `definition`: the JSON of `machine.config`), kept so the visualizer can
 * chart machines it was not configured with. They are untrusted input and
 * bounded: their size, their nesting, how many one session keeps, how many
 * are kept in all (oldest evicted first), and how large a machine is built
 * and charted at all.
 *
 * Spec: ASSISTANT_SAFETY.md (the chart it shows); the bounds are in bounds.ts.
 */
import { createHash } from 'node:crypto';
import { createMachine, transition, type AnyEventObject, type AnyStateMachine, type ExecutableActionObject } from 'xstate';
import {
  MAX_CHART_STATES,
  MAX_CHART_TRANSITIONS,
  MAX_DEFINITION_BYTES,
  MAX_DEFINITIONS,
  MAX_DEFINITIONS_PER_SESSION,
  MAX_EVENTLESS_STEPS,
  MAX_JSON_DEPTH,
  MAX_NAME_LENGTH,
  errorMessage,
  jsonTextDepth,
} from './bounds.js';
import { isRecord, own } from '../util/own.js';

/** A streamed definition the store keeps. */
export interface StreamedDefinition {
  /** The machine id (`config.id`), the chart's id. */
  readonly id: string;
  /** SHA-256 of the definition text (hex): the same text is not built twice. */
  readonly hash: string;
  /** Size of the definition text, UTF-8 bytes. */
  readonly bytes: number;
  /** State nodes and transitions counted in the definition (counting stops just past the bounds). */
  readonly states: number;
  readonly transitions: number;
  /** The machine built from it, or null when it is too large to chart or was refused while stepping. */
  machine: AnyStateMachine | null;
  /**
   * The definition's text when it has eventless transitions, from which the
   * machine events are stepped on is built on first use (`DefinitionStore.step`):
   * the same machine with a step budget on them (`boundEventless`). Null without any.
   */
  readonly eventlessText: string | null;
  /** That budgeted machine once built, and the budget spent by the current step. */
  stepper: { machine: AnyStateMachine; spent: number } | null;
  /** Why it is not charted (too large, or its eventless transitions loop), or null. */
  tooLarge: string | null;
  /** The live session that streamed it last. */
  owner: string;
}

/** The guard the step budget adds to every unguarded eventless transition of a streamed machine. */
const BUDGET_GUARD = 'pulse-safety.eventlessStepBudget';

/** Thrown by the budget guard when one event took more than `MAX_EVENTLESS_STEPS` eventless transitions. */
class EventlessLoopError extends Error {}

/**
 * The definition (parsed JSON, changed in place) with the budget guard on
 * every eventless transition that has no guard of its own: the only ones
 * that can loop, since a guard named in a streamed definition has no
 * implementation here (XState throws when it is evaluated).
 */
function boundEventless(node: unknown, depth = 0): void {
  if (!isRecord(node) || depth > MAX_JSON_DEPTH) return;
  const always = own(node, 'always');
  if (always !== undefined) {
    const list = Array.isArray(always) ? always : [always];
    node.always = list.map((transition: unknown) => {
      if (typeof transition === 'string') return { target: transition, guard: BUDGET_GUARD };
      if (isRecord(transition) && own(transition, 'guard') === undefined) return { ...transition, guard: BUDGET_GUARD };
      return transition;
    });
  }
  const states = own(node, 'states');
  if (isRecord(states)) for (const child of Object.values(states)) boundEventless(child, depth + 1);
}

/** The machine of a definition's text with the step budget on its eventless transitions. @throws what XState's `createMachine` throws. */
function budgeted(text: string): { machine: AnyStateMachine; spent: number } {
  const bounded = JSON.parse(text) as unknown;
  boundEventless(bounded);
  const budget = { machine: null as unknown as AnyStateMachine, spent: 0 };
  budget.machine = createMachine(bounded as never).provide({
    guards: {
      [BUDGET_GUARD]: () => {
        budget.spent += 1;
        if (budget.spent > MAX_EVENTLESS_STEPS) throw new EventlessLoopError();
        return true;
      },
    },
  }) as unknown as AnyStateMachine;
  return budget;
}

/** What `DefinitionStore.step` made of one event: the state after it and the actions it selected, or why it was stopped. */
export type StepOutcome =
  { ok: true; value: unknown; actions: readonly ExecutableActionObject[] } | { ok: false; reason: string; refused: boolean };

/** What `DefinitionStore.add` made of a definition. */
export type DefinitionOutcome = { ok: true; machineId: string } | { ok: false; reason: string };

/** Transitions a field holds: one, or one per entry of an array. */
function transitionCount(value: unknown): number {
  if (value === undefined || value === null) return 0;
  return Array.isArray(value) ? value.length : 1;
}

/**
 * State nodes and transitions of a machine config, counted on the raw JSON
 * (before XState builds anything), each count stopping once it is past its
 * bound. Counts `states`, `on`, `always`, `after`, `onDone` and the
 * `onDone`/`onError`/`onSnapshot` of `invoke`. Never throws on parsed JSON
 * nested at most `MAX_JSON_DEPTH` deep.
 */
export function countDefinition(config: unknown): { states: number; transitions: number } {
  let states = 0;
  let transitions = 0;
  const visit = (node: unknown) => {
    if (!isRecord(node) || states > MAX_CHART_STATES || transitions > MAX_CHART_TRANSITIONS) return;
    states++;
    const on = own(node, 'on');
    if (isRecord(on)) for (const value of Object.values(on)) transitions += transitionCount(value);
    transitions += transitionCount(own(node, 'always'));
    const after = own(node, 'after');
    if (isRecord(after)) for (const value of Object.values(after)) transitions += transitionCount(value);
    transitions += transitionCount(own(node, 'onDone'));
    const invoke = own(node, 'invoke');
    for (const source of Array.isArray(invoke) ? invoke : [invoke]) {
      if (!isRecord(source)) continue;
      for (const key of ['onDone', 'onError', 'onSnapshot']) transitions += transitionCount(own(source, key));
    }
    const children = own(node, 'states');
    if (isRecord(children)) for (const child of Object.values(children)) visit(child);
  };
  visit(config);
  return { states, transitions };
}

/**
 * The streamed definitions, by machine id; a later definition of an id
 * replaces the earlier one. Machines the server is configured with are
 * never replaced: a definition naming one of them stands for it.
 *
 * Bounds (bounds.ts): `MAX_DEFINITION_BYTES` per definition,
 * `MAX_JSON_DEPTH` nesting, `MAX_DEFINITIONS_PER_SESSION` per session and
 * `MAX_DEFINITIONS` in all (the oldest go first, "oldest" meaning streamed
 * least recently), and machines over `MAX_CHART_STATES` states or
 * `MAX_CHART_TRANSITIONS` transitions are kept unbuilt, as too large to chart.
 */
export class DefinitionStore {
  /** Insertion order is age: the first entry is the oldest. */
  private readonly entries = new Map<string, StreamedDefinition>();
  private readonly known: ReadonlyMap<string, AnyStateMachine>;

  /** @param known the machines the server is configured with, by id. */
  constructor(known: ReadonlyMap<string, AnyStateMachine>) {
    this.known = known;
  }

  /**
   * Reads the definition `text` streamed by live session `sessionId`.
   * Returns the machine id it stands for, or why it was refused (too large,
   * too deep, not JSON, no string id, or XState cannot build it). Never throws.
   */
  add(sessionId: string, text: string): DefinitionOutcome {
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > MAX_DEFINITION_BYTES) {
      return { ok: false, reason: `the definition is ${bytes} bytes, more than ${MAX_DEFINITION_BYTES}` };
    }
    if (jsonTextDepth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
      return { ok: false, reason: `the definition is nested more than ${MAX_JSON_DEPTH} arrays or objects deep` };
    }
    let config: unknown;
    try {
      config = JSON.parse(text);
    } catch (error) {
      return { ok: false, reason: `the definition is not JSON (${errorMessage(error)})` };
    }
    const id = isRecord(config) ? own(config, 'id') : undefined;
    if (typeof id !== 'string' || id.length === 0 || id.length > MAX_NAME_LENGTH) {
      return { ok: false, reason: `the definition has no id of 1 to ${MAX_NAME_LENGTH} characters` };
    }
    if (this.known.has(id)) return { ok: true, machineId: id };

    const hash = createHash('sha256').update(text).digest('hex');
    const existing = this.entries.get(id);
    if (existing !== undefined && existing.hash === hash) {
      this.entries.delete(id); // re-inserted below: streamed again, so the newest
      existing.owner = sessionId;
      this.entries.set(id, existing);
      return { ok: true, machineId: id };
    }
    const { states, transitions } = countDefinition(config);
    let machine: AnyStateMachine | null = null;
    let tooLarge: string | null = null;
    if (states > MAX_CHART_STATES || transitions > MAX_CHART_TRANSITIONS) {
      tooLarge =
        states > MAX_CHART_STATES
          ? `the machine '${id}' is too large to chart: more than ${MAX_CHART_STATES} states`
          : `the machine '${id}' is too large to chart: more than ${MAX_CHART_TRANSITIONS} transitions`;
    } else {
      try {
        machine = createMachine(config as never) as unknown as AnyStateMachine;
      } catch (error) {
        return { ok: false, reason: `XState cannot build a machine from the definition (${errorMessage(error)})` };
      }
    }
    this.entries.delete(id);
    // Only eventless transitions can loop inside one step (a streamed definition has no implementations to raise events).
    const eventlessText = machine !== null && text.includes('"always"') ? text : null;
    this.entries.set(id, {
      id,
      hash,
      bytes,
      states,
      transitions,
      machine,
      eventlessText,
      stepper: null,
      tooLarge,
      owner: sessionId,
    });
    this.evict(sessionId);
    return { ok: true, machineId: id };
  }

  private evict(sessionId: string): void {
    const owned = [...this.entries.values()].filter((entry) => entry.owner === sessionId);
    for (const entry of owned.slice(0, Math.max(0, owned.length - MAX_DEFINITIONS_PER_SESSION))) this.entries.delete(entry.id);
    while (this.entries.size > MAX_DEFINITIONS) this.entries.delete(this.entries.keys().next().value!);
  }

  /**
   * Steps a streamed machine by one event from `value` and `context`
   * (XState's pure `transition`, on the copy with the eventless step
   * budget). An event that takes more than `MAX_EVENTLESS_STEPS` eventless
   * transitions is stopped, and the definition refused for good (no chart,
   * no more steps; `refused: true`). A machine lacking an implementation
   * the event needs (a streamed definition has none) answers why, not
   * refused. Never throws.
   */
  step(machineId: string, value: unknown, context: unknown, event: AnyEventObject): StepOutcome {
    const entry = this.entries.get(machineId);
    if (entry?.machine == null) return { ok: false, reason: `no streamed machine '${machineId}' to step`, refused: false };
    try {
      const stepper = entry.eventlessText === null ? null : (entry.stepper ??= budgeted(entry.eventlessText));
      if (stepper !== null) stepper.spent = 0;
      const machine = stepper?.machine ?? entry.machine;
      const [next, actions] = transition(
        machine,
        machine.resolveState({ value: value as never, context: context as never }),
        event as never,
      );
      return { ok: true, value: next.value, actions };
    } catch (error) {
      if (!(error instanceof EventlessLoopError)) return { ok: false, reason: errorMessage(error), refused: false };
      const reason = `the machine '${machineId}' was refused: one event took more than ${MAX_EVENTLESS_STEPS} eventless (always) transitions, so they loop`;
      entry.machine = null;
      entry.stepper = null;
      entry.tooLarge = reason;
      return { ok: false, reason, refused: true };
    }
  }

  /** The streamed definition of a machine id, or undefined (never streamed, or evicted). */
  get(machineId: string): StreamedDefinition | undefined {
    return this.entries.get(machineId);
  }

  /** The machine of an id: a configured one, else a streamed one that was built, else null. */
  machine(machineId: string): AnyStateMachine | null {
    return this.known.get(machineId) ?? this.entries.get(machineId)?.machine ?? null;
  }

  /** How many definitions are kept, and their total size (UTF-8 bytes of their text). */
  stats(): { definitions: number; definitionBytes: number } {
    let definitionBytes = 0;
    for (const entry of this.entries.values()) definitionBytes += entry.bytes;
    return { definitions: this.entries.size, definitionBytes };
  }

  /** How many definitions live session `sessionId` streamed last. */
  ownedBy(sessionId: string): number {
    let count = 0;
    for (const entry of this.entries.values()) if (entry.owner === sessionId) count++;
    return count;
  }
}
