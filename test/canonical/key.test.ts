import { createHash, createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  clientRecordKey,
  deriveIdempotencyKey,
  deriveKeyAndFingerprint,
  fingerprint,
  IdempotencyKeyError,
  keyMaterial,
  validateClientKey,
} from "../../src/canonical/key.js";
import { CanonicalJsonError } from "../../src/canonical/jcs.js";

const call = {
  trajectory_id: "traj-1",
  turn: 3,
  call_id: "call_7",
  tool: "orders.refund",
  args: { order_id: "o_1", amount_cents: 1250 },
};

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected a throw");
}

describe("deriveIdempotencyKey", () => {
  it("is SHA-256 hex of the canonical tuple [trajectory_id, turn, call_id, tool, args]", () => {
    const material = '["traj-1",3,"call_7","orders.refund",{"amount_cents":1250,"order_id":"o_1"}]';
    expect(keyMaterial(call)).toBe(material);
    expect(deriveIdempotencyKey(call)).toBe(createHash("sha256").update(material).digest("hex"));
    expect(deriveIdempotencyKey(call)).toMatch(/^[0-9a-f]{64}$/);
  });

  it("does not depend on argument key order ({path, force} vs {force, path})", () => {
    const a = deriveIdempotencyKey({ ...call, args: { path: "/a", force: true } });
    const b = deriveIdempotencyKey({ ...call, args: { force: true, path: "/a" } });
    expect(a).toBe(b);
  });

  it("changes with every field of the tuple", () => {
    const base = deriveIdempotencyKey(call);
    const variants = [
      { ...call, trajectory_id: "traj-2" },
      { ...call, turn: 4 },
      { ...call, call_id: "call_8" },
      { ...call, tool: "orders.cancel" },
      { ...call, args: { ...call.args, amount_cents: 1251 } },
    ];
    const keys = new Set(variants.map((v) => deriveIdempotencyKey(v)));
    expect(keys.size).toBe(5);
    expect(keys.has(base)).toBe(false);
  });

  it('is injective where a "|" join is not: ("a|b","c") and ("a","b|c") get different keys', () => {
    // call_id and tool are adjacent in the tuple, so a "|" join cannot tell where one ends.
    const left = { ...call, call_id: "a|b", tool: "c" };
    const right = { ...call, call_id: "a", tool: "b|c" };
    const seedJoin = (v: typeof call) =>
      `${v.trajectory_id}|${v.turn}|${v.call_id}|${v.tool}|${JSON.stringify(v.args)}`;
    expect(seedJoin(left)).toBe(seedJoin(right));
    expect(keyMaterial(left)).toBe('["traj-1",3,"a|b","c",{"amount_cents":1250,"order_id":"o_1"}]');
    expect(keyMaterial(right)).toBe('["traj-1",3,"a","b|c",{"amount_cents":1250,"order_id":"o_1"}]');
    expect(deriveIdempotencyKey(left)).not.toBe(deriveIdempotencyKey(right));
  });

  it("is HMAC-SHA256 under a secret: different from the plain key, and from another secret's", () => {
    const keyed = deriveIdempotencyKey(call, { secret: "s3cret" });
    expect(keyed).toBe(createHmac("sha256", "s3cret").update(keyMaterial(call)).digest("hex"));
    expect(keyed).not.toBe(deriveIdempotencyKey(call));
    expect(keyed).not.toBe(deriveIdempotencyKey(call, { secret: new Uint8Array([1, 2, 3]) }));
  });

  it("refuses a bad tuple field, naming it", () => {
    expect(thrown(() => deriveIdempotencyKey({ ...call, turn: -1 })).message).toMatchInlineSnapshot(
      `"turn must be a non-negative integer; received -1"`,
    );
    expect(thrown(() => deriveIdempotencyKey({ ...call, turn: 1.5 })).message).toMatchInlineSnapshot(
      `"turn must be a non-negative integer; received 1.5"`,
    );
    const err = thrown(() => deriveIdempotencyKey({ ...call, trajectory_id: "" }));
    expect(err).toBeInstanceOf(IdempotencyKeyError);
    expect(err.message).toMatchInlineSnapshot(`"trajectory_id must be a non-empty string; received an empty string"`);
    expect(thrown(() => deriveIdempotencyKey({ ...call, tool: 7 as unknown as string })).message).toMatchInlineSnapshot(
      `"tool must be a non-empty string; received 7"`,
    );
  });

  it("refuses non-JSON arguments with the path under $.args", () => {
    const err = thrown(() => deriveIdempotencyKey({ ...call, args: { items: [1, 2, 3, undefined] } }));
    expect(err).toBeInstanceOf(CanonicalJsonError);
    expect(err.message).toMatchInlineSnapshot(
      `"$.args.items[3]: undefined is not JSON (JSON.stringify would drop it); omit the property or use null"`,
    );
  });
});

