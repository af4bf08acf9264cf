import { describe, expect, it } from "vitest";
import { parseBudget } from "../../src/mcp/flags.js";
import { bearerToken } from "../../src/mcp/meta.js";
import { effectFromAnnotations, proxyGrant } from "../../src/mcp/proxy-tools.js";
import { parseListenAddress } from "../../src/mcp/run.js";
import { targetFromArgv } from "../../src/mcp/list-tools.js";

describe("--http HOST:PORT", () => {
  it("accepts HOST:PORT, :PORT, PORT and [v6]:PORT, loopback by default", () => {
    expect(parseListenAddress("0.0.0.0:8080")).toEqual({ host: "0.0.0.0", port: 8080 });
    expect(parseListenAddress(":8765")).toEqual({ host: "127.0.0.1", port: 8765 });
    expect(parseListenAddress("8765")).toEqual({ host: "127.0.0.1", port: 8765 });
    expect(parseListenAddress("[::1]:9000")).toEqual({ host: "::1", port: 9000 });
  });
  it("refuses anything else with an example", () => {
    expect(() => parseListenAddress("localhost")).toThrowErrorMatchingInlineSnapshot(`[ToolgateError: --http must be HOST:PORT, :PORT or PORT with a port from 0 to 65535; received "localhost"; example 127.0.0.1:8765]`);
    expect(() => parseListenAddress("127.0.0.1:70000")).toThrow(/0 to 65535/);
  });
});

describe("--budget-tokens", () => {
  it("takes a whole number from the minimum up", () => {
    expect(parseBudget("1500")).toBe(1500);
    expect(parseBudget(undefined)).toBeUndefined();
  });
  it("refuses too few tokens, fractions and words", () => {
    expect(() => parseBudget("100")).toThrowErrorMatchingInlineSnapshot(`[ToolgateError: --budget-tokens must be a whole number of o200k tokens, at least 200 (a cut needs room for its marker); received "100"; example --budget-tokens 2000]`);
    expect(() => parseBudget("1500.5")).toThrow(/whole number/);
    expect(() => parseBudget("lots")).toThrow(/whole number/);
  });
});

describe("Authorization: Bearer", () => {
  it("reads the token, case-insensitively, and nothing else", () => {
    expect(bearerToken("Bearer tg1.abc")).toBe("tg1.abc");
    expect(bearerToken("bearer  tg1.abc ")).toBe("tg1.abc");
    expect(bearerToken("Basic dXNlcg==")).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });
});

describe("proxy effects from MCP annotations", () => {
  it("follows MCP's defaults: a tool without annotations is destructive", () => {
    expect(effectFromAnnotations(undefined)).toBe("destructive");
    expect(effectFromAnnotations({})).toBe("destructive");
    expect(effectFromAnnotations({ readOnlyHint: true })).toBe("read");
    expect(effectFromAnnotations({ readOnlyHint: false, destructiveHint: true, idempotentHint: true })).toBe("destructive");
    expect(effectFromAnnotations({ destructiveHint: false, idempotentHint: true })).toBe("idempotent");
    expect(effectFromAnnotations({ destructiveHint: false })).toBe("write");
  });
  it("asks for the path argument when it is absolute, else for the tool", () => {
    expect(proxyGrant("read_text_file", "read", { path: "/srv/a.txt" })).toEqual({ op: "read", target: "path:/srv/a.txt", cost: 1 });
    expect(proxyGrant("create_entities", "write", { entities: [] })).toEqual({ op: "write", target: "tool:create_entities", cost: 1 });
    expect(proxyGrant("write_file", "destructive", { path: "rel.txt" })).toEqual({ op: "write", target: "tool:write_file", cost: 1 });
  });
});

describe("lint --mcp targets", () => {
  it("takes one URL as an HTTP server and anything else as a command", () => {
    expect(targetFromArgv(["http://127.0.0.1:3001/mcp"])).toEqual({ url: "http://127.0.0.1:3001/mcp" });
    expect(targetFromArgv(["npx", "-y", "server"], { PATH: "/bin" })).toEqual({ command: "npx", args: ["-y", "server"], env: { PATH: "/bin" } });
    expect(() => targetFromArgv([])).toThrow(/--mcp needs the server to lint/);
  });
});
