/**
 * Readers of recorded agent transcripts. Each becomes a list of runs of
 * format-neutral steps that the audit replays. Formats, detected from the
 * content (see `readTranscript`): OpenAI chat (and tau-bench runs), OpenAI
 * legacy `function_call`, OpenAI Responses items, Anthropic messages, Claude
 * Code session JSONL, Gemini CLI chat history and session files, Codex
 * rollout JSONL, Qwen Code chat recordings, opencode exports and run lines,
 * Kiro CLI saved conversations, Copilot CLI session events, and this
 * project's own JSONL events. A run
 * read from an agent's own format names that agent's catalog.
 *
 * This module is the surface: the steps (`steps.ts`), the readers
 * (`read-transcript.ts`, one file per format beside it) and the streaming
 * reader of this project's JSONL (`jsonl.ts`).
 *
 * Spec: ASSISTANT_SAFETY.md "Tool kinds" (what a call is); DESIGN.md §5.7
 * (whether a call failed is read from its result: `src/guard/outcome.ts`); §5.1 (a
 * call's working directory, when the log records one).
 */
export {
  MAX_RESULT_TEXT,
  type AnswerStep,
  type CallStep,
  type ClockStep,
  type ResultStep,
  type TranscriptRun,
  type TranscriptStep,
} from './steps.js';
export { type JsonlEvent } from './jsonl.js';
export { readTranscript, readTranscriptEvents, TRANSCRIPT_FORMATS } from './read-transcript.js';
