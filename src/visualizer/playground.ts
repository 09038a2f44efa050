/**
 * Playground sessions: real session guards (`createSessionGuard`) driven by
 * the page's controls, each with its own manual clock and event log.
 *
 * Spec: ASSISTANT_SAFETY.md (whole); DESIGN.md §3 (WRITING, correlation by
 * call id, pending recoveries, time as an input).
 */
import { z } from 'zod';
import { TOOL_KINDS } from '../../machines/safety.types.js';
import { MAX_TIME_MS } from '../../machines/safety.policy.js';
import { safetyMachine } from '../../machines/safety.machine.js';
import { createSessionGuard, type SessionGuard } from '../guard/session-guard.js';
import { builtinCatalogs, compileCatalog, type BuiltinCatalogName, type CompiledCatalog } from '../classify/catalog/index.js';
import { transitionIds } from '../charts/index.js';
import { MAX_PLAYGROUND_LOG } from './bounds.js';
import { argsText } from './labels.js';
import { decisionFromError, sessionView, stateText } from './model.js';
import type {
  CatalogToolView,
  CatalogView,
  DecisionView,
  LogEntry,
  PlaygroundCommandResponse,
  PlaygroundResponse,
  SessionView,
} from './protocol.js';

/** Ten minutes in milliseconds: what the page's clock control advances. */
export const CLOCK_STEP_MS = 600_000;

/** Names of the shipped catalogs, `pulse` first. */
export const CATALOG_NAMES = Object.keys(builtinCatalogs) as BuiltinCatalogName[];

const catalogName = z.enum(CATALOG_NAMES as [BuiltinCatalogName, ...BuiltinCatalogName[]]);

const TIME_RANGE = `must be a finite number of epoch milliseconds within ±${MAX_TIME_MS} (the machine's time range, that of JavaScript dates)`;

/** Options of a playground session (`POST /api/playground`). */
export const playgroundOptionsSchema = z.strictObject({
  /**
   * The clock's start, epoch ms; default `Date.now()`. A finite number within
   * ±`MAX_TIME_MS` (safety.policy.ts), the machine's time range.
   */
  startAt: z.number(TIME_RANGE).min(-MAX_TIME_MS, TIME_RANGE).max(MAX_TIME_MS, TIME_RANGE).optional(), // zod 4 numbers are finite
  /** The catalog calls are classified with unless a call names another; default `pulse`. */
  catalog: catalogName.optional(),
  /** As `createSessionGuard`; default true. */
  autoCompleteVerification: z.boolean().optional(),
  /** DESIGN.md §3.8; default false. */
  strictFailedWrites: z.boolean().optional(),
});

/** Options of a playground session. */
export type PlaygroundOptions = z.infer<typeof playgroundOptionsSchema>;

/** The commands a playground session accepts (see `PlaygroundCommand` in protocol.ts). */
export const playgroundCommandSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('call'),
    name: z.string().trim().min(1, 'a tool call needs a tool name').max(200),
    args: z.unknown().optional(),
    catalog: catalogName.optional(),
  }),
  z.strictObject({ type: z.literal('outcome'), callId: z.string().min(1), outcome: z.enum(['success', 'error']) }),
  z.strictObject({ type: z.literal('answer') }),
  z.strictObject({ type: z.literal('completeVerification') }),
  z.strictObject({ type: z.literal('reset') }),
  z.strictObject({ type: z.literal('resetKeepProgress') }),
  z.strictObject({
    type: z.literal('advanceClock'),
    ms: z
      .number()
      .int()
      .positive()
      .max(30 * 24 * 3_600_000)
      .optional(),
  }),
]);

/** A command the session refuses to apply (bad input); the session is unchanged. */
export class PlaygroundCommandError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PlaygroundCommandError';
  }
}

/** The shipped catalogs, compiled once each when first used. */
const compiled = new Map<BuiltinCatalogName, CompiledCatalog>();

/** Shipped catalog `name`, compiled (once). */
function compiledCatalog(name: BuiltinCatalogName): CompiledCatalog {
  let catalog = compiled.get(name);
  if (catalog === undefined) compiled.set(name, (catalog = compileCatalog(builtinCatalogs[name])));
  return catalog;
}

