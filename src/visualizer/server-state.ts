/**
 * What a running visualizer keeps for its HTTP routes: the configured
 * machines and their charts, the playground sessions, the open transcripts
 * and the totals of their runs, each bounded (bounds.ts), and the live hub
 * the WebSockets feed. The routes (http-routes.ts) are small functions over
 * one `ServerState`.
 */
import type { AnyStateMachine } from 'xstate';
import { auditRun } from '../audit/audit.js';
import { AUTO_CATALOG, autoCatalogOfRuns } from '../audit/catalog-choice.js';
import { DEMO_SOURCE, demoRuns } from '../audit/demo.js';
import { readTranscript, type TranscriptRun } from '../audit/transcripts/index.js';
import { builtinCatalogs, compileCatalog, parseCatalog, type BuiltinCatalogName, type CompiledCatalog } from '../classify/catalog/index.js';
import { chartOf, toDot } from '../charts/index.js';
import { CatalogError } from '../errors/index.js';
import { TranscriptError } from '../errors/transcript-error.js';
import { MAX_CATALOGS, MAX_PLAYGROUND_SESSIONS, MAX_REFUSALS_LISTED, MAX_REPLAYS } from './bounds.js';
import { ChartLayoutError, type ChartRenderer } from './chart-layout.js';
import type { StreamedDefinition } from './definitions.js';
import { HttpError } from './http-error.js';
import type { LiveHub } from './live.js';
import type { OriginPolicy } from './origin-policy.js';
import { PlaygroundCommandError, PlaygroundSession } from './playground.js';
import type { CatalogFileResponse, ChartResponse, ReplayRefusal, ReplayResponse, ReplayRunResponse, ReplaySettings } from './protocol.js';
import { replayRun, runTotals, type ReplayAuditOptions, type ReplayPage, type ReplayRunTotals } from './replay.js';

/** Runs whose totals (summary, refused steps) the server keeps for paging; the oldest goes. */
const MAX_KEPT_RUN_TOTALS = 2_000;

/** A transcript open in the server: where it came from, its runs, and `auto`'s catalog for them (chosen once, when first asked). */
interface OpenTranscript {
  source: string;
  runs: TranscriptRun[];
  auto?: CatalogInUse;
}

/** A catalog as a replay uses it: compiled, its name, and how it was chosen (the audit report's `catalogChoice`). */
interface CatalogInUse {
  catalog: CompiledCatalog;
  name: string;
  label: string;
  warning: string | null;
}

/** A catalog file opened through the API. */
interface OpenCatalog extends CatalogInUse {
  source: string;
  tools: number;
}

/** What `ServerState` is made of; the rest it starts empty. */
export interface ServerStateParts {
  /** The configured machines by id, the safety machine included. */
  machines: ReadonlyMap<string, AnyStateMachine>;
  /** Each configured machine's description from the config, by id. */
  descriptions: ReadonlyMap<string, string>;
  renderer: ChartRenderer;
  hub: LiveHub;
  access: OriginPolicy;
  /** A transcript to open at start, as replay id `opened`. */
  transcript?: { text: string; source: string };
  /** The hook state directory whose sessions are shown (`serve --hooks`), if any. */
  hooksDirectory?: string;
}

/** One page of one run of an open transcript, as `replayPage` answers it. */
export interface RunPageRequest {
  id: string;
  index: number;
  run: TranscriptRun;
  settings: ReplaySettings;
  page: ReplayPage;
}

/**
 * What the audit makes of a transcript, or of a page of one of its runs:
 * bad input the audit refuses (a clock step past the range of dates) is a
 * 400 with its one-line message, as the CLI's exit 2.
 */
function audited<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof TranscriptError) throw new HttpError(400, error.message);
    throw error;
  }
}

/** The key of a run's totals: the transcript, the run and the settings it was audited with. */
function totalsKey(id: string, index: number, settings: ReplaySettings): string {
  return `${id}/${index}/${settings.catalog}/${settings.policy}/${settings.strictFailedWrites}`;
}

