/**
 * runOnce and resolveInDoubt over the memory store: what the conformance suite cannot show for every backend —
 * a store that fails, bad options, and the exact texts of IN_DOUBT reasons and refusals.
 */
import { describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../../src/idempotency/errors.js";
import { resolveInDoubt } from "../../src/idempotency/resolve-in-doubt.js";
import { runOnce } from "../../src/idempotency/run-once.js";
import type { Store } from "../../src/idempotency/store.js";
import { createMemoryStore } from "../../src/idempotency/stores/memory.js";

const T0 = Date.UTC(2026, 10, 30, 10, 0, 0);
const at = (t: number) => () => t;

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected a rejection");
}

/** A real memory store whose `transition` fails, like a server that went away mid-call. */
function failingTransitions(store: Store): Store {
  return {
    ...store,
    records: {
      ...store.records,
      transition: async () => {
        throw new Error("connect ECONNREFUSED 127.0.0.1:6379");
      },
    },
  };
}

describe("runOnce: a store that is down", () => {
  it("at the claim: a typed error, the call does not run", async () => {
    const store = createMemoryStore();
    await store.close();
    let runs = 0;
    const err = await rejection(runOnce(store, "k1", () => ++runs, { lease_ms: 1000 }));
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect(err).toMatchObject({ code: "store_unavailable", step: "claim", effect: "not_started" });
    expect(err.message).toMatchInlineSnapshot(
      `"the memory store failed during claim: the memory store is closed; the call did not run; retry when the store is back"`,
    );
    expect(runs).toBe(0);
  });

  it("a store method that throws instead of rejecting: the same typed error, the call does not run", async () => {
    const memory = createMemoryStore();
    const throwing: Store = {
      ...memory,
      records: {
        ...memory.records,
        // A store written without async: its failure is a throw, not a rejected promise.
        claim: () => {
          throw new Error("SQLITE_BUSY: database is locked");
        },
      },
    };
    let runs = 0;
    const err = await rejection(runOnce(throwing, "k1", () => ++runs, { lease_ms: 1000 }));
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect(err).toMatchObject({ code: "store_unavailable", step: "claim", effect: "not_started" });
    expect(err.message).toContain("SQLITE_BUSY: database is locked");
    expect(runs).toBe(0);
  });

  it("after the effect: a typed error saying the effect happened; nothing is marked COMPLETED", async () => {
    const memory = createMemoryStore();
    const err = await rejection(
      runOnce(failingTransitions(memory), "k2", () => "done", { lease_ms: 1000, now: at(T0) }),
    );
    expect(err).toMatchObject({ code: "store_unavailable", step: "complete", effect: "happened" });
    expect(err.message).toMatchInlineSnapshot(
      `"the memory store failed during complete: connect ECONNREFUSED 127.0.0.1:6379; the call ran but its result was not recorded; the record stays IN_FLIGHT and reads IN_DOUBT after its lease — settle it with \`toolgate records settle\`"`,
    );
    expect(await memory.records.get("k2", T0)).toMatchObject({ state: "IN_FLIGHT", result: null });
    expect(await runOnce(memory, "k2", () => "again", { lease_ms: 1000, now: at(T0 + 1000) })).toMatchObject({
      status: "in_doubt",
      cause: "lease_expired",
    });
  });

  it("resolveInDoubt against a closed store: a typed error", async () => {
    const store = createMemoryStore();
    await store.close();
    expect(await rejection(resolveInDoubt(store, "k", { outcome: "not_applied" }))).toMatchObject({
      code: "store_unavailable",
      step: "read",
    });
  });
});

