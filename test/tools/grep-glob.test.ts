import { afterAll, describe, expect, it } from "vitest";
import { grepSearch } from "../../src/tools/grep.js";
import { binaryAvailable } from "../support/require.js";
import { makeWorkspace, refusalText } from "./fixtures.js";

const s = makeWorkspace("grep-glob");
afterAll(() => s.cleanup());

describe.runIf(binaryAvailable("rg"))("grep_search with a glob ripgrep cannot parse", () => {
  s.write("a.ts", "x\n");

  it("names the glob, not the pattern, and says how to write one", async () => {
    const text = await refusalText(grepSearch(s.ws, { pattern: "x", path: s.root, glob: "{" }), s);
    expect(text.startsWith("invalid_glob: ")).toBe(true);
    expect(text).toContain("error parsing glob '{'");
    expect(text).not.toContain("Rust regex");
    expect(text).toContain("glob is a gitignore-style file name pattern");
  });
});
