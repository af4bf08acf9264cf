/**
 * Every read and the one write of the order assistant, in SQL. Each query takes the tenants the
 * caller's capability names and filters by them in SQL, so "not yours" and "does not exist" are
 * the same empty answer: no code path can tell them apart.
 */
import { createHash } from "node:crypto";
import type { Db } from "./db.js";

export type Status = "pending" | "shipped" | "delivered" | "cancelled";

/** An order as the search shows it: the fields a person asks about, nothing internal. */
export interface OrderRow {
  id: string;
  placed_at: string;
  status: Status;
  total_cents: number;
  items: number;
}

export interface SearchQuery {
  tenants: readonly string[];
  customer_id: string;
  status?: Status;
  since?: string;
  /** Continue after this row of the stable order (newest first, then id). */
  after?: { placed_at: string; id: string };
  limit: number;
}

const inTenants = (tenants: readonly string[]) => `tenant_id IN (${tenants.map(() => "?").join(", ")})`;

/** The customer when it belongs to one of `tenants`; undefined otherwise. */
export function findCustomer(
  db: Db,
  tenants: readonly string[],
  id: string,
): { id: string; tenant_id: string; name: string } | undefined {
  return db
    .prepare(`SELECT id, tenant_id, name FROM customers WHERE id = ? AND ${inTenants(tenants)}`)
    .get(id, ...tenants) as { id: string; tenant_id: string; name: string } | undefined;
}

/** One page of a customer's orders, and how many orders and how much money the whole filter matches. */
export function searchOrders(db: Db, q: SearchQuery): { rows: OrderRow[]; matched: number; total_cents: number } {
  const where = [`customer_id = ?`, inTenants(q.tenants)];
  const params: Array<string | number> = [q.customer_id, ...q.tenants];
  if (q.status) {
    where.push("status = ?");
    params.push(q.status);
  }
  // placed_at is an ISO timestamp, and a date sorts before every timestamp of its own day.
  if (q.since) {
    where.push("placed_at >= ?");
    params.push(q.since);
  }
  const filter = where.join(" AND ");
  const summary = db
    .prepare(`SELECT count(*) AS matched, coalesce(sum(total_cents), 0) AS total_cents FROM orders WHERE ${filter}`)
    .get(...params) as { matched: number; total_cents: number };
  const page = q.after ? ` AND (placed_at < ? OR (placed_at = ? AND id > ?))` : "";
  const pageParams = q.after ? [q.after.placed_at, q.after.placed_at, q.after.id] : [];
  const rows = db
    .prepare(
      `SELECT id, placed_at, status, total_cents, (SELECT count(*) FROM line_items l WHERE l.order_id = orders.id) AS items
       FROM orders WHERE ${filter}${page} ORDER BY placed_at DESC, id ASC LIMIT ?`,
    )
    .all(...params, ...pageParams, q.limit) as OrderRow[];
  return { rows, matched: summary.matched, total_cents: summary.total_cents };
}

/** Every column of every order of a customer: what an unbounded `query(q)` tool would hand a model. */
export function allOrderColumns(db: Db, tenants: readonly string[], customer_id: string): unknown[] {
  return db
    .prepare(`SELECT * FROM orders WHERE customer_id = ? AND ${inTenants(tenants)} ORDER BY placed_at DESC, id ASC`)
    .all(customer_id, ...tenants);
}

export interface OrderBalance {
  id: string;
  tenant_id: string;
  customer_id: string;
  status: Status;
  placed_at: string;
  total_cents: number;
  version: number;
  paid_cents: number;
  refunded_cents: number;
  /** What may still be refunded: paid less refunded. */
  refundable_cents: number;
}

/** The order with what was paid and refunded, when it belongs to one of `tenants`. */
export function findOrder(db: Db, tenants: readonly string[], id: string): OrderBalance | undefined {
  return db
    .prepare(
      `SELECT id, tenant_id, customer_id, status, placed_at, total_cents, version,
         (SELECT coalesce(sum(amount_cents), 0) FROM payments p WHERE p.order_id = o.id) AS paid_cents,
         (SELECT coalesce(sum(amount_cents), 0) FROM refunds r WHERE r.order_id = o.id) AS refunded_cents,
         (SELECT coalesce(sum(amount_cents), 0) FROM payments p WHERE p.order_id = o.id)
           - (SELECT coalesce(sum(amount_cents), 0) FROM refunds r WHERE r.order_id = o.id) AS refundable_cents
       FROM orders o WHERE id = ? AND ${inTenants(tenants)}`,
    )
    .get(id, ...tenants) as OrderBalance | undefined;
}

