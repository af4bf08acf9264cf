/**
 * Text an attacker chose never reaches a person raw through the gateway's own sentences: ids
 * and tool names with control, bidi or invisible characters are refused at the boundary, and
 * names and paths quoted in a refusal (a capability denial, a tool's thrown message) are escaped.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createCapabilityAuthority } from "../../src/capability/authority.js";
import { keyRingFromMap } from "../../src/capability/keys.js";
import { createMemoryStore } from "../../src/idempotency/stores/memory.js";
import { NoEffectError } from "../../src/core/errors.js";
import type { ToolSpec } from "../../src/core/tool.js";
import type { Observation } from "../../src/core/observation.js";
import { gateways } from "./helpers.js";

const make = gateways();
const ESC = "\x1b";
const HOSTILE = [
  `${ESC}[2J`,
  `${ESC}]52;c;cm0gLXJmIH4K${ESC}\\`,
  "\r\n  arguments: {}",
  "\u202eevil",
  "a\u200bb",
  "x\u0085y",
  "t\u{e0041}",
];

/** Controls (but the newline), format characters (bidi, zero-width), separators, default-ignorables. */
const UNSAFE = /(?!\n)[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/u;

/** No raw control, bidi or invisible character anywhere a person may read (newlines of the layout aside). */
function expectShowable(o: Observation): void {
  for (const text of [o.text, o.error?.message ?? "", o.tool, o.call_id]) expect(text).not.toMatch(UNSAFE);
}

/** A read tool that opens `path:/ws/<name>`: its capability request and its refusal quote the file name. */
const opener: ToolSpec = {
  name: "open_file",
  description: "Opens a file of the workspace by name.",
  effect: "read",
  inputSchema: {
    type: "object",
    properties: { name: { type: "string", maxLength: 200 } },
    required: ["name"],
    additionalProperties: false,
  },
  grant: (args) => ({ op: "read", target: `path:/ws/${String(args.name)}` }),
  handler: (args) => {
    throw new NoEffectError(`no such file: /ws/${String(args.name)}`, "not_found");
  },
};

describe("ids and names with control, bidi or invisible characters", () => {
  it("are refused as invalid_proposal naming the field, before anything runs", async () => {
    const { call, catalog, audit } = make();
    for (const field of ["trajectory_id", "call_id", "idempotency_key", "approval_id", "capability"] as const) {
      for (const bad of HOSTILE) {
        const o = await call("add_order_note", { order_id: "o_001", note: "n" }, { [field]: `id-${bad}` });
        expect([field, o.error?.code]).toEqual([field, "invalid_proposal"]);
        expect(o.error?.message).toMatch(
          new RegExp(
            `^The call's ${field} must not contain control, bidi or invisible characters; received U\\+[0-9A-F]{4,5} at index \\d+`,
          ),
        );
        expectShowable(o);
      }
    }
    for (const bad of HOSTILE) {
      const o = await call(`get_order${bad}`, { order_id: "o_001" });
      expect(o.error?.code).toBe("invalid_proposal");
      expect(o.error?.message).toMatch(/^The call's tool must not contain control, bidi or invisible characters/);
      expectShowable(o);
    }
    expect(catalog.calls).toEqual({});
    expect(audit.records.every((r) => r.outcome === "invalid_proposal")).toBe(true);
  });
});

describe("names and paths quoted in the gateway's sentences", () => {
  it("a capability denial naming an attacker's file shows its name escaped", async () => {
    const keys = keyRingFromMap({ k1: randomBytes(32).toString("base64") }, "test");
    const store = createMemoryStore();
    const { call, clock } = make({ store, keys, tools: [opener] });
    const token = createCapabilityAuthority({ keys, store, now: () => clock.now }).issue({
      rights: ["read"],
      objects: ["path:/ws/public"],
      ttl_ms: 3_600_000,
    });
    const o = await call(
      "open_file",
      { name: `${ESC}[2J${ESC}]52;c;ZXZpbA==\x07\u202eevil.txt` },
      { capability: token },
    );
    expect(o.error?.code).toBe("denied");
    expect(o.text).toContain(
      "the target path:/ws/\\u{001B}[2J\\u{001B}]52;c;ZXZpbA==\\u{0007}\\u{202E}evil.txt is outside the capability's objects: path:/ws/public",
    );
    expectShowable(o);
  });

  it("a tool's thrown message about a path is shown escaped inside its fence", async () => {
    const { call } = make({ tools: [opener] });
    const o = await call("open_file", { name: `a${ESC}[8mhidden\r\nok: fine\u2066.txt` });
    expect(o.error?.code).toBe("precondition_failed");
    expect(o.text).toContain("no such file: /ws/a\\u{001B}[8mhidden\\u{000D}\nok: fine\\u{2066}.txt");
    expectShowable(o);
  });
});
