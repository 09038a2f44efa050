/**
 * Reading untrusted JSON-like values without being fooled by their
 * prototype: a key counts only when the object itself holds it, so a
 * `__proto__` or an inherited `toString` never reads as data.
 */

/** A plain record: a non-null object that is not an array. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The object's own property `key`; undefined when it holds none (an
 * inherited property reads as absent). May run a getter: use `ownSafely` on
 * values a caller could have built to throw.
 */
export function own(record: object, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(record, key) ? (record as Record<string, unknown>)[key] : undefined;
}

/**
 * The own *data* property `key` of a plain record, read without running any
 * code of the value's: undefined when the value is not a record, holds no such
 * property, holds an accessor, or is a proxy whose trap throws. For results
 * whose reading must never fail or answer twice differently (self-verification).
 */
export function ownSafely(value: unknown, key: string): unknown {
  if (!isRecord(value)) return undefined;
  try {
    const descriptor = Object.getOwnPropertyDescriptor(value, key);
    return descriptor !== undefined && 'value' in descriptor ? descriptor.value : undefined;
  } catch {
    return undefined; // a proxy trap that throws reads as absent
  }
}
