/**
 * The proxy in front of the real @modelcontextprotocol/server-everything passes its resources,
 * resource templates, prompts and completions through, asked by the real SDK v2 client in both
 * revisions over Streamable HTTP and by the v1 client; a request naming nothing served is a -32602
 * naming the field. In front of a hostile upstream (test/mcp/fixtures/hostile-server.mjs) what it
 * lists is bounded, bad icons are dropped with a line for the operator, a huge resource is refused,
 * and a hung one times out without stalling another read.
 */
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client, ProtocolError, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as V1HttpTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createGateway } from "../../../src/runtime/gateway.js";
import { openStore } from "../../../src/idempotency/open.js";
import { serveHttp, type HttpHandle } from "../../../src/mcp/transports/http.js";
import { createProxy, type Proxy } from "../../../src/mcp/proxy/proxy.js";
import { MAX_LISTED, MAX_TEMPLATE_EXPRESSIONS, PAGE_SIZE } from "../../../src/mcp/proxy/pass-through.js";
import { refusal } from "../support.js";

const everything = fileURLToPath(import.meta.resolve("@modelcontextprotocol/server-everything/dist/index.js"));
const hostile = fileURLToPath(new URL("../fixtures/hostile-server.mjs", import.meta.url));

interface Served {
  proxy: Proxy;
  http: HttpHandle;
  logs: string[];
}

async function serve(args: string[], timeoutMs?: number): Promise<Served> {
  const logs: string[] = [];
  const proxy = await createProxy({
    upstream: { command: process.execPath, args },
    gateway: async (tools) => createGateway({ tools, store: await openStore("memory:"), audit: false }),
    log: (line) => logs.push(line),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
  });
  const http = await serveHttp(proxy.gateway, { port: 0, warn: () => {}, passThrough: proxy.passThrough });
  return { proxy, http, logs };
}

const clients: Array<{ close(): Promise<void> }> = [];
let front: Served;

async function connect(url: URL, era: "2025-11-25" | "2026-07-28"): Promise<Client> {
  const c = new Client(
    { name: `pass-through-${era}`, version: "1.0.0" },
    era === "2026-07-28" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
  );
  await c.connect(new StreamableHTTPClientTransport(url));
  clients.push(c);
  return c;
}

beforeAll(async () => {
  front = await serve([everything, "stdio"]);
}, 60_000);

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await front?.http.close();
  await front?.proxy.close({ grace_ms: 100 });
});

