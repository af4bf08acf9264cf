/**
 * `--max-listens-per-client` and `--max-listen-ms` of serve and proxy, over stdio and HTTP alike:
 * parsed to the transports' listen bounds, bad values refused with one clear line before anything
 * starts; the transports refuse a bad value given to them directly, naming the option.
 */
import { describe, expect, it } from "vitest";
import { parseGatewayFlags } from "../../../src/cli/host/flags.js";
import { MIN_LISTEN_MS, parseListenFlags, parseMaxListenMs } from "../../../src/cli/host/listen-flags.js";
import { DEFAULT_MAX_LISTEN_MS, listenLifetime, MAX_LISTEN_MS } from "../../../src/mcp/transports/listen-hold.js";
import { StdioListens } from "../../../src/mcp/transports/stdio-listen.js";
import { serveHttp } from "../../../src/mcp/transports/http.js";
import { createGateway } from "../../../src/runtime/gateway.js";
import { openStore } from "../../../src/idempotency/open.js";
import { cli } from "../../support/cli.js";

/** A stdio connection's listens with `bounds` and nothing behind them. */
const stdioListens = (bounds: { maxListens?: number; maxListenMs?: number }) =>
  new StdioListens({
    send: async () => {},
    subscriptions: undefined,
    updated: () => {},
    tasks: undefined,
    serverInfo: { name: "toolgate", version: "0.1.0" },
    ...bounds,
  });

const refusal = (text: string) =>
  `--max-listen-ms must be 0 (no cutoff) or a whole number of milliseconds from ${MIN_LISTEN_MS} to ${MAX_LISTEN_MS} (how long a subscriptions/listen stream stays open before toolgate ends it gracefully and the client listens again); received ${JSON.stringify(text)}; example --max-listen-ms ${DEFAULT_MAX_LISTEN_MS}`;

describe("--max-listen-ms", () => {
  it("absent leaves the transports' default (one hour); 0 and the range are passed on, over stdio too", () => {
    expect(listenLifetime(undefined)).toBe(3_600_000);
    expect(parseListenFlags({})).toEqual({});
    expect(parseGatewayFlags({ maxListenMs: "0" }).run).toMatchObject({ maxListenMs: 0 });
    expect(parseGatewayFlags({ maxListenMs: " 1000 " }).run).toMatchObject({ maxListenMs: 1000 });
    expect(parseMaxListenMs(String(MAX_LISTEN_MS))).toBe(MAX_LISTEN_MS);
  });

  it.each(["-1", "999", "1", "1.5", "1h", "", "1e4", String(MAX_LISTEN_MS + 1)])(
    "refuses %j naming the flag, the range and an example",
    (text) => {
      expect(() => parseMaxListenMs(text)).toThrow(refusal(text));
    },
  );

  it("serve and proxy refuse a bad value before anything starts", async () => {
    const runs = [
      await cli("serve", "--max-listen-ms", "soon"),
      await cli("proxy", "--max-listen-ms", "500", "--", "node", "-e", "0"),
      await cli("serve", "--http", "127.0.0.1:0", "--max-listen-ms", "-5"),
    ];
    expect(runs.map((r) => [r.code, r.out, r.err])).toEqual([
      [2, "", `toolgate: ${refusal("soon")} [bad_flag]\n`],
      [2, "", `toolgate: ${refusal("500")} [bad_flag]\n`],
      [2, "", `toolgate: ${refusal("-5")} [bad_flag]\n`],
    ]);
  });

  it("the transports refuse a maxListenMs that is no whole number of ms in range, naming the option", async () => {
    for (const bad of [-1, 1.5, Number.NaN, MAX_LISTEN_MS + 1]) {
      const message = `maxListenMs must be a whole number of milliseconds from 0 (no cutoff) to ${MAX_LISTEN_MS}; received ${String(bad)}; e.g. ${DEFAULT_MAX_LISTEN_MS}`;
      expect(() => listenLifetime(bad)).toThrow(message);
      expect(() => stdioListens({ maxListenMs: bad })).toThrow(message);
    }
    const gateway = createGateway({ tools: [], store: await openStore("memory:"), audit: false });
    await expect(serveHttp(gateway, { port: 0, warn: () => {}, maxListenMs: -1 })).rejects.toThrow(
      "maxListenMs must be a whole number of milliseconds from 0 (no cutoff)",
    );
    await gateway.close({ grace_ms: 0 });
  });
});

describe("--max-listens-per-client", () => {
  it("applies over stdio as over HTTP: no --http is needed", () => {
    expect(parseGatewayFlags({ maxListensPerClient: "2" }).run).toMatchObject({ maxListensPerClient: 2 });
    expect(parseGatewayFlags({ maxListensPerClient: "3", http: "127.0.0.1:0" }).run).toMatchObject({
      maxListensPerClient: 3,
      http: { host: "127.0.0.1", port: 0 },
    });
  });

  it("refuses a bad value with the count flags' line, over stdio too", async () => {
    const runs = [
      await cli("serve", "--max-listens-per-client", "0"),
      await cli("proxy", "--max-listens-per-client", "many", "--", "node", "-e", "0"),
    ];
    expect(runs.map((r) => [r.code, r.out, r.err])).toEqual([
      [
        2,
        "",
        'toolgate: --max-listens-per-client must be a whole number of at least 1; received "0"; example --max-listens-per-client 64 [bad_flag]\n',
      ],
      [
        2,
        "",
        'toolgate: --max-listens-per-client must be a whole number of at least 1; received "many"; example --max-listens-per-client 64 [bad_flag]\n',
      ],
    ]);
    expect(() => stdioListens({ maxListens: 0 })).toThrow(
      "maxListensPerClient must be a whole number of at least 1; received 0; e.g. 8",
    );
  });
});
