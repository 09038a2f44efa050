/**
 * The bounds on the shell classifier's work (DESIGN.md §5.5): how long a
 * command, how deep a tree and how many parts are judged, and the errors
 * thrown inside the walk past them, which the entry point turns into a write.
 * Every file of the judge checks them, so they sit below all of it.
 */

/** The longest command (UTF-8 bytes) that is parsed; a longer one is a write without parsing. */
export const MAX_SHELL_COMMAND_BYTES = 65_536;

/** The most words an argv array may have. */
export const MAX_SHELL_ARGV_WORDS = 4_096;

/** How deep `bash -c '...'` and `eval` strings are parsed again; deeper is a write. */
export const MAX_SHELL_NESTING = 8;

/** How deep the syntax tree is followed (nested substitutions, groups, control flow); deeper is a write. */
export const MAX_SHELL_NODE_DEPTH = 150;

/**
 * The work budget of one call: the most statements, words and expression
 * nodes judged (bash -c strings included); more is a write (`too-complex`),
 * so the work stays bounded.
 */
export const MAX_SHELL_WORK = 10_000;

/**
 * The longest working directory (characters) a call is judged in: Linux's
 * PATH_MAX. Every relative path is joined to it, so a longer one would
 * multiply the work by its length; it is a write (`too-complex`).
 */
export const MAX_SHELL_CWD_LENGTH = 4_096;

/**
 * A bound on tree-sitter-bash's work on here-document lines: it reads a
 * line holding expansions in time that grows with the expansions times the
 * line's length, so a script with a here-document and a line whose
 * `$`-and-backtick count times its length passes this is a write
 * (`too-complex`) without being parsed (a 2 KB line with 100 expansions
 * costs 200,000; 3,500 substitutions on a 44 KB line, 150 million, took a
 * second).
 */
export const MAX_HEREDOC_LINE_COST = 5_000_000;

/** Thrown inside the walk when the tree is nested more than `MAX_SHELL_NODE_DEPTH` deep; turned into a write. */
export class TooDeep extends Error {}

/** Thrown inside the walk when a call holds more than `MAX_SHELL_WORK` statements and words; turned into a write. */
export class TooBig extends Error {}
