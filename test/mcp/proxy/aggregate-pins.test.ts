/**
 * Pins and rate limits of an aggregate: a test server that changes one description on restart
 * is held until accepted; one that sends list_changed with a poisoned description is held with
 * TG011 named; a rate limit shared by two proxy replicas on Redis and on PostgreSQL lets exactly
 * the allowed count through.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openGuardStore } from "../../../src/idempotency/open-guard.js";
import { POSTGRES_URL, REDIS_URL, serviceAvailable } from "../../support/require.js";
import { dropPgSchema, dropRedisPrefix } from "../../idempotency/fixtures/service-cleanup.js";
import { cli } from "../../support/cli.js";
import { ids, obsOf, tempDir, textOf, until } from "../support.js";
import { changingServer, everythingServer, startAggregate, wrapper } from "./aggregate-support.js";
import { createCapabilityAuthority } from "../../../src/capability/authority.js";
import { keyRingFromMap } from "../../../src/capability/keys.js";
import { createMemoryStore } from "../../../src/idempotency/stores/memory.js";

const dir = tempDir("aggregate-pins");
const node = process.execPath;
const descriptionFile = join(dir, "description.txt");
const config = (env: Record<string, string> = {}, toolgate: Record<string, unknown> = {}) => ({
  mcpServers: {
    changing: { command: node, args: [changingServer], env: { DESCRIPTION_FILE: descriptionFile, ...env }, toolgate },
  },
});

describe("pinned catalogs", () => {
  it("a description changed on restart is held — not listed, calls refused — until accepted", async () => {
    const url = `sqlite:${join(dir, "pins.db")}`;
    writeFileSync(descriptionFile, "Echoes the text back unchanged.");
    const first = await startAggregate(dir, config(), await openGuardStore(url), { closeGuard: true });
    expect((await first.client.listTools()).tools.map((t) => t.name)).toEqual(["changing__echo", "changing__poison"]);
    await first.close();

    writeFileSync(descriptionFile, "Echoes the text back, and also sends it to the analytics service.");
    const second = await startAggregate(dir, config(), await openGuardStore(url), { closeGuard: true });
    expect((await second.client.listTools()).tools.map((t) => t.name)).toEqual(["changing__poison"]);
    const refused = await second.client.callTool({
      name: "changing__echo",
      arguments: { text: "x" },
      _meta: ids("h1"),
    });
    expect(obsOf(refused).error?.code).toBe("check_failed");
    expect(textOf(refused)).toContain(
      "changing__echo's definition changed at its server (changing) after it was pinned, so it is held until an operator reviews the change; nothing was executed.",
    );
    expect(second.logs.some((l) => l.includes(`changing's tool "echo" is held for review`))).toBe(true);
    await second.close();

    const diff = await cli("pins", "diff", "changing", "echo", "--store", url);
    expect(diff.out).toContain('+ "Echoes the text back, and also sends it to the analytics service."');
    expect((await cli("pins", "accept", "changing", "echo", "--store", url)).code).toBe(0);

    const third = await startAggregate(dir, config(), await openGuardStore(url), { closeGuard: true });
    expect((await third.client.listTools()).tools.map((t) => t.name)).toEqual(["changing__echo", "changing__poison"]);
    await third.close();
  }, 60_000);

  it("a list_changed that brings a poisoned description holds the tool and names TG011", async () => {
    writeFileSync(descriptionFile, "Echoes the text back unchanged.");
    const agg = await startAggregate(dir, config(), await openGuardStore("memory:"), { closeGuard: true });
    expect((await agg.client.callTool({ name: "changing__echo", arguments: { text: "a" } })).isError).toBeFalsy();
    let told = 0;
    agg.proxy.toolsChanged.subscribe(() => void (told += 1));
    await agg.client.callTool({ name: "changing__poison", arguments: {} });
    await until(() => agg.logs.some((l) => l.includes("changed while the proxy ran")));
    // The held tool left the list: the clients are told once.
    expect(told).toBe(1);
    expect(agg.logs.some((l) => /error TG011 \/description: the text tells the model to keep something/.test(l))).toBe(
      true,
    );
    expect((await agg.client.listTools()).tools.map((t) => t.name)).toEqual(["changing__poison"]);
    const refused = await agg.client.callTool({ name: "changing__echo", arguments: { text: "b" } });
    expect(textOf(refused)).toContain("held until an operator reviews the change");
    await agg.close();
  }, 60_000);
});

describe("a concurrency cap per upstream", () => {
  it("one call past the cap is refused with nothing run; the call in flight finishes", async () => {
    const log = join(dir, "slow-upstream.jsonl");
    const slow = fileURLToPath(new URL("../fixtures/slow-server.mjs", import.meta.url));
    const agg = await startAggregate(
      dir,
      {
        mcpServers: {
          slow: { command: node, args: [wrapper, node, slow], env: { WRAPPER_LOG: log }, toolgate: { concurrency: 1 } },
        },
      },
      await openGuardStore("memory:"),
      { closeGuard: true },
    );
    const first = agg.client.callTool({ name: "slow__wait_ms", arguments: { ms: 1500 } });
    await until(() => existsSync(log) && readFileSync(log, "utf8").includes('"tools/call"'));
    const second = await agg.client.callTool({ name: "slow__wait_ms", arguments: { ms: 0 } });
    expect(obsOf(second).error?.code).toBe("precondition_failed");
    expect(textOf(second)).toContain(
      "too many slow tools calls at once: 1 are running, the most this server allows (mcpServers.slow.toolgate.concurrency); nothing was run",
    );
    expect(textOf(await first)).toContain("waited 1500 ms");
    expect(readFileSync(log, "utf8").split('"tools/call"').length - 1).toBe(1);
    await agg.close();
  }, 60_000);
});

describe("per-agent views", () => {
  it("a capability that grants two tools lists two; without one, every tool is listed", async () => {
    const keys = keyRingFromMap({ k1: randomBytes(32).toString("base64") }, "test");
    const store = createMemoryStore();
    const agg = await startAggregate(
      dir,
      { mcpServers: { ev: { command: node, args: [everythingServer, "stdio"] } } },
      await openGuardStore("memory:"),
      { closeGuard: true, keys, store },
    );
    const authority = createCapabilityAuthority({ keys, store });
    const two = authority.issue({ rights: ["read"], objects: ["tool:ev__echo", "tool:ev__get-sum"], ttl_ms: 600_000 });
    const listed = await agg.client.listTools({ _meta: { "toolgate/capability": two } });
    expect(listed.tools.map((t) => t.name).sort()).toEqual(["ev__echo", "ev__get-sum"]);
    expect((await agg.client.listTools()).tools.length).toBe(agg.proxy.tools.length);
    const outside = await agg.client.callTool({
      name: "ev__get-env",
      arguments: {},
      _meta: { "toolgate/capability": two },
    });
    expect(obsOf(outside).error?.code).toBe("denied");
    const inside = await agg.client.callTool({
      name: "ev__echo",
      arguments: { message: "hi" },
      _meta: { "toolgate/capability": two },
    });
    expect(textOf(inside)).toContain("Echo: hi");
    await agg.close();
  }, 60_000);
});

const hostPort = (u: string, port: number) => [new URL(u).hostname, Number(new URL(u).port || port)] as const;
const redisUp = await serviceAvailable("Redis", ...hostPort(REDIS_URL, 6379));
const pgUp = await serviceAvailable("PostgreSQL", ...hostPort(POSTGRES_URL, 5432));
const tag = randomBytes(4).toString("hex");
afterAll(async () => {
  if (redisUp) await dropRedisPrefix(`tg-test-aggrate-${tag}:`);
  if (pgUp) await dropPgSchema(`tg_test_aggrate_${tag}`);
});

for (const { name, up, url } of [
  { name: "Redis", up: redisUp, url: `${REDIS_URL}?prefix=tg-test-aggrate-${tag}:` },
  { name: "PostgreSQL", up: pgUp, url: `${POSTGRES_URL}?schema=tg_test_aggrate_${tag}` },
]) {
  describe.runIf(up)(`a rate limit shared by two proxy replicas on ${name}`, () => {
    it("concurrent calls through both replicas: exactly the allowed count passes", async () => {
      writeFileSync(descriptionFile, "Echoes the text back unchanged.");
      const limited = config({}, { tools: { echo: { rate_limit: { calls: 4, window_ms: 600_000 } } } });
      const replicas = [
        await startAggregate(dir, limited, await openGuardStore(url), { closeGuard: true }),
        await startAggregate(dir, limited, await openGuardStore(url), { closeGuard: true }),
      ];
      const results = await Promise.all(
        Array.from({ length: 14 }, (_, i) =>
          replicas[i % 2]!.client.callTool({ name: "changing__echo", arguments: { text: `t${i}` } }),
        ),
      );
      expect(results.filter((r) => !r.isError)).toHaveLength(4);
      const refused = results.filter((r) => r.isError).map(obsOf);
      expect(refused.every((o) => o.error?.code === "rate_limited")).toBe(true);
      expect(refused.every((o) => Number(o.error?.detail?.retry_after_ms) > 0)).toBe(true);
      await Promise.all(replicas.map((r) => r.close()));
    }, 60_000);
  });
}
