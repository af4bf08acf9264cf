import { describe, expect, it } from "vitest";
import { bearerToken } from "../../../src/mcp/server/meta.js";

describe("Authorization: Bearer", () => {
  it("reads the token, case-insensitively, and nothing else", () => {
    expect(bearerToken("Bearer tg1.abc")).toBe("tg1.abc");
    expect(bearerToken("bearer  tg1.abc ")).toBe("tg1.abc");
    expect(bearerToken("Basic dXNlcg==")).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });
});