export interface OrderParts {
  items: Array<{ line: number; sku: string; description: string; quantity: number; unit_cents: number }>;
  payments: Array<{ id: string; method: string; amount_cents: number; captured_at: string }>;
  refunds: Array<{ id: string; amount_cents: number; reason: string; created_at: string }>;
}

/** Line items, payments and refunds of an order the caller already found (`findOrder`). */
export function orderParts(db: Db, order_id: string): OrderParts {
  return {
    items: db
      .prepare("SELECT line, sku, description, quantity, unit_cents FROM line_items WHERE order_id = ? ORDER BY line")
      .all(order_id) as OrderParts["items"],
    payments: db
      .prepare("SELECT id, method, amount_cents, captured_at FROM payments WHERE order_id = ? ORDER BY captured_at, id")
      .all(order_id) as OrderParts["payments"],
    refunds: db
      .prepare("SELECT id, amount_cents, reason, created_at FROM refunds WHERE order_id = ? ORDER BY created_at, id")
      .all(order_id) as OrderParts["refunds"],
  };
}

export interface IssuedRefund {
  refund_id: string;
  order_id: string;
  amount_cents: number;
  refundable_cents: number;
  version: number;
  created_at: string;
}

export type RefundAttempt =
  | ({ ok: true } & IssuedRefund)
  | { ok: false; why: "not_found" }
  | { ok: false; why: "over_balance"; refundable_cents: number };

/**
 * Issues a refund in one transaction that holds the write lock from its first read: the balance
 * it checks is the balance it changes, whoever else refunds the same order at once. The refund
 * row carries the call's idempotency key, which `refundByKey` finds again.
 */
export function issueRefund(
  db: Db,
  r: { tenants: readonly string[]; order_id: string; amount_cents: number; reason: string; key: string; now: number },
): RefundAttempt {
  return db
    .transaction((): RefundAttempt => {
      const order = findOrder(db, r.tenants, r.order_id);
      if (!order) return { ok: false, why: "not_found" };
      if (r.amount_cents > order.refundable_cents)
        return { ok: false, why: "over_balance", refundable_cents: order.refundable_cents };
      const refund_id = "r_" + createHash("sha256").update(r.key).digest("hex").slice(0, 10);
      const created_at = new Date(r.now).toISOString();
      db.prepare(
        "INSERT INTO refunds (id, order_id, amount_cents, reason, created_at, idempotency_key) VALUES (?, ?, ?, ?, ?, ?)",
      ).run(refund_id, r.order_id, r.amount_cents, r.reason, created_at, r.key);
      db.prepare("UPDATE orders SET version = version + 1, updated_at = ? WHERE id = ?").run(created_at, r.order_id);
      return {
        ok: true,
        refund_id,
        order_id: r.order_id,
        amount_cents: r.amount_cents,
        refundable_cents: order.refundable_cents - r.amount_cents,
        version: order.version + 1,
        created_at,
      };
    })
    .immediate();
}

/**
 * The refund a call with `key` issued, with the order's state right after it (balance and
 * version as of that refund, not as of now: later refunds do not change what this call did).
 * Only refunds change an order here once it is placed, so its version then is now's less one per
 * later refund.
 */
export function refundByKey(db: Db, key: string): IssuedRefund | undefined {
  const found = db
    .prepare("SELECT id, order_id, amount_cents, created_at, rowid AS seq FROM refunds WHERE idempotency_key = ?")
    .get(key) as { id: string; order_id: string; amount_cents: number; created_at: string; seq: number } | undefined;
  if (!found) return undefined;
  const after = db
    .prepare(
      `SELECT (SELECT coalesce(sum(amount_cents), 0) FROM payments WHERE order_id = ?)
         - (SELECT coalesce(sum(amount_cents), 0) FROM refunds WHERE order_id = ? AND rowid <= ?) AS refundable_cents`,
    )
    .get(found.order_id, found.order_id, found.seq) as { refundable_cents: number };
  const later = db
    .prepare("SELECT count(*) AS n FROM refunds WHERE order_id = ? AND rowid > ?")
    .get(found.order_id, found.seq) as { n: number };
  const { version } = db.prepare("SELECT version FROM orders WHERE id = ?").get(found.order_id) as { version: number };
  return {
    refund_id: found.id,
    order_id: found.order_id,
    amount_cents: found.amount_cents,
    refundable_cents: after.refundable_cents,
    version: version - later.n,
    created_at: found.created_at,
  };
}
