/**
 * Two OS processes share one store (SQLite file, Redis, PostgreSQL) and both submit the same
 * 1,000 keys through `runOnce` at once: every effect must happen exactly once, counted in an
 * append-only file. Then both spend one budget and race to
 * consume the same approvals: the limit holds and every approval is used exactly once.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import { openStore } from "../../src/idempotency/open.js";
import { POSTGRES_URL, REDIS_URL, projectRoot, serviceAvailable } from "../support/require.js";
import { dropPgSchema, dropRedisPrefix } from "./fixtures/service-cleanup.js";

const KEYS = 1000;
/** Two child processes on a shared 2-core machine: generous, never a performance bound. */
const SLOW = 180_000;
const worker = join(projectRoot, "test", "idempotency", "fixtures", "multiprocess-run-once-worker.ts");
const sharedWorker = join(projectRoot, "test", "idempotency", "fixtures", "multiprocess-shared-worker.ts");
const dir = mkdtempSync(join(tmpdir(), "toolgate-multiprocess-"));
const run = randomBytes(4).toString("hex");
const redisUp = await serviceAvailable("Redis", new URL(REDIS_URL).hostname, Number(new URL(REDIS_URL).port || 6379));
const postgresUp = await serviceAvailable(
  "PostgreSQL",
  new URL(POSTGRES_URL).hostname,
  Number(new URL(POSTGRES_URL).port || 5432),
);
const redisPrefix = `tg-test-mp-${run}:`;
const pgSchema = `tg_test_mp_${run}`;
const withParam = (url: string, param: string) => `${url}${url.includes("?") ? "&" : "?"}${param}`;

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  if (redisUp) await dropRedisPrefix(redisPrefix);
  if (postgresUp) await dropPgSchema(pgSchema);
});

interface Worker<T = Record<string, number>> {
  ready: Promise<void>;
  go(): void;
  done: Promise<T>;
}

function startWorker<T = Record<string, number>>(script: string, args: string[], name: string): Worker<T> {
  const child = spawn(process.execPath, ["--import", "tsx", script, ...args], {
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
  // "close", not "exit": at "exit" the child's stdout may still hold its last line (the counts).
  const done = new Promise<T>((resolve, reject) => {
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`worker ${name} exited ${code}: ${stderr}`));
      else resolve(JSON.parse(seen[seen.length - 1]!) as T);
    });
  });
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  return { ready: Promise.race([ready, done.then(() => undefined)]), go: () => child.stdin.end("go\n"), done };
}

async function raceTwoProcesses(url: string, label: string) {
  const effects = join(dir, `${label}-effects.log`);
  const keyPrefix = `mp-${label}-${run}-`;
  const a = startWorker(worker, [url, keyPrefix, String(KEYS), effects, "A"], "A");
  const b = startWorker(worker, [url, keyPrefix, String(KEYS), effects, "B"], "B");
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
  expect((countsA.executed ?? 0) + (countsB.executed ?? 0)).toBe(KEYS);
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

const SPENDS = 600; // per process: 1,200 attempts against a limit of 1,000
const LIMIT = 1000;
const APPROVALS = 200;

async function raceBudgetAndApprovals(url: string, label: string) {
  const prefix = `mp-shared-${label}-${run}-`;
  const store = await openStore(url);
  const now = Date.now();
  await Promise.all(
    Array.from({ length: APPROVALS }, (_, i) =>
      store.approvals.create({
        id: `${prefix}ap-${String(i).padStart(4, "0")}`,
        tool: "orders.refund",
        args_hash: "a".repeat(64),
        arguments: { i },
        capability_id: null,
        trajectory_id: "t",
        state: "pending",
        created_at: now,
        expires_at: now + 600_000,
        decided_at: null,
        approver: null,
        note: null,
      }),
    ),
  );
  type Out = { spent_ok: number; consumed: string[] };
  const args = (name: string) => [url, prefix, String(SPENDS), String(LIMIT), String(APPROVALS), name];
  const a = startWorker<Out>(sharedWorker, args("A"), "A");
  const b = startWorker<Out>(sharedWorker, args("B"), "B");
  await Promise.all([a.ready, b.ready]);
  a.go();
  b.go();
  const [outA, outB] = await Promise.all([a.done, b.done]);

  expect(outA.spent_ok + outB.spent_ok).toBe(LIMIT);
  expect(await store.budgets.spent(`${prefix}budget`)).toBe(LIMIT);
  const consumed = [...outA.consumed, ...outB.consumed];
  expect(consumed).toHaveLength(APPROVALS);
  expect(new Set(consumed).size).toBe(APPROVALS);
  const sample = await store.approvals.get(outB.consumed[0] ?? outA.consumed[0]!);
  expect(sample).toMatchObject({ state: "consumed", approver: outB.consumed.length ? "B" : "A" });
  await store.close();
}

describe("two OS processes, 1,000 keys each, submitted by both at once", () => {
  it(
    "sqlite: one file shared by both processes, every effect exactly once",
    async () => {
      await raceTwoProcesses(`sqlite:${join(dir, "shared.db")}`, "sqlite");
    },
    SLOW,
  );

  it.runIf(redisUp)(
    "redis: every effect exactly once",
    async () => {
      await raceTwoProcesses(withParam(REDIS_URL, `prefix=${redisPrefix}`), "redis");
    },
    SLOW,
  );

  it.runIf(postgresUp)(
    "postgres: every effect exactly once",
    async () => {
      await raceTwoProcesses(withParam(POSTGRES_URL, `schema=${pgSchema}`), "postgres");
    },
    SLOW,
  );
});

describe("two OS processes spend one budget and race for the same approvals", () => {
  it(
    "sqlite: the limit holds exactly and every approval is consumed once",
    async () => {
      await raceBudgetAndApprovals(`sqlite:${join(dir, "shared-budget.db")}`, "sqlite");
    },
    SLOW,
  );

  it.runIf(redisUp)(
    "redis: the limit holds exactly and every approval is consumed once",
    async () => {
      await raceBudgetAndApprovals(withParam(REDIS_URL, `prefix=${redisPrefix}`), "redis");
    },
    SLOW,
  );

  it.runIf(postgresUp)(
    "postgres: the limit holds exactly and every approval is consumed once",
    async () => {
      await raceBudgetAndApprovals(withParam(POSTGRES_URL, `schema=${pgSchema}`), "postgres");
    },
    SLOW,
  );
});
