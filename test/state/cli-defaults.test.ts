/**
 * The commands that read what `toolgate serve` recorded find it with their defaults: run from
 * the workspace (or given `--workspace`), `approvals`, `records`, `stats`, `breakeven --audit`
 * and `cap revoke` open the very store and audit trail serve used, outside the workspace.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { cli } from "../support/cli.js";
import { projectRoot } from "../support/require.js";
import { ids, obsOf } from "../mcp/support.js";
import { CLI, runCli, tempDir } from "./support.js";

const NOTES_CATALOG = join(projectRoot, "test/mcp/fixtures/notes-catalog.ts");

describe("CLI defaults find the state toolgate serve keeps", { timeout: 180_000 }, () => {
  it("approvals, records, stats, breakeven --audit and cap revoke, from the workspace or with --workspace", async () => {
    const ws = tempDir("ws");
    // Started elsewhere, as an MCP client starts it, for --workspace ws.
    const env = { ...getDefaultEnvironment(), XDG_STATE_HOME: process.env.XDG_STATE_HOME!, NOTES_DIR: ws };
    const transport = new StdioClientTransport({
      command: CLI[0]!,
      args: [...CLI.slice(1), "serve", "--workspace", ws, "--catalog", NOTES_CATALOG],
      cwd: projectRoot,
      env,
      stderr: "pipe",
    });
    const client = new Client({ name: "cli-defaults", version: "1.0.0" });
    await client.connect(transport);
    let approval: string;
    try {
      await client.callTool({ name: "note_append", arguments: { name: "a", line: "x" }, _meta: ids("w1") });
      const held = await client.callTool({ name: "note_delete", arguments: { name: "a" }, _meta: ids("d1") });
      expect(obsOf(held).error?.code).toBe("approval_required");
      approval = obsOf(held).error!.detail!.approval_id as string;
    } finally {
      await client.close();
    }
    expect(existsSync(join(ws, ".toolgate"))).toBe(false);

    // From the workspace itself, no flags (a child process: its working directory is ws).
    const listed = await runCli(["approvals", "list", "--json"], { cwd: ws, env: process.env });
    expect([listed.code, (JSON.parse(listed.stdout) as Array<{ id: string }>).map((a) => a.id)], listed.stderr).toEqual(
      [0, [approval]],
    );

    // From anywhere, with --workspace.
    expect((await cli("approvals", "approve", approval, "--workspace", ws, "--approver", "alice")).code).toBe(0);
    const records = await cli("records", "list", "--workspace", ws, "--json");
    expect((JSON.parse(records.out) as Array<{ tool: string }>).map((r) => r.tool)).toContain("note_append");
    const stats = await cli("stats", "--workspace", ws, "--json");
    expect((JSON.parse(stats.out) as { overall: { calls: number } }).overall.calls).toBe(2);
    const revoked = await cli("cap", "revoke", "cap_3q2Xn0u8mB1Kc9dZ", "--workspace", ws, "--json");
    expect([revoked.code, JSON.parse(revoked.out).created_store, revoked.err]).toEqual([0, null, ""]);
    const breakeven = await runCli(["breakeven", "--audit", "--json"], { cwd: ws, env: process.env });
    expect([breakeven.code, JSON.parse(breakeven.stdout).records], breakeven.stderr).toEqual([0, 2]);
    expect(existsSync(join(ws, ".toolgate"))).toBe(false);
  });

  it("where serve never ran, each says where it looked and how to point it elsewhere, and creates nothing", async () => {
    const ws = tempDir("ws");
    const stats = await cli("stats", "--workspace", ws);
    expect(stats.err).toMatch(
      new RegExp(
        `^toolgate: no audit trail at ${process.env.XDG_STATE_HOME}/toolgate/\\S+/audit\\.jsonl: toolgate serve has recorded no call for this workspace yet; run from the folder serve was started in, or pass --workspace DIR \\(and --state-dir DIR\\) as serve had them, or --audit FILE\\n$`,
      ),
    );
    const list = await cli("approvals", "list", "--workspace", ws);
    expect(list.err).toMatch(
      /^toolgate: no toolgate state at \S+\/state\.db: nothing has been recorded there yet; run from the workspace toolgate serves \(or pass --workspace DIR\), or name the store with --store \[store_missing\]\n$/,
    );
    expect(existsSync(join(ws, ".toolgate"))).toBe(false);
  });
});
