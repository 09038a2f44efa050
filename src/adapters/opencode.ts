/**
 * The safety gate as an opencode plugin: `pulse-safety-fsm/opencode`.
 *
 * opencode (`opencode-ai` 1.18) runs plugins in its own process, so the gate
 * runs there too, with no disk state: one `createSessionGuard` per opencode
 * session (`sessionID`), kept in memory for the life of the opencode process.
 *
 * - `tool.execute.before` checks the call. A refused call throws an `Error`
 *   whose message is the refusal (`FSM_BLOCKED`, the rule, what is missing
 *   and the target whose read clears it): opencode does not run the tool and
 *   gives the message to the model as the tool's error.
 * - `tool.execute.after` records the outcome. opencode fires it only for a
 *   tool that returned (a non-zero `bash` exit still returns: its
 *   `metadata.exit` is read, and anything but 0 is a failure). A tool that
 *   threw never reaches it: its failure is read from the `message.part.updated`
 *   event whose tool part ends in status `error` (same `callID`), so a failed
 *   call does not stay in flight and block every later write.
 * - `event`: on `session.idle` (the agent ended its turn: a final answer) the
 *   guard's `finalAnswer()` is asked; when it refuses, the refusal goes back
 *   to the session as a new user prompt (`client.session.promptAsync`),
 *   saying what to read, at most `followUps` times in a row. opencode itself
 *   cannot refuse the end of a turn. `session.deleted` drops the session's
 *   guard; `dispose` drops them all.
 *
 * Load it as a file plugin (`.opencode/plugins/safety.ts` exporting
 * `createSafetyPluginModule(options)` as its default, or this module's
 * default) so it sees every tool call. Spec: ASSISTANT_SAFETY.md "The
 * invariants", "Blocked calls and recovery"; issue 25 item 5; AGENT_HOOKS.md
 * §1.9 (opencode's plugin hooks).
 */
import type { Hooks, Plugin, PluginInput, PluginModule } from '@opencode-ai/plugin';
import { createSessionGuard, type SessionGuard, type ToolCall } from '../guard/session-guard.js';
import type { SessionGuardOptions } from '../guard/session-guard-options.js';
import type { FSMBlockedError } from '../errors/index.js';
import { refusalText } from '../guard/refusal-text.js';
import { failClosed } from '../classify/classification.js';
import { builtinCatalogs, compileCatalog, type CompiledCatalog } from '../classify/catalog/index.js';
import { admitCall, createToolClassifier, recordCall, uncheckedText, type ClassificationOptions, type ToolClassifier } from './common.js';

const ADAPTER = 'opencode';

/** The plugin's id, as opencode lists it. */
export const OPENCODE_PLUGIN_ID = 'pulse-safety-fsm';

/**
 * Options of `createSafetyPlugin`. A classification source (`catalog`,
 * `kinds` or `classify`, see `ClassificationOptions`); without one, the
 * shipped `opencode` catalog. The policy flags are those of
 * `createSessionGuard` (docs/guard.md), applied to every session.
 */
export interface OpencodeSafetyOptions extends ClassificationOptions {
  /** Refuse a destructive write unless the user answered a question since the last write (rule `needs-confirmation`); default false. */
  confirmDestructive?: boolean;
  /**
   * A failed write needs verification too (DESIGN.md §3.8): default true, as
   * in every adapter (a call that failed may have run); false records a failed
   * write as changing nothing.
   */
  strictFailedWrites?: boolean;
  /** Complete verification as soon as a verifying read is recorded; default true. */
  autoCompleteVerification?: boolean;
  /** The clock, epoch ms; default `Date.now`. */
  now?: () => number;
  /** Called with every final decision of every session (see `SessionGuardOptions.onDecision`). */
  onDecision?: SessionGuardOptions['onDecision'];
  /**
   * How many refused final answers in a row are sent back to the session as
   * a follow-up prompt before the plugin stops and only logs; default 3,
   * 0 never prompts. The count starts again once an answer is allowed.
   */
  followUps?: number;
  /** The words of the follow-up prompt for a refused final answer; default `refusalText(error)` and the target to read. */
  followUpText?: (error: FSMBlockedError) => string;
  /** The most sessions kept at once; past it the one used least recently is dropped (its next call starts a new session); default 1000. */
  maxSessions?: number;
}

