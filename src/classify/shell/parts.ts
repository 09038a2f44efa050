/**
 * The parts a shell command is judged into (DESIGN.md §5.5): one
 * classification per simple command, redirection, assignment or `cd`, its
 * reason given the `shell: ` prefix here. The call is as bad as its worst
 * part (`combine` in index.ts), and a few parts are marked minor so that
 * another part's reason summarizes the call.
 */
import type { Classification } from '../classification.js';

/** A read part with its targets; `reason` is one of `SHELL_REASONS` (without the `shell: ` prefix). */
export function readPart(targets: string[], reason: string): Classification {
  return { kind: 'read', targets, destructive: false, reason: `shell: ${reason}` };
}

/** Parts whose reason is a poor summary of a call (an assignment, a cd, a test): another part's reason is preferred. */
const minorParts = new WeakSet<Classification>();

/** A read part of a shell-internal step (assignment, cd, test, arithmetic). */
export function minorReadPart(targets: string[], reason: string): Classification {
  const part = readPart(targets, reason);
  minorParts.add(part);
  return part;
}

/** Whether a part was made by `minorReadPart`. */
export function isMinorPart(part: Classification): boolean {
  return minorParts.has(part);
}

/** A write part with its targets; `reason` is one of `SHELL_REASONS` (without the `shell: ` prefix). */
export function writePart(targets: string[], destructive: boolean, reason: string): Classification {
  return { kind: 'write', targets, destructive, reason: `shell: ${reason}` };
}
