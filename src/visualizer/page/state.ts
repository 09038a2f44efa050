/**
 * The visualizer page's shared state (browser code): what the server said,
 * the mode shown, and each mode's session, run or followed session. The
 * modes (playground-mode.ts, replay-mode.ts, live-mode.ts) change it and ask
 * for a redraw with `render`, which main.ts provides, so that no mode
 * imports the page that imports it.
 */
import type {
  ChartResponse,
  InfoResponse,
  LiveSessionDetail,
  LiveSessionSummary,
  PlaygroundResponse,
  ReplayResponse,
  ReplayRunResponse,
} from '../protocol.js';
import { fill, h } from './dom.js';

/** The page's modes. */
export type Mode = 'playground' | 'replay' | 'live';
/** The modes, in the order of their tabs. */
export const MODES: Mode[] = ['playground', 'replay', 'live'];

/** The page's state, one object shared by its modules. */
export const state = {
  info: null as InfoResponse | null,
  mode: 'playground' as Mode,
  charts: new Map<string, Promise<ChartResponse>>(),
  drawnChart: null as string | null,
  playground: null as PlaygroundResponse | null,
  replay: null as ReplayResponse | null,
  /** One page of the replayed run's steps (`run.from` to `run.from + run.frames.length - 1`). */
  run: null as ReplayRunResponse | null,
  /** Steps a page holds (learnt from the server's answers). */
  pageSize: 200,
  /** A page is being fetched: steps wait for it. */
  pageLoading: false,
  /** -1: before the first step; else the step's index in the whole run. */
  step: -1,
  playTimer: null as number | null,
  liveSessions: [] as LiveSessionSummary[],
  liveDetails: new Map<string, LiveSessionDetail>(),
  followed: null as string | null,
  /** The chart's zoom: null fits the whole chart in the window; else the scale of its natural size (1: 100 %). */
  zoom: null as number | null,
};

let redraw: () => Promise<void> = () => Promise.resolve();

/** Redraws everything for the current mode (coalesced; main.ts sets how with `onRender`). */
export function render(): Promise<void> {
  return redraw();
}

/** Sets what `render` does: main.ts's redraw of the chart, panels and controls. */
export function onRender(draw: () => Promise<void>): void {
  redraw = draw;
}

/** An error's message, for the page's error lines. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Fills a select with the catalogs the server offers. */
export function catalogOptions(select: HTMLSelectElement): void {
  fill(select, ...(state.info?.catalogs ?? []).map((c) => h('option', { value: c.name }, c.name)));
}
