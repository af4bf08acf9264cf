import { closeSync, constants, existsSync, mkdirSync, openSync, writeSync, chmodSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ProgressUpdate, ToolSpec } from "../../src/core/tool.js";
import { createCodingCatalog } from "../../src/tools/catalog.js";
import { byteSize, progressTicker } from "../../src/tools/progress.js";
import { pollUntil } from "../support/procs.js";
import { binaryAvailable } from "../support/require.js";
import { makeWorkspace } from "./fixtures.js";

const s = makeWorkspace("progress");
afterAll(() => s.cleanup());
// The root sandbox runs commands as an unprivileged user: the workspace must be theirs to use.
chmodSync(s.base, 0o755);
chmodSync(s.root, 0o777);

const tools = new Map<string, ToolSpec>(
  createCodingCatalog({ workspace: s.root, sandbox: { warn: () => {} } }).map((t) => [t.name, t]),
);
const ctx = (progress: (u: ProgressUpdate) => void, signal = new AbortController().signal) => ({
  signal,
  trajectory_id: "t-progress",
  turn: 0,
  call_id: "c",
  now: Date.now,
  budget_tokens: 100_000,
  progress,
});

/** Resolves with the updates once `n` have arrived (the test's bound, not a measurement). */
function collector() {
  const updates: ProgressUpdate[] = [];
  return {
    updates,
    report: (u: ProgressUpdate) => void updates.push(u),
    async atLeast(n: number): Promise<void> {
      expect(await pollUntil(() => updates.length >= n, 20_000), `${n} progress reports arrived`).toBe(true);
    },
  };
}

describe("progressTicker", () => {
  it("starts nothing without a receiver, and a receiver that throws does not stop the ticks", async () => {
    expect(progressTicker(undefined, () => ({ message: "", counts: {} }))).toBeTypeOf("function");
    let calls = 0;
    const stop = progressTicker(
      () => {
        calls++;
        throw new Error("receiver failed");
      },
      () => ({ message: "m", counts: { n: calls } }),
      5,
    );
    expect(await pollUntil(() => calls >= 3, 10_000)).toBe(true);
    stop();
    const seen = calls;
    await new Promise((r) => setTimeout(r, 30));
    expect(calls).toBe(seen);
  });

  it("words byte counts as a person reads them", () => {
    expect([0, 812, 3174, 12 * 1024 ** 2 + 5, 5 * 1024 ** 3].map(byteSize)).toEqual([
      "0 B",
      "812 B",
      "3.1 KiB",
      "12.0 MiB",
      "5.0 GiB",
    ]);
  });
});

describe.runIf(binaryAvailable("bwrap") && binaryAvailable("rg"))("progress of long calls", () => {
  it("bash_execute reports elapsed time and the bytes of output so far while it runs", async () => {
    const c = collector();
    const gate = join(s.root, "go-bash");
    const bash = tools.get("bash_execute")!;
    // The command waits for the test: it ends once two reports came, however slow the machine.
    const pending = bash.handler(
      {
        command: `printf 'hello\\n'; printf 'oops' >&2; while [ ! -e go-bash ]; do sleep 0.05; done`,
        timeout_ms: 60_000,
      },
      ctx(c.report),
    ) as Promise<{ output: { exit_code: number } }>;
    await c.atLeast(2);
    closeSync(openSync(gate, "w"));
    expect((await pending).output.exit_code).toBe(0);
    const [first, second] = c.updates as [ProgressUpdate, ProgressUpdate];
    expect(first.elapsed_ms).toBeGreaterThanOrEqual(1000);
    expect(second.elapsed_ms).toBeGreaterThan(first.elapsed_ms);
    expect(second.counts).toEqual({ stdout_bytes: 6, stderr_bytes: 4 });
    expect(second.message).toMatch(/^running for \d+ s; 6 B of stdout and 4 B of stderr so far$/);
    const count = c.updates.length;
    await new Promise((r) => setTimeout(r, 1100));
    expect(c.updates.length, "no report after the command ended").toBe(count);
  });

  it("grep_search reports files and matches so far, and a cancelled search stops ripgrep", async () => {
    // A FIFO the test writes to: ripgrep reads as long as the test keeps it open, so the search is
    // as long as the test needs without a large tree.
    mkdirSync(join(s.root, "slow"), { recursive: true });
    const fifo = join(s.root, "slow", "lines.txt");
    execFileSync("mkfifo", ["-m", "0666", fifo]);
    const c = collector();
    const abort = new AbortController();
    const grep = tools.get("grep_search")!;
    const pending = Promise.resolve(
      grep.handler({ pattern: "needle", path: fifo, glob: "", cursor: 0 }, ctx(c.report, abort.signal)),
    ).catch((e: unknown) => e);
    // Opened without blocking once ripgrep has opened it for reading (ENXIO until then).
    let fd = -1;
    const opened = await pollUntil(() => {
      try {
        fd = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
        return true;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "ENXIO") throw e;
        return false;
      }
    }, 20_000);
    expect(
      opened,
      `ripgrep opened the FIFO (the search answered: ${String(await Promise.race([pending, "not yet"]))})`,
    ).toBe(true);
    // ripgrep buffers its output: enough matches to fill its buffer reach the reader while the FIFO is still open.
    const lines = Array.from({ length: 2000 }, (_, i) => `needle ${i}\nno\n`).join("");
    writeSync(fd, lines);
    expect(await pollUntil(() => c.updates.some((u) => u.counts.matches! > 0), 20_000)).toBe(true);
    const seen = c.updates.find((u) => u.counts.matches! > 0)!;
    expect(seen.counts.files).toBe(1);
    expect(seen.counts.matches).toBeLessThanOrEqual(2000);
    expect(seen.message).toBe(
      `searching for ${Math.floor(seen.elapsed_ms / 1000)} s; ${seen.counts.matches} matches in 1 file so far`,
    );
    abort.abort(new Error("the caller cancelled"));
    const err = (await pending) as Error & { code?: string };
    expect(err.code).toBe("search_aborted");
    // ripgrep is gone once writing to its FIFO finds no reader (EPIPE).
    const gone = await pollUntil(() => {
      try {
        writeSync(fd, "more\n");
        return false;
      } catch (e) {
        return (e as NodeJS.ErrnoException).code === "EPIPE";
      }
    }, 10_000);
    closeSync(fd);
    expect(gone, "ripgrep stopped reading").toBe(true);
    expect(existsSync(fifo)).toBe(true);
  });
});
