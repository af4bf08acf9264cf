/** cost --config and lint --config: the merged catalog of an mcpServers file, before and after include/exclude. */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { cli } from "../../support/cli.js";
import { scratch } from "./scratch.js";

const memoryServer = fileURLToPath(import.meta.resolve("@modelcontextprotocol/server-memory/dist/index.js"));
const everythingServer = fileURLToPath(import.meta.resolve("@modelcontextprotocol/server-everything/dist/index.js"));
const { dir, file } = scratch("toolgate-config-catalog-");
const config = file(
  "claude_desktop_config.json",
  JSON.stringify({
    mcpServers: {
      memory: {
        command: process.execPath,
        args: [memoryServer],
        env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") },
        toolgate: { exclude: ["delete_*"] },
      },
      everything: {
        command: process.execPath,
        args: [everythingServer, "stdio"],
        toolgate: { namespace: "ev", include: ["echo"] },
      },
    },
  }),
);

describe("the merged catalog of a config file", () => {
  it("cost --config costs every tool and the published ones, so the saving of include/exclude shows", async () => {
    const run = await cli("cost", "--config", config, "--json");
    expect(run.code).toBe(0);
    const { catalogs } = JSON.parse(run.out) as {
      catalogs: Array<{ source: string; k: number; per_turn: number }>;
    };
    expect(catalogs.map((c) => c.source)).toEqual([`config:${config} (every tool)`, `config:${config} (as published)`]);
    expect(catalogs[1]!.k).toBe(7);
    expect(catalogs[0]!.k).toBe(9 + 13);
    expect(catalogs[0]!.per_turn).toBeGreaterThan(catalogs[1]!.per_turn);
  }, 60_000);

  it("lint --config lints the published catalog under its published names", async () => {
    const run = await cli("lint", "--config", config, "--json");
    const report = JSON.parse(run.out) as { findings: Array<{ tool: string }> };
    const tools = new Set(report.findings.map((f) => f.tool));
    expect([...tools].every((t) => t.startsWith("memory__") || t.startsWith("ev__"))).toBe(true);
    expect([...tools].some((t) => t.startsWith("memory__delete"))).toBe(false);
  }, 60_000);

  it("a bad config is refused before any server starts, naming the mistake", async () => {
    const bad = file("bad.json", JSON.stringify({ mcpServers: { m: { comand: "x" } } }));
    const run = await cli("cost", "--config", bad);
    expect(run.code).toBe(2);
    expect(run.err).toContain(
      '/mcpServers/m/comand: unknown key "comand" in a stdio server entry; did you mean "command"?',
    );
  });
});

describe("an entry asking for the envelope", () => {
  it("is refused whole while upstreams cannot start inside it: nothing starts outside it instead", async () => {
    const boxed = file(
      "boxed.json",
      JSON.stringify({ mcpServers: { m: { command: "node", toolgate: { sandbox: true } } } }),
    );
    const run = await cli("lint", "--config", boxed);
    expect(run.code).toBe(2);
    expect(run.err).toContain(
      "mcpServers.m.toolgate.sandbox is true, but this toolgate cannot start upstreams inside the envelope yet",
    );
  });
});
