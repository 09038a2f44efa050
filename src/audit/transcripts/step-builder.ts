/**
 * What every transcript reader builds its steps with: the `StepBuilder` of
 * one run (pairs results with calls, decides which texts are answers), the
 * gate's call ids (`CallIds`: long ids made up, one to one), the bounds on
 * what a step keeps (names, nested arguments, result text), and the context
 * the readers of one entry share (`ReaderContext`).
 *
 * Spec: DESIGN.md §5.7 (whether a call failed is read from its result:
 * `src/guard/outcome.ts`); §5.1 (a call's working directory, when the log records one).
 */
import { TranscriptError } from '../../errors/transcript-error.js';
import { MAX_NAME_LENGTH } from '../../../machines/safety.policy.js';
import { outcomeOf, resultText } from '../../guard/outcome.js';
import { isRecord, own } from '../../util/own.js';
import { MAX_RESULT_TEXT, type AnswerStep, type CallStep, type ReadOptions, type TranscriptStep } from './steps.js';

/**
 * A tool name as the gate keeps it: its first `MAX_NAME_LENGTH` characters
 * (the machine keeps no more, and the guard refuses a longer one), so any
 * readable transcript can be audited. Call ids are kept apart (`CallIds`).
 */
export function clipName(value: string): string {
  return value.length > MAX_NAME_LENGTH ? value.slice(0, MAX_NAME_LENGTH) : value;
}

/** The form of a call id `CallIds` made up (`…#<n>` closing exactly `MAX_NAME_LENGTH` characters). */
const MADE_UP_ID = /…#[0-9]+$/;

/**
 * Call ids as the gate takes them, one to one: an id of fewer than
 * `MAX_NAME_LENGTH` characters as it is; a longer one (which the guard
 * refuses, and which a cut would merge with every id sharing its first
 * characters) its first characters and `…#<n>`, exactly `MAX_NAME_LENGTH`
 * characters, `n` counting the long ids of the run. An id of exactly
 * `MAX_NAME_LENGTH` characters is made up too when it has that form, so a
 * log's own id never takes one made up for another. Per run.
 */
export class CallIds {
  /** The made-up id of each long id, and how many of its calls have no result yet (`open`, `settle`). */
  private readonly madeUp = new Map<string, { gateId: string; open: number }>();
  private count = 0;

  /** The gate's id for the log's `id`: the same for the same id while it is kept. */
  of(id: string): string {
    return this.entry(id)?.gateId ?? id;
  }

  /** `of`, for a call under `id`: kept until the result of each call under it (`settle`). */
  open(id: string): string {
    const entry = this.entry(id);
    if (entry === undefined) return id;
    entry.open += 1;
    return entry.gateId;
  }

  /** `of`, for a result under `id`: forgotten once every call under it has its result, so the map stays as small as the calls in flight. */
  settle(id: string): string {
    const entry = this.entry(id);
    if (entry === undefined) return id;
    entry.open -= 1;
    if (entry.open <= 0) this.madeUp.delete(id);
    return entry.gateId;
  }

  private entry(id: string): { gateId: string; open: number } | undefined {
    if (id.length < MAX_NAME_LENGTH || (id.length === MAX_NAME_LENGTH && !MADE_UP_ID.test(id))) return undefined;
    let entry = this.madeUp.get(id);
    if (entry === undefined) {
      const suffix = `…#${(this.count += 1)}`;
      entry = { gateId: id.slice(0, MAX_NAME_LENGTH - suffix.length) + suffix, open: 0 };
      this.madeUp.set(id, entry);
    }
    return entry;
  }

  /** Forgets every id: a new run starts (ids are per run). */
  clear(): void {
    this.madeUp.clear();
    this.count = 0;
  }
}

/** A JSON object as a reader sees it: any keys, values still to be checked. */
export type Json = Record<string, unknown>;

/** `value`'s own `key` when it is a string, else undefined. */
export function ownString(value: Json, key: string): string | undefined {
  const found = own(value, key);
  return typeof found === 'string' ? found : undefined;
}

/** Text of a message content: a string, or the text parts of an array of blocks (thought parts left out). */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) =>
      isRecord(part) && typeof own(part, 'text') === 'string' && own(part, 'thought') !== true ? (own(part, 'text') as string) : '',
    )
    .join('');
}

/** Arguments nested deeper than this are kept as their raw string: nothing real nests so deep, and reports must serialise them. */
export const MAX_ARGUMENT_DEPTH = 64;

/** True when `value` nests objects or arrays deeper than `limit` (iterative: no recursion to overflow). */
function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    if (depth >= limit) return true;
    for (const inner of Object.values(item)) stack.push([inner, depth + 1]);
  }
  return false;
}

/** Arguments as given, or a note in their place when they nest too deep to report. */
export function boundArguments(value: unknown): unknown {
  return nestsDeeperThan(value, MAX_ARGUMENT_DEPTH) ? `[arguments nested deeper than ${MAX_ARGUMENT_DEPTH} levels]` : value;
}

