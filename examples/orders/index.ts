/**
 * The order assistant as a toolgate catalog: a module `toolgate serve --catalog` loads. Its
 * default export is the three tools over one SQLite database, opened (and on first use created
 * and seeded) at the path in ORDERS_DB, else `orders.sqlite` in the current directory, when the
 * first call needs it.
 *
 *   ORDERS_DB=/tmp/orders.sqlite npx toolgate serve --catalog examples/orders/index.ts --keys keys.json
 *
 * `createOrderTools(path)` builds the same tools over another database, for embedding them in
 * a gateway of your own (see README.md beside this file).
 */
import type { ToolSpec } from "toolgate";
import { openOrdersDb, type Db } from "./db.js";
import { getOrderDetails } from "./details.js";
import { refundOrder } from "./refund.js";
import { searchCustomerOrders } from "./search.js";

export const DEFAULT_DB = "orders.sqlite";

/** The catalog over the database at `path`, opened on the first call that needs it. */
export function createOrderTools(path: string): ToolSpec[] {
  let db: Db | null = null;
  const open = () => (db ??= openOrdersDb(path));
  return [searchCustomerOrders(open), getOrderDetails(open), refundOrder(open)];
}

export default createOrderTools(process.env.ORDERS_DB ?? DEFAULT_DB);
