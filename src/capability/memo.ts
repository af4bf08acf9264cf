/**
 * A bounded memo by string key, oldest entry evicted first. Used for parsed tokens and request
 * targets, which recur call after call; it holds parse results only, never a verification.
 */
export function memoByString<T>(limit: number, compute: (key: string) => T): (key: string) => T {
  const entries = new Map<string, T>();
  return (key) => {
    const hit = entries.get(key);
    if (hit !== undefined) return hit;
    const value = compute(key);
    if (entries.size >= limit) entries.delete(entries.keys().next().value!);
    entries.set(key, value);
    return value;
  };
}
