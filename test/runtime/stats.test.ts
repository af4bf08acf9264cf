import { describe, expect, it } from "vitest";
import { auditStats, percentile, renderStats } from "../../src/runtime/stats.js";
import type { AuditRecord } from "../../src/runtime/types.js";
import { auditRecord } from "../support/audit-record.js";

const rec = (over: Partial<AuditRecord>): AuditRecord => auditRecord({ turn: 1, ...over });

describe("percentile", () => {
  it("is nearest-rank", () => {
    const v = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(v, 50)).toBe(50);
    expect(percentile(v, 95)).toBe(95);
    expect(percentile([7], 95)).toBe(7);
    expect(percentile([], 50)).toBe(0);
    expect(percentile([3, 1, 2], 50)).toBe(2);
  });
});

describe("auditStats", () => {
  const lines = [
    ...Array.from({ length: 18 }, (_, i) => rec({ latency_ms: i + 1, observation_tokens: 100 + i })),
    rec({ outcome: "invalid_arguments", validation_codes: ["required"], latency_ms: 0.5 }),
    rec({ outcome: "denied", grant_code: "expired", latency_ms: 0.4, truncated: false }),
    rec({
      tool: "file_edit",
      authority: "A2",
      key: "k1",
      record_state: "COMPLETED",
      latency_ms: 20,
      truncated: true,
      observation_tokens: 2000,
    }),
    rec({ tool: "file_edit", authority: "A2", key: "k1", record_state: "COMPLETED", replay: true, latency_ms: 2 }),
    rec({
      tool: "file_edit",
      authority: "A2",
      key: "k2",
      record_state: "IN_DOUBT",
      outcome: "tool_failed",
      latency_ms: 30,
    }),
    rec({ tool: "file_edit", authority: "A2", outcome: "check_failed", latency_ms: 1 }),
  ].map((r) => JSON.stringify(r));
  const text =
    [
      ...lines.slice(0, 3),
      '{"tool":"x", "outcome": "ok", "latency_ms": 1, "trunc',
      "",
      "[1,2,3]",
      ...lines.slice(3),
    ].join("\n") + "\n";

  it("aggregates per tool and overall, counting broken lines", () => {
    const s = auditStats(text);
    expect(s.lines).toBe(26);
    expect(s.broken_lines).toBe(2);
    expect(s.broken).toEqual([
      { line: 4, reason: "not JSON (a line cut short by a crash, or not an audit file)" },
      { line: 6, reason: "JSON, but not an audit record: tool, outcome and latency_ms are required" },
    ]);
    expect(s.overall.calls).toBe(24);
    const fv = s.tools.file_view!;
    expect(fv).toMatchObject({
      calls: 20,
      ok: 18,
      validation_error_rate: 0.05,
      denial_rate: 0.05,
      replays: 0,
      in_doubt: 0,
      truncation_rate: 0,
    });
    // 0.4, 0.5, 1…18: rank 10 and rank 19 of 20.
    expect(fv.latency_ms).toEqual({ p50: 8, p95: 17 });
    const fe = s.tools.file_edit!;
    expect(fe).toMatchObject({
      calls: 4,
      ok: 2,
      validation_error_rate: 0.25,
      replays: 1,
      in_doubt: 1,
      tool_failed: 1,
      truncation_rate: 0.25,
    });
    expect(fe.observation_tokens).toEqual({ p50: 100, p95: 2000 });
    expect(Object.keys(s.tools)).toEqual(["file_edit", "file_view"]);
  });

  it("renders a table", () => {
    expect(renderStats(auditStats(text))).toMatchInlineSnapshot(`
      "tool       calls  ok  invalid  denied  replays  in-doubt  latency ms p50/p95  arg tok p50/p95  obs tok p50/p95  truncated
      file_edit      4   2    25.0%    0.0%        1         1                2/30            10/10         100/2000      25.0%
      file_view     20  18     5.0%    5.0%        0         0                8/17            10/10          107/116       0.0%
      (all)         24  20     8.3%    4.2%        1         1                8/20            10/10          106/117       4.2%
      26 line(s), 2 broken: line 4, line 6"
    `);
  });

  it("an empty trail is all zeros, not an error", () => {
    const s = auditStats("");
    expect(s.overall).toMatchObject({ calls: 0, validation_error_rate: 0, latency_ms: { p50: 0, p95: 0 } });
    expect(s.tools).toEqual({});
  });
});

