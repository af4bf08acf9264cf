/**
 * refund_order: the raw `POST /v1/refund` as a proposed action behind an approval boundary. It
 * is destructive (A3): the first call only proposes the refund and a person approves those exact
 * arguments; the approved call runs once under its idempotency key, which the refund row stores,
 * so a retry gets the stored answer and a call left in doubt by a crash is settled by the probe
 * finding that row. Every check that can refuse runs before anyone is asked: the order is the
 * caller's tenant's, the amount is at most what is left to refund, the reason says something.
 * The observation names the irreversible change: the refund's id, the balance after it and the
 * order's new version.
 */
import { z } from "zod";
import { defineTool, NoEffectError, toolResult, type ProbeOutcome, type ToolContext, type ToolSpec } from "toolgate";
import type { Db } from "./db.js";
import { findOrder, issueRefund, refundByKey, type IssuedRefund } from "./queries.js";
import { callerTenants, money, noTenant, notFound } from "./tenant.js";

const input = z.object({
  order_id: z
    .string()
    .regex(/^o_[0-9]{1,9}$/)
    .describe("The order to refund, e.g. o_1, from search_customer_orders."),
  amount_cents: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .describe("How much to refund, in cents (1250 is 12.50); at most the order's refundable balance."),
  reason: z
    .string()
    .min(3)
    .max(200)
    .describe("Why, in the customer's words or yours, 3–200 characters; kept with the refund."),
});

/** The observation of an issued refund, the same whether it was just issued or found by the probe. */
function issued(r: IssuedRefund) {
  return toolResult(
    { ...r },
    {
      text: `refund ${r.refund_id} of ${money(r.amount_cents)} issued on order ${r.order_id}; refundable balance now ${money(r.refundable_cents)}; order version ${r.version}. This cannot be undone.`,
      state: { refund_id: r.refund_id, order_id: r.order_id, refundable_cents: r.refundable_cents, version: r.version },
    },
  );
}

function keyOf(ctx: ToolContext): string {
  if (!ctx.idempotency_key) throw new NoEffectError("refund_order runs only through a gateway that keys the call");
  return ctx.idempotency_key;
}

export function refundOrder(db: () => Db): ToolSpec {
  return defineTool({
    name: "refund_order",
    title: "Refund part or all of an order",
    description:
      "Propose a refund of an order to the customer's payment method; a person approves it before money moves. Use get_order_details first to see the refundable balance.",
    input,
    effect: "destructive",
    openWorldHint: false,
    timeout_ms: 10_000,
    check: async (args, ctx) => {
      const tenants = await callerTenants(ctx);
      if (tenants.length === 0) return noTenant();
      const order = findOrder(db(), tenants, args.order_id);
      if (!order) return notFound("order_id", args.order_id, "search_customer_orders lists a customer's orders");
      if (args.amount_cents > order.refundable_cents) {
        const left = order.refundable_cents;
        return [
          {
            path: "/amount_cents",
            code: "over_balance",
            message:
              left === 0
                ? `order ${order.id} has nothing left to refund (paid ${money(order.paid_cents)}, refunded ${money(order.refunded_cents)})`
                : `amount_cents is more than order ${order.id} has left to refund: ${left} (${money(left)}) remains`,
            expected: `at most ${left}`,
            received: args.amount_cents,
            ...(left > 0 ? { example: left } : {}),
          },
        ];
      }
      if (args.reason.trim().length < 3)
        return [
          {
            path: "/reason",
            code: "reason_empty",
            message: "reason must say why, in at least 3 characters that are not spaces",
            received: args.reason,
            example: "arrived broken",
          },
        ];
    },
    grant: async (args, ctx) => {
      const order = findOrder(db(), await callerTenants(ctx), args.order_id);
      return { op: "write", target: `tenant:${order?.tenant_id ?? "none"}` };
    },
    handler: async (args, ctx) => {
      const done = issueRefund(db(), {
        tenants: await callerTenants(ctx),
        order_id: args.order_id,
        amount_cents: args.amount_cents,
        reason: args.reason.trim(),
        key: keyOf(ctx),
        now: ctx.now(),
      });
      // Checked again inside the write's transaction: another refund may have landed since the check.
      if (!done.ok && done.why === "not_found")
        throw new NoEffectError(`order_id ${args.order_id} was not found; nothing was refunded`, "not_found");
      if (!done.ok)
        throw new NoEffectError(
          `order ${args.order_id} has ${money(done.refundable_cents)} left to refund now, less than ${money(args.amount_cents)}; nothing was refunded`,
          "over_balance",
        );
      return issued(done);
    },
    // An attempt that died after the write and before its answer left its refund behind, under its key.
    probe: (_args, ctx): ProbeOutcome => {
      const found = refundByKey(db(), keyOf(ctx));
      if (!found) return { outcome: "not_applied" };
      const r = issued(found);
      return { outcome: "applied", result: { output: { ...found }, text: r.text!, state: r.state! } };
    },
  });
}
