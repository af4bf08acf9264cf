/**
 * The rows a new database starts with, the same on every machine (a fixed sequence of
 * hashes): three tenants, 300 customers, about 3,500 orders with line items in every status,
 * payments and refunds. A few rows are placed by hand so the walkthrough in README.md can name
 * them: customer c_7 of acme has 143 orders, the newest of which, o_1, has 12.50 left to refund;
 * c_8 belongs to globex.
 */
import { createHash } from "node:crypto";

export const TENANTS = [
  { id: "acme", name: "Acme Outfitters" },
  { id: "globex", name: "Globex Home" },
  { id: "initech", name: "Initech Office Supply" },
];
const CUSTOMERS = 300;
const FIRST = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Radia", "Niklaus", "Lynn"];
const LAST = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson", "Perlman", "Wirth"];
const PRODUCTS = [
  ["TNT-2P", "Two-person trekking tent, green", 18900],
  ["BAG-SL0", "Down sleeping bag, comfort 0 °C", 24900],
  ["STV-TI", "Titanium camping stove", 5450],
  ["MUG-350", "Insulated mug, 350 ml", 1250],
  ["LMP-HD", "Head lamp, 400 lumen, rechargeable", 3990],
  ["PAD-IN", "Inflatable sleeping pad, regular", 7900],
  ["POL-CF", "Carbon trekking poles, pair", 11900],
  ["FLT-SQ", "Squeeze water filter", 3400],
  ["SOX-MW", "Merino hiking socks, 3 pairs", 2850],
  ["MAP-AL", "Topographic map, Alps north", 1490],
] as const;
const FROM = Date.UTC(2024, 0, 1);
const TO = Date.UTC(2026, 2, 31);

/** A fixed sequence in [0, 1): the n-th value is read from the hash of n, so the seed is the same everywhere. */
function sequence(label: string): () => number {
  let n = 0;
  return () => createHash("sha256").update(`${label} ${n++}`).digest().readUInt32BE(0) / 2 ** 32;
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
const refundId = (seed: string) => "r_" + createHash("sha256").update(seed).digest("hex").slice(0, 10);

export interface SeedRows {
  tenants: typeof TENANTS;
  customers: Array<Record<string, string>>;
  orders: Array<Record<string, string | number | null>>;
  line_items: Array<Record<string, string | number>>;
  payments: Array<Record<string, string | number>>;
  refunds: Array<Record<string, string | number | null>>;
}

export function seedRows(): SeedRows {
  const random = sequence("orders seed");
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const rows: SeedRows = { tenants: TENANTS, customers: [], orders: [], line_items: [], payments: [], refunds: [] };
  let orderNo = 0;
  // c_7 comes first, so its orders are o_1 … o_143, newest first.
  const order7 = [7, ...Array.from({ length: CUSTOMERS }, (_, i) => i + 1).filter((c) => c !== 7)];
  for (const c of order7) {
    const tenant = TENANTS[(c - 1) % TENANTS.length]!.id;
    const name = `${pick(FIRST)} ${pick(LAST)}`;
    rows.customers.push({
      id: `c_${c}`,
      tenant_id: tenant,
      name,
      email: `${name.toLowerCase().replace(" ", ".")}.${c}@example.com`,
      created_at: iso(FROM - Math.floor(random() * 400) * 86_400_000),
    });
    const count = c === 7 ? 143 : 3 + Math.floor(random() * 18);
    const times = Array.from({ length: count }, () => FROM + Math.floor(random() * (TO - FROM)));
    if (c === 7) times.sort((x, y) => y - x);
    for (const placed of times) order(++orderNo, tenant, `c_${c}`, placed);
  }
  return rows;

  function order(n: number, tenant: string, customer: string, placed: number): void {
    const id = `o_${n}`;
    const roll = random();
    const status =
      n === 1
        ? "delivered"
        : roll < 0.15
          ? "pending"
          : roll < 0.35
            ? "shipped"
            : roll < 0.9
              ? "delivered"
              : "cancelled";
    const bulk = random() < 0.02;
    const lines = n === 1 ? 2 : bulk ? 30 + Math.floor(random() * 30) : 1 + Math.floor(random() * 5);
    let total = 0;
    for (let line = 1; line <= lines; line++) {
      const [sku, description, unit] = n === 1 ? PRODUCTS[line === 1 ? 3 : 4]! : pick(PRODUCTS);
      const quantity = n === 1 ? (line === 1 ? 2 : 1) : 1 + Math.floor(random() * (bulk ? 12 : 3));
      total += quantity * unit;
      rows.line_items.push({ order_id: id, line, sku, description, quantity, unit_cents: unit });
    }
    const shipped = status === "shipped" || status === "delivered";
    rows.payments.push({
      id: `p_${n}`,
      order_id: id,
      method: pick(["card", "card", "paypal", "bank transfer"]),
      amount_cents: total,
      captured_at: iso(placed + 60_000),
    });
    let version = 1 + (shipped ? 1 : 0) + (status === "delivered" ? 1 : 0);
    const refund = (amount: number, reason: string) => {
      version += 1;
      rows.refunds.push({
        id: refundId(`seed ${n} ${version}`),
        order_id: id,
        amount_cents: amount,
        reason,
        created_at: iso(placed + 9 * 86_400_000),
        idempotency_key: null,
      });
    };
    if (status === "cancelled") refund(total, "order cancelled before shipping");
    else if (n === 1) {
      // 2 mugs and a lamp, 64.90; one mug refunded twice over in parts, 12.50 of the lamp left.
      refund(2500, "mug arrived dented");
      refund(total - 2500 - 1250, "lamp flickers; partial refund agreed");
      version += 1;
    } else if (status === "delivered" && random() < 0.1)
      refund(Math.ceil(total * (0.1 + random() * 0.4)), "damaged in transit");
    rows.orders.push({
      id,
      tenant_id: tenant,
      customer_id: customer,
      status,
      placed_at: iso(placed),
      total_cents: total,
      currency: "EUR",
      shipping_address: `${1 + Math.floor(random() * 200)} ${pick(["Harbour", "Mill", "Station", "Orchard"])} Road, ${pick(["Leeds", "Lyon", "Graz", "Turin", "Ghent"])}`,
      carrier: shipped ? pick(["DHL", "UPS", "La Poste"]) : null,
      tracking_number: shipped ? `TRK${Math.floor(random() * 1e10)}` : null,
      internal_note: random() < 0.2 ? "customer asked for eco packaging" : null,
      updated_at: iso(placed + 12 * 86_400_000),
      version,
    });
  }
}
