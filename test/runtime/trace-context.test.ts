import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  MAX_TRACEPARENT_CHARS,
  MAX_TRACESTATE_CHARS,
  MAX_TRACESTATE_INPUT_CHARS,
  readTraceContext,
} from "../../src/runtime/trace-context.js";
import { gateways } from "./helpers.js";
import type { ToolSpec } from "../../src/core/tool.js";

const make = gateways();
const dir = mkdtempSync(join(tmpdir(), "toolgate-runtime-trace-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
const PARENT_ID = "b7ad6b7169203331";
const PARENT = `00-${TRACE_ID}-${PARENT_ID}-01`;

/** Why a traceparent was left out, or "kept". */
const parentVerdict = (traceparent: unknown) => {
  const r = readTraceContext({ traceparent });
  return r.trace ? "kept" : r.ignored;
};

describe("reading a caller's traceparent", () => {
  it("keeps a version 00 traceparent as it came, sampled or not", () => {
    expect(readTraceContext({ traceparent: PARENT })).toEqual({ trace: { traceparent: PARENT }, ignored: null });
    const unsampled = `00-${TRACE_ID}-${PARENT_ID}-00`;
    expect(readTraceContext({ traceparent: unsampled }).trace).toEqual({ traceparent: unsampled });
  });

  it("reads a later version's first four fields and leaves the fields it adds", () => {
    expect(readTraceContext({ traceparent: `cc-${TRACE_ID}-${PARENT_ID}-01-what-comes-next` }).trace).toEqual({
      traceparent: `cc-${TRACE_ID}-${PARENT_ID}-01`,
    });
    expect(readTraceContext({ traceparent: `cc-${TRACE_ID}-${PARENT_ID}-01` }).trace).toEqual({
      traceparent: `cc-${TRACE_ID}-${PARENT_ID}-01`,
    });
    // After the flags a later version may add only fields that start with a dash.
    expect(parentVerdict(`cc-${TRACE_ID}-${PARENT_ID}-01x`)).toContain("not of that form");
  });

  it("leaves out every malformed traceparent and says what was wrong without repeating it", () => {
    const form = "expected version-traceid-parentid-flags in lowercase hex (2-32-16-2 digits)";
    const fix =
      "send the W3C traceparent of the calling span, e.g. 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const cases: Array<[unknown, string]> = [
      [42, "received a number"],
      [null, "received null"],
      [[PARENT], "received an array"],
      [{ value: PARENT }, "received an object"],
      [true, "received a boolean"],
      ["", "received a string of 0 characters not of that form"],
      [PARENT.toUpperCase(), "received a string of 55 characters not of that form"],
      [PARENT.slice(0, 54), "received a string of 54 characters not of that form"],
      [`00-${TRACE_ID}-${PARENT_ID}-01-extra`, "received version 00 with 61 characters, not 55"],
      [`ff-${TRACE_ID}-${PARENT_ID}-01`, "received version ff, which is never valid"],
      [`00-${"0".repeat(32)}-${PARENT_ID}-01`, "received a trace-id of all zeros"],
      [`00-${TRACE_ID}-${"0".repeat(16)}-01`, "received a parent-id of all zeros"],
      [`00_${TRACE_ID}_${PARENT_ID}_01`, "received a string of 55 characters not of that form"],
      [` ${PARENT}`, "received a string of 56 characters not of that form"],
      [`cc-${TRACE_ID}-${PARENT_ID}-01-${"x".repeat(300)}`, `received a string of 356 characters, over 256`],
    ];
    for (const [value, what] of cases)
      expect(parentVerdict(value)).toBe(`traceparent left out: ${form}; ${what}; ${fix}`);
    // What arrived is never copied into the reason: it is the caller's text.
    expect(parentVerdict(`00-${TRACE_ID}-${PARENT_ID}-zz`)).not.toContain(TRACE_ID);
  });

  it("reads at most 256 characters of a traceparent, in bounded work for any length", () => {
    expect(MAX_TRACEPARENT_CHARS).toBe(256);
    const ok = `cc-${TRACE_ID}-${PARENT_ID}-01-${"x".repeat(256 - 56)}`;
    expect(ok).toHaveLength(256);
    expect(parentVerdict(ok)).toBe("kept");
    expect(parentVerdict(ok + "x")).toContain("received a string of 257 characters, over 256");
    expect(parentVerdict("0".repeat(5_000_000))).toContain("over 256");
  });

  it("records nothing when no trace context came", () => {
    expect(readTraceContext(undefined)).toEqual({ trace: null, ignored: null });
    expect(readTraceContext({})).toEqual({ trace: null, ignored: null });
  });

  it("goes on untraced, saying why, when the values cannot even be read", () => {
    const hostile = {
      get traceparent(): string {
        throw new Error("getter\nfails");
      },
    };
    expect(readTraceContext(hostile)).toEqual({
      trace: null,
      ignored: "trace context left out: reading it threw (getter fails); pass plain strings",
    });
    expect(readTraceContext("00-x" as never)).toEqual({ trace: null, ignored: null });
  });
});

/** The tracestate kept beside a valid traceparent, and the reason when part or all of it was left out. */
const state = (tracestate: unknown) => {
  const r = readTraceContext({ traceparent: PARENT, tracestate });
  expect(r.trace?.traceparent).toBe(PARENT);
  return { kept: r.trace?.tracestate ?? null, ignored: r.ignored };
};

describe("reading a caller's tracestate", () => {
  it("keeps the list-members in order without the blanks around them", () => {
    expect(state("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")).toEqual({
      kept: "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE",
      ignored: null,
    });
    expect(state(" \tfw529a3039@dt=b, ,,congo=a b c\t ")).toEqual({
      kept: "fw529a3039@dt=b,congo=a b c",
      ignored: null,
    });
    // An empty tracestate is allowed and carries nothing.
    expect(state("")).toEqual({ kept: null, ignored: null });
  });

  it("leaves out a malformed tracestate whole and keeps the traceparent", () => {
    const expected = "expected up to 32 comma-separated key=value list-members (W3C tracestate); ";
    const fix = "; send the caller's tracestate unchanged, or none";
    const cases: Array<[unknown, string]> = [
      [7, "received a number"],
      [["a=1"], "received an array"],
      ["novalue", "list-member 1 has no valid key (lowercase letters, digits, _ - * /, tenant@system)"],
      ["a=1,Upper=2", "list-member 2 has no valid key (lowercase letters, digits, _ - * /, tenant@system)"],
      ["=1", "list-member 1 has no valid key (lowercase letters, digits, _ - * /, tenant@system)"],
      [`${"k".repeat(257)}=1`, "list-member 1 has no valid key (lowercase letters, digits, _ - * /, tenant@system)"],
      ["t@Sys=1", "list-member 1 has no valid key (lowercase letters, digits, _ - * /, tenant@system)"],
      ["a=", "list-member 1 has a value that is not 1–256 printable characters without , or ="],
      ["a=x=y", "list-member 1 has a value that is not 1–256 printable characters without , or ="],
      ["a=caf\u00e9", "list-member 1 has a value that is not 1–256 printable characters without , or ="],
      ["a=line\nbreak", "list-member 1 has a value that is not 1–256 printable characters without , or ="],
      [`a=${"v".repeat(257)}`, "list-member 1 has a value that is not 1–256 printable characters without , or ="],
      ["a=1,b=2,a=3", "list-member 3 repeats a key"],
      [Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(","), "received more than 32 list-members"],
      ["a".repeat(MAX_TRACESTATE_INPUT_CHARS + 1), "received a string of 16385 characters, over 16384"],
    ];
    for (const [value, what] of cases) {
      expect(state(value)).toEqual({ kept: null, ignored: `tracestate left out: ${expected}${what}${fix}` });
    }
    // Keys of the longest allowed forms are kept.
    const longest = `${"k".repeat(256)}=1,${"t".repeat(241)}@${"s".repeat(14)}=${"v".repeat(256)}`;
    expect(state(longest).ignored).not.toContain("left out:");
  });

  it("cuts a long tracestate to 512 characters: members over 128 first, then from the end", () => {
    expect(MAX_TRACESTATE_CHARS).toBe(512);
    const small = (i: number) => `k${String(i).padStart(2, "0")}=${"v".repeat(95)}`; // 100 characters each
    const big = `big=${"b".repeat(200)}`;
    // 5 small members (504 with commas) and one big one in the middle: the big one goes.
    const members = [small(0), small(1), big, small(2), small(3), small(4)];
    expect(state(members.join(","))).toEqual({
      kept: [small(0), small(1), small(2), small(3), small(4)].join(","),
      ignored:
        "tracestate cut: 1 of 6 list-members left out to keep it within 512 characters (longest over 128 first, then from the end)",
    });
    // Without long members the last ones go until it fits: six small members keep five.
    const six = [0, 1, 2, 3, 4, 5].map(small);
    const r = state(six.join(","));
    expect(r.kept).toBe(six.slice(0, 5).join(","));
    expect(r.kept!.length).toBeLessThanOrEqual(512);
    expect(r.ignored).toContain("1 of 6 list-members left out");
    // 32 members of the largest size: what is kept fits, whatever came.
    const huge = Array.from({ length: 32 }, (_, i) => `${String.fromCharCode(97 + (i % 26))}${i}=${"x".repeat(256)}`);
    const cut = state(huge.join(","));
    expect(cut.kept).toBe(huge[0]);
    expect(cut.ignored).toContain("31 of 32 list-members left out");
  });

  it("reads a tracestate only beside a valid traceparent", () => {
    expect(readTraceContext({ tracestate: "a=1" })).toEqual({
      trace: null,
      ignored:
        "tracestate left out: it came without a traceparent, and W3C trace context reads it only beside a valid one; send both, or neither",
    });
    const bad = readTraceContext({ traceparent: "nope", tracestate: "a=1" });
    expect(bad.trace).toBeNull();
    expect(bad.ignored).toMatch(/^traceparent left out: .*; tracestate left out with it$/);
  });

  it("reads a tracestate of blanks between commas in bounded work", () => {
    // A run of blanks inside a member is checked once, not rescanned from each position.
    const blanks = `a=1${" ".repeat(8000)}x${" ".repeat(8000)}`;
    expect(state(blanks).ignored).toContain("list-member 1 has a value that is not");
    const commas = ",".repeat(MAX_TRACESTATE_INPUT_CHARS);
    expect(state(commas)).toEqual({ kept: null, ignored: null });
  });
});

describe("the trace context in the audit record", () => {
  it("writes the caller's traceparent and tracestate to the audit line of the call", async () => {
    const path = join(dir, "audit.jsonl");
    const { gateway, propose } = make({ audit: path });
    const traced = await gateway.call(propose("get_order", { order_id: "o_001" }, { call_id: "traced" }), {
      trace: { traceparent: PARENT, tracestate: "congo=t61rcWkgMzE" },
    });
    const plain = await gateway.call(propose("get_order", { order_id: "o_001" }, { call_id: "plain" }));
    const malformed = await gateway.call(propose("get_order", { order_id: "o_001" }, { call_id: "malformed" }), {
      trace: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-0g`, tracestate: "congo=t61rcWkgMzE" },
    });
    // Tracing never changes an answer: all three read the order.
    expect([traced.ok, plain.ok, malformed.ok]).toEqual([true, true, true]);
    expect(traced.text.replaceAll("traced", "plain")).toBe(plain.text);
    await gateway.close();
    const lines = readFileSync(path, "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const byCall = new Map(lines.map((l) => [l.call_id, l]));
    expect(byCall.get("traced")).toMatchObject({
      outcome: "ok",
      trace: { traceparent: PARENT, tracestate: "congo=t61rcWkgMzE" },
    });
    expect(byCall.get("traced")).not.toHaveProperty("trace_ignored");
    expect(byCall.get("plain")).not.toHaveProperty("trace");
    expect(byCall.get("plain")).not.toHaveProperty("trace_ignored");
    expect(byCall.get("malformed")).not.toHaveProperty("trace");
    expect(byCall.get("malformed")!.trace_ignored).toMatch(
      /^traceparent left out: .*not of that form.*; tracestate left out with it$/,
    );
  });

  it("hands the checked trace context to the tool, so a tool that calls further can pass it on", async () => {
    const seen: unknown[] = [];
    const traced: ToolSpec = {
      name: "call_further",
      description: "Calls a further service with the caller's trace.",
      inputSchema: { type: "object", properties: {}, additionalProperties: false },
      effect: "read",
      handler: (_args, ctx) => {
        seen.push(ctx.trace);
        return "done";
      },
    };
    const { gateway, propose } = make({ tools: [traced] });
    await gateway.call(propose("call_further", {}), { trace: { traceparent: PARENT, tracestate: " a=1 ,b=2" } });
    await gateway.call(propose("call_further", {}), { trace: { traceparent: "malformed" } });
    await gateway.call(propose("call_further", {}));
    expect(seen).toEqual([{ traceparent: PARENT, tracestate: "a=1,b=2" }, undefined, undefined]);
  });

  it("records the trace context of a refused call too", async () => {
    const { gateway, propose, audit } = make();
    const o = await gateway.call(propose("no_such_tool", {}), { trace: { traceparent: PARENT } });
    expect(o.ok).toBe(false);
    expect(audit.records.at(-1)).toMatchObject({ outcome: o.error!.code, trace: { traceparent: PARENT } });
  });
});
