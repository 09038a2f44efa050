/**
 * The JSON the visualizer's server and page exchange (HTTP and the `/live`
 * WebSocket). Types only: the page imports them with `import type`, so no
 * code of this module reaches the browser. Times are epoch milliseconds.
 *
 * Spec: ASSISTANT_SAFETY.md "States", "Blocked calls and recovery".
 */
import type { Chart } from '../charts/index.js';
import type { BlockedToolResult } from '../errors/index.js';
import type { BlockRule, InFlightCall, PendingRecovery, ToolKind } from '../../machines/safety.types.js';
import type { AuditPolicy } from '../audit/audit.js';

/** A pending recovery as shown: the machine's entry plus its expiry. */
export interface PendingRecoveryView extends PendingRecovery {
  /** `lastBlockedAt` plus the ten-minute TTL. */
  expiresAt: number;
  /** `expiresAt - now`; negative when expired but not yet dropped (the machine drops it at its next event). */
  expiresInMs: number;
}

/** What the page draws for one session, whatever its source (playground, replay frame, live actor). */
export interface SessionView {
  /** The machine's id (the chart to draw). */
  machineId: string;
  /** The state value as text: `RESOLVING`, or JSON for nested values. */
  state: string;
  /** Ids of the active state nodes (root included), to highlight on the chart. */
  activeStateIds: string[];
  /** The actor's status: `active`, `done`, `error` or `stopped`. */
  status: string;
  /** The session clock (epoch ms). */
  now: number;
  /** The machine context as plain JSON. */
  context: Record<string, unknown>;
  /** Safety machine only: pending recoveries with their expiry, oldest first. */
  pendingRecoveries: PendingRecoveryView[];
  /** Safety machine only: admitted calls without a recorded outcome. */
  inFlight: InFlightCall[];
  /**
   * Chart ids of the transitions enabled now: those some event the page can
   * send now (a call of each kind, the outcome of each call in flight, final
   * answer, complete verification, the resets, the clock) would take.
   */
  enabled: string[];
  /** Chart ids of the transitions the last event took (empty before any). */
  taken: string[];
}

/** A decision of the gate about a tool call or the final answer. */
export interface DecisionView {
  subject: 'tool' | 'answer';
  allowed: boolean;
  /** `FSM_BLOCKED` for refusals, else null. */
  code: string | null;
  rule: BlockRule | null;
  reason: string | null;
  /** The `FSMBlockedError` text form for refusals. */
  message: string | null;
  /** Refused tool calls: `FSMBlockedError.toToolResult()`, what the model gets back. */
  toolResult: BlockedToolResult | null;
  /** The call's kind (tool decisions). */
  kind: ToolKind | null;
}

/** One line of an event log. */
export interface LogEntry {
  /** Position in its log, from 1. */
  seq: number;
  /** The session clock when it happened (epoch ms). */
  at: number;
  /** Short human text, e.g. `check pulse_control {"action":"restart"}`. */
  label: string;
  /** The machine events sent, in order (e.g. `tool.succeeded`, `verification.completed`). */
  events: string[];
  stateBefore: string;
  stateAfter: string;
  /** For tool checks and final answers. */
  decision: DecisionView | null;
  /** A pending recovery this success cleared. */
  recovered: PendingRecovery | null;
  /** Chart ids of the transitions taken. */
  taken: string[];
}

/** A tool of a catalog, as the page offers it. */
export interface CatalogToolView {
  name: string;
  /** The static kind, or null when an argument selects it. */
  kind: ToolKind | null;
  /** For keyed tools: the argument and its listed values by kind. */
  argument: string | null;
  cases: Record<string, ToolKind>;
}

/** A shipped catalog, as the page offers it. */
export interface CatalogView {
  name: string;
  description: string;
  tools: CatalogToolView[];
  /** An example call of each kind the catalog can produce (absent kinds have none). */
  examples: Partial<Record<ToolKind, { name: string; args: Record<string, unknown> }>>;
}

/** `GET /api/info`. */
export interface InfoResponse {
  /** The machines listed in `stately.config.json`. */
  machines: { id: string; description: string }[];
  catalogs: CatalogView[];
  kinds: ToolKind[];
  /** Where an application points `createWebSocketInspector({ url })`. */
  inspectUrl: string;
  /** The hook state directory whose sessions are shown live (`pulse-safety serve --hooks`), or null when none is watched. */
  hooksDirectory: string | null;
  /** The recovery TTL (ms). */
  recoveryTtlMs: number;
  /** The transcript formats a replay reads (`TRANSCRIPT_FORMATS`), as a user names them. */
  formats: string[];
  /** The catalog choice that detects the catalog from the transcript (`auto`), the replay's default, as `pulse-safety audit`'s. */
  autoCatalog: string;
  /** The audit's policies (`AUDIT_POLICIES`), from the spec's rules to all the catalog knows. */
  policies: AuditPolicy[];
  /** The policy a replay applies unless told (`pulse-safety audit`'s default). */
  defaultPolicy: AuditPolicy;
}

