/**
 * RFC 8785 canonicalize vs the `canonicalize` npm package and vs JSON.stringify, on the same
 * small, 1 KB and 100 KB objects (goals: ≥ 1.5× the package's throughput, ≤ 3× JSON.stringify's time).
 */
import peer from "canonicalize";
import { canonicalize } from "../src/canonical/jcs.js";
import type { Harness } from "./harness.js";

/** Deterministic pseudo-random numbers, so every run measures the same inputs. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

/** A tool-call-like record: unsorted keys, strings with a little non-ASCII, ints, floats, nesting. */
function item(r: () => number, i: number): Record<string, unknown> {
  return {
    sku: `SKU-${Math.floor(r() * 1e6)}`,
    quantity: 1 + Math.floor(r() * 9),
    unit_price: Math.round(r() * 100_000) / 100,
    title: `Item ${i} — café “special”`,
    tags: ["gift", i % 2 ? "fragile" : "bulk"],
    active: r() > 0.5,
    discount: i % 3 ? null : { code: "SPRING", ratio: r() },
  };
}

/** An object whose JSON is about `bytes` long. */
export function sample(bytes: number, seed = 7): Record<string, unknown> {
  const r = rng(seed);
  const out: Record<string, unknown> = {
    trajectory_id: "traj-8c1f",
    order_id: "o_12345",
    note: "ship to ü-Straße 5",
    items: [] as unknown[],
  };
  const items = out.items as unknown[];
  while (JSON.stringify(out).length < bytes) items.push(item(r, items.length));
  return out;
}

export default async function bench(h: Harness): Promise<void> {
  // [label, input, batch, rounds]. Small inputs: short batches and many rounds, so on a loaded
  // machine the median falls on batches that were not preempted. 100 KB: batches long enough
  // to span several garbage collections, so each side pays for the garbage it makes.
  const sizes: Array<[string, Record<string, unknown>, number, number]> = [
    ["small (~100 B)", { path: "/ws/src/a.ts", force: true, start_line: 10, end_line: 80, mode: "view" }, 500, 151],
    ["1 KB", sample(1024), 40, 151],
    ["100 KB", sample(100 * 1024), 10, 21],
  ];
  for (const [label, input, batch, rounds] of sizes) {
    if (canonicalize(input) !== peer(input)) throw new Error(`outputs differ on ${label}`);
    const bytes = Buffer.byteLength(JSON.stringify(input));
    await h.compare({
      area: "canonical",
      hot_path: `canonicalize ${label}`,
      toolgate: () => canonicalize(input),
      peer: { name: "canonicalize 4.0.0", fn: () => peer(input) },
      goal: { op: "<=", value: 1 / 1.5, label: "≥ 1.5× throughput" },
      batch,
      rounds,
      note: `${bytes} bytes of JSON`,
    });
    await h.compare({
      area: "canonical",
      hot_path: `canonicalize ${label} vs JSON.stringify`,
      toolgate: () => canonicalize(input),
      peer: { name: "JSON.stringify", fn: () => JSON.stringify(input) },
      goal: { op: "<=", value: 3, label: "≤ 3× time" },
      batch,
      rounds,
      note: `${bytes} bytes; JSON.stringify neither sorts keys nor refuses non-JSON`,
    });
  }
}
