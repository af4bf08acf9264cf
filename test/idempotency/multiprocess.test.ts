/**
 * Two OS processes share one store (SQLite file, Redis, PostgreSQL) and both submit the same
 * 1,000 keys through `settle` at once: every effect must happen exactly once, counted in an
 * append-only file (issue 3, "Tests that must exist").
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import pg from "pg";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/idempotency/open.js";
import { POSTGRES_URL, REDIS_URL, projectRoot, serviceAvailable } from "../support/require.js";

const KEYS = 1000;
const worker = join(projectRoot, "test", "idempotency", "fixtures", "multiprocess-settle-worker.ts");
const dir = mkdtempSync(join(tmpdir(), "toolgate-multiprocess-"));
const run = randomBytes(4).toString("hex");
const redisUp = await serviceAvailable("Redis", new URL(REDIS_URL).hostname, Number(new URL(REDIS_URL).port || 6379));
const postgresUp = await serviceAvailable("PostgreSQL", new URL(POSTGRES_URL).hostname, Number(new URL(POSTGRES_URL).port || 5432));
const redisPrefix = `tg-test-mp-${run}:`;
const pgSchema = `tg_test_mp_${run}`;
const withParam = (url: string, param: string) => `${url}${url.includes("?") ? "&" : "?"}${param}`;

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  if (redisUp) {
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${redisPrefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  }
  if (postgresUp) {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${pgSchema}" CASCADE`);
    await client.end();
  }
});

interface Worker {
  ready: Promise<void>;
  go(): void;
  done: Promise<Record<string, number>>;
}

function startWorker(url: string, keyPrefix: string, effects: string, name: string): Worker {
  const child = spawn(process.execPath, ["--import", "tsx", worker, url, keyPrefix, String(KEYS), effects, name], {
    cwd: projectRoot,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const lines = createInterface({ input: child.stdout });
  const seen: string[] = [];
  let onReady: () => void = () => {};
  const ready = new Promise<void>((r) => (onReady = r));
  lines.on("line", (line) => {
    seen.push(line);
    if (line === "ready") onReady();
  });
  const done = new Promise<Record<string, number>>((resolve, reject) => {
    child.on("exit", (code) => {
      if (code !== 0) reject(new Error(`worker ${name} exited ${code}: ${stderr}`));
      else resolve(JSON.parse(seen[seen.length - 1]!) as Record<string, number>);
    });
  });
  return { ready: Promise.race([ready, done.then(() => undefined)]), go: () => child.stdin.end("go\n"), done };
}

async function raceTwoProcesses(url: string, label: string) {
  const effects = join(dir, `${label}-effects.log`);
  const keyPrefix = `mp-${label}-${run}-`;
  const a = startWorker(url, keyPrefix, effects, "A");
  const b = startWorker(url, keyPrefix, effects, "B");
  await Promise.all([a.ready, b.ready]);
  a.go();
  b.go();
  const [countsA, countsB] = await Promise.all([a.done, b.done]);

  const lines = readFileSync(effects, "utf8").trim().split("\n");
  const perKey = new Map<string, number>();
  for (const line of lines) perKey.set(line.split(" ")[0]!, (perKey.get(line.split(" ")[0]!) ?? 0) + 1);
  expect(lines).toHaveLength(KEYS);
  expect(perKey.size).toBe(KEYS);
  expect([...perKey.values()].every((n) => n === 1)).toBe(true);
  // Both processes really raced: each executed some keys and replayed some of the other's.
  expect(countsA.executed! + countsB.executed!).toBe(KEYS);
  expect(countsA.executed).toBeGreaterThan(0);
  expect(countsB.executed).toBeGreaterThan(0);
  expect((countsA.replay ?? 0) + (countsB.replay ?? 0)).toBe(KEYS);

  const store = await openStore(url);
  const completed = [];
  let after: string | undefined;
  for (;;) {
    const page = await store.records.list({ state: "COMPLETED", after, limit: 500, now: Date.now() });
    completed.push(...page.filter((r) => r.key.startsWith(keyPrefix)));
    if (page.length < 500) break;
    after = page[page.length - 1]!.key;
  }
  await store.close();
  expect(completed).toHaveLength(KEYS);
  return { countsA, countsB };
}

describe("two OS processes, 1,000 keys each, submitted by both at once", () => {
  it("sqlite: one file shared by both processes, every effect exactly once", async () => {
    await raceTwoProcesses(`sqlite:${join(dir, "shared.db")}`, "sqlite");
  });

  it.runIf(redisUp)("redis: every effect exactly once", async () => {
    await raceTwoProcesses(withParam(REDIS_URL, `prefix=${redisPrefix}`), "redis");
  });

  it.runIf(postgresUp)("postgres: every effect exactly once", async () => {
    await raceTwoProcesses(withParam(POSTGRES_URL, `schema=${pgSchema}`), "postgres");
  });
});
