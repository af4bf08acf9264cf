import { describe, expect, it } from "vitest";
import { effectFromAnnotations, proxyGrant } from "../../../src/mcp/proxy/proxy-tools.js";

describe("proxy effects from MCP annotations", () => {
  it("follows MCP's defaults: a tool without annotations is destructive", () => {
    expect(effectFromAnnotations(undefined)).toBe("destructive");
    expect(effectFromAnnotations({})).toBe("destructive");
    expect(effectFromAnnotations({ readOnlyHint: true })).toBe("read");
    expect(effectFromAnnotations({ readOnlyHint: false, destructiveHint: true, idempotentHint: true })).toBe(
      "destructive",
    );
    expect(effectFromAnnotations({ destructiveHint: false, idempotentHint: true })).toBe("idempotent");
    expect(effectFromAnnotations({ destructiveHint: false })).toBe("write");
  });
  it("asks for the path argument when it is absolute, else for the tool", () => {
    expect(proxyGrant("read_text_file", "read", { path: "/srv/a.txt" })).toEqual({
      op: "read",
      target: "path:/srv/a.txt",
      cost: 1,
    });
    expect(proxyGrant("create_entities", "write", { entities: [] })).toEqual({
      op: "write",
      target: "tool:create_entities",
      cost: 1,
    });
    expect(proxyGrant("write_file", "destructive", { path: "rel.txt" })).toEqual({
      op: "write",
      target: "tool:write_file",
      cost: 1,
    });
  });
});
