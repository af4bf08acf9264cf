/** `toolgate proxy -- CMD` and `toolgate lint --mcp -- CMD` run as commands, from source. */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { projectRoot } from "../../support/require.js";
import { obsOf, tempDir, textOf } from "../../mcp/support.js";

const run = promisify(execFile);
// tsx by absolute URL: the proxy test runs the command from a temporary directory.
const cli = [process.execPath, "--import", import.meta.resolve("tsx"), join(projectRoot, "src/cli/main.ts")];
const memoryServer = fileURLToPath(import.meta.resolve("@modelcontextprotocol/server-memory/dist/index.js"));
const pagingServer = fileURLToPath(new URL("../../mcp/fixtures/paging-server.mjs", import.meta.url));

describe("toolgate proxy and lint --mcp as commands", { timeout: 180_000 }, () => {
  it("proxy serves the upstream's tools over stdio and reports the lint summary on stderr", async () => {
    const dir = tempDir("cli-proxy");
    // The audit trail outside the folder the proxy runs in: a state file directly in it is refused.
    const audit = join(tempDir("cli-proxy-state"), "audit.jsonl");
    const transport = new StdioClientTransport({
      command: cli[0]!,
      args: [...cli.slice(1), "proxy", "--store", "memory:", "--audit", audit, "--", process.execPath, memoryServer],
      cwd: dir,
      env: { ...getDefaultEnvironment(), MEMORY_FILE_PATH: join(dir, "memory.jsonl") },
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (d: Buffer) => (stderr += d));
    const client = new Client({ name: "cli-proxy-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.find((t) => t.name === "delete_entities")?.annotations).toMatchObject({ destructiveHint: true });
      const bad = await client.callTool({ name: "create_entities", arguments: { entities: "Ada" } });
      expect(obsOf(bad).error?.code).toBe("invalid_arguments");
      const graph = await client.callTool({ name: "read_graph", arguments: {} });
      expect(graph.isError).toBeUndefined();
      expect(stderr).toMatch(
        /toolgate proxy: \d+ tools from .*server-memory.* \(A0 \d+, A1 \d+, A2 \d+, A3 \d+\); lint: \d+ errors, \d+ warnings/,
      );
    } finally {
      await client.close();
    }
  });

  it("proxy --timeout-ms and --tool-timeout-ms set the time limits, and a cut call says which flag gives more time", async () => {
    const slowServer = fileURLToPath(new URL("../../mcp/fixtures/slow-server.mjs", import.meta.url));
    const dir = tempDir("cli-proxy-slow");
    const audit = join(tempDir("cli-proxy-slow-state"), "audit.jsonl");
    const transport = new StdioClientTransport({
      command: cli[0]!,
      args: [
        ...cli.slice(1),
        "proxy",
        "--store",
        "memory:",
        "--audit",
        audit,
        "--timeout-ms",
        "400",
        "--",
        process.execPath,
        slowServer,
      ],
      cwd: dir,
      env: getDefaultEnvironment(),
      stderr: "pipe",
    });
    const client = new Client({ name: "cli-proxy-slow", version: "1.0.0" });
    await client.connect(transport);
    try {
      const cut = await client.callTool({ name: "wait_ms", arguments: { ms: 5000 } });
      expect(obsOf(cut).error?.code).toBe("timeout");
      expect(textOf(cut)).toContain(
        "That is the time limit toolgate proxy sets for wait_ms (400 ms). If the work needs longer, tell the user: whoever runs toolgate proxy can raise it with --timeout-ms MS (every tool of this server) or --tool-timeout-ms wait_ms=MS",
      );
    } finally {
      await client.close();
    }
    const bad = await run(
      cli[0]!,
      [...cli.slice(1), "proxy", "--tool-timeout-ms", "wait_ms", "--", process.execPath, slowServer],
      { cwd: dir },
    ).catch((e: { code: number; stderr: string }) => e);
    expect((bad as { code: number }).code).toBe(2);
    expect((bad as { stderr: string }).stderr).toContain(
      '--tool-timeout-ms must be NAME=MS, e.g. --tool-timeout-ms read_text_file=300000; received "wait_ms"',
    );
  });

  it("lint --mcp reads every page of a live server's tools/list", async () => {
    const { stdout } = await run(
      cli[0]!,
      [...cli.slice(1), "lint", "--mcp", "--format", "json", "--", process.execPath, pagingServer],
      { cwd: projectRoot, env: { ...process.env, PAGING_TOOLS: "7" } },
    );
    const report = JSON.parse(stdout) as { summary: { tools: number; errors: number } };
    expect(report.summary).toMatchObject({ tools: 7, errors: 0 });
  });

  it("lint --mcp names the command that could not start, exit 2", async () => {
    const failed = await run(cli[0]!, [...cli.slice(1), "lint", "--mcp", "--", "/nonexistent/server"], {
      cwd: projectRoot,
    }).catch((e: { code: number; stderr: string }) => e);
    expect((failed as { code: number }).code).toBe(2);
    expect((failed as { stderr: string }).stderr).toMatchInlineSnapshot(`
      "toolgate: cannot start or reach the upstream MCP server (/nonexistent/server): spawn /nonexistent/server ENOENT [upstream_unavailable]
      "
    `);
  });
});
