/**
 * The proxy's direct tools/call (`upstream-call.ts`, `upstream-lines.ts`) against a hostile upstream
 * (`fixtures/hostile-upstream.mjs`, raw lines): `toolgate proxy` from source over stdio, an SDK v2 client in front.
 * Answers to ids never sent, an answer twice, a result and an error together and a `_meta` that is no object (each
 * its call's error at once, saying what arrived, not a wait for its bound), an answer after its call's bound, a result `_meta` forging toolgate's observation, bytes that are not UTF-8, an answer in
 * pieces, two messages glued on one line, a structuredContent too deep to serialise and a line over the proxy's
 * 10 MiB bound: each call gets its own answer or a
 * failure naming the upstream, no call gets another's, and the proxy serves the next call after each (after the
 * last, from the upstream it starts again).
 */
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { MAX_STRUCTURED_DEPTH } from "../../../src/mcp/proxy/upstream-content.js";
import { proxyProcess } from "../../support/proxy-process.js";
import { obsOf, textOf } from "../support.js";

const hostile = fileURLToPath(new URL("../fixtures/hostile-upstream.mjs", import.meta.url));
let client: Client;
let transport: StdioClientTransport;

beforeAll(async () => {
  transport = new StdioClientTransport(
    proxyProcess([hostile], "upstream-call-attack", [
      "--tool-timeout-ms",
      "late=1000",
      "--tool-timeout-ms",
      "glued=1000",
    ]),
  );
  client = new Client({ name: "attack", version: "1.0.0" });
  await client.connect(transport);
}, 60_000);
afterAll(async () => {
  await client.close();
});

const call = (name: string, args: Record<string, unknown> = {}) => client.callTool({ name, arguments: args });
const echoed = async (what: string) => {
  const r = await call("echo", { text: what });
  expect(r.isError, JSON.stringify(r)).toBeFalsy();
  expect(textOf(r)).toContain(`echo ${what}`);
};

describe("a hostile upstream behind toolgate proxy", { timeout: 60_000 }, () => {
  it("answers to ids never sent, a result with an error, a _meta that is no object: the call gets its own answer", async () => {
    const r = await call("stray");
    expect(r.isError, JSON.stringify(r)).toBeFalsy();
    expect(textOf(r)).toContain("stray answered");
    expect(textOf(r)).not.toContain("never asked");
    await echoed("after stray");
  });

  it("an answer sent twice: the call gets the first, the next call its own", async () => {
    const r = await call("twice");
    expect(textOf(r)).toContain("first");
    expect(textOf(r)).not.toContain("second");
    await echoed("after twice");
  });

  it.each([
    ["both", '"result", "error"'],
    ["badmeta", '"result"'],
  ])("an answer to %s the schema refuses fails that call at once, naming what arrived", async (name, members) => {
    const r = await call(name);
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain(`the upstream MCP server did not answer ${name}: `);
    expect(textOf(r)).toContain(
      `its answer to tools/call is no JSON-RPC response: it has the members "jsonrpc", "id", ${members}`,
    );
    expect(textOf(r)).not.toContain("time limit");
    await echoed(`after ${name}`);
  });

  it("an answer after its call's bound goes to no other call", async () => {
    const r = await call("late", { delay_ms: 1500 });
    expect(r.isError).toBe(true);
    expect(textOf(r)).not.toContain("late answer");
    // Answered by the upstream only after the late answer was written: the proxy read that one first.
    const after = await call("after_late");
    expect(textOf(after)).toContain("after late");
    expect(textOf(after)).not.toContain("late answer");
    await echoed("after late");
  });

  it("a result _meta forging toolgate's observation is not the client's: the isError result is a failure", async () => {
    const r = await call("meta");
    expect(r.isError).toBe(true);
    expect(obsOf(r).ok).toBe(false);
    expect(JSON.stringify(r)).not.toContain("forged");
  });

  it("bytes that are not UTF-8 are read as U+FFFD; an answer in pieces is read whole", async () => {
    expect(textOf(await call("utf8"))).toContain("\uFFFD");
    expect(textOf(await call("split"))).toContain("split answered");
  });

  it("two messages glued on one line are no JSON: the call fails at its bound, the next is answered", async () => {
    const r = await call("glued");
    expect(textOf(r)).toContain("glued did not finish within 1000 ms");
    await echoed("after glued");
  });

  it("a structuredContent nested 10,000 deep, which cannot be serialised, fails the call naming the bound", async () => {
    const r = await call("deep");
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain(`structuredContent must nest at most ${MAX_STRUCTURED_DEPTH} levels`);
    await echoed("after deep");
  });

  it("a line over the 10 MiB bound ends the upstream's connection: the call fails naming it, the next starts it again", async () => {
    const r = await call("huge");
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain("the upstream MCP server did not answer huge: Connection closed");
    // The proxy starts its upstream again for the next call.
    await echoed("after huge");
  });
});
