/**
 * The guard store's semantics, written once and run against every backend: pins (first sight
 * pins, a change is held, acceptance only of the reviewed hash) and rate windows (all or none,
 * the window's edge, and for shared stores two instances racing: exactly the limit passes).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GuardStore } from "../../src/idempotency/guard-store.js";

let unique = 0;
/** A server name of its own per case, so cases never see each other's rows. */
const fresh = (what: string) => `${what}-${process.pid}-${Date.now()}-${unique++}`;

export function describeGuardStoreConformance(name: string, open: () => Promise<GuardStore>): void {
  describe(`guard store conformance: ${name}`, () => {
    let store: GuardStore;
    let second: GuardStore;
    beforeAll(async () => {
      store = await open();
      second = store.capabilities.shared ? await open() : store;
    });
    afterAll(async () => {
      await store?.close();
      if (second !== store) await second?.close();
    });

    const def = (description: string) => ({ name: "t", description, inputSchema: { type: "object", n: 1.5 } });

    it("the first report pins a definition exactly as given; the same hash again changes nothing", async () => {
      const server = fresh("s");
      const pin = await store.pins.observe(server, "t", "h1", def("reads a file"), 1000);
      expect(pin).toEqual({
        server,
        tool: "t",
        hash: "h1",
        definition: def("reads a file"),
        pinned_at: 1000,
        pending: null,
      });
      expect(await second.pins.observe(server, "t", "h1", def("reads a file"), 2000)).toEqual(pin);
      expect(await store.pins.list(server)).toEqual([pin]);
    });

    it("another hash is held as pending beside the pin, and a newer change replaces it", async () => {
      const server = fresh("s");
      await store.pins.observe(server, "t", "h1", def("a"), 1000);
      const held = await second.pins.observe(server, "t", "h2", def("b"), 2000);
      expect(held.hash).toBe("h1");
      expect(held.pending).toEqual({ hash: "h2", definition: def("b"), seen_at: 2000 });
      const again = await store.pins.observe(server, "t", "h3", def("c"), 3000);
      expect(again.pending).toEqual({ hash: "h3", definition: def("c"), seen_at: 3000 });
      // The pinned definition reported again leaves the pending one for the operator to see.
      expect((await store.pins.observe(server, "t", "h1", def("a"), 4000)).pending?.hash).toBe("h3");
    });

    it("accept takes only the hash that is pending, and makes it the pin", async () => {
      const server = fresh("s");
      await store.pins.observe(server, "t", "h1", def("a"), 1000);
      await store.pins.observe(server, "t", "h2", def("b"), 2000);
      expect(await store.pins.accept(server, "t", "h9", 3000)).toBeNull();
      expect(await store.pins.accept(server, "other", "h2", 3000)).toBeNull();
      const accepted = await second.pins.accept(server, "t", "h2", 3000);
      expect(accepted).toEqual({ server, tool: "t", hash: "h2", definition: def("b"), pinned_at: 3000, pending: null });
      expect(await store.pins.accept(server, "t", "h2", 4000)).toBeNull();
      expect((await store.pins.observe(server, "t", "h2", def("b"), 5000)).pending).toBeNull();
    });

    it("lists a server's pins by tool name and no other server's; names with separators stay apart", async () => {
      const server = fresh("s:x");
      await store.pins.observe(server, "b", "h", def("b"), 1);
      await store.pins.observe(server, "a:b", "h", def("a"), 1);
      await store.pins.observe(`${server}:a`, "b", "h", def("x"), 1);
      expect((await store.pins.list(server)).map((p) => p.tool)).toEqual(["a:b", "b"]);
    });

    it("concurrent first reports of different definitions pin one; the rest are pending against it", async () => {
      const server = fresh("s");
      const pins = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          (i % 2 ? second : store).pins.observe(server, "t", `h${i}`, def(`${i}`), 10),
        ),
      );
      const pinned = new Set(pins.map((p) => p.hash));
      expect(pinned.size).toBe(1);
      const [winner] = pinned;
      for (const p of pins) if (p.pending) expect(p.pending.hash).not.toBe(winner);
    });

    it("a window counts up to its limit, then refuses with the time left until it ends", async () => {
      const key = fresh("k");
      const w = [{ key, limit: 2, window_ms: 1000 }];
      expect(await store.rates.take(w, 10_000)).toEqual({ ok: true });
      expect(await store.rates.take(w, 10_100)).toEqual({ ok: true });
      expect(await store.rates.take(w, 10_400)).toEqual({
        ok: false,
        key,
        limit: 2,
        window_ms: 1000,
        retry_after_ms: 600,
      });
      // The edge: still the old window 1 ms before it ends, a new one at its end.
      expect(await store.rates.take(w, 10_999)).toMatchObject({ ok: false, retry_after_ms: 1 });
      expect(await store.rates.take(w, 11_000)).toEqual({ ok: true });
    });

    it("counts in every window or none: a full window leaves the others untouched", async () => {
      const a = fresh("a");
      const b = fresh("b");
      expect(await store.rates.take([{ key: b, limit: 1, window_ms: 60_000 }], 1000)).toEqual({ ok: true });
      const both = [
        { key: a, limit: 1, window_ms: 60_000 },
        { key: b, limit: 1, window_ms: 60_000 },
      ];
      expect(await store.rates.take(both, 1001)).toMatchObject({ ok: false, key: b });
      // a was not counted by the refused call, so it still has its one call.
      expect(await store.rates.take([{ key: a, limit: 1, window_ms: 60_000 }], 1002)).toEqual({ ok: true });
    });

    it("racing takers (two instances when shared) never count more than the limit: exactly the limit passes", async () => {
      const key = fresh("race");
      const now = 50_000;
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          (i % 2 ? second : store).rates.take(
            [
              { key, limit: 7, window_ms: 60_000 },
              { key: `${key}-wide`, limit: 100, window_ms: 60_000 },
            ],
            now,
          ),
        ),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(7);
      // The wide window counted only the calls that passed.
      const rest = await store.rates.take([{ key: `${key}-wide`, limit: 8, window_ms: 60_000 }], now);
      expect(rest).toEqual({ ok: true });
      expect(await store.rates.take([{ key: `${key}-wide`, limit: 8, window_ms: 60_000 }], now)).toMatchObject({
        ok: false,
      });
    });

    it("no windows: nothing to count, the call passes", async () => {
      expect(await store.rates.take([], 1)).toEqual({ ok: true });
    });
  });
}
