/**
 * An order assistant's search tool, as a toolgate catalog. Serve it over MCP with
 *   npx toolgate serve --catalog examples/orders.ts
 * or run it directly (`npx tsx examples/orders.ts`) for its executable contract test,
 * which tests the boundary before any model is involved: one rejection naming limit, one valid request.
 */
import { pathToFileURL } from "node:url";
import { z } from "zod";
import { createGateway, defineTool, toolResult } from "toolgate";
import { createMemoryStore } from "toolgate/stores";

type Status = "pending" | "shipped" | "delivered" | "cancelled";
interface Order {
  id: string;
  customer_id: string;
  status: Status;
  placed: string;
  total_cents: number;
}

/** A tiny in-memory order book standing in for the shop's database. */
const ORDERS: Order[] = Array.from({ length: 45 }, (_, i) => ({
  id: `o_${String(i + 1).padStart(3, "0")}`,
  customer_id: i % 3 === 0 ? "c_9" : "c_7",
  status: (["pending", "shipped", "delivered", "cancelled"] as const)[i % 4]!,
  placed: `2026-0${1 + (i % 3)}-${String(1 + (i % 28)).padStart(2, "0")}`,
  total_cents: 1200 + 173 * i,
}));

const MAX_ORDERS = 20;

/** The contract of a tool (docs/schemas.md): a distinct verb, a narrow schema, server-side validation, a bounded
 * result. */
export const searchCustomerOrders = defineTool({
  name: "search_customer_orders",
  description:
    "Find at most 20 newest orders for one customer. Use for status, history, or totals; use get_order_details for line items.",
  input: z.object({
    customer_id: z
      .string()
      .regex(/^c_[0-9]{1,12}$/)
      .describe("Customer id, e.g. c_7."),
    status: z
      .enum(["pending", "shipped", "delivered", "cancelled"])
      .optional()
      .describe("Only orders in this status; all statuses when absent."),
    since: z.iso
      .date()
      .optional()
      .describe("ISO-8601 date (YYYY-MM-DD); only orders placed on or after it. All dates when absent."),
  }),
  effect: "read",
  // Semantic validation after the schema (docs/observations.md: ownership, existence and policy are checked after
  // parsing).
  check: (args) => {
    if (!ORDERS.some((o) => o.customer_id === args.customer_id)) {
      return [
        {
          path: "/customer_id",
          code: "not_found",
          message: `customer_id ${args.customer_id} does not exist`,
          example: "c_7",
        },
      ];
    }
  },
  handler: (args) => {
    const matching = ORDERS.filter(
      (o) =>
        o.customer_id === args.customer_id &&
        (!args.status || o.status === args.status) &&
        (!args.since || o.placed >= args.since),
    ).sort((a, b) => b.placed.localeCompare(a.placed) || a.id.localeCompare(b.id));
    const orders = matching.slice(0, MAX_ORDERS);
    const total = matching.reduce((sum, o) => sum + o.total_cents, 0);
    return toolResult(
      { returned: orders.length, matched: matching.length, order: "newest-first", total_cents: total, orders },
      {
        text: `${orders.length} of ${matching.length} orders, newest first; total ${(total / 100).toFixed(2)}.\n${orders.map((o) => `${o.id} ${o.placed} ${o.status} ${(o.total_cents / 100).toFixed(2)}`).join("\n")}`,
      },
    );
  },
});

export default [searchCustomerOrders];

/** The executable contract test, through the whole gateway: one rejection naming limit, one valid call. */
export async function contractTest(): Promise<string[]> {
  const gateway = createGateway({ tools: [searchCustomerOrders], store: createMemoryStore(), audit: false });
  const base = { trajectory_id: "t_contract", turn: 1, tool: "search_customer_orders" };
  const lines: string[] = [];
  const rejected = await gateway.call({ ...base, call_id: "c1", arguments: { customer_id: "c_7", limit: 500 } });
  lines.push(
    rejected.ok
      ? "accepted (unexpected)"
      : `rejected: ${rejected.error?.issues?.[0]?.message ?? rejected.error?.message}`,
  );
  const valid = await gateway.call({ ...base, call_id: "c2", arguments: { customer_id: "c_7", status: "shipped" } });
  lines.push(
    valid.ok
      ? JSON.stringify({ ok: true, returned: (valid.output as { returned: number }).returned, order: "newest-first" })
      : `failed: ${valid.text}`,
  );
  await gateway.close();
  return lines;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  for (const line of await contractTest()) console.log(line);
}
