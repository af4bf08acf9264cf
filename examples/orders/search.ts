/**
 * search_customer_orders: at most 20 newest orders of one customer, in a stable order (newest
 * first, then id), with the fields a person asks about, a summary line over everything the filter
 * matches and a cursor to the next page. The observation is a budget: 20 short rows and a summary
 * instead of every column of every order.
 */
import { z } from "zod";
import { defineTool, toolResult, type ToolSpec } from "toolgate";
import type { Db } from "./db.js";
import { findCustomer, searchOrders, type OrderRow } from "./queries.js";
import { callerTenants, money, noTenant, notFound } from "./tenant.js";

export const PAGE = 20;
/** A cursor names the last row shown, in the stable order: its timestamp and id. */
const CURSOR = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)~(o_[0-9]{1,9})$/;

const input = z.object({
  customer_id: z
    .string()
    .regex(/^c_[0-9]{1,9}$/)
    .describe("The customer's id, e.g. c_7."),
  status: z
    .enum(["pending", "shipped", "delivered", "cancelled"])
    .optional()
    .describe("Only orders in this status; every status when absent."),
  since: z.iso
    .date()
    .optional()
    .describe("ISO-8601 date (YYYY-MM-DD): only orders placed on or after it; every date when absent."),
  cursor: z
    .string()
    .regex(CURSOR)
    .optional()
    .describe(
      "The next page: pass the cursor the previous page ended with, and the same filters; first page when absent.",
    ),
});

const row = (o: OrderRow) =>
  `${o.id}  ${o.placed_at.slice(0, 10)}  ${o.status.padEnd(9)}  ${money(o.total_cents).padStart(9)}  ${o.items} item${o.items === 1 ? "" : "s"}`;

export function searchCustomerOrders(db: () => Db): ToolSpec {
  return defineTool({
    name: "search_customer_orders",
    title: "Search a customer's orders",
    description:
      "Find at most 20 newest orders for one customer. Use for status, history, or totals; use get_order_details for line items.",
    input,
    effect: "read",
    openWorldHint: false,
    check: async (args, ctx) => {
      const tenants = await callerTenants(ctx);
      if (tenants.length === 0) return noTenant();
      if (!findCustomer(db(), tenants, args.customer_id))
        return notFound("customer_id", args.customer_id, "ask the user for the customer id of their account");
    },
    // The tenant whose data the call reads: the customer's, which the check found among the caller's.
    grant: async (args, ctx) => {
      const customer = findCustomer(db(), await callerTenants(ctx), args.customer_id);
      return { op: "read", target: `tenant:${customer?.tenant_id ?? "none"}` };
    },
    handler: async (args, ctx) => {
      const tenants = await callerTenants(ctx);
      const at = args.cursor ? CURSOR.exec(args.cursor) : null;
      const found = searchOrders(db(), {
        tenants,
        customer_id: args.customer_id,
        ...(args.status ? { status: args.status } : {}),
        ...(args.since ? { since: args.since } : {}),
        ...(at ? { after: { placed_at: at[1]!, id: at[2]! } } : {}),
        // One row more than a page says whether a next page exists.
        limit: PAGE + 1,
      });
      const { matched, total_cents } = found;
      const rows = found.rows.slice(0, PAGE);
      const last = rows.at(-1);
      const cursor = found.rows.length > PAGE && last ? `${last.placed_at}~${last.id}` : null;
      const filters = [args.status, args.since && `since ${args.since}`].filter(Boolean).join(", ");
      const summary =
        `${rows.length} of ${matched} ${filters ? filters + " " : ""}orders of ${args.customer_id}, newest first` +
        `${at ? ` after ${at[2]}` : ""}; total ${money(total_cents)} EUR over all ${matched}.`;
      return toolResult(
        {
          customer_id: args.customer_id,
          returned: rows.length,
          matched,
          total_cents,
          order: "newest-first",
          orders: rows,
          cursor,
        },
        {
          text: [
            summary,
            ...rows.map(row),
            cursor ? `More: call again with cursor ${cursor}.` : "No more orders.",
          ].join("\n"),
          ...(cursor ? { next: { arguments: { ...args, cursor }, hint: `the next ${PAGE} orders` } } : {}),
        },
      );
    },
  });
}
