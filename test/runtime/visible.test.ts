import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createCapabilityAuthority } from "../../src/capability/authority.js";
import { keyRingFromMap } from "../../src/capability/keys.js";
import { createMemoryStore } from "../../src/idempotency/stores/memory.js";
import { gateways } from "./helpers.js";

const make = gateways();
const keys = keyRingFromMap({ k1: randomBytes(32).toString("base64") }, "test");

describe("per-agent views", () => {
  it("shows the tools whose right and tool object the capability grants, and none for a token that does not verify", async () => {
    const store = createMemoryStore();
    const { gateway, clock } = make({ store, keys });
    const authority = createCapabilityAuthority({ keys, store, now: () => clock.now });
    const reader = authority.issue({
      rights: ["read"],
      objects: ["tool:get_order", "tool:add_order_note"],
      ttl_ms: 60_000,
    });
    // add_order_note is a write: a read-only capability is not shown it.
    expect([...(await gateway.visible(reader))!]).toEqual(["get_order"]);
    const paths = authority.issue({ rights: ["read", "write"], objects: ["path:/srv"], ttl_ms: 60_000 });
    expect((await gateway.visible(paths))!.size).toBe(gateway.tools.size);
    expect((await gateway.visible("tg1.garbage"))!.size).toBe(0);
    clock.now += 120_000;
    expect((await gateway.visible(reader))!.size).toBe(0);
  });

  it("a gateway without keys shows every tool to everyone", async () => {
    const { gateway } = make();
    expect(await gateway.visible("anything")).toBeNull();
  });
});
