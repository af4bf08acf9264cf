import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { gatewayFromSettings } from "../../../src/cli/host/gateway-settings.js";
import { defaultStateDir } from "../../../src/state/location.js";
import { readNote } from "../../mcp/fixtures/notes-catalog.js";
import { tempDir } from "../../mcp/support.js";

const call = { trajectory_id: "t", turn: 0, call_id: "c1", tool: "note_read", arguments: { name: "long" } };

describe("gatewayFromSettings (the gateway behind serve and proxy)", () => {
  it("defaults to SQLite and an audit trail in the workspace's state folder outside it, 0600 files in a 0700 folder", async () => {
    const ws = tempDir("boot");
    const env = { XDG_STATE_HOME: tempDir("boot-state") };
    process.env.NOTES_DIR = ws;
    const gateway = await gatewayFromSettings([readNote], { workspace: ws, env });
    expect((await gateway.call(call)).ok).toBe(true);
    await gateway.close();
    const dir = defaultStateDir(ws, env);
    expect(dir.startsWith(join(env.XDG_STATE_HOME, "toolgate") + "/")).toBe(true);
    expect(existsSync(join(ws, ".toolgate"))).toBe(false);
    expect(readFileSync(join(dir, "audit.jsonl"), "utf8")).toContain('"tool":"note_read"');
    const mode = (file: string) => (statSync(join(dir, file)).mode & 0o777).toString(8);
    expect({ dir: mode(""), db: mode("state.db"), audit: mode("audit.jsonl") }).toEqual({
      dir: "700",
      db: "600",
      audit: "600",
    });
  });

  it("applies --budget-tokens to observations", async () => {
    const ws = tempDir("boot");
    process.env.NOTES_DIR = ws;
    writeFileSync(join(ws, "long.txt"), "a fairly long line of note text\n".repeat(400));
    const gateway = await gatewayFromSettings([readNote], {
      workspace: ws,
      store: "memory:",
      audit: false,
      budgetTokens: 200,
      env: {},
    });
    const obs = await gateway.call(call);
    await gateway.close();
    expect(obs.truncated?.omitted_tokens).toBeGreaterThan(1000);
  });

  it("requires capabilities when TOOLGATE_KEYS is set, and names a bad key file", async () => {
    const ws = tempDir("boot");
    const gateway = await gatewayFromSettings([readNote], {
      workspace: ws,
      store: "memory:",
      audit: false,
      env: { TOOLGATE_KEYS: JSON.stringify({ k1: Buffer.alloc(32, 1).toString("base64") }) },
    });
    const obs = await gateway.call(call);
    await gateway.close();
    expect(obs.error?.code).toBe("denied");
    const elsewhere = tempDir("boot-keys");
    await expect(
      gatewayFromSettings([readNote], {
        workspace: ws,
        store: "memory:",
        audit: false,
        keys: join(elsewhere, "missing.json"),
        env: {},
      }),
    ).rejects.toThrow(/cannot read key file .*missing\.json: no such file/);
  });
});