describe("runOnce: options", () => {
  it("refuses a lease that is not a positive number of ms", async () => {
    const store = createMemoryStore();
    expect((await rejection(runOnce(store, "k", () => 1, { lease_ms: 0 }))).message).toMatchInlineSnapshot(
      `"runOnce: lease_ms must be a positive number of milliseconds; received 0; e.g. 30000"`,
    );
    expect((await rejection(runOnce(store, "k", () => 1, { lease_ms: NaN }))).message).toContain("received NaN");
    expect((await rejection(runOnce(Promise.resolve(store) as never, "k", () => 1, { lease_ms: 10 }))).message).toBe(
      'runOnce: store: expected a store, e.g. await openStore("sqlite:.toolgate/state.db") or createMemoryStore(); received a Promise (openStore is async: await it)',
    );
    // A JavaScript caller that leaves the options out is told what to pass, not a TypeError.
    expect((await rejection(runOnce(store, "k", () => 1, undefined as never))).message).toBe(
      "runOnce: options must be an object with lease_ms; received undefined; e.g. runOnce(store, key, run, { lease_ms: 30000 })",
    );
    expect((await rejection(runOnce(store, "k", () => 1, { lease_ms: 10, ttl_ms: -5 }))).message).toMatchInlineSnapshot(
      `"runOnce: ttl_ms must be a positive number of milliseconds or null (keep forever); received -5"`,
    );
    expect(await store.records.get("k", Date.now())).toBeNull();
  });

  it("refuses a key over 255 characters or with control characters before touching the store", async () => {
    const store = createMemoryStore();
    let runs = 0;
    expect(
      (await rejection(runOnce(store, "k".repeat(256), () => ++runs, { lease_ms: 10 }))).message,
    ).toMatchInlineSnapshot(
      `"key must be at most 255 characters; received 256 characters; use a shorter key, e.g. a UUID or a SHA-256 hex digest"`,
    );
    expect(await rejection(runOnce(store, "a\u0000b", () => ++runs, { lease_ms: 10 }))).toMatchObject({
      code: "invalid_idempotency_key",
      field: "key",
    });
    expect(runs).toBe(0);
    expect(await store.records.list({ now: Date.now() })).toEqual([]);
  });

  it("uses the owner token it is given, and passes the claim to execute", async () => {
    const store = createMemoryStore();
    let seen: unknown;
    const out = await runOnce(store, "k", (claim) => (seen = claim) && "ok", {
      lease_ms: 500,
      owner: "me",
      now: at(T0),
    });
    expect(seen).toEqual({ key: "k", owner: "me", lease_until: T0 + 500 });
    expect(out).toMatchObject({ status: "executed", record: { owner: "me" } });
  });
});

describe("runOnce: a record that keeps moving under the call", () => {
  it("claims four times, then gives up with settle_contention; the call never runs", async () => {
    // Every claim finds an IN_FLIGHT record past its lease, and every fenced move to IN_DOUBT
    // fails (someone else moved it first): each turn of the state machine must claim again.
    const memory = createMemoryStore();
    let claims = 0;
    const store: Store = {
      ...memory,
      records: {
        ...memory.records,
        claim: async (key) => {
          claims++;
          const dead = {
            key,
            state: "IN_FLIGHT" as const,
            owner: `dead-${claims}`,
            fingerprint: null,
            tool: null,
            lease_until: T0 - 1,
            result: null,
            error: null,
            expires_at: null,
            created_at: T0 - 1000,
            updated_at: T0 - 1000,
          };
          return { claimed: false, record: dead };
        },
        transition: async () => false,
      },
    };
    let runs = 0;
    const err = await rejection(runOnce(store, "busy", () => ++runs, { lease_ms: 1000, now: at(T0) }));
    expect(err).toMatchObject({ code: "settle_contention" });
    expect(err.message).toMatchInlineSnapshot(
      `"runOnce: key busy changed state 4 times while this call tried to claim it; retry the call"`,
    );
    expect(claims).toBe(4);
    expect(runs).toBe(0);
  });
});

