import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createMemoryStore } from "../../src/idempotency/stores/memory.js";
import { createGateway } from "../../src/runtime/gateway.js";
import { defineTool } from "../../src/schema/define.js";

// A read tool whose result JSON cannot carry (a cycle, a BigInt) has run: the observation must
// say so and blame the tool, not tell the model "Nothing was executed; retry later".
describe("an A0/A1 result that is not JSON data", () => {
  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  const tool = (name: string, effect: "read" | "idempotent", value: unknown) =>
    defineTool({
      name,
      description: "Returns one value that JSON cannot carry, on purpose.",
      input: z.object({}),
      effect,
      handler: () => value,
    });
  const tools = [tool("get_cycle", "read", cycle), tool("put_bigint", "idempotent", { n: 10n })];

  it("is a tool failure that says the tool ran and that retrying will fail the same way", async () => {
    const gateway = createGateway({ tools, store: createMemoryStore(), audit: false });
    for (const t of tools) {
      const o = await gateway.call({ trajectory_id: "t", turn: 0, call_id: t.name, tool: t.name, arguments: {} });
      expect(o.error?.code, t.name).toBe("tool_failed");
      expect(o.text).toContain(`${t.name} ran but returned a result that is not JSON data`);
      expect(o.text).not.toContain("Nothing was executed");
    }
    await gateway.close();
  });
});
