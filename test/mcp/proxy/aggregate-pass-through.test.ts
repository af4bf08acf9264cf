/**
 * The aggregate proxy passes through the resources, prompts and completions of N upstreams: two
 * real server-everything instances (`a`, `b`, each behind the logging wrapper, so the test sees
 * what each one received) and the hostile fixture (`c`). A URI both list is served from the first
 * in config order, named in a start-up line; reads, prompts and completions go to their owner;
 * prompts are namespaced like tools; the client's `_meta` never reaches an upstream.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { openGuardStore } from "../../../src/idempotency/open-guard.js";
import type { GuardStore } from "../../../src/idempotency/guard-store.js";
import { createCapabilityAuthority } from "../../../src/capability/authority.js";
import { keyRingFromMap } from "../../../src/capability/keys.js";
import { createMemoryStore } from "../../../src/idempotency/stores/memory.js";
import { refusal, tempDir } from "../support.js";
import {
  everythingServer,
  filesystemServer,
  memoryServer,
  startAggregate,
  wrapper,
  type Aggregate,
} from "./aggregate-support.js";

const hostile = fileURLToPath(new URL("../fixtures/hostile-server.mjs", import.meta.url));
const node = process.execPath;
let guard: GuardStore;
let agg: Aggregate;
let logA: string;
let logB: string;

/** What one upstream received, by method. */
function received(log: string, method: string): Array<Record<string, unknown>> {
  return (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : [])
    .map((l) => JSON.parse(l) as { method?: string; params?: Record<string, unknown> })
    .filter((m) => m.method === method)
    .map((m) => m.params ?? {});
}

beforeAll(async () => {
  const dir = tempDir("aggregate-pass-through");
  logA = join(dir, "a.jsonl");
  logB = join(dir, "b.jsonl");
  guard = await openGuardStore("memory:");
  agg = await startAggregate(
    dir,
    {
      mcpServers: {
        a: { command: node, args: [wrapper, node, everythingServer, "stdio"], env: { WRAPPER_LOG: logA } },
        b: { command: node, args: [wrapper, node, everythingServer, "stdio"], env: { WRAPPER_LOG: logB } },
        c: { command: node, args: [hostile] },
      },
    },
    guard,
    { closeGuard: true },
  );
}, 90_000);

afterAll(async () => {
  await agg?.close();
});

describe("the aggregate proxy's pass-through", { timeout: 60_000 }, () => {
  it("serves a URI two upstreams list from the first in config order, and says so at start", async () => {
    expect(agg.logs).toContain(
      'toolgate proxy: the resource "demo://resource/static/document/architecture.md" is listed by a and b; a\'s is served (first in config order)',
    );
    expect(
      agg.logs.some((l) =>
        l.includes('the resource template "demo://resource/dynamic/text/{resourceId}" is listed by a and b'),
      ),
    ).toBe(true);
    const first = await agg.client.listResources();
    const uris = [...first.resources.map((r) => r.uri)];
    let cursor = first.nextCursor;
    while (cursor !== undefined) {
      const next = await agg.client.listResources({ cursor });
      uris.push(...next.resources.map((r) => r.uri));
      cursor = next.nextCursor;
    }
    expect(uris.filter((u) => u === "demo://resource/static/document/architecture.md")).toHaveLength(1);
    // c's first 1,000: its three odd ones (one left out, its URI too long) and items 0 to 996.
    expect(uris).toContain("hostile://item/996");
    expect(uris).not.toContain("hostile://item/997");
    expect(uris).toHaveLength(7 + 999);
    expect(new Set(uris).size).toBe(uris.length);
  });

  it("routes each read to its owner: a listed URI, a template's, and refuses one nobody serves", async () => {
    const hostileItem = await agg.client.readResource({ uri: "hostile://item/3" });
    expect(hostileItem.contents).toEqual([{ uri: "hostile://item/3", text: "content of hostile://item/3" }]);
    const made = await agg.client.readResource({ uri: "demo://resource/dynamic/text/4" });
    expect(JSON.stringify(made.contents)).toContain("4");
    expect(received(logA, "resources/read").map((p) => p.uri)).toContain("demo://resource/dynamic/text/4");
    expect(received(logB, "resources/read")).toEqual([]);
    const nowhere = await refusal(agg.client.readResource({ uri: "nowhere://x" }), McpError);
    expect(nowhere.code).toBe(-32602);
    expect(nowhere.message).toContain(
      'resources/read params.uri "nowhere://x" is not a resource any upstream lists, and matches none of their templates',
    );
  });

  it("namespaces prompts like tools, and sends prompts/get and completions to the prompt's server by its own name", async () => {
    const { prompts } = await agg.client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual([
      "a__simple-prompt",
      "a__args-prompt",
      "a__completable-prompt",
      "a__resource-prompt",
      "b__simple-prompt",
      "b__args-prompt",
      "b__completable-prompt",
      "b__resource-prompt",
      "c__greet",
    ]);
    const got = await agg.client.getPrompt({
      name: "b__args-prompt",
      arguments: { city: "Oslo" },
      _meta: { "toolgate/capability": "tg1.secret" },
    });
    expect(JSON.stringify(got.messages)).toContain("Oslo");
    expect(received(logB, "prompts/get")).toEqual([{ name: "args-prompt", arguments: { city: "Oslo" } }]);
    expect(received(logA, "prompts/get")).toEqual([]);
    const done = await agg.client.complete({
      ref: { type: "ref/prompt", name: "b__completable-prompt" },
      argument: { name: "department", value: "Mar" },
    });
    expect(done.completion.values).toContain("Marketing");
    expect(received(logB, "completion/complete")[0]?.ref).toEqual({ type: "ref/prompt", name: "completable-prompt" });
    const unknown = await refusal(agg.client.getPrompt({ name: "simple-prompt" }), McpError);
    expect(unknown.code).toBe(-32602);
    expect(unknown.message).toContain('prompts/get params.name "simple-prompt" is not a prompt this server serves');
  });
});

