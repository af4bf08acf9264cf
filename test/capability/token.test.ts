/**
 * The wire format: canonical blocks, bounds on what a token may make the verifier do, and the
 * strict block validation (an unknown caveat is never ignored).
 */
import { describe, expect, it } from "vitest";
import { canonicalize } from "../../src/canonical/jcs.js";
import { checkBlock } from "../../src/capability/block.js";
import { blockFromInput, type NarrowerInput } from "../../src/capability/input.js";
import { decodeToken, MAX_BLOCKS, MAX_TOKEN_CHARS } from "../../src/capability/token.js";
import { HOUR, T0, testAuthority } from "./support.js";

const { authority } = testAuthority();
const token = authority.issue({
  rights: ["write", "read"],
  objects: ["path:/ws/", "host:API.example.com"],
  max_cost: 3,
  ttl_ms: HOUR,
});
const tag = "A".repeat(43);
const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
const root = { v: 1, id: "cap_root", kid: "k1", rights: ["read"], objects: ["path:/ws"], exp: T0 + HOUR };

function problem(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("accepted");
}

describe("token format", () => {
  it("is tg1.<canonical block>.<tag>, with rights sorted and objects normalised", () => {
    const [, b0, t] = token.split(".");
    const block = JSON.parse(Buffer.from(b0!, "base64url").toString("utf8"));
    expect(Buffer.from(b0!, "base64url").toString("utf8")).toBe(canonicalize(block));
    expect(block).toMatchObject({
      v: 1,
      kid: "k1",
      rights: ["read", "write"],
      objects: ["host:api.example.com", "path:/ws"],
      pred: { max_cost: 3 },
      exp: T0 + HOUR,
    });
    expect(Buffer.from(t!, "base64url")).toHaveLength(32);
  });

  it("bounds length and block count, and refuses repeated ids", () => {
    expect(problem(() => decodeToken("tg1." + "A".repeat(MAX_TOKEN_CHARS)))).toBe(
      `the token is ${MAX_TOKEN_CHARS + 4} characters, above the limit of ${MAX_TOKEN_CHARS}`,
    );
    const many = ["tg1", enc(root), ...Array.from({ length: MAX_BLOCKS }, (_, i) => enc({ id: `b${i}` })), tag].join(
      ".",
    );
    expect(problem(() => decodeToken(many))).toBe(
      `the token has ${MAX_BLOCKS + 1} blocks, above the limit of ${MAX_BLOCKS}`,
    );
    expect(problem(() => decodeToken(["tg1", enc(root), enc({ id: "cap_root" }), tag].join(".")))).toBe(
      "block 1.id repeats the id cap_root of an earlier block",
    );
  });
});

describe("block validation names the field, what was expected and what arrived", () => {
  const cases: Array<[string, unknown, number]> = [
    ["not an object", [1], 0],
    ["bad id", { ...root, id: "a b" }, 0],
    ["wrong version", { ...root, v: 2 }, 0],
    ["no kid", { ...root, kid: undefined }, 0],
    ["no expiry in block 0", { ...root, exp: undefined }, 0],
    ["version in a later block", { id: "x", v: 1 }, 1],
    ["kid in a later block", { id: "x", kid: "k1" }, 1],
    ["empty rights", { id: "x", rights: [] }, 1],
    ["upper-case right", { id: "x", rights: ["READ"] }, 1],
    ["object not a string", { id: "x", objects: [7] }, 1],
    ["bad object", { id: "x", objects: ["path:relative"] }, 1],
    ["unknown predicate", { id: "x", pred: { max_calls: 3 } }, 1],
    ["negative cost", { id: "x", pred: { max_cost: -1 } }, 1],
    ["empty args", { id: "x", pred: { args: [] } }, 1],
    ["bound with two kinds", { id: "x", pred: { args: [{ arg: "n", max: 1, min: 0 }] } }, 1],
    ["bound without a name", { id: "x", pred: { args: [{ max: 1 }] } }, 1],
    ["oneOf of objects", { id: "x", pred: { args: [{ arg: "n", oneOf: [{}] }] } }, 1],
    ["fractional expiry", { id: "x", exp: 1.5 }, 1],
  ];
  it("every malformed block", () => {
    // Round-trip through JSON: what a decoder sees (undefined members vanish).
    const messages = Object.fromEntries(
      cases.map(([name, value, index]) => [name, problem(() => checkBlock(JSON.parse(JSON.stringify(value)), index))]),
    );
    expect(messages).toMatchInlineSnapshot(`
      {
        "bad id": "block 0.id must be an id of letters, digits, _ and -; received "a b"",
        "bad object": "block 1.objects: object "path:relative" is not an absolute path; write it from the root, e.g. path:/ws/src",
        "bound with two kinds": "block 1.pred.args[0] must be exactly one of max, min or oneOf beside arg; received {"arg":"n","max":1,"min":0}",
        "bound without a name": "block 1.pred.args[0] must be an object {arg, max} | {arg, min} | {arg, oneOf}, e.g. {"arg":"amount","max":100}; received {"max":1}",
        "empty args": "block 1.pred.args must be a non-empty list of argument bounds; received []",
        "empty rights": "block 1.rights must be a non-empty list of rights, e.g. ["read","write"]; received []",
        "fractional expiry": "block 1.exp must be epoch milliseconds (a positive integer); received 1.5",
        "kid in a later block": "block 1.kid must be absent (only the first block names the key); received "k1"",
        "negative cost": "block 1.pred.max_cost must be a finite number ≥ 0; received -1",
        "no expiry in block 0": "block 0.exp must be present in the first block; received nothing",
        "no kid": "block 0.kid must be a key id; received nothing",
        "not an object": "block 0 must be a JSON object; received [1]",
        "object not a string": "block 1.objects entry must be a string kind:value; received 7",
        "oneOf of objects": "block 1.pred.args[0].oneOf must be a non-empty list of strings, numbers, booleans or null; received [{}]",
        "unknown predicate": "block 1.pred.max_calls must be absent (unknown predicate kind: this runtime cannot enforce it); received 3",
        "upper-case right": "block 1.rights entry must be a lower-case right such as read, write, execute or connect; received "READ"",
        "version in a later block": "block 1.v must be absent (only the first block carries the version); received 1",
        "wrong version": "block 0.v must be 1; received 2",
      }
    `);
  });
});

describe("grant input", () => {
  const cases: Array<[string, unknown]> = [
    ["not an object", null],
    ["ttl not positive", { ttl_ms: 0 }],
    ["ttl not an integer", { ttl_ms: 1.5 }],
    ["expires_at not epoch ms", { expires_at: "2030-01-01" }],
    ["unknown field", { scope: "all" }],
  ];
  it("every malformed grant input", () => {
    const messages = Object.fromEntries(
      cases.map(([name, input]) => [name, problem(() => blockFromInput(input as NarrowerInput, T0, false))]),
    );
    expect(messages).toMatchInlineSnapshot(`
      {
        "expires_at not epoch ms": "invalid grant: expires_at must be epoch milliseconds; received "2030-01-01"",
        "not an object": "invalid grant: expected an object with rights, objects, max_cost, budget, args, expires_at or ttl_ms",
        "ttl not an integer": "invalid grant: ttl_ms must be a positive integer of milliseconds; received 1.5",
        "ttl not positive": "invalid grant: ttl_ms must be a positive integer of milliseconds; received 0",
        "unknown field": "invalid grant: unknown field scope; expected rights, objects, max_cost, budget, args, expires_at or ttl_ms",
      }
    `);
  });
});
