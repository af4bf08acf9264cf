/**
 * `toolgate proxy -- server-everything` run as a command, asked over stdio by the real SDK v2
 * client in both revisions: the upstream's resources, prompts and completions pass through the
 * command's wiring (`cli/commands/proxy.ts` hands the proxy's pass-through to the MCP server);
 * `--exclude-prompt`/`--exclude-resource` hide what they name and each read leaves an audit
 * line; a bad value of those flags is refused at start, exit 2, naming the flag.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { Client, ProtocolError } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { proxyProcess } from "../../support/proxy-process.js";
import { refusal, tempDir, until } from "../../mcp/support.js";

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

describe.each(["2025-11-25", "2026-07-28"] as const)(
  "toolgate proxy --exclude-prompt --exclude-resource, a %s client",
  { timeout: 120_000 },
  (era) => {
    it("hides what the flags name from the lists and from reads, and writes each list's and read's audit line", async () => {
      const audit = join(tempDir("cli-proxy-lists-state"), "audit.jsonl");
      const flags = ["--exclude-prompt", "args-prompt", "--exclude-resource", "demo://resource/dynamic/blob/*"];
      const transport = new StdioClientTransport(proxyProcess([everything, "stdio"], "cli-proxy-lists", flags, audit));
      const client = new Client(
        { name: `cli-lists-${era}`, version: "1.0.0" },
        era === "2026-07-28" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
      );
      await client.connect(transport);
      try {
        const { prompts } = await client.listPrompts();
        expect(prompts.map((p) => p.name)).not.toContain("args-prompt");
        const { resourceTemplates } = await client.listResourceTemplates();
        expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(["demo://resource/dynamic/text/{resourceId}"]);
        const hidden = await refusal(
          client.readResource({ uri: "demo://resource/dynamic/blob/2" }, { cacheMode: "bypass" }),
          ProtocolError,
        );
        expect(hidden.code).toBe(-32602);
        await client.readResource({ uri: "demo://resource/dynamic/text/2" }, { cacheMode: "bypass" });
        const reads = () =>
          (existsSync(audit) ? readFileSync(audit, "utf8").split("\n").filter(Boolean) : [])
            .map((l) => JSON.parse(l) as Record<string, unknown>)
            .filter((l) => l.kind === "read");
        // The two lists asked first have their lines too (no target), then the two reads.
        await until(() => reads().length >= 4);
        expect(reads().map((l) => [l.operation, l.target, l.outcome, l.principal])).toEqual([
          ["prompts/list", null, "ok", "stdio client"],
          ["resources/templates/list", null, "ok", "stdio client"],
          ["resources/read", "demo://resource/dynamic/blob/2", "refused", "stdio client"],
          ["resources/read", "demo://resource/dynamic/text/2", "ok", "stdio client"],
        ]);
      } finally {
        await client.close();
      }
    });
  },
);

const run = promisify(execFile);

describe("toolgate proxy's list flags, given a bad value", { timeout: 120_000 }, () => {
  const refused = async (flags: string[]) => {
    const p = proxyProcess([everything, "stdio"], "cli-proxy-bad-lists", flags);
    const failed = await run(p.command, p.args, { cwd: p.cwd, env: p.env }).then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    expect(failed?.code).toBe(2);
    return failed!.stderr;
  };

  it("refuses an empty prompt name, naming the flag and an example", async () => {
    expect(await refused(["--include-prompt", ""])).toContain(
      '--include-prompt must be a prompt name or a * pattern; received "" (empty); e.g. --include-prompt summarise',
    );
  });

  it("refuses a resource pattern holding white space or an invisible character", async () => {
    expect(await refused(["--exclude-resource", "file:///my docs/*"])).toContain(
      '--exclude-resource must be a resource URI or a * pattern; received "file:///my docs/*" (white space, which no URI holds); e.g. --exclude-resource file:///docs/*',
    );
    expect(await refused(["--include-resource", "demo://\u202eevil"])).toContain("(control or invisible characters)");
  });

  it("refuses an exact prompt name the upstream does not serve, with the nearest it does", async () => {
    const stderr = await refused(["--exclude-prompt", "args-promt"]);
    expect(stderr).toContain('--exclude-prompt names the prompt "args-promt", which ');
    expect(stderr).toContain(
      'does not serve; did you mean "args-prompt"?; its prompts are "simple-prompt", "args-prompt"',
    );
  });

  it("refuses the flags beside --config, pointing to the toolgate block's keys", async () => {
    const config = join(tempDir("cli-proxy-bad-lists-config"), "mcp.json");
    const p = proxyProcess([everything, "stdio"], "cli-proxy-bad-lists");
    const args = [...p.args.slice(0, p.args.indexOf("--")), "--config", config, "--exclude-resource", "x://y"];
    const failed = await run(p.command, args, { cwd: p.cwd, env: p.env }).then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    expect(failed?.code).toBe(2);
    expect(failed!.stderr).toContain(
      'with --config, each server\'s resources are chosen in its toolgate block: "toolgate": {"exclude_resources": [...]}; drop --exclude-resource',
    );
  });
});
