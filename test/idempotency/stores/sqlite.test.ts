/** The SQLite store: the conformance suite on a real file, plus what only a file can show. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createSqliteStore } from "../../../src/idempotency/stores/sqlite.js";
import { describeStoreConformance } from "../store.conformance.js";

const dir = mkdtempSync(join(tmpdir(), "toolgate-sqlite-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describeStoreConformance("sqlite", () => createSqliteStore({ path: join(dir, "conformance", "state.db") }));

describe("sqlite store", () => {
  const claim = (owner: string, now: number) => ({
    owner,
    lease_until: now + 1000,
    fingerprint: null,
    tool: null,
    now,
  });

  it("creates the directory, and reopening the file keeps every record (durable)", async () => {
    const path = join(dir, "nested", "deeper", "state.db");
    const first = await createSqliteStore({ path });
    expect(first.capabilities).toEqual({ shared: true, durable: true });
    await first.records.claim("k", claim("a", 1000));
    await first.records.transition("k", "a", "IN_FLIGHT", {
      state: "COMPLETED",
      result: { id: 7 },
      expires_at: null,
      now: 1001,
    });
    await first.close();
    const again = await createSqliteStore({ path });
    expect(await again.records.get("k", 5000)).toMatchObject({ state: "COMPLETED", result: { id: 7 } });
    await again.close();
  });

  it("two handles on one file see each other's claims (what two processes do)", async () => {
    const path = join(dir, "shared.db");
    const [a, b] = await Promise.all([createSqliteStore({ path }), createSqliteStore({ path })]);
    expect((await a.records.claim("k", claim("a", 1))).claimed).toBe(true);
    expect(await b.records.claim("k", claim("b", 2))).toMatchObject({ claimed: false, record: { owner: "a" } });
    expect(await b.budgets.spend("x", 3, 5)).toEqual({ ok: true, remaining: 2 });
    expect(await a.budgets.spend("x", 3, 5)).toEqual({ ok: false, remaining: 2 });
    await Promise.all([a.close(), b.close()]);
  });

  it("keeps results byte-for-byte: key order, large and fractional numbers, unicode", async () => {
    const store = await createSqliteStore({ path: ":memory:" });
    expect(store.capabilities.durable).toBe(false);
    const result = { z: 1, a: [0.1, 1e21, -5e-324, 9007199254740991], é: "🎉", nested: { b: null, a: true } };
    await store.records.claim("k", claim("a", 1));
    await store.records.transition("k", "a", "IN_FLIGHT", { state: "COMPLETED", result, now: 2 });
    const read = await store.records.get("k", 3);
    expect(JSON.stringify(read?.result)).toBe(JSON.stringify(result));
    await store.close();
  });

  it("a path that is not a database fails with store_unavailable naming the path", async () => {
    const path = join(dir, "not-a-db.txt");
    writeFileSync(path, "this is plain text, not SQLite ".repeat(100));
    await expect(createSqliteStore({ path })).rejects.toMatchObject({ code: "store_unavailable" });
    await expect(createSqliteStore({ path })).rejects.toThrow(
      `cannot open the SQLite store at ${path}: file is not a database`,
    );
  });

  it("a closed store rejects further operations, and close() is idempotent", async () => {
    const store = await createSqliteStore({ path: join(dir, "closed.db") });
    await store.close();
    await store.close();
    await expect(store.records.get("k", 1)).rejects.toThrow(/not open/);
  });
});
