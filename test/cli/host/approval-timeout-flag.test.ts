/**
 * `--approval-timeout-ms` of serve and proxy: parsed to the server's approval and hold wait, bad
 * values refused with one clear line before anything starts; and, with a real SDK v2 client of
 * `serve --catalog` over stdio, a 2026-07-28 call held for its client's retry ends at that wait.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import {
  MAX_TIMER_MS,
  MIN_APPROVAL_TIMEOUT_MS,
  parseApprovalTimeout,
  parseGatewayFlags,
} from "../../../src/cli/host/flags.js";
import { rawRequest } from "../../mcp/raw-transport.js";
import { notesServeCommand, tempDir } from "../../mcp/support.js";
import { cli } from "../../support/cli.js";

const refusal = (text: string) =>
  `--approval-timeout-ms must be a whole number of milliseconds from ${MIN_APPROVAL_TIMEOUT_MS} to ${MAX_TIMER_MS} (how long a person has to answer an approval or a question, and a held call waits for its client's retry); received ${JSON.stringify(text)}; example --approval-timeout-ms 600000`;

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const done of cleanup.splice(0).reverse()) await done().catch(() => {});
});

describe("--approval-timeout-ms", () => {
  it("absent leaves the server's default; the range's ends are passed on", () => {
    expect(parseGatewayFlags({}).run).not.toHaveProperty("approvalTimeoutMs");
    expect(parseGatewayFlags({ approvalTimeoutMs: " 1000 " }).run).toMatchObject({ approvalTimeoutMs: 1000 });
    expect(parseApprovalTimeout(String(MAX_TIMER_MS))).toBe(MAX_TIMER_MS);
  });

  it.each(["999", "0", "-1", "1.5", "10s", "", "1e4", String(MAX_TIMER_MS + 1)])(
    "refuses %j naming the flag, the range, what arrived and an example",
    (text) => {
      expect(() => parseApprovalTimeout(text)).toThrow(refusal(text));
    },
  );

  it("serve and proxy refuse a bad value before anything starts", async () => {
    const runs = [
      await cli("serve", "--approval-timeout-ms", "soon"),
      await cli("proxy", "--approval-timeout-ms", "5", "--", "node", "-e", "0"),
    ];
    expect(runs.map((r) => [r.code, r.out, r.err])).toEqual([
      [2, "", `toolgate: ${refusal("soon")} [bad_flag]\n`],
      [2, "", `toolgate: ${refusal("5")} [bad_flag]\n`],
    ]);
  });

  it("serve, proxy and proxy --config refuse the flag given twice, and proxy --config a bad value, before anything starts", async () => {
    const config = join(tempDir("approval-timeout-config"), "servers.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { a: { command: "node", args: ["-e", "0"] } } }));
    const twice = (a: string, b: string) =>
      `--approval-timeout-ms may be given once; received ${JSON.stringify(a)}, then ${JSON.stringify(b)}; give the one you mean, e.g. --approval-timeout-ms 600000`;
    const runs = [
      await cli("serve", "--approval-timeout-ms", "5000", "--approval-timeout-ms", "1000"),
      await cli("proxy", "--approval-timeout-ms", "1000", "--approval-timeout-ms=1000", "--", "node", "-e", "0"),
      await cli("proxy", "--config", config, "--approval-timeout-ms", "1000", "--approval-timeout-ms", "2000"),
      await cli("proxy", "--config", config, "--approval-timeout-ms", "1e3"),
    ];
    expect(runs.map((r) => [r.code, r.out, r.err])).toEqual([
      [2, "", `toolgate: ${twice("5000", "1000")} [bad_flag]\n`],
      [2, "", `toolgate: ${twice("1000", "1000")} [bad_flag]\n`],
      [2, "", `toolgate: ${twice("1000", "2000")} [bad_flag]\n`],
      [2, "", `toolgate: ${refusal("1e3")} [bad_flag]\n`],
    ]);
  });

  it(
    "serve over stdio: a held call waits that long for its client's retry, then ends saying so",
    { timeout: 60_000 },
    async () => {
      const notes = tempDir("approval-timeout");
      const command = notesServeCommand(notes, { catalog: "tasks-catalog.ts" });
      const transport = new StdioClientTransport({
        ...command,
        args: [...command.args, "--approval-timeout-ms", "1000"],
        stderr: "pipe",
      });
      const c = new Client(
        { name: "approval-timeout", version: "1.0.0" },
        { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      await c.connect(transport);
      cleanup.push(() => c.close());
      const envelope = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } },
        "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
      };
      const call = { name: "job_asks", arguments: { name: "late" } };
      const first = await rawRequest(c, "tools/call", call, envelope);
      expect(first.result, JSON.stringify(first)).toMatchObject({ resultType: "input_required" });
      const unanswered = join(notes, "unanswered-late");
      while (!existsSync(unanswered)) await new Promise((r) => setTimeout(r, 50));
      expect(readFileSync(unanswered, "utf8")).toBe("its client did not retry with the answers within 1000 ms");
      const late = await rawRequest(
        c,
        "tools/call",
        {
          ...call,
          requestState: first.result!.requestState,
          inputResponses: { branch: { action: "accept", content: { branch: "main" } } },
        },
        envelope,
      );
      expect(late.error?.code).toBe(-32602);
      expect(late.error?.message).toContain("or its call ended (its retry did not come within 1000 ms)");
    },
  );
});
