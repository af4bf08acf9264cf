/**
 * Crash: a child process claims a key, starts its effect and is SIGKILLed. After the
 * lease the record is IN_DOUBT, repeats are refused, and the probe settles it — the effect
 * happens exactly once whether the child died after or before it.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/idempotency/open.js";
import { runOnce } from "../../src/idempotency/run-once.js";
import type { ProbeOutcome } from "../../src/core/tool.js";
import { POSTGRES_URL, REDIS_URL, projectRoot, serviceAvailable } from "../support/require.js";
import { dropPgSchema, dropRedisPrefix } from "./fixtures/service-cleanup.js";

const child = join(projectRoot, "test", "idempotency", "fixtures", "crash-child.ts");
const dir = mkdtempSync(join(tmpdir(), "toolgate-crash-"));
const run = randomBytes(4).toString("hex");
const LEASE = 5_000;
/** Each test starts a child from source (node + tsx): most of a minute on a loaded two-core machine. */
const SLOW = 180_000;
const redisUp = await serviceAvailable("Redis", new URL(REDIS_URL).hostname, Number(new URL(REDIS_URL).port || 6379));
const postgresUp = await serviceAvailable(
  "PostgreSQL",
  new URL(POSTGRES_URL).hostname,
  Number(new URL(POSTGRES_URL).port || 5432),
);
const redisPrefix = `tg-test-crash-${run}:`;
const pgSchema = `tg_test_crash_${run}`;

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  if (redisUp) await dropRedisPrefix(redisPrefix);
  if (postgresUp) await dropPgSchema(pgSchema);
});

/** Starts the child, waits until its effect has started, then SIGKILLs it. */
async function claimAndDie(
  url: string,
  key: string,
  effects: string,
  mode: "after-effect" | "before-effect",
): Promise<void> {
  const proc = spawn(process.execPath, ["--import", "tsx", child, url, key, effects, String(LEASE), mode], {
    cwd: projectRoot,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  proc.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<NodeJS.Signals | null>((r) => proc.on("exit", (_code, signal) => r(signal)));
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: proc.stdout }).on("line", (line) => line === "effect-started" && resolve());
    void exited.then(() => reject(new Error(`child exited before its effect started: ${stderr}`)));
  });
  proc.kill("SIGKILL");
  expect(await exited).toBe("SIGKILL");
}

const effectLines = (file: string, key: string) =>
  existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => l.startsWith(key))
    : [];

/** The tool's probe: reads the environment (the effects file) to see whether the effect happened. */
const probeFor = (file: string, key: string) => (): ProbeOutcome =>
  effectLines(file, key).length > 0
    ? { outcome: "applied", result: { key, found_in: "effects file" } }
    : { outcome: "not_applied" };

const stores: Array<[string, string, boolean]> = [
  ["sqlite", `sqlite:${join(dir, "state.db")}`, true],
  ["redis", `${REDIS_URL}?prefix=${redisPrefix}`, redisUp],
  ["postgres", `${POSTGRES_URL}?schema=${pgSchema}`, postgresUp],
];

describe.each(stores)(
  "crash: the executor is SIGKILLed mid-effect (%s, a durable store)",
  { timeout: SLOW },
  (label, url, up) => {
    it.runIf(up)(
      "after the lease the record is IN_DOUBT, repeats are refused, and the probe settles it as applied",
      async () => {
        const key = `crash-${run}-${label}-after`;
        const effects = join(dir, `${label}-after.log`);
        await claimAndDie(url, key, effects, "after-effect");

        const store = await openStore(url);
        try {
          const claimed = await store.records.get(key, Date.now());
          expect(claimed).toMatchObject({ state: "IN_FLIGHT", tool: "crash.effect" });
          let runs = 0;
          const execute = () => ++runs;
          // Before the lease passes the dead executor still holds it.
          expect(
            await runOnce(store, key, execute, { lease_ms: LEASE, now: () => claimed!.lease_until - 1 }),
          ).toMatchObject({ status: "in_flight", retry_after_ms: 1 });
          const afterLease = () => claimed!.lease_until + 1;
          expect(await runOnce(store, key, execute, { lease_ms: LEASE, now: afterLease })).toMatchObject({
            status: "in_doubt",
            cause: "lease_expired",
          });
          expect(await store.records.get(key, afterLease())).toMatchObject({ state: "IN_DOUBT" });
          expect(await runOnce(store, key, execute, { lease_ms: LEASE, now: afterLease })).toMatchObject({
            status: "in_doubt",
            cause: "unsettled",
          });

          const probed = await runOnce(store, key, execute, {
            lease_ms: LEASE,
            now: afterLease,
            probe: probeFor(effects, key),
          });
          expect(probed).toMatchObject({
            status: "replay",
            settled_by: "probe",
            result: { key, found_in: "effects file" },
          });
          expect(runs).toBe(0);
          expect(effectLines(effects, key)).toHaveLength(1);
          expect(await runOnce(store, key, execute, { lease_ms: LEASE })).toMatchObject({
            status: "replay",
            settled_by: "stored",
          });
        } finally {
          await store.close();
        }
      },
    );

    it.runIf(up)(
      "killed before the effect: the probe finds it not applied and the repeat runs it, exactly once",
      async () => {
        const key = `crash-${run}-${label}-before`;
        const effects = join(dir, `${label}-before.log`);
        await claimAndDie(url, key, effects, "before-effect");

        const store = await openStore(url);
        try {
          const claimed = (await store.records.get(key, Date.now()))!;
          const afterLease = () => claimed.lease_until + 1;
          const effect = () => {
            appendFileSync(effects, `${key} applied\n`);
            return { key, by: "parent" };
          };
          expect(await runOnce(store, key, effect, { lease_ms: LEASE, now: afterLease })).toMatchObject({
            status: "in_doubt",
            cause: "lease_expired",
          });
          const out = await runOnce(store, key, effect, {
            lease_ms: LEASE,
            now: afterLease,
            probe: probeFor(effects, key),
          });
          expect(out).toMatchObject({ status: "executed", after_probe: "not_applied", result: { key, by: "parent" } });
          expect(effectLines(effects, key)).toHaveLength(1);
        } finally {
          await store.close();
        }
      },
    );
  },
);
