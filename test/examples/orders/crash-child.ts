/**
 * A gateway process that dies between the refund's database write and its answer: it re-proposes
 * the approved refund, and once the refund row is committed it prints `written` and waits to be
 * killed. Arguments: the folder holding orders.sqlite and store.sqlite, the approval id, the
 * capability token.
 */
import { join } from "node:path";
import { openStore } from "../../../src/idempotency/open.js";
import { ordersGateway } from "./support.js";
import { CRASH_REFUND } from "./crash-refund.js";

const [dir, approval_id, capability] = process.argv.slice(2) as [string, string, string];
const store = await openStore(`sqlite:${join(dir, "store.sqlite")}`);
const { gateway } = ordersGateway({ dir, store });
const refund = gateway.tools.get("refund_order")!;
const handler = refund.handler;
// The real handler runs to its end (the refund is committed); the answer never leaves this process.
refund.handler = async (args, ctx) => {
  await handler(args, ctx);
  process.stdout.write("written\n");
  return new Promise(() => {});
};
await gateway.call({ ...CRASH_REFUND, approval_id, capability });
