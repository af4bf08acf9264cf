/**
 * The escape suite, grep_search: ripgrep runs inside the envelope, so toolgate's hidden state is
 * not readable whatever glob or ignore file whitelists it, a directory swapped for a symlink
 * during its walk leads nowhere outside the workspace, and one very long line is read in bounded
 * memory and still reported; and past limits.grep.max_concurrent a call is refused at once.
 */
import { randomBytes } from "node:crypto";
import { existsSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { NoEffectError } from "../../src/core/errors.js";
import type { ToolContext, ToolSpec } from "../../src/core/tool.js";
import { callGate, DEFAULT_BASH_LIMITS, launcherChooser } from "../../src/tools/bash.js";
import { createCodingCatalog } from "../../src/tools/catalog.js";
import { DEFAULT_GREP_LIMITS, grepSearch } from "../../src/tools/grep.js";
import { createBubblewrap } from "../../src/tools/sandbox/bubblewrap.js";
import { binaryAvailable } from "../support/require.js";
import { makeWorkspace } from "./fixtures.js";

const s = makeWorkspace("escape-grep");
afterAll(() => s.cleanup());
const SECRET = `TOPSECRET${randomBytes(4).toString("hex")}`;
const ready = binaryAvailable("bwrap") && binaryAvailable("rg") && binaryAvailable("python3");
const tools = ready
  ? new Map(
      createCodingCatalog({
        workspace: s.root,
        sandbox: { warn: () => {} },
        limits: { bash: { max_processes: 64 } },
      }).map((t) => [t.name, t]),
    )
  : new Map<string, ToolSpec>();
const ctx = (): ToolContext => ({
  signal: new AbortController().signal,
  trajectory_id: "t-grep",
  turn: 0,
  call_id: "c",
  now: Date.now,
  budget_tokens: 100_000,
});

interface GrepOut {
  matches: { path: string; line: number; column: number; text: string }[];
  total: number;
}
const grep = async (args: Record<string, unknown>) =>
  ((await tools.get("grep_search")!.handler({ path: s.root, ...args }, ctx())) as { output: GrepOut }).output;
const bash = (command: string, timeout_ms = 60_000) =>
  tools.get("bash_execute")!.handler({ command, timeout_ms }, ctx()) as Promise<{
    output: { exit_code: number; stdout: string; stderr: string };
  }>;

describe.runIf(ready)("escape suite: grep_search inside the envelope", () => {
  it("toolgate's hidden state is not searched with glob '*', nor after .ignore and .rgignore whitelist it", async () => {
    s.write(".toolgate/state.db", `${SECRET}\n`);
    s.write(".toolgate/audit.jsonl", `${SECRET}\n`);
    s.write("visible.txt", `${SECRET} visible\n`);
    for (const name of [".ignore", ".rgignore", ".gitignore"])
      s.write(name, "!.toolgate\n!.toolgate/**\n!.toolgate/*\n");
    for (const glob of ["", "*", ".toolgate/*", "**/*.db", "*.{db,jsonl}"]) {
      const out = await grep({ pattern: SECRET, glob });
      expect([glob, out.matches.map((m) => m.path.slice(s.root.length + 1))]).toEqual([
        glob,
        glob === "" || glob === "*" ? ["visible.txt"] : [],
      ]);
    }
  });

  it("a directory swapped with a symlink to the outside during ripgrep's walk never leads it out (bounded race, zero escapes)", async () => {
    // The same names inside and outside: wherever the walk is when the swap lands, a read of the outside shows.
    for (let i = 0; i < 200; i++) {
      s.write(`sub/f${i}.txt`, "nothing here\n");
      s.write(`../outside/f${i}.txt`, `${SECRET} outside ${i}\n`);
    }
    symlinkSync(s.outside, join(s.root, "swap"));
    // The attacker is a concurrent bash_execute exchanging the two names (renameat2 RENAME_EXCHANGE) until told to
    // stop.
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
      const long = new Map(
        createCodingCatalog({ workspace: t.root, sandbox: { warn: () => {} } }).map((x) => [x.name, x]),
      );
      const out = (
        (await long.get("grep_search")!.handler({ pattern: "needle", path: t.root }, ctx())) as { output: GrepOut }
      ).output;
      expect(out.total).toBe(2);
      expect(out.matches).toEqual([
        {
          path: join(t.root, "min.js"),
          line: 1,
          column: 20 * 1024 * 1024 + 1,
          text: `…needle… [line of ${21 * 1024 * 1024 + 6} bytes cut]`,
        },
        { path: join(t.root, "short.ts"), line: 1, column: 7, text: "const needle = 1;" },
      ]);
      expect(existsSync(join(t.root, "min.js"))).toBe(true);
    } finally {
      t.cleanup();
    }
  });
});

