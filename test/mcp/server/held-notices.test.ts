/**
 * A held call's progress and log messages go with the request waiting on it now, with a real SDK
 * v2 client (2026-07-28, no tasks extension) over stdio (`serve --catalog`, spawned from source)
 * and Streamable HTTP (in process, with logging): `job_asks` reports before it asks, every 300 ms
 * while its caller has been answered input_required and no retry has come, and twice once the
 * retry answered. The first request hears only what came before its answer, under its
 * progressToken; the retry hears what came after, under its own; what the call reported while no
 * request waited is sent for neither.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Client, Transport } from "@modelcontextprotocol/client";
import { rawRequest } from "../raw-transport.js";
import { tempDir } from "../support.js";
import { heldClient, heldServer } from "./held-serve.js";

type Message = { id?: unknown; method?: string; params?: Record<string, unknown>; result?: Record<string, unknown> };

/** A 2026-07-28 request's `_meta`: elicitation declared, no tasks, log messages at `info`, and a progressToken. */
const meta = (progressToken: string) => ({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } },
  "io.modelcontextprotocol/clientInfo": { name: "held-notices", version: "1" },
  "io.modelcontextprotocol/logLevel": "info",
  progressToken,
});

/** A 2026-07-28 SDK v2 client on `transport`, and every message the server sent it, in order. */
async function client(transport: Transport): Promise<{ c: Client; wire: Message[] }> {
  const c = await heldClient(transport);
  const wire: Message[] = [];
  const onmessage = transport.onmessage;
  transport.onmessage = (m, extra) => {
    wire.push(m as Message);
    onmessage?.(m, extra);
  };
  return { c, wire };
}

const waited = (notes: string, name: string) => {
  const file = join(notes, `waited-${name}`);
  return existsSync(file) ? Number(readFileSync(file, "utf8")) : 0;
};

describe("a held call's progress and log messages", { timeout: 90_000 }, () => {
  it.each(["stdio", "http"] as const)(
    "over %s: go with the request waiting on the call, none while no request waits",
    async (over) => {
      const notes = tempDir("held-notices");
      const { c, wire } = await client(await heldServer(over, notes, { logging: true }));
      const name = `j-${over}`;
      const first = await rawRequest(c, "tools/call", { name: "job_asks", arguments: { name } }, meta("p-first"));
      expect(first.result, JSON.stringify(first)).toMatchObject({ resultType: "input_required" });
      const answeredAt = wire.length;
      // The call reports three times while nobody waits on it.
      while (waited(notes, name) < 3) await new Promise((r) => setTimeout(r, 50));
      const retry = await rawRequest(
        c,
        "tools/call",
        {
          name: "job_asks",
          arguments: { name },
          requestState: first.result!.requestState,
          inputResponses: { branch: { action: "accept", content: { branch: "main" } } },
        },
        meta("p-retry"),
      );
      expect(JSON.stringify(retry.result)).toContain('\\"branch\\":\\"main\\"');
      const told = (m: Message) => String(m.params?.message ?? m.params?.data ?? "");
      const notices = wire.filter((m) => m.method === "notifications/progress" || m.method === "notifications/message");
      // Nothing the call said while no request waited, for any request.
      expect(notices.filter((m) => told(m).includes("waiting"))).toEqual([]);
      // The first request's progress came before its answer, under its token; the retry's under its own.
      const progress = notices.filter((m) => m.method === "notifications/progress");
      for (const m of progress)
        expect(m.params!.progressToken).toBe(wire.indexOf(m) < answeredAt ? "p-first" : "p-retry");
      expect(progress.filter((m) => m.params!.progressToken === "p-retry").map(told)).toContain(`job ${name}: after 2`);
      if (over === "http") {
        // Serve over stdio passes no log messages (no upstream); over HTTP in process it was given logging.
        const logs = notices.filter((m) => m.method === "notifications/message").map(told);
        expect(logs).toEqual([`job ${name}: before`, `job ${name}: after 1`, `job ${name}: after 2`]);
      }
    },
  );
});