describe("fingerprint", () => {
  it("is SHA-256 hex of the canonical arguments, independent of key order", () => {
    expect(fingerprint({ b: 1, a: [true, null] })).toBe(
      createHash("sha256").update('{"a":[true,null],"b":1}').digest("hex"),
    );
    expect(fingerprint({ a: [true, null], b: 1 })).toBe(fingerprint({ b: 1, a: [true, null] }));
    expect(fingerprint({ a: 1 })).not.toBe(fingerprint({ a: 2 }));
  });

  it("hashes the canonical text as UTF-8, as the keys stored before did (two-, three- and four-byte characters)", () => {
    const args = { note: "é ✓ 😀", ключ: "値" };
    const text = '{"note":"é ✓ 😀","ключ":"値"}';
    expect(fingerprint(args)).toBe(createHash("sha256").update(Buffer.from(text, "utf8")).digest("hex"));
    const material = `["traj-1",3,"call_7","orders.refund",${text}]`;
    expect(deriveIdempotencyKey({ ...call, args })).toBe(
      createHash("sha256").update(Buffer.from(material, "utf8")).digest("hex"),
    );
  });
});

describe("clientRecordKey", () => {
  it('is SHA-256 hex (or HMAC-SHA256 under a secret) of the canonical ["client", holder, tool, key]', () => {
    const scope = { tool: "orders.refund", holder: "hld_1", key: "order-o_1 refund ✓" };
    const material = '["client","hld_1","orders.refund","order-o_1 refund ✓"]';
    expect(clientRecordKey(scope)).toBe(createHash("sha256").update(material, "utf8").digest("hex"));
    expect(clientRecordKey(scope, { secret: "s3cret" })).toBe(
      createHmac("sha256", "s3cret").update(material, "utf8").digest("hex"),
    );
    expect(clientRecordKey({ ...scope, holder: null })).toBe(
      createHash("sha256").update('["client",null,"orders.refund","order-o_1 refund ✓"]', "utf8").digest("hex"),
    );
  });
});

describe("deriveKeyAndFingerprint", () => {
  it("is deriveIdempotencyKey and fingerprint of the same call, with or without a secret", () => {
    const args = { b: [1, { d: "x", c: null }], a: "é" };
    for (const options of [{}, { secret: "s3cret" }, { secret: new Uint8Array([1, 2, 3]) }]) {
      expect(deriveKeyAndFingerprint({ ...call, args }, options)).toEqual({
        key: deriveIdempotencyKey({ ...call, args }, options),
        fingerprint: fingerprint(args),
      });
    }
  });

  it("refuses what deriveIdempotencyKey refuses, with the same message, a tuple field before the arguments", () => {
    for (const bad of [
      { ...call, turn: -1 },
      { ...call, call_id: "" },
      { ...call, args: { items: [1, undefined] } },
      { ...call, turn: 1.5, args: { items: [undefined] } },
    ]) {
      const err = thrown(() => deriveKeyAndFingerprint(bad));
      expect(err.constructor).toBe(thrown(() => deriveIdempotencyKey(bad)).constructor);
      expect(err.message).toBe(thrown(() => deriveIdempotencyKey(bad)).message);
    }
    expect(thrown(() => deriveKeyAndFingerprint({ ...call, turn: 1.5, args: { items: [undefined] } })).message).toBe(
      "turn must be a non-negative integer; received 1.5",
    );
  });
});

describe("validateClientKey", () => {
  it("accepts 1–255 printable characters", () => {
    expect(validateClientKey("k")).toBe("k");
    expect(validateClientKey("x".repeat(255))).toHaveLength(255);
    expect(validateClientKey("order-o_1 refund ✓")).toBe("order-o_1 refund ✓");
  });

  it("refuses a key over 255 characters", () => {
    expect(thrown(() => validateClientKey("x".repeat(256))).message).toMatchInlineSnapshot(
      `"idempotency_key must be at most 255 characters; received 256 characters; use a shorter key, e.g. a UUID or a SHA-256 hex digest"`,
    );
  });

  it("refuses control characters (C0, DEL, C1), naming the character and index", () => {
    expect(thrown(() => validateClientKey("abc\ndef")).message).toMatchInlineSnapshot(
      `"idempotency_key must not contain control characters; received U+000A at index 3; remove it (keys are printed in logs and headers)"`,
    );
    expect(thrown(() => validateClientKey("a\u007f")).message).toContain("U+007F at index 1");
    expect(thrown(() => validateClientKey("\u0085")).message).toContain("U+0085 at index 0");
    expect(thrown(() => validateClientKey("tab\there")).message).toContain("U+0009");
  });

  it("refuses an empty or non-string key, naming the field it was given", () => {
    expect(thrown(() => validateClientKey("")).message).toMatchInlineSnapshot(
      `"idempotency_key must be a non-empty string of at most 255 characters; received an empty string"`,
    );
    const err = thrown(() => validateClientKey(42, "Idempotency-Key"));
    expect(err).toMatchObject({ code: "invalid_idempotency_key", field: "Idempotency-Key" });
    expect(err.message).toMatchInlineSnapshot(
      `"Idempotency-Key must be a non-empty string of at most 255 characters; received 42"`,
    );
  });
});
