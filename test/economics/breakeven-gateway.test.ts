/** breakevenFromAudit on an audit trail written by the real gateway (not a hand-made one). */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { breakevenFromAudit } from "../../src/economics/breakeven-audit.js";
import { openStore } from "../../src/idempotency/open.js";
import { createGateway } from "../../src/runtime/gateway.js";
import { defineTool } from "../../src/schema/define.js";

describe("breakevenFromAudit on the gateway's own audit trail", () => {
  it("counts the invalid calls, times the repair and measures L_gen from argument_tokens", async () => {
    const auditPath = join(mkdtempSync(join(tmpdir(), "tg-econ-gw-")), "audit.jsonl");
    let now = Date.parse("2026-11-30T10:00:00Z");
    const lookup = defineTool({
      name: "get_order",
      description: "Returns one order by id.",
      input: z.object({ order_id: z.string().max(32).describe("Order id.") }),
      effect: "read",
      handler: ({ order_id }) => ({ order_id, status: "shipped" }),
    });
    const gateway = createGateway({
      tools: [lookup],
      store: await openStore("memory:"),
      audit: auditPath,
      clock: () => now,
    });
    const propose = (trajectory_id: string, turn: number, args: unknown) =>
      gateway.call({ trajectory_id, turn, call_id: `c${turn}`, tool: "get_order", arguments: args });
    // Trajectory a: a malformed call, repaired 1,500 ms later. Trajectory b: two good calls.
    expect((await propose("a", 1, { id: "o_1" })).error?.code).toBe("invalid_arguments");
    now += 1500;
    expect((await propose("a", 2, { order_id: "o_1" })).ok).toBe(true);
    now += 10_000;
    await propose("b", 1, { order_id: "o_2" });
    now += 10_000;
    await propose("b", 2, { order_id: "o_3" });
    await gateway.close();

    const r = breakevenFromAudit(readFileSync(auditPath, "utf8"), { mask_ms: 0.5 });
    expect(r.broken).toEqual([]);
    const t = r.tools[0]!;
    expect([t.tool, t.calls, t.failed, t.t_repair_ms, t.t_repair_source]).toEqual([
      "get_order",
      4,
      1,
      1500,
      "measured",
    ]);
    expect(t.l_gen).toBeGreaterThan(0);
    expect(t.p_break).toBeCloseTo((t.l_gen * 0.5) / 1500, 12);
    // Even 1 of 4 decides here: short calls make p_break tiny (L_gen · 0.5 ms / 1,500 ms < 1 %),
    // and the Wilson interval's low end (4.6 %) is already above it.
    expect(t.p_err.low).toBeGreaterThan(t.p_break!);
    expect(t.recommendation).toBe("constrain");
  });
});
