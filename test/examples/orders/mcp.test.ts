import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/client/stdio";
import { createCapabilityAuthority } from "../../../src/capability/authority.js";
import { keyRingFromMap } from "../../../src/capability/keys.js";
import { projectRoot } from "../../support/require.js";
import { tempDir } from "../../mcp/support.js";
import { HOUR, ORDERS_KEY } from "./support.js";
import { openOrdersDb } from "../../../examples/orders/db.js";

const MAIN = join(projectRoot, "src/cli/main.ts");
const TSX = import.meta.resolve("tsx");
const CATALOG = join(projectRoot, "examples/orders/index.ts");
const open: Client[] = [];
afterEach(async () => {
  await Promise.allSettled(open.splice(0).map((c) => c.close()));
});

interface Result {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  _meta?: Record<string, unknown>;
}
const textOf = (r: unknown) => (r as Result).content.map((c) => c.text ?? "").join("\n");

// The order assistant served by `toolgate serve --catalog` over stdio and driven by the MCP
// SDK's own client, as an agent host would: search, the ISO-date refusal, a refund proposed,
// approved from the CLI, run once and replayed, and another tenant's order kept out of reach.
describe("the order assistant over MCP (toolgate serve --catalog, SDK client)", { timeout: 180_000 }, () => {
  it("searches, refuses a non-ISO date, runs an approved refund once and hides another tenant's order", async () => {
    const dir = tempDir("orders-mcp");
    const keys = join(dir, "keys.json");
    writeFileSync(keys, JSON.stringify({ k1: ORDERS_KEY }), { mode: 0o600 });
    const store = `sqlite:${join(dir, "state.sqlite")}`;
    const workspace = join(dir, "ws");
    mkdirSync(workspace);
    const authority = createCapabilityAuthority({ keys: keyRingFromMap({ k1: ORDERS_KEY }, "orders test keys", "k1") });
    const acme = authority.issue({
      rights: ["read", "write"],
      objects: ["tenant:acme"],
      args: [{ arg: "amount_cents", max: 5000 }],
      ttl_ms: HOUR,
    });
    const acmeReads = authority.issue({ rights: ["read"], objects: ["tenant:acme"], ttl_ms: HOUR });
    const globex = authority.issue({ rights: ["read"], objects: ["tenant:globex"], ttl_ms: HOUR });

    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        "--import",
        TSX,
        MAIN,
        "serve",
        "--catalog",
        CATALOG,
        "--keys",
        keys,
        "--store",
        store,
        "--workspace",
        workspace,
      ],
      // From the checkout, where tsconfig.json maps the package's name to its sources.
      cwd: projectRoot,
      env: {
        ...getDefaultEnvironment(),
        XDG_STATE_HOME: process.env.XDG_STATE_HOME!,
        XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME!,
        ORDERS_DB: join(dir, "orders.sqlite"),
      },
      stderr: "pipe",
    });
    const client = new Client({ name: "orders-test", version: "1.0.0" });
    open.push(client);
    await client.connect(transport);

    const { tools } = await client.listTools();
    expect(tools.map((t) => [t.name, t.annotations?.readOnlyHint, t.annotations?.destructiveHint])).toEqual([
      ["get_order_details", true, false],
      ["refund_order", false, true],
      ["search_customer_orders", true, false],
    ]);

    const meta = (call_id: string, capability: string, extra: Record<string, unknown> = {}) => ({
      "toolgate/trajectory_id": "t_mcp",
      "toolgate/turn": 1,
      "toolgate/call_id": call_id,
      "toolgate/capability": capability,
      ...extra,
    });
    const search = await client.callTool({
      name: "search_customer_orders",
      arguments: { customer_id: "c_7" },
      _meta: meta("s1", acmeReads),
    });
    expect(search.isError).toBeFalsy();
    expect(textOf(search)).toContain("20 of 143 orders of c_7, newest first");

    const badDate = await client.callTool({
      name: "search_customer_orders",
      arguments: { customer_id: "c_7", since: "2026-2-3" },
      _meta: meta("s2", acmeReads),
    });
    expect(badDate.isError).toBe(true);
    expect(textOf(badDate)).toContain("since must be YYYY-MM-DD; received 2026-2-3; example 2026-03-05");

    const refund = { order_id: "o_1", amount_cents: 1250, reason: "lamp flickers again" };
    const proposed = await client.callTool({ name: "refund_order", arguments: refund, _meta: meta("r1", acme) });
    expect(proposed.isError).toBe(true);
    const approval = /Approval (ap_[A-Za-z0-9_-]+)/.exec(textOf(proposed))?.[1];
    expect(approval).toBeDefined();
    const approved = spawnSync(
      process.execPath,
      ["--import", TSX, MAIN, "approvals", "approve", approval!, "--store", store, "--approver", "support-lead"],
      { cwd: projectRoot, encoding: "utf8", env: process.env },
    );
    expect(approved.status, approved.stderr).toBe(0);

    const ran = await client.callTool({
      name: "refund_order",
      arguments: refund,
      _meta: meta("r1", acme, { "toolgate/approval_id": approval }),
    });
    expect(ran.isError).toBeFalsy();
    expect(textOf(ran)).toMatch(
      /refund r_[0-9a-f]{10} of 12\.50 issued on order o_1; refundable balance now 0\.00; order version 7/,
    );
    const retried = await client.callTool({
      name: "refund_order",
      arguments: refund,
      _meta: meta("r1", acme, { "toolgate/approval_id": approval }),
    });
    expect(textOf(retried)).toContain("replayed");
    expect(textOf(retried)).toContain(/refund (r_[0-9a-f]{10})/.exec(textOf(ran))![1]);

    const details = await client.callTool({
      name: "get_order_details",
      arguments: { order_id: "o_1" },
      _meta: meta("d1", globex),
    });
    expect(details.isError).toBe(true);
    expect(textOf(details)).toContain(
      "order_id not found; search_customer_orders lists a customer's orders; received o_1",
    );
    const db = openOrdersDb(join(dir, "orders.sqlite"));
    expect(db.prepare("SELECT count(*) AS n FROM refunds WHERE idempotency_key IS NOT NULL").get()).toEqual({ n: 1 });
    db.close();
  });
});
