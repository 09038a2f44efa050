/**
 * A bounded memo, shared by the shell and SQL classifiers: a command or
 * query seen again (in a session, or across an audit's transcripts) is not
 * parsed again. Classification is pure, so an entry never goes stale; the
 * bound keeps memory flat (least recently used entries are dropped first),
 * and the counters say how well it serves (`bench/run.ts` reports them).
 */

/** A memo's counters since it was created or last cleared: look-ups answered from it, look-ups that missed, entries kept. */
export interface MemoStats {
  hits: number;
  misses: number;
  size: number;
}

/** A bounded map from string keys to values, the least recently used entry dropped first. */
export interface Memo<V> {
  /** The value kept for `key`, which becomes the most recently used, or undefined; counts a hit or a miss. */
  get(key: string): V | undefined;
  /** Keeps `value` for `key`; past the capacity, the least recently used entry is dropped. */
  set(key: string, value: V): void;
  /** The counters since the memo was created or last cleared. */
  stats(): MemoStats;
  /** Drops every entry and zeroes the counters. */
  clear(): void;
}

/** `Memo` over a `Map`, whose insertion order is the order of use: a hit moves its entry to the end. */
class LruMemo<V> implements Memo<V> {
  private readonly entries = new Map<string, V>();
  private hits = 0;
  private misses = 0;

  constructor(private readonly capacity: number) {}

  get(key: string): V | undefined {
    const cached = this.entries.get(key);
    if (cached === undefined) {
      this.misses += 1;
      return undefined;
    }
    this.hits += 1;
    this.entries.delete(key);
    this.entries.set(key, cached);
    return cached;
  }

  set(key: string, value: V): void {
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }

  stats(): MemoStats {
    return { hits: this.hits, misses: this.misses, size: this.entries.size };
  }

  clear(): void {
    this.entries.clear();
    this.hits = 0;
    this.misses = 0;
  }
}

/**
 * A memo keeping at most `capacity` entries.
 *
 * @throws RangeError when `capacity` is not a positive integer.
 */
export function createMemo<V>(capacity: number): Memo<V> {
  if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`a memo's capacity must be a positive integer, not ${capacity}`);
  return new LruMemo<V>(capacity);
}
