import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { auditTimestamp, createAuditSink, FLUSH_BATCH, FLUSH_DELAY_MS } from "../../src/runtime/audit.js";
import { gateways } from "./helpers.js";
import { aggregate } from "../../src/runtime/stats.js";
import { toolResult, type ToolSpec } from "../../src/core/tool.js";

const make = gateways();
const dir = mkdtempSync(join(tmpdir(), "toolgate-runtime-audit-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The reference encoder (gpt-tokenizer's o200k, all text as text): the audit's counts are checked against it, not
 * against toolgate's counter. */
const o200k = createRequire(import.meta.url)("gpt-tokenizer/cjs/encoding/o200k_base") as {
  countTokens(text: string, options: unknown): number;
};
const referenceTokens = (text: string) => o200k.countTokens(text, { disallowedSpecial: new Set() });

/** Durations (a record's latency_ms and each stage's ms) are the only volatile fields: each must be a duration, then
 * reads as "<ms>". */
function withoutDurations(record: Record<string, unknown>): Record<string, unknown> {
  const ms = (value: unknown) => {
    expect(
      typeof value === "number" && Number.isFinite(value) && value >= 0,
      `a duration in ms, got ${JSON.stringify(value)}`,
    ).toBe(true);
    return "<ms>";
  };
  const stages = Object.fromEntries(
    Object.entries(record.stages as Record<string, { ms: unknown }>).map(([name, s]) => [name, { ...s, ms: ms(s.ms) }]),
  );
  return { ...record, stages, latency_ms: ms(record.latency_ms) };
}

const ok = { outcome: "ok", ms: "<ms>" };
/** One audit line as the trail must hold it, every field written out; only the observation's token count varies per
 * call. */
const line = (call_id: string, over: Record<string, unknown>) => ({
  ts: "2026-03-05T10:00:00.000Z",
  trajectory_id: "traj-1",
  turn: 1,
  call_id,
  tool: "get_order",
  authority: "A0",
  outcome: "ok",
  stages: { resolve: ok, validate: ok, execute: ok, shape: ok },
  validation_codes: [],
  grant_code: null,
  key: null,
  record_state: null,
  replay: false,
  approval: null,
  argument_tokens: 8, // {"order_id":"o_001"}
  truncated: false,
  latency_ms: "<ms>",
  ...over,
});

describe("audit trail", () => {
  it("writes one JSON line per call with every stage's outcome; close loses no line", async () => {
    const path = join(dir, "nested", "audit.jsonl");
    const { call, gateway } = make({ audit: path });
    const pending = [];
    for (let i = 0; i < 300; i++) pending.push(call("get_order", { order_id: "o_001" }));
    pending.push(call("add_order_note", { order_id: "o_001", note: "n" }, { call_id: "w" }));
    pending.push(call("get_order", { order_id: "bad" }));
    const answers = await Promise.all(pending);
    await gateway.close();
    // The tokens the model was given: each answer's text, counted by the reference encoder.
    const seen = new Map(answers.map((o) => [o.call_id, referenceTokens(o.text)]));
    const lines = readFileSync(path, "utf8").trimEnd().split("\n");
    expect(lines).toHaveLength(302);
    // Lines are in completion order; the expected trail is in call order.
    const order = (id: unknown) => (id === "w" ? 301 : Number(String(id).slice("call-".length)));
    const records = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .sort((a, b) => order(a.call_id) - order(b.call_id));
    const reads = Array.from({ length: 300 }, (_, i) =>
      line(`call-${i + 1}`, { observation_tokens: seen.get(`call-${i + 1}`) }),
    );
    // The idempotency key: SHA-256 of the RFC 8785 text of [trajectory_id, turn, call_id, tool, arguments].
    const key = createHash("sha256")
      .update('["traj-1",1,"w","add_order_note",{"note":"n","order_id":"o_001"}]')
      .digest("hex");
    const write = line("w", {
      tool: "add_order_note",
      authority: "A2",
      // The execute stage runs inside settle and is recorded when it ends, before settle does.
      stages: { resolve: ok, validate: ok, execute: ok, settle: ok, shape: ok },
      key,
      record_state: "COMPLETED",
      argument_tokens: 12, // {"order_id":"o_001","note":"n"}
      observation_tokens: seen.get("w"),
    });
    const invalid = line("call-302", {
      outcome: "invalid_arguments",
      stages: { resolve: ok, validate: { outcome: "invalid_arguments", ms: "<ms>" } },
      validation_codes: ["invalid_pattern"],
      argument_tokens: 6, // {"order_id":"bad"}
      observation_tokens: seen.get("call-302"),
    });
    expect(records.map(withoutDurations)).toStrictEqual([...reads, write, invalid]);
    // Stages in the order they ended (toStrictEqual does not compare key order).
    expect(records.map((r) => Object.keys(r.stages as object).join(" "))).toStrictEqual([
      ...reads.map(() => "resolve validate execute shape"),
      "resolve validate execute settle shape",
      "resolve validate",
    ]);
    // Sanity of the reference counts themselves: a fenced order is more than a few tokens.
    expect(Math.min(...seen.values())).toBeGreaterThan(20);
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
    expect(() => sink.write({ record: {} as never, arguments: {}, observation_text: "" })).toThrow(
      /^audit sink .*closed\.jsonl is closed; create a new gateway to keep auditing$/,
    );
  });

  it("writes a line at once on an idle trail; lines that follow within FLUSH_DELAY_MS are batched, a full batch on the next turn", async () => {
    // The sink's clock (performance.now) and its timers are faked: the test moves time itself,
    // so each step is checked at the exact moment it is due, and nothing waits on the wall clock.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setImmediate", "clearImmediate", "performance"] });
    const path = join(dir, "live.jsonl");
    const sink = createAuditSink(path);
    try {
      const entry = (i: number) => ({
        record: { call_id: `c${i}`, argument_tokens: null, observation_tokens: null } as never,
        arguments: { i },
        observation_text: `text ${i}`,
      });
      const read = () =>
        readFileSync(path, "utf8")
          .trimEnd()
          .split("\n")
          .map((l) => JSON.parse(l) as { call_id: string });
      const ids = () => read().map((r) => r.call_id);
      sink.write(entry(0));
      // On disk before write() returns: nothing was written in the last FLUSH_DELAY_MS. Counts by the reference
      // encoder.
      expect(read()).toStrictEqual([
        { call_id: "c0", argument_tokens: referenceTokens('{"i":0}'), observation_tokens: referenceTokens("text 0") },
      ]);
      // Right after a write, lines wait; FLUSH_BATCH waiting lines are written on the next turn, with the one that came
      // after.
      for (let i = 1; i <= FLUSH_BATCH + 1; i++) sink.write(entry(i));
      expect(ids()).toStrictEqual(["c0"]);
      vi.advanceTimersByTime(0);
      expect(ids()).toStrictEqual(Array.from({ length: FLUSH_BATCH + 2 }, (_, i) => `c${i}`));
      // A line that joins a batch is written FLUSH_DELAY_MS after it came, without close or flush.
      sink.write(entry(1));
      sink.write(entry(2));
      vi.advanceTimersByTime(FLUSH_DELAY_MS - 1);
      expect(read()).toHaveLength(FLUSH_BATCH + 2);
      vi.advanceTimersByTime(1);
      expect(ids().slice(FLUSH_BATCH + 2)).toStrictEqual(["c1", "c2"]);
      // flush() writes what waits at once.
      sink.write(entry(0));
      expect(read()).toHaveLength(FLUSH_BATCH + 4);
      sink.flush();
      // A repeated argument text is counted exactly (served from the per-text cache).
      expect(read().at(-1)).toStrictEqual({
        call_id: "c0",
        argument_tokens: referenceTokens('{"i":0}'),
        observation_tokens: referenceTokens("text 0"),
      });
    } finally {
      vi.useRealTimers();
      await sink.close();
    }
  });

  it("a line that joins a batch is completed when written: its arguments as they were at write(), its order kept, and one that cannot be serialised loses only its own line", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setImmediate", "clearImmediate", "performance"] });
    const path = join(dir, "batched.jsonl");
    const sink = createAuditSink(path);
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    try {
      const entry = (call_id: string, args: unknown, extra: Record<string, unknown> = {}) => ({
        record: { call_id, argument_tokens: null, observation_tokens: null, ...extra } as never,
        arguments: args,
        observation_text: `observation of ${call_id}`,
      });
      sink.write(entry("idle", {}));
      const changed = { path: "a.txt" };
      sink.write(entry("b1", changed));
      // The handler's object changes after its call ended: the line counts what the call had.
      changed.path = "a much longer path than the call had, which would count as many more tokens.txt";
      sink.write(entry("bad", {}, { notes: { n: 1n } }));
      sink.write(entry("b2", { n: 2 }));
      expect(readFileSync(path, "utf8").trimEnd().split("\n")).toHaveLength(1);
      sink.flush();
      const lines = readFileSync(path, "utf8")
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines).toStrictEqual([
        {
          call_id: "idle",
          argument_tokens: referenceTokens("{}"),
          observation_tokens: referenceTokens("observation of idle"),
        },
        {
          call_id: "b1",
          argument_tokens: referenceTokens('{"path":"a.txt"}'),
          observation_tokens: referenceTokens("observation of b1"),
        },
        {
          call_id: "b2",
          argument_tokens: referenceTokens('{"n":2}'),
          observation_tokens: referenceTokens("observation of b2"),
        },
      ]);
      expect(stderr).toHaveBeenCalledWith(
        expect.stringMatching(/^toolgate: audit line for call bad not written: .*BigInt/),
      );
    } finally {
      stderr.mockRestore();
      vi.useRealTimers();
      await sink.close();
    }
  });
});

