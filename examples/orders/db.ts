/**
 * The order assistant's database: one SQLite file, created and seeded on first open. Every row
 * carries its tenant, and every query in queries.ts names the tenants the caller may see, so a
 * customer or order of another tenant reads exactly like one that does not exist.
 */
import Database from "better-sqlite3";
import { seedRows } from "./seed.js";

export type Db = Database.Database;

const SCHEMA = `
CREATE TABLE tenants (id TEXT PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE customers (
  id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL REFERENCES tenants(id),
  name TEXT NOT NULL, email TEXT NOT NULL, created_at TEXT NOT NULL
);
CREATE TABLE orders (
  id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL REFERENCES tenants(id),
  customer_id TEXT NOT NULL REFERENCES customers(id),
  status TEXT NOT NULL CHECK (status IN ('pending', 'shipped', 'delivered', 'cancelled')),
  placed_at TEXT NOT NULL, total_cents INTEGER NOT NULL, currency TEXT NOT NULL,
  shipping_address TEXT NOT NULL, carrier TEXT, tracking_number TEXT, internal_note TEXT,
  updated_at TEXT NOT NULL, version INTEGER NOT NULL
);
CREATE INDEX orders_by_customer ON orders (customer_id, placed_at DESC, id);
CREATE TABLE line_items (
  order_id TEXT NOT NULL REFERENCES orders(id), line INTEGER NOT NULL,
  sku TEXT NOT NULL, description TEXT NOT NULL, quantity INTEGER NOT NULL, unit_cents INTEGER NOT NULL,
  PRIMARY KEY (order_id, line)
);
CREATE TABLE payments (
  id TEXT PRIMARY KEY, order_id TEXT NOT NULL REFERENCES orders(id),
  method TEXT NOT NULL, amount_cents INTEGER NOT NULL, captured_at TEXT NOT NULL
);
CREATE INDEX payments_by_order ON payments (order_id);
CREATE TABLE refunds (
  id TEXT PRIMARY KEY, order_id TEXT NOT NULL REFERENCES orders(id),
  amount_cents INTEGER NOT NULL CHECK (amount_cents > 0), reason TEXT NOT NULL, created_at TEXT NOT NULL,
  -- The key of the call that issued it: a retried call finds its refund here instead of refunding twice.
  idempotency_key TEXT UNIQUE
);
CREATE INDEX refunds_by_order ON refunds (order_id);
`;

/**
 * Opens the database at `path`, creating and seeding it when it has no tables yet. WAL lets the
 * reads of one process go on while another writes; the busy timeout makes writers take turns.
 */
export function openOrdersDb(path: string): Db {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("busy_timeout = 5000");
  db.pragma("foreign_keys = ON");
  // One writer seeds: BEGIN IMMEDIATE takes the write lock before the emptiness check.
  db.transaction(() => {
    const seeded = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'orders'").get() as { n: number };
    if (seeded.n === 0) seed(db);
  }).immediate();
  return db;
}

function seed(db: Db): void {
  db.exec(SCHEMA);
  const rows = seedRows();
  const insert = (table: string, columns: string[]) =>
    db.prepare(`INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map((c) => "@" + c).join(", ")})`);
  const tables: Array<[string, Array<Record<string, unknown>>]> = [
    ["tenants", rows.tenants],
    ["customers", rows.customers],
    ["orders", rows.orders],
    ["line_items", rows.line_items],
    ["payments", rows.payments],
    ["refunds", rows.refunds],
  ];
  for (const [table, list] of tables) {
    const statement = insert(table, Object.keys(list[0]!));
    for (const row of list) statement.run(row);
  }
}
