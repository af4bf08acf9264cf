/**
 * Each command's code loads only when it runs (`src/cli/commands.ts`): `toolgate --version` loads
 * no command module, and `toolgate lint FILE` none of what serving needs (the MCP SDK, the
 * gateway, the stores, the tokenizer). What a process loaded is recorded by a resolve hook.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../support/require.js";
import { tempDir } from "../mcp/support.js";

function loadedBy(args: string[]): string[] {
  const dir = tempDir("loads");
  const file = join(dir, "loads.txt");
  writeFileSync(file, "");
  const hook = join(projectRoot, "test/cli/fixtures/record-loads.mjs");
  const r = spawnSync(
    process.execPath,
    ["--import", hook, "--import", import.meta.resolve("tsx"), join(projectRoot, "src/cli/main.ts"), ...args],
    { cwd: dir, encoding: "utf8", env: { ...process.env, LOADS_FILE: file } },
  );
  expect([r.status, r.stderr]).toEqual([0, ""]);
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((u) => u.replace(`file://${projectRoot}/`, ""));
}

const HEAVY = [
  "@modelcontextprotocol/sdk",
  "better-sqlite3",
  "gpt-tokenizer",
  "src/runtime/gateway",
  "src/idempotency/open",
  "src/tools/catalog",
];

describe("toolgate starts like a small CLI", { timeout: 60_000 }, () => {
  it("--version loads no command module", () => {
    const loaded = loadedBy(["--version"]);
    expect(loaded).toContain("src/cli/program.ts");
    expect(loaded.filter((u) => u.includes("src/cli/commands/"))).toEqual([]);
  });

  it("lint of one file loads lint's code and none of what serving needs", () => {
    const file = join(tempDir("lint-one"), "tool.json");
    writeFileSync(
      file,
      JSON.stringify({
        name: "find_orders",
        description: "Find at most 20 newest orders for one customer.",
        inputSchema: { type: "object", properties: {}, additionalProperties: false },
        annotations: { readOnlyHint: true },
      }),
    );
    const loaded = loadedBy(["lint", file]);
    expect(loaded.filter((u) => u.includes("src/cli/commands/"))).toEqual(["src/cli/commands/lint.ts"]);
    expect(loaded.filter((u) => HEAVY.some((h) => u.includes(h)))).toEqual([]);
  });
});
