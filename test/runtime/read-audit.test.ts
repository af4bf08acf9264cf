/**
 * A read answered beside the pipeline (`gateway.recordRead`, what a proxy's pass-through reports)
 * becomes one line of the gateway's audit trail, in the sink its calls write to: its trace context
 * checked as a call's is, its reason cut, told apart from a call's line by `kind`, so the trail's
 * readers of calls skip it rather than call it broken.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createAuditSink, type AuditSink } from "../../src/runtime/audit.js";
import { readAuditLines } from "../../src/runtime/audit-reader.js";
import { auditStats } from "../../src/runtime/stats.js";
import { readAudit } from "../../src/economics/audit-calls.js";
import { READ_REASON_CHARS, type ReadAudit } from "../../src/runtime/types.js";
import { gateways, T0 } from "./helpers.js";
import { tempDir } from "../mcp/support.js";

const make = gateways();
const TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const read: ReadAudit = {
  operation: "resources/read",
  target: "demo://a",
  source: "upstream",
  principal: "stdio client",
  grant: "g1",
  outcome: "ok",
  answer_chars: 42,
  latency_ms: 7,
  trace: { traceparent: TRACEPARENT },
};

describe("gateway.recordRead", () => {
  it("writes the read's line to the memory sink, arrival time from the gateway's clock, trace checked", async () => {
    const { gateway, audit, clock } = make();
    clock.now = T0 + 1_000;
    gateway.recordRead!(read);
    gateway.recordRead!({
      ...read,
      outcome: "error",
      answer_chars: 0,
      reason: "x".repeat(READ_REASON_CHARS + 100),
      trace: { traceparent: "00-zz" },
    });
    const { trace: _given, ...fields } = read;
    expect(audit.reads[0]).toEqual({
      ts: new Date(T0 + 1_000 - 7).toISOString(),
      kind: "read",
      ...fields,
      trace: expect.objectContaining({ traceparent: TRACEPARENT }),
    });
    expect(audit.reads[1]!.reason).toHaveLength(READ_REASON_CHARS);
    expect(audit.reads[1]!.trace).toBeUndefined();
    expect(audit.reads[1]!.trace_ignored).toContain("traceparent");
    // No call was made: the calls' records are untouched.
    expect(audit.records).toEqual([]);
  });

  it("writes nothing to a sink that takes no read lines, and never throws for one that fails", async () => {
    const calls: AuditSink = { write: () => {}, flush: () => {}, close: async () => {} };
    make({ audit: calls }).gateway.recordRead!(read);
    const failing: AuditSink = {
      ...calls,
      writeRead: () => {
        throw new Error("disk full");
      },
    };
    expect(() => make({ audit: failing }).gateway.recordRead!(read)).not.toThrow();
  });

  it("shares the file trail with the calls; stats, breakeven and the reader count the read apart", async () => {
    const path = join(tempDir("read-audit"), "state", "audit.jsonl");
    const { gateway, call } = make({ audit: createAuditSink(path) });
    await call("get_order", { order_id: "o_001" });
    gateway.recordRead!(read);
    await gateway.close();
    const text = readFileSync(path, "utf8");
    const lines = text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.kind ?? l.tool)).toEqual(["get_order", "read"]);
    expect(readAuditLines(text, { record: () => "never a call", notJson: () => "" })).toMatchObject({ reads: 1 });
    const stats = auditStats(text);
    expect([stats.overall.calls, stats.broken_lines]).toEqual([1, 0]);
    const economics = readAudit(text);
    expect([economics.calls.length, economics.broken.length]).toEqual([1, 0]);
  });
});
