/**
 * The one bounded cache: at most `max` entries, the least recently used dropped first. Every
 * cache of toolgate that keeps answers by key (parsed tokens and targets, piece token ids,
 * quoted property names, argument token counts, field labels, pattern examples, "did you mean"
 * answers, guarded identities, cut parts behind a cursor) is one of these, so none grows without
 * bound and all evict alike.
 *
 * A map from key to entry, the entries on a list from least to most recently used. A hit on an
 * entry that has aged past half the bound (that many entries linked since its own) relinks it at
 * the newest end; a hit on a younger one costs only the lookup, which the token counter's and the
 * canonicaliser's hot paths need. So "recently used" is exact to half the bound: an entry used
 * within the last `max / 2 - 1` insertions and moves is never the one dropped.
 *
 * Values may not be `undefined` (that is what a miss returns): a cache of "no answer" stores `null`.
 */
import { ToolgateError } from "./errors.js";

interface Entry<K, V> {
  key: K;
  value: V;
  /** The cache's link count when this entry was last linked at the newest end. */
  linked: number;
  /** The next less recently used entry, or the head sentinel. */
  older: Entry<K, V>;
  /** The next more recently used entry, or the head sentinel. */
  newer: Entry<K, V>;
}

export class LruCache<K, V extends NonNullable<unknown> | null> {
  readonly max: number;
  readonly #entries = new Map<K, Entry<K, V>>();
  /** A hit relinks an entry only when more entries than this were linked after it. */
  readonly #fresh: number;
  #links = 0;
  /** Sentinel of the circular list: `head.newer` is the least recently used, `head.older` the most. */
  readonly #head: Entry<K, V>;

  constructor(max: number) {
    if (!Number.isSafeInteger(max) || max < 1)
      throw new ToolgateError(
        "invalid_option",
        `a cache's size bound must be a whole number ≥ 1; received ${String(max)}`,
      );
    this.max = max;
    this.#fresh = Math.floor(max / 2);
    const head = { key: undefined, value: undefined, linked: 0, older: null, newer: null } as unknown as Entry<K, V>;
    head.older = head.newer = head;
    this.#head = head;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Whether `key` is held; does not count as a use. */
  has(key: K): boolean {
    return this.#entries.has(key);
  }

  /** The value under `key`, now used (see the header for when that moves it); undefined when absent. */
  get(key: K): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (this.#links - entry.linked > this.#fresh) {
      unlink(entry);
      this.#append(entry);
    }
    return entry.value;
  }

  /** Stores `value` under `key` as the most recently used, dropping the least recently used when full. */
  set(key: K, value: V): void {
    const known = this.#entries.get(key);
    if (known !== undefined) {
      known.value = value;
      unlink(known);
      this.#append(known);
      return;
    }
    if (this.#entries.size >= this.max) {
      const oldest = this.#head.newer;
      unlink(oldest);
      this.#entries.delete(oldest.key);
    }
    const head = this.#head;
    const entry: Entry<K, V> = { key, value, linked: 0, older: head, newer: head };
    this.#append(entry);
    this.#entries.set(key, entry);
  }

  delete(key: K): boolean {
    const entry = this.#entries.get(key);
    if (entry === undefined) return false;
    unlink(entry);
    return this.#entries.delete(key);
  }

  #append(entry: Entry<K, V>): void {
    const head = this.#head;
    const newest = head.older;
    entry.older = newest;
    entry.newer = head;
    entry.linked = ++this.#links;
    newest.newer = entry;
    head.older = entry;
  }
}

function unlink<K, V>(entry: Entry<K, V>): void {
  entry.older.newer = entry.newer;
  entry.newer.older = entry.older;
}

/** `compute` remembered per key in an `LruCache` of `max` entries (a throw is not remembered). */
export function memoize<V extends NonNullable<unknown> | null>(
  max: number,
  compute: (key: string) => V,
): (key: string) => V {
  const cache = new LruCache<string, V>(max);
  return (key) => {
    let value = cache.get(key);
    if (value === undefined) {
      value = compute(key);
      cache.set(key, value);
    }
    return value;
  };
}
