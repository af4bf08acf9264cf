/**
 * TG009 overlapping tools — docs/schemas.md: if two tools could plausibly serve the
 * same user sentence, the model chooses between synonyms; redesign the surface, not the prompt.
 *
 * Each tool becomes a TF-IDF vector over `terms(name + description)` (see terms.ts), with
 * the name's terms counted twice because the name is what the model matches first. IDF is
 * smoothed, idf(t) = ln((1 + K) / (1 + df(t))) + 1, so a term every tool shares still
 * counts a little and a two-tool catalog can be compared at all. A pair whose cosine
 * similarity reaches OVERLAP_THRESHOLD is reported, naming both tools and the terms that
 * contribute most to their similarity.
 */
import type { LintFinding } from "../finding.js";
import { terms } from "../terms.js";

/** Cosine at or above which two tools are reported (chosen so the four coding tools stay below it; see
 * test/schema/lint/overlap.test.ts). */
export const OVERLAP_THRESHOLD = 0.5;

/** The name's weight against the description's in a tool's term counts. */
const NAME_WEIGHT = 2;

/** A lint finding (reported on the first tool of the pair) that also names the pair and how alike they are. */
export interface OverlapFinding extends LintFinding {
  rule: "TG009";
  severity: "warning";
  /** The other tool of the pair. */
  other: string;
  similarity: number;
  shared_terms: string[];
}

export interface OverlapOptions {
  threshold?: number;
}

type Vector = Map<string, number>;

/** What TG009 reads of a tool: its name and description. */
interface NamedTool {
  name: string;
  description: string;
}

function counts(tool: NamedTool): Map<string, number> {
  const c = new Map<string, number>();
  for (const t of terms(tool.name)) c.set(t, (c.get(t) ?? 0) + NAME_WEIGHT);
  for (const t of terms(tool.description ?? "")) c.set(t, (c.get(t) ?? 0) + 1);
  return c;
}

function norm(v: Vector): number {
  let s = 0;
  for (const x of v.values()) s += x * x;
  return Math.sqrt(s);
}

/** Pairwise TF-IDF cosine similarities of a catalog, highest first, with the shared terms. */
export function similarities(
  tools: readonly NamedTool[],
): { a: string; b: string; similarity: number; shared_terms: string[] }[] {
  const tf = tools.map(counts);
  const df = new Map<string, number>();
  for (const c of tf) for (const t of c.keys()) df.set(t, (df.get(t) ?? 0) + 1);
  const k = tools.length;
  const vectors: Vector[] = tf.map((c) => {
    const v: Vector = new Map();
    for (const [t, n] of c) v.set(t, (1 + Math.log(n)) * (Math.log((1 + k) / (1 + df.get(t)!)) + 1));
    return v;
  });
  const norms = vectors.map(norm);
  const pairs: { a: string; b: string; similarity: number; shared_terms: string[] }[] = [];
  for (let i = 0; i < k; i++) {
    for (let j = i + 1; j < k; j++) {
      const vi = vectors[i]!;
      const vj = vectors[j]!;
      const contributions: [string, number][] = [];
      for (const [t, x] of vi) {
        const y = vj.get(t);
        if (y !== undefined) contributions.push([t, x * y]);
      }
      const dot = contributions.reduce((s, [, c]) => s + c, 0);
      const denom = norms[i]! * norms[j]!;
      const similarity = denom === 0 ? 0 : dot / denom;
      contributions.sort((p, q) => q[1] - p[1] || (p[0] < q[0] ? -1 : 1));
      pairs.push({ a: tools[i]!.name, b: tools[j]!.name, similarity, shared_terms: contributions.map(([t]) => t) });
    }
  }
  return pairs.sort((p, q) => q.similarity - p.similarity);
}

/** TG009: one warning per pair of tools whose similarity reaches the threshold, reported on the first of the pair. */
export function overlapFindings(tools: readonly NamedTool[], options: OverlapOptions = {}): OverlapFinding[] {
  const threshold = options.threshold ?? OVERLAP_THRESHOLD;
  return similarities(tools)
    .filter((p) => p.similarity >= threshold)
    .map((p) => {
      const shared = p.shared_terms.slice(0, 6);
      return {
        rule: "TG009" as const,
        severity: "warning" as const,
        tool: p.a,
        pointer: "",
        other: p.b,
        similarity: Math.round(p.similarity * 1000) / 1000,
        shared_terms: shared,
        message: `tools ${p.a} and ${p.b} could serve the same user sentence: similarity ${p.similarity.toFixed(2)} ≥ ${threshold} over name and description (shared terms: ${shared.join(", ")})`,
        fix: `merge ${p.a} and ${p.b} into one tool, or give each a distinct verb and a description that says when to use it instead of the other`,
      };
    });
}

/** TG009 as a catalog rule for the linter's `catalogRules` (rules.ts); a description that is not a string counts as
 * none. */
export const overlapRule = (tools: readonly { name: string; description: unknown }[]): OverlapFinding[] =>
  overlapFindings(
    tools.map((t) => ({ name: t.name, description: typeof t.description === "string" ? t.description : "" })),
  );