describe("auditStats of the reads beside the pipeline", () => {
  const read = (over: Record<string, unknown>) =>
    JSON.stringify({
      ts: "2026-03-05T10:00:00.000Z",
      kind: "read",
      operation: "resources/read",
      target: "demo://x",
      source: "everything",
      principal: "stdio client",
      grant: null,
      outcome: "ok",
      answer_chars: 100,
      latency_ms: 2,
      ...over,
    });

  it("counts them per operation and overall, apart from the calls: outcomes, latency and answer size", () => {
    const text = [
      JSON.stringify(rec({ latency_ms: 5 })),
      read({ latency_ms: 1, answer_chars: 10 }),
      read({ latency_ms: 3, answer_chars: 30 }),
      read({ outcome: "error", latency_ms: 9, answer_chars: 0, reason: "the upstream failed" }),
      read({ operation: "resources/list", target: null, source: null, answer_chars: 500 }),
      read({ operation: "resources/subscribe", outcome: "refused", answer_chars: 0, reason: "no capability" }),
      "",
    ].join("\n");
    const s = auditStats(text);
    expect(s.overall.calls).toBe(1);
    expect(Object.keys(s.tools)).toEqual(["file_view"]);
    expect(s.reads.operations).toEqual({
      "resources/list": {
        requests: 1,
        ok: 1,
        refused: 0,
        error: 0,
        latency_ms: { p50: 2, p95: 2 },
        answer_chars: { p50: 500, p95: 500 },
      },
      "resources/read": {
        requests: 3,
        ok: 2,
        refused: 0,
        error: 1,
        latency_ms: { p50: 3, p95: 9 },
        answer_chars: { p50: 10, p95: 30 },
      },
      "resources/subscribe": {
        requests: 1,
        ok: 0,
        refused: 1,
        error: 0,
        latency_ms: { p50: 2, p95: 2 },
        answer_chars: { p50: 0, p95: 0 },
      },
    });
    expect(s.reads.overall).toMatchObject({ requests: 5, ok: 3, refused: 1, error: 1 });
    expect([s.lines, s.broken_lines]).toEqual([6, 0]);
    const table = renderStats(s).split("\n");
    expect(table.slice(3, 9)).toEqual([
      "",
      "read                 requests  ok  refused  error  latency ms p50/p95  answer chars p50/p95",
      "resources/list              1   1        0      0                 2/2               500/500",
      "resources/read              3   2        0      1                 3/9                 10/30",
      "resources/subscribe         1   0        1      0                 2/2                   0/0",
      "(all)                       5   3        1      1                 2/9                10/500",
    ]);
  });

  it("a read line without its fields is a broken line, named; an operation from the trail is shown escaped", () => {
    const s = auditStats(
      [read({ outcome: "maybe" }), read({ operation: "resources/read\u202e" }), JSON.stringify(rec({}))].join("\n"),
    );
    expect(s.broken).toEqual([
      {
        line: 1,
        reason:
          'JSON with "kind": "read", but not a read audit record: operation, outcome (ok, refused or error) and latency_ms are required',
      },
    ]);
    expect(s.reads.overall.requests).toBe(1);
    expect(renderStats(s)).toContain("resources/read\\u{202E}");
    expect(renderStats(s)).not.toContain("\u202e");
  });

  it("a trail without reads prints no read table", () => {
    const s = auditStats(JSON.stringify(rec({})));
    expect(s.reads.overall.requests).toBe(0);
    expect(renderStats(s)).not.toContain("requests");
  });
});
