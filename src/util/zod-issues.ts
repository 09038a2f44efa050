/**
 * Turning a zod error into the one issue a person should read: for a union
 * (a catalog rule, a shell table entry), the branch that got furthest into
 * the value names the real mistake, not "no branch matched".
 */
import type { z } from 'zod';

/** An issue's path and message. */
export interface IssueAt {
  path: PropertyKey[];
  message: string;
}

/** The most specific issue of a zod issue: for a union, the branch issue that got deepest into the value. */
export function deepestIssue(issue: z.core.$ZodIssue): IssueAt {
  if (issue.code !== 'invalid_union') return issue;
  let best: IssueAt | undefined;
  for (const inner of issue.errors.flat().map(deepestIssue)) {
    if (best === undefined || inner.path.length > best.path.length) best = inner;
  }
  return best === undefined ? issue : { path: [...issue.path, ...best.path], message: best.message };
}
