/**
 * The proxy's direct tools/call (`src/mcp/proxy/upstream-call.ts`) against a real SDK v2 server over
 * stdio in both revisions (`fixtures/call-upstream.mjs`, behind the logging wrapper that records
 * what the upstream receives): it answers as the SDK's request funnel answers the same call, under a
 * string id of its own with the era's `_meta` envelope; a cancel and a passed bound reach the upstream
 * as notifications/cancelled naming that id; an error answer, a closed connection and a closed
 * client end the call as the funnel ends it.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { ProxyClient } from "../../../src/mcp/proxy/upstream-call.js";
import { upstreamResultSchema } from "../../../src/mcp/proxy/upstream-content.js";
import { orTaskAnswer, tasksCapabilities } from "../../../src/mcp/proxy/upstream-tasks.js";
import { tempDir } from "../support.js";

const wrapper = fileURLToPath(new URL("../fixtures/logging-wrapper.mjs", import.meta.url));
const upstream = fileURLToPath(new URL("../fixtures/call-upstream.mjs", import.meta.url));

const clients: ProxyClient[] = [];
afterAll(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
});

type Era = "2025-11-25" | "2026-07-28";
type Line = { id?: unknown; method?: string; params?: Record<string, unknown> };

async function connected(era: Era) {
  const dir = tempDir("upstream-call");
  const log = join(dir, "received.jsonl");
  const called = join(dir, "called.log");
  const client = new ProxyClient(
    { name: "toolgate-proxy", version: "0.1.0" },
    {
      capabilities: tasksCapabilities(),
      ...(era === "2026-07-28" ? { versionNegotiation: { mode: { pin: era } } } : {}),
    },
  );
  clients.push(client);
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [wrapper, process.execPath, upstream],
      env: { ...getDefaultEnvironment(), WRAPPER_LOG: log, CALL_LOG: called },
      stderr: "ignore",
    }),
  );
  const received = (): Line[] =>
    (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : []).map((l) => JSON.parse(l) as Line);
  const cancelledUpstream = () => (existsSync(called) ? readFileSync(called, "utf8") : "").includes("cancelled");
  const schema = orTaskAnswer(upstreamResultSchema(client.getProtocolEra() === "modern"));
  return { client, received, cancelledUpstream, schema };
}

/** Polls `what` until it holds (the test's own timeout ends a wait that never does). */
async function until(what: () => boolean): Promise<void> {
  while (!what()) await new Promise((r) => setTimeout(r, 20));
}

const settled = (p: Promise<unknown>) =>
  p.then(
    (value) => ({ value }),
    (err: Error & { code?: unknown }) => ({ error: err.message, code: err.code, name: err.name }),
  );

const live = () => ({ signal: new AbortController().signal, timeout: 10_000 });

/**
 * Aborts a call in flight with `reason`: it ends REQUEST_TIMEOUT saying so, and the upstream gets
 * notifications/cancelled naming its id and the reason.
 */
async function abortedWith(abort: AbortController, call: Promise<unknown>, received: () => Line[], reason: string) {
  abort.abort(reason);
  expect(await call).toMatchObject({ code: "REQUEST_TIMEOUT", error: expect.stringContaining(reason) });
  const id = received().find((l) => l.method === "tools/call")!.id;
  await until(() => received().some((l) => l.method === "notifications/cancelled"));
  expect(received().find((l) => l.method === "notifications/cancelled")?.params).toMatchObject({
    requestId: id,
    reason,
  });
}

