/** Conformance: the state machine of `runOnce` and the operator's `resolveInDoubt` over a store (docs/idempotency.md).
 * */
import { describe, expect, it } from "vitest";
import { NoEffectError } from "../../../src/core/errors.js";
import type { ProbeOutcome } from "../../../src/core/tool.js";
import { runOnce, type RunOnceOptions } from "../../../src/idempotency/run-once.js";
import { listRecordViews } from "../../../src/idempotency/inspect.js";
import { resolveInDoubt } from "../../../src/idempotency/resolve-in-doubt.js";
import type { RunOnceOutcome } from "../../../src/idempotency/outcome.js";
import type { ConformanceContext } from "../store.conformance.js";

/** An execute that counts its runs and returns `result`. */
function counted<T>(result: T) {
  const fn = async () => {
    fn.runs++;
    return result;
  };
  fn.runs = 0;
  return fn;
}

/** A promise with its resolve exposed: lets a test hold an executor mid-effect. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
}

const LEASE = 30_000;

export function runOnceCases(c: ConformanceContext): void {
  describe("runOnce", () => {
    const run = (key: string, execute: () => unknown, options: Partial<RunOnceOptions> = {}): Promise<RunOnceOutcome> =>
      runOnce(c.store(), key, execute, { lease_ms: LEASE, ...options });

    it("unseen → executed and COMPLETED; every repeat replays the stored result without executing", async () => {
      const key = c.key("s-exec");
      const exec = counted({ refund_id: "r_9", amount_cents: 500 });
      const t = Date.now();
      const first = await run(key, exec, { tool: "orders.refund", now: () => t, ttl_ms: 60_000 });
      expect(first).toMatchObject({ status: "executed", result: { refund_id: "r_9", amount_cents: 500 } });
      expect(first.status === "executed" && first.record).toMatchObject({
        state: "COMPLETED",
        tool: "orders.refund",
        expires_at: t + 60_000,
      });
      for (let i = 0; i < 3; i++) {
        expect(await run(key, exec)).toMatchObject({
          status: "replay",
          settled_by: "stored",
          result: { refund_id: "r_9", amount_cents: 500 },
        });
      }
      expect(exec.runs).toBe(1);
    });

    it("default TTL of a COMPLETED record is 24 h; ttl_ms null keeps it forever", async () => {
      const t = Date.now();
      const a = await run(c.key("s-ttl-default"), counted(1), { now: () => t });
      expect(a.status === "executed" && a.record.expires_at).toBe(t + 24 * 3600 * 1000);
      const b = await run(c.key("s-ttl-null"), counted(1), { now: () => t, ttl_ms: null });
      expect(b.status === "executed" && b.record.expires_at).toBeNull();
    });

    it("a repeat while IN_FLIGHT is refused with retry_after_ms, never run in parallel", async () => {
      const key = c.key("s-inflight");
      const hold = gate();
      let runs = 0;
      const first = run(key, async () => {
        runs++;
        await hold.opened;
        return "done";
      });
      await waitForState(c, key, "IN_FLIGHT");
      const repeat = await run(key, async () => runs++);
      expect(repeat.status).toBe("in_flight");
      expect(repeat.status === "in_flight" && repeat.retry_after_ms).toBeGreaterThan(0);
      expect(repeat.status === "in_flight" && repeat.retry_after_ms).toBeLessThanOrEqual(LEASE);
      hold.open();
      expect(await first).toMatchObject({ status: "executed", result: "done" });
      expect(await run(key, async () => runs++)).toMatchObject({ status: "replay", result: "done" });
      expect(runs).toBe(1);
    });

    it("execute throws → IN_DOUBT (an exception never releases the key); repeats are refused", async () => {
      const key = c.key("s-throw");
      let runs = 0;
      const out = await run(key, async () => {
        runs++;
        throw new Error("socket hang up");
      });
      expect(out).toMatchObject({ status: "in_doubt", cause: "execute_failed", record: { state: "IN_DOUBT" } });
      expect(out.status === "in_doubt" && out.reason).toContain("socket hang up");
      expect(out.status === "in_doubt" && (out.error as Error).message).toBe("socket hang up");
      const repeat = await run(key, async () => runs++);
      expect(repeat).toMatchObject({ status: "in_doubt", cause: "unsettled" });
      expect(runs).toBe(1);
      expect(await c.store().records.get(key, Date.now())).toMatchObject({
        state: "IN_DOUBT",
        error: expect.stringContaining("socket hang up"),
      });
    });

    it("NoEffectError releases the key; the next call executes", async () => {
      const key = c.key("s-noeffect");
      const out = await run(key, async () => {
        throw new NoEffectError("order o_1 is already shipped", "conflict");
      });
      expect(out.status).toBe("released_no_effect");
      expect(out.status === "released_no_effect" && out.error.code).toBe("conflict");
      expect(await c.store().records.get(key, Date.now())).toBeNull();
      expect(await run(key, counted("second"))).toMatchObject({ status: "executed", result: "second" });
    });

    it("a result that is not JSON → IN_DOUBT naming the path (the effect happened)", async () => {
      const key = c.key("s-notjson");
      const out = await run(key, async () => ({ id: 1, at: new Date(0), n: 10n }));
      expect(out).toMatchObject({ status: "in_doubt", cause: "result_not_json", record: { state: "IN_DOUBT" } });
      expect(out.status === "in_doubt" && out.reason).toContain("$.result.at");
      expect(await c.store().records.get(key, Date.now())).toMatchObject({ state: "IN_DOUBT" });
    });

    it("a tool that returns nothing stores null", async () => {
      const key = c.key("s-void");
      expect(await run(key, async () => undefined)).toMatchObject({ status: "executed", result: null });
      expect(await run(key, async () => 1)).toMatchObject({ status: "replay", result: null });
    });

    it("an expired lease means IN_DOUBT, never free to run again", async () => {
      const key = c.key("s-lease");
      const t0 = Date.now();
      // An executor claimed and died: only its claim exists.
      await c
        .store()
        .records.claim(key, { owner: "dead", lease_until: t0 + 1000, fingerprint: null, tool: "t", now: t0 });
      const during = await run(key, counted(1), { now: () => t0 + 400 });
      expect(during).toMatchObject({ status: "in_flight", retry_after_ms: 600 });
      const exec = counted(1);
      const after = await run(key, exec, { now: () => t0 + 1000 });
      expect(after).toMatchObject({
        status: "in_doubt",
        cause: "lease_expired",
        record: { state: "IN_DOUBT", owner: "dead" },
      });
      expect(after.status === "in_doubt" && after.reason).toContain("the lease ended at");
      expect(await run(key, exec, { now: () => t0 + 9_999_999 })).toMatchObject({
        status: "in_doubt",
        cause: "unsettled",
      });
      expect(exec.runs).toBe(0);
    });

    it("the lease ends at lease_until for every reader: runOnce, resolveInDoubt and the listing agree", async () => {
      // record.ts effectiveState decides it for all three; the store returns the record as stored.
      const base = c.key("s-lease-edge");
      const t0 = Date.now();
      const end = t0 + 1000;
      const keys = ["a", "b", "c"].map((k) => `${base}-${k}`);
      for (const k of keys)
        await c.store().records.claim(k, { owner: "dead", lease_until: end, fingerprint: null, tool: "t", now: t0 });
      const views = async (at: number, state?: "IN_DOUBT") =>
        (await listRecordViews(c.store(), { after: base, limit: 10, now: at, ...(state ? { state } : {}) })).filter(
          (r) => r.key.startsWith(base),
        );
      const listed = async (at: number) => (await views(at)).map((r) => r.reads_as);

      expect(await listed(end - 1)).toEqual(["IN_FLIGHT", "IN_FLIGHT", "IN_FLIGHT"]);
      expect(await run(keys[0]!, counted(1), { now: () => end - 1 })).toMatchObject({
        status: "in_flight",
        retry_after_ms: 1,
      });
      await expect(
        resolveInDoubt(c.store(), keys[1]!, { outcome: "not_applied" }, { now: () => end - 1 }),
      ).rejects.toThrow(/IN_FLIGHT until .* \(1 ms\)/);

      expect(await listed(end)).toEqual(["IN_DOUBT", "IN_DOUBT", "IN_DOUBT"]);
      expect(await run(keys[0]!, counted(1), { now: () => end })).toMatchObject({
        status: "in_doubt",
        cause: "lease_expired",
      });
      expect(await resolveInDoubt(c.store(), keys[1]!, { outcome: "not_applied" }, { now: () => end })).toEqual({
        settled: "released",
        key: keys[1],
      });
      // keys[0] is stored IN_DOUBT now, keys[1] is gone, keys[2] is still stored IN_FLIGHT and reads IN_DOUBT.
      expect((await views(end, "IN_DOUBT")).map((r) => [r.key, r.state])).toEqual([
        [keys[0], "IN_DOUBT"],
        [keys[2], "IN_FLIGHT"],
      ]);
    });

    it("a late executor is fenced out: its completion does not overwrite the IN_DOUBT record", async () => {
      const key = c.key("s-late");
      let t = Date.now();
      const clock = () => t;
      const hold = gate();
      const late = run(
        key,
        async () => {
          await hold.opened;
          return "late result";
        },
        { now: clock, lease_ms: 1000 },
      );
      await waitForState(c, key, "IN_FLIGHT");
      t += 5000; // the lease passes while the executor is stuck
      expect(await run(key, counted(0), { now: clock })).toMatchObject({ status: "in_doubt", cause: "lease_expired" });
      hold.open();
      const out = await late;
      expect(out).toMatchObject({
        status: "in_doubt",
        cause: "lease_lost",
        result: "late result",
        record: { state: "IN_DOUBT" },
      });
      expect(await c.store().records.get(key, t)).toMatchObject({ state: "IN_DOUBT", result: null });
    });

    it("a late executor cannot overwrite a record a probe settled", async () => {
      const key = c.key("s-late-probe");
      let t = Date.now();
      const clock = () => t;
      const hold = gate();
      const late = run(
        key,
        async () => {
          await hold.opened;
          return "late";
        },
        { now: clock, lease_ms: 1000 },
      );
      await waitForState(c, key, "IN_FLIGHT");
      t += 5000;
      const probed = await run(key, counted(0), {
        now: clock,
        probe: () => ({ outcome: "applied", result: "from probe" }),
      });
      expect(probed).toMatchObject({ status: "replay", settled_by: "probe", result: "from probe" });
      hold.open();
      expect(await late).toMatchObject({
        status: "in_doubt",
        cause: "lease_lost",
        record: { state: "COMPLETED", result: "from probe" },
      });
      expect(await run(key, counted(0), { now: clock })).toMatchObject({ status: "replay", result: "from probe" });
    });

    it("a client key reused with other arguments is refused (fingerprint mismatch)", async () => {
      const key = c.key("s-fp");
      const [f1, f2] = ["1".repeat(64), "2".repeat(64)];
      const exec = counted("ok");
      expect(await run(key, exec, { fingerprint: f1 })).toMatchObject({ status: "executed" });
      expect(await run(key, exec, { fingerprint: f2 })).toMatchObject({
        status: "key_reused",
        expected_fingerprint: f1,
        received_fingerprint: f2,
      });
      expect(await run(key, exec, { fingerprint: f1 })).toMatchObject({ status: "replay", result: "ok" });
      expect(exec.runs).toBe(1);
    });

    describe("probe outcomes on an IN_DOUBT record", () => {
      const doubted = async (label: string) => {
        const key = c.key(label);
        await run(key, async () => {
          throw new Error("timeout");
        });
        return key;
      };

      it("applied → COMPLETED with the probe's result, returned as a replay; later repeats replay it", async () => {
        const key = await doubted("s-probe-applied");
        const exec = counted("never");
        const out = await run(key, exec, { probe: () => ({ outcome: "applied", result: { refund_id: "r_7" } }) });
        expect(out).toMatchObject({
          status: "replay",
          settled_by: "probe",
          result: { refund_id: "r_7" },
          record: { state: "COMPLETED" },
        });
        expect(await run(key, exec)).toMatchObject({
          status: "replay",
          settled_by: "stored",
          result: { refund_id: "r_7" },
        });
        expect(exec.runs).toBe(0);
      });

      it("not_applied → released and this call executes", async () => {
        const key = await doubted("s-probe-not");
        const exec = counted("ran now");
        const out = await run(key, exec, { probe: async () => ({ outcome: "not_applied" }) });
        expect(out).toMatchObject({
          status: "executed",
          result: "ran now",
          after_probe: "not_applied",
          record: { state: "COMPLETED" },
        });
        expect(exec.runs).toBe(1);
      });

      it("unknown → stays IN_DOUBT with the probe's detail", async () => {
        const key = await doubted("s-probe-unknown");
        const probe: ProbeOutcome = { outcome: "unknown", detail: "payments API unreachable" };
        const out = await run(key, counted(0), { probe: () => probe });
        expect(out).toMatchObject({ status: "in_doubt", cause: "probe_unknown", probe, record: { state: "IN_DOUBT" } });
        expect(out.status === "in_doubt" && out.reason).toContain("payments API unreachable");
        expect(await c.store().records.get(key, Date.now())).toMatchObject({ state: "IN_DOUBT" });
      });

      it("a probe that throws or answers nonsense leaves the record IN_DOUBT", async () => {
        const key = await doubted("s-probe-bad");
        const threw = await run(key, counted(0), {
          probe: () => {
            throw new Error("probe crashed");
          },
        });
        expect(threw).toMatchObject({ status: "in_doubt", cause: "probe_failed" });
        const nonsense = await run(key, counted(0), { probe: () => ({ outcome: "maybe" }) as unknown as ProbeOutcome });
        expect(nonsense).toMatchObject({ status: "in_doubt", cause: "probe_failed" });
        expect(nonsense.status === "in_doubt" && nonsense.reason).toContain('"maybe"');
        const notJson = await run(key, counted(0), {
          probe: () => ({ outcome: "applied", result: { at: new Map() } }) as unknown as ProbeOutcome,
        });
        expect(notJson).toMatchObject({ status: "in_doubt", cause: "probe_failed" });
        expect(await c.store().records.get(key, Date.now())).toMatchObject({ state: "IN_DOUBT" });
      });
    });

    describe("resolveInDoubt (the operator)", () => {
      it("applied → COMPLETED with the operator's result; repeats replay it", async () => {
        const key = c.key("m-applied");
        await run(key, async () => {
          throw new Error("crash");
        });
        const out = await resolveInDoubt(c.store(), key, { outcome: "applied", result: { refund_id: "r_manual" } });
        expect(out).toMatchObject({
          settled: "completed",
          record: { state: "COMPLETED", result: { refund_id: "r_manual" } },
        });
        expect(await run(key, counted(0))).toMatchObject({ status: "replay", result: { refund_id: "r_manual" } });
      });

      it("not_applied → released; the next call executes", async () => {
        const key = c.key("m-not");
        await run(key, async () => {
          throw new Error("crash");
        });
        expect(await resolveInDoubt(c.store(), key, { outcome: "not_applied" })).toEqual({ settled: "released", key });
        expect(await run(key, counted("again"))).toMatchObject({ status: "executed", result: "again" });
      });

      it("resolves an IN_FLIGHT record whose lease passed; refuses a live one, a COMPLETED one and an unseen key", async () => {
        const key = c.key("m-lease");
        const t0 = Date.now();
        await c
          .store()
          .records.claim(key, { owner: "dead", lease_until: t0 + 1000, fingerprint: null, tool: null, now: t0 });
        await expect(
          resolveInDoubt(c.store(), key, { outcome: "not_applied" }, { now: () => t0 + 10 }),
        ).rejects.toMatchObject({ code: "record_in_flight" });
        expect(
          await resolveInDoubt(c.store(), key, { outcome: "applied", result: 1 }, { now: () => t0 + 2000 }),
        ).toMatchObject({ settled: "completed" });
        await expect(
          resolveInDoubt(c.store(), key, { outcome: "applied", result: 2 }, { now: () => t0 + 2001 }),
        ).rejects.toMatchObject({ code: "record_completed" });
        await expect(resolveInDoubt(c.store(), c.key("m-none"), { outcome: "not_applied" })).rejects.toMatchObject({
          code: "record_not_found",
        });
      });
    });

    it(`${c.concurrency} concurrent runOnce calls of one key → exactly one execution, the rest replays or in-flight refusals`, async () => {
      const key = c.key("s-race");
      let runs = 0;
      const outs = await Promise.all(
        Array.from({ length: c.concurrency }, () =>
          run(key, async () => {
            runs++;
            await new Promise((r) => setTimeout(r, 5));
            return { order: "o_1" };
          }),
        ),
      );
      expect(runs).toBe(1);
      const by = (s: string) => outs.filter((o) => o.status === s).length;
      expect(by("executed")).toBe(1);
      expect(by("replay") + by("in_flight")).toBe(c.concurrency - 1);
    });
  });
}

/** Polls until the record reaches `state` (the executor has claimed and is running). */
async function waitForState(c: ConformanceContext, key: string, state: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const r = await c.store().records.get(key, Date.now());
    if (r?.state === state) return;
    await new Promise((res) => setTimeout(res, 2));
  }
  throw new Error(`record ${key} never reached ${state}`);
}
