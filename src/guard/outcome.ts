import { isRecord, own } from '../util/own.js';
import { isThenable } from '../util/thenable.js';
/**
 * Did a tool call fail? Reads a tool result in any of the shapes real agents
 * record and says `'success'` or `'error'`.
 *
 * Spec: DESIGN.md §5.7 ("Failures are read from the result, not guessed from
 * a prefix"); §4 (an output that starts with `Error` is a failed call);
 * ASSISTANT_SAFETY.md "Failed tool calls cause no transition".
 *
 * A result is a failure when any of these holds (checked in this order):
 * 0. **It is no result**: an `Error` (what the tool threw, recorded as its
 *    result) or a Promise (the call was not awaited: its outcome is unknown).
 * 1. **Its format says so**: `is_error: true` (Anthropic `tool_result`),
 *    `isError: true` (MCP `CallToolResult`), `status: "error"` (a tool
 *    message; `"failed"` and `"failure"` too), `type: "error-text" | "error-json"` (AI SDK tool output),
 *    `ok: false` or `success: false` (the common JSON envelope, the gate's
 *    own `FSM_BLOCKED` result among them), or a Gemini `functionResponse`
 *    whose `response` has an `error` member.
 * 2. **A structured exit code is non-zero**: `exit_code`, `exitCode`,
 *    `returncode` or `returnCode` on the result, or under its `metadata`
 *    (Codex shell output `{"output":"…","metadata":{"exit_code":1}}`) or
 *    `outcome`; a number or a numeric string.
 * 3. **It is a JSON object with an `error` member** that is not null, false,
 *    0, an empty string, an empty array or an empty object. A result given as
 *    text counts as JSON when its text from the first `{` to the end parses
 *    as one object (the rule DESIGN §1 uses for self-verification); the
 *    checks of 1 and 2 apply to that object too.
 * 4. **Its text reports a non-zero exit code.** A line that starts with
 *    `Exit Code: N`, `Exit code: N` or `Process exited with code N` is the
 *    tool's own report (Gemini CLI puts it after the output, Codex in a
 *    header before an `Output:` line): when the text has an `Output:` line,
 *    the first such report above it decides, otherwise the last one in the
 *    text; `0` means success and no looser pattern is consulted. A line
 *    `Signal: N` (Gemini CLI: the command was killed) is a failure. Without
 *    such a line, a non-zero `exit status N` (Go), `exited with code N`,
 *    `exit code N` / `exit code: N`, or `returned non-zero exit status N`
 *    (Python) anywhere in the text is a failure.
 * 5. **Its text starts with a failure marker**, after leading whitespace and
 *    case-sensitively: `DEFAULT_FAILURE_MARKERS` (a Python traceback among
 *    them) plus the catalog's own.
 * 6. **Its first line is a shell or command-line tool's diagnostic**:
 *    `<program>: [<more>: ]<message>` where the message is `command not
 *    found`, `not found`, `No such file or directory`, `Permission denied`,
 *    or starts with `cannot ` (`bash: kubectl: command not found`,
 *    `cat: app.conf: No such file or directory`, `rm: cannot remove 'x': ...`):
 *    the command did not do what was asked, so a read gives no evidence.
 *
 * Nothing else is: a successful `cat` of a file whose fortieth line says
 * "error" stays a success. The text scanned is bounded
 * (`MAX_SCANNED_TEXT` characters for markers and exit codes,
 * `MAX_JSON_TEXT` for the JSON check), so a huge result cannot stall.
 *
 * **When the result cannot be read** (a getter or proxy trap that throws,
 * nesting too deep to walk) `outcomeOf` says `'error'` and never throws.
 * Why: a failed read then gives no evidence, so it can never verify a write
 * (the unsafe mistake for reads). For writes the seed's rule (a failed write
 * causes no transition) makes `'error'` the permissive side; the gate's
 * `strictFailedWrites` option (DESIGN §3.8) treats a failed write as needing
 * verification, and with it `'error'` is the conservative answer for both
 * kinds. Use strict mode when results may be hostile.
 *
 * A result with no failure signal at all (`undefined`, `null`, a number, an
 * empty string) is a success: nothing says it failed.
 */