/** The state of a running visualizer that its HTTP routes read and change. */
export class ServerState {
  readonly machines: ReadonlyMap<string, AnyStateMachine>;
  readonly descriptions: ReadonlyMap<string, string>;
  readonly renderer: ChartRenderer;
  readonly hub: LiveHub;
  readonly access: OriginPolicy;
  /** The hook state directory whose sessions are shown (`serve --hooks`), or null. */
  readonly hooksDirectory: string | null;
  /** Playground sessions by id, the least recently used first. */
  readonly playground = new Map<string, PlaygroundSession>();
  /** Open transcripts by id: `demo`, `opened` (from the options), and `r<n>` (opened through the API, oldest first). */
  private readonly replays = new Map<string, OpenTranscript>([['demo', { source: DEMO_SOURCE, runs: demoRuns() }]]);
  private readonly charts = new Map<string, Promise<ChartResponse>>();
  // Charts of streamed definitions live as long as their definition.
  private readonly streamedCharts = new WeakMap<StreamedDefinition, Promise<ChartResponse>>();
  // Each run's totals under a catalog, kept from the transcript's summary, so a page replays only up to its end.
  private readonly runTotalsKept = new Map<string, ReplayRunTotals>();
  /** Catalog files opened through the API by id, `f<n>`, oldest first. */
  private readonly catalogFiles = new Map<string, OpenCatalog>();
  /** The shipped catalogs, compiled once each when first used. */
  private readonly shipped = new Map<BuiltinCatalogName, CompiledCatalog>();
  private sessionSeq = 0;
  private replaySeq = 0;
  private catalogSeq = 0;

  /** @throws TranscriptError when `parts.transcript` cannot be read. */
  constructor(parts: ServerStateParts) {
    this.machines = parts.machines;
    this.descriptions = parts.descriptions;
    this.renderer = parts.renderer;
    this.hub = parts.hub;
    this.access = parts.access;
    this.hooksDirectory = parts.hooksDirectory ?? null;
    if (parts.transcript) {
      this.replays.set('opened', { source: parts.transcript.source, runs: readTranscript(parts.transcript.text, parts.transcript.source) });
    }
  }

  /**
   * The chart of a configured machine, or of a definition a live session
   * streams now, laid out once and kept (a streamed one as long as its
   * definition).
   *
   * @throws HttpError 404 when there is no such machine; 422 when it is too
   *   large to chart or cannot be drawn; 503 when the layout worker is busy.
   */
  async chart(machineId: string): Promise<ChartResponse> {
    const machine = this.machines.get(machineId);
    const streamed = machine === undefined ? this.hub.definition(machineId) : undefined;
    if (machine === undefined && streamed === undefined) {
      throw new HttpError(404, `no machine '${machineId}': it is not configured, and no live session streams its definition now`);
    }
    let response = machine !== undefined ? this.charts.get(machineId) : this.streamedCharts.get(streamed!);
    if (response === undefined) {
      if (streamed !== undefined && streamed.machine === null) throw new HttpError(422, streamed.tooLarge ?? 'too large to chart');
      response = this.layout(machine ?? streamed!.machine!);
      if (machine !== undefined) this.charts.set(machineId, response);
      else this.streamedCharts.set(streamed!, response);
      // A layout that was busy can be tried again; one that failed otherwise is not redone.
      response.catch((error: unknown) => {
        if (!(error instanceof ChartLayoutError) || error.reason === 'busy' || error.reason === 'closed') {
          if (machine !== undefined) this.charts.delete(machineId);
          else this.streamedCharts.delete(streamed!);
        }
      });
    }
    try {
      return await response;
    } catch (error) {
      if (error instanceof ChartLayoutError)
        throw new HttpError(error.reason === 'busy' ? 503 : 422, `the chart of '${machineId}' cannot be drawn: ${error.message}`);
      throw error;
    }
  }

