/**
 * The gate behind every coding agent's hook: one hook event in, one answer
 * out, the session kept on disk between the hook processes (one process per
 * event, several at once for parallel tool calls).
 *
 * Each event takes the session's lock (`updateHookSession`), restores the
 * session guard from its persisted snapshot, runs the event through it, and
 * writes the session back before the answer is given, so an admitted write
 * is in the session before it runs. A call's classification travels from its
 * check to its record in the session file (`HookCallRecord`), keyed by the
 * host's call id, or where a host gives none by its tool name and input.
 *
 * Fails closed by construction: a session that cannot be read or locked,
 * or any error, answers a read allowed, a write refused and the stop refused,
 * each with a code that says why (`HookFailureCode`).
 *
 * Spec: ASSISTANT_SAFETY.md "The invariants", "Blocked calls and recovery";
 * DESIGN.md §3 (correlation by call id, failed writes, self-verification),
 * §5 (targets); issue 25.
 */
import { createHash } from 'node:crypto';
import type { BlockRule } from '../../machines/safety.types.js';
import { clearedByFor, RECOVERY_TTL_MS } from '../../machines/safety.policy.js';
import { UNKNOWN_PLACE } from '../../machines/safety.targets.js';
import type { Classification } from '../classify/classification.js';
import {
  builtinCatalogs,
  compileShippedCatalog,
  kindFromMcpAnnotations,
  type BuiltinCatalogName,
  type CompiledCatalog,
} from '../classify/catalog/index.js';
import { prepareParsers } from '../classify/parsers.js';
import type { FSMBlockedError } from '../errors/index.js';
import { createSessionGuard, type SessionGuard } from '../guard/session-guard.js';
import { refusalText } from '../guard/refusal-text.js';
import { resultText } from '../guard/outcome.js';
import {
  HookStateError,
  MAX_HOOK_DECISIONS,
  updateHookSession,
  type HookCallRecord,
  type HookDecisionRecord,
  type HookSessionRecord,
} from './session-file.js';
import type { HookAnswer, HookFailureCode, HookPayload, HookToolCall } from './types.js';

/** Options of `answerHook`. */
export interface HookGateOptions {
  /** The state directory holding the sessions (`hookStateDirectory()`). */
  stateDir: string;
  /** The clock, epoch milliseconds; default `Date.now`. */
  now?: () => number;
  /** How long to wait for a session's lock, in ms (default 5000: well under every host's timeout). */
  lockTimeoutMs?: number;
  /**
   * MCP tool annotations by the host's tool name (`mcp__fs__read_file`), for
   * hosts that do not pass them: a tool is read only when its annotations
   * say `readOnlyHint: true` (DESIGN.md §4); MCP tools without annotations are writes.
   */
  mcpAnnotations?: Readonly<Record<string, unknown>>;
  /**
   * Destructive writes (`rm -rf`, `git push --force`, `DROP TABLE`) need the
   * user's confirmation, asked through the host's `ask` where it has one
   * (`createSessionGuard`'s option; DESIGN.md §5.6). Default false.
   */
  confirmDestructive?: boolean;
}

/** The compiled catalogs, one per process, compiled when first used. */
const compiled = new Map<string, CompiledCatalog>();

/** The compiled shipped catalog `name`; `claude-code`'s when `name` is not shipped (a codec's bug: still a catalog that fails closed). */
function catalogOf(name: string): CompiledCatalog {
  let catalog = compiled.get(name);
  if (catalog === undefined) {
    // The shipped catalogs, valid as shipped: not validated again in a hook process (issue 25 item 7).
    catalog = compileShippedCatalog(Object.hasOwn(builtinCatalogs, name) ? (name as BuiltinCatalogName) : 'claude-code');
    compiled.set(name, catalog);
  }
  return catalog;
}

/** A tool name the hosts give MCP tools: `mcp__<server>__<tool>` (Claude Code, Codex), `mcp_<server>_<tool>` (Gemini CLI), `MCP:<tool>` (Cursor). */
function isMcpName(name: string): boolean {
  return name.startsWith('mcp__') || name.startsWith('mcp_') || name.startsWith('MCP:');
}