/** The first message of a zod error, with its path. */
export function zodMessage(error: z.ZodError): string {
  const issue = error.issues[0]!;
  return `${issue.path.length ? `${issue.path.join('.')}: ` : ''}${issue.message}`;
}

/**
 * One playground session: a real session guard, a manual clock, an event log
 * of at most `MAX_PLAYGROUND_LOG` entries (the oldest go first).
 */
export class PlaygroundSession {
  readonly id: string;
  readonly catalog: BuiltinCatalogName;
  readonly autoCompleteVerification: boolean;
  readonly strictFailedWrites: boolean;
  private now: number;
  private readonly guard: SessionGuard;
  private readonly log: LogEntry[] = [];
  private readonly ids = transitionIds(safetyMachine);
  private taken: string[] = [];
  private events: string[] = [];
  private callSeq = 0;
  /** Entries ever logged (the next entry's `seq` is this plus one). */
  private logged = 0;

  /**
   * @param options any JSON value (a request body): validated here.
   * @throws PlaygroundCommandError on bad options, e.g. a `startAt` that is
   *   not a finite number of epoch ms within ±`MAX_TIME_MS`.
   */
  constructor(id: string, options: unknown = {}) {
    const parsed = playgroundOptionsSchema.safeParse(options);
    if (!parsed.success) throw new PlaygroundCommandError(zodMessage(parsed.error));
    const startAt = parsed.data.startAt;
    this.id = id;
    this.catalog = parsed.data.catalog ?? 'pulse';
    this.autoCompleteVerification = parsed.data.autoCompleteVerification ?? true;
    this.strictFailedWrites = parsed.data.strictFailedWrites ?? false;
    this.now = startAt ?? Date.now();
    const catalog = compiledCatalog(this.catalog);
    // As the audit's default policy (`full`): targets from the classification, and the catalog's self-verifying tools.
    this.guard = createSessionGuard({
      now: () => this.now,
      classify: catalog.classify,
      selfVerifying: (name) => catalog.isSelfVerifying(name),
      autoCompleteVerification: this.autoCompleteVerification,
      strictFailedWrites: this.strictFailedWrites,
    });
    // Record every transition the actor takes and every event it receives, as XState reports them.
    this.guard.actor.system.inspect((inspection) => {
      if (inspection.actorRef !== this.guard.actor) return;
      if (inspection.type === '@xstate.event') this.events.push(inspection.event.type);
      if (inspection.type === '@xstate.microstep') {
        for (const definition of inspection._transitions) {
          const id = this.ids.get(definition);
          if (id !== undefined) this.taken.push(id);
        }
      }
    });
  }

  /** The session as the page draws it. */
  view(): SessionView {
    return sessionView(safetyMachine, this.guard.actor.getSnapshot(), this.now, this.log.at(-1)?.taken ?? []);
  }

  /** The session with the log it keeps (at most `MAX_PLAYGROUND_LOG` entries, oldest first). */
  toResponse(): PlaygroundResponse {
    return { ...this.head(), log: [...this.log] };
  }

  /** The session after a command: its view and the command's own log entry, not the whole log. */
  toCommandResponse(entry: LogEntry): PlaygroundCommandResponse {
    return { ...this.head(), entry };
  }

  private head(): Omit<PlaygroundResponse, 'log'> {
    return {
      id: this.id,
      catalog: this.catalog,
      autoCompleteVerification: this.autoCompleteVerification,
      strictFailedWrites: this.strictFailedWrites,
      view: this.view(),
      logged: this.logged,
      logLimit: MAX_PLAYGROUND_LOG,
    };
  }

  /**
   * Checks a tool call, classified in full as the audit classifies one (kind,
   * targets, destructive, links, echoes) with the catalog it names, else the
   * session's; the decision and the log entry's label.
   */
  private checkCall(command: { name: string; args?: unknown; catalog?: BuiltinCatalogName }): { decision: DecisionView; label: string } {
    const catalog = command.catalog ?? this.catalog;
    const { kind, targets, destructive, links, echoes } = compiledCatalog(catalog).classify(command.name, command.args);
    const id = `c${++this.callSeq}`;
    const result = this.guard.check({
      id,
      name: command.name,
      args: command.args,
      kind,
      targets,
      destructive,
      ...(links === undefined ? {} : { links }),
      ...(echoes === undefined ? {} : { echoes }),
    });
    const label =
      `check ${id} ${command.name} ${argsText(command.args)}`.trimEnd() +
      ` (${kind}${targets.length > 0 ? `, targets ${targets.join(' ')}` : ''}, catalog ${catalog})`;
    return { decision: decisionFromError('tool', result.kind, result.allowed ? null : result.error), label };
  }