/** A one-shot event: a handler fires it when it starts, the test awaits it (no turn-counting). */
function signal(): { fire(): void; fired: Promise<void> } {
  let fire!: () => void;
  const fired = new Promise<void>((r) => (fire = r));
  return { fire, fired };
}

describe("close", () => {
  it("waits for a call in flight, then writes its line and closes the store", async () => {
    const path = join(dir, "close.jsonl");
    const { call, gateway, store } = make({ audit: path });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const entered = signal();
    gateway.tools.get("add_order_note")!.handler = async () => {
      entered.fire();
      await gate;
      return { ok: true };
    };
    const pending = call("add_order_note", { order_id: "o_001", note: "late" });
    await entered.fired;
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
    const entered = signal();
    gateway.tools.get("add_order_note")!.handler = (_args, ctx) => {
      seen = ctx.signal;
      entered.fire();
      // Ends only when aborted, like a killed process tree.
      return new Promise((_resolve, reject) => ctx.signal.addEventListener("abort", () => reject(new Error("killed"))));
    };
    const pending = call("add_order_note", { order_id: "o_001", note: "late" });
    await entered.fired;
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
    expect(o.error?.message).toMatch(
      /^add_order_note was still running when toolgate shut down \(after its grace period\) and was aborted\. Whether its effect happened is unknown/,
    );
    expect(recordState).toBe("IN_DOUBT");
    const lines = readFileSync(path, "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as { outcome: string; record_state: string });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ outcome: "tool_failed", record_state: "IN_DOUBT" });
  });

  it("after grace_ms a handler that ignores its signal is not waited for; a read call answers too", async () => {
    const { call, gateway, audit } = make();
    const [writing, reading] = [signal(), signal()];
    gateway.tools.get("add_order_note")!.handler = () => (writing.fire(), new Promise(() => {}));
    gateway.tools.get("get_order")!.handler = () => (reading.fire(), new Promise(() => {}));
    const write = call("add_order_note", { order_id: "o_001", note: "late" });
    const read = call("get_order", { order_id: "o_001" });
    await Promise.all([writing.fired, reading.fired]);
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
    inputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: { cursor: { type: "integer" } },
      additionalProperties: false,
    },
    effect: "read",
    handler: () =>
      toolResult(
        { items: [1, 2] },
        {
          text: "items 1-2 of 12",
          next: { arguments: { cursor: 2 }, hint: "10 more items" },
          truncated: { omitted: 10, unit: "items" },
        },
      ),
  };
  const captured: ToolSpec = {
    ...paged,
    name: "run_capture",
    description: "Runs and captures output, head and tail.",
    handler: () =>
      toolResult(
        { stdout: "head … tail" },
        { text: "head\n[… 24751 bytes cut …]\ntail", truncated: { omitted: 24751, unit: "bytes" } },
      ),
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
    expect(c.text).toContain(
      "the tool left out 24751 bytes; to see them, narrow the call (e.g. a more specific query, or pipe output through head, tail or grep).",
    );
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

describe("auditTimestamp", () => {
  it("is toISOString of each millisecond, the same text for calls in the same one", () => {
    const ms = Date.UTC(2026, 11, 3, 9, 35, 44, 731);
    for (const t of [ms, ms, ms + 1, ms, 0, ms + 0.5]) expect(auditTimestamp(t)).toBe(new Date(t).toISOString());
    expect(() => auditTimestamp(Number.NaN)).toThrow(RangeError);
  });
});
