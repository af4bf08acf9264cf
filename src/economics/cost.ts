/**
 * The token cost of a catalog: docs/economics.md, equation 2:
 * T_catalog = N · K · S for K tools averaging S tokens over a trajectory of N turns.
 */
import { countTokens, type TokenizerName } from "../observation/tokens.js";
import { ToolgateError } from "../core/errors.js";
import { toToolDescriptors, type ToolDescriptor } from "../schema/descriptor.js";

export interface CatalogCostOptions {
  /** N, turns in the trajectory (default 40, as in docs/economics.md). */
  turns?: number;
  tokenizer?: TokenizerName;
  /** Called after each tool is counted (for a progress line on large catalogs). */
  onProgress?: (done: number, total: number) => void;
}

export interface CatalogCost {
  tokenizer: TokenizerName;
  tools: { name: string; tokens: number }[];
  /** K */
  k: number;
  /** S, mean tokens per definition (0 for an empty catalog). */
  mean_s: number;
  /** K · S: definition tokens sent with every turn. */
  per_turn: number;
  /** N */
  turns: number;
  /** N · K · S */
  total: number;
}

/** Default N: the 40-turn trajectory of docs/economics.md. */
export const DEFAULT_TURNS = 40;

function checkTurns(turns: number): void {
  if (!Number.isInteger(turns) || turns < 1) {
    throw new ToolgateError(
      "invalid_input",
      `turns (N) must be an integer ≥ 1; received ${String(turns)}. Pass --turns 40 for the trajectory of docs/economics.md's worked example.`,
    );
  }
}

/**
 * The exact text whose tokens are a tool's definition cost:
 * the compact JSON (no whitespace) of `{name, description, inputSchema}` in that key order —
 * what an MCP client forwards to the model for each tool. Title, annotations and output
 * schema are left out: most clients do not send them to the model.
 */
export function definitionText(tool: ToolDescriptor): string {
  return JSON.stringify({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema });
}

/** Equation 2 (docs/economics.md) over a catalog: each tool's definition counted as `definitionText` encodes. */
export function catalogCost(tools: readonly ToolDescriptor[], options: CatalogCostOptions = {}): CatalogCost {
  const turns = options.turns ?? DEFAULT_TURNS;
  const tokenizer = options.tokenizer ?? "o200k";
  checkTurns(turns);
  // A library caller may hand over tools in any accepted form (OpenAI, Anthropic, a ToolSpec): read each one.
  const counted = toToolDescriptors(tools).map((t, i) => {
    const tokens = countTokens(definitionText(t), tokenizer);
    options.onProgress?.(i + 1, tools.length);
    return { name: t.name, tokens };
  });
  const per_turn = counted.reduce((sum, t) => sum + t.tokens, 0);
  const k = counted.length;
  return { tokenizer, tools: counted, k, mean_s: k === 0 ? 0 : per_turn / k, per_turn, turns, total: turns * per_turn };
}

/** A catalog's shape for equation 2: K tools at S tokens each. */
export interface CatalogShape {
  k: number;
  s: number;
}

export interface ShapeComparison {
  turns: number;
  a: { k: number; s: number; per_turn: number; total: number };
  b: { k: number; s: number; per_turn: number; total: number };
  /** 1 − total_b / total_a: how much less shape b sends (0.964… for the worked example of docs/economics.md). */
  reduction: number;
}

/**
 * Sets two catalog shapes side by side over N turns. The worked example (docs/economics.md): 80 × 350 against
 * 4 × 250 over 40 turns is 1,120,000 against 40,000 tokens, about 96 % less.
 */
export function compareCatalogShapes(a: CatalogShape, b: CatalogShape, turns: number = DEFAULT_TURNS): ShapeComparison {
  checkTurns(turns);
  for (const [label, s] of [
    ["a", a],
    ["b", b],
  ] as const) {
    if (!Number.isInteger(s.k) || s.k < 0)
      throw new ToolgateError("invalid_input", `shape ${label}: k must be an integer ≥ 0; received ${String(s.k)}`);
    if (!Number.isFinite(s.s) || s.s < 0)
      throw new ToolgateError("invalid_input", `shape ${label}: s must be a number ≥ 0; received ${String(s.s)}`);
  }
  const side = (s: CatalogShape) => ({ k: s.k, s: s.s, per_turn: s.k * s.s, total: turns * s.k * s.s });
  const sa = side(a);
  const sb = side(b);
  return { turns, a: sa, b: sb, reduction: sa.total === 0 ? 0 : 1 - sb.total / sa.total };
}
