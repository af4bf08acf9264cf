/**
 * serve's egress flags: --egress-allow and --egress-deny repeat and merge with --egress-config's
 * lists; every bad entry, file or combination is refused before anything starts, naming the flag
 * or field and how to fix it; and a served bash_execute reaches a local server only through them.
 */
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { parseEgressFlags } from "../../../src/cli/host/egress-flags.js";
import { cli } from "../../support/cli.js";
import { binaryAvailable, projectRoot } from "../../support/require.js";
import { tempDir } from "../../mcp/support.js";

const NOTES_CATALOG = join(projectRoot, "test/mcp/fixtures/notes-catalog.ts");

describe("parseEgressFlags", () => {
  it("is null without any egress flag, and merges the file's lists with the flags'", () => {
    expect(parseEgressFlags({}, [])).toBeNull();
    const file = join(tempDir("egress"), "egress.json");
    writeFileSync(
      file,
      JSON.stringify({ allow: ["a.example.org"], deny: ["b.example.org"], limits: { max_connections: 3 } }),
    );
    expect(
      parseEgressFlags(
        { egressAllow: ["*.example.net:443"], egressDeny: ["c.example.org"], egressConfig: file },
        [8765],
      ),
    ).toEqual({
      allow: ["a.example.org", "*.example.net:443"],
      deny: ["b.example.org", "c.example.org"],
      limits: { max_connections: 3 },
      ownPorts: [8765],
    });
  });

  it("refuses a bad entry, an unreadable or non-JSON file, a non-object and an unknown field, saying what to write", () => {
    const dir = tempDir("egress");
    const write = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    const message = (f: Parameters<typeof parseEgressFlags>[0]) => {
      try {
        parseEgressFlags(f, []);
      } catch (err) {
        return (err as Error).message;
      }
      throw new Error("accepted");
    };
    expect(message({ egressAllow: ["exa_mple.org"] })).toMatch(
      /^egress: egress\.allow\[0\]: "exa_mple\.org" does not parse/,
    );
    expect(message({ egressConfig: join(dir, "missing.json") })).toMatch(
      /^--egress-config .*missing\.json could not be read/,
    );
    expect(message({ egressConfig: write("bad.json", "{") })).toMatch(/is not JSON/);
    expect(message({ egressConfig: write("list.json", "[]") })).toMatch(
      /must hold a JSON object like .*; received an array/,
    );
    expect(message({ egressConfig: write("extra.json", '{"allowed": []}') })).toMatch(
      /allowed is not a field; the fields are allow, deny, secrets, limits/,
    );
  });
});

describe("toolgate serve's egress flags", { timeout: 120_000 }, () => {
  it("a bad --egress-allow, and egress flags with --catalog, are refused before anything starts", async () => {
    const bad = await cli("serve", "--workspace", tempDir("ws"), "--egress-allow", "a.example.org:0");
    expect([bad.code, bad.out]).toEqual([2, ""]);
    expect(bad.err).toMatch(/egress\.allow\[0\]: "a\.example\.org:0" does not parse .*not a port/);
    const both = await cli(
      "serve",
      "--workspace",
      tempDir("ws"),
      "--catalog",
      NOTES_CATALOG,
      "--egress-allow",
      "a.org",
    );
    expect([both.code, both.out]).toEqual([2, ""]);
    expect(both.err).toContain("configure the built-in bash_execute and mean nothing with --catalog");
  });

  it.skipIf(!binaryAvailable("bwrap") || !binaryAvailable("curl"))(
    "a served bash_execute reaches a local server named by --egress-allow, and is refused one the flags do not allow",
    async () => {
      const server = createServer((_req, res) => res.end("hello through serve\n"));
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      onTestFinished(() => void server.close());
      const port = (server.address() as AddressInfo).port;
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [
          "--import",
          "tsx",
          join(projectRoot, "src/cli/main.ts"),
          "serve",
          "--workspace",
          tempDir("ws"),
          "--egress-allow",
          `localhost:${port}`,
          "--egress-allow",
          `127.0.0.1:${port}`,
        ],
        cwd: projectRoot,
        env: {
          ...getDefaultEnvironment(),
          XDG_STATE_HOME: process.env.XDG_STATE_HOME!,
          XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME!,
        },
        stderr: "pipe",
      });
      const client = new Client({ name: "egress-test", version: "1.0.0" });
      await client.connect(transport);
      onTestFinished(() => client.close());
      const { tools } = await client.listTools();
      expect(tools.find((t) => t.name === "bash_execute")!.description).toContain("network only through a proxy");
      const curl = (host: string) =>
        client.callTool({
          name: "bash_execute",
          arguments: { command: `curl -sSf --noproxy '' -x http://127.0.0.1:3128 http://${host}/` },
        });
      const ok = (await curl(`localhost:${port}`)) as unknown as { structuredContent: { stdout: string } };
      expect(ok.structuredContent.stdout).toBe("hello through serve\n");
      const refused = (await curl(`localhost:${port + 1}`)) as unknown as {
        structuredContent: { sandbox_denied: { code: string; reason?: string }[] };
      };
      expect(refused.structuredContent.sandbox_denied).toEqual([
        expect.objectContaining({ code: "egress_denied", reason: "not allowed by operator" }),
      ]);
    },
  );
});
