/**
 * A client-supplied idempotency key is the client's own word, so it is valid for one tool and one
 * holder only: the same key on another tool, or from another holder, is another record, never a
 * replay of someone else's result. A token narrowed from the same grant is the same holder, so a
 * retry through it still replays.
 */
import { describe, expect, it } from "vitest";
import { createMemoryStore } from "../../src/idempotency/stores/memory.js";
import { createGateway } from "../../src/runtime/gateway.js";
import { createMemoryAuditSink } from "../../src/runtime/audit.js";
import type { ToolSpec } from "../../src/core/tool.js";
import type { Proposal } from "../../src/runtime/types.js";
import { HOUR, testAuthority } from "../capability/support.js";

const S = "https://json-schema.org/draft/2020-12/schema";

/** Two writes that take the same arguments; each counts its runs and answers with its own name. */
function twins() {
  const runs: Record<string, number> = { write_a: 0, write_b: 0 };
  const tool = (name: "write_a" | "write_b"): ToolSpec =>
    ({
      name,
      description: `Writes a value (${name}).`,
      effect: "write",
      inputSchema: {
        $schema: S,
        type: "object",
        properties: { value: { type: "string", maxLength: 20 } },
        required: ["value"],
        additionalProperties: false,
      },
      handler: () => ({ by: name, run: ++runs[name]! }),
    }) as ToolSpec;
  return { tools: [tool("write_a"), tool("write_b")], runs };
}

let n = 0;
const proposal = (tool: string, more: Partial<Proposal> = {}): Proposal => ({
  trajectory_id: "t",
  turn: 0,
  call_id: `c${++n}`,
  tool,
  arguments: { value: "same" },
  idempotency_key: "order-42",
  ...more,
});

describe("a client-supplied idempotency key", () => {
  it("on another tool with the same arguments runs that tool, never replays the first tool's result", async () => {
    const { tools, runs } = twins();
    const gateway = createGateway({ tools, store: createMemoryStore(), audit: false });
    const a = await gateway.call(proposal("write_a"));
    const b = await gateway.call(proposal("write_b"));
    expect([a.ok, a.output, a.replay]).toEqual([true, { by: "write_a", run: 1 }, undefined]);
    expect([b.ok, b.output, b.replay]).toEqual([true, { by: "write_b", run: 1 }, undefined]);
    // Each tool's own repeat still replays its own record.
    const again = await gateway.call(proposal("write_b"));
    expect([again.output, again.replay]).toEqual([{ by: "write_b", run: 1 }, true]);
    expect(runs).toEqual({ write_a: 1, write_b: 1 });
    await gateway.close();
  });

  it("is one key space per issued grant: another grant's holder gets a separate record; a narrowed token replays", async () => {
    const { tools, runs } = twins();
    const { authority, store } = testAuthority();
    const audit = createMemoryAuditSink();
    const gateway = createGateway({ tools, store, authority, audit });
    const grant = () => authority.issue({ rights: ["write"], objects: ["tool:write_a", "tool:write_b"], ttl_ms: HOUR });
    const alice = grant();
    const mallory = grant();
    const first = await gateway.call(proposal("write_a", { capability: alice }));
    const other = await gateway.call(proposal("write_a", { capability: mallory }));
    expect([first.output, first.replay]).toEqual([{ by: "write_a", run: 1 }, undefined]);
    expect([other.output, other.replay]).toEqual([{ by: "write_a", run: 2 }, undefined]);
    const narrowed = authority.attenuate(alice, { objects: ["tool:write_a"] });
    const retry = await gateway.call(proposal("write_a", { capability: narrowed }));
    expect([retry.output, retry.replay]).toEqual([{ by: "write_a", run: 1 }, true]);
    expect(runs.write_a).toBe(2);
    // The record is keyed by a hash of the scope, never by the client's word itself.
    const keys = audit.records.map((r) => r.key);
    expect(keys.every((k) => typeof k === "string" && /^[0-9a-f]{64}$/.test(k))).toBe(true);
    expect(new Set(keys).size).toBe(2);
    await gateway.close();
  });

  it("without capabilities is scoped by the caller's principal, when the transport names one", async () => {
    const { tools, runs } = twins();
    const gateway = createGateway({ tools, store: createMemoryStore(), audit: false });
    const one = await gateway.call(proposal("write_a"), { principal: "peer:10.0.0.1" });
    const two = await gateway.call(proposal("write_a"), { principal: "peer:10.0.0.2" });
    const back = await gateway.call(proposal("write_a"), { principal: "peer:10.0.0.1" });
    expect([one.output, two.output, back.output]).toEqual([
      { by: "write_a", run: 1 },
      { by: "write_a", run: 2 },
      { by: "write_a", run: 1 },
    ]);
    expect(back.replay).toBe(true);
    expect(runs.write_a).toBe(2);
    await gateway.close();
  });

  it("reused on the same tool with other arguments is refused, naming the key and the tool", async () => {
    const { tools, runs } = twins();
    const gateway = createGateway({ tools, store: createMemoryStore(), audit: false });
    await gateway.call(proposal("write_a"));
    const o = await gateway.call(proposal("write_a", { arguments: { value: "other" } }));
    expect(o.error?.code).toBe("key_reused");
    expect(o.text).toContain(
      'idempotency_key "order-42" was already used for a call to write_a with different arguments',
    );
    expect(runs.write_a).toBe(1);
    await gateway.close();
  });
});