/** `POST /api/catalogs`: a catalog file opened for replays, chosen by its `id` as `?catalog=<id>`. */
export interface CatalogFileResponse {
  id: string;
  /** The catalog's own `name`. */
  name: string;
  /** The file's name, as the page sent it. */
  source: string;
  /** Tools it lists. */
  tools: number;
}

/** `GET /api/charts/:machineId`. */
export interface ChartResponse {
  chart: Chart;
  /** The SVG rendered by Graphviz (`@viz-js/viz`) on the server, transition descriptions included (`toDot`). */
  svg: string;
  /** The same chart with transition descriptions only as tooltips (`toDot(machine, { descriptions: false })`). */
  compactSvg: string;
}

/**
 * A playground session: its view and the tail of its log
 * (`POST /api/playground`, `GET /api/playground/:id`).
 */
export interface PlaygroundResponse {
  id: string;
  catalog: string;
  autoCompleteVerification: boolean;
  strictFailedWrites: boolean;
  view: SessionView;
  /** The entries kept, oldest first: the last `logLimit` at most. */
  log: LogEntry[];
  /** Entries ever logged (the newest entry's `seq`). */
  logged: number;
  /** Most entries the server keeps (`MAX_PLAYGROUND_LOG`); the page keeps no more. */
  logLimit: number;
}

/** The answer to a command (`POST /api/playground/:id`): the session's view and the command's own entry, not the log. */
export interface PlaygroundCommandResponse extends Omit<PlaygroundResponse, 'log'> {
  entry: LogEntry;
}

/** A command to a playground session (`POST /api/playground/:id`). */
export type PlaygroundCommand =
  | { type: 'call'; name: string; args?: unknown; catalog?: string }
  | { type: 'outcome'; callId: string; outcome: 'success' | 'error' }
  | { type: 'answer' }
  | { type: 'completeVerification' }
  | { type: 'reset' }
  | { type: 'resetKeepProgress' }
  | { type: 'advanceClock'; ms?: number };

/** One run of an opened transcript. */
export interface ReplayRunSummary {
  index: number;
  id: string;
  reward: number | null;
  steps: number;
  /** Refused calls and answers the audit reports for this run. */
  refusals: number;
}

/**
 * How a transcript is replayed: what `pulse-safety audit` takes as
 * `--catalog`, `--policy` and `--strict-failed-writes` (query parameters
 * `catalog`, `policy`, `strictFailedWrites`; the same defaults).
 */
export interface ReplaySettings {
  /** `auto` (default), a shipped catalog's name, or the id of a catalog file opened with `POST /api/catalogs`. */
  catalog: string;
  /** Default `full`. */
  policy: AuditPolicy;
  /** Default false. */
  strictFailedWrites: boolean;
}

/** A refused call or answer of a transcript, as the audit reports it (`Refusal`). */
export interface ReplayRefusal {
  /** The run's index in the transcript. */
  run: number;
  /** The step's index in the run (0-based). */
  step: number;
  position: string;
  subject: 'tool' | 'answer';
  /** The refused call's tool; null for an answer. */
  tool: string | null;
  rule: BlockRule;
}

/** `POST /api/replays`, `GET /api/replays/:id`: an opened transcript as the audit replays it. */
export interface ReplayResponse {
  id: string;
  source: string;
  runs: ReplayRunSummary[];
  settings: ReplaySettings;
  /** The catalog the calls are classified with (the audit report's `catalog`). */
  catalogName: string;
  /** How it was chosen (the audit report's `catalogChoice`), e.g. `auto: claude-code, the log's format, knows 3 of 3 tool names`. */
  catalogChoice: string;
  /** `auto`'s warning when the catalog knows fewer than half the tool names; else null. */
  warning: string | null;
  /** Every run's refusals, run by run, step by step: the first `MAX_REFUSALS_LISTED` (each run's summary counts its own). */
  refusals: ReplayRefusal[];
  /** Refusals in all runs (more than `refusals.length` when the list is cut). */
  refusalCount: number;
}

