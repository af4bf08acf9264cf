import { describe, expect, it } from "vitest";
import { attenuate } from "../../../src/capability/attenuate.js";
import { MAX_TOKEN_CHARS } from "../../../src/capability/token.js";
import { idsFromMeta, SessionIds } from "../../../src/mcp/server/meta.js";
import { T0, testAuthority } from "../../capability/support.js";

// A delegated capability grows by a block per hop: three or four blocks pass 512 characters, the
// limit that fits ids. The token has its own limit, checked where it is parsed.
describe('_meta["toolgate/capability"]', () => {
  it("carries a delegated token longer than an id may be", () => {
    const { authority } = testAuthority();
    let token = authority.issue({
      rights: ["read", "write"],
      objects: ["path:/ws", "host:api.example.com", "repo:acme/widgets"],
      budget: 100,
      ttl_ms: 3_600_000,
    });
    for (const sub of ["a", "a/b", "a/b/c", "a/b/c/d"])
      token = attenuate(token, { objects: [`path:/ws/${sub}`] }, { now: () => T0 });
    expect(token.length).toBeGreaterThan(512);
    const r = idsFromMeta({ "toolgate/capability": token }, new SessionIds("s"));
    expect(r.ok && r.ids.capability).toBe(token);
  });

  it("still refuses one past the token limit, naming it", () => {
    const r = idsFromMeta({ "toolgate/capability": "tg1." + "a".repeat(MAX_TOKEN_CHARS) }, new SessionIds("s"));
    expect(r.ok ? null : r.issue.message).toMatch(new RegExp(`at most ${MAX_TOKEN_CHARS} characters`));
  });

  it("keeps the 512-character limit for ids", () => {
    const r = idsFromMeta({ "toolgate/call_id": "c".repeat(513) }, new SessionIds("s"));
    expect(r.ok ? null : r.issue.field).toBe('_meta["toolgate/call_id"]');
  });
});
