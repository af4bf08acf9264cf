/**
 * The audit counts every call's argument and observation tokens on the event loop: the work must
 * be bounded whatever the call carried, or one hostile argument stalls every session.
 */
import { createRequire } from "node:module";
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { keyRingFromMap } from "../../src/capability/keys.js";
import { createMemoryAuditSink, completeRecord } from "../../src/runtime/audit.js";
import { MAX_PIECE_LENGTH } from "../../src/observation/pieces.js";
import { countTokens, STEP_LIMITS } from "../../src/observation/tokens.js";
import type { ToolSpec } from "../../src/core/tool.js";
import { gateways } from "./helpers.js";

const require = createRequire(import.meta.url);
const o200k = require("gpt-tokenizer/cjs/encoding/o200k_base") as Record<
  "encode" | "countTokens",
  (text: string, options?: unknown) => unknown
>;

/** Watches the encoder: characters handed to it, and a refusal of any text longer than a piece (the quadratic case). */
const restore: (() => void)[] = [];
afterEach(() => restore.splice(0).forEach((undo) => undo()));
function watchEncoder(): { chars: number } {
  const seen = { chars: 0 };
  for (const name of ["encode", "countTokens"] as const) {
    const original = o200k[name];
    o200k[name] = (text, options) => {
      if (text.length > MAX_PIECE_LENGTH) throw new Error(`the encoder was handed ${text.length} characters at once`);
      seen.chars += text.length;
      return original(text, options);
    };
    restore.push(() => (o200k[name] = original));
  }
  return seen;
}

function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const next = random(29);
const HOSTILE: [string, string][] = [
  ["200 KB of dots", ".".repeat(200_000)],
  [
    "200 KB of random letters",
    Array.from({ length: 200_000 }, () => String.fromCharCode(97 + Math.floor(next() * 26))).join(""),
  ],
  [
    "200 KB of rare CJK",
    Array.from({ length: 70_000 }, () => String.fromCharCode(0x4e00 + Math.floor(next() * 20_000))).join(""),
  ],
];

// A tool that takes any text, so a long argument passes validation and reaches the grant.
const echo: ToolSpec = {
  name: "echo",
  description: "Returns its text.",
  inputSchema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: { text: { type: "string" } },
    required: ["text"],
    additionalProperties: false,
  },
  effect: "read",
  handler: (args) => (args as { text: string }).text.length,
};

const make = gateways();
const keys = keyRingFromMap({ k1: randomBytes(32).toString("base64") }, "test");

describe("audit token counts are bounded per call", () => {
  it("a refused 200 KB argument from a caller without a capability: bounded work, exact when cheap, else an estimate the record names", () => {
    return (async () => {
      for (const [what, text] of HOSTILE) {
        const audit = createMemoryAuditSink();
        const { gateway } = make({ tools: [echo], keys, audit });
        const seen = watchEncoder();
        const o = await gateway.call({ trajectory_id: "t", turn: 0, call_id: "c1", tool: "echo", arguments: { text } });
        restore.splice(0).forEach((undo) => undo());
        expect(o.error?.code, what).toBe("denied");
        const [record] = audit.records;
        expect(record, what).toBeDefined();
        // What one counting step may read of text never seen before, plus the estimate's samples and the denial's own
        // text.
        expect(seen.chars, what).toBeLessThanOrEqual(STEP_LIMITS.encoded + 2 * MAX_PIECE_LENGTH + 32 * 128 + 4096);
        const truth = countTokens(JSON.stringify({ text }));
        if (record!.argument_tokens_estimated) {
          expect(Math.abs(record!.argument_tokens - truth) / truth, what).toBeLessThan(0.1);
        } else {
          expect(record!.argument_tokens, what).toBe(truth);
        }
        await gateway.close();
      }
    })();
  });

  it("names an estimate only when there was one: a long run of one character is cheap and counted exactly", () => {
    // 50,000 dots: quadratic to count as one piece, a few cached chunks now, and within one step.
    const run = ".".repeat(50_000);
    const dots = completeRecord({
      record: { argument_tokens: null, observation_tokens: 5 } as never,
      arguments: { text: run },
      observation_text: "",
    });
    expect(dots.argument_tokens).toBe(countTokens(JSON.stringify({ text: run })));
    expect(dots).not.toHaveProperty("argument_tokens_estimated");
    // Text never seen before (pieces already counted are cached and cost nothing).
    const fresh = random(31);
    const letters = Array.from({ length: 200_000 }, () => String.fromCharCode(97 + Math.floor(fresh() * 26))).join("");
    const cjk = Array.from({ length: 70_000 }, () => String.fromCharCode(0x4e00 + Math.floor(fresh() * 20_000))).join(
      "",
    );
    const record = completeRecord({
      record: { argument_tokens: null, observation_tokens: null } as never,
      arguments: { text: letters },
      observation_text: cjk,
    });
    expect(record).toMatchObject({ argument_tokens_estimated: true, observation_tokens_estimated: true });
  });
});

describe("arguments the audit cannot serialise", () => {
  const pending = (args: unknown) => ({
    record: { argument_tokens: null, observation_tokens: 3 } as never,
    arguments: args,
    observation_text: "",
  });

  it("are replaced by a bounded marker that says why, and the record is still complete", () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    const deep = JSON.parse(`{"v":${"[".repeat(100_000)}${"]".repeat(100_000)}}`) as unknown;
    const cases: Array<[string, unknown, RegExp]> = [
      [
        "deep",
        deep,
        /^arguments nested 100001 levels deep, deeper than the audit serialises \(JSON\.stringify: Maximum call stack size exceeded\)$/,
      ],
      [
        "cycle",
        cyclic,
        /^arguments could not be serialised as JSON \(JSON\.stringify: Converting circular structure to JSON --> starting at object with constructor 'Object' --- property 'self' closes the circle\)$/,
      ],
      [
        "bigint",
        { n: 10n },
        /^arguments could not be serialised as JSON \(JSON\.stringify: Do not know how to serialize a BigInt\)$/,
      ],
      [
        "toJSON",
        {
          toJSON: () => {
            throw new Error("x".repeat(10_000));
          },
        },
        /^arguments could not be serialised as JSON \(JSON\.stringify: x{200}\)$/,
      ],
    ];
    for (const [what, args, why] of cases) {
      const record = completeRecord(pending(args));
      expect(record.arguments_unrecorded, what).toMatch(why);
      expect([record.argument_tokens, record.observation_tokens, record.argument_tokens_estimated], what).toEqual([
        0,
        3,
        undefined,
      ]);
      expect(JSON.parse(JSON.stringify(record)), what).toEqual(record);
    }
    expect(completeRecord(pending({ a: [[1]] }))).not.toHaveProperty("arguments_unrecorded");
  });

  it("a call with such arguments through the gateway is answered and audited", async () => {
    const audit = createMemoryAuditSink();
    const { gateway } = make({ tools: [echo], audit });
    const cyclic: Record<string, unknown> = {};
    cyclic.text = cyclic;
    const o = await gateway.call({ trajectory_id: "t", turn: 0, call_id: "c1", tool: "echo", arguments: cyclic });
    expect(o.error?.code).toBe("invalid_arguments");
    expect(o.text).toContain("text must be a string; received [object Object] (object)");
    expect(audit.records).toHaveLength(1);
    expect(audit.records[0]).toMatchObject({
      call_id: "c1",
      outcome: "invalid_arguments",
      argument_tokens: 0,
      arguments_unrecorded: expect.stringContaining("circular structure"),
    });
  });
});
