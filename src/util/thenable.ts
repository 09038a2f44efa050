/**
 * Telling a result that is not there yet (a promise, or any thenable) from a
 * value, so synchronous paths stay synchronous and asynchronous ones are awaited.
 */

/** A promise or other thenable: an object or function with a callable `then`. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function'
  );
}
