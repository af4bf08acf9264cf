import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { measure } from "../../../examples/orders/figures.js";
import { tempDir } from "../../mcp/support.js";

// The observation budget on a real customer: one page of 20 rows and a summary costs a small
// fraction of every column of every order of the same customer.
describe("examples/orders/figures.ts", () => {
  it("measures a 20-row search of c_7 at under a tenth of the unbounded answer for its 143 orders", async () => {
    const f = await measure(join(tempDir("orders-figures"), "orders.sqlite"));
    expect(f.orders).toBe(143);
    expect(f.search_text_tokens).toBeGreaterThan(0);
    expect(f.search_text_tokens * 10).toBeLessThan(f.unbounded_tokens);
    expect(f.ratio).toBeCloseTo(f.unbounded_tokens / f.search_text_tokens);
  });
});
