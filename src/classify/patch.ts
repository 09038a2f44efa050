/**
 * The files a Codex-style patch changes: the `apply_patch` envelope
 * (`*** Begin Patch` … `*** End Patch`) names each file it adds, updates or
 * deletes on a header line, and an update's new name on a `*** Move to:`
 * line. Those names are the write's targets (DESIGN.md §5.1): a patch is a
 * write of every file it names, and of nothing else.
 *
 * The format is Codex's `apply_patch` grammar (codex-rs/apply-patch: the
 * headers `*** Add File: `, `*** Delete File: `, `*** Update File: `,
 * `*** Move to: `). Only header lines count: a `+`, `-` or space line is
 * the file's content, whatever it says.
 */

/** A patch names at most this many files; past it, the caller fails closed. */
export const MAX_PATCH_FILES = 256;

const BEGIN = '*** Begin Patch';
const HEADERS = ['*** Add File: ', '*** Delete File: ', '*** Update File: ', '*** Move to: '];

/**
 * The file names a patch's headers give, in order, trimmed, each once; null
 * when `text` is not a patch (its first non-empty line is not
 * `*** Begin Patch`), names no file, or names more than `MAX_PATCH_FILES`.
 * A heredoc's own lines around the envelope are not part of it: pass the
 * envelope. Never throws.
 */
export function patchFiles(text: unknown): string[] | null {
  if (typeof text !== 'string') return null;
  const lines = text.split(/\r?\n/);
  const start = lines.findIndex((line) => line.trim() !== '');
  if (start < 0 || lines[start]!.trim() !== BEGIN) return null;
  const files: string[] = [];
  for (const line of lines.slice(start + 1)) {
    const header = HEADERS.find((prefix) => line.startsWith(prefix));
    if (header === undefined) continue;
    const name = line.slice(header.length).trim();
    if (name === '' || files.includes(name)) continue;
    files.push(name);
    if (files.length > MAX_PATCH_FILES) return null;
  }
  return files.length === 0 ? null : files;
}
