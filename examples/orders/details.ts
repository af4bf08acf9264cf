/**
 * get_order_details: line items, payments and refunds of one order, within the call's token
 * budget. Every line it writes is short and bounded (a description is cut at 48 characters), so
 * how many lines fit is known before any is written; the line items past that are summed in one
 * line instead of dropped in silence.
 */
import { z } from "zod";
import { defineTool, toolResult, type ToolSpec } from "toolgate";
import type { Db } from "./db.js";
import { findOrder, orderParts } from "./queries.js";
import { callerTenants, money, noTenant, notFound } from "./tenant.js";

/** An upper bound on the o200k tokens of one line written below (ids, a 48-character description, amounts). */
const TOKENS_PER_LINE = 40;
/** Refunds shown, newest last; earlier ones are counted. */
const REFUNDS_SHOWN = 5;
/** Room for the header, balance, payment and refund lines, and the gateway's own frame. */
const FIXED_TOKENS = 400;

const cut = (text: string, max: number) => (text.length <= max ? text : text.slice(0, max - 1) + "…");

export function getOrderDetails(db: () => Db): ToolSpec {
  return defineTool({
    name: "get_order_details",
    title: "An order's line items, payments and refunds",
    description: "Show the line items, payments and refundable balance of one order, by its id (o_…).",
    input: z.object({
      order_id: z
        .string()
        .regex(/^o_[0-9]{1,9}$/)
        .describe("The order's id, e.g. o_1, from search_customer_orders."),
    }),
    effect: "read",
    openWorldHint: false,
    check: async (args, ctx) => {
      const tenants = await callerTenants(ctx);
      if (tenants.length === 0) return noTenant();
      if (!findOrder(db(), tenants, args.order_id))
        return notFound("order_id", args.order_id, "search_customer_orders lists a customer's orders");
    },
    grant: async (args, ctx) => {
      const order = findOrder(db(), await callerTenants(ctx), args.order_id);
      return { op: "read", target: `tenant:${order?.tenant_id ?? "none"}` };
    },
    handler: async (args, ctx) => {
      const order = findOrder(db(), await callerTenants(ctx), args.order_id);
      if (!order) throw new Error(`order ${args.order_id} disappeared after its check`);
      const parts = orderParts(db(), order.id);
      const fits = Math.max(1, Math.floor((ctx.budget_tokens - FIXED_TOKENS) / TOKENS_PER_LINE));
      const shown = parts.items.slice(0, fits);
      const rest = parts.items.slice(fits);
      const restCents = rest.reduce((sum, i) => sum + i.quantity * i.unit_cents, 0);
      const lines = [
        `order ${order.id} of ${order.customer_id}, ${order.status}, placed ${order.placed_at.slice(0, 10)}, version ${order.version}`,
        `total ${money(order.total_cents)} EUR; paid ${money(order.paid_cents)}; refunded ${money(order.refunded_cents)}; refundable ${money(order.refundable_cents)}`,
        `line items (${parts.items.length}):`,
        ...shown.map(
          (i) =>
            `  ${i.line}. ${i.sku} ${cut(i.description, 48)} × ${i.quantity} @ ${money(i.unit_cents)} = ${money(i.quantity * i.unit_cents)}`,
        ),
        ...(rest.length > 0 ? [`  … ${rest.length} more line items (${money(restCents)}) not shown`] : []),
        `payments (${parts.payments.length}):`,
        ...parts.payments.map(
          (p) => `  ${p.id} ${p.method} ${money(p.amount_cents)} captured ${p.captured_at.slice(0, 10)}`,
        ),
        `refunds (${parts.refunds.length}):`,
        ...(parts.refunds.length > REFUNDS_SHOWN
          ? [`  … ${parts.refunds.length - REFUNDS_SHOWN} earlier refunds not shown`]
          : []),
        ...parts.refunds
          .slice(-REFUNDS_SHOWN)
          .map((r) => `  ${r.id} ${money(r.amount_cents)} on ${r.created_at.slice(0, 10)}: ${cut(r.reason, 48)}`),
      ];
      return toolResult(
        {
          ...order,
          items: shown,
          items_not_shown: rest.length,
          payments: parts.payments,
          refunds: parts.refunds.slice(-REFUNDS_SHOWN),
        },
        {
          text: lines.join("\n"),
          ...(rest.length > 0 ? { truncated: { omitted: rest.length, unit: "line items" } } : {}),
        },
      );
    },
  });
}
