/**
 * The lifetime and the bound of 2026-07-28 `subscriptions/listen` streams, on the real
 * `toolgate proxy` and `toolgate serve` processes, over stdio and Streamable HTTP: with
 * `--max-listen-ms` a listen is ended with the revision's graceful result once it has been open
 * that long (the SDK v2 client sees `closed` resolve "graceful"), its upstream resource
 * subscription is given up, and the client listens again; `--max-listens-per-client` bounds the
 * listens of a stdio connection as it bounds a client's over HTTP.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { Client, StreamableHTTPClientTransport, type Transport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { listenCutoffMs } from "../../../src/mcp/transports/listen-hold.js";
import { proxyProcess } from "../../support/proxy-process.js";
import { notesServeCommand, tempDir, textOf } from "../support.js";
import { lineClient, type Line, type LineClient } from "./stdio-lines.js";

const SUB = "io.modelcontextprotocol/subscriptionId";
const INFO = "io.modelcontextprotocol/serverInfo";
const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "listen-lifetime", version: "1.0.0" },
};
const listing = fileURLToPath(new URL("../fixtures/listing-server.mjs", import.meta.url));

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const done of cleanup.splice(0).reverse()) await done().catch(() => {});
});

/** `toolgate proxy FLAGS -- node listing-server.mjs` over `over`, as a transport for the SDK v2 client. */
async function proxyTransport(over: "stdio" | "http", flags: string[]): Promise<Transport> {
  const command = proxyProcess([listing], `listen-lifetime-${over}`, flags);
  if (over === "stdio") return new StdioClientTransport(command);
  const child = spawn(
    command.command,
    [...command.args.slice(0, -3), "--http", "127.0.0.1:0", ...command.args.slice(-3)],
    {
      cwd: command.cwd,
      env: command.env,
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  cleanup.push(async () => void child.kill("SIGKILL"));
  let stderr = "";
  const url = await new Promise<URL>((resolve, reject) => {
    child.stderr.on("data", (d: Buffer) => {
      stderr += d;
      const m = /serving on (http:\/\/[^\s;]+)/.exec(stderr);
      if (m) resolve(new URL(m[1]!));
    });
    child.once("exit", (code) => reject(new Error(`proxy exited ${code}: ${stderr}`)));
  });
  return new StreamableHTTPClientTransport(url);
}

async function modernClient(transport: Transport): Promise<Client> {
  const client = new Client(
    { name: "listen-lifetime", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(transport);
  cleanup.push(() => client.close());
  return client;
}

describe.each(["stdio", "http"] as const)("toolgate proxy --max-listen-ms over %s", { timeout: 120_000 }, (over) => {
  it("ends a listen gracefully once it has been open that long, gives up its upstream subscription, and the client listens again", async () => {
    const client = await modernClient(await proxyTransport(over, ["--max-listen-ms", "1000"]));
    const subs = async () => textOf(await client.callTool({ name: "subs", arguments: {} }));
    const filter = { toolsListChanged: true, resourceSubscriptions: ["listing://item/0"] };
    /** Asks the upstream until it holds no subscription; what it then says. */
    const givenUp = async () => {
      let now = await subs();
      for (let i = 0; i < 200 && !now.includes("subscribed= "); i++) now = await subs();
      return now;
    };
    const first = await client.listen(filter);
    expect(first.honoredFilter).toMatchObject(filter);
    expect(await first.closed).toBe("graceful");
    // The upstream subscription the listen held is given up with it.
    expect(await givenUp()).toContain("subscribed= subscribes=1");
    // The client listens again: subscribed upstream again, and ended again in its turn.
    const second = await client.listen(filter);
    expect(second.honoredFilter).toMatchObject(filter);
    expect(await second.closed).toBe("graceful");
    expect(await givenUp()).toContain("subscribed= subscribes=2");
  });
});

const listen = (c: LineClient, id: string, notifications: unknown) =>
  c.send({ id, method: "subscriptions/listen", params: { notifications, _meta: ENVELOPE } });
const subscription = (m: Line) => (m.params?._meta as Record<string, unknown> | undefined)?.[SUB];
const ackOf = (c: LineClient, id: string) =>
  c.next((m) => m.method === "notifications/subscriptions/acknowledged" && subscription(m) === id);
const answerTo = (c: LineClient, id: string) => c.next((m) => m.id === id && m.method === undefined);

function serve(flags: string[]): LineClient {
  const command = notesServeCommand(tempDir("listen-lifetime-serve"));
  command.args.push(...flags);
  const c = lineClient(command);
  cleanup.push(async () => void c.child.kill());
  return c;
}

describe("toolgate serve over stdio", { timeout: 120_000 }, () => {
  it("--max-listens-per-client bounds the connection's listens: one more is refused naming the bound", async () => {
    const c = serve(["--max-listens-per-client", "2"]);
    listen(c, "A", {});
    listen(c, "B", { toolsListChanged: true });
    await ackOf(c, "A");
    await ackOf(c, "B");
    listen(c, "C", {});
    const refused = await answerTo(c, "C");
    expect(refused.error).toEqual({
      code: -32000,
      message:
        "too many subscriptions/listen streams at once on this stdio connection: 2 are open, the most toolgate allows (2); cancel one you no longer read (notifications/cancelled naming its request id), or ask for several notification types on one listen",
      data: { limit: 2 },
    });
    c.send({ method: "notifications/cancelled", params: { requestId: "A" } });
    listen(c, "C", {});
    await ackOf(c, "C");
  });

  it("--max-listen-ms ends each listen with the graceful result, nothing after it on its id, and frees its place", async () => {
    const c = serve(["--max-listen-ms", "1000", "--max-listens-per-client", "2"]);
    listen(c, "A", {});
    listen(c, "B", { toolsListChanged: true });
    await ackOf(c, "A");
    await ackOf(c, "B");
    // The server names itself on the result it ends a listen with, as the SDK names it on every other.
    const serverInfo = ((await c.request("tools/list", { _meta: ENVELOPE })).result?._meta as Record<string, unknown>)[
      INFO
    ];
    expect(serverInfo).toMatchObject({ name: "toolgate", version: expect.any(String) });
    for (const id of ["A", "B"])
      expect(await answerTo(c, id)).toEqual({
        jsonrpc: "2.0",
        id,
        result: { resultType: "complete", _meta: { [SUB]: id, [INFO]: serverInfo } },
      });
    // Both places are free again; the connection serves on.
    listen(c, "C", {});
    listen(c, "D", {});
    await ackOf(c, "C");
    await ackOf(c, "D");
    expect((await c.request("tools/list", { _meta: ENVELOPE })).result).toHaveProperty("tools");
    const ended = c.lines.findIndex((m) => m.id === "B");
    expect(c.lines.slice(ended + 1).filter((m) => subscription(m) === "A" || subscription(m) === "B")).toEqual([]);
    expect(c.lines.filter((m) => m.id === "A" || m.id === "B")).toHaveLength(2);
  });
});

describe("listenCutoffMs", () => {
  it("ends each listen up to a tenth before its lifetime, spread at random, never after it", () => {
    const draws = Array.from({ length: 2_000 }, () => listenCutoffMs(3_600_000));
    expect(Math.min(...draws)).toBeGreaterThan(3_600_000 - 360_000);
    expect(Math.max(...draws)).toBeLessThanOrEqual(3_600_000);
    // Listens opened together end spread over most of that tenth, not in one moment.
    expect(Math.max(...draws) - Math.min(...draws)).toBeGreaterThan(300_000);
    expect(draws.every(Number.isSafeInteger)).toBe(true);
    expect(listenCutoffMs(1_000)).toBeGreaterThan(900);
  });
});
