import { describe, expect, it } from "vitest";
import { toCallToolResult } from "../../../src/mcp/server/result.js";
import type { Observation } from "../../../src/core/observation.js";
import { textOf } from "../support.js";

const cut: Observation = {
  ok: true,
  tool: "rows",
  call_id: "c1",
  authority: "A0",
  output: { rows: [1, 2, 3] },
  truncated: { omitted_tokens: 900, hint: "narrow the query" },
  text: "ok: rows … [cut]",
};

describe("toCallToolResult", () => {
  it("keeps a cut output out of structuredContent for a tool without an outputSchema, so the budget holds", () => {
    const result = toCallToolResult(cut, false);
    expect(result.structuredContent).toBeUndefined();
    expect(result.content).toEqual([{ type: "text", text: "ok: rows … [cut]" }]);
    expect(result._meta?.["toolgate/observation"]).toMatchObject({ truncated: { omitted_tokens: 900 } });
  });

  it("sends the structured output a declared outputSchema requires when the text was cut, whole when it is no longer than the text", () => {
    expect(toCallToolResult(cut, true).structuredContent).toEqual({ rows: [1, 2, 3] });
  });

  it("cuts a structured output longer than the cut text like the text, still valid JSON, and says so in the text", () => {
    const big: Observation = {
      ...cut,
      output: { content: "x".repeat(90_000), lines: Array.from({ length: 5_000 }, (_, i) => i), total: 5000 },
      text: "t".repeat(8_000),
    };
    const result = toCallToolResult(big, true);
    const structured = result.structuredContent as { content: string; lines: number[]; total: number };
    expect(JSON.stringify(structured).length).toBeLessThanOrEqual(8_000);
    expect(structured.total).toBe(5000);
    expect(structured.content).toMatch(/^x+…\[\d+ characters cut\]$/);
    expect(structured.lines).toEqual(Array.from({ length: structured.lines.length }, (_, i) => i));
    expect(textOf(result).slice(8_000)).toMatchInlineSnapshot(`
      "
      The structured result is cut to the same size as this text: 1 string shortened (ending "…[N characters cut]") and 1 array cut to its first items; the marker above says how to get the rest."
    `);
  });

  it("gives the text only, as isError saying the call succeeded, when the cut structure would break the outputSchema", () => {
    const big: Observation = {
      ...cut,
      authority: "A2",
      output: { content: "x".repeat(90_000) },
      text: "t".repeat(4_000),
    };
    const result = toCallToolResult(big, true, () => false);
    expect([result.isError, result.structuredContent]).toEqual([true, undefined]);
    expect(textOf(result).slice(4_000)).toMatchInlineSnapshot(`
      "
      The result is larger than the observation budget, and cut to fit it would no longer match the outputSchema rows publishes, so only the text above is given and this result is marked isError. The call itself succeeded: it ran and its effect happened, so do not call it again; the marker above says how to get the rest."
    `);
  });

  it("never sends structuredContent with a refusal, and marks it isError", () => {
    const refused: Observation = {
      ok: false,
      tool: "rows",
      call_id: "c2",
      error: { code: "denied", message: "no" },
      text: "error denied: rows",
    };
    const result = toCallToolResult(refused, true);
    expect([result.isError, result.structuredContent]).toEqual([true, undefined]);
  });
});
