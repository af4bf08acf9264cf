/**
 * The coding tools publish an outputSchema in tools/list, and the structuredContent of each
 * tool's happy path conforms to it — checked by Ajv (2020-12) and by the SDK client, which
 * validates structured results against the listed outputSchema itself.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { createGateway } from "../../../src/runtime/gateway.js";
import { openStore } from "../../../src/idempotency/open.js";
import { createMcpServer } from "../../../src/mcp/server/server.js";
import { createCodingCatalog } from "../../../src/tools/catalog.js";
import type { Gateway } from "../../../src/runtime/types.js";
import { binaryAvailable } from "../../support/require.js";
import { tempDir } from "../support.js";

let gateway: Gateway | undefined;
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  await gateway?.close();
});

describe.runIf(binaryAvailable("bwrap") && binaryAvailable("rg"))("coding tools' outputSchema", () => {
  it("is published for all four, and every happy path's structuredContent conforms", async () => {
    const ws = tempDir("output-schema");
    mkdirSync(join(ws, "src"));
    writeFileSync(join(ws, "src/a.ts"), "export const a = 1;\nexport const b = 2;\n");
    gateway = createGateway({
      tools: createCodingCatalog({ workspace: ws }),
      store: await openStore("memory:"),
      audit: false,
    });
    const server = createMcpServer(gateway);
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    client = new Client({ name: "output-schema-test", version: "1.0.0" });
    await client.connect(b);

    const { tools } = await client.listTools();
    const schemas = new Map<string, NonNullable<Tool["outputSchema"]>>(tools.map((t) => [t.name, t.outputSchema!]));
    expect(tools.map((t) => [t.name, t.outputSchema?.type])).toEqual([
      ["bash_execute", "object"],
      ["file_edit", "object"],
      ["file_view", "object"],
      ["grep_search", "object"],
    ]);
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    const file = join(ws, "src/a.ts");
    const calls: Array<[string, Record<string, unknown>]> = [
      ["bash_execute", { command: "echo out; echo err >&2" }],
      ["file_view", { path: file, offset: 1, limit: 1 }],
      ["file_view", { path: join(ws, "src"), offset: 1, limit: 10 }],
      ["file_edit", { path: file, old_str: "b = 2", new_str: "b = 3" }],
      ["grep_search", { pattern: "export", path: ws }],
    ];
    for (const [name, args] of calls) {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      expect(result.isError, `${name}: ${JSON.stringify(result.content)}`).toBeUndefined();
      const validate = ajv.compile(schemas.get(name)!);
      const valid = validate(result.structuredContent);
      expect(valid ? [] : validate.errors, `${name} ${JSON.stringify(args)}`).toEqual([]);
    }
  });
});
