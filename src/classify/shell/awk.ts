/**
 * A checker of awk programs, so that `awk '{print $1}' f` is a read
 * (DESIGN.md §5.5): a program only prints unless it can run a command or
 * write a file. Deliberately coarse, on the text rather than a parse.
 */

/**
 * Whether an awk program only prints: no `system`, no pipe (`|`, `|&`; `||`
 * is fine), no `@` (gawk's indirect calls, `@load`), and no `>` after a
 * `print`/`printf` (an output redirection; a comparison there counts too).
 * Deliberately coarse: it may call a read-only program a write, never the
 * other way round.
 */
export function isSafeAwkProgram(program: string): boolean {
  if (/system|@/.test(program)) return false;
  if (program.replace(/\|\|/g, '').includes('|')) return false;
  const print = program.search(/print/);
  return print === -1 || !program.includes('>', print);
}