describe.each(["2025-11-25", "2026-07-28"] as const)("the direct tools/call, %s", { timeout: 60_000 }, (era) => {
  it("answers as the SDK's request funnel does, under an id of its own and the era's envelope", async () => {
    const { client, received, schema } = await connected(era);
    expect(client.getNegotiatedProtocolVersion()).toBe(era);
    expect(client.directReady()).toBe(true);
    const params = { name: "echo", arguments: { text: "hello" } };
    const direct = await client.callDirect(params, schema, live());
    const funnel = await client.request({ method: "tools/call", params }, schema, live());
    expect(direct).toEqual(funnel);
    expect(direct).toMatchObject({ content: [{ type: "text", text: "hello" }], structuredContent: { text: "hello" } });
    const calls = received().filter((l) => l.method === "tools/call");
    expect(calls.map((l) => typeof l.id)).toEqual(["string", "number"]);
    expect(calls[0]!.id).toMatch(/^toolgate:\d+$/);
    // The envelope of a 2026-07-28 request on both, none on 2025-11-25.
    const envelopes = calls.map(
      (l) => (l.params?._meta as Record<string, unknown> | undefined)?.["io.modelcontextprotocol/protocolVersion"],
    );
    expect(envelopes).toEqual(era === "2026-07-28" ? [era, era] : [undefined, undefined]);
  });

  it("merges a call's own _meta with the envelope, and the next call's envelope carries none of it", async () => {
    const { client, received, schema } = await connected(era);
    const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const args = { name: "echo", arguments: { text: "x" } };
    await client.callDirect({ ...args, _meta: { traceparent } }, schema, live());
    await client.callDirect(args, schema, live());
    const metas = received()
      .filter((l) => l.method === "tools/call")
      .map((l) => l.params?._meta as Record<string, unknown> | undefined);
    const version = "io.modelcontextprotocol/protocolVersion";
    expect(metas.map((m) => m?.traceparent)).toEqual([traceparent, undefined]);
    expect(metas.map((m) => m?.[version])).toEqual(era === "2026-07-28" ? [era, era] : [undefined, undefined]);
  });

  it("ends an error answer as the funnel does", async () => {
    const { client, schema } = await connected(era);
    for (const name of ["fail", "no_such_tool"]) {
      const params = { name, arguments: {} };
      expect(await settled(client.callDirect(params, schema, live()))).toEqual(
        await settled(client.request({ method: "tools/call", params }, schema, live())),
      );
    }
  });

  it("sends a cancel on as notifications/cancelled naming the call, and the upstream stops", async () => {
    const { client, received, cancelledUpstream, schema } = await connected(era);
    const abort = new AbortController();
    const call = settled(
      client.callDirect({ name: "wait", arguments: {} }, schema, { signal: abort.signal, timeout: 10_000 }),
    );
    await until(() => received().some((l) => l.method === "tools/call"));
    await abortedWith(abort, call, received, "the caller pressed Esc");
    // The SDK's 2026-07-28 stdio server does not abort a handler on notifications/cancelled (nor for the funnel's cancel).
    if (era === "2025-11-25") await until(cancelledUpstream);
  });

  it("cancels a call past its bound with REQUEST_TIMEOUT", async () => {
    const { client, received, schema } = await connected(era);
    const signal = new AbortController().signal;
    expect(
      await settled(client.callDirect({ name: "wait", arguments: {} }, schema, { signal, timeout: 300 })),
    ).toMatchObject({
      code: "REQUEST_TIMEOUT",
      error: expect.stringContaining("Request timed out"),
    });
    await until(() => received().some((l) => l.method === "notifications/cancelled"));
    const id = received().find((l) => l.method === "tools/call")!.id;
    expect(received().find((l) => l.method === "notifications/cancelled")?.params).toMatchObject({ requestId: id });
  });

  it("keeps no timer of its own when its signal bounds it: past its timeout it waits, and ends on the abort", async () => {
    const { client, received, schema } = await connected(era);
    const abort = new AbortController();
    let ended = false;
    const call = settled(
      client.callDirect({ name: "wait", arguments: {} }, schema, {
        signal: abort.signal,
        timeout: 1,
        signalBounds: true,
      }),
    ).finally(() => (ended = true));
    await until(() => received().some((l) => l.method === "tools/call"));
    // A 1 ms timer made with the call would have fired before this later, longer one.
    await new Promise((r) => setTimeout(r, 50));
    expect(ended).toBe(false);
    await abortedWith(abort, call, received, "the gateway's bound passed");
  });

  it("ends a call in flight with Connection closed when the connection closes, and refuses one after", async () => {
    const { client, received, schema } = await connected(era);
    const call = settled(client.callDirect({ name: "wait", arguments: {} }, schema, live()));
    await until(() => received().some((l) => l.method === "tools/call"));
    await client.close();
    expect(await call).toMatchObject({
      error: expect.stringContaining("Connection closed"),
      code: "CONNECTION_CLOSED",
    });
    expect(client.directReady()).toBe(false);
    expect(await settled(client.callDirect({ name: "echo", arguments: { text: "x" } }, schema, live()))).toMatchObject({
      error: "Not connected",
    });
  });
});
