/**
 * The escape suite, grep_search under a concurrent change of the tree: its path check is the
 * workspace walk (as for file_view), and ripgrep itself runs inside the envelope, where nothing
 * outside the workspace exists and `.toolgate/` is an empty mount. A process swaps the searched
 * folder with a symlink out of the workspace, or into `.toolgate/`, while grep_search searches it:
 * no page may show text from there. (Only the symlink scenarios: exchanging `.toolgate/` itself
 * needs a process outside the envelope, where the agent's shell never is.)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { binaryAvailable } from "../support/require.js";
import { runRace, type Scenario } from "./race/race.js";

const bases: string[] = [];
afterAll(() => bases.forEach((b) => rmSync(b, { recursive: true, force: true })));
const ready = binaryAvailable("python3") && binaryAvailable("rg") && binaryAvailable("bwrap");

describe.runIf(ready)("grep_search under a concurrent symlink swap, as root", () => {
  for (const scenario of ["symlink-outside", "symlink-hidden"] as Scenario[]) {
    it(
      `${scenario}: 2000 searches against renameat2(RENAME_EXCHANGE) in a loop, no escape`,
      { timeout: 60_000 },
      async () => {
        const base = mkdtempSync(join(tmpdir(), "tg-grep-race-"));
        bases.push(base);
        const report = await runRace({ base, scenario, tool: "grep_search", calls: 2000, max_ms: 30_000 });
        expect(report.calls).toBeGreaterThan(0);
        expect(report.swaps).toBeGreaterThan(0);
        expect(report.escapes, JSON.stringify(report.outcomes)).toEqual([]);
      },
    );
  }
});
