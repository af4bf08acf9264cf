import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { listMcpTools } from "../../../src/mcp/proxy/list-tools.js";
import { connectUpstream, listAllTools } from "../../../src/mcp/proxy/upstream.js";

const pagingServer = fileURLToPath(new URL("../fixtures/paging-server.mjs", import.meta.url));

describe("upstream client", () => {
  it("reads every page of tools/list through nextCursor", async () => {
    const tools = await listMcpTools({ command: process.execPath, args: [pagingServer], env: { PAGING_TOOLS: "5" } });
    expect(tools.map((t) => t.name)).toEqual(["echo_0", "echo_1", "echo_2", "echo_3", "echo_4"]);
  });

  it("lists the real server-memory catalog with its annotations", async () => {
    const client = await connectUpstream({
      command: process.execPath,
      args: [fileURLToPath(import.meta.resolve("@modelcontextprotocol/server-memory/dist/index.js"))],
    });
    try {
      const tools = await listAllTools(client);
      const del = tools.find((t) => t.name === "delete_entities");
      expect(del?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
      expect(tools.length).toBeGreaterThanOrEqual(9);
    } finally {
      await client.close();
    }
  });

  it("names the command when the upstream cannot start", async () => {
    await expect(
      listMcpTools({ command: "/nonexistent/mcp-server", args: ["--x"] }),
    ).rejects.toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: cannot start or reach the upstream MCP server (/nonexistent/mcp-server --x): spawn /nonexistent/mcp-server ENOENT]`,
    );
  });
});
