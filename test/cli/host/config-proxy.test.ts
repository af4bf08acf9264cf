import { describe, expect, it } from "vitest";
import { parseServersConfig } from "../../../src/cli/config/load.js";
import { aggregateUpstreams, configRateLimits } from "../../../src/cli/host/config-proxy.js";
import { openGuardStore } from "../../../src/idempotency/open-guard.js";

const config = parseServersConfig(
  JSON.stringify({
    mcpServers: {
      gh: {
        url: "https://example.com/mcp",
        headers: { Authorization: "Bearer x" },
        toolgate: {
          namespace: "g",
          rate_limit: { calls: 100, window_ms: 60_000 },
          tool_rate_limit: { calls: 10, window_ms: 60_000 },
          grant_rate_limit: { calls: 5, window_ms: 1_000 },
          tools: { create_issue: { rate_limit: { calls: 2, window_ms: 3_600_000 } } },
        },
      },
      mem: { command: "node", args: ["server.js"], env: { A: "1" }, cwd: "/srv" },
    },
  }),
  "mcp.json",
  { env: {} },
);
const published = [
  { name: "g__create_issue", server: "gh", tool: "create_issue", held: false },
  { name: "g__get_issue", server: "gh", tool: "get_issue", held: false },
  { name: "mem__read_graph", server: "mem", tool: "read_graph", held: false },
];

describe("what proxy --config builds from a file", () => {
  it("upstreams: the transport as written, with only the entry's environment", () => {
    expect(aggregateUpstreams(config).map((u) => u.target)).toEqual([
      { url: "https://example.com/mcp", headers: { Authorization: "Bearer x" } },
      { command: "node", args: ["server.js"], env: { A: "1" }, cwd: "/srv" },
    ]);
  });

  it("rate windows: a tool's own limit replaces the per-tool default; server and holder windows beside it", async () => {
    const guard = await openGuardStore("memory:");
    const limits = configRateLimits(config, published, guard.rates)!;
    expect(limits.perHolder).toBe(true);
    const summary = (tool: string, holder: string | null) =>
      limits.windows(tool, holder).map((w) => [w.key, w.limit, w.window_ms, w.label]);
    expect(summary("g__create_issue", "h1")).toEqual([
      ['tool:["gh","create_issue"]', 2, 3_600_000, "calls of g__create_issue"],
      ['server:"gh"', 100, 60_000, "calls to gh's tools"],
      ['grant:h1:"gh"', 5, 1_000, "your calls to gh's tools"],
    ]);
    expect(summary("g__get_issue", null)[0]).toEqual(['tool:["gh","get_issue"]', 10, 60_000, "calls of g__get_issue"]);
    expect(summary("mem__read_graph", "h1")).toEqual([]);
    expect(summary("unknown", "h1")).toEqual([]);
    await guard.close();
  });

  it("no limits in the file: no rate stage at all", async () => {
    const plain = parseServersConfig('{"mcpServers": {"m": {"command": "x"}}}', "p.json", { env: {} });
    const guard = await openGuardStore("memory:");
    expect(configRateLimits(plain, [{ name: "m__t", server: "m", tool: "t", held: false }], guard.rates)).toBeNull();
    await guard.close();
  });
});