/** The names of `OpencodeSafetyOptions` that opencode's config may set (`"plugin": [["<spec>", { ... }]]`). */
const CONFIG_OPTIONS = ['confirmDestructive', 'strictFailedWrites', 'autoCompleteVerification', 'followUps', 'catalog'] as const;

/** One session's gate: its guard, the calls it admitted that are still running, and the follow-ups sent in a row. */
interface SessionGate {
  guard: SessionGuard;
  /** Admitted calls not yet recorded, by opencode's `callID`. */
  inFlight: Map<string, ToolCall>;
  followUps: number;
}

/**
 * The refusal of a call as the model sees it: `refusalText` (the code
 * `FSM_BLOCKED`, the rule, what evidence is missing), then the target still
 * without evidence and the kinds of call that clear the block.
 */
export function opencodeRefusal(error: FSMBlockedError): string {
  const cleared = error.clearedBy;
  const by =
    cleared.length === 0
      ? 'the change still running must finish first'
      : cleared.includes('user_input') && !cleared.includes('read')
        ? "the user's confirmation (ask them)"
        : `a ${cleared.filter((kind) => kind !== 'user_input').join(' or ')} call`;
  const target = error.target === null ? '' : ` that touches ${JSON.stringify(error.target)}`;
  return `${refusalText(error)} Cleared by: ${by}${cleared.length === 0 ? '' : target}.`;
}

/** The source of classification: the options', or the shipped `opencode` catalog. */
function classificationOf(options: OpencodeSafetyOptions): ClassificationOptions {
  const { catalog, kinds, classify } = options;
  if (catalog === undefined && kinds === undefined && classify === undefined) return { catalog: builtinCatalogs.opencode };
  return {
    ...(catalog === undefined ? {} : { catalog }),
    ...(kinds === undefined ? {} : { kinds }),
    ...(classify === undefined ? {} : { classify }),
  };
}

/**
 * The adapter's classifier with relative paths made absolute against the
 * session's directory (opencode resolves them there): a catalog is asked
 * with `{ cwd: directory }`.
 */
function classifierFor(options: ClassificationOptions, directory: string): ToolClassifier {
  const base = createToolClassifier(options, ADAPTER);
  const { catalog, kinds } = options;
  if (catalog === undefined) return base;
  const compiled: CompiledCatalog =
    typeof (catalog as CompiledCatalog).classify === 'function' ? (catalog as CompiledCatalog) : compileCatalog(catalog);
  return {
    ...base,
    classify(name, args) {
      if (kinds !== undefined && Object.hasOwn(kinds, name)) return base.classify(name, args);
      try {
        return compiled.classify(name, args, directory === '' ? {} : { cwd: directory });
      } catch {
        return failClosed('the call could not be classified');
      }
    },
  };
}

/** The outcome of a call that returned, from opencode's result: a `bash` exit code other than 0 (or none: killed, timed out) is a failure. */
function resultOf(output: { output?: unknown; metadata?: unknown }): { result: unknown; failed: boolean } {
  const metadata = output.metadata;
  if (typeof metadata === 'object' && metadata !== null && Object.hasOwn(metadata, 'exit')) {
    const exit = (metadata as { exit?: unknown }).exit;
    if (exit !== 0) return { result: output.output, failed: true };
  }
  return { result: output.output, failed: false };
}

/**
 * The sessions of one plugin instance: one gate per opencode `sessionID`,
 * the one used least recently dropped past `maxSessions`.
 */
class SessionGates {
  private readonly sessions = new Map<string, SessionGate>();

  constructor(
    readonly classifier: ToolClassifier,
    private readonly options: OpencodeSafetyOptions,
    private readonly maxSessions: number,
  ) {}