describe.each(["2025-11-25", "2026-07-28"] as const)(
  "a %s client, server-everything behind the proxy",
  { timeout: 60_000 },
  (era) => {
    it("declares what the upstream declares and lists its resources and templates", async () => {
      const c = await connect(front.http.url, era);
      const caps = c.getServerCapabilities();
      expect(caps?.resources).toBeDefined();
      expect(caps?.prompts).toBeDefined();
      expect(caps?.completions).toBeDefined();
      const { resources } = await c.listResources();
      expect(resources.map((r) => r.uri)).toContain("demo://resource/static/document/architecture.md");
      const { resourceTemplates } = await c.listResourceTemplates();
      expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual([
        "demo://resource/dynamic/text/{resourceId}",
        "demo://resource/dynamic/blob/{resourceId}",
      ]);
    });

    it("reads a listed resource and one made from a template", async () => {
      const c = await connect(front.http.url, era);
      const listed = await c.readResource(
        { uri: "demo://resource/static/document/architecture.md" },
        { cacheMode: "bypass" },
      );
      expect(listed.contents[0]!.uri).toBe("demo://resource/static/document/architecture.md");
      expect(String((listed.contents[0] as { text?: string }).text).length).toBeGreaterThan(0);
      const made = await c.readResource({ uri: "demo://resource/dynamic/blob/7" }, { cacheMode: "bypass" });
      expect(typeof (made.contents[0] as { blob?: string }).blob).toBe("string");
    });

    it("lists prompts, gets one with arguments, and completes an argument", async () => {
      const c = await connect(front.http.url, era);
      const { prompts } = await c.listPrompts();
      expect(prompts.map((p) => p.name)).toEqual([
        "simple-prompt",
        "args-prompt",
        "completable-prompt",
        "resource-prompt",
      ]);
      expect(prompts.find((p) => p.name === "args-prompt")?.title).toBe("Arguments Prompt");
      const got = await c.getPrompt({ name: "args-prompt", arguments: { city: "Lyon" } });
      expect(JSON.stringify(got.messages)).toContain("Lyon");
      const done = await c.complete({
        ref: { type: "ref/prompt", name: "completable-prompt" },
        argument: { name: "department", value: "E" },
      });
      expect(done.completion.values).toContain("Engineering");
    });

    it("refuses an unknown prompt, a resource no upstream serves and a bad completion ref, naming the field", async () => {
      const c = await connect(front.http.url, era);
      const prompt = await refusal(c.getPrompt({ name: "args-prompts" }), ProtocolError);
      expect(prompt.code).toBe(-32602);
      expect(prompt.message).toContain(
        'prompts/get params.name "args-prompts" is not a prompt this server serves; did you mean "args-prompt"?',
      );
      const ref = await refusal(
        c.complete({ ref: { type: "ref/resource", uri: "demo://nothing/{x}" }, argument: { name: "x", value: "" } }),
        ProtocolError,
      );
      expect(ref.code).toBe(-32602);
      expect(ref.message).toContain(
        'completion/complete params.ref.uri "demo://nothing/{x}" is not a resource template',
      );
      // One upstream: a URI it does not list goes to it (it may make it), and its refusal comes back naming it.
      const read = await refusal(c.readResource({ uri: "demo://nothing" }, { cacheMode: "bypass" }), ProtocolError);
      expect(read.code).toBe(-32602);
      expect(read.message).toContain("resources/read: the upstream");
      expect(read.message).toContain("server-everything");
    });
  },
);

describe("the v1 client (2025-11-25)", { timeout: 60_000 }, () => {
  it("lists and reads resources and gets a prompt", async () => {
    const c = new V1Client({ name: "v1", version: "1.0.0" });
    await c.connect(new V1HttpTransport(front.http.url));
    clients.push(c);
    const { resources } = await c.listResources();
    expect(resources.length).toBeGreaterThan(0);
    const read = await c.readResource({ uri: "demo://resource/dynamic/text/3" });
    expect(JSON.stringify(read.contents)).toContain("3");
    const got = await c.getPrompt({ name: "simple-prompt" });
    expect(got.messages.length).toBeGreaterThan(0);
  });
});

