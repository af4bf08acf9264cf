import { describe, expect, it } from "vitest";
import { contractTest, searchCustomerOrders } from "../../examples/orders.js";
import { lintTool } from "../../src/index.js";

describe("examples/orders.ts (the order assistant)", () => {
  it("passes its executable contract test: one rejection naming limit, one valid request", async () => {
    expect(await contractTest()).toMatchInlineSnapshot(`
      [
        "rejected: unknown field: limit; allowed: customer_id, status, since",
        "{"ok":true,"returned":8,"order":"newest-first"}",
      ]
    `);
  });

  it("publishes a tool with no error-level finding; optional filters are TG002 warnings, as the rule says", () => {
    const findings = lintTool(searchCustomerOrders);
    expect(findings.filter((f) => f.severity === "error")).toEqual([]);
    expect(findings.map((f) => `${f.rule} ${f.pointer}`)).toEqual([
      "TG002 /inputSchema/properties/status",
      "TG002 /inputSchema/properties/since",
    ]);
  });
});
