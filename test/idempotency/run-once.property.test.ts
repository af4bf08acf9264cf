/**
 * runOnce under every interleaving fast-check's scheduler finds: concurrent calls of one key with
 * tools that succeed, throw after or before their effect, declare no effect, or return non-JSON,
 * some with a truthful probe. Whatever the order, the effect happens at most once and every
 * replay carries the one recorded result.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { NoEffectError } from "../../src/core/errors.js";
import type { ProbeOutcome } from "../../src/core/tool.js";
import { runOnce } from "../../src/idempotency/run-once.js";
import type { RunOnceOutcome } from "../../src/idempotency/outcome.js";
import type { RecordStore, Store } from "../../src/idempotency/store.js";
import { createMemoryStore } from "../../src/idempotency/stores/memory.js";

type Behaviour = "ok" | "throw_after_effect" | "throw_before_effect" | "no_effect" | "not_json";
const behaviour = fc.constantFrom<Behaviour>(
  "ok",
  "throw_after_effect",
  "throw_before_effect",
  "no_effect",
  "not_json",
);

/**
 * The memory store with every record operation run only when the scheduler picks it, so the
 * operations of concurrent calls happen in the orders fast-check explores.
 */
function scheduled(store: Store, s: fc.Scheduler): Store {
  const r = store.records;
  const later =
    <A extends unknown[], R>(label: string, op: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      s.schedule(Promise.resolve(), label).then(() => op(...args));
  const records: RecordStore = {
    claim: later("claim", (k, i) => r.claim(k, i)),
    get: later("get", (k, n) => r.get(k, n)),
    transition: later("transition", (k, o, f, p) => r.transition(k, o, f, p)),
    release: later("release", (k, o, f) => r.release(k, o, f)),
    list: later("list", (q) => r.list(q)),
  };
  return { ...store, records };
}

/** A tool whose effect is an entry in `ledger`, behaving as told. */
function tool(ledger: string[], behaviour: Behaviour, i: number) {
  return async () => {
    const effect = `effect-${i}`;
    switch (behaviour) {
      case "ok":
        ledger.push(effect);
        return effect;
      case "throw_after_effect":
        ledger.push(effect);
        throw new Error("connection reset after the write");
      case "throw_before_effect":
        throw new Error("connection refused");
      case "no_effect":
        throw new NoEffectError("precondition failed");
      case "not_json":
        ledger.push(effect);
        return { effect, at: new Date(0) };
    }
  };
}

describe("runOnce: every interleaving", () => {
  it("the effect happens at most once; replays carry the one result", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(fc.record({ behaviour, probe: fc.boolean() }), { minLength: 2, maxLength: 6 }),
        async (s, calls) => {
          const store = scheduled(createMemoryStore(), s);
          const ledger: string[] = [];
          const probe = (): ProbeOutcome =>
            ledger.length ? { outcome: "applied", result: ledger[0]! } : { outcome: "not_applied" };
          const runs = calls.map((call, i) =>
            runOnce(store, "key", tool(ledger, call.behaviour, i), {
              lease_ms: 60_000,
              now: () => 1_000_000,
              ...(call.probe ? { probe } : {}),
            }),
          );
          await s.waitFor(Promise.all(runs));
          const outs: RunOnceOutcome[] = await Promise.all(runs);

          expect(ledger.length).toBeLessThanOrEqual(1);
          expect(outs.filter((o) => o.status === "executed").length).toBeLessThanOrEqual(1);
          for (const o of outs) {
            if (o.status === "executed" || o.status === "replay") expect(o.result).toBe(ledger[0]);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("callers whose clocks are past the lease never run the effect again, with no probe", async () => {
    const call = fc.record({ behaviour, late: fc.boolean() });
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(call, { minLength: 2, maxLength: 6 }), async (s, calls) => {
        const memory = createMemoryStore();
        const store = scheduled(memory, s);
        const ledger: string[] = [];
        const runs = calls.map((c, i) =>
          runOnce(store, "key", tool(ledger, c.behaviour, i), {
            lease_ms: 1000,
            now: () => (c.late ? 1_000_000 + 5000 : 1_000_000),
          }),
        );
        await s.waitFor(Promise.all(runs));
        await Promise.all(runs);
        expect(ledger.length).toBeLessThanOrEqual(1);
        const record = await memory.records.get("key", 0);
        if (record?.state === "COMPLETED") expect(record.result).toBe(ledger[0]);
      }),
      { numRuns: 300 },
    );
  });
});