describe("runOnce: the texts callers show", () => {
  it("IN_DOUBT after a throw, and the refusal of a repeat", async () => {
    const store = createMemoryStore();
    const first = await runOnce(store, "refund-1", () => Promise.reject(new Error("upstream timed out after 30 s")), {
      lease_ms: 1000,
      now: at(T0),
    });
    expect(first.status === "in_doubt" && first.reason).toMatchInlineSnapshot(
      `"the tool threw before confirming its effect: upstream timed out after 30 s; the effect may have happened, so the key stays claimed; settle it with a probe or by hand: toolgate records settle refund-1 --outcome applied|not_applied"`,
    );
    const repeat = await runOnce(store, "refund-1", () => 1, { lease_ms: 1000, now: at(T0 + 1) });
    expect(repeat.status === "in_doubt" && repeat.reason).toMatchInlineSnapshot(
      `"the call is IN_DOUBT: the tool threw before confirming its effect: upstream timed out after 30 s; repeats are refused so the effect cannot happen twice; settle it with a probe or by hand: toolgate records settle refund-1 --outcome applied|not_applied"`,
    );
  });

  it("an expired lease", async () => {
    const store = createMemoryStore();
    await store.records.claim("k", { owner: "dead", lease_until: T0, fingerprint: null, tool: null, now: T0 - 1000 });
    const out = await runOnce(store, "k", () => 1, { lease_ms: 1000, now: at(T0) });
    expect(out.status === "in_doubt" && out.reason).toMatchInlineSnapshot(
      `"the call is IN_DOUBT: the lease ended at 2026-11-30T10:00:00.000Z without completion; the executor may have died partway through; repeats are refused so the effect cannot happen twice; settle it with a probe or by hand: toolgate records settle k --outcome applied|not_applied"`,
    );
  });

  it("a result that is not JSON", async () => {
    const store = createMemoryStore();
    const out = await runOnce(store, "k", () => ({ rows: [{ id: 1, total: 10n }] }), { lease_ms: 1000, now: at(T0) });
    expect(out.status === "in_doubt" && out.reason).toMatchInlineSnapshot(
      `"the tool ran but its result is not JSON ($.result.rows[0].total: a bigint (10n) is not JSON; use a number within ±2^53 or a decimal string), so it cannot be stored for repeats; the effect happened; return JSON data from the tool, then settle it with a probe or by hand: toolgate records settle k --outcome applied|not_applied"`,
    );
  });

  it("resolveInDoubt refusals", async () => {
    const store = createMemoryStore();
    expect((await rejection(resolveInDoubt(store, "nope", { outcome: "not_applied" }))).message).toMatchInlineSnapshot(
      `"no record for key nope: it was never claimed, was released, or was COMPLETED and passed its TTL"`,
    );
    await store.records.claim("live", { owner: "o", lease_until: T0 + 1500, fingerprint: null, tool: null, now: T0 });
    expect(
      (await rejection(resolveInDoubt(store, "live", { outcome: "not_applied" }, { now: at(T0) }))).message,
    ).toMatchInlineSnapshot(
      `"record live is IN_FLIGHT until 2026-11-30T10:00:01.500Z (1500 ms); its executor may still finish; settle it after the lease passes"`,
    );
    await runOnce(store, "done", () => 1, { lease_ms: 10, now: at(T0) });
    expect(
      (await rejection(resolveInDoubt(store, "done", { outcome: "applied", result: 2 }, { now: at(T0) }))).message,
    ).toMatchInlineSnapshot(
      `"record done is already COMPLETED (at 2026-11-30T10:00:00.000Z); there is nothing to settle"`,
    );
    await runOnce(store, "doubt", () => Promise.reject(new Error("x")), { lease_ms: 10, now: at(T0) });
    const notJson = await rejection(
      resolveInDoubt(store, "doubt", { outcome: "applied", result: { when: new Date(0) } as never }),
    );
    expect(notJson).toMatchObject({ code: "result_not_json" });
    expect(notJson.message).toMatchInlineSnapshot(
      `"the result to store for doubt is not JSON: $.result.when: a Date is not plain JSON data; convert it to an object, array or string first"`,
    );
    const badOutcome = await rejection(resolveInDoubt(store, "doubt", { outcome: "maybe" } as never));
    expect(badOutcome).toMatchObject({ code: "invalid_outcome" });
    expect(badOutcome.message).toMatchInlineSnapshot(`"outcome must be "applied" or "not_applied"; received "maybe""`);
    expect(await store.records.get("doubt", T0)).toMatchObject({ state: "IN_DOUBT" });
  });
});

describe("runOnce: two probers of one IN_DOUBT record", () => {
  it("the later prober takes over; the earlier one, fenced out, answers from the record as it now is", async () => {
    const store = createMemoryStore();
    await runOnce(store, "k", () => Promise.reject(new Error("timeout")), { lease_ms: 1000, now: at(T0) });
    const before = (await store.records.get("k", T0))!;
    let effects = 0;
    let release!: () => void;
    const slow = new Promise<void>((r) => (release = r));
    const first = runOnce(store, "k", () => ++effects, {
      lease_ms: 1000,
      now: at(T0 + 1),
      probe: async () => {
        await slow;
        return { outcome: "not_applied" };
      },
    });
    while ((await store.records.get("k", T0))!.owner === before.owner) await new Promise((r) => setTimeout(r, 1));
    const second = await runOnce(store, "k", () => ++effects, {
      lease_ms: 1000,
      now: at(T0 + 2),
      probe: () => ({ outcome: "not_applied" }),
    });
    expect(second).toMatchObject({ status: "executed", result: 1, after_probe: "not_applied" });
    release();
    expect(await first).toMatchObject({ status: "replay", settled_by: "stored", result: 1 });
    expect(effects).toBe(1);
  });
});
