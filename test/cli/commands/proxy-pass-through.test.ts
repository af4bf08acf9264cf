/**
 * `toolgate proxy -- server-everything` run as a command, asked over stdio by the real SDK v2
 * client in both revisions: the upstream's resources, prompts and completions pass through the
 * command's wiring (`cli/commands/proxy.ts` hands the proxy's pass-through to the MCP server).
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { proxyProcess } from "../../support/proxy-process.js";

const everything = fileURLToPath(import.meta.resolve("@modelcontextprotocol/server-everything/dist/index.js"));

describe.each(["2025-11-25", "2026-07-28"] as const)(
  "toolgate proxy over stdio, a %s client",
  { timeout: 120_000 },
  (era) => {
    it("lists and reads resources, gets a prompt and completes an argument of server-everything", async () => {
      const transport = new StdioClientTransport(proxyProcess([everything, "stdio"], "cli-proxy-pass-through"));
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
