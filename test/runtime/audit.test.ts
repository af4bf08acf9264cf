import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createAuditSink, FLUSH_BATCH, FLUSH_DELAY_MS } from "../../src/runtime/audit.js";
import { countTokens } from "../../src/observation/tokens.js";
import { gateways } from "./helpers.js";
import { aggregate } from "../../src/runtime/stats.js";
import { annotationsFor, toolResult, type ToolSpec } from "../../src/core/tool.js";

const make = gateways();
const dir = mkdtempSync(join(tmpdir(), "toolgate-runtime-audit-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("audit trail", () => {
  it("writes one JSON line per call with every stage's outcome; close loses no line", async () => {
    const path = join(dir, "nested", "audit.jsonl");
    const { call, gateway } = make({ audit: path });
    const pending = [];
    for (let i = 0; i < 300; i++) pending.push(call("get_order", { order_id: "o_001" }));
    pending.push(call("add_order_note", { order_id: "o_001", note: "n" }, { call_id: "w" }));
    pending.push(call("get_order", { order_id: "bad" }));
    await Promise.all(pending);
    await gateway.close();
    const lines = readFileSync(path, "utf8").trimEnd().split("\n");
    expect(lines).toHaveLength(302);
    const records = lines.map((l) => JSON.parse(l));
    // Lines are in completion order: find each kind of call by its content.
    const read = records.find((r) => r.tool === "get_order" && r.outcome === "ok");
    expect(Object.keys(read).sort()).toEqual(
      ["approval", "argument_tokens", "authority", "call_id", "grant_code", "key", "latency_ms", "observation_tokens", "outcome", "record_state", "replay", "stages", "tool", "trajectory_id", "truncated", "ts", "turn", "validation_codes"].sort(),
    );
    expect(read).toMatchObject({ tool: "get_order", authority: "A0", outcome: "ok", key: null, record_state: null, replay: false, truncated: false, ts: "2026-03-05T10:00:00.000Z" });
    expect(Object.keys(read.stages)).toEqual(["resolve", "validate", "execute", "shape"]);
    expect(read.argument_tokens).toBe(countTokens(JSON.stringify({ order_id: "o_001" })));
    expect(read.observation_tokens).toBeGreaterThan(20);
    const write = records.find((r) => r.tool === "add_order_note");
    expect(Object.keys(write.stages)).toEqual(["resolve", "validate", "execute", "settle", "shape"].filter((s) => s in write.stages));
    expect(write).toMatchObject({ authority: "A2", record_state: "COMPLETED", outcome: "ok" });
    expect(write.key).toMatch(/^[0-9a-f]{64}$/);
    const invalid = records.filter((r) => r.outcome === "invalid_arguments");
    expect(invalid).toHaveLength(1);
    expect(invalid[0]).toMatchObject({ validation_codes: ["invalid_pattern"], stages: { validate: { outcome: "invalid_arguments" } } });
    expect(Object.keys(invalid[0].stages)).toEqual(["resolve", "validate"]);
  });

  it("appends to an existing file and refuses writes after close", async () => {
    const path = join(dir, "append.jsonl");
    for (let round = 0; round < 2; round++) {
      const { call, gateway } = make({ audit: path });
      await call("get_order", { order_id: "o_001" });
      await gateway.close();
    }
    expect(readFileSync(path, "utf8").trimEnd().split("\n")).toHaveLength(2);
    const sink = createAuditSink(join(dir, "closed.jsonl"));
    await sink.close();
    expect(() =>
      sink.write({ record: {} as never, arguments: {}, observation_text: "" }),
    ).toThrow(/^audit sink .*closed\.jsonl is closed; create a new gateway to keep auditing$/);
  });

  it("writes a line at once on an idle trail; lines that follow within FLUSH_DELAY_MS are batched, a full batch on the next turn", async () => {
    const path = join(dir, "live.jsonl");
    const sink = createAuditSink(path);
    const entry = (i: number) => ({ record: { call_id: `c${i}`, argument_tokens: null, observation_tokens: null } as never, arguments: { i }, observation_text: `text ${i}` });
    const read = () => readFileSync(path, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
    sink.write(entry(0));
    // On disk before write() returns: nothing was written in the last FLUSH_DELAY_MS.
    const first = read();
    expect(first).toEqual([{ call_id: "c0", argument_tokens: countTokens('{"i":0}'), observation_tokens: countTokens("text 0") }]);
    // Right after a write, lines wait (at most the first may go at once, if the delay has passed):
    // FLUSH_BATCH waiting lines are written on the next turn.
    for (let i = 1; i <= FLUSH_BATCH + 1; i++) sink.write(entry(i));
    await new Promise((r) => setImmediate(r));
    expect(read()).toHaveLength(FLUSH_BATCH + 2);
    // A line that joins a batch is written within FLUSH_DELAY_MS, without close or flush.
    sink.write(entry(1));
    sink.write(entry(2));
    await new Promise((r) => setTimeout(r, FLUSH_DELAY_MS + 50));
    expect(read()).toHaveLength(FLUSH_BATCH + 4);
    sink.write(entry(0));
    sink.flush();
    // A repeated argument text is counted exactly (served from the per-text cache).
    expect(read().at(-1)).toEqual(first[0]);
    await sink.close();
  });
});

describe("close", () => {
  it("waits for a call in flight, then writes its line and closes the store", async () => {
    const path = join(dir, "close.jsonl");
    const { call, gateway, store } = make({ audit: path });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    gateway.tools.get("add_order_note")!.handler = async () => {
      await gate;
      return { ok: true };
    };
    const pending = call("add_order_note", { order_id: "o_001", note: "late" });
    await new Promise((r) => setImmediate(r));
    const closing = gateway.close({ grace_ms: 60_000 });
    release();
    await closing;
    expect((await pending).ok).toBe(true);
    expect(readFileSync(path, "utf8").trimEnd().split("\n")).toHaveLength(1);
    await expect(store.records.list({ now: 0 })).rejects.toThrow();
    expect((await call("get_order", { order_id: "o_001" })).error?.code).toBe("internal_error");
  });

  it("after grace_ms aborts a call still running through its signal: IN_DOUBT, answered, audited, then the store closes", async () => {
    const path = join(dir, "abort.jsonl");
    const { call, gateway, store } = make({ audit: path });
    let seen: AbortSignal | undefined;
    gateway.tools.get("add_order_note")!.handler = (_args, ctx) => {
      seen = ctx.signal;
      // Ends only when aborted, like a killed process tree.
      return new Promise((_resolve, reject) => ctx.signal.addEventListener("abort", () => reject(new Error("killed"))));
    };
    const pending = call("add_order_note", { order_id: "o_001", note: "late" });
    await new Promise((r) => setImmediate(r));
    let recordState: string | undefined;
    const originalClose = store.close.bind(store);
    store.close = async () => {
      recordState = (await store.records.list({ now: 0 }))[0]?.state;
      await originalClose();
    };
    await gateway.close({ grace_ms: 20 });
    const o = await pending;
    expect(seen?.aborted).toBe(true);
    expect(o.error?.code).toBe("tool_failed");
    expect(o.error?.detail?.record_state).toBe("IN_DOUBT");
    expect(o.error?.message).toMatch(/^add_order_note was still running when toolgate shut down \(after its grace period\) and was aborted\. Whether its effect happened is unknown/);
    expect(recordState).toBe("IN_DOUBT");
    const lines = readFileSync(path, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l) as { outcome: string; record_state: string });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ outcome: "tool_failed", record_state: "IN_DOUBT" });
  });

  it("after grace_ms a handler that ignores its signal is not waited for; a read call answers too", async () => {
    const { call, gateway, audit } = make();
    gateway.tools.get("add_order_note")!.handler = () => new Promise(() => {});
    gateway.tools.get("get_order")!.handler = () => new Promise(() => {});
    const write = call("add_order_note", { order_id: "o_001", note: "late" });
    const read = call("get_order", { order_id: "o_001" });
    await new Promise((r) => setImmediate(r));
    await gateway.close({ grace_ms: 20 });
    expect((await write).error?.detail?.record_state).toBe("IN_DOUBT");
    expect((await read).error?.code).toBe("tool_failed");
    expect(audit.records.map((r) => r.outcome)).toEqual(["tool_failed", "tool_failed"]);
  });
});

