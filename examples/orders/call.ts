/**
 * One tool call over MCP, the way an agent host makes it: starts the catalog's server over stdio,
 * sends the call with toolgate's ids and the capability in `_meta`, prints the observation and
 * exits 0 (1 when the observation is a refusal or an error). The walkthrough in README.md uses it.
 *
 *   npx tsx examples/orders/call.ts --capability "$T" [--call-id ID] [--approval-id ap_…] TOOL 'JSON'
 *
 * The server is `toolgate serve --catalog examples/orders/index.ts`, or the command in
 * ORDERS_SERVE (words split at spaces). The same --call-id names the same logical call: its
 * retry is answered from the call's record instead of running again.
 */
import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/client/stdio";

const DEFAULT_SERVE = "toolgate serve --catalog examples/orders/index.ts";
const USAGE = `usage: call.ts --capability TOKEN [--call-id ID] [--approval-id ap_…] TOOL 'JSON'`;

function fail(message: string): never {
  process.stderr.write(`call.ts: ${message}\n${USAGE}\n`);
  process.exit(2);
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    capability: { type: "string" },
    "call-id": { type: "string" },
    "approval-id": { type: "string" },
  },
});
const [tool, json] = positionals;
if (!tool || json === undefined || positionals.length > 2)
  fail("give a tool name and its arguments as one JSON object");
if (!values.capability) fail("--capability is required: the catalog reads the tenant from it");
let args: Record<string, unknown>;
try {
  args = JSON.parse(json) as Record<string, unknown>;
} catch (err) {
  fail(`the arguments are not JSON (${(err as Error).message}); e.g. '{"customer_id":"c_7"}'`);
}

const [command, ...commandArgs] = (process.env.ORDERS_SERVE ?? DEFAULT_SERVE).split(" ").filter(Boolean);
const transport = new StdioClientTransport({
  command: command!,
  args: commandArgs,
  env: { ...getDefaultEnvironment(), ...(process.env as Record<string, string>) },
  stderr: "pipe",
});
// The server's stderr is shown only when it does not start (a bad key file, a missing catalog).
let serverErr = "";
transport.stderr?.on("data", (chunk: Buffer) => void (serverErr += chunk.toString()));
const client = new Client({ name: "orders-call", version: "1.0.0" });
try {
  await client.connect(transport);
} catch (err) {
  fail(`could not start ${command} ${commandArgs.join(" ")}: ${(err as Error).message}\n${serverErr}`);
}
try {
  const result = await client.callTool({
    name: tool,
    arguments: args,
    _meta: {
      "toolgate/trajectory_id": "orders-walkthrough",
      "toolgate/turn": 1,
      "toolgate/call_id": values["call-id"] ?? randomUUID(),
      "toolgate/capability": values.capability,
      ...(values["approval-id"] ? { "toolgate/approval_id": values["approval-id"] } : {}),
    },
  });
  const content = (result.content ?? []) as Array<{ type: string; text?: string }>;
  for (const c of content) if (c.type === "text") process.stdout.write(c.text + "\n");
  process.exitCode = result.isError ? 1 : 0;
} finally {
  await client.close();
}