  /** The session's gate, created on first use. */
  of(sessionID: string): SessionGate {
    let gate = this.sessions.get(sessionID);
    if (gate !== undefined) {
      this.sessions.delete(sessionID); // re-inserted below: the map's order is the order of use
    } else {
      const { confirmDestructive, strictFailedWrites, autoCompleteVerification, now, onDecision } = this.options;
      gate = {
        guard: createSessionGuard({
          selfVerifying: this.classifier.isSelfVerifying,
          ...(confirmDestructive === undefined ? {} : { confirmDestructive }),
          ...(strictFailedWrites === undefined ? {} : { strictFailedWrites }),
          ...(autoCompleteVerification === undefined ? {} : { autoCompleteVerification }),
          ...(now === undefined ? {} : { now }),
          ...(onDecision === undefined ? {} : { onDecision }),
        }),
        inFlight: new Map(),
        followUps: 0,
      };
    }
    this.sessions.set(sessionID, gate);
    while (this.sessions.size > this.maxSessions) this.sessions.delete(this.sessions.keys().next().value as string);
    return gate;
  }

  /** Records an admitted call once; a call not admitted here (refused, or unknown) is left alone. */
  settle(sessionID: string, callID: string, outcome: { threw: true } | { threw: false; result: unknown; failed: boolean }): void {
    const gate = this.sessions.get(sessionID);
    const call = gate?.inFlight.get(callID);
    if (gate === undefined || call === undefined) return;
    gate.inFlight.delete(callID);
    // The whole classification it was checked with; a failure possibly applied unless the options say otherwise (issue 26).
    void recordCall(gate.guard, this.classifier, call, outcome, { strictFailedWrites: this.options.strictFailedWrites !== false });
  }

  /**
   * The session's final answer (`finalAnswer()`): null when allowed (the
   * count of follow-ups starts again) or when `limit` follow-ups were
   * already sent in a row; else the refusal, counted as one more follow-up.
   */
  answer(sessionID: string, limit: number): FSMBlockedError | null {
    const gate = this.sessions.get(sessionID);
    if (gate === undefined) return null;
    const answer = gate.guard.finalAnswer();
    if (answer.allowed) {
      gate.followUps = 0;
      return null;
    }
    if (gate.followUps >= limit) return null;
    gate.followUps += 1;
    return answer.error;
  }

  drop(sessionID: string): void {
    this.sessions.delete(sessionID);
  }

  clear(): void {
    this.sessions.clear();
  }
}

/**
 * Builds the plugin: a `Plugin` (opencode calls it once, with its client and
 * project, and gets the hooks back). Nothing is shared between two plugins
 * built by two calls.
 *
 * @throws AdapterConfigError (when opencode calls the plugin) for a
 *   classification source that does not hold together (`catalog` and
 *   `classify` both given, an unknown kind in `kinds`); CatalogError for a
 *   catalog that does not validate.
 */
