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
import { createMachine, type AnyStateMachine } from 'xstate';
import {
  MAX_CHART_STATES,
  MAX_CHART_TRANSITIONS,
  MAX_DEFINITION_BYTES,
  MAX_DEFINITIONS,
  MAX_DEFINITIONS_PER_SESSION,
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
  /** The machine built from it, or null when it is too large to chart. */
  readonly machine: AnyStateMachine | null;
  /** Why it is not charted (too large), or null. */
  readonly tooLarge: string | null;
  /** The live session that streamed it last. */
  owner: string;
}

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
    this.entries.set(id, { id, hash, bytes, states, transitions, machine, tooLarge, owner: sessionId });
    this.evict(sessionId);
    return { ok: true, machineId: id };
  }

  private evict(sessionId: string): void {
    const owned = [...this.entries.values()].filter((entry) => entry.owner === sessionId);
    for (const entry of owned.slice(0, Math.max(0, owned.length - MAX_DEFINITIONS_PER_SESSION))) this.entries.delete(entry.id);
    while (this.entries.size > MAX_DEFINITIONS) this.entries.delete(this.entries.keys().next().value!);
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
