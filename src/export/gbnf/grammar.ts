/**
 * A llama.cpp GBNF grammar that admits exactly a catalog's tool calls,
 * the grammar behind constrained decoding (docs/economics.md, equation 1: when it pays).
 *
 * A call is `{"name": "<tool>", "arguments": {...}}`, keys in that order; each tool's arguments
 * are its input schema as rules (tool.ts says what is expressed exactly and what is reported as
 * a gap), over the shared JSON rules below.
 *
 * Whitespace between tokens follows llama.cpp's JSON grammars: nothing, one space, or a
 * newline and up to 20 spaces or tabs (unbounded whitespace lets a model loop).
 */
import { ToolgateError } from "../../core/errors.js";
import type { ToolDescriptor } from "../../schema/descriptor.js";
import { literal, ruleSafe } from "./literal.js";
import { ToolGrammar, type GbnfGap } from "./tool.js";

/** Default largest length or item bound written out as repetition (llama.cpp expands `x{0,n}` into n rules). */
export const DEFAULT_MAX_REPEAT = 64;

export interface GbnfOptions {
  /** Largest minLength/maxLength/minItems/maxItems written as repetition; larger bounds are reported. */
  max_repeat?: number;
}

export interface GbnfResult {
  grammar: string;
  /** What the grammar could not express, per tool: the calls it admits are a superset (or, for open objects, a subset)
   * there. */
  gaps: GbnfGap[];
}

const BASE_RULES: [string, string][] = [
  ["ws", `| " " | "\\n" [ \\t]{0,20}`],
  ["char", `[^"\\\\\\x00-\\x1f] | "\\\\" (["\\\\/bfnrt] | "u" [0-9a-fA-F]{4})`],
  ["string", `"\\"" char* "\\""`],
  ["integer", `"-"? ("0" | [1-9] [0-9]*)`],
  ["number", `"-"? ("0" | [1-9] [0-9]*) ("." [0-9]+)? ([eE] [-+]? [0-9]+)?`],
  ["boolean", `"true" | "false"`],
  ["null", `"null"`],
  ["value", `object | array | string | number | boolean | null`],
  ["object", `"{" ws ( string ws ":" ws value ( ws "," ws string ws ":" ws value )* )? ws "}"`],
  ["array", `"[" ws ( value ( ws "," ws value )* )? ws "]"`],
];

/** The grammar for a catalog's calls, and what it could not express. */
export function toGbnf(tools: readonly ToolDescriptor[], options: GbnfOptions = {}): GbnfResult {
  const bound = options.max_repeat ?? DEFAULT_MAX_REPEAT;
  if (!Number.isInteger(bound) || bound < 0)
    throw new ToolgateError("invalid_input", `max_repeat must be an integer ≥ 0; received ${String(bound)}`);
  const gaps: GbnfGap[] = [];
  const taken = new Set<string>(["root", ...BASE_RULES.map(([n]) => n)]);
  const toolRules: [string, string][] = [];
  const calls: string[] = [];
  for (const tool of tools) {
    let prefix = `t-${ruleSafe(tool.name)}`;
    for (let i = 2; taken.has(prefix); i++) prefix = `t-${ruleSafe(tool.name)}-${i}`;
    taken.add(prefix);
    const g = new ToolGrammar(tool, prefix, gaps, taken, bound);
    const args = g.expr(tool.inputSchema, "", "args");
    const argsRule = g.rule(g.name("arguments"), args);
    toolRules.push(
      [
        prefix,
        `"{" ws "\\"name\\"" ws ":" ws ${literal(JSON.stringify(tool.name))} ws "," ws "\\"arguments\\"" ws ":" ws ${argsRule} ws "}"`,
      ],
      ...g.rules,
    );
    calls.push(prefix);
  }
  const lines = [
    `# toolgate: tool calls of a catalog of ${tools.length} tool(s), {"name": ..., "arguments": {...}}`,
    `root ::= ${calls.length ? calls.join(" | ") : `"{" "}"`}`,
    ...toolRules.map(([n, b]) => `${n} ::= ${b}`),
    ...BASE_RULES.map(([n, b]) => `${n} ::= ${b}`),
  ];
  return { grammar: lines.join("\n") + "\n", gaps };
}