export function createSafetyPlugin(options: OpencodeSafetyOptions = {}): Plugin {
  const source = classificationOf(options);
  const followUpLimit = options.followUps ?? 3;
  const maxSessions = options.maxSessions ?? 1000;
  if (!Number.isInteger(followUpLimit) || followUpLimit < 0)
    throw new TypeError('pulse-safety-fsm/opencode: followUps must be a whole number ≥ 0');
  if (!Number.isInteger(maxSessions) || maxSessions < 1)
    throw new TypeError('pulse-safety-fsm/opencode: maxSessions must be a whole number ≥ 1');

  return async (input: PluginInput): Promise<Hooks> => {
    const directory = typeof input.directory === 'string' ? input.directory : '';
    const gates = new SessionGates(classifierFor(source, directory), options, maxSessions);
    const prompt = async (sessionID: string, text: string): Promise<void> => {
      await input.client.session.promptAsync({
        path: { id: sessionID },
        body: { parts: [{ type: 'text', text }] },
        ...(directory === '' ? {} : { query: { directory } }),
      });
    };
    const followUp = async (sessionID: string): Promise<void> => {
      const refusal = gates.answer(sessionID, followUpLimit);
      if (refusal !== null) await prompt(sessionID, options.followUpText ? options.followUpText(refusal) : opencodeRefusal(refusal));
    };
    return {
      'tool.execute.before': async ({ tool, sessionID, callID }, output) => {
        const gate = gates.of(sessionID);
        const args: unknown = output.args;
        const admission = admitCall({ guard: gate.guard, classifier: gates.classifier, id: callID, name: tool, args });
        if (admission instanceof Promise) throw new Error(uncheckedText(tool, 'a synchronous session guard answered asynchronously'));
        if (admission.allowed) {
          if (admission.call.id !== undefined) gate.inFlight.set(admission.call.id, admission.call);
          return;
        }
        throw new Error(admission.error === null ? uncheckedText(tool, admission.failure) : opencodeRefusal(admission.error));
      },
      'tool.execute.after': async ({ sessionID, callID }, output) => {
        const { result, failed } = resultOf(output);
        gates.settle(sessionID, callID, { threw: false, result, failed });
      },
      event: async ({ event }) => {
        if (event.type === 'message.part.updated') {
          const part = event.properties.part;
          if (part.type === 'tool' && part.state.status === 'error') gates.settle(part.sessionID, part.callID, { threw: true });
          return;
        }
        if (event.type === 'session.idle') {
          await followUp(event.properties.sessionID);
          return;
        }
        if (event.type === 'session.deleted') gates.drop(event.properties.info.id);
      },
      dispose: async () => {
        gates.clear();
      },
    };
  };
}

/**
 * The options opencode's config gives a plugin (`"plugin": [["<spec>", { ... }]]`),
 * read into `OpencodeSafetyOptions`: the policy flags, `followUps`, and
 * `catalog` as the name of a shipped catalog.
 *
 * @throws TypeError naming an option that is not one of them, or of the wrong type.
 */
export function readPluginOptions(options: unknown): OpencodeSafetyOptions {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object' || Array.isArray(options))
    throw new TypeError('pulse-safety-fsm/opencode: the plugin options must be an object');
  const read: OpencodeSafetyOptions = {};
  for (const [key, value] of Object.entries(options)) {
    if (!(CONFIG_OPTIONS as readonly string[]).includes(key)) {
      throw new TypeError(`pulse-safety-fsm/opencode: unknown option '${key}' (known: ${CONFIG_OPTIONS.join(', ')})`);
    }
    if (key === 'catalog') {
      if (typeof value !== 'string' || !Object.hasOwn(builtinCatalogs, value)) {
        throw new TypeError(`pulse-safety-fsm/opencode: catalog must name a shipped catalog (${Object.keys(builtinCatalogs).join(', ')})`);
      }
      read.catalog = builtinCatalogs[value as keyof typeof builtinCatalogs];
    } else if (key === 'followUps') {
      if (typeof value !== 'number') throw new TypeError('pulse-safety-fsm/opencode: followUps must be a number');
      read.followUps = value;
    } else {
      if (typeof value !== 'boolean') throw new TypeError(`pulse-safety-fsm/opencode: ${key} must be true or false`);
      read[key as 'confirmDestructive' | 'strictFailedWrites' | 'autoCompleteVerification'] = value;
    }
  }
  return read;
}

/**
 * An opencode plugin module (`{ id, server }`, the form opencode 1.18 loads
 * from a plugin file's default export) whose `server` builds the plugin from
 * `options` merged with the config's options for it (`readPluginOptions`;
 * the config's win).
 */
export function createSafetyPluginModule(options: OpencodeSafetyOptions = {}, id: string = OPENCODE_PLUGIN_ID): PluginModule {
  return {
    id,
    server: (input, configOptions) => createSafetyPlugin({ ...options, ...readPluginOptions(configOptions) })(input),
  };
}

/** The plugin with the shipped `opencode` catalog and default policy: `export { default } from 'pulse-safety-fsm/opencode'` in a plugin file. */
const safetyPluginModule: PluginModule = createSafetyPluginModule();
export default safetyPluginModule;
