/**
 * What an upstream says beside its answers reaches the proxy's clients, bounded: its progress
 * (server-everything's long-running operation; a hostile server's 10,000 reports), its log
 * messages (level-filtered, cut, escaped, rate-limited, only to the caller of the one call in
 * flight) and its tools/list_changed (a changed definition is held and every connected client
 * hears that its list changed: 2025-11-25 sessions and 2026-07-28 listen streams, over Streamable
 * HTTP in process and over stdio through `toolgate proxy` from source; a storm is folded into at
 * most two re-lists). Real SDK v2 and v1 clients, real servers.
 */
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport as V2StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  LOG_DATA_MAX_CHARS,
  LOGS_PER_CALL,
  PROGRESS_MESSAGE_MAX_CHARS,
} from "../../../src/mcp/proxy/upstream-notices.js";
import { httpProxies, type Era, type Served } from "./http-proxies.js";
import { proxyProcess } from "../../support/proxy-process.js";
import { obsOf, textOf, until } from "../support.js";

const everything = fileURLToPath(import.meta.resolve("@modelcontextprotocol/server-everything/dist/index.js"));
const noisy = fileURLToPath(new URL("../fixtures/noisy-server.mjs", import.meta.url));
const changing = fileURLToPath(new URL("../fixtures/changing-server.mjs", import.meta.url));
const LOG_LEVEL = "io.modelcontextprotocol/logLevel";
const ERAS = ["2025-11-25", "2026-07-28"] as const;

const { serve, connect, clients, close } = httpProxies("notify", { logging: true });
afterAll(close);

describe("progress from the upstream", { timeout: 120_000 }, () => {
  let everythingProxy: Served;
  let noisyProxy: Served;
  beforeAll(async () => {
    [everythingProxy, noisyProxy] = await Promise.all([serve([everything, "stdio"]), serve([noisy])]);
  }, 60_000);

  it.each(ERAS)("a %s client hears server-everything's steps under its own token", async (era) => {
    const c = await connect(everythingProxy.http, era);
    const heard: Array<{ progress: number; message?: string }> = [];
    const r = await c.callTool(
      { name: "trigger-long-running-operation", arguments: { duration: 4, steps: 2 } },
      { onprogress: (p) => heard.push(p) },
    );
    expect(r.isError).toBeFalsy();
    expect(textOf(r)).toContain("Long running operation completed");
    expect(heard.some((p) => /the upstream reports [12] of 2/.test(p.message ?? ""))).toBe(true);
    // Progress is the call's elapsed time, which only grows.
    for (let i = 1; i < heard.length; i++) expect(heard[i]!.progress).toBeGreaterThan(heard[i - 1]!.progress);
  });

  it.each(ERAS)(
    "a %s client hears a flood of 10,000 reports as about one a second, cut and escaped, and other calls are answered meanwhile",
    async (era) => {
      const c = await connect(noisyProxy.http, era);
      const heard: Array<{ message?: string }> = [];
      const started = performance.now();
      const flood = c.callTool({ name: "flood_progress", arguments: {} }, { onprogress: (p) => heard.push(p) });
      const echo = await c.callTool({ name: "echo", arguments: { text: "still here" } });
      expect(textOf(echo)).toContain("still here");
      const r = await flood;
      const elapsed_s = (performance.now() - started) / 1000;
      expect(textOf(r)).toContain("sent 10000 progress notifications");
      // The ticker's rule: the first after a second, then at most one a second.
      expect(heard.length).toBeGreaterThanOrEqual(1);
      expect(heard.length).toBeLessThanOrEqual(Math.ceil(elapsed_s));
      const last = heard.at(-1)!.message!;
      expect(last).toMatch(/the upstream reports \d+ of 10000/);
      expect(last.length).toBeLessThan(PROGRESS_MESSAGE_MAX_CHARS + 150);
      expect(last).not.toContain("\u001b");
    },
  );
});