/** Markers a failed result's text starts with (DESIGN §4, §5.7). Case-sensitive. */
export const DEFAULT_FAILURE_MARKERS: readonly string[] = Object.freeze([
  'Error',
  'error:',
  'fatal:',
  'ERROR',
  'Traceback (most recent call last):',
]);

/** Characters of a result's text scanned for markers and exit codes (64 KiB). */
export const MAX_SCANNED_TEXT = 64 * 1024;

/** Characters of a result's text parsed for the JSON checks (1 MiB); a longer text is not parsed. */
export const MAX_JSON_TEXT = 1024 * 1024;

/** How deep `resultText` follows nested content (parts in parts); deeper parts give no text. */
const MAX_TEXT_DEPTH = 16;

/** Options of `outcomeOf` / `failureReason`. */
export interface OutcomeOptions {
  /**
   * Markers added to `DEFAULT_FAILURE_MARKERS` (a catalog's own, e.g.
   * `Traceback`, `FAILED`). Case-sensitive prefixes of the trimmed text;
   * empty strings and non-strings are ignored.
   */
  failureMarkers?: readonly string[];
  /**
   * Read only what the runner produced, never the output's text: rule 0 and
   * rules 1-3 on the result object itself (its own `isError`, `status`,
   * `ok`, exit code, `error` fields), nothing parsed out of its text. For a
   * call whose output its arguments choose (`Classification.echoes`: a
   * shell's stdout), which could otherwise print a failure it did not have
   * (issue 26). Default false.
   */
  envelopeOnly?: boolean;
}

type Json = Record<string, unknown>;

/** A string builder that stops at `limit` characters. */
class BoundedText {
  private parts: string[] = [];
  private length = 0;
  private separate = false;

  constructor(private readonly limit: number) {}

  get full(): boolean {
    return this.length >= this.limit;
  }

  add(text: string): void {
    if (this.full || text === '') return;
    if (this.separate && this.length > 0) {
      this.separate = false;
      this.add('\n');
    }
    this.separate = false;
    const room = this.limit - this.length;
    const piece = text.length > room ? text.slice(0, room) : text;
    this.parts.push(piece);
    this.length += piece.length;
  }

  /** The next text added starts on a new line (unless nothing came before it). */
  newLine(): void {
    this.separate = true;
  }

  toString(): string {
    return this.parts.join('');
  }
}

function stringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return ''; // cycles, BigInt, nesting too deep
  }
}

/** Writes the text of `value` into `out`: see `resultText`. */
function collectText(value: unknown, out: BoundedText, depth: number): void {
  if (out.full || depth > MAX_TEXT_DEPTH) return;
  if (typeof value === 'string') {
    out.add(value);
    return;
  }
  if (typeof value === 'number' || typeof value === 'boolean') {
    out.add(String(value));
    return;
  }
  if (Array.isArray(value)) {
    for (const part of value) {
      if (out.full) return;
      out.newLine();
      collectPart(part, out, depth + 1);
    }
    return;
  }
  if (!isRecord(value)) return;
  const type = own(value, 'type');
  const payload = own(value, 'value');
  // AI SDK tool outputs: { type: 'text' | 'error-text' | 'json' | 'error-json' | 'content', value }.
  if (typeof type === 'string' && payload !== undefined && /^(error-)?(text|json)$|^content$/.test(type)) {
    if (typeof payload === 'string') out.add(payload);
    else if (Array.isArray(payload)) collectText(payload, out, depth + 1);
    else out.add(stringify(payload));
    return;
  }
  for (const key of ['functionResponse', 'content', 'output', 'llmContent', 'text', 'result']) {
    const inner = own(value, key);
    if (inner !== undefined && inner !== null) {
      collectText(key === 'functionResponse' && isRecord(inner) ? responseOf(inner) : inner, out, depth + 1);
      return;
    }
  }
  // A Gemini functionResponse body: { output } is handled above; { error } is the text of a failure.
  const error = own(value, 'error');
  if (typeof error === 'string') {
    out.add(error);
    return;
  }
  out.add(stringify(value));
}

