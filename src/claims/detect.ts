/**
 * The phantom-claim detector: finds, in a final answer, the sentences that
 * claim a change as done ("I restarted the service", "the folder is now
 * gone", "Done: fixed and deployed"), and the places each names. Pure text
 * in, claims out; whether a tool made the change is decided by the machine
 * (`answer.requested`'s `claims`, rule `phantom-claim`).
 *
 * A sentence is a claim when one of the words' patterns matches it, it does
 * not end in `?`, and no exclusion (negation, future, hedge, condition,
 * request) matches the sentence up to the end of the claim. One claim per
 * sentence, the first pattern that matches.
 *
 * Spec: issue 28 item 2 (phantom-execution claims).
 */
import { ENGLISH_CLAIM_WORDS, type CompiledClaimWords } from './words.js';

/** A claim of a change in a final answer. */
export interface Claim {
  /** The sentence that claims it, trimmed. */
  text: string;
  /** The change verb as written, lower case ("deleted", "done"). */
  verb: string;
  /** What it is about, as written: the words after an active verb, or the subject of a passive; absent when none. */
  object?: string;
  /**
   * The places the claim names as changed: back-quoted names, paths and file
   * names, ids (upper-case letters and digits, both, 5 to 12 characters), in
   * the words after an active verb up to a preposition other than "to" or
   * "into" ("I deleted `/tmp/x`"; not "... for flight HAT045"), or in the subject
   * of a passive or a state ("reservation ABC123 has been cancelled"; not
   * "changed to flight HAT266", a new value). At most `MAX_PLACES_PER_CLAIM`,
   * in order, without repeats. Empty when it names none.
   */
  places: string[];
  /** Where the sentence is in the answer: `[start, end)`, UTF-16 offsets. */
  span: [number, number];
}

/** The most claims read from one answer; later ones are dropped. */
export const MAX_CLAIMS = 32;

/** The most places kept from one claim. */
export const MAX_PLACES_PER_CLAIM = 8;

/** The longest answer read, characters; the rest is not read. */
export const MAX_ANSWER_LENGTH = 100_000;

/** Sentences: up to a `.`, `!` or `?` before white space or the end, or up to a line break. */
const SENTENCE = /[^\n]+?(?:[.!?](?=\s|$)|(?=\n)|$)/gu;

