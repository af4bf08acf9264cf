/** The guard store's backends against the real servers (memory and SQLite always; Redis and PostgreSQL when up). */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openGuardStore } from "../../src/idempotency/open-guard.js";
import { POSTGRES_URL, REDIS_URL, serviceAvailable } from "../support/require.js";
import { dropPgSchema, dropRedisPrefix } from "./fixtures/service-cleanup.js";
import { describeGuardStoreConformance } from "./guard-store.conformance.js";

const hostPort = (url: string, port: number) => [new URL(url).hostname, Number(new URL(url).port || port)] as const;
const redisUp = await serviceAvailable("Redis", ...hostPort(REDIS_URL, 6379));
const pgUp = await serviceAvailable("PostgreSQL", ...hostPort(POSTGRES_URL, 5432));
const tag = randomBytes(4).toString("hex");
const dir = mkdtempSync(join(tmpdir(), "tg-guard-"));
const redisPrefix = `tg-test-guard-${tag}:`;
const schema = `tg_test_guard_${tag}`;

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  if (redisUp) await dropRedisPrefix(redisPrefix);
  if (pgUp) await dropPgSchema(schema);
});

describeGuardStoreConformance("memory", () => openGuardStore("memory:"));
describeGuardStoreConformance("sqlite", () => openGuardStore(`sqlite:${join(dir, "state.db")}`));
describe.runIf(redisUp)("redis", () => {
  describeGuardStoreConformance("redis", () => openGuardStore(`${REDIS_URL}?prefix=${redisPrefix}`));
});
describe.runIf(pgUp)("postgres", () => {
  describeGuardStoreConformance("postgres", () => openGuardStore(`${POSTGRES_URL}?schema=${schema}`));
});

describe("openGuardStore reads the URL as openStore does", () => {
  it("refuses an unknown scheme with the closest one", async () => {
    await expect(openGuardStore("postgress://x")).rejects.toThrow(/did you mean "postgres:"/);
  });

  it("keeps its tables in the idempotency store's SQLite file, beside its records", async () => {
    const { openStore } = await import("../../src/idempotency/open.js");
    const url = `sqlite:${join(dir, "both.db")}`;
    const records = await openStore(url);
    const guard = await openGuardStore(url);
    await guard.pins.observe("s", "t", "h", { name: "t" }, 1);
    await records.budgets.spend("b", 1, 10);
    expect((await guard.pins.list("s")).length).toBe(1);
    expect(await records.budgets.spent("b")).toBe(1);
    await guard.close();
    await records.close();
  });
});