/** One part of a content array: a string, a text part, a Gemini functionResponse part; other typed parts (images) give no text. */
function collectPart(part: unknown, out: BoundedText, depth: number): void {
  if (typeof part === 'string') return out.add(part);
  if (!isRecord(part)) return collectText(part, out, depth);
  const text = own(part, 'text');
  if (typeof text === 'string') return out.add(text);
  const fn = own(part, 'functionResponse');
  if (isRecord(fn)) return collectText(responseOf(fn), out, depth + 1);
  if (typeof own(part, 'type') === 'string') {
    // Nested results (an Anthropic tool_result block inside an array) carry their own content.
    const content = own(part, 'content') ?? own(part, 'output');
    if (content !== undefined) collectText(content, out, depth + 1);
    return;
  }
  out.add(stringify(part));
}

/** The `response` of a Gemini functionResponse, or the functionResponse itself when it has none. */
function responseOf(fn: Json): unknown {
  const response = own(fn, 'response');
  return response === undefined ? fn : response;
}

/** The text of `result`, at most `limit` characters. Throws what a hostile getter or proxy trap throws. */
function boundedText(result: unknown, limit: number): string {
  if (typeof result === 'string') return result.length > limit ? result.slice(0, limit) : result;
  const out = new BoundedText(limit);
  collectText(result, out, 0);
  return out.toString();
}

/**
 * The text of a tool result, at most `MAX_SCANNED_TEXT` characters: a
 * string as is; a content array's text parts (Anthropic, MCP, OpenAI
 * Responses `output_text`/`input_text`, Gemini parts) joined by newlines,
 * other parts (images) left out; an object's `functionResponse.response`,
 * `content`, `output`, `llmContent`, `text` or `result` (the first present),
 * an AI SDK output's `value`, a Gemini response's `error` string, or else the
 * object as JSON. Never throws: an unreadable result has the text `''`.
 */
export function resultText(result: unknown): string {
  try {
    return boundedText(result, MAX_SCANNED_TEXT);
  } catch {
    return ''; // a getter or proxy trap that throws: no text
  }
}

/** True when an `error` member says something: not null, false, 0, '', [] or {}. */
function saysError(error: unknown): boolean {
  if (error === undefined || error === null || error === false || error === 0 || error === '') return false;
  if (Array.isArray(error)) return error.length > 0;
  if (isRecord(error)) return Object.keys(error).length > 0;
  return true;
}

const EXIT_CODE_KEYS = ['exit_code', 'exitCode', 'returncode', 'returnCode'];

/** A non-zero exit code among an object's exit-code fields, or null. */
function nonZeroExitCode(value: Json): number | null {
  for (const key of EXIT_CODE_KEYS) {
    const raw = own(value, key);
    const code = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : NaN;
    if (Number.isFinite(code) && code !== 0) return code;
  }
  return null;
}

/** Rules 1-3 on one object (not its text). */
function objectFailure(value: Json): string | null {
  if (own(value, 'is_error') === true) return 'is_error is true';
  if (own(value, 'isError') === true) return 'isError is true';
  const status = own(value, 'status');
  if (status === 'error' || status === 'failed' || status === 'failure') return `status is "${status}"`;
  if (own(value, 'ok') === false) return 'ok is false';
  if (own(value, 'success') === false) return 'success is false';
  const type = own(value, 'type');
  if (type === 'error-text' || type === 'error-json') return `output type is "${type}"`;
  for (const holder of [value, own(value, 'metadata'), own(value, 'outcome')]) {
    if (!isRecord(holder)) continue;
    const code = nonZeroExitCode(holder);
    if (code !== null) return `exit code ${code}`;
  }
  if (saysError(own(value, 'error'))) return 'JSON with an "error" member';
  // Gemini: { functionResponse: { response: { error } } }, alone or as parts of an array.
  const fn = own(value, 'functionResponse');
  if (isRecord(fn)) {
    const response = own(fn, 'response');
    if (isRecord(response)) return objectFailure(response);
  }
  return null;
}

