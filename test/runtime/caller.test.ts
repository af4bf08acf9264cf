import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createGateway } from "../../src/runtime/gateway.js";
import { defineTool } from "../../src/schema/define.js";
import type { CallerCapability } from "../../src/core/tool.js";
import { HOUR, testAuthority } from "../capability/support.js";

// A tool scopes its data by what the caller's capability names (a tenant), read from the
// context once the chain verifies, and an endpoint stores the call's idempotency key beside its
// effect so the probe of an in-doubt call can look for it.
describe("what a tool learns of its caller", () => {
  function setup() {
    const { authority, store, clock } = testAuthority();
    const seen: Array<{ at: string; caller: CallerCapability | null; key?: string }> = [];
    const note = defineTool({
      name: "note_write",
      description: "Writes a note for the caller's tenant.",
      input: z.object({ text: z.string().max(100).describe("The note's text.") }),
      effect: "write",
      check: async (_args, ctx) => {
        seen.push({ at: "check", caller: (await ctx.caller?.()) ?? null });
      },
      grant: async (_args, ctx) => {
        const tenant = (await ctx.caller?.())?.objects.find((o) => o.startsWith("tenant:")) ?? "tenant:none";
        return { op: "write", target: tenant };
      },
      handler: async (args, ctx) => {
        seen.push({ at: "handler", caller: (await ctx.caller?.()) ?? null, key: ctx.idempotency_key });
        return { written: args.text };
      },
    });
    const gateway = createGateway({ tools: [note], store, authority, audit: false, clock: () => clock.now });
    return { authority, gateway, seen, clock, store };
  }

  it("is the verified capability's grant id and objects in check and handler, and the record's key in the handler", async () => {
    const { authority, gateway, seen, store, clock } = setup();
    const token = authority.issue({ rights: ["write"], objects: ["tenant:acme"], ttl_ms: HOUR });
    const o = await gateway.call({
      trajectory_id: "t",
      turn: 1,
      call_id: "c1",
      tool: "note_write",
      arguments: { text: "hi" },
      capability: token,
    });
    expect(o.ok).toBe(true);
    const caller = { grant_id: expect.stringMatching(/^cap_/), objects: ["tenant:acme"] };
    expect(seen).toEqual([
      { at: "check", caller },
      { at: "handler", caller, key: expect.stringMatching(/^[0-9a-f]{64}$/) },
    ]);
    expect((await store.records.get(seen[1]!.key!, clock.now))?.state).toBe("COMPLETED");
  });

  it("is the intersection of an attenuated chain, and null for a forged, revoked or expired token", async () => {
    const { authority, gateway, seen, clock } = setup();
    const wide = authority.issue({ rights: ["write"], objects: ["tenant:acme", "tenant:globex"], ttl_ms: HOUR });
    expect((await authority.caller(authority.attenuate(wide, { objects: ["tenant:globex"] })))?.objects).toEqual([
      "tenant:globex",
    ]);
    const forged = wide.slice(0, -4) + (wide.endsWith("AAAA") ? "BBBB" : "AAAA");
    for (const bad of ["", "tg1.x", forged]) expect(await authority.caller(bad), bad).toBeNull();
    const revoked = authority.issue({ rights: ["write"], objects: ["tenant:acme"], ttl_ms: HOUR });
    await authority.revoke(revoked);
    expect(await authority.caller(revoked)).toBeNull();
    const o = await gateway.call({
      trajectory_id: "t",
      turn: 1,
      call_id: "c2",
      tool: "note_write",
      arguments: { text: "hi" },
      capability: forged,
    });
    expect(o.error?.code).toBe("denied");
    expect(seen).toEqual([{ at: "check", caller: null }]);
    clock.now += HOUR + 1;
    expect(await authority.caller(wide)).toBeNull();
  });

  it("is null when the gateway requires no capability", async () => {
    const { store } = testAuthority();
    let got: CallerCapability | null | undefined;
    const tool = defineTool({
      name: "caller_show",
      description: "Shows who calls.",
      input: z.object({}),
      effect: "read",
      handler: async (_a, ctx) => {
        got = await ctx.caller?.();
        return { key: ctx.idempotency_key ?? null };
      },
    });
    const gateway = createGateway({ tools: [tool], store, audit: false });
    const o = await gateway.call({ trajectory_id: "t", turn: 1, call_id: "c", tool: "caller_show", arguments: {} });
    expect(got).toBeNull();
    expect(o.output).toEqual({ key: null });
  });
});
