/**
 * The visualizer server's bounds on untrusted input (inspection messages
 * from any local process, request bodies) and the work it does for it, and
 * the log that reports dropped input once per kind.
 *
 * Every figure here is listed in the README ("Hardening the visualizer").
 */

/** Largest inspection message (one WebSocket message on `/inspect`), bytes. Larger ones close the connection (code 1009). */
export const MAX_INSPECTION_BYTES = 1024 * 1024;
/**
 * Deepest nesting of arrays and objects in an inspection message, in a
 * streamed machine definition, and in a request body. `@statelyai/inspect`
 * cuts its output at depth 10, so real messages stay far below it.
 */
export const MAX_JSON_DEPTH = 64;
/** Longest event type, session id, actor name or machine id kept from an inspection message, characters. */
export const MAX_NAME_LENGTH = 200;
/** Longest state text (`stateText`) kept in a session summary or log entry, characters; longer ones are cut with `…`. */
export const MAX_STATE_TEXT = 1_000;

/**
 * Inspection messages waiting to be read. Past it, the connections sending
 * are paused (TCP backpressure) until the queue is down to half.
 */
export const MAX_QUEUED_MESSAGES = 256;
/** Longest the server reads queued inspection messages in one go before it lets other work run, ms. */
export const MESSAGE_SLICE_MS = 20;

/** Largest streamed machine definition (its JSON text, UTF-8), bytes. A larger one is refused: no chart. */
export const MAX_DEFINITION_BYTES = 256 * 1024;
/** Streamed definitions kept per live session; when one more arrives, that session's oldest goes. */
export const MAX_DEFINITIONS_PER_SESSION = 4;
/** Streamed definitions kept in all; when one more arrives, the oldest goes. */
export const MAX_DEFINITIONS = 64;
/**
 * Most state nodes (root included) of a streamed machine that is built and
 * charted. A larger one is kept only as "too large to chart": its sessions
 * show state and context, but no chart and no transitions.
 */
export const MAX_CHART_STATES = 500;
/** Most transitions of a streamed machine that is built and charted; as `MAX_CHART_STATES`. */
export const MAX_CHART_TRANSITIONS = 1_000;
/**
 * Most eventless (`always`) transitions one event may take in a streamed
 * machine. A definition whose eventless transitions loop would make XState's
 * `transition()` never return (the server would stop answering for good):
 * past this budget the event is stopped and the definition refused.
 */
export const MAX_EVENTLESS_STEPS = 10_000;
/** Longest time Graphviz may take to lay out one chart (in a worker thread), ms; then it is stopped. */
export const CHART_LAYOUT_TIMEOUT_MS = 10_000;
/** Most chart layouts waiting for the worker; more are refused as busy (retry later). */
export const MAX_QUEUED_LAYOUTS = 16;
/**
 * Most "enabled now" probing work for a machine that is not the safety
 * machine: active state nodes times event types to try. Above it the view
 * lists no enabled transitions rather than spending seconds on each update.
 */
export const MAX_PROBE_WORK = 20_000;

/** Playground sessions kept; when one more is started, the least recently used goes. */
export const MAX_PLAYGROUND_SESSIONS = 50;
/**
 * Log entries kept per playground session; the oldest go first. A command's
 * answer carries only its own new entry; reading a session answers the kept
 * tail.
 */
export const MAX_PLAYGROUND_LOG = 500;
/** Transcripts opened through the API and kept (the demo and the one opened at start are extra); the oldest goes. */
export const MAX_REPLAYS = 10;
/**
 * Most steps (frames) one answer about a replay run carries; the page asks
 * for the next page (`?from=`) as it steps on.
 */
export const MAX_REPLAY_PAGE = 200;
/** Most refused step indexes listed in one answer about a replay run (the run's summary still counts them all). */
export const MAX_REFUSED_STEPS_LISTED = 1_000;
/** Most refusals listed in a transcript's summary, over all its runs (each run's summary still counts its own). */
export const MAX_REFUSALS_LISTED = 2_000;
/** Catalog files opened through the API and kept (`POST /api/catalogs`); the oldest goes. */
export const MAX_CATALOGS = 10;
/**
 * Most bytes waiting to be sent to one page on the `/live` WebSocket. A page
 * that does not read past it is disconnected (terminated, its buffer freed);
 * the page reconnects by itself two seconds later and is sent the current
 * state afresh.
 */
export const MAX_LIVE_CLIENT_BUFFER_BYTES = 4 * 1024 * 1024;

/**
 * Hook sessions shown (`pulse-safety serve --hooks`): the most recently
 * updated ones; the others on disk are left out of the list until they are
 * among the newest again.
 */
export const MAX_HOOK_SESSIONS = 100;
/** How long the hook state directory is left to settle after a change before it is read again, ms. */
export const HOOK_RESCAN_DELAY_MS = 50;
/**
 * How often the hook state directory is read again when it cannot be watched
 * (`fs.watch` refused, or the directory does not exist yet), ms; while it is
 * watched, it is also read every `HOOK_POLL_INTERVAL_MS * 10` in case the
 * watch missed a change.
 */
export const HOOK_POLL_INTERVAL_MS = 1_000;
/**
 * How deep under the hook state directory folders are watched: 1, its own
 * folders (the store keeps one per host, `<host>/<file>.json`), not theirs
 * (nor, so, a lock kept as a folder beside a session file).
 */
export const HOOK_WATCH_DEPTH = 1;
/** Largest part of a hook session's decision (tool name, reason) shown, characters; longer ones are cut with `…`. */
export const MAX_HOOK_TEXT = 2_000;

/**
 * The nesting depth of JSON text (`[]` and `{}` are 1, a scalar 0), counted
 * on the raw text in one pass, without parsing, and only up to `limit + 1`:
 * a deeper text answers `limit + 1` as soon as it is seen. Brackets inside
 * strings are skipped. Not a validator: a text that is not JSON gets some
 * depth, and `JSON.parse` refuses it afterwards.
 */
export function jsonTextDepth(text: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      depth++;
      if (depth > limit) return limit + 1;
      if (depth > deepest) deepest = depth;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) {
      depth--;
    }
  }
  return deepest;
}

/** `text` cut to `max` characters, the last one `…` when cut. */
export function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * Counts what the server dropped, by kind, and logs the first of each kind
 * only, so a flood of bad messages cannot fill the log.
 */
export class DropLog {
  private readonly counts = new Map<string, number>();
  private readonly write: (line: string) => void;

  /** @param write receives one line (no newline) per kind; what it throws is ignored. */
  constructor(write: (line: string) => void) {
    this.write = write;
  }

  /**
   * Records one drop of `kind` (a short fixed phrase, e.g. `invalid safety
   * snapshot`); the first of its kind is logged with `detail`.
   */
  report(kind: string, detail: string): void {
    const count = (this.counts.get(kind) ?? 0) + 1;
    this.counts.set(kind, count);
    if (count > 1) return;
    try {
      this.write(`pulse-safety visualizer: dropped ${kind}: ${cut(detail, 300)} (further drops of this kind are counted, not logged)`);
    } catch {
      // A log that throws must not take the server down.
    }
  }

  /** Drops so far, by kind. */
  counted(): Record<string, number> {
    return Object.fromEntries(this.counts);
  }
}

/** The message of anything thrown. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  try {
    return String(error);
  } catch {
    return 'an unprintable value';
  }
}
