/**
 * The format-neutral steps every transcript reader produces and the audit
 * replays: a call, its result, an answer, a reset, time passing; and a run,
 * one recorded session of them. Kept apart from the readers so that the
 * audit and the visualizer depend on the steps alone.
 *
 * Spec: ASSISTANT_SAFETY.md "Tool kinds" (what a call is); DESIGN.md §5.7
 * (whether a call failed is read from its result: `src/guard/outcome.ts`); §5.1 (a
 * call's working directory, when the log records one).
 */

/**
 * A tool call the assistant made. `args` is the parsed arguments object, or
 * the raw string when it is not JSON. `cwd` is the working directory the log
 * records for the call (Claude Code's `cwd`, Codex's session and turn `cwd`),
 * absent when it records none.
 */
export interface CallStep {
  type: 'call';
  id: string;
  name: string;
  args: unknown;
  position: string;
  cwd?: string;
}
/**
 * The outcome of an earlier call, by its id. `outcome` is read from the
 * result (DESIGN §5.7, `outcomeOf`); `text` is the result's text, at most
 * `MAX_RESULT_TEXT` characters (`''` when the log records none), kept for
 * self-verification (DESIGN §1, §5.8) and catalog failure markers.
 */
export interface ResultStep {
  type: 'result';
  id: string;
  name: string;
  outcome: 'success' | 'error';
  text: string;
  position: string;
}
/** Text the assistant said to the user: a final answer. */
export interface AnswerStep {
  type: 'answer';
  text: string;
  position: string;
}
/** A full session clear (Reset). */
export interface ResetStep {
  type: 'reset';
  position: string;
}
/** A context clear that keeps pinned items (ResetKeepProgress). */
export interface ResetKeepProgressStep {
  type: 'resetKeepProgress';
  position: string;
}
/** Time passes: the audit's clock advances by `advanceMs` milliseconds. */
export interface ClockStep {
  type: 'clock';
  advanceMs: number;
  position: string;
}

/** One step of a transcript; `position` says where it is in the input (e.g. `message 7`, `line 3`). */
export type TranscriptStep = CallStep | ResultStep | AnswerStep | ResetStep | ResetKeepProgressStep | ClockStep;

/**
 * One recorded session. `reward` is the benchmark's score when the input has
 * one (tau-bench: 1 met, 0 not), else null. `catalog` names the shipped
 * catalog of the agent whose log format the reader recognised (`claude-code`
 * for a Claude Code session, `opencode`, `qwen-code`, `kiro`, `copilot`, ...), absent
 * for formats many agents share (OpenAI chat, Anthropic messages): `--catalog
 * auto` takes it before counting tool names (issue 25 item 4).
 */
export interface TranscriptRun {
  id: string;
  reward: number | null;
  steps: TranscriptStep[];
  catalog?: string;
}

/** Options of `readTranscript`. */
export interface ReadOptions {
  /** Failure markers a catalog adds to `DEFAULT_FAILURE_MARKERS` when outcomes are read from result text (DESIGN §5.7). */
  failureMarkers?: readonly string[];
}

/** The most characters of a result's text a `ResultStep` keeps (16 KiB). */
export const MAX_RESULT_TEXT = 16 * 1024;
