import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readInput } from "../../src/cli/io.js";

const dir = mkdtempSync(join(tmpdir(), "tg-read-input-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("readInput", () => {
  it("says a directory is a directory and what to pass instead, not Node's EISDIR text", () => {
    expect(() => readInput(dir)).toThrow(
      `cannot read ${dir}: it is a directory; pass a file (e.g. ${join(dir, "catalog.json")}) or - for standard input`,
    );
  });

  it("keeps the plain message for a missing file", () => {
    expect(() => readInput(join(dir, "nope.json"))).toThrow(`cannot read ${join(dir, "nope.json")}: no such file`);
  });
});
