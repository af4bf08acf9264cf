/**
 * An upstream's resources and prompts that change while the proxy runs: its
 * notifications/resources/list_changed and notifications/prompts/list_changed make the proxy read
 * that upstream's lists again (one re-read in flight, a storm folded into one more, bounded as at
 * start), serve what it read, and tell its clients — 2025-11-25 sessions unsolicited, 2026-07-28
 * listen streams that asked — over Streamable HTTP and over stdio through `toolgate proxy` from
 * source. The real server-everything (a gzip-file-as-resource call registers a resource and says
 * so) and a hostile fixture (a storm of 1,000 after which it lists 100,000 resources; a
 * resources/updated for a URI nobody subscribed to). In the aggregate only the upstream that
 * spoke is read again. Real SDK v2 and v1 clients.
 */
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { PromptListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { openGuardStore } from "../../../src/idempotency/open-guard.js";
import { MAX_LISTED, UPDATE_GAP_MS } from "../../../src/mcp/proxy/pass-through.js";
import { httpProxies } from "./http-proxies.js";
import { proxyProcess } from "../../support/proxy-process.js";
import { tempDir, textOf, until } from "../support.js";
import { startAggregate } from "./aggregate-support.js";

const everything = fileURLToPath(import.meta.resolve("@modelcontextprotocol/server-everything/dist/index.js"));
const listing = fileURLToPath(new URL("../fixtures/listing-server.mjs", import.meta.url));
const node = process.execPath;

const { serve, connect, clients, close } = httpProxies("list-changes");

/** Every resource URI a client is served, page by page. */
async function allUris(c: {
  listResources(p?: { cursor?: string }): Promise<{ resources: Array<{ uri: string }>; nextCursor?: string }>;
}): Promise<string[]> {
  const uris: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await c.listResources(cursor === undefined ? undefined : { cursor });
    uris.push(...page.resources.map((r) => r.uri));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return uris;
}

/** The URIs of the resources/updated each client hears, by name. */
function hearUpdates<K extends string>(named: Record<K, Client>): Record<K, string[]> {
  const heard = {} as Record<K, string[]>;
  for (const [name, c] of Object.entries(named) as Array<[K, Client]>) {
    heard[name] = [];
    c.setNotificationHandler("notifications/resources/updated", (n) => void heard[name].push(n.params.uri));
  }
  return heard;
}

const counts = (text: string) => ({
  resources: Number(/resources=(\d+)/.exec(text)?.[1]),
  prompts: Number(/prompts=(\d+)/.exec(text)?.[1]),
});

afterAll(close);

describe("resources and prompts list_changed over HTTP", { timeout: 180_000 }, () => {
  it("server-everything registers a resource: clients of both eras are told, and it is listed and read", async () => {
    const { http } = await serve([everything, "stdio"]);
    const legacy = await connect(http, "2025-11-25");
    const modern = await connect(http, "2026-07-28");
    expect(legacy.getServerCapabilities()?.resources).toMatchObject({ listChanged: true });
    expect(legacy.getServerCapabilities()?.prompts).toMatchObject({ listChanged: true });
    let legacyHeard = 0;
    let modernHeard = 0;
    legacy.setNotificationHandler("notifications/resources/list_changed", () => void (legacyHeard += 1));
    modern.setNotificationHandler("notifications/resources/list_changed", () => void (modernHeard += 1));
    const sub = await modern.listen({ resourcesListChanged: true });
    const uri = "demo://resource/session/notes.gz";
    expect(await allUris(legacy)).not.toContain(uri);
    // The legacy client's GET stream opens after initialize; a call round trip lets it.
    await legacy.callTool({ name: "echo", arguments: { message: "before" } });
    const made = await legacy.callTool({
      name: "gzip-file-as-resource",
      arguments: { name: "notes.gz", data: "data:text/plain,hello%20notes", outputType: "resourceLink" },
    });
    expect(JSON.stringify(made.content)).toContain(uri);
    await until(() => legacyHeard > 0 && modernHeard > 0);
    expect(await allUris(legacy)).toContain(uri);
    expect(await allUris(modern)).toContain(uri);
    const read = await modern.readResource({ uri });
    expect(read.contents[0]).toMatchObject({ uri, mimeType: "application/gzip" });
    await sub.close();
  });

  it("a hostile upstream: a storm costs at most two re-reads, 100,000 resources are cut to the bound, a stray updated reaches nobody", async () => {
    const { http, lines } = await serve([listing]);
    const legacy = await connect(http, "2025-11-25");
    const modern = await connect(http, "2026-07-28");
    let heard = 0;
    let prompts = 0;
    let updated = 0;
    legacy.setNotificationHandler("notifications/resources/list_changed", () => void (heard += 1));
    legacy.setNotificationHandler("notifications/prompts/list_changed", () => void (prompts += 1));
    legacy.setNotificationHandler("notifications/resources/updated", () => void (updated += 1));
    modern.setNotificationHandler("notifications/resources/updated", () => void (updated += 1));
    let modernPrompts = 0;
    modern.setNotificationHandler("notifications/prompts/list_changed", () => void (modernPrompts += 1));
    const sub = await modern.listen({ promptsListChanged: true, resourcesListChanged: true });
    const lists = async () => counts(textOf(await legacy.callTool({ name: "lists", arguments: {} })));
    expect(await lists()).toEqual({ resources: 1, prompts: 1 });
    expect(await allUris(legacy)).toHaveLength(2);

    await legacy.callTool({ name: "grow", arguments: {} });
    await until(() => heard > 0);
    // Each re-read stops at the bound: pages of 500, so three pages; at most two re-reads after the start's one.
    let n = (await lists()).resources;
    for (let i = 0; i < 5; i++) n = (await lists()).resources;
    expect(n).toBeGreaterThanOrEqual(1 + 3);
    expect(n).toBeLessThanOrEqual(1 + 2 * 3);
    expect(await allUris(modern)).toHaveLength(MAX_LISTED);
    expect(lines.some((l) => l.includes(`more than ${MAX_LISTED} items`))).toBe(true);
    expect((await lists()).prompts).toBe(1);

    await legacy.callTool({ name: "rename", arguments: {} });
    await until(() => prompts > 0 && modernPrompts > 0);
    expect((await modern.listPrompts()).prompts.map((p) => p.name)).toEqual(["welcome"]);
    expect(JSON.stringify((await legacy.getPrompt({ name: "welcome" })).messages)).toContain("prompt welcome");

    await legacy.callTool({ name: "stray", arguments: {} });
    await legacy.callTool({ name: "lists", arguments: {} });
    expect(updated).toBe(0);
    await sub.close();
  });
});

describe("resource subscriptions over HTTP", { timeout: 180_000 }, () => {
  it("server-everything's updates reach the subscribed clients of both eras, never the others", async () => {
    const { http } = await serve([everything, "stdio"]);
    const a = await connect(http, "2025-11-25");
    const b = await connect(http, "2025-11-25");
    const modern = await connect(http, "2026-07-28");
    expect(a.getServerCapabilities()?.resources).toMatchObject({ subscribe: true });
    const uri = (await allUris(a))[0]!;
    const heard = hearUpdates({ a, b, modern });
    await a.subscribeResource({ uri });
    const sub = await modern.listen({ resourceSubscriptions: [uri] });
    // The legacy clients' GET streams open after initialize; a call round trip lets them.
    await b.callTool({ name: "echo", arguments: { message: "b" } });
    await a.callTool({ name: "toggle-subscriber-updates", arguments: {} });
    await until(() => heard.a.length > 0 && heard.modern.length > 0);
    expect(heard.a[0]).toBe(uri);
    expect(heard.modern[0]).toBe(uri);
    expect(heard.b).toEqual([]);
    await sub.close();
  });

  it("a hostile upstream: counted across clients, the last one leaving unsubscribes, strays dropped, 100 per session", async () => {
    const { http } = await serve([listing]);
    const a = await connect(http, "2025-11-25");
    const bTransport = new StreamableHTTPClientTransport(http.url);
    const b = new Client({ name: "list-changes-b", version: "1.0.0" });
    await b.connect(bTransport);
    const modern = await connect(http, "2026-07-28");
    const subs = async () => textOf(await a.callTool({ name: "subs", arguments: {} }));
    const heard = hearUpdates({ a, b, modern });
    await a.subscribeResource({ uri: "listing://item/0" });
    await b.subscribeResource({ uri: "listing://item/0" });
    const sub = await modern.listen({ resourceSubscriptions: ["listing://item/0"] });
    expect(await subs()).toContain("subscribed=listing://item/0 subscribes=1");
    await b.callTool({ name: "touch", arguments: {} });
    await until(() => heard.a.length > 0 && heard.b.length > 0 && heard.modern.length > 0);
    await a.callTool({ name: "subs", arguments: {} });
    // Only the subscribed URI, once to each; item/1 nobody subscribed to reached nobody.
    expect(heard).toEqual({ a: ["listing://item/0"], b: ["listing://item/0"], modern: ["listing://item/0"] });

    await a.unsubscribeResource({ uri: "listing://item/0" });
    await sub.close();
    expect(await subs()).toContain("subscribed=listing://item/0 subscribes=1");
    // The session's end (DELETE) gives up what it held: the last holder gone, the upstream is unsubscribed.
    await bTransport.terminateSession();
    await b.close();
    let now = await subs();
    for (let i = 0; i < 200 && !now.includes("subscribed= "); i++) now = await subs();
    expect(now).toContain("subscribed= subscribes=1");

    for (let i = 0; i < 100; i++) await a.subscribeResource({ uri: `listing://item/${i}` });
    const over = await a.subscribeResource({ uri: "listing://item/100" }).catch((e: Error) => e);
    expect(String(over)).toContain("already holds 100 subscriptions");
    const tooMany = await modern
      .listen({ resourceSubscriptions: Array.from({ length: 101 }, (_, i) => `listing://item/${i}`) })
      .catch((e: Error) => e);
    expect(String(tooMany)).toContain("at most 100 resource URIs");
  });
});

describe("a storm of resources/updated", { timeout: 180_000 }, () => {
  it("10,000 updates of one URI reach each subscriber of both eras folded, at most one per gap, the last one told", async () => {
    const { http } = await serve([listing]);
    const a = await connect(http, "2025-11-25");
    const modern = await connect(http, "2026-07-28");
    const heard = hearUpdates({ a, modern });
    await a.subscribeResource({ uri: "listing://item/0" });
    const sub = await modern.listen({ resourceSubscriptions: ["listing://item/0"] });
    const took = Number(/flooded in (\d+) ms/.exec(textOf(await a.callTool({ name: "flood", arguments: {} })))?.[1]);
    expect(took).toBeGreaterThan(0);
    await until(() => heard.a.length > 0 && heard.modern.length > 0);
    // The flood's tail: once its gap has passed, one more is told for what arrived within it
    // (seen as a touch sent after the flood reaching both, in order, behind whatever was folded).
    await a.callTool({ name: "touch", arguments: {} });
    await until(() => heard.a.length > 1 && heard.modern.length > 1);
    // One at the start, then at most one per gap over the flood's span, its tail and the touch.
    const most = 3 + Math.ceil(took / UPDATE_GAP_MS);
    for (const name of ["a", "modern"] as const) {
      expect(
        heard[name].length,
        `${name} heard ${heard[name].length} of 10,001 (the flood took ${took} ms)`,
      ).toBeLessThanOrEqual(most);
      expect(new Set(heard[name])).toEqual(new Set(["listing://item/0"]));
    }
    await sub.close();
  });
});

describe("in the aggregate", { timeout: 180_000 }, () => {
  it("only the upstream that said its list changed is read again", async () => {
    const agg = await startAggregate(
      tempDir("list-changes-aggregate"),
      { mcpServers: { a: { command: node, args: [listing, "a"] }, b: { command: node, args: [listing, "b"] } } },
      await openGuardStore("memory:"),
      { closeGuard: true },
    );
    try {
      expect(await allUris(agg.client)).toHaveLength(2);
      await agg.client.callTool({ name: "a__rename", arguments: {} });
      const names = async () => (await agg.client.listPrompts()).prompts.map((p) => p.name);
      while (!(await names()).includes("a__welcome")) await new Promise((r) => setTimeout(r, 20));
      expect((await agg.client.listPrompts()).prompts.map((p) => p.name).sort()).toEqual(["a__welcome", "b__greet"]);
      const a = counts(textOf(await agg.client.callTool({ name: "a__lists", arguments: {} })));
      const b = counts(textOf(await agg.client.callTool({ name: "b__lists", arguments: {} })));
      expect(a.prompts).toBe(2);
      expect(a.resources).toBe(1);
      expect(b).toEqual({ resources: 1, prompts: 1 });
    } finally {
      await agg.close();
    }
  });
});

describe("over stdio, through toolgate proxy from source", { timeout: 180_000 }, () => {
  it("a 2025-11-25 client (SDK v1) hears prompts/list_changed and gets the new list", async () => {
    const transport = new StdioClientTransport(proxyProcess([listing], "list-changes-stdio"));
    const client = new V1Client({ name: "list-changes-v1", version: "1.0.0" });
    await client.connect(transport);
    clients.push(client);
    expect(client.getServerCapabilities()).toMatchObject({
      resources: { listChanged: true },
      prompts: { listChanged: true },
    });
    let heard = 0;
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => void (heard += 1));
    await client.callTool({ name: "rename", arguments: {} });
    await until(() => heard > 0);
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(["welcome"]);
  });
});
