import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { gatewayFromSettings } from "../../src/mcp/bootstrap.js";
import { readNote } from "./fixtures/notes-catalog.js";
import { tempDir } from "./support.js";

const call = { trajectory_id: "t", turn: 0, call_id: "c1", tool: "note_read", arguments: { name: "long" } };

describe("gatewayFromSettings (the gateway behind serve and proxy)", () => {
  it("defaults to SQLite and an audit trail under the workspace's .toolgate/", async () => {
    const ws = tempDir("boot");
    process.env.NOTES_DIR = ws;
    const gateway = await gatewayFromSettings([readNote], { workspace: ws, env: {} });
    expect((await gateway.call(call)).ok).toBe(true);
    await gateway.close();
    expect(existsSync(join(ws, ".toolgate/state.db"))).toBe(true);
    expect(readFileSync(join(ws, ".toolgate/audit.jsonl"), "utf8")).toContain('"tool":"note_read"');
  });

  it("applies --budget-tokens to observations", async () => {
    const ws = tempDir("boot");
    process.env.NOTES_DIR = ws;
    writeFileSync(join(ws, "long.txt"), "a fairly long line of note text\n".repeat(400));
    const gateway = await gatewayFromSettings([readNote], { workspace: ws, store: "memory:", audit: false, budgetTokens: 200, env: {} });
    const obs = await gateway.call(call);
    await gateway.close();
    expect(obs.truncated?.omitted_tokens).toBeGreaterThan(1000);
  });

  it("requires capabilities when TOOLGATE_KEYS is set, and names a bad key file", async () => {
    const ws = tempDir("boot");
    const gateway = await gatewayFromSettings([readNote], { workspace: ws, store: "memory:", audit: false, env: { TOOLGATE_KEYS: JSON.stringify({ k1: Buffer.alloc(32, 1).toString("base64") }) } });
    const obs = await gateway.call(call);
    await gateway.close();
    expect(obs.error?.code).toBe("denied");
    await expect(gatewayFromSettings([readNote], { workspace: ws, keys: join(ws, "missing.json"), env: {} })).rejects.toThrow(/cannot read key file .*missing\.json: no such file/);
  });
});
