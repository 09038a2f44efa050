/**
 * Symbolic links a command creates (DESIGN.md §5.1, §5.5): `ln -s SRC LINK`
 * makes LINK lead to SRC resolved against LINK's own directory, not the
 * shell's. The write's targets are the link paths; a link that leads out
 * of its directory (absolute elsewhere, or climbing with `..`) is reported
 * in the classification's `links`, and paths at or under it later in the
 * same call are places not known (`applyLinks`).
 */
import { posix } from 'node:path';
import type { Classification } from '../classification.js';
import { isUnder, isUnknownPlace, unknownPlace } from '../../../machines/safety.targets.js';
import { resolveTargets, wordTargets, type Cwds } from './cwd.js';
import { writePart } from './parts.js';
import { SHELL_REASONS } from './reasons.js';
import type { JudgeContext, Word } from './words.js';

/** Parts made by `judgeLn` that create links out of their directory, with those links: `applyLinks` looks for them. */
const linkParts = new WeakMap<Classification, string[]>();

/**
 * Judges `ln` (DESIGN.md §5.5): a write whose targets are the links it
 * makes (the last operand, or `-t DIR`; with one operand the link is made
 * in the working directory). With `-s`, each source is resolved against the
 * link's directory (with `-r`, against the working directory); one that is
 * not at or under that directory (or not known) makes the link one that
 * leads out: named in the part's `links`, and in `ctx.links` for later
 * paths. When the last operand is a directory the link is made inside it:
 * the link's directory is taken to be both, and a source out of either counts.
 */
export function judgeLn(words: Word[], cwds: Cwds, ctx: JudgeContext): void {
  let symbolic = false;
  let relative = false;
  let noTargetDirectory = false;
  let targetDirectory: Word | null = null;
  const operands: Word[] = [];
  let unknownWord = false;
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    const text = word.text;
    if (text === null) {
      if (word.optionLike) unknownWord = true;
      operands.push(word);
      continue;
    }
    if (text === '--') {
      operands.push(...words.slice(i + 1));
      break;
    }
    if (!text.startsWith('-') || text === '-') {
      operands.push(word);
      continue;
    }
    const [name, value] = text.startsWith('--') ? text.split('=', 2) : [text, undefined];
    if (name === '--symbolic') symbolic = true;
    else if (name === '--relative') relative = true;
    else if (name === '--no-target-directory') noTargetDirectory = true;
    else if (name === '--target-directory') targetDirectory = value !== undefined ? { ...word, text: value } : (words[++i] ?? null);
    else if (name === '--suffix') {
      if (value === undefined) i++; // its value is the next word
    } else if (!name!.startsWith('--')) {
      for (let j = 1; j < text.length; j++) {
        const letter = text[j];
        if (letter === 's') symbolic = true;
        else if (letter === 'r') relative = true;
        else if (letter === 'T') noTargetDirectory = true;
        else if (letter === 't' || letter === 'S') {
          const rest = text.slice(j + 1);
          const taken = rest !== '' ? { ...word, text: rest } : (words[++i] ?? null);
          if (letter === 't') targetDirectory = taken;
          break;
        }
      }
    }
  }
  // Where the links are made (as written) and the sources they lead to.
  let linkWords: Word[];
  let sources: Word[];
  let inside: boolean;
  if (targetDirectory !== null) {
    linkWords = [targetDirectory];
    sources = operands;
    inside = true;
  } else if (operands.length === 1) {
    linkWords = [{ text: '.', optionLike: false, pattern: false }];
    sources = operands;
    inside = true;
  } else {
    linkWords = operands.slice(-1);
    sources = operands.slice(0, -1);
    inside = operands.length > 2;
  }
  const targets = linkWords.flatMap((w) => wordTargets(w, cwds));
  const links: string[] = [];
  if (symbolic) {
    for (const link of targets) {
      if (isUnknownPlace(link)) continue;
      // The link's directory: the link itself when it is a directory the link is made in; else its parent (or either).
      const dirs = inside ? [link] : noTargetDirectory ? [posix.dirname(link)] : [posix.dirname(link), link];
      const out = unknownWord || sources.some((source) => dirs.some((dir) => leadsOut(source, dir, relative, cwds)));
      if (out) links.push(link);
    }
  }
  const part = writePart(targets.length > 0 ? targets : [unknownPlace('ln <link>')], false, SHELL_REASONS.writes('ln'));
  if (links.length > 0) {
    part.links = links;
    linkParts.set(part, links);
    ctx.links = [...(ctx.links ?? []), ...links];
  }
  ctx.parts.push(part);
}

/** Whether a link in `dir` to `source` leads out of `dir` (not at or under it once resolved; not known counts). */
function leadsOut(source: Word, dir: string, relative: boolean, cwds: Cwds): boolean {
  if (source.text === null) return true;
  const resolved = relative ? resolveTargets(source.text, cwds) : resolveTargets(source.text, [dir === '.' ? '' : dir]);
  return resolved.length === 0 || resolved.some((target) => isUnknownPlace(target) || !isUnder(target, dir));
}

/**
 * Rewrites, in order, the targets of the parts after a part that made a
 * link out of its directory: a target at or under such a link is a place
 * not known (`?/<target> (through a link)`). Returns the links of the call
 * (for its classification's `links`), none when it made none.
 */
export function applyLinks(parts: Classification[]): string[] {
  const links: string[] = [];
  for (const part of parts) {
    if (links.length > 0) {
      part.targets = part.targets.map((target) =>
        links.some((link) => isUnder(target, link)) ? unknownPlace(`${target} (through a link)`) : target,
      );
    }
    const made = linkParts.get(part);
    if (made !== undefined) for (const link of made) if (!links.includes(link)) links.push(link);
  }
  return links;
}
