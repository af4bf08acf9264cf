/**
 * A second stop signal while `toolgate serve` is closing: the real serve over stdio, a call in
 * flight that the first SIGTERM's grace would wait for; the second SIGTERM exits at once through
 * `process.exit` (143, with a line saying so), so the exit hooks run, where the signal's default
 * death (no listener left after the first) would skip them.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ids, notesServeCommand, tempDir, until } from "../../mcp/support.js";
import { lineClient, openSession, type LineClient } from "../../mcp/transports/stdio-lines.js";

let c: LineClient | undefined;
afterEach(() => {
  c?.child.kill("SIGKILL");
});

describe("toolgate serve and a second stop signal", { timeout: 60_000 }, () => {
  it("the first SIGTERM waits for the call in flight; a second one exits at once with 143", async () => {
    const notes = tempDir("run-signals");
    const command = notesServeCommand(notes);
    command.args.push("--grace-ms", "30000");
    c = lineClient(command);
    await openSession(c, "run-signals");
    c.send({
      id: "slow",
      method: "tools/call",
      params: { name: "note_slow", arguments: { name: "s", delay_ms: 10_000 }, _meta: ids("run-signals-1") },
    });
    await until(() => existsSync(join(notes, "started.log")));
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      c!.child.once("exit", (code, signal) => resolve([code, signal])),
    );
    c.child.kill("SIGTERM");
    await until(() => c!.stderr().includes("SIGTERM: finishing in-flight calls (up to 30000 ms)"));
    c.child.kill("SIGTERM");
    expect(await exited).toEqual([143, null]);
    expect(c.stderr()).toContain("toolgate: SIGTERM again while closing: exiting now");
  });
});
