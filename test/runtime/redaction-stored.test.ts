/**
 * What toolgate stores holds what the model was allowed to see: a configured secret or the
 * capability key is redacted from observations, so it must not rest in the store either — not in
 * an idempotency record's result (replays answer from it), an IN_DOUBT reason, a probe's result,
 * or an approval's arguments. The binding stays exact: hashes are of the real arguments.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createCapabilityAuthority } from "../../src/capability/authority.js";
import { keyRingFromMap } from "../../src/capability/keys.js";
import { fingerprint } from "../../src/canonical/key.js";
import { openStore } from "../../src/idempotency/open.js";
import { createMemoryStore } from "../../src/idempotency/stores/memory.js";
import { createMemoryAuditSink } from "../../src/runtime/audit.js";
import { createGateway } from "../../src/runtime/gateway.js";
import { toolResult, type Effect, type ProbeOutcome, type ToolSpec } from "../../src/core/tool.js";

const SECRET = "sk-live-4f9c2b7e1d";
const dir = mkdtempSync(join(tmpdir(), "toolgate-redaction-stored-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function tool(name: string, effect: Effect, handler: ToolSpec["handler"], more: Partial<ToolSpec> = {}): ToolSpec {
  return {
    name,
    description: name,
    inputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: { target: { type: "string" }, token: { type: "string" } },
      required: ["target"],
      additionalProperties: false,
    },
    effect,
    handler,
    ...more,
  } as ToolSpec;
}

let probeResult: ProbeOutcome = { outcome: "unknown" };
const tools = [
  // A write whose result carries the secret in every part the record stores.
  tool("deploy", "write", () =>
    toolResult(
      { log: `deployed with ${SECRET}` },
      {
        text: `used ${SECRET}`,
        state: { token: SECRET },
        next: { arguments: { after: SECRET }, hint: `from ${SECRET}` },
      },
    ),
  ),
  // A write that fails quoting the secret: its IN_DOUBT reason is stored.
  tool("push", "write", () => {
    throw new Error(`upstream refused key ${SECRET}`);
  }),
  // A write left in doubt, then settled by its probe, which finds the result (with the secret).
  tool(
    "sync",
    "write",
    () => {
      throw new Error("connection reset");
    },
    { probe: () => probeResult },
  ),
  // A destructive call: its approval request stores the arguments.
  tool("wipe", "destructive", () => "wiped"),
];

/** Every byte the store's files hold (SQLite, WAL included). */
const storeBytes = (folder: string) =>
  readdirSync(folder)
    .map((f) => readFileSync(join(folder, f)).toString("latin1"))
    .join("");

describe("stored results and approval arguments are redacted", () => {
  it("a SQLite store's files never hold the secret; a replay answers with the redacted result", async () => {
    const folder = mkdtempSync(join(dir, "sqlite-"));
    const store = await openStore(`sqlite:${join(folder, "state.db")}`);
    const audit = createMemoryAuditSink();
    const gateway = createGateway({ tools, store, audit, secrets: [SECRET] });
    const call = (tool: string, args: Record<string, string>, more: Record<string, unknown> = {}) =>
      gateway.call({ trajectory_id: "t", turn: 0, call_id: `${tool}-1`, tool, arguments: args, ...more });

    const first = await call("deploy", { target: "prod" });
    expect(first.ok).toBe(true);
    expect(JSON.stringify(first)).not.toContain(SECRET);
    const again = await call("deploy", { target: "prod" });
    expect(again.replay).toBe(true);
    expect(again.output).toEqual(first.output);
    expect(again.state).toEqual({ token: "[REDACTED]" });

    expect((await call("push", { target: "prod" })).error?.detail?.record_state).toBe("IN_DOUBT");
    expect((await call("sync", { target: "prod" })).error?.detail?.record_state).toBe("IN_DOUBT");
    probeResult = { outcome: "applied", result: { synced: `with ${SECRET}` } };
    const settled = await call("sync", { target: "prod" });
    expect(settled.output).toEqual({ synced: "with [REDACTED]" });

    const wipeArgs = { target: "prod", token: SECRET };
    const asked = await call("wipe", wipeArgs);
    expect(asked.error?.code).toBe("approval_required");
    const [pending] = await gateway.approvals.list({ state: "pending" });
    expect(pending!.arguments).toEqual({ target: "prod", token: "[REDACTED]" });
    // The binding is of the real arguments: approved, the same call runs, a changed one does not.
    expect(pending!.args_hash).toBe(fingerprint(wipeArgs));
    await gateway.approvals.approve(pending!.id, { approver: "alice" });
    expect(
      (await call("wipe", { target: "prod", token: "[REDACTED]" }, { call_id: "wipe-2", approval_id: pending!.id }))
        .error?.code,
    ).toBe("approval_invalid");
    expect((await call("wipe", wipeArgs, { approval_id: pending!.id })).ok).toBe(true);

    const records = await store.records.list({ now: Date.now() });
    expect(records.map((r) => [r.tool, r.state]).sort()).toEqual([
      ["deploy", "COMPLETED"],
      ["push", "IN_DOUBT"],
      ["sync", "COMPLETED"],
      ["wipe", "COMPLETED"],
    ]);
    expect(JSON.stringify(records)).not.toContain(SECRET);
    expect(JSON.stringify(records)).toContain("[REDACTED]");
    await gateway.close();
    expect(storeBytes(folder)).not.toContain(SECRET);
  });

  it("the capability key's text is redacted from an approval's stored arguments too", async () => {
    const rawKey = randomBytes(32).toString("base64");
    const keys = keyRingFromMap({ k1: rawKey }, "test");
    const store = createMemoryStore();
    const gateway = createGateway({ tools, store, keys, audit: false });
    const token = createCapabilityAuthority({ keys, store }).issue({
      rights: ["write"],
      objects: ["tool:wipe"],
      ttl_ms: 60_000,
    });
    const o = await gateway.call({
      trajectory_id: "t",
      turn: 0,
      call_id: "w",
      tool: "wipe",
      arguments: { target: "x", token: rawKey },
      capability: token,
    });
    expect(o.error?.code).toBe("approval_required");
    const [pending] = await gateway.approvals.list({ state: "pending" });
    expect(JSON.stringify(pending)).not.toContain(rawKey);
    expect(pending!.arguments).toEqual({ target: "x", token: "[REDACTED]" });
    await gateway.close();
  });

  it("a result the store cannot hold (not JSON) is still refused as before, not turned into JSON by the redactor", async () => {
    const gateway = createGateway({
      tools: [tool("odd", "write", () => ({ when: new Date(0), n: 10n }))],
      store: createMemoryStore(),
      audit: false,
      secrets: [SECRET],
    });
    const o = await gateway.call({
      trajectory_id: "t",
      turn: 0,
      call_id: "o",
      tool: "odd",
      arguments: { target: "x" },
    });
    expect(o.error?.code).toBe("in_doubt");
    expect(o.error?.detail?.cause).toBe("result_not_json");
    await gateway.close();
  });
});