/** Rule 1-3 on arrays: Gemini parts carry their functionResponse. Other arrays (lists of records) are data, not flags. */
function arrayFailure(value: unknown[]): string | null {
  for (const part of value.slice(0, 1000)) {
    if (isRecord(part) && isRecord(own(part, 'functionResponse'))) {
      const failure = objectFailure(part);
      if (failure !== null) return failure;
    }
  }
  return null;
}

/** The one JSON object that the text from its first `{` to its end is, or null. */
function jsonObjectOf(text: string): Json | null {
  const start = text.indexOf('{');
  if (start < 0) return null;
  const candidate = text.slice(start).trimEnd();
  if (!candidate.endsWith('}')) return null;
  try {
    const value: unknown = JSON.parse(candidate);
    return isRecord(value) ? value : null;
  } catch {
    return null; // not JSON, or nested too deep to parse
  }
}

/** A tool's own exit-code report: a line `Exit Code: N`, `Exit code: N`, `Process exited with code N`. */
const REPORTED_EXIT = /^[ \t]*(?:exit code:?|process exited with code)[ \t]*(-?\d+)[ \t]*\.?[ \t]*$/gim;
/** Gemini CLI: a line `Signal: N` when the command was killed. */
const REPORTED_SIGNAL = /^[ \t]*Signal:[ \t]*(\d+)[ \t]*$/m;
/** Codex: the header ends at a line `Output:`. */
const OUTPUT_LINE = /^[ \t]*Output:[ \t]*$/m;
/** Exit codes mentioned in running text. */
const MENTIONED_EXIT = [
  /\bexit status[ \t]+(-?\d+)\b/gi,
  /\bexited with (?:exit )?code[ \t:]+(-?\d+)\b/gi,
  /\bexit code[ \t]*:?[ \t]*(-?\d+)\b/gi,
  /\breturned non-zero exit status[ \t]+(-?\d+)\b/gi,
];

/** Rule 4 on a text. */
function textExitFailure(text: string): string | null {
  const outputLine = OUTPUT_LINE.exec(text);
  const header = outputLine ? text.slice(0, outputLine.index) : null;
  const reports = [...(header ?? text).matchAll(REPORTED_EXIT)];
  const decisive = header !== null ? reports[0] : reports.at(-1);
  if (decisive) {
    const code = Number(decisive[1]);
    return code === 0 ? null : `exit code ${code}`;
  }
  const signal = REPORTED_SIGNAL.exec(text);
  if (signal) return `killed by signal ${signal[1]}`;
  for (const pattern of MENTIONED_EXIT) {
    for (const match of text.matchAll(pattern)) {
      const code = Number(match[1]);
      if (code !== 0) return `exit code ${code}`;
    }
  }
  return null;
}

/**
 * Rule 6: a command-line diagnostic as the first non-blank line,
 * `<program>: [<context>: ]<message>` (bash, sh, coreutils, most CLIs).
 */
const DIAGNOSTIC_LINE =
  /^[\w./+-]{1,64}:(?: [^\n]{0,400}?:)? (?:command not found|not found|No such file or directory|Permission denied|cannot [^\n]{0,400})[ \t]*$/;

/** Rule 6 on a text: the reason, or null. */
function diagnosticFailure(text: string): string | null {
  const first = /^[ \t]*(\S[^\n]*)/m.exec(text.slice(0, 4096))?.[1] ?? '';
  const line = first.trimEnd();
  return DIAGNOSTIC_LINE.test(line) ? `a command-line diagnostic: "${line.length > 80 ? `${line.slice(0, 80)}…` : line}"` : null;
}

function markersOf(options: OutcomeOptions | undefined): string[] {
  const extra = options?.failureMarkers;
  const markers = [...DEFAULT_FAILURE_MARKERS];
  if (Array.isArray(extra)) for (const marker of extra) if (typeof marker === 'string' && marker !== '') markers.push(marker);
  return markers;
}

/**
 * Why a tool result is a failure (e.g. `is_error is true`, `exit code 128`,
 * `starts with "fatal:"`), or null when it is a success. The rules and their
 * order are the module's (DESIGN §5.7). Never throws: an unreadable result
 * gives `result unreadable`.
 */