/** Places a sentence names (`Claim.places`). */
const BACKQUOTED = /`([^`\n]{1,200})`/gu;
const PATH =
  /(?:~|\.{1,2})?\/[\w.@+~-]+(?:\/[\w.@+~-]+)*\/?|\b[\w@+-]+(?:\/[\w.@+-]+)+\/?|\b[\w@+-]+\.[A-Za-z][A-Za-z0-9]{0,7}\b|\b[\w.@+-]+\/(?![\w.@+~-])/gu;
const ID = /\b(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{5,12}\b/gu;
/** Abbreviations a file-name match must not take for a file ("e.g", "i.e"). */
const NOT_A_FILE = /^(?:e\.g|i\.e|etc|vs|a\.m|p\.m)$/iu;

/** The places named in `sentence`, in order of appearance, without repeats, at most `MAX_PLACES_PER_CLAIM`. */
export function placesOf(sentence: string): string[] {
  const found: [number, string][] = [];
  const taken: [number, number][] = [];
  const add = (at: number, end: number, place: string) => {
    const p = place.replace(/[.,;:]+$/u, '');
    if (p.length === 0 || NOT_A_FILE.test(p) || /^[\d.]+$/u.test(p)) return;
    if (taken.some(([s, e]) => at < e && end > s)) return;
    taken.push([at, end]);
    found.push([at, p]);
  };
  for (const m of sentence.matchAll(BACKQUOTED)) add(m.index, m.index + m[0].length, m[1]!.trim());
  for (const m of sentence.matchAll(PATH)) add(m.index, m.index + m[0].length, m[0]);
  for (const m of sentence.matchAll(ID)) add(m.index, m.index + m[0].length, m[0]);
  const places: string[] = [];
  for (const [, p] of found.sort((a, b) => a[0] - b[0])) {
    if (!places.includes(p)) places.push(p);
    if (places.length === MAX_PLACES_PER_CLAIM) break;
  }
  return places;
}

/** A preposition that ends the direct object of an active claim: what follows names no changed place. */
const ADJUNCT =
  /\s(?:about|after|as|at|because|before|by|despite|due|during|for|from|in|of|on|over|per|since|through|under|using|via|with|within|without)\s/iu;

/** Markdown emphasis and list markers, which are no words. */
function plain(sentence: string): string {
  return sentence.replace(/[*_]{1,3}/gu, ' ').replace(/^\s*(?:[-+>]|\d+[.)])\s+/u, '');
}

/** Trims an object phrase to its words, at most 120 characters; undefined when empty. */
function objectOf(phrase: string): string | undefined {
  const o = phrase
    .replace(/^[\s,:;-]+|[\s.,:;!-]+$/gu, '')
    .replace(/\s+/gu, ' ')
    .slice(0, 120);
  return o.length > 0 ? o : undefined;
}

/**
 * The claims of change in `answer` (`Claim`), in order, at most
 * `MAX_CLAIMS`; `words` the compiled words of its language (default
 * English). Never throws; anything but a string has no claims.
 */
export function detectClaims(answer: unknown, words: CompiledClaimWords = ENGLISH_CLAIM_WORDS): Claim[] {
  if (typeof answer !== 'string') return [];
  const text = answer.slice(0, MAX_ANSWER_LENGTH);
  const claims: Claim[] = [];
  for (const m of text.matchAll(SENTENCE)) {
    const raw = m[0];
    const lead = raw.length - raw.trimStart().length;
    const sentence = raw.trim();
    if (sentence.length === 0 || sentence.endsWith('?')) continue;
    const words_ = plain(sentence);
    const claim = claimIn(words_, words);
    if (claim === null) continue;
    claims.push({
      text: sentence,
      verb: claim.verb,
      ...(claim.object === undefined ? {} : { object: claim.object }),
      places: placesOf(claim.about),
      span: [m.index + lead, m.index + lead + sentence.length],
    });
    if (claims.length === MAX_CLAIMS) break;
  }
  return claims;
}

/** The first claim pattern matching `sentence` with no exclusion before its end and no sentence exclusion, or null. */
function claimIn(sentence: string, words: CompiledClaimWords): { verb: string; object?: string; about: string } | null {
  for (const { regex } of words.patterns) {
    const m = regex.exec(sentence);
    if (m === null) continue;
    const end = m.index + m[0].length;
    const upTo = sentence.slice(0, end);
    if (words.exclusions.some((e) => e.regex.test(upTo))) return null;
    if (words.sentenceExclusions.some((e) => e.regex.test(sentence))) return null;
    const verb = (m[1] ?? m[0]).toLowerCase().replace(/\s+/gu, ' ').trim();
    const after = objectOf(sentence.slice(end));
    const before = objectOf(sentence.slice(0, m.index));
    // An active claim ("I deleted X", "Removed X") is about what follows the verb; a passive one about its subject.
    const active = /^\W*(?:i|we)\b/iu.test(m[0]) || /^\W*$/u.test(sentence.slice(0, m.index));
    const object = active ? after : (before ?? after);
    // The words that name what changed: after an active verb, the subject of a passive or a state
    // ("flight X has been changed to flight Y" changed X; Y is its new value, no place).
    // After an active verb, up to the first preposition but "to" or "into" ("issued a certificate for the delay
    // of flight X" changed no flight X; "pushed the commits to origin/main" changed origin/main).
    const about = active || before === undefined ? (sentence.slice(end).split(ADJUNCT, 1)[0] ?? '') : sentence.slice(0, m.index);
    return object === undefined ? { verb, about } : { verb, object, about };
  }
  return null;
}