  /** Lays out a machine's chart, both SVGs, in the layout worker. */
  private layout(machine: AnyStateMachine): Promise<ChartResponse> {
    return Promise.all([this.renderer.render(toDot(machine)), this.renderer.render(toDot(machine, { descriptions: false }))]).then(
      ([svg, compactSvg]) => ({ chart: chartOf(machine), svg, compactSvg }),
    );
  }

  /** The id of the next playground session, `p<n>`; taken whether or not the session is then made. */
  nextPlaygroundId(): string {
    return `p${++this.sessionSeq}`;
  }

  /**
   * Opens a playground session `id` with `options` (the request's body),
   * evicting the least recently used past `MAX_PLAYGROUND_SESSIONS`.
   *
   * @throws HttpError 400 when the session refuses its options.
   */
  openPlayground(id: string, options: unknown): PlaygroundSession {
    let session: PlaygroundSession;
    try {
      session = new PlaygroundSession(id, options);
    } catch (error) {
      if (error instanceof PlaygroundCommandError) throw new HttpError(400, error.message);
      throw error;
    }
    this.playground.set(session.id, session);
    if (this.playground.size > MAX_PLAYGROUND_SESSIONS) this.playground.delete(this.playground.keys().next().value!);
    return session;
  }

  /**
   * A playground session, now the most recently used (the least recently used is evicted first).
   *
   * @throws HttpError 404 when there is no session `id`.
   */
  playgroundSession(id: string): PlaygroundSession {
    const session = this.playground.get(id);
    if (session === undefined) throw new HttpError(404, `no playground session '${id}'`);
    this.playground.delete(id);
    this.playground.set(id, session);
    return session;
  }

  /** Opens a transcript's runs as replay `r<n>`, evicting the oldest so opened past `MAX_REPLAYS`; returns its id. */
  openReplay(source: string, runs: TranscriptRun[]): string {
    const id = `r${++this.replaySeq}`;
    this.replays.set(id, { source, runs });
    const user = [...this.replays.keys()].filter((key) => key.startsWith('r'));
    if (user.length > MAX_REPLAYS) this.replays.delete(user[0]!);
    return id;
  }