describe.runIf(ready)("escape suite: grep_search calls at once", () => {
  const t = makeWorkspace("escape-grep-concurrent");
  afterAll(() => t.cleanup());
  t.write("a.txt", "needle\n");
  const refusal = (max: number) =>
    `too many grep_search calls at once: ${max} are running, the most this server allows (limits.grep.max_concurrent); nothing was run. Wait for one to finish, then call again (the operator can raise limits.grep.max_concurrent)`;
  /** Each call's result: its total, or the refusal's code and message. */
  const settle = (calls: Promise<unknown>[]) =>
    Promise.all(
      calls.map((c) =>
        c.then(
          (r) => (r as { output: GrepOut }).output.total,
          (e: unknown) => (e instanceof NoEffectError ? `${e.code}: ${e.message}` : Promise.reject(e)),
        ),
      ),
    );

  it("past the cap a call is refused at once with too_many_calls, nothing run; those let in all succeed, and the slots come back", async () => {
    const launcher = launcherChooser(createBubblewrap({ warn: () => {} }), false);
    let open!: () => void;
    const opened = new Promise<void>((r) => (open = r));
    // The first calls hold their slot until the test lets them go on: which calls are let in is then certain.
    const envelope = {
      choose: () => opened.then(launcher),
      limits: DEFAULT_BASH_LIMITS,
      gate: callGate(2, "grep_search", "limits.grep.max_concurrent"),
    };
    const search = () =>
      grepSearch(t.ws, { pattern: "needle", path: t.root }, DEFAULT_GREP_LIMITS, undefined, undefined, envelope);
    const calls = Array.from({ length: 6 }, search);
    const refused = await settle(calls.slice(2));
    open();
    const done = await settle(calls.slice(0, 2));
    expect([done, refused]).toEqual([[1, 1], Array(4).fill(`too_many_calls: ${refusal(2)}`)]);
    expect(await settle([search(), search()])).toEqual([1, 1]);
  });

  it("the catalog caps grep_search at limits.grep.max_concurrent (default 4): of 12 at once some are refused, every other one succeeds", async () => {
    const catalog = new Map(
      createCodingCatalog({ workspace: t.root, sandbox: { warn: () => {} } }).map((x) => [x.name, x]),
    );
    const results = await settle(
      Array.from({ length: 12 }, () =>
        Promise.resolve(catalog.get("grep_search")!.handler({ pattern: "needle", path: t.root }, ctx())),
      ),
    );
    const refused = results.filter((r) => r !== 1);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.length).toBeLessThanOrEqual(8);
    expect(new Set(refused)).toEqual(new Set([`too_many_calls: ${refusal(4)}`]));
    expect(DEFAULT_GREP_LIMITS.max_concurrent).toBe(4);
    expect(() => createCodingCatalog({ workspace: t.root, limits: { grep: { max_concurrent: 0 } } })).toThrow(
      "limits.grep.max_concurrent must be a positive integer; received 0; example 4 (the default)",
    );
    expect(() => createCodingCatalog({ workspace: t.root, limits: { grep: { concurrency: 2 } as object } })).toThrow(
      "limits.grep.concurrency is not a grep limit; the limits are page, page_tokens, text_chars, binary, max_matches, line_bytes, max_concurrent",
    );
    expect(() => createCodingCatalog({ workspace: t.root, limits: { grep: { binary: "" } } })).toThrow(
      'limits.grep.binary must be a non-empty string; received ""; example "rg" (the default)',
    );
  });
});