/**
 * Classifies a hook's tool call with its catalog, in its working directory.
 * An MCP tool is judged by its annotations (the host's, else `options.mcpAnnotations`),
 * a write when there are none. Never throws: anything unexpected is a write with no targets.
 */
export function classifyHookCall(call: HookToolCall, options: Pick<HookGateOptions, 'mcpAnnotations'> = {}): Classification {
  try {
    if (isMcpName(call.name)) {
      const annotations = call.annotations ?? options.mcpAnnotations?.[call.name];
      if (annotations !== undefined) {
        const kind = kindFromMcpAnnotations(annotations, { trusted: true });
        return { kind, targets: [], destructive: false, reason: `mcp: annotations say ${kind}` };
      }
    }
    return catalogOf(call.catalog).classify(call.name, call.input, call.cwd === undefined ? undefined : { cwd: call.cwd });
  } catch {
    return { kind: 'write', targets: [], destructive: false, reason: 'hook: the call could not be classified' };
  }
}

/** Deterministic JSON: object keys sorted, so the same input always hashes the same. */
function stableJson(value: unknown, depth = 0): string {
  if (depth > 64) return '"…"';
  if (Array.isArray(value)) return `[${value.map((item) => stableJson(item, depth + 1)).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${stableJson((value as Record<string, unknown>)[key], depth + 1)}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The key that correlates a call's before and after events: `id:<host's call
 * id>`, or, where the host gives none, `in:<sha256 of tool name and input>`
 * (the same call with the same input twice in flight is told apart in
 * arrival order: see `answerHook`).
 */
export function callKey(call: Pick<HookToolCall, 'id' | 'name' | 'input'>): string {
  if (call.id !== undefined && call.id !== '') return `id:${call.id}`;
  return `in:${createHash('sha256').update(call.name).update('\0').update(stableJson(call.input)).digest('hex').slice(0, 32)}`;
}

/**
 * Words for the read that clears a refusal of `rule` naming `target`; for a
 * refusal that names none (`no-target`), the places the call itself names
 * (`callTargets`), unknown places left out.
 */
function clearingWords(rule: BlockRule, target: string | null, callTargets: readonly string[] = []): string {
  const kinds = clearedByFor(rule, target);
  if (kinds.length === 0) return 'It clears once the change still running has finished.';
  if (kinds.length === 1 && kinds[0] === 'user_input') return 'It clears once the user confirms this change.';
  const named =
    target !== null ? [target] : rule === 'no-target' ? callTargets.filter((t) => !t.startsWith(UNKNOWN_PLACE)).slice(0, 3) : [];
  if (named.length > 0 && !named[0]!.startsWith(UNKNOWN_PLACE)) {
    const list = named.map((t) => JSON.stringify(t)).join(', ');
    return `It clears once ${list}, or a folder above ${named.length === 1 ? 'it' : 'them'}, has been read or listed (a read is always allowed).`;
  }
  return rule === 'unverified-write'
    ? 'It clears once the last change has been checked by a read.'
    : 'It clears once what you act on has been looked up or read (a read is always allowed).';
}

/** The words the model sees for a refusal: the stable code, the rule, what is missing, and the read that clears it. */
function refusalWords(error: FSMBlockedError, callTargets: readonly string[] = []): string {
  return `${refusalText(error)} ${clearingWords(error.rule, error.target, callTargets)}`;
}

/** Words for a refusal without a decision of the machine. */
function failureWords(code: HookFailureCode, detail: string, subject: 'call' | 'stop'): string {
  const what = subject === 'call' ? 'This change was not run' : 'The turn may not end yet';
  return `${what} (${code}): ${detail}. Reads are still allowed; changes and the end of the turn are refused until the session is readable again (\`pulse-safety hook reset\`).`;
}

/** The answer to an event the session could not be had for: a read allowed, a write and the stop refused. */
export function failClosedAnswer(
  payload: HookPayload,
  code: HookFailureCode,
  detail: string,
  options: Pick<HookGateOptions, 'mcpAnnotations'> = {},
): HookAnswer {
  const event = payload.event;
  if (event.type === 'tool.before') {
    const { kind } = classifyHookCall(event.call, options);
    if (kind !== 'write') return { type: 'allow', kind };
    return { type: 'deny', code, reason: failureWords(code, detail, 'call') };
  }
  if (event.type === 'agent.stopping') return { type: 'block-stop', code, reason: failureWords(code, detail, 'stop') };
  return { type: 'continue' };
}

/** A fresh session record for `payload`. */
function freshRecord(payload: HookPayload, now: number): HookSessionRecord {
  return {
    version: 1,
    host: payload.host,
    sessionId: payload.sessionId,
    ...(payload.cwd === undefined ? {} : { cwd: payload.cwd }),
    ...(payload.transcriptPath === undefined ? {} : { transcriptPath: payload.transcriptPath }),
    createdAt: now,
    updatedAt: now,
    snapshot: null,
    calls: {},
    decisions: [],
    stopBlocks: 0,
  };
}

/** The session guard of a record, restored from its snapshot (`SnapshotError` when the snapshot does not validate). */
function guardOf(record: HookSessionRecord, now: () => number, catalog: CompiledCatalog | null, confirmDestructive = false): SessionGuard {
  return createSessionGuard({
    now,
    // A failed command may still have changed things (`rm -rf build; false`, a run cut short): it needs a verifying read
    // like a write that succeeded (DESIGN.md §3.8), in every hook session.
    strictFailedWrites: true,
    confirmDestructive,
    ...(record.snapshot === null ? {} : { snapshot: record.snapshot }),
    ...(catalog === null ? {} : { selfVerifying: (name: string) => catalog.isSelfVerifying(name) }),
  });
}

/** Keeps the last `MAX_HOOK_DECISIONS` decisions. */
function logDecision(record: HookSessionRecord, decision: HookDecisionRecord): void {
  record.decisions.push(decision);
  if (record.decisions.length > MAX_HOOK_DECISIONS) record.decisions.splice(0, record.decisions.length - MAX_HOOK_DECISIONS);
}

/** The key a new call is tracked under: its own, or `<key>#<n>` when a call with the same key is still in flight. */
function freeKey(key: string, calls: Record<string, HookCallRecord>): string {
  if (!Object.hasOwn(calls, key)) return key;
  for (let n = 2; ; n++) if (!Object.hasOwn(calls, `${key}#${n}`)) return `${key}#${n}`;
}

/** The oldest in-flight key a result settles: its own, or the first `<key>#<n>` still in flight. */
function settledKey(key: string, calls: Record<string, HookCallRecord>): string | null {
  if (Object.hasOwn(calls, key)) return key;
  const prefix = `${key}#`;
  const found = Object.keys(calls)
    .filter((k) => k.startsWith(prefix))
    .sort((a, b) => calls[a]!.at - calls[b]!.at);
  return found[0] ?? null;
}

/**
 * An after event's result is a failure: by the host's signal (`outcome`), or,
 * for a result the call's arguments did not choose (`echoes` false), by the
 * catalog's failure markers for tool `name` (DESIGN.md §5.7), as the audit reads them.
 */
function failed(
  after: { outcome: 'success' | 'error'; result: unknown; echoes: boolean; name: string },
  catalog: CompiledCatalog,
): boolean {
  if (after.outcome === 'error') return true;
  if (after.echoes) return false;
  const markers = catalog.failureMarkers(after.name);
  if (markers.length === 0) return false;
  const text = resultText(after.result).trimStart();
  return markers.some((marker) => text.startsWith(marker));
}

/**
 * Answers one hook event: checks a call before it runs, records its outcome
 * after, refuses the stop while a write is unverified, creates and removes
 * the session. Never throws: a session that cannot be read or locked, or any
 * other error, gives the fail-closed answer (`failClosedAnswer`).
 *
 * @returns the answer, for the host's codec to write.
 */
export async function answerHook(payload: HookPayload, options: HookGateOptions): Promise<HookAnswer> {
  const now = options.now ?? Date.now;
  try {
    const event = payload.event;
    // The parsers this call's classification needs, loaded before it is judged (`prepareParsers`: never a parser missed).
    if (event.type === 'tool.before' || event.type === 'tool.after') await prepareParsers(() => classifyHookCall(event.call, options));
    return await decide(payload, options, now);
  } catch (error) {
    if (error instanceof HookStateError) return failClosedAnswer(payload, error.code, error.message, options);
    const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return failClosedAnswer(payload, 'HOOK_INTERNAL_ERROR', `the hook failed (${detail.slice(0, 300)})`, options);
  }
}

/** The session's lock wait, as `updateHookSession` takes it. */
function lockOf(options: HookGateOptions): { lockTimeoutMs?: number } {
  return options.lockTimeoutMs === undefined ? {} : { lockTimeoutMs: options.lockTimeoutMs };
}

/** `answerHook` without its safety net. */
async function decide(payload: HookPayload, options: HookGateOptions, now: () => number): Promise<HookAnswer> {
  const event = payload.event;
  const continueAnswer: HookAnswer = { type: 'continue' };
  switch (event.type) {
    case 'ignored':
      return continueAnswer;
    case 'session.ended':
      return updateHookSession(
        options.stateDir,
        payload.host,
        payload.sessionId,
        () => ({ next: null, value: continueAnswer }),
        lockOf(options),
      );
    case 'session.started':
      return updateHookSession(
        options.stateDir,
        payload.host,
        payload.sessionId,
        (current) => ({ next: current ?? freshRecord(payload, now()), value: continueAnswer }),
        lockOf(options),
      );
    case 'tool.before':
      return beforeTool(payload, event.call, options, now);
    case 'tool.after':
      return afterTool(payload, event, options, now);
    case 'agent.stopping':
      return stopping(payload, options, now);
  }
}

/**
 * Forgets calls the user was asked about more than `RECOVERY_TTL_MS` ago:
 * a host that answers `ask` as a refusal (Codex), or a user who said no,
 * never runs them, so no after event comes to settle them.
 */
function dropStaleQuestions(record: HookSessionRecord, at: number): void {
  for (const [key, call] of Object.entries(record.calls))
    if (call.asked === true && at - call.at > RECOVERY_TTL_MS) delete record.calls[key];
}

/** A refusal the user can lift: `needs-confirmation`, or an unknown place only the user's confirmation admits (issue 24). */
function askable(error: FSMBlockedError): boolean {
  return (
    error.rule === 'needs-confirmation' ||
    (error.rule === 'unknown-target' && clearedByFor(error.rule, error.target).every((k) => k === 'user_input'))
  );
}

/** Before a tool runs: the call checked, tracked when admitted (or asked about), the session written before the answer. */
function beforeTool(payload: HookPayload, call: HookToolCall, options: HookGateOptions, now: () => number): Promise<HookAnswer> {
  const catalog = catalogOf(call.catalog);
  const classification = classifyHookCall(call, options);
  return updateHookSession(
    options.stateDir,
    payload.host,
    payload.sessionId,
    (current) => {
      const at = now();
      const record = current ?? freshRecord(payload, at);
      if (payload.cwd !== undefined) record.cwd = payload.cwd;
      dropStaleQuestions(record, at);
      const guard = guardOf(record, now, catalog, options.confirmDestructive === true);
      const key = freeKey(callKey(call), record.calls);
      const decision = guard.check({
        id: key,
        name: call.name,
        args: call.input,
        kind: classification.kind,
        targets: classification.targets,
        destructive: classification.destructive,
        ...(classification.links === undefined ? {} : { links: classification.links }),
      });
      const tracked = {
        name: call.name,
        targets: classification.targets,
        echoes: classification.echoes === true,
        catalog: call.catalog,
        at,
      };
      let answer: HookAnswer;
      if (decision.allowed) {
        record.calls[key] = { ...tracked, kind: decision.kind };
        answer = { type: 'allow', kind: decision.kind };
      } else {
        const error = decision.error;
        const reason = refusalWords(error, classification.targets);
        if (askable(error)) {
          record.calls[key] = { ...tracked, kind: 'write', asked: true };
          answer = { type: 'ask', reason, rule: error.rule };
        } else {
          answer = { type: 'deny', reason, code: 'FSM_BLOCKED', rule: error.rule };
        }
      }
      record.snapshot = guard.getPersistedSnapshot();
      record.updatedAt = at;
      const refused =
        answer.type === 'deny' || answer.type === 'ask' ? { code: 'FSM_BLOCKED', rule: answer.rule, reason: answer.reason } : {};
      logDecision(record, { at, event: payload.eventName, tool: call.name, answer: answer.type, ...refused });
      return { next: record, value: answer };
    },
    lockOf(options),
  );
}

/**
 * After a tool ran: its outcome recorded under the classification its check
 * tracked (a call never checked is classified here, by the same catalog), a
 * shell's or query's own output never read as its failure or verification.
 */
function afterTool(
  payload: HookPayload,
  event: Extract<HookPayload['event'], { type: 'tool.after' }>,
  options: HookGateOptions,
  now: () => number,
): Promise<HookAnswer> {
  const call = event.call;
  const catalog = catalogOf(call.catalog);
  return updateHookSession(
    options.stateDir,
    payload.host,
    payload.sessionId,
    (current) => {
      const at = now();
      const record = current ?? freshRecord(payload, at);
      const guard = guardOf(record, now, catalog);
      const key = settledKey(callKey(call), record.calls);
      const checked = key === null ? undefined : record.calls[key];
      if (key !== null) delete record.calls[key];
      const unchecked = checked === undefined ? classifyHookCall(call, options) : null;
      const echoes = checked?.echoes ?? unchecked!.echoes === true;
      const isFailure = failed({ outcome: event.outcome, result: event.result, echoes, name: call.name }, catalog);
      if (checked?.asked === true) {
        // The host asked the user and the call ran: the user's approval is the confirmation the refusal asked for.
        if (!isFailure) {
          guard.record({ name: 'user_approval', kind: 'user_input' });
          const admitted = guard.check({
            id: key!,
            name: call.name,
            args: call.input,
            kind: 'write',
            targets: checked.targets,
            destructive: false,
          });
          if (admitted.allowed) guard.record({ id: key!, name: call.name, kind: 'write' }, 'success');
        }
      } else {
        const recorded =
          checked !== undefined
            ? { id: key!, name: call.name, kind: checked.kind }
            : { name: call.name, kind: unchecked!.kind, targets: unchecked!.targets, destructive: unchecked!.destructive };
        guard.record(recorded, isFailure ? 'error' : 'success', echoes ? undefined : { result: event.result });
      }
      record.snapshot = guard.getPersistedSnapshot();
      record.updatedAt = at;
      logDecision(record, { at, event: payload.eventName, tool: call.name, answer: 'continue', ...(isFailure ? { code: 'failed' } : {}) });
      return { next: record, value: { type: 'continue' } as HookAnswer };
    },
    lockOf(options),
  );
}

/** The agent wants to stop: refused while a write is unverified (the session's final answer); no session, nothing to refuse. */
function stopping(payload: HookPayload, options: HookGateOptions, now: () => number): Promise<HookAnswer> {
  return updateHookSession(
    options.stateDir,
    payload.host,
    payload.sessionId,
    (current) => {
      const at = now();
      if (current === null) return { next: null, value: { type: 'continue' } as HookAnswer };
      const guard = guardOf(current, now, null);
      const decision = guard.finalAnswer();
      let answer: HookAnswer;
      if (decision.allowed) {
        current.stopBlocks = 0;
        answer = { type: 'continue' };
      } else {
        current.stopBlocks += 1;
        answer = { type: 'block-stop', code: 'FSM_BLOCKED', reason: refusalWords(decision.error) };
      }
      current.snapshot = guard.getPersistedSnapshot();
      current.updatedAt = at;
      const refused = answer.type === 'block-stop' ? { code: answer.code, reason: answer.reason } : {};
      logDecision(current, { at, event: payload.eventName, answer: answer.type, ...refused });
      return { next: current, value: answer };
    },
    lockOf(options),
  );
}