  /**
   * Opens a catalog file (its JSON `text`, named `source`) for replays, as
   * `pulse-safety audit --catalog <file>` reads one, evicting the oldest so
   * opened past `MAX_CATALOGS`.
   *
   * @throws HttpError 400 when the text is not JSON or not a valid catalog (the CLI's exit 2), with its one line.
   */
  openCatalog(source: string, text: string): CatalogFileResponse {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new HttpError(400, `${source}: not valid JSON (${(error as Error).message})`);
    }
    let catalog: CompiledCatalog;
    let tools: number;
    try {
      const parsed = parseCatalog(json, source);
      catalog = compileCatalog(parsed);
      tools = Object.keys(parsed.tools).length;
    } catch (error) {
      if (error instanceof CatalogError) throw new HttpError(400, error.message);
      throw error;
    }
    const id = `f${++this.catalogSeq}`;
    this.catalogFiles.set(id, { catalog, name: catalog.name, label: source, warning: null, source, tools });
    if (this.catalogFiles.size > MAX_CATALOGS) this.catalogFiles.delete(this.catalogFiles.keys().next().value!);
    return { id, name: catalog.name, source, tools };
  }

  /** The catalog choice is one the server knows: `auto`, a shipped catalog, or an open catalog file's id. */
  knowsCatalog(choice: string): boolean {
    return choice === AUTO_CATALOG || Object.hasOwn(builtinCatalogs, choice) || this.catalogFiles.has(choice);
  }

  /**
   * The catalog a replay of `replay` uses under `choice`, as `pulse-safety
   * audit --catalog <choice>` would: `auto` picks it from the transcript's
   * formats and tool names (`autoCatalogOfRuns`, once per transcript).
   *
   * @throws HttpError 400 when the choice names no catalog the server knows (a catalog file evicted since).
   */
  private catalogFor(replay: OpenTranscript, choice: string): CatalogInUse {
    if (choice === AUTO_CATALOG) return (replay.auto ??= autoCatalogOfRuns(replay.runs));
    if (Object.hasOwn(builtinCatalogs, choice)) {
      const name = choice as BuiltinCatalogName;
      let catalog = this.shipped.get(name);
      if (catalog === undefined) this.shipped.set(name, (catalog = compileCatalog(builtinCatalogs[name])));
      return { catalog, name, label: name, warning: null };
    }
    const file = this.catalogFiles.get(choice);
    if (file === undefined)
      throw new HttpError(400, `no catalog '${choice}': use ${AUTO_CATALOG}, a shipped catalog or an opened catalog file`);
    return file;
  }

  /** The audit's options for a replay under `settings`, and the catalog they use. */
  private auditOptions(replay: OpenTranscript, settings: ReplaySettings): { audit: ReplayAuditOptions; catalog: CatalogInUse } {
    const catalog = this.catalogFor(replay, settings.catalog);
    return {
      audit: { catalog: catalog.catalog, policy: settings.policy, strictFailedWrites: settings.strictFailedWrites },
      catalog,
    };
  }

  /**
   * The summary of open transcript `id` under `settings`, audited as
   * `pulse-safety audit` audits it, each run's totals kept for paging.
   *
   * @throws HttpError 404 when no transcript `id` is open; 400 when the audit refuses a run or the catalog is unknown.
   */
  replaySummary(id: string, settings: ReplaySettings): ReplayResponse {
    const replay = this.replays.get(id);
    if (replay === undefined) throw new HttpError(404, `no transcript '${id}' is open`);
    const { audit, catalog } = this.auditOptions(replay, settings);
    const refusals: ReplayRefusal[] = [];
    let refusalCount = 0;
    const runs = audited(() =>
      replay.runs.map((run, index) => {
        const audited = auditRun(run, audit);
        for (const refusal of audited.refusals) {
          refusalCount += 1;
          if (refusals.length < MAX_REFUSALS_LISTED) {
            const { position, subject, tool, rule } = refusal;
            refusals.push({ run: index, step: refusal.index, position, subject, tool, rule });
          }
        }
        const totals = runTotals(run, index, audited);
        this.keepTotals(totalsKey(id, index, settings), totals);
        return totals.summary;
      }),
    );
    return {
      id,
      source: replay.source,
      runs,
      settings,
      catalogName: catalog.name,
      catalogChoice: catalog.label,
      warning: catalog.warning,
      refusals,
      refusalCount,
    };
  }

  /**
   * Run `index` of open transcript `id`.
   *
   * @throws HttpError 404 when no transcript `id` is open, or it has no run `index`.
   */
  replayRunOf(id: string, index: number): TranscriptRun {
    const replay = this.replays.get(id);
    if (replay === undefined) throw new HttpError(404, `no transcript '${id}' is open`);
    const run = replay.runs[index];
    if (run === undefined) throw new HttpError(404, `${replay.source} has no run ${index}`);
    return run;
  }

  /**
   * One page of a run's frames, its totals kept (or worked out once and kept).
   *
   * @throws HttpError 400 when the audit refuses the run or the catalog is unknown.
   */
  replayPage(request: RunPageRequest): ReplayRunResponse {
    const { id, index, run, settings, page } = request;
    const { audit } = this.auditOptions(this.replays.get(id)!, settings);
    const key = totalsKey(id, index, settings);
    const totals = this.runTotalsKept.get(key) ?? audited(() => runTotals(run, index, auditRun(run, audit)));
    this.keepTotals(key, totals);
    return audited(() => replayRun(run, index, { audit, settings, totals }, page));
  }

  /** Keeps a run's totals as the most recent, evicting the oldest past `MAX_KEPT_RUN_TOTALS`. */
  private keepTotals(key: string, totals: ReplayRunTotals): void {
    this.runTotalsKept.delete(key);
    this.runTotalsKept.set(key, totals);
    if (this.runTotalsKept.size > MAX_KEPT_RUN_TOTALS) this.runTotalsKept.delete(this.runTotalsKept.keys().next().value!);
  }
}
