/**
 * The words of the phantom-claim detector, as data: one JSON file per
 * language (`words/en.json`), validated here and compiled to regular
 * expressions. Another language adds a file of the same shape.
 *
 * A file names change verbs in the past or perfect (`changeVerbs`), words of
 * a changed state (`stateWords`: "is now gone"), adverbs that may stand
 * between the auxiliary and the verb, the claim patterns (regular
 * expressions with the placeholders `{verb}`, `{state}` and `{adverb}`, the
 * first capture group the verb), and the exclusions: words that, before the
 * claim in its sentence, make it no claim (negation, future, hedge,
 * condition, request). A sentence ending in `?` is never a claim.
 *
 * Spec: issue 28 item 2 (phantom-execution claims).
 */
import isSafeRegex from 'safe-regex2';
import { z } from 'zod';
import english from './words/en.json' with { type: 'json' };

/** A word or phrase: lower case letters, apostrophes, spaces and hyphens, at most 40 characters. */
const word = z
  .string()
  .min(1)
  .max(40)
  .regex(/^[\p{Ll}'’ -]+$/u, 'must be lower-case letters, apostrophes, spaces or hyphens');

/** A named regular expression of a words file: it must compile, and not take exponential time (safe-regex2). */
const namedRegex = z.strictObject({
  name: z.string().min(1).max(60),
  regex: z.string().min(1).max(400),
});

/** The shape of a words file (`words/<language>.json`). */
export const claimWordsSchema = z.strictObject({
  /** The language, a BCP 47 tag (`en`). */
  language: z.string().regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/),
  /** What the words are and how they were chosen. */
  description: z.string().optional(),
  /** Change verbs in the past or perfect form ("deleted", "restarted"). */
  changeVerbs: z.array(word).min(1).max(500),
  /** Words of a changed state after "is" or "are" ("gone", "deleted"). */
  stateWords: z.array(word).max(200),
  /** Adverbs allowed between the auxiliary and the verb ("successfully"). */
  adverbs: z.array(word).max(100),
  /** Claim patterns, with `{verb}`, `{state}`, `{adverb}`; the first capture group is the verb. */
  patterns: z.array(namedRegex).min(1).max(50),
  /** Exclusions: a match before the claim in its sentence makes it no claim. */
  exclusions: z.array(namedRegex).max(50),
  /**
   * Sentence exclusions: a match anywhere in the claim's sentence makes it no
   * claim (a negated object after the verb, "I deleted nothing"; the answer
   * pointing at itself, "a summary below"; a state observed, not made,
   * "according to the logs"). Optional; default none.
   */
  sentenceExclusions: z.array(namedRegex).max(50).optional(),
});

/** A words file, validated (`claimWordsSchema`). */
export type ClaimWords = z.infer<typeof claimWordsSchema>;

/** A words file compiled: the patterns and exclusions as case-insensitive regular expressions. */
export interface CompiledClaimWords {
  language: string;
  /** Each pattern, its placeholders filled in; the first capture group is the verb. */
  patterns: readonly { name: string; regex: RegExp }[];
  /** Each exclusion. */
  exclusions: readonly { name: string; regex: RegExp }[];
  /** Each sentence exclusion (matched anywhere in the sentence). */
  sentenceExclusions: readonly { name: string; regex: RegExp }[];
}

/** Escapes a word for a regular expression; its spaces match any run of white space. */
function escapeWord(w: string): string {
  return w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ +/g, '\\s+');
}

/** A group of alternatives, longest first (so "rolled back" wins over a shorter word). */
function alternatives(words: readonly string[]): string {
  return `(?:${[...words]
    .sort((a, b) => b.length - a.length)
    .map(escapeWord)
    .join('|')})`;
}

/** Compiles one expression of a words file, or throws a `TypeError` naming it. */
function compile(name: string, source: string): RegExp {
  let regex: RegExp;
  try {
    regex = new RegExp(source, 'iu');
  } catch (error) {
    throw new TypeError(`claim words: pattern '${name}' is not a regular expression: ${(error as Error).message}`, { cause: error });
  }
  if (!isSafeRegex(regex)) throw new TypeError(`claim words: pattern '${name}' may take exponential time`);
  return regex;
}

/**
 * Validates and compiles a words file. Throws a `TypeError` when `words` is
 * not of the shape `claimWordsSchema` says, or a pattern does not compile or
 * may take exponential time.
 */
export function compileClaimWords(words: unknown): CompiledClaimWords {
  const parsed = claimWordsSchema.safeParse(words);
  if (!parsed.success) throw new TypeError(`claim words: ${z.prettifyError(parsed.error)}`);
  const w = parsed.data;
  const fill = (source: string) =>
    source
      .replaceAll('{verb}', alternatives(w.changeVerbs))
      .replaceAll('{state}', alternatives(w.stateWords.length > 0 ? w.stateWords : ['\u0000']))
      .replaceAll('{adverb}', alternatives(w.adverbs.length > 0 ? w.adverbs : ['\u0000']));
  return {
    language: w.language,
    patterns: w.patterns.map((p) => ({ name: p.name, regex: compile(p.name, fill(p.regex)) })),
    exclusions: w.exclusions.map((e) => ({ name: e.name, regex: compile(e.name, e.regex) })),
    sentenceExclusions: (w.sentenceExclusions ?? []).map((e) => ({ name: e.name, regex: compile(e.name, e.regex) })),
  };
}

/** The English words (`words/en.json`), compiled. */
export const ENGLISH_CLAIM_WORDS: CompiledClaimWords = compileClaimWords(english);
