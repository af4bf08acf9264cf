import { describe, expect, it } from "vitest";
import { toCallToolResult } from "../../../src/mcp/server/result.js";
import type { Observation } from "../../../src/core/observation.js";

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

  it("sends the structured output a declared outputSchema requires, even when the text was cut", () => {
    expect(toCallToolResult(cut, true).structuredContent).toEqual({ rows: [1, 2, 3] });
  });

  it("never sends structuredContent with a refusal, and marks it isError", () => {
    const refused: Observation = { ok: false, tool: "rows", call_id: "c2", error: { code: "denied", message: "no" }, text: "error denied: rows" };
    const result = toCallToolResult(refused, true);
    expect([result.isError, result.structuredContent]).toEqual([true, undefined]);
  });
});
