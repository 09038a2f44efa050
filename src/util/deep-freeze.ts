/**
 * Freezing a value and everything it holds, so a table or an option object
 * shared by every session cannot be changed behind the gate's back.
 */

/**
 * Freezes `value` and, recursively, every object it holds (own enumerable
 * values), then returns it. Safe on cycles and shared parts (each object is
 * visited once), and it also freezes what an already frozen object holds.
 */
export function deepFreeze<T>(value: T, seen: WeakSet<object> = new WeakSet()): T {
  if (typeof value !== 'object' || value === null || seen.has(value)) return value;
  seen.add(value);
  for (const inner of Object.values(value)) deepFreeze(inner, seen);
  return Object.freeze(value);
}
