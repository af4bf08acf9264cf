/** The PostgreSQL store against the real server: conformance, concurrent DDL, and a server that is down. */
import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { createPostgresStore } from "../../../src/idempotency/stores/postgres.js";
import { POSTGRES_URL, serviceAvailable } from "../../support/require.js";
import { dropPgSchema } from "../fixtures/service-cleanup.js";
import { describeStoreConformance } from "../store.conformance.js";

const up = await serviceAvailable(
  "PostgreSQL",
  new URL(POSTGRES_URL).hostname,
  Number(new URL(POSTGRES_URL).port || 5432),
);
// One schema per run of this file: other files and engineers share the server.
const schema = `tg_test_pg_${randomBytes(4).toString("hex")}`;

describe.runIf(up)("postgres store", () => {
  afterAll(() => dropPgSchema(schema));

  describeStoreConformance("postgres", () => createPostgresStore({ url: POSTGRES_URL, schema }));
  // Writes after the claim on a second pool without waiting for the WAL flush: each one is still
  // visible to the claim's pool as soon as it returns, so every case holds unchanged.
  describeStoreConformance("postgres (asyncTransitions)", () =>
    createPostgresStore({ url: POSTGRES_URL, schema, tablePrefix: "async_", asyncTransitions: true }),
  );

  it("several stores opening at once on fresh tables all succeed (advisory-locked DDL)", async () => {
    const stores = await Promise.all(
      Array.from({ length: 6 }, () => createPostgresStore({ url: POSTGRES_URL, schema, tablePrefix: "race_" })),
    );
    const outs = await Promise.all(
      stores.map((s, i) =>
        s.records.claim("k", { owner: `o${i}`, lease_until: 10, fingerprint: null, tool: null, now: 1 }),
      ),
    );
    expect(outs.filter((o) => o.claimed)).toHaveLength(1);
    await Promise.all(stores.map((s) => s.close()));
  });

  it("keeps results byte-for-byte (text, not jsonb): key order and numbers", async () => {
    const store = await createPostgresStore({ url: POSTGRES_URL, schema, tablePrefix: "bytes_" });
    const result = { z: 1, a: [0.1, 1e21, 5e-324, 9007199254740991], é: "🎉", nested: { b: null, a: true } };
    await store.records.claim("k", { owner: "a", lease_until: 10, fingerprint: null, tool: null, now: 1 });
    await store.records.transition("k", "a", "IN_FLIGHT", { state: "COMPLETED", result, now: 2 });
    expect(JSON.stringify((await store.records.get("k", 3))?.result)).toBe(JSON.stringify(result));
    await store.close();
  });

  it("refuses a schema or prefix that is not a plain identifier", async () => {
    await expect(
      createPostgresStore({ url: POSTGRES_URL, schema: 'x"; DROP TABLE y; --' }),
    ).rejects.toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: postgres schema must match /^[a-z_][a-z0-9_]{0,40}$/; received "x\\"; DROP TABLE y; --"; example toolgate]`,
    );
    await expect(createPostgresStore({ url: POSTGRES_URL, tablePrefix: "Bad-Prefix" })).rejects.toMatchObject({
      code: "bad_store_option",
    });
  });

  it("a PostgreSQL that is down fails fast with store_unavailable, naming the URL without its password", async () => {
    const err = await createPostgresStore({
      url: "postgres://postgres:s3cret@127.0.0.1:1/test",
      connectTimeoutMs: 500,
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "store_unavailable" });
    expect((err as Error).message).toMatchInlineSnapshot(
      `"cannot open the PostgreSQL store at postgres://postgres:***@127.0.0.1:1/test: connect ECONNREFUSED 127.0.0.1:1"`,
    );
  });

  it("a closed store rejects further operations, and close() is idempotent", async () => {
    const store = await createPostgresStore({ url: POSTGRES_URL, schema, tablePrefix: "closed_" });
    await store.close();
    await store.close();
    await expect(store.records.get("k", 1)).rejects.toThrow(/pool/);
  });
});
