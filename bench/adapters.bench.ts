/**
 * The framework adapters' overhead per call: each framework calling a gateway tool through its
 * adapter (the tool object the framework gets, invoked as the framework invokes it) against the
 * same framework calling the same handler as a tool of its own, with no gateway. The goal is the
 * issue's: adapter ≤ 1.1 × the framework's direct call + the gateway's own median for that
 * authority (A0: `gateway.call`; A2: `gateway.call` on SQLite, which includes the store's settle),
 * measured here beside them.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tool as aiTool, jsonSchema } from "ai";
import { RunContext, tool as agentsTool } from "@openai/agents";
import { tool as lcTool } from "@langchain/core/tools";
import { aiSdkTools } from "../src/adapters/ai-sdk.js";
import { anthropicTools } from "../src/adapters/anthropic.js";
import { langChainTools } from "../src/adapters/langchain.js";
import { openAiAgentsTools } from "../src/adapters/openai-agents.js";
import type { ToolSpec } from "../src/core/tool.js";
import { openStore } from "../src/idempotency/open.js";
import { createMemoryStore } from "../src/idempotency/stores/memory.js";
import { createGateway } from "../src/runtime/gateway.js";
import type { Gateway } from "../src/runtime/types.js";
import type { Harness, Row } from "./harness.js";
import { args, schema } from "./runtime.bench.js";

const handler = () => ({ lines: 0 });
const spec = (effect: "read" | "write"): ToolSpec =>
  ({ name: "file_view", description: "Views a file.", inputSchema: schema, effect, handler }) as ToolSpec;

type Call = (id: string) => Promise<unknown>;

/** Each framework's call of a gateway tool through its adapter, and of the bare handler as its own tool. */
async function frameworks(gateway: Gateway, trajectory: string): Promise<[string, Call, Call][]> {
  const run = { trajectory_id: trajectory };
  const ai = (await aiSdkTools(gateway, run)).tools.file_view;
  const aiBare = aiTool({
    description: "Views a file.",
    inputSchema: jsonSchema(schema as Parameters<typeof jsonSchema>[0]),
    execute: handler,
  });
  const agents = (await openAiAgentsTools(gateway, run)).tools[0];
  const agentsBare = agentsTool({
    name: "file_view",
    description: "Views a file.",
    parameters: schema as never,
    strict: false,
    execute: handler,
  });
  const ctx = new RunContext();
  const json = JSON.stringify(args);
  const lc = (await langChainTools(gateway, run)).tools[0];
  const lcBare = lcTool(handler, { name: "file_view", description: "Views a file.", schema: schema as never });
  const anthropic = (await anthropicTools(gateway, run)).runnable[0]!;
  const anthropicBare = { run: async () => JSON.stringify(handler()) };
  const fnCall = (id: string) => ({ type: "function_call" as const, callId: id, name: "file_view", arguments: json });
  const lcCall = (id: string) => ({ id, name: "file_view", args, type: "tool_call" as const });
  return [
    [
      "ai-sdk",
      async (id) => ai.execute(args, { toolCallId: id, messages: [] }),
      async (id) => aiBare.execute!(args, { toolCallId: id, messages: [], context: {} }),
    ],
    [
      "openai-agents",
      (id) => agents.invoke(ctx, json, { toolCall: fnCall(id) }),
      (id) => agentsBare.invoke(ctx, json, { toolCall: fnCall(id) }),
    ],
    ["langchain", (id) => lc.invoke(lcCall(id)), (id) => lcBare.invoke(lcCall(id))],
    ["anthropic", (id) => anthropic.run(args, { toolUse: { id } }), () => anthropicBare.run()],
  ];
}

export default async function bench(h: Harness): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "toolgate-bench-adapters-"));
  try {
    const levels: [string, Gateway][] = [
      ["A0", createGateway({ tools: [spec("read")], store: createMemoryStore(), audit: false })],
      [
        "A2",
        createGateway({ tools: [spec("write")], store: await openStore(`sqlite:${join(dir, "a2.db")}`), audit: false }),
      ],
    ];
    let n = 0;
    for (const [level, gateway] of levels) {
      const own = () =>
        gateway.call({ trajectory_id: "own", turn: 0, call_id: `g${n++}`, tool: "file_view", arguments: args });
      for (const [name, adapter, direct] of await frameworks(gateway, `bench-${level}`)) {
        const bare = await h.compare({
          area: "adapters",
          hot_path: `${level} ${name} calling the handler as its own tool (no gateway)`,
          toolgate: () => direct(`d${n++}`),
          batch: 50,
          rounds: 20,
        });
        // The adapter and the gateway called directly, alternating, so both see the same machine.
        const row: Row = await h.compare({
          area: "adapters",
          hot_path: `${level} ${name}: tool call through the adapter`,
          toolgate: () => adapter(`c${n++}`),
          peer: { name: `gateway.call (${level})`, fn: own },
          batch: 50,
          rounds: 40,
          // Long enough for the JIT to settle both sides before timing: the first rows ran cold.
          warmup: 20,
        });
        // The goal is on time: the framework's direct call, 10 % on it, plus the gateway's own median.
        const bound = 1.1 * bare.toolgate_median_us + row.peer_median_us!;
        row.goal = `≤ 1.1× direct + gateway (${bound.toFixed(1)} µs)`;
        row.goal_met = row.toolgate_median_us <= bound;
      }
      await gateway.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
