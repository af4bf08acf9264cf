/**
 * The observation budget, measured on this catalog: o200k tokens of one search_customer_orders
 * answer (20 rows and a summary) against the unbounded answer for the same customer — every
 * column of every order, as a `query(q)` tool would return it — and what eight turns of each
 * carry. Run it with `npx tsx examples/orders/figures.ts [CUSTOMER]` (default c_7, 143 orders);
 * it seeds a database in a temporary folder and prints one table.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { createCapabilityAuthority, createGateway } from "toolgate";
import { generateKey, keyRingFromMap } from "toolgate/capability";
import { createMemoryStore } from "toolgate/stores";
import { openOrdersDb } from "./db.js";
import { createOrderTools } from "./index.js";
import { allOrderColumns } from "./queries.js";

const TURNS = 8;

export interface Figures {
  customer_id: string;
  orders: number;
  search_text_tokens: number;
  search_structured_tokens: number;
  unbounded_tokens: number;
  ratio: number;
}

/** Measures one customer's search against the unbounded answer on a fresh database at `path`. */
export async function measure(path: string, customer_id = "c_7"): Promise<Figures> {
  const store = createMemoryStore();
  const authority = createCapabilityAuthority({ keys: keyRingFromMap({ k1: generateKey() }, "figures", "k1"), store });
  const gateway = createGateway({ tools: createOrderTools(path), store, authority, audit: false });
  const db = openOrdersDb(path);
  try {
    const { tenant_id } = db.prepare("SELECT tenant_id FROM customers WHERE id = ?").get(customer_id) as {
      tenant_id: string;
    };
    const capability = authority.issue({ rights: ["read"], objects: [`tenant:${tenant_id}`], ttl_ms: 60_000 });
    const o = await gateway.call({
      trajectory_id: "figures",
      turn: 1,
      call_id: "search",
      tool: "search_customer_orders",
      arguments: { customer_id },
      capability,
    });
    if (!o.ok) throw new Error(o.text);
    const all = allOrderColumns(db, [tenant_id], customer_id);
    const search_text_tokens = countTokens(o.text);
    const unbounded_tokens = countTokens(JSON.stringify(all));
    return {
      customer_id,
      orders: all.length,
      search_text_tokens,
      search_structured_tokens: countTokens(JSON.stringify(o.output)),
      unbounded_tokens,
      ratio: unbounded_tokens / search_text_tokens,
    };
  } finally {
    db.close();
    await gateway.close();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "orders-figures-"));
  try {
    const f = await measure(join(dir, "orders.sqlite"), process.argv[2]);
    const rows: Array<[string, number]> = [
      [`search_customer_orders text (20 rows + summary)`, f.search_text_tokens],
      [`search_customer_orders structured output`, f.search_structured_tokens],
      [`unbounded: every column of all ${f.orders} orders (JSON)`, f.unbounded_tokens],
    ];
    console.log(`o200k tokens for ${f.customer_id}, one turn and ${TURNS} turns:`);
    for (const [what, n] of rows)
      console.log(`  ${what.padEnd(58)} ${String(n).padStart(7)} ${String(n * TURNS).padStart(8)}`);
    console.log(`  unbounded / search text: ${f.ratio.toFixed(1)}×`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
