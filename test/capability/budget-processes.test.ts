/**
 * A budget spent concurrently by two OS processes never exceeds the limit (capability issue,
 * "Checks"): each process authorizes 100 calls of cost 1, eight at a time, against one grant of
 * budget 150 through a shared store. Exactly 150 are allowed in total; the rest are refused with
 * `budget_exhausted`. (Both start on one "go"; how the 150 split between them is up to the
 * scheduler and is not asserted.)
 */
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/idempotency/open.js";
import { POSTGRES_URL, projectRoot, REDIS_URL, serviceAvailable } from "../support/require.js";
import { HOUR, KEY_K1, testAuthority } from "./support.js";

const worker = join(projectRoot, "test", "capability", "fixtures", "spend-worker.ts");
const tsx = join(projectRoot, "node_modules", ".bin", "tsx");
const BUDGET = 150;
const ATTEMPTS = 100;
/** Two tsx start-ups on a loaded two-core machine can take most of a minute. */
const TIMEOUT_MS = 180_000;

interface Outcome {
  allowed: number;
  codes: Record<string, number>;
}

function start(url: string, token: string) {
  const child = spawn(tsx, [worker, url, token, String(ATTEMPTS)], {
    cwd: projectRoot,
    env: { ...process.env, TOOLGATE_KEYS: JSON.stringify({ k1: KEY_K1 }) },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += String(d)));
  child.stderr.on("data", (d) => (err += String(d)));
  const ready = new Promise<void>((done, fail) => {
    const poll = setInterval(() => out.includes("ready\n") && (clearInterval(poll), done()), 20);
    child.once("exit", (code) => (clearInterval(poll), fail(new Error(`worker exited ${code} before ready: ${err}`))));
  });
  // "close", not "exit": at "exit" the child's stdout may still hold its last line (the outcome).
  const result = new Promise<Outcome>((done, fail) =>
    child.once("close", (code) =>
      code === 0
        ? done(JSON.parse(out.split("\n").filter(Boolean).pop()!) as Outcome)
        : fail(new Error(`worker exited ${code}: ${err}`)),
    ),
  );
  return { child, ready, result };
}

async function race(url: string): Promise<void> {
  // The workers run on the real clock, so the grant is issued on it too.
  const { authority } = testAuthority({ now: Date.now });
  const token = authority.issue({ rights: ["write"], objects: ["path:/ws"], budget: BUDGET, ttl_ms: HOUR, kid: "k1" });
  const a = start(url, token);
  const b = start(url, token);
  await Promise.all([a.ready, b.ready]);
  a.child.stdin.write("go\n");
  b.child.stdin.write("go\n");
  const [ra, rb] = await Promise.all([a.result, b.result]);
  console.info(
    `[capability budget race] ${url.split(":")[0]}: process A allowed ${ra.allowed}, process B allowed ${rb.allowed}`,
  );
  expect(ra.allowed + rb.allowed).toBe(BUDGET);
  expect((ra.codes.budget_exhausted ?? 0) + (rb.codes.budget_exhausted ?? 0)).toBe(2 * ATTEMPTS - BUDGET);
  const store = await openStore(url);
  try {
    const [budget] = (await authority.inspect(token)).budgets;
    expect(await store.budgets.spent(budget!.key)).toBe(BUDGET);
  } finally {
    await store.close();
  }
}

describe("budget spent by two processes", () => {
  it(
    "SQLite (the embedded default): never exceeds the budget",
    async () => {
      await race(`sqlite:${join(mkdtempSync(join(tmpdir(), "toolgate-cap-budget-")), "state.db")}`);
    },
    TIMEOUT_MS,
  );

  it(
    "Redis: never exceeds the budget",
    async (ctx) => {
      if (!(await serviceAvailable("Redis", "127.0.0.1", 6379))) return ctx.skip();
      await race(`${REDIS_URL}?prefix=toolgate-cap-test:`);
    },
    TIMEOUT_MS,
  );

  it(
    "PostgreSQL: never exceeds the budget",
    async (ctx) => {
      if (!(await serviceAvailable("PostgreSQL", "127.0.0.1", 5432))) return ctx.skip();
      await race(`${POSTGRES_URL}?table_prefix=tgcap_`);
    },
    TIMEOUT_MS,
  );
});