  /**
   * Applies one command (any JSON value) and logs it.
   * @throws PlaygroundCommandError when the command is malformed or names no call in flight; nothing is changed then.
   */
  apply(input: unknown): LogEntry {
    const parsed = playgroundCommandSchema.safeParse(input);
    if (!parsed.success) throw new PlaygroundCommandError(zodMessage(parsed.error));
    const command = parsed.data;
    const stateBefore = this.guard.state;
    this.taken = [];
    this.events = [];
    let label: string;
    let decision: DecisionView | null = null;
    let recovered: LogEntry['recovered'] = null;

    switch (command.type) {
      case 'call':
        ({ decision, label } = this.checkCall(command));
        break;
      case 'outcome': {
        const call = this.guard.context.inFlight.find((c) => c.key === `id:${command.callId}`);
        if (call === undefined) throw new PlaygroundCommandError(`no call '${command.callId}' is in flight`);
        const result = this.guard.record({ id: command.callId, name: call.tool }, command.outcome);
        recovered = result.recovered ?? null;
        label = `${command.callId} ${call.tool} ${command.outcome === 'success' ? 'succeeded' : 'failed'}`;
        break;
      }
      case 'answer': {
        const result = this.guard.finalAnswer();
        decision = decisionFromError('answer', null, result.allowed ? null : result.error);
        label = 'final answer';
        break;
      }
      case 'completeVerification':
        this.guard.completeVerification();
        label = 'complete verification';
        break;
      case 'reset':
        this.guard.reset();
        label = 'reset';
        break;
      case 'resetKeepProgress':
        this.guard.resetKeepProgress();
        label = 'reset keeping progress';
        break;
      case 'advanceClock': {
        const ms = command.ms ?? CLOCK_STEP_MS;
        if (this.now + ms > MAX_TIME_MS) {
          throw new PlaygroundCommandError(`the clock cannot pass ${MAX_TIME_MS} epoch ms, the machine's time range`);
        }
        this.now += ms;
        this.guard.tick();
        label = `clock +${ms / 60_000} min`;
        break;
      }
    }
    const entry: LogEntry = {
      seq: ++this.logged,
      at: this.now,
      label,
      events: [...this.events],
      stateBefore,
      stateAfter: stateText(this.guard.state),
      decision,
      recovered,
      taken: [...this.taken],
    };
    this.log.push(entry);
    if (this.log.length > MAX_PLAYGROUND_LOG) this.log.shift();
    return entry;
  }
}

/** The page's view of a catalog: its tools and an example call of each kind it can produce. */
export function catalogView(name: BuiltinCatalogName): CatalogView {
  const catalog = builtinCatalogs[name];
  const tools: CatalogToolView[] = Object.entries(catalog.tools).map(([tool, rule]) =>
    typeof rule === 'string' || rule.kind !== undefined
      ? { name: tool, kind: typeof rule === 'string' ? rule : rule.kind!, argument: null, cases: {} }
      : { name: tool, kind: null, argument: rule.argument ?? rule.shell ?? rule.sql ?? null, cases: { ...rule.cases } },
  );
  const examples: CatalogView['examples'] = {};
  for (const kind of TOOL_KINDS) {
    const fixed = tools.find((tool) => tool.kind === kind);
    if (fixed) {
      examples[kind] = { name: fixed.name, args: {} };
      continue;
    }
    for (const tool of tools) {
      const value = Object.keys(tool.cases).find((v) => tool.cases[v] === kind);
      if (value !== undefined && tool.argument !== null) {
        examples[kind] = { name: tool.name, args: { [tool.argument]: value } };
        break;
      }
    }
  }
  return { name, description: catalog.description ?? '', tools, examples };
}
