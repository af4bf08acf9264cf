/**
 * A structured result cut to a size, still valid JSON and still the same shape: a transport that
 * hands a tool's structured output to a model next to the cut text must not hand it the whole
 * output (docs/observations.md, "Observation is a budget"). The longest string or array is
 * shortened first, again and again, until the compact JSON fits: a string keeps its head and ends
 * with a marker naming how many characters were cut, an array keeps its first items (an array's
 * items are typed, so no marker item is added). Objects keep every key.
 */
import type { JsonValue } from "../core/json.js";

export interface BoundedJson {
  value: JsonValue;
  /** What was cut, for a sentence the model reads; empty when the value fitted. */
  cuts: { strings: number; arrays: number; characters: number };
}

/** Shortest string worth cutting: a cut one ends with a marker of about this length. */
const MIN_CUT_STRING = 48;
/** Rounds of cutting at most: each halves the largest part, so a few dozen suffice for any shape. */
const MAX_ROUNDS = 400;

type Path = (string | number)[];

/** `value` cut so that its compact JSON has at most `maxChars` characters, or null when no cut of strings and arrays
 * gets it there. */
export function boundJson(value: JsonValue, maxChars: number): BoundedJson | null {
  const cuts = { strings: 0, arrays: 0, characters: 0 };
  const initial = JSON.stringify(value).length;
  if (initial <= maxChars) return { value, cuts };
  let size = initial;
  let current: JsonValue = structuredClone(value);
  /** Original length of each string cut so far, by its path: the marker counts from it. */
  const originals = new Map<string, number>();
  const cutArrays = new Set<string>();
  for (let round = 0; round < MAX_ROUNDS && size > maxChars; round++) {
    const largest = largestPart(current);
    if (!largest) return null;
    const key = JSON.stringify(largest.path);
    const over = size - maxChars;
    current = replaceAt(current, largest.path, (part) => {
      if (typeof part === "string") {
        if (!originals.has(key)) {
          originals.set(key, part.length);
          cuts.strings++;
        }
        const kept = keptOf(part);
        const keep = Math.max(Math.ceil(kept / 2), kept - over);
        return `${part.slice(0, keep)}…[${originals.get(key)! - keep} characters cut]`;
      }
      if (!cutArrays.has(key)) {
        cutArrays.add(key);
        cuts.arrays++;
      }
      const items = part as JsonValue[];
      return items.slice(
        0,
        Math.max(
          Math.ceil(items.length / 2),
          items.length - Math.ceil((over / JSON.stringify(items).length) * items.length),
        ),
      );
    });
    size = JSON.stringify(current).length;
  }
  cuts.characters = initial - size;
  return size <= maxChars ? { value: current, cuts } : null;
}

/** The characters of a (possibly already cut) string that are the original's, before its marker. */
function keptOf(s: string): number {
  const m = /…\[\d+ characters cut\]$/.exec(s);
  return m ? s.length - m[0].length : s.length;
}

/** The string or array whose JSON is longest, among those that can still be cut. */
function largestPart(root: JsonValue): { path: Path; size: number } | null {
  let best: { path: Path; size: number } | null = null;
  const stack: { v: JsonValue; path: Path }[] = [{ v: root, path: [] }];
  while (stack.length > 0) {
    const { v, path } = stack.pop()!;
    if (typeof v === "string") {
      if (keptOf(v) >= MIN_CUT_STRING && (!best || v.length > best.size)) best = { path, size: v.length };
    } else if (Array.isArray(v)) {
      const size = JSON.stringify(v).length;
      if (v.length > 1 && (!best || size > best.size)) best = { path, size };
      v.forEach((item, i) => stack.push({ v: item, path: [...path, i] }));
    } else if (v !== null && typeof v === "object") {
      for (const [k, item] of Object.entries(v)) stack.push({ v: item, path: [...path, k] });
    }
  }
  return best;
}

function replaceAt(root: JsonValue, path: Path, f: (part: JsonValue) => JsonValue): JsonValue {
  if (path.length === 0) return f(root);
  let parent = root as Record<string | number, JsonValue>;
  for (const step of path.slice(0, -1)) parent = parent[step] as Record<string | number, JsonValue>;
  const last = path[path.length - 1]!;
  parent[last] = f(parent[last]!);
  return root;
}
