/**
 * Over MCP: the elicitation prompt a person reads shows the model's arguments with bidi and
 * invisible characters visible, and ids with such characters in `_meta` are refused by name.
 */
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { createGateway } from "../../../src/runtime/gateway.js";
import { createMemoryStore } from "../../../src/idempotency/stores/memory.js";
import { createMcpServer } from "../../../src/mcp/server/server.js";
import { defineTool } from "../../../src/schema/define.js";
import type { Gateway } from "../../../src/runtime/types.js";
import { obsOf, textOf } from "../support.js";

const ran: string[] = [];
const remove = defineTool({
  name: "remove_path",
  description: "Removes one path of the project for good.",
  input: z.object({ path: z.string().max(200).describe("The path to remove.") }).strict(),
  effect: "destructive",
  handler: (args) => (ran.push(args.path), { removed: args.path }),
});

let gateway: Gateway;
let client: Client;
afterEach(async () => {
  await client?.close();
  await gateway?.close();
  ran.length = 0;
});

async function connect(answer: (message: string) => { action: "accept" | "decline" | "cancel" }) {
  gateway = createGateway({ tools: [remove], store: createMemoryStore(), audit: false });
  const server = createMcpServer(gateway);
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  client = new Client({ name: "test-client", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler(ElicitRequestSchema, (req) => answer(req.params.message));
  await client.connect(clientSide);
}

describe("the elicitation prompt", () => {
  it("shows bidi controls and invisible characters in the arguments instead of letting them reorder or hide text", async () => {
    const asked: string[] = [];
    await connect((m) => (asked.push(m), { action: "decline" }));
    // Read left to right as "src/tmp/cache.txt"; what would run removes the project's .git.
    const path = "src/\u202etxt.ehcac/pmt\u202c/../../.git\u200b";
    const result = await client.callTool({ name: "remove_path", arguments: { path } });
    expect(obsOf(result).error?.code).toBe("approval_denied");
    expect(asked).toHaveLength(1);
    expect(asked[0]).not.toMatch(/[\u202a-\u202e\u2066-\u2069\u200b-\u200f\u2060]/);
    expect(asked[0]).toContain('"path": "src/\\u202etxt.ehcac/pmt\\u202c/../../.git\\u200b"');
    expect(ran).toEqual([]);
  });
});

describe("_meta ids", () => {
  it("with a control, bidi or invisible character are refused, naming the field", async () => {
    await connect(() => ({ action: "cancel" }));
    for (const [key, value] of [
      ["toolgate/trajectory_id", "run\u202e1"],
      ["toolgate/call_id", "c\x1b[2J"],
      ["toolgate/idempotency_key", "k\u200d"],
      ["toolgate/approval_id", "ap_\u2066x"],
    ] as const) {
      const result = await client.callTool({ name: "remove_path", arguments: { path: "a" }, _meta: { [key]: value } });
      expect(result.isError).toBe(true);
      expect(obsOf(result).error?.code).toBe("invalid_meta");
      expect(textOf(result)).toMatch(
        new RegExp(
          `^remove_path was not run: the MCP client sent request metadata toolgate cannot use\\. _meta\\["${key}"\\] must not contain control, bidi or invisible characters; received U\\+`,
        ),
      );
      expect(textOf(result)).not.toMatch(/[\p{Cc}\p{Cf}]/u);
    }
    expect(ran).toEqual([]);
  });

  it("a tool name with such characters is refused, and the refusal shows it escaped", async () => {
    await connect(() => ({ action: "cancel" }));
    const result = await client.callTool({
      name: "remove_path\x1b]52;c;ZXZpbA==\x07",
      arguments: { path: "a" },
      _meta: { "toolgate/turn": "x" },
    });
    expect(textOf(result)).toMatch(/^remove_path\\u\{001B\}\]52;c;ZXZpbA==\\u\{0007\} was not run/);
    const plain = await client.callTool({ name: "remove\u202e_path", arguments: { path: "a" } });
    expect(obsOf(plain).error?.code).toBe("invalid_proposal");
    expect(textOf(plain)).not.toContain("\u202e");
  });
});