describe("log messages from the upstream", { timeout: 120_000 }, () => {
  // A proxy of its own for each case: the upstream's rate window is shared by all its calls.
  let noisyProxy: Served;
  beforeEach(async () => {
    noisyProxy = await serve([noisy]);
  }, 60_000);

  type Logged = { level: string; logger?: string; data: unknown };
  function hear(c: Client): Logged[] {
    const got: Logged[] = [];
    c.setNotificationHandler("notifications/message", (n) => void got.push(n.params as Logged));
    return got;
  }

  it.each(ERAS)("a %s client gets the flood bounded: named, cut, escaped, rate-limited", async (era) => {
    const c = await connect(noisyProxy.http, era);
    const got = hear(c);
    if (era === "2025-11-25") await c.setLoggingLevel("info");
    const r = await c.callTool({
      name: "flood_logs",
      arguments: {},
      ...(era === "2026-07-28" ? { _meta: { [LOG_LEVEL]: "info" } } : {}),
    });
    expect(textOf(r)).toContain("sent 10,002 log messages");
    // The answer and the messages sent before it travel on one stream, in order.
    await until(() => got.length >= 3);
    expect(got.length).toBeLessThanOrEqual(LOGS_PER_CALL + 1);
    const error = got.find((m) => m.level === "error")!;
    expect(error.logger).toBe("noisy/db\\u{202E}");
    expect(error.data).toBe("boom \\u{001B}[2J cleared");
    const big = got.find((m) => m.level === "warning")!;
    expect(String(big.data).length).toBeLessThan(LOG_DATA_MAX_CHARS + 80);
    expect(String(big.data)).toMatch(/… \(1000000 characters in all, cut to 2000\)$/);
    expect(got.filter((m) => m.level === "info").every((m) => m.logger === "noisy")).toBe(true);
  });

  it("a 2025-11-25 client at level error gets only the error", async () => {
    const c = await connect(noisyProxy.http, "2025-11-25");
    const got = hear(c);
    await c.setLoggingLevel("error");
    await c.callTool({ name: "flood_logs", arguments: {} });
    await c.callTool({ name: "echo", arguments: { text: "after" } });
    expect(got.map((m) => m.level)).toEqual(["error"]);
  });

  it("a 2026-07-28 request that names no level gets no log messages", async () => {
    const c = await connect(noisyProxy.http, "2026-07-28");
    const got = hear(c);
    await c.callTool({ name: "flood_logs", arguments: {} });
    await c.callTool({ name: "echo", arguments: { text: "after" }, _meta: { [LOG_LEVEL]: "debug" } });
    expect(got).toEqual([]);
  });

  it("a log message sent while another client's resources/read is in flight reaches no tool call's caller", async () => {
    const caller = await connect(noisyProxy.http, "2025-11-25");
    const got = hear(caller);
    await caller.setLoggingLevel("debug");
    const reader = await connect(noisyProxy.http, "2026-07-28");
    // The upstream answers the read only once wait_read is in flight there, and logs for the read.
    const call = caller.callTool({ name: "wait_read", arguments: {} });
    const read = await reader.readResource({ uri: "noisy://secret" });
    expect((read.contents[0] as { text: string }).text).toBe("secret");
    expect(textOf(await call)).toContain("read");
    expect(got.filter((m) => String(m.data).includes("secret"))).toEqual([]);
    expect(noisyProxy.lines.some((l) => l.includes("noisy info: the reader's secret path"))).toBe(true);
  });

  it("what no call can be said to own goes to the operator's log, and the drops are counted there", async () => {
    const c = await connect(noisyProxy.http, "2025-11-25");
    // Two calls in flight at once: the messages of either cannot be told apart, so neither caller gets them.
    const got = hear(c);
    await c.setLoggingLevel("debug");
    const long = c.callTool({ name: "flood_progress", arguments: {} });
    // A round trip through the upstream after it: the long call is in flight there.
    await c.callTool({ name: "echo", arguments: { text: "between" } });
    await c.callTool({ name: "flood_logs", arguments: {} });
    await long;
    expect(got).toEqual([]);
    expect(noisyProxy.lines.some((l) => l.startsWith("toolgate proxy: noisy/db\\u{202E} error: boom"))).toBe(true);
    await c.callTool({ name: "echo", arguments: { text: "next window" } });
    await until(() => noisyProxy.lines.some((l) => /noisy sent \d+ log messages more than the 20 a second/.test(l)));
  });
});

