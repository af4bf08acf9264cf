import { describe, expect, it } from "vitest";
import { breakevenFromAudit, callsToDecide, MALFORMED_OUTCOMES } from "../../src/economics/breakeven-audit.js";
import { wilsonInterval } from "../../src/economics/wilson.js";
import { readAudit } from "../../src/economics/audit-calls.js";
import { jsonl, record, traffic } from "./support/audit.js";

const trail = () =>
  jsonl([
    // 20 of 200 fail, 80 tokens, repaired in 2 s: p_break = 80 · 0.5 / 2000 = 2 %, p_err 10 % (CI 6.6–14.9 %).
    ...traffic("file_edit", { calls: 200, failed: 20, tokens: 80, repair_ms: 2000 }),
    // 0 of 1000 fail, 40 tokens: T_repair from the trail (2 s), p_break = 1 %, CI 0–0.38 %.
    ...traffic("file_view", { calls: 1000, failed: 0, tokens: 40, repair_ms: 0 }),
    // 1 of 10 fails, 100 tokens: the interval (1.8–40 %) straddles p_break = 2.5 %.
    ...traffic("grep_search", { calls: 10, failed: 1, tokens: 100, repair_ms: 2000 }),
    record({ tool: "made_up", outcome: "unknown_tool", trajectory_id: "x" }),
    record({ tool: "file_view", outcome: "check_failed", trajectory_id: "y", argument_tokens: 40 }),
  ]);

describe("breakevenFromAudit", () => {
  it("counts only invalid_arguments as a malformed call", () => {
    expect(MALFORMED_OUTCOMES).toEqual(["invalid_arguments"]);
  });

  it("estimates p_err, L_gen and T_repair per tool and recommends from the Wilson interval", () => {
    const r = breakevenFromAudit(trail());
    expect(r.records).toBe(1212);
    expect(r.unknown_tool_calls).toBe(1);
    const summary = r.tools.map((t) => ({
      tool: t.tool,
      calls: t.calls,
      failed: t.failed,
      l_gen: t.l_gen,
      t_repair_ms: t.t_repair_ms,
      source: t.t_repair_source,
      p_break: t.p_break === null ? null : Number(t.p_break.toFixed(4)),
      ci: [Number(t.p_err.low.toFixed(4)), Number(t.p_err.high.toFixed(4))],
      recommendation: t.recommendation,
    }));
    expect(summary).toMatchInlineSnapshot(`
      [
        {
          "calls": 200,
          "ci": [
            0.0657,
            0.1494,
          ],
          "failed": 20,
          "l_gen": 80,
          "p_break": 0.02,
          "recommendation": "constrain",
          "source": "measured",
          "t_repair_ms": 2000,
          "tool": "file_edit",
        },
        {
          "calls": 1001,
          "ci": [
            0,
            0.0038,
          ],
          "failed": 0,
          "l_gen": 40,
          "p_break": 0.01,
          "recommendation": "dont_constrain",
          "source": "trail",
          "t_repair_ms": 2000,
          "tool": "file_view",
        },
        {
          "calls": 10,
          "ci": [
            0.0179,
            0.4042,
          ],
          "failed": 1,
          "l_gen": 100,
          "p_break": 0.025,
          "recommendation": "not_enough_data",
          "source": "measured",
          "t_repair_ms": 2000,
          "tool": "grep_search",
        },
      ]
    `);
    expect(r.tools[2]!.reason).toMatchInlineSnapshot(
      `"warning: sample too small to decide — p_err 10.0 % (95 % CI 1.8–40.4 %, 1/10) straddles p_break 2.5 %; at this rate about 15 calls would decide"`,
    );
  });

  it("uses the rest of a file with broken lines and reports each one", () => {
    const text =
      trail() +
      "{not json\n" +
      JSON.stringify({ ...record({}), tool: 7 }) +
      "\n" +
      JSON.stringify(record({ ts: "yesterday" })) +
      "\n[]\n";
    const r = breakevenFromAudit(text);
    expect(r.records).toBe(1212);
    expect(r.broken).toMatchInlineSnapshot(`
      [
        {
          "line": 1213,
          "reason": "not valid JSON (Expected property name or '}' in JSON at position 1)",
        },
        {
          "line": 1214,
          "reason": "field tool must be a non-empty string; received 7",
        },
        {
          "line": 1215,
          "reason": "field ts must be an ISO-8601 timestamp; received "yesterday"",
        },
        {
          "line": 1216,
          "reason": "expected a JSON object, got []",
        },
      ]
    `);
  });

  it("says T_repair is unmeasured when no failure in the trail has a next call, unless --repair-ms is given", () => {
    const text = jsonl([record({ outcome: "invalid_arguments" }), record({ call_id: "c1", trajectory_id: "t2" })]);
    const r = breakevenFromAudit(text);
    expect(r.tools[0]!.recommendation).toBe("not_enough_data");
    expect(r.tools[0]!.reason).toMatchInlineSnapshot(
      `"warning: no failed call in the trail was followed by another call of its trajectory, so T_repair is unmeasured; pass --repair-ms to assume one"`,
    );
    const withOption = breakevenFromAudit(text, { repair_ms: 1800 });
    expect(withOption.tools[0]!.t_repair_source).toBe("option");
    expect(withOption.tools[0]!.p_break).toBeCloseTo((80 * 0.5) / 1800, 12);
  });

  it("rejects a trail with no usable record and bad options", () => {
    expect(() => breakevenFromAudit("oops\n\n")).toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: the audit trail holds no usable record (1 broken line(s); line 1: not valid JSON (Unexpected token 'o', "oops" is not valid JSON)). Expected one AuditRecord JSON object per line, as the gateway writes to its audit trail.]`,
    );
    expect(() => breakevenFromAudit(trail(), { mask_ms: 0 })).toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: mask_ms (t_mask) must be a number greater than 0; received 0. Pass --mask-ms, e.g. 0.5.]`,
    );
    expect(() => breakevenFromAudit(trail(), { repair_ms: -5 })).toThrow(/repair_ms/);
  });

  it("says how many calls at the observed rate would decide", () => {
    for (const [rate, p_break] of [
      [0.1, 0.025],
      [0.02, 0.025],
      [0, 0.01],
      [0.3, 0.2],
    ] as const) {
      const n = callsToDecide(rate, p_break)!;
      const iv = wilsonInterval(Math.round(rate * n), n);
      expect(iv.low > p_break || iv.high < p_break).toBe(true);
    }
    expect(callsToDecide(0, 0.01)).toBe(381);
    expect(callsToDecide(0.025, 0.025)).toBeNull();
  });

  it("reads blank lines as nothing", () => {
    expect(readAudit("\n\n").blank).toBe(3);
  });
});