/** One step of a replay and the session after it. */
export interface ReplayFrame {
  /** Step index in the run (0-based). */
  index: number;
  /** Where the step is in the input, e.g. `line 3`. */
  position: string;
  entry: LogEntry;
  /** The audit refused this step. */
  refused: boolean;
  view: SessionView;
}

/**
 * `GET /api/replays/:id/runs/:index[?from=<step>&limit=<n>]`: one page of
 * a run's steps, at most `MAX_REPLAY_PAGE` (bounds.ts).
 */
export interface ReplayRunResponse {
  run: ReplayRunSummary;
  settings: ReplaySettings;
  /** The session before the first step. */
  initial: SessionView;
  /** The index of the first frame of this page. */
  from: number;
  /** The steps `from` to `from + frames.length - 1`. */
  frames: ReplayFrame[];
  /** Steps in the whole run. */
  total: number;
  /** Where the next page starts (`?from=`), or null on the last page. */
  nextFrom: number | null;
  /** Step indexes the audit refused, ascending: the first `MAX_REFUSED_STEPS_LISTED` (the summary counts them all). */
  refusedSteps: number[];
}

/** A session streamed by an application through `@statelyai/inspect`. */
export interface LiveSessionSummary {
  /**
   * The hub's key: `<inspector connection>/<actor session id>` (actor session
   * ids repeat across processes and across copies of XState); a second actor
   * announcing the same id on one connection is `<connection>/<id>#2`, and so on.
   */
  sessionId: string;
  /** The actor's own session id, e.g. `x:0`. */
  actorSessionId: string;
  /**
   * The actor's name: its id when the application gives one
   * (`createActor(machine, { id: 'checkout-agent' })`), else its machine id,
   * else its session id.
   */
  name: string;
  /**
   * What the session list shows: name, machine id (when it differs), actor
   * session id and inspector connection, e.g. `checkout-agent (safety) · x:0 ·
   * inspector 2`; a second actor announcing the same session id on one
   * connection is `actor 2` of it.
   */
  label: string;
  /**
   * Set when another actor announced the same session id on the same
   * inspector connection (two copies of XState, or two actor systems, on one
   * inspector): their events cannot be told apart on the wire, and go to the
   * newest. Null otherwise.
   */
  collision: string | null;
  /** The machine id whose chart is drawn, or null when none can be drawn. */
  machineId: string | null;
  state: string;
  /** Whether the application's inspector connection is still open. */
  connected: boolean;
  /**
   * When the server first heard of it, and last (epoch ms); for a hook
   * session, when its file was created and last updated.
   */
  firstSeenAt: number;
  lastSeenAt: number;
  /** Events streamed; for a hook session, the decisions its file keeps. */
  events: number;
  /** A coding agent's hook session read from the hook state directory (`serve --hooks`), else null. */
  hook: HookSessionInfo | null;
}

/** A call a hook admitted whose outcome is not recorded yet. */
export interface HookCallView {
  /** The key the gate tracks it under (the host's call id, or a hash of tool name and input). */
  key: string;
  name: string;
  kind: string;
  /** When it was admitted (epoch ms). */
  at: number;
}

/**
 * A coding agent's hook session, as its file in the hook state directory
 * says (`pulse-safety serve --hooks`). The live session's id is
 * `hook:<file>`; its view is the guard restored from the file's snapshot.
 */
export interface HookSessionInfo {
  /** The session file, relative to the state directory (`/`-separated). */
  file: string;
  /** The coding agent (`claude-code`, ...), its own session id and the session's working directory; null when the file cannot be read. */
  host: string | null;
  hostSessionId: string | null;
  cwd: string | null;
  /** When the session was created and last updated (epoch ms); null when the file cannot be read. */
  createdAt: number | null;
  updatedAt: number | null;
  /** Calls admitted whose outcome is not recorded yet, oldest first. */
  calls: HookCallView[];
  /** Stops refused in a row (the hosts cap them). */
  stopBlocks: number | null;
  /**
   * Why the file cannot be shown: the store's code (`HOOK_STATE_UNREADABLE`,
   * ...) and message. The hook itself then fails closed on this session
   * (reads allowed, writes and the stop refused). Null when it reads.
   */
  unreadable: { code: string; message: string } | null;
}

/** A live session in full. */
export interface LiveSessionDetail extends LiveSessionSummary {
  view: SessionView | null;
  log: LogEntry[];
}

/** Messages the server pushes on the `/live` WebSocket. */
export type LiveMessage = { type: 'sessions'; sessions: LiveSessionSummary[] } | { type: 'session'; session: LiveSessionDetail };

/** An error answer: `{ error }` with HTTP status 4xx/5xx. */
export interface ErrorResponse {
  error: string;
}
