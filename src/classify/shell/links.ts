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
import { isUnder, isUnknownPlace, unknownPlace, unknownPlaceOf } from '../../../machines/safety.targets.js';
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
 * Hard links (`ln` without `-s`, `link A B`, `cp -l`/`--link`; `cp -s` makes
 * symbolic ones) lead to the source named from the working directory: a
 * later write through the link changes the source's file, so a source not
 * under the link's directory makes it a link that leads out too. For `cp`
 * only a part for such links is pushed (the table's rule judges the copy).
 *
 * @param program which command's options `words` follow (`link` takes none).
 */
export function judgeLn(words: Word[], cwds: Cwds, ctx: JudgeContext, program: 'ln' | 'link' | 'cp' = 'ln'): void {
  let symbolic = false;
  let hard = program !== 'cp';
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
    if (program === 'link') {
      operands.push(word); // link takes no options: every word is a name
      continue;
    }
    if (name === '--symbolic' || (program === 'cp' && name === '--symbolic-link')) symbolic = true;
    else if (program === 'cp' && name === '--link') hard = true;
    else if (name === '--relative' && program === 'ln') relative = true;
    else if (name === '--no-target-directory') noTargetDirectory = true;
    else if (name === '--target-directory') targetDirectory = value !== undefined ? { ...word, text: value } : (words[++i] ?? null);
    else if (name === '--suffix') {
      if (value === undefined) i++; // its value is the next word
    } else if (!name!.startsWith('--')) {
      for (let j = 1; j < text.length; j++) {
        const letter = text[j];
        if (letter === 's') symbolic = true;
        else if (letter === 'l' && program === 'cp') hard = true;
        else if (letter === 'r' && program === 'ln') relative = true;
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
  const links = symbolic || hard ? linksOut(targets, sources, { symbolic, relative, noTargetDirectory, inside, unknownWord }, cwds) : [];
  if (program === 'cp' && links.length === 0) return; // the table's cp rule judges the copy itself
  const part = writePart(targets.length > 0 ? targets : [unknownPlace(`${program} <link>`)], false, SHELL_REASONS.writes(program));
  if (links.length > 0) {
    part.links = links;
    linkParts.set(part, links);
    ctx.links = [...(ctx.links ?? []), ...links];
  }
  ctx.parts.push(part);
}

/** How `ln`'s links are made: symbolic (else hard), `-r`, `-T`, in a directory named last, with an option word not known. */
interface LinkMode {
  symbolic: boolean;
  relative: boolean;
  noTargetDirectory: boolean;
  inside: boolean;
  unknownWord: boolean;
}

/** The links (canonical, among `targets`) whose sources lead out of their directory (see `judgeLn`). */
function linksOut(targets: string[], sources: Word[], mode: LinkMode, cwds: Cwds): string[] {
  const links: string[] = [];
  for (const link of targets) {
    if (isUnknownPlace(link)) continue;
    // The link's directory: the link itself when it is a directory the link is made in; else its parent (or either).
    // A hard link's name in a directory named last (`ln a d`) is `d/a`: its source is then outside `d`, yet beside `d`, which
    // is what matters (a file already in the link's tree); only a source out of the link's parent counts.
    const dirs = mode.inside ? [link] : mode.noTargetDirectory || !mode.symbolic ? [posix.dirname(link)] : [posix.dirname(link), link];
    // A hard link's source is the file named from the working directory (`relative`): writes through the link change it.
    const fromCwd = mode.relative || !mode.symbolic;
    const out = mode.unknownWord || sources.some((source) => dirs.some((dir) => leadsOut(source, dir, fromCwd, cwds)));
    if (out) links.push(link);
  }
  return links;
}

/** Whether a link in `dir` to `source` leads out of `dir` (not at or under it once resolved; not known counts). */
function leadsOut(source: Word, dir: string, relative: boolean, cwds: Cwds): boolean {
  if (source.text === null) return true;
  const resolved = relative ? resolveTargets(source.text, cwds) : resolveTargets(source.text, [dir === '.' ? '' : dir]);
  return resolved.length === 0 || resolved.some((target) => isUnknownPlace(target) || !isUnder(target, dir));
}

/** Words that ask `mount` for a bind mount: `--bind`, `--rbind`, `-B`, `-R`, or an option list (`-o`) naming `bind`/`rbind`. */
function bindOption(text: string, value: string | null): boolean {
  if (['--bind', '--rbind', '-B', '-R'].includes(text)) return true;
  if (value === null) return false;
  return value.split(',').some((option) => option === 'bind' || option === 'rbind');
}

/** `mount` options that take the next word as their value. */
const MOUNT_VALUE_OPTIONS = new Set([
  '-o',
  '--options',
  '-t',
  '--types',
  '-O',
  '--test-opts',
  '-L',
  '--label',
  '-U',
  '--uuid',
  '-N',
  '--namespace',
  '--source',
  '--target',
]);

/**
 * Notes a bind mount (`mount --bind SRC DST`, `mount -o bind SRC DST`,
 * DESIGN.md §5.5): DST then shows SRC's files, so later writes under DST go
 * elsewhere. Pushes a write to DST with DST in `links` (an option-list word
 * not known, or a DST not known: an unknown place and no link). Nothing for
 * another mount; the caller judges `mount` itself (a write in any case).
 */
export function noteBindMount(words: Word[], cwds: Cwds, ctx: JudgeContext): void {
  let bind = false;
  let unknown = false;
  let target: Word | null = null;
  const operands: Word[] = [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    const text = word.text;
    if (text === null) {
      unknown = true;
      operands.push(word);
      continue;
    }
    const eq = text.startsWith('--') ? text.indexOf('=') : -1;
    const name = eq > 0 ? text.slice(0, eq) : text;
    let value: string | null = eq > 0 ? text.slice(eq + 1) : null;
    if (/^-o./.test(text)) value = text.slice(2);
    else if (MOUNT_VALUE_OPTIONS.has(name) && value === null) {
      const next = words[++i];
      value = next?.text ?? null;
      if (next !== undefined && next.text === null && (name === '-o' || name === '--options')) unknown = true;
    }
    if (name === '--target' && value !== null) target = { ...word, text: value };
    if (bindOption(name, name === '-o' || name === '--options' || /^-o./.test(text) ? value : null)) bind = true;
    if (!text.startsWith('-')) operands.push(word);
  }
  if (!bind && !unknown) return;
  const dst = target ?? operands.at(-1) ?? null;
  const targets = dst === null ? [] : wordTargets(dst, cwds).filter((t) => !isUnknownPlace(t));
  const part = writePart(targets.length > 0 ? targets : [unknownPlace('mount <target>')], false, SHELL_REASONS.writes('mount'));
  if (targets.length > 0) {
    part.links = targets;
    linkParts.set(part, targets);
    ctx.links = [...(ctx.links ?? []), ...targets];
  }
  ctx.parts.push(part);
}

/**
 * Rewrites the targets of the parts of a call that made a link out of its
 * directory: a target at or under such a link, in a part after the one
 * that made it, is a place not known (`?/<target> (through a link)`); in a
 * part before it, a target strictly under it is too. The syntax tree does
 * not always keep bash's order (`ln -s /etc rc && echo x >> rc/a` parses as
 * one redirection around the list, judged before it), and a part before
 * the link is only made stricter; the link's own path there is the link
 * (`cp -l` names it in the table's part, then makes it). Returns the links
 * of the call (for its classification's `links`), none when it made none.
 */
export function applyLinks(parts: Classification[]): string[] {
  const makers: { link: string; at: number }[] = [];
  parts.forEach((part, at) => {
    for (const link of linkParts.get(part) ?? []) makers.push({ link, at });
  });
  if (makers.length === 0) return [];
  parts.forEach((part, at) => {
    // After the part that made it: at or under the link; before it: strictly under (the link's own path is the link).
    const through = (target: string) =>
      makers.some((made) => made.at !== at && isUnder(target, made.link) && !(made.at > at && target === made.link));
    if (part.targets.some(through)) {
      part.targets = part.targets.map((target) => (through(target) ? unknownPlaceOf(target) : target));
    }
  });
  return [...new Set(makers.map((made) => made.link))];
}
