/** The package's exports map, as consumers resolve it. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { exports: Record<string, Record<string, string>>; engines: { node: string } };

describe("exports map", () => {
  it("types first, then import, then a default that require() of ESM (Node ≥ 20.19, the engines floor) resolves", () => {
    expect(pkg.engines.node).toBe(">=20.19");
    expect(pkg.exports["."]).toEqual({ types: "./dist/index.d.ts", import: "./dist/index.js", default: "./dist/index.js" });
    expect(Object.keys(pkg.exports["."]!)[0]).toBe("types");
  });
});