export function failureReason(result: unknown, options?: OutcomeOptions): string | null {
  try {
    if (result instanceof Error) return `a thrown ${result.name || 'Error'}`;
    if (isThenable(result)) return 'a Promise, not its result (the tool call was not awaited)';
    const markers = markersOf(options);
    if (isRecord(result)) {
      const failure = objectFailure(result);
      if (failure !== null) return failure;
    } else if (Array.isArray(result)) {
      const failure = arrayFailure(result);
      if (failure !== null) return failure;
    }
    if (options?.envelopeOnly === true) return null;
    const text = boundedText(result, MAX_JSON_TEXT);
    if (text.length < MAX_JSON_TEXT) {
      const json = jsonObjectOf(text);
      if (json !== null) {
        const failure = objectFailure(json);
        if (failure !== null) return failure;
      }
    }
    const scanned = text.length > MAX_SCANNED_TEXT ? text.slice(0, MAX_SCANNED_TEXT) : text;
    const exit = textExitFailure(scanned);
    if (exit !== null) return exit;
    const start = scanned.trimStart();
    const marker = markers.find((m) => start.startsWith(m));
    return marker === undefined ? diagnosticFailure(scanned) : `starts with "${marker}"`;
  } catch {
    return 'result unreadable';
  }
}

/**
 * `'error'` when a tool result reports a failure (DESIGN §5.7; the rules are
 * in this module's header), else `'success'`.
 *
 * @param result the result as recorded: a string, a content array, an
 *   Anthropic `tool_result` block, an MCP `CallToolResult`, a tool message,
 *   an AI SDK output, a Gemini `functionResponse` part, an OpenAI Responses
 *   `function_call_output` item, or a parsed JSON value.
 * @param options `failureMarkers` adds a catalog's markers to the defaults.
 * @returns never throws; a result that cannot be read is `'error'` (see the
 *   module header for why).
 */
export function outcomeOf(result: unknown, options?: OutcomeOptions): 'success' | 'error' {
  return failureReason(result, options) === null ? 'success' : 'error';
}

/** The error code an object carries: `error.code` (top level), or the legacy `error_code`; a non-empty string, else null. */
function objectErrorCode(value: Json): string | null {
  const error = own(value, 'error');
  const code = isRecord(error) ? own(error, 'code') : undefined;
  if (typeof code === 'string' && code !== '') return code;
  const legacy = own(value, 'error_code');
  return typeof legacy === 'string' && legacy !== '' ? legacy : null;
}

/**
 * The error code a tool result carries (issue 28): `error.code` at the top
 * level of the result, or the legacy `error_code`, a non-empty string. The
 * result is read as `failureReason` reads it: the object itself (an MCP
 * `CallToolResult`'s `structuredContent` too), else its text when that is
 * one JSON object (from its first `{` to its end, at most `MAX_JSON_TEXT`
 * characters), e.g. `{"ok":false,"error":{"code":"STRICT_RESOLUTION"}}` as
 * a tool's text. Null when none. Never throws: an unreadable result has none.
 */
export function errorCodeOf(result: unknown): string | null {
  try {
    if (isRecord(result)) {
      const code = objectErrorCode(result);
      if (code !== null) return code;
      const structured = own(result, 'structuredContent');
      if (isRecord(structured)) {
        const inner = objectErrorCode(structured);
        if (inner !== null) return inner;
      }
    }
    const text = boundedText(result, MAX_JSON_TEXT);
    if (text.length >= MAX_JSON_TEXT) return null;
    const json = jsonObjectOf(text);
    return json === null ? null : objectErrorCode(json);
  } catch {
    return null; // a getter or proxy trap that throws: no code read
  }
}

/**
 * The recoverable code a tool result raised (issue 28): its error code
 * (`errorCodeOf`) when `codes` lists it (a catalog's `recoveryCodes`,
 * exact match), else null. Never throws.
 */
export function recoveryCodeOf(result: unknown, codes: readonly string[]): string | null {
  if (codes.length === 0) return null;
  const code = errorCodeOf(result);
  return code !== null && codes.includes(code) ? code : null;
}
