import { describe, expect, it } from "vitest";
import { parseBudget, parseListenAddress } from "../../../src/cli/host/flags.js";

describe("--http HOST:PORT", () => {
  it("accepts HOST:PORT, :PORT, PORT and [v6]:PORT, loopback by default", () => {
    expect(parseListenAddress("0.0.0.0:8080")).toEqual({ host: "0.0.0.0", port: 8080 });
    expect(parseListenAddress(":8765")).toEqual({ host: "127.0.0.1", port: 8765 });
    expect(parseListenAddress("8765")).toEqual({ host: "127.0.0.1", port: 8765 });
    expect(parseListenAddress("[::1]:9000")).toEqual({ host: "::1", port: 9000 });
  });
  it("refuses anything else with an example", () => {
    expect(() => parseListenAddress("localhost")).toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: --http must be HOST:PORT, :PORT or PORT with a port from 0 to 65535; received "localhost"; example 127.0.0.1:8765]`,
    );
    expect(() => parseListenAddress("127.0.0.1:70000")).toThrow(/0 to 65535/);
  });
});

describe("--budget-tokens", () => {
  it("takes a whole number from the minimum up", () => {
    expect(parseBudget("1500")).toBe(1500);
    expect(parseBudget(undefined)).toBeUndefined();
  });
  it("refuses too few tokens, fractions and words", () => {
    expect(() => parseBudget("100")).toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: --budget-tokens must be a whole number of o200k tokens, at least 200 (a cut needs room for its marker); received "100"; example --budget-tokens 2000]`,
    );
    expect(() => parseBudget("1500.5")).toThrow(/whole number/);
    expect(() => parseBudget("lots")).toThrow(/whole number/);
  });
});