describe("a server's include_/exclude_ lists for prompts and resources", { timeout: 60_000 }, () => {
  it("hide what they name from the lists and from reads, even a URI a served template matches", async () => {
    const listed = await startAggregate(
      tempDir("aggregate-pass-through-lists"),
      {
        mcpServers: {
          c: {
            command: node,
            args: [hostile],
            toolgate: { exclude_resources: ["hostile://item/1*", "hostile://huge"], include_prompts: ["gre*"] },
          },
        },
      },
      await openGuardStore("memory:"),
      { closeGuard: true },
    );
    try {
      const { resources } = await listed.client.listResources();
      const uris = resources.map((r) => r.uri);
      expect(uris).toContain("hostile://item/2");
      expect(uris.filter((u) => u.startsWith("hostile://item/1") || u === "hostile://huge")).toEqual([]);
      expect((await listed.client.listPrompts()).prompts.map((p) => p.name)).toEqual(["c__greet"]);
      const hidden = await refusal(listed.client.readResource({ uri: "hostile://item/12" }), McpError);
      expect(hidden.code).toBe(-32602);
      expect(hidden.message).toContain(
        'resources/read params.uri "hostile://item/12" is not a resource any upstream lists',
      );
      const read = await listed.client.readResource({ uri: "hostile://item/2" });
      expect(read.contents).toEqual([{ uri: "hostile://item/2", text: "content of hostile://item/2" }]);
    } finally {
      await listed.close();
    }
  });

  it("refuse at start an exact prompt name the server does not serve, naming the key and the nearest name", async () => {
    const failed = await startAggregate(
      tempDir("aggregate-pass-through-typo"),
      { mcpServers: { c: { command: node, args: [hostile], toolgate: { exclude_prompts: ["gret"] } } } },
      await openGuardStore("memory:"),
      { closeGuard: true },
    ).then(
      async (a) => {
        await a.close();
        return null;
      },
      (e: Error) => e,
    );
    expect(failed?.message).toBe(
      'mcpServers.c.toolgate.exclude_prompts names the prompt "gret", which c does not serve; did you mean "greet"?; its prompts are "greet"',
    );
  });
});

describe("a gateway with keys", { timeout: 60_000 }, () => {
  it("answers pass-through reads only with a capability that verifies", async () => {
    const keys = keyRingFromMap({ k1: randomBytes(32).toString("base64") }, "test");
    const store = createMemoryStore();
    const keyed = await startAggregate(
      tempDir("aggregate-pass-through-keys"),
      { mcpServers: { c: { command: node, args: [hostile] } } },
      await openGuardStore("memory:"),
      { closeGuard: true, keys, store },
    );
    try {
      const none = await refusal(keyed.client.readResource({ uri: "hostile://item/1" }), McpError);
      expect(none.code).toBe(-32600);
      expect(none.message).toContain(
        'resources/read needs a capability on this server: send it in params._meta["toolgate/capability"]',
      );
      const forged = await refusal(
        keyed.client.listPrompts({ _meta: { "toolgate/capability": "tg1.forged" } }),
        McpError,
      );
      expect(forged.message).toContain("prompts/list: the capability sent does not verify on this server");
      const grant = createCapabilityAuthority({ keys, store }).issue({
        rights: ["read"],
        objects: ["tool:c__shiny"],
        ttl_ms: 600_000,
      });
      const read = await keyed.client.readResource({
        uri: "hostile://item/1",
        _meta: { "toolgate/capability": grant },
      });
      expect(read.contents).toEqual([{ uri: "hostile://item/1", text: "content of hostile://item/1" }]);
    } finally {
      await keyed.close();
    }
  });
});

describe("server-filesystem and server-memory behind the aggregate", { timeout: 60_000 }, () => {
  it("declares resources because server-memory does, and no prompts or completions, which neither does", async () => {
    const dir = tempDir("aggregate-pass-through-fs");
    const both = await startAggregate(
      dir,
      {
        mcpServers: {
          fs: { command: node, args: [filesystemServer, dir] },
          memory: { command: node, args: [memoryServer], env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") } },
        },
      },
      await openGuardStore("memory:"),
      { closeGuard: true },
    );
    try {
      const caps = both.client.getServerCapabilities();
      // server-memory declares both, so the aggregate passes on its list changes and subscriptions.
      expect(caps?.resources).toEqual({ subscribe: true, listChanged: true });
      expect(caps?.prompts).toBeUndefined();
      expect(caps?.completions).toBeUndefined();
      const { resources } = await both.client.listResources();
      expect(both.logs).toContain(
        `toolgate proxy: passing through ${resources.length} resources, 0 resource templates, 0 prompts`,
      );
      // Only memory serves resources, so a URI it does not list still goes to it, and its answer names it.
      const read = await refusal(both.client.readResource({ uri: "memory://nothing" }), McpError);
      expect(read.message).toContain("resources/read: the upstream memory answered");
      const prompts = await refusal(both.client.listPrompts(), McpError);
      expect(prompts.code).toBe(-32601);
    } finally {
      await both.close();
    }
  });
});
