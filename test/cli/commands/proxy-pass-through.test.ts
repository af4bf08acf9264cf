/**
 * `toolgate proxy -- server-everything` run as a command, asked over stdio by the real SDK v2
 * client in both revisions: the upstream's resources, prompts and completions pass through the
 * command's wiring (`cli/commands/proxy.ts` hands the proxy's pass-through to the MCP server).
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/client";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { projectRoot } from "../../support/require.js";
import { tempDir } from "../../mcp/support.js";

const cli = [process.execPath, "--import", import.meta.resolve("tsx"), join(projectRoot, "src/cli/main.ts")];
const everything = fileURLToPath(import.meta.resolve("@modelcontextprotocol/server-everything/dist/index.js"));

describe.each(["2025-11-25", "2026-07-28"] as const)(
  "toolgate proxy over stdio, a %s client",
  { timeout: 120_000 },
  (era) => {
    it("lists and reads resources, gets a prompt and completes an argument of server-everything", async () => {
      const dir = tempDir("cli-proxy-pass-through");
      const audit = join(tempDir("cli-proxy-pass-through-state"), "audit.jsonl");
      const transport = new StdioClientTransport({
        command: cli[0]!,
        args: [
          ...cli.slice(1),
          "proxy",
          "--store",
          "memory:",
          "--audit",
          audit,
          "--",
          process.execPath,
          everything,
          "stdio",
        ],
        cwd: dir,
        env: getDefaultEnvironment(),
        stderr: "pipe",
      });
      let stderr = "";
      transport.stderr?.on("data", (d: Buffer) => (stderr += d));
      const client = new Client(
        { name: `cli-pass-through-${era}`, version: "1.0.0" },
        era === "2026-07-28" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
      );
      await client.connect(transport);
      try {
        const { resources } = await client.listResources();
        expect(resources.map((r) => r.uri)).toContain("demo://resource/static/document/architecture.md");
        const read = await client.readResource({ uri: "demo://resource/dynamic/text/9" }, { cacheMode: "bypass" });
        expect(JSON.stringify(read.contents)).toContain("9");
        const got = await client.getPrompt({ name: "args-prompt", arguments: { city: "Quito" } });
        expect(JSON.stringify(got.messages)).toContain("Quito");
        const done = await client.complete({
          ref: { type: "ref/resource", uri: "demo://resource/dynamic/text/{resourceId}" },
          argument: { name: "resourceId", value: "1" },
        });
        expect(Array.isArray(done.completion.values)).toBe(true);
        expect(stderr).toMatch(
          /toolgate proxy: passing through \d+ resources, 2 resource templates, 4 prompts and completions/,
        );
      } finally {
        await client.close();
      }
    });
  },
);
