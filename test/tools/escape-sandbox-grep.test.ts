/**
 * The escape suite, grep_search: ripgrep runs inside the envelope, so toolgate's hidden state is
 * not readable whatever glob or ignore file whitelists it, a directory swapped for a symlink
 * during its walk leads nowhere outside the workspace, and one very long line is read in bounded
 * memory and still reported.
 */
import { randomBytes } from "node:crypto";
import { existsSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ToolContext, ToolSpec } from "../../src/core/tool.js";
import { createCodingCatalog } from "../../src/tools/catalog.js";
import { binaryAvailable } from "../support/require.js";
import { makeWorkspace } from "./fixtures.js";

const s = makeWorkspace("escape-grep");
afterAll(() => s.cleanup());
const SECRET = `TOPSECRET${randomBytes(4).toString("hex")}`;
const ready = binaryAvailable("bwrap") && binaryAvailable("rg") && binaryAvailable("python3");
const tools = ready ? new Map(createCodingCatalog({ workspace: s.root, sandbox: { warn: () => {} }, limits: { bash: { max_processes: 64 } } }).map((t) => [t.name, t])) : new Map<string, ToolSpec>();
const ctx = (): ToolContext => ({ signal: new AbortController().signal, trajectory_id: "t-grep", turn: 0, call_id: "c", now: Date.now, budget_tokens: 100_000 });

interface GrepOut {
  matches: { path: string; line: number; column: number; text: string }[];
  total: number;
}
const grep = async (args: Record<string, unknown>) => ((await tools.get("grep_search")!.handler({ path: s.root, ...args }, ctx())) as { output: GrepOut }).output;
const bash = (command: string, timeout_ms = 60_000) => tools.get("bash_execute")!.handler({ command, timeout_ms }, ctx()) as Promise<{ output: { exit_code: number; stdout: string; stderr: string } }>;

describe.runIf(ready)("escape suite: grep_search inside the envelope", () => {
  it("toolgate's hidden state is not searched with glob '*', nor after .ignore and .rgignore whitelist it", async () => {
    s.write(".toolgate/state.db", `${SECRET}\n`);
    s.write(".toolgate/audit.jsonl", `${SECRET}\n`);
    s.write("visible.txt", `${SECRET} visible\n`);
    for (const name of [".ignore", ".rgignore", ".gitignore"]) s.write(name, "!.toolgate\n!.toolgate/**\n!.toolgate/*\n");
    for (const glob of ["", "*", ".toolgate/*", "**/*.db", "*.{db,jsonl}"]) {
      const out = await grep({ pattern: SECRET, glob });
      expect([glob, out.matches.map((m) => m.path.slice(s.root.length + 1))]).toEqual([glob, glob === "" || glob === "*" ? ["visible.txt"] : []]);
    }
  });

  it("a directory swapped with a symlink to the outside during ripgrep's walk never leads it out (bounded race, zero escapes)", async () => {
    // The same names inside and outside: wherever the walk is when the swap lands, a read of the outside shows.
    for (let i = 0; i < 200; i++) {
      s.write(`sub/f${i}.txt`, "nothing here\n");
      s.write(`../outside/f${i}.txt`, `${SECRET} outside ${i}\n`);
    }
    symlinkSync(s.outside, join(s.root, "swap"));
    // The attacker is a concurrent bash_execute exchanging the two names (renameat2 RENAME_EXCHANGE) until told to stop.
    const swapper = `import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
n, deadline = 0, time.time() + 30
while n < 2000000 and not os.path.exists("stop") and time.time() < deadline:
    if libc.renameat2(-100, b"sub", -100, b"swap", 2) == 0: n += 1
print(n)`;
    s.write("swapper.py", swapper);
    const attack = bash("python3 swapper.py");
    let escapes = 0;
    let searches = 0;
    try {
      // Bounded: 150 searches, the swapper's own 30 s deadline ends it regardless.
      for (; searches < 150; searches++) {
        const out = await grep({ pattern: SECRET, glob: "*.txt" });
        escapes += out.matches.filter((m) => m.text.includes("outside")).length;
      }
    } finally {
      writeFileSync(join(s.root, "stop"), "");
    }
    const swaps = Number((await attack).output.stdout.trim());
    expect(swaps).toBeGreaterThan(1000); // the race really ran alongside the searches
    expect({ searches, escapes }).toEqual({ searches: 150, escapes: 0 });
  });

  it("a match on one very long line is reported, cut around the match with a marker, and the other matches are intact", async () => {
    const t = makeWorkspace("escape-grep-long");
    try {
      writeFileSync(join(t.root, "min.js"), "a".repeat(20 * 1024 * 1024) + `needle${"b".repeat(1024 * 1024)}\n`);
      t.write("short.ts", "const needle = 1;\n");
      const long = new Map(createCodingCatalog({ workspace: t.root, sandbox: { warn: () => {} } }).map((x) => [x.name, x]));
      const out = ((await long.get("grep_search")!.handler({ pattern: "needle", path: t.root }, ctx())) as { output: GrepOut }).output;
      expect(out.total).toBe(2);
      expect(out.matches).toEqual([
        { path: join(t.root, "min.js"), line: 1, column: 20 * 1024 * 1024 + 1, text: `…needle… [line of ${21 * 1024 * 1024 + 6} bytes cut]` },
        { path: join(t.root, "short.ts"), line: 1, column: 7, text: "const needle = 1;" },
      ]);
      expect(existsSync(join(t.root, "min.js"))).toBe(true);
    } finally {
      t.cleanup();
    }
  });
});