describe("a result the tool cut itself", () => {
  // Two tools that bound their own output: one with a continuation (a page), one without (a capture).
  const paged: ToolSpec = {
    name: "list_pages",
    description: "Lists items, 10 per page.",
    inputSchema: { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", properties: { cursor: { type: "integer" } }, additionalProperties: false },
    effect: "read",
    annotations: annotationsFor("read"),
    handler: () => toolResult({ items: [1, 2] }, { text: "items 1-2 of 12", next: { arguments: { cursor: 2 }, hint: "10 more items" }, truncated: { omitted: 10, unit: "items" } }),
  };
  const captured: ToolSpec = {
    ...paged,
    name: "run_capture",
    description: "Runs and captures output, head and tail.",
    handler: () => toolResult({ stdout: "head … tail" }, { text: "head\n[… 24751 bytes cut …]\ntail", truncated: { omitted: 24751, unit: "bytes" } }),
  };

  it("is marked truncated in the observation (by_tool, with how to get the rest) and in the audit record, so stats count it", async () => {
    const { gateway, audit } = make({ tools: [paged, captured] });
    const p = await gateway.call({ trajectory_id: "t", turn: 0, call_id: "p1", tool: "list_pages", arguments: {} });
    const c = await gateway.call({ trajectory_id: "t", turn: 0, call_id: "c1", tool: "run_capture", arguments: {} });
    expect(p.truncated).toMatchInlineSnapshot(`
      {
        "by_tool": {
          "omitted": 10,
          "unit": "items",
        },
        "hint": "the tool left out 10 items; to get the rest call list_pages with {"cursor":2}.",
        "omitted_tokens": 0,
      }
    `);
    expect(c.truncated).toMatchInlineSnapshot(`
      {
        "by_tool": {
          "omitted": 24751,
          "unit": "bytes",
        },
        "hint": "the tool left out 24751 bytes; to see them, narrow the call (e.g. a more specific query, or pipe output through head, tail or grep).",
        "omitted_tokens": 0,
      }
    `);
    expect(c.text).toContain("the tool left out 24751 bytes.");
    expect(audit.records.map((r) => [r.tool, r.truncated])).toEqual([
      ["list_pages", true],
      ["run_capture", true],
    ]);
    expect(aggregate(audit.records).overall.truncation_rate).toBe(1);
  });

  it("a complete result is not marked truncated", async () => {
    const { call, audit } = make();
    const o = await call("get_order", { order_id: "o_001" });
    expect(o.truncated).toBeUndefined();
    expect(audit.records[0]!.truncated).toBe(false);
  });
});
