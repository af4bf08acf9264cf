/** Key ring loading, rotation choice, and that key material never leaves it. */
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { generateKey, keyRingFromMap, loadKeys, serializeKeys } from "../../src/capability/keys.js";
import { HOUR, KEY_K1, KEY_K2, testAuthority } from "./support.js";

const forms = (b64: string) => {
  const raw = Buffer.from(b64, "base64");
  return [b64, raw.toString("base64url"), raw.toString("hex")];
};

describe("loadKeys", () => {
  it("reads TOOLGATE_KEYS; the issuing kid is the last listed unless chosen", () => {
    const ring = loadKeys({ env: { TOOLGATE_KEYS: JSON.stringify({ old: KEY_K1, new: KEY_K2 }) } });
    expect(ring.kids).toEqual(["old", "new"]);
    expect(ring.current).toBe("new");
    expect(
      loadKeys({ env: { TOOLGATE_KEYS: JSON.stringify({ old: KEY_K1, new: KEY_K2 }) }, current: "old" }).current,
    ).toBe("old");
    // URL-safe base64 is accepted too.
    expect(keyRingFromMap({ u: Buffer.from(KEY_K2, "base64").toString("base64url") }, "x").kids).toEqual(["u"]);
  });

  it("names the source, the kid and the byte count in every error, never the key", () => {
    const short = Buffer.alloc(31, 7).toString("base64");
    const message = (f: () => unknown) => {
      try {
        f();
      } catch (err) {
        return (err as Error).message;
      }
      throw new Error("no error");
    };
    expect(message(() => loadKeys({ env: { HOME: "/home/ada" } }))).toMatchInlineSnapshot(
      `"no capability keys: pass --keys FILE (in code, loadKeys({ file }); toolgate cap keygen writes defaultKeyFile(), /home/ada/.config/toolgate/keys.json) or set TOOLGATE_KEYS to a JSON map kid → base64 key"`,
    );
    // The file named is the one keygen writes under this environment, XDG_CONFIG_HOME included.
    expect(message(() => loadKeys({ env: { HOME: "/home/ada", XDG_CONFIG_HOME: "/etc/xdg-ada" } }))).toContain(
      "keygen writes defaultKeyFile(), /etc/xdg-ada/toolgate/keys.json)",
    );
    const tooShort = message(() => loadKeys({ env: { TOOLGATE_KEYS: JSON.stringify({ k1: short }) } }));
    expect(tooShort).toMatchInlineSnapshot(
      `"TOOLGATE_KEYS: the key for kid k1 is 31 bytes; at least 32 are required (toolgate cap keygen makes one)"`,
    );
    const notJson = message(() => loadKeys({ env: { TOOLGATE_KEYS: `{"k1":"${KEY_K1}` } }));
    expect(notJson).toMatchInlineSnapshot(`"TOOLGATE_KEYS is not valid JSON; expected {"kid":"base64 key"}"`);
    expect(message(() => keyRingFromMap({ k1: "not base64!" }, "TOOLGATE_KEYS"))).toMatchInlineSnapshot(
      `"TOOLGATE_KEYS: the key for kid k1 must be a base64 string (standard or URL-safe)"`,
    );
    expect(message(() => keyRingFromMap(["x"], "TOOLGATE_KEYS"))).toMatch(
      /must be a JSON object mapping kid → base64 key/,
    );
    expect(message(() => keyRingFromMap({ "bad kid": KEY_K1 }, "TOOLGATE_KEYS"))).toMatch(
      /kid "bad kid" must be 1–64 letters/,
    );
    expect(message(() => keyRingFromMap({}, "TOOLGATE_KEYS"))).toMatch(/the key ring is empty/);
    expect(message(() => keyRingFromMap({ k1: KEY_K1 }, "TOOLGATE_KEYS", "k2"))).toMatch(
      /the issuing kid "k2" is not in the key ring \(kids: k1\)/,
    );
    for (const m of [tooShort, notJson])
      for (const f of [...forms(short), ...forms(KEY_K1)]) expect(m.includes(f)).toBe(false);
  });

  it("generateKey makes 32 random bytes", () => {
    const a = generateKey();
    expect(Buffer.from(a, "base64")).toHaveLength(32);
    expect(generateKey()).not.toBe(a);
  });
});

describe("serializeKeys", () => {
  it("writes the key-file text loadKeys reads back, kids in issuing order", () => {
    const text = serializeKeys({ k1: KEY_K1, k2: KEY_K2 });
    expect(text).toBe(`{\n  "k1": "${KEY_K1}",\n  "k2": "${KEY_K2}"\n}\n`);
    const ring = loadKeys({ env: { TOOLGATE_KEYS: text } });
    expect(ring.kids).toEqual(["k1", "k2"]);
    expect(ring.current).toBe("k2");
  });
});

describe("no key in any output", () => {
  it("the ring, the authority, tokens, decisions and inspections never carry key bytes", async () => {
    const { authority, keys } = testAuthority();
    const token = authority.issue({ rights: ["read"], objects: ["path:/ws"], ttl_ms: HOUR });
    const outputs = [
      inspect(keys, { showHidden: true, depth: 10 }),
      JSON.stringify(keys),
      String(keys),
      inspect(authority, { showHidden: true, depth: 10 }),
      inspect(keys.key("k1"), { showHidden: true }),
      token,
      JSON.stringify(await authority.authorize(token, { op: "read", target: "path:/ws/a" })),
      JSON.stringify(await authority.authorize(token + "x", { op: "read", target: "path:/ws/a" })),
      JSON.stringify(await authority.inspect(token)),
    ];
    expect(outputs[0]).toBe("KeyRing { kids: [k1, k2], current: k1 }");
    for (const out of outputs)
      for (const f of [...forms(KEY_K1), ...forms(KEY_K2)]) expect(out.includes(f)).toBe(false);
  });
});
