/**
 * The unknown-tools warning: a session guard whose catalog lists none of the
 * tools its first calls name (the default Pulse catalog in front of an
 * agent's own tools) takes every one of them for a write and refuses them
 * all, reads included. That is the safe answer, and a silent one; this
 * module watches the guard's first classified calls and, when none names a
 * tool of the catalog, builds one warning that names the fix. It never
 * changes a decision and never throws.
 *
 * Spec: DESIGN.md §2 (a tool the catalog does not list is a write); issue 27.
 */
import { catalogOfClassifier } from '../classify/catalog/index.js';

/**
 * How many calls (distinct by id; calls without an id each count) the guard
 * classifies before it warns, when none of them names a tool of its catalog.
 * One or two unlisted tools can be tools the catalog's author left out on
 * purpose; three calls in a row without one listed tool is a catalog that
 * does not describe the agent, and by then the model has been refused
 * three times, so the warning comes before the user gives up.
 */
export const UNKNOWN_TOOLS_AFTER = 3;

/** The most tool names a warning lists. */
const MAX_NAMES = 5;

/** A warning of a session guard, given to its `onWarning` option. */
export interface SessionGuardWarning {
  /** `UNKNOWN_TOOLS`: none of the first calls names a tool of the guard's catalog. */
  code: 'UNKNOWN_TOOLS';
  /** What happened and the fix, in words. */
  message: string;
  /** The name of the catalog behind the guard's classifier (`pulse` by default). */
  catalog: string;
  /** The tool names of those calls, distinct, in order (at most five, each at most 64 characters). */
  tools: string[];
}

/** The catalogs the default warning has been emitted for in this process: a store's thousand guards warn once. */
const emittedFor = new Set<string>();

/**
 * The default `onWarning`: a Node process warning (`PulseSafetyWarning`,
 * code `PULSE_SAFETY_UNKNOWN_TOOLS`), printed on stderr by Node unless the
 * process runs with `--no-warnings`; at most once per process and catalog.
 * Outside Node, `console.warn`.
 */
export function emitProcessWarning(warning: SessionGuardWarning): void {
  if (emittedFor.has(warning.catalog)) return;
  emittedFor.add(warning.catalog);
  if (typeof process !== 'undefined' && typeof process.emitWarning === 'function') {
    process.emitWarning(warning.message, { type: 'PulseSafetyWarning', code: `PULSE_SAFETY_${warning.code}` });
  } else {
    console.warn(warning.message);
  }
}

/** A tool name as a JavaScript property key in the message: bare when it is an identifier, else quoted. */
function propertyKey(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
}

/** The warning's words: what the guard saw, why every call is refused, and the fix with the first tool as the example. */
function messageOf(catalog: string, tools: readonly string[]): string {
  const first = tools[0] ?? 'my_tool';
  return (
    `pulse-safety-fsm: none of the first ${UNKNOWN_TOOLS_AFTER} tool calls of this session guard names a tool of catalog ` +
    `'${catalog}' (${tools.join(', ')}). A tool the catalog does not list is taken for a write on a place nobody named, ` +
    `refused until the user confirms it: calls that only read are refused too. Declare your tools, each with its kind: ` +
    `createSessionGuard({ classify: createCallClassifier({ name: 'my-agent', tools: { ${propertyKey(first)}: ` +
    `{ kind: 'read' or 'write', targets: { <argument>: 'path' or 'id' } }, ... } }) }) ` +
    `(the format: docs/catalogs.md in the package). The guard's onWarning option receives this warning instead.`
  );
}

/**
 * Watches a guard's classified calls for the unknown-tools warning. One per
 * guard; it watches until a call names a listed tool, the warning is given,
 * or the classifier turns out not to come from a catalog (then there is
 * nothing to compare with).
 */
export class UnknownToolsWatch {
  /** True once the watch has nothing more to do: the guard may drop it. */
  done = false;
  /** The ids of the calls counted (at most `UNKNOWN_TOOLS_AFTER`). */
  private readonly ids: string[] = [];
  private readonly names: string[] = [];
  private count = 0;

  /** @param classify the guard's classifier (its catalog is looked up on the first call). */
  constructor(private readonly classify: unknown) {}

  /**
   * Observes one call the guard's classifier classified. Returns the warning
   * to give, once, on the call that completes `UNKNOWN_TOOLS_AFTER` calls
   * none of which names a tool of the catalog; otherwise null. Never throws.
   */
  observe(name: unknown, id: unknown): SessionGuardWarning | null {
    if (this.done) return null;
    try {
      const catalog = catalogOfClassifier(this.classify);
      const tool = typeof name === 'string' ? name.trim() : '';
      if (catalog === undefined || catalog.knows(tool)) {
        this.done = true;
        return null;
      }
      if (typeof id === 'string') {
        if (this.ids.includes(id)) return null; // the record of a call already counted
        this.ids.push(id);
      }
      const shown = tool.slice(0, 64);
      if (!this.names.includes(shown) && this.names.length < MAX_NAMES) this.names.push(shown);
      if (++this.count < UNKNOWN_TOOLS_AFTER) return null;
      this.done = true;
      return { code: 'UNKNOWN_TOOLS', message: messageOf(catalog.name, this.names), catalog: catalog.name, tools: [...this.names] };
    } catch {
      this.done = true; // a warning is never worth a failure
      return null;
    }
  }
}