describe("tools/list_changed from the upstream", { timeout: 180_000 }, () => {
  it("a storm of 1,000 is folded into at most two re-lists, and calls are answered", async () => {
    const { http } = await serve([noisy]);
    const c = await connect(http, "2025-11-25");
    await c.callTool({ name: "storm", arguments: {} });
    const count = async () =>
      Number(/lists=(\d+)/.exec(textOf(await c.callTool({ name: "lists", arguments: {} })))?.[1]);
    // The start's list, then one re-list in flight and one after it for everything that came meanwhile.
    let n = await count();
    while (n < 2) n = await count();
    for (let i = 0; i < 5; i++) n = await count();
    expect(n).toBeLessThanOrEqual(3);
    expect(textOf(await c.callTool({ name: "echo", arguments: { text: "fine" } }))).toContain("fine");
  });

  it("a changed definition is held and clients of both eras over HTTP are told their list changed", async () => {
    const { http, lines } = await serve([changing]);
    const legacy = await connect(http, "2025-11-25");
    const modern = await connect(http, "2026-07-28");
    let legacyHeard = 0;
    let modernHeard = 0;
    legacy.setNotificationHandler("notifications/tools/list_changed", () => void (legacyHeard += 1));
    modern.setNotificationHandler("notifications/tools/list_changed", () => void (modernHeard += 1));
    const sub = await modern.listen({ toolsListChanged: true });
    expect((await legacy.listTools()).tools.map((t) => t.name)).toEqual(["echo", "poison"]);
    // The legacy client's GET stream opens after initialize; a call round trip lets it.
    await legacy.callTool({ name: "echo", arguments: { text: "before" } });
    await legacy.callTool({ name: "poison", arguments: {} });
    await until(() => legacyHeard > 0 && modernHeard > 0);
    expect((await legacy.listTools()).tools.map((t) => t.name)).toEqual(["poison"]);
    expect((await modern.listTools()).tools.map((t) => t.name)).toEqual(["poison"]);
    const refused = await modern.callTool({ name: "echo", arguments: { text: "x" } });
    expect(obsOf(refused).error?.code).toBe("check_failed");
    expect(textOf(refused)).toContain("echo's definition changed at its upstream server while toolgate proxy ran");
    expect(lines.some((l) => l.includes(`tool "echo" is held (its definition changed while the proxy ran)`))).toBe(
      true,
    );
    expect(lines.some((l) => l.includes("TG011"))).toBe(true);
    await sub.close();
  });
});

describe("over stdio, through toolgate proxy from source", { timeout: 180_000 }, () => {
  /** `toolgate proxy -- node UPSTREAM` as a stdio client starts it (the options both SDKs' transports take). */
  const spawn = (upstream: string) => proxyProcess([upstream], "notify-stdio");
  /** A v2 client of `era` connected to a proxy of `upstream` over stdio. */
  async function v2Client(upstream: string, era: Era): Promise<Client> {
    const c = new Client(
      { name: `notify-stdio-${era}`, version: "1.0.0" },
      era === "2026-07-28" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
    );
    await c.connect(new V2StdioClientTransport(spawn(upstream)));
    clients.push(c);
    return c;
  }

  it("a 2025-11-25 client (SDK v1) hears list_changed", async () => {
    const transport = new StdioClientTransport(spawn(changing));
    const client = new V1Client({ name: "notify-v1", version: "1.0.0" });
    await client.connect(transport);
    clients.push(client);
    expect(client.getServerCapabilities()).toMatchObject({ tools: { listChanged: true }, logging: {} });
    let heard = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void (heard += 1));
    await client.callTool({ name: "poison", arguments: {} });
    await until(() => heard > 0);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["poison"]);
  });

  it("a 2026-07-28 client (SDK v2) hears list_changed on its listen stream", async () => {
    const client = await v2Client(changing, "2026-07-28");
    let heard = 0;
    client.setNotificationHandler("notifications/tools/list_changed", () => void (heard += 1));
    const sub = await client.listen({ toolsListChanged: true });
    await client.callTool({ name: "poison", arguments: {} });
    await until(() => heard > 0);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["poison"]);
    await sub.close();
  });

  it.each(ERAS)("a %s client gets the log messages of its call at its level", async (era) => {
    const v2 = await v2Client(noisy, era);
    const got: Array<{ level: string; logger?: string }> = [];
    v2.setNotificationHandler("notifications/message", (n) => void got.push(n.params));
    if (era === "2025-11-25") await v2.setLoggingLevel("warning");
    await v2.callTool({
      name: "flood_logs",
      arguments: {},
      ...(era === "2026-07-28" ? { _meta: { [LOG_LEVEL]: "warning" } } : {}),
    });
    await until(() => got.length >= 2);
    expect(got.map((m) => m.level)).toEqual(["error", "warning"]);
    expect(got.every((m) => m.logger?.startsWith("noisy"))).toBe(true);
  });
});
