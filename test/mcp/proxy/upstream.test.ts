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

  it("tells the operator when an environment name sh would act on leaves the upstream without its PID namespace", async () => {
    const memory = fileURLToPath(import.meta.resolve("@modelcontextprotocol/server-memory/dist/index.js"));
    const start = async (env: Record<string, string>) => {
      const lines: string[] = [];
      const client = await connectUpstream({ command: process.execPath, args: [memory], env }, undefined, (l) =>
        lines.push(l),
      );
      await client.close();
      return lines;
    };
    const altered = await start({ SHELLOPTS: "braceexpand" });
    if (process.platform !== "linux") return expect(altered).toEqual([]);
    expect(altered).toEqual([
      `toolgate proxy: the upstream ${process.execPath} runs without a PID namespace of its own, since its environment holds SHELLOPTS, which sh would drop or act on: what it starts may outlive a killed proxy; unset SHELLOPTS (and any other SHELLOPTS, BASH* or non-identifier name) in the environment toolgate proxy starts with, or in the upstream's env, to keep the namespace`,
    ]);
    expect(await start({ OLDPWD: "/", PS1: "$ " })).toEqual([]);
  });

  it("names the command when the upstream cannot start", async () => {
    await expect(
      listMcpTools({ command: "/nonexistent/mcp-server", args: ["--x"] }),
    ).rejects.toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: cannot start or reach the upstream MCP server (/nonexistent/mcp-server --x): spawn /nonexistent/mcp-server ENOENT]`,
    );
  });
});