describe("a hostile upstream", { timeout: 120_000 }, () => {
  let bad: Served;
  beforeAll(async () => {
    bad = await serve([hostile], 1_000);
  }, 60_000);
  afterAll(async () => {
    await bad?.http.close();
    await bad?.proxy.close({ grace_ms: 100 });
  });

  it("serves at most MAX_LISTED of its 10,000 resources, in pages, and leaves out an over-long URI", async () => {
    const c = await connect(bad.http.url, "2026-07-28");
    const pages = await c.listResources();
    expect(pages.resources.length).toBe(MAX_LISTED - 1);
    expect(pages.resources.some((r) => r.uri.length > 2048)).toBe(false);
    expect(bad.logs.some((l) => l.includes(`more than ${MAX_LISTED} items`))).toBe(true);
    expect(bad.logs.some((l) => l.includes("a resource left out: its uri is 5010 characters, over 2048"))).toBe(true);
    const raw = await c.listResources({ cursor: `resources:${PAGE_SIZE}` });
    expect(raw.resources[0]!.name).toBe(pages.resources[PAGE_SIZE]!.name);
    const { resourceTemplates } = await c.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.name)).toEqual(["item"]);
    expect(bad.logs.some((l) => l.includes(`has 17 expressions, over ${MAX_TEMPLATE_EXPRESSIONS}`))).toBe(true);
    const cursor = await refusal(c.listResources({ cursor: "resources:999999" }), ProtocolError);
    expect(cursor.code).toBe(-32602);
    expect(cursor.message).toContain("resources/list params.cursor");
  });

  it("rebuilds its prompt messages: text escaped, unknown fields gone, bad blocks left out saying why", async () => {
    const c = await connect(bad.http.url, "2026-07-28");
    const got = await c.getPrompt({ name: "greet", arguments: { who: "hostile" } });
    expect(got.messages).toEqual([
      { role: "user", content: { type: "text", text: "a\\u{202E}b\\u{001B}[2J" } },
      {
        role: "user",
        content: {
          type: "text",
          text: "[toolgate left out a content block: the image has a mime_type that is not an image/… media type]",
        },
      },
      {
        role: "assistant",
        content: {
          type: "text",
          text: "[toolgate left out a content block: the resource link has a uri that is not an absolute URI of at most 2048 characters]",
        },
      },
    ]);
  });

  it.each(["2025-11-25", "2026-07-28"] as const)(
    "a %s client: resources and templates keep MCP's annotations, each value checked, the bad ones said and left out",
    async (era) => {
      const c = await connect(bad.http.url, era);
      const { resources } = await c.listResources();
      const byUri = (uri: string) => resources.find((r) => r.uri === uri);
      expect(byUri("hostile://item/1")?.annotations).toEqual({
        audience: ["user"],
        priority: 0.5,
        lastModified: "2025-01-12T15:00:58Z",
      });
      // A priority of 7 would have failed the SDK's check of the whole page: only the values go.
      expect(byUri("hostile://item/2")).toEqual({ uri: "hostile://item/2", name: "item-2" });
      expect(byUri("hostile://item/3")).toEqual({ uri: "hostile://item/3", name: "item-3" });
      const { resourceTemplates } = await c.listResourceTemplates();
      expect(resourceTemplates[0]).toEqual({
        uriTemplate: "hostile://item/{n}",
        name: "item",
        annotations: { priority: 0.25 },
      });
      for (const line of [
        'a resource "hostile://item/2": annotations.audience left out (not a list of "user" and "assistant", each at most once)',
        'a resource "hostile://item/2": annotations.priority left out (not a number from 0 to 1)',
        'a resource "hostile://item/2": annotations.lastModified left out (not an ISO 8601 date-time such as 2025-01-12T15:00:58Z)',
        'a resource "hostile://item/3": annotations left out (not an object)',
        'a resource template "hostile://item/{n}": annotations.audience left out',
      ])
        expect(bad.logs.some((l) => l.includes(line))).toBe(true);
      expect(JSON.stringify(resources)).not.toContain("<script>");
    },
  );

  it.each(["2025-11-25", "2026-07-28"] as const)(
    "a %s client: a prompt's content blocks keep their checked annotations, a left-out block none",
    async (era) => {
      const c = await connect(bad.http.url, era);
      const got = await c.getPrompt({ name: "greet", arguments: { who: "annotated" } });
      expect(got.messages[0]).toEqual({
        role: "user",
        content: {
          type: "text",
          text: "first",
          annotations: { priority: 0.9, lastModified: "2025-01-12T15:00:58.5+01:00" },
        },
      });
      expect(got.messages[1]!.content).toMatchObject({
        type: "resource_link",
        uri: "hostile://item/1",
        annotations: { priority: 1 },
      });
      expect(got.messages[2]!.content).toEqual({
        type: "resource",
        resource: { uri: "hostile://item/2", text: "two" },
        annotations: { audience: ["user"] },
      });
      expect(got.messages[3]!.content).toEqual({
        type: "text",
        text: "[toolgate left out a content block: the image has a mime_type that is not an image/… media type]",
      });
      expect(
        bad.logs.some((l) =>
          l.includes(
            'prompts/get "greet": a text block\'s annotations.audience left out (not a list of "user" and "assistant", each at most once)',
          ),
        ),
      ).toBe(true);
    },
  );

  it("lists only the icons that are https: or data: images within bounds, and says why the rest were dropped", async () => {
    const c = await connect(bad.http.url, "2025-11-25");
    const { tools } = await c.listTools();
    const shiny = tools.find((t) => t.name === "shiny")!;
    expect(shiny.title).toBe("Shiny");
    expect(shiny.icons?.map((i) => i.src.slice(0, 22))).toEqual(["https://example.com/ic", "data:image/png;base64,"]);
    const { resources } = await c.listResources();
    expect(resources.find((r) => r.uri === "hostile://item/0")?.icons?.length).toBe(2);
    const { prompts } = await c.listPrompts();
    expect(prompts[0]!.icons).toBeUndefined();
    expect(
      bad.logs.some((l) =>
        l.includes('tool "shiny": icon 1 left out (a "javascript": URI; only https: or data: pass)'),
      ),
    ).toBe(true);
    expect(bad.logs.some((l) => l.includes('icon 3 left out (a data: URI of type "text/html", not image/*)'))).toBe(
      true,
    );
    expect(bad.logs.some((l) => l.includes("icon 5 left out (an https: URI of 5024 characters, over 2048)"))).toBe(
      true,
    );
  });

  it("refuses a huge resource, and a hung read times out while another read answers", async () => {
    // The huge answer goes through a proxy of its own whose time limit it cannot reach: on a busy
    // machine 3 MiB over stdio took longer than the 1 s that makes the hung read time out.
    const patient = await serve([hostile], 600_000);
    try {
      const p = await connect(patient.http.url, "2026-07-28");
      const huge = await refusal(p.readResource({ uri: "hostile://huge" }, { cacheMode: "bypass" }), ProtocolError);
      expect(huge.code).toBe(-32603);
      expect(huge.message).toMatch(/answer for "hostile:\/\/huge" is \d+ characters of JSON, over the 3145728/);
    } finally {
      await patient.http.close();
      await patient.proxy.close({ grace_ms: 100 });
    }
    const c = await connect(bad.http.url, "2026-07-28");
    const hung = c.readResource({ uri: "hostile://hang" }, { cacheMode: "bypass" });
    const other = await c.readResource({ uri: "hostile://item/5" }, { cacheMode: "bypass" });
    expect((other.contents[0] as { text: string }).text).toBe("content of hostile://item/5");
    // A content URI holding control or invisible characters is replaced by the one read.
    const six = await c.readResource({ uri: "hostile://item/6" }, { cacheMode: "bypass" });
    expect(six.contents).toEqual([{ uri: "hostile://item/6", text: "six" }]);
    const timedOut = await refusal(hung, ProtocolError);
    expect(timedOut.code).toBe(-32603);
    expect(timedOut.message).toContain("resources/read: the upstream");
    expect(timedOut.message).toContain("gave no usable answer (Request timed out");
  });

  it("passes completion values within bounds, and relays an answer past MCP's as an error naming the upstream", async () => {
    const c = await connect(bad.http.url, "2025-11-25");
    const done = await c.complete({ ref: { type: "ref/prompt", name: "greet" }, argument: { name: "who", value: "" } });
    expect(done.completion.values).toEqual(Array.from({ length: 99 }, (_, i) => `v${i}`));
    expect(done.completion.hasMore).toBe(true);
    const many = await refusal(
      c.complete({ ref: { type: "ref/prompt", name: "greet" }, argument: { name: "who", value: "many" } }),
      ProtocolError,
    );
    expect(many.code).toBe(-32603);
    expect(many.message).toContain("completion/complete: the upstream");
    expect(many.message).toContain("gave no usable answer");
  });
});
