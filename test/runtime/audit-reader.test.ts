/** The one audit-trail reader (runtime/audit-reader.ts), and the two commands that read through it. */
import { describe, expect, it } from "vitest";
import { readAuditLines } from "../../src/runtime/audit-reader.js";
import { auditStats } from "../../src/runtime/stats.js";
import { readAudit } from "../../src/economics/audit-calls.js";

const good = {
  ts: "2026-03-05T10:00:00.000Z",
  trajectory_id: "t",
  turn: 1,
  call_id: "c1",
  tool: "file_view",
  outcome: "ok",
  argument_tokens: 9,
  latency_ms: 1.5,
};
const trail = [
  JSON.stringify(good),
  "",
  "{cut short",
  "  ",
  JSON.stringify({ tool: "file_view" }),
  `\t${JSON.stringify({ ...good, call_id: "c2" })}\r`,
  "",
].join("\n");

describe("readAuditLines", () => {
  it("parses each non-blank line, counts blanks apart, and keeps every broken line with its number and reason", () => {
    const read = readAuditLines(trail, {
      record: (value, line) =>
        typeof value === "object" && value !== null && "ts" in value
          ? { line, call_id: (value as { call_id?: unknown }).call_id }
          : "no ts",
      notJson: (message) => `parser said: ${message}`,
    });
    expect(read.records).toEqual([
      { line: 1, call_id: "c1" },
      { line: 6, call_id: "c2" },
    ]);
    expect(read.blank).toBe(3);
    expect(read.broken).toEqual([
      { line: 3, reason: expect.stringMatching(/^parser said: /) },
      { line: 5, reason: "no ts" },
    ]);
  });
});

describe("stats and breakeven read a trail alike", () => {
  it("the same lines are records and the same lines are broken, each command in its own words", () => {
    const stats = auditStats(trail);
    const economics = readAudit(trail);
    expect(stats.broken.map((b) => b.line)).toEqual([3, 5]);
    expect(economics.broken.map((b) => b.line)).toEqual([3, 5]);
    expect(stats.broken[0]!.reason).toBe("not JSON (a line cut short by a crash, or not an audit file)");
    expect(economics.broken[0]!.reason).toMatch(/^not valid JSON \(/);
    expect([stats.overall.calls, economics.calls.length, stats.lines]).toEqual([2, 2, 4]);
  });
});