/** Arguments recorded as a JSON string, parsed; the raw string when it is not JSON or nests too deep (`MAX_ARGUMENT_DEPTH`). */
export function parseArguments(raw: unknown): unknown {
  if (typeof raw !== 'string') return boundArguments(raw ?? {});
  try {
    const parsed: unknown = JSON.parse(raw);
    return nestsDeeperThan(parsed, MAX_ARGUMENT_DEPTH) ? raw : parsed;
  } catch {
    return raw;
  }
}

/** A result's text as a `ResultStep` keeps it. */
function keptText(result: unknown): string {
  const text = resultText(result);
  return text.length > MAX_RESULT_TEXT ? text.slice(0, MAX_RESULT_TEXT) : text;
}

/**
 * Builds the steps of one run. Pairs results with calls (by id, or for
 * formats without ids by name, oldest open call first) and decides answers:
 * assistant text is an answer only when no tool call follows it in the same
 * turn (a turn ends where the user speaks), so a preamble ("Let me check.")
 * recorded as its own message is no final answer.
 */
export class StepBuilder {
  readonly steps: TranscriptStep[] = [];
  /** The working directory the log last recorded. */
  cwd: string | undefined;
  private readonly names = new Map<string, string>();
  /** The gate's call ids (long ones made up, `CallIds`). */
  private readonly ids = new CallIds();
  /** Calls without a result yet, by name, in order. */
  private readonly open = new Map<string, Set<string>>();
  /** Answers of the current turn, dropped if a call follows. */
  private pendingAnswers: AnswerStep[] = [];
  private readonly dropped = new Set<TranscriptStep>();
  private synthesized = 0;

  constructor(private readonly options: ReadOptions) {}

  /** A fresh id for a call the log gives none. */
  newId(kind: string): string {
    this.synthesized += 1;
    return `${kind}#${this.synthesized}`;
  }

  /** A call `rawId` of tool `rawName` (both kept as the gate takes them), read at `at`, in the working directory last recorded. */
  call(rawId: string, rawName: string, args: unknown, at: StepOrigin): void {
    const id = this.ids.of(rawId);
    const name = clipName(rawName);
    for (const answer of this.pendingAnswers) this.dropped.add(answer);
    this.pendingAnswers = [];
    this.names.set(id, name);
    const open = this.open.get(name) ?? new Set<string>();
    open.add(id);
    this.open.set(name, open);
    const step: CallStep = { type: 'call', id, name, args, position: at.position };
    if (this.cwd !== undefined) step.cwd = this.cwd;
    this.steps.push(step);
  }

  /** The id of the oldest call of `name` without a result, or null. */
  openCallOf(name: string): string | null {
    const open = this.open.get(name);
    if (!open) return null;
    for (const id of open) return id;
    return null;
  }

  /** The tool name of call `id`, if the run has such a call. */
  nameOf(id: string): string | undefined {
    return this.names.get(id);
  }

  /** A result of call `id`, read at `at`; `result` is what the log recorded, `at.outcome` overrides the reading of it. */
  result(rawId: string, rawName: string | undefined, result: unknown, at: StepOrigin & { readonly outcome?: 'success' | 'error' }): void {
    const id = this.ids.of(rawId);
    const name = rawName === undefined ? undefined : clipName(rawName);
    const known = name ?? this.names.get(id) ?? '';
    this.open.get(this.names.get(id) ?? known)?.delete(id);
    this.steps.push({
      type: 'result',
      id,
      name: known,
      outcome: at.outcome ?? outcomeOf(result, this.options),
      text: keptText(result),
      position: at.position,
    });
  }

  /** Assistant text read at `at`: an answer, unless a call follows it in the same turn. */
  answer(text: string, at: StepOrigin): void {
    const step: AnswerStep = { type: 'answer', text, position: at.position };
    this.pendingAnswers.push(step);
    this.steps.push(step);
  }

  /** The user spoke: the turn's answers stand. */
  userTurn(): void {
    this.pendingAnswers = [];
  }

  /** The run's steps, without the texts a call followed in their turn. */
  finish(): TranscriptStep[] {
    return this.dropped.size === 0 ? this.steps : this.steps.filter((step) => !this.dropped.has(step));
  }
}

/** Where a step is read from: the entry's position in the input (`message 7`, `line 3`). */
export interface StepOrigin {
  readonly position: string;
}

/**
 * What the readers of one entry share (`readEntry` and the format reader it
 * picks): the run's step builder, the input's name (a file path) and the
 * entry's position, which every step read from the entry records and every
 * error names. One per entry.
 */
export interface ReaderContext extends StepOrigin {
  readonly out: StepBuilder;
  readonly source: string;
}

/**
 * Refuses the entry being read.
 * @throws TranscriptError naming the source, the entry's position and `problem`, always.
 */
export function fail(at: ReaderContext, problem: string): never {
  throw new TranscriptError(at.source, at.position, problem);
}
