/**
 * `toolgate serve --config` and `toolgate proxy --config` as a client starts them: the CLI from
 * source over stdio, an mcpServers file with server-memory in it.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { cli } from "../../support/cli.js";
import { projectRoot } from "../../support/require.js";
import { tempDir, textOf } from "../../mcp/support.js";

const memoryServer = fileURLToPath(import.meta.resolve("@modelcontextprotocol/server-memory/dist/index.js"));
const open: Client[] = [];
afterEach(async () => {
  await Promise.allSettled(open.splice(0).map((c) => c.close()));
});

function configFile(dir: string): string {
  const file = join(dir, "claude_desktop_config.json");
  writeFileSync(
    file,
    JSON.stringify({
      mcpServers: {
        memory: {
          command: process.execPath,
          args: [memoryServer],
          env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") },
          toolgate: { include: ["read_graph", "create_entities"] },
        },
      },
    }),
  );
  return file;
}

async function start(args: string[], cwd: string): Promise<Client> {
  const client = new Client({ name: "config-test", version: "1.0.0" });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--import", "tsx", join(projectRoot, "src/cli/main.ts"), ...args],
    cwd,
    env: {
      ...getDefaultEnvironment(),
      XDG_STATE_HOME: process.env.XDG_STATE_HOME!,
      XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME!,
    },
    stderr: "pipe",
  });
  let err = "";
  transport.stderr?.on("data", (c: Buffer) => (err += c.toString()));
  try {
    await client.connect(transport);
  } catch (e) {
    throw new Error(`${(e as Error).message}; stderr: ${err}`, { cause: e });
  }
  open.push(client);
  return client;
}

describe("--config on the commands a client starts", { timeout: 120_000 }, () => {
  it("serve --config serves the coding tools and the file's servers through one gateway", async () => {
    const ws = tempDir("serve-config");
    const client = await start(["serve", "--workspace", ws, "--config", configFile(ws)], projectRoot);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
      "bash_execute",
      "file_edit",
      "file_view",
      "grep_search",
      "memory__create_entities",
      "memory__read_graph",
    ]);
    expect(textOf(await client.callTool({ name: "memory__read_graph", arguments: {} }))).toContain("entities");
  });

  it("proxy --config serves the file's servers", async () => {
    const dir = tempDir("proxy-config");
    const client = await start(["proxy", "--config", configFile(dir)], projectRoot);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
      "memory__create_entities",
      "memory__read_graph",
    ]);
  });

  it("a bad file stops proxy --config before anything starts, with every mistake named", async () => {
    const dir = tempDir("proxy-bad");
    const bad = join(dir, "mcp.json");
    writeFileSync(bad, '{"mcpServers": {"memory": {"comand": "npx"}}}');
    const run = await cli("proxy", "--config", bad);
    expect(run.code).toBe(2);
    expect(run.err).toContain(`${bad}: 2 mistakes, nothing started:`);
    expect(run.err).toContain('did you mean "command"?');
  });
});
