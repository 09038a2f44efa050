/**
 * A machine's config as plain JSON (`toMachineConfig`): what XState's
 * `createMachine` accepts, guards and actions by name, for tools that read a
 * machine definition rather than run code (Stately's editor, the exported
 * `charts/<id>.json`).
 */
import { createActor, type AnyStateMachine } from 'xstate';

/** A JSON value. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A machine config as plain JSON: what `createMachine` accepts, every guard and action by name. */
export type MachineConfigJson = { [key: string]: JsonValue };

/**
 * `{ type: <name> }` for a guard or action written inline as a function: the
 * name of XState's built-in action (`xstate.assign`, ...) or of the function,
 * else `inline`. Its code is lost; the name is what a designer sees.
 */
function referenceOf(implementation: (...args: never[]) => unknown): { type: string } {
  const builtIn = (implementation as { type?: unknown }).type;
  return { type: typeof builtIn === 'string' && builtIn !== '' ? builtIn : implementation.name || 'inline' };
}

/**
 * Plain JSON data of a config (ids, descriptions, targets, `params`, `meta`,
 * `tags`): strings, finite numbers, booleans, null, arrays and plain objects
 * are kept; functions (dynamic `params`, `input` and `output` mappers),
 * `undefined` and anything else are left out. Never throws.
 */
function plainJson(value: unknown, depth = 0): JsonValue | undefined {
  if (depth > 64) return undefined;
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (Array.isArray(value)) {
    return value.map((item) => plainJson(item, depth + 1)).filter((item): item is JsonValue => item !== undefined);
  }
  if (typeof value !== 'object') return undefined;
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return undefined;
  const out: { [key: string]: JsonValue } = {};
  for (const [key, item] of Object.entries(value)) {
    const json = plainJson(item, depth + 1);
    if (json !== undefined) out[key] = json;
  }
  return out;
}

/** A guard or one action: a name, `{ type, params }`, or an inline function as `referenceOf`. */
function implementationJson(value: unknown): JsonValue | undefined {
  if (typeof value === 'function') return referenceOf(value as (...args: never[]) => unknown);
  return plainJson(value);
}

/** Actions (`entry`, `exit`, a transition's `actions`): one or an array. */
function actionsJson(value: unknown): JsonValue | undefined {
  if (!Array.isArray(value)) return implementationJson(value);
  return value.map(implementationJson).filter((item): item is JsonValue => item !== undefined);
}

/** One transition: a target string, or an object whose `guard` and `actions` are references. */
function transitionJson(value: unknown): JsonValue | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return plainJson(value);
  const out: { [key: string]: JsonValue } = {};
  for (const [key, item] of Object.entries(value)) {
    const json = key === 'guard' ? implementationJson(item) : key === 'actions' ? actionsJson(item) : plainJson(item);
    if (json !== undefined) out[key] = json;
  }
  return out;
}

/** The transitions of one event (`on.<event>`, `always`, `onDone`, ...): one or an array. */
function transitionsJson(value: unknown): JsonValue | undefined {
  if (!Array.isArray(value)) return transitionJson(value);
  return value.map(transitionJson).filter((item): item is JsonValue => item !== undefined);
}

/** A map of transitions by event or delay (`on`, `after`). */
function transitionMapJson(value: unknown): JsonValue | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const out: { [key: string]: JsonValue } = {};
  for (const [key, item] of Object.entries(value)) {
    const json = transitionsJson(item);
    if (json !== undefined) out[key] = json;
  }
  return out;
}

/** One invocation: its `src` by name (inline logic is left out), its done/error/snapshot transitions. */
function invokeJson(value: unknown): JsonValue | undefined {
  if (Array.isArray(value)) return value.map(invokeJson).filter((item): item is JsonValue => item !== undefined);
  if (typeof value !== 'object' || value === null) return plainJson(value);
  const out: { [key: string]: JsonValue } = {};
  for (const [key, item] of Object.entries(value)) {
    const json = ['onDone', 'onError', 'onSnapshot'].includes(key) ? transitionsJson(item) : plainJson(item);
    if (json !== undefined) out[key] = json;
  }
  return out;
}

/** One state node's config (the machine's root included, `context` aside): recursive. */
function stateJson(value: unknown): JsonValue | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const out: { [key: string]: JsonValue } = {};
  for (const [key, item] of Object.entries(value)) {
    let json: JsonValue | undefined;
    if (key === 'types' || key === 'schemas' || key === 'context')
      continue; // TypeScript only; context apart
    else if (key === 'states') {
      const states: { [key: string]: JsonValue } = {};
      for (const [name, state] of Object.entries((item ?? {}) as object)) {
        const child = stateJson(state);
        if (child !== undefined) states[name] = child;
      }
      json = states;
    } else if (key === 'on' || key === 'after') json = transitionMapJson(item);
    else if (key === 'always' || key === 'onDone') json = transitionsJson(item);
    else if (key === 'entry' || key === 'exit') json = actionsJson(item);
    else if (key === 'invoke') json = invokeJson(item);
    else json = plainJson(item);
    if (json !== undefined) out[key] = json;
  }
  return out;
}

/**
 * The context a machine starts with when given no input, as JSON, or
 * undefined when it needs input, cannot be computed, or is not plain JSON
 * (it must survive `JSON.stringify` unchanged).
 */
function defaultContextOf(machine: AnyStateMachine): JsonValue | undefined {
  try {
    const snapshot = createActor(machine).getSnapshot();
    // A context factory that throws leaves the actor in `error` (XState catches it).
    if (snapshot.status === 'error') return undefined;
    const context: unknown = snapshot.context;
    if (context === undefined) return undefined;
    const text = JSON.stringify(context);
    const json = plainJson(context);
    return json !== undefined && JSON.stringify(json) === text ? json : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The machine's config as plain JSON: what `createMachine` accepts, so that
 * `createMachine(config)` (or `setup({ guards, actions }).createMachine(config)`
 * with the implementations by name) has the machine's states, events,
 * targets, guards and actions. It is the config the machine was created
 * from (`machine.config`, what `@statelyai/inspect` sends to Stately's
 * Inspector) with these changes, so that it is JSON:
 * - `context`: a function of the input in the machine; here the context of
 *   an actor created without input (the defaults), or left out when the
 *   machine cannot start without input;
 * - guards and actions stay references by name (`'isWrite'`,
 *   `{ type: 'announceBlocked', params: { ... } }`); one written inline as a
 *   function becomes `{ type: <function name> }`, its code lost;
 * - left out: `types`/`schemas` (TypeScript only), dynamic `params`,
 *   `input` and `output` mappers, and inline actor logic.
 * Descriptions, ids, targets (as written: `READING`, `.RESOLVING`), `meta`
 * and `tags` are kept. Pure (it creates an actor without starting it); never throws.
 */
export function toMachineConfig(machine: AnyStateMachine): MachineConfigJson {
  const rest = (stateJson(machine.config) ?? {}) as MachineConfigJson;
  const context = typeof machine.config.context === 'function' ? defaultContextOf(machine) : plainJson(machine.config.context);
  if (context === undefined) return { ...rest };
  // Keep the config's key order: `context` after `initial`, where machines usually write it.
  const ordered: MachineConfigJson = {};
  for (const key of Object.keys(machine.config)) {
    if (key === 'context') ordered['context'] = context;
    else if (key in rest) ordered[key] = rest[key]!;
  }
  return ordered;
}
