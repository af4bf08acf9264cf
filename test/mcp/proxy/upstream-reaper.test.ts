/**
 * A stdio upstream does not outlive `toolgate proxy`. A client that closes the proxy's stdin and
 * then, as the SDKs' transports do when a server is slow to go, sends SIGTERM, used to kill the
 * proxy while it was still ending its upstream gracefully (the SDK waits 2 s, then SIGTERM, 2 s,
 * then SIGKILL): the upstream was left running, orphaned. Against a real proxy from source and an
 * upstream that ignores SIGTERM and its stdin's end, the proxy now exits at the signal and its
 * upstream is gone with it. A proxy SIGKILLed runs no exit hook: on Linux its upstream is started
 * in a PID namespace of its own (`upstream-pidns.ts`, tested with all the upstream starts in
 * upstream-pidns.test.ts) or at least through `setpriv --pdeathsig KILL` (`upstream-pdeathsig.ts`),
 * so the kernel ends it then.
 */
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { proxyProcess } from "../../support/proxy-process.js";
import { alive, killLeft } from "../../support/procs.js";
import { lineClient, openSession, type LineClient } from "../transports/stdio-lines.js";
import { onPath, withParentDeathSignal } from "../../../src/mcp/proxy/upstream-pdeathsig.js";
import { binaryAvailable } from "../../support/require.js";
import { tempDir } from "../support.js";

const stubborn = fileURLToPath(new URL("../fixtures/stubborn-server.mjs", import.meta.url));
const started: number[] = [];

afterAll(() => killLeft(started));

/** The stubborn upstream's pid, asked through the proxy `c` (a 2025-11-25 session). */
async function upstreamPid(c: LineClient): Promise<number> {
  await openSession(c, "reaper-test");
  const answer = await c.request("tools/call", { name: "pid", arguments: {} });
  // The upstream's text, inside the observation's untrusted fence, is its pid alone on a line.
  const text = (answer.result?.content as Array<{ text: string }>)[0]!.text;
  const pid = Number(/^(\d+)$/m.exec(text)?.[1]);
  expect(pid).toBeGreaterThan(1);
  started.push(pid);
  expect(alive(pid)).toBe(true);
  return pid;
}

/** Waits a bounded while for `pid` to be gone (or a zombie); whether it is. */
async function vanished(pid: number): Promise<boolean> {
  for (let i = 0; i < 200 && alive(pid); i++) await new Promise((r) => setTimeout(r, 25));
  return !alive(pid);
}

describe("toolgate proxy and its stdio upstream", { timeout: 60_000 }, () => {
  it("a SIGTERM while the proxy closes ends its upstream too (which ignores SIGTERM and stdin's end)", async () => {
    const c = lineClient(proxyProcess([stubborn], "upstream-reaper"));
    const pid = await upstreamPid(c);

    // stdin's end starts the close; a SIGTERM every 100 ms until the proxy is gone lands while it
    // closes its upstream (which takes the SDK at least 2 s for one that does not go).
    const exited = c.end();
    let gone = false;
    void exited.then(() => (gone = true));
    while (!gone) {
      c.child.kill("SIGTERM");
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await exited).toBe(143);
    expect(c.stderr()).toContain("SIGTERM while closing: ending the upstreams now");
    // SIGKILLed in the proxy's exit: gone (or a zombie for init to reap) once the proxy is.
    expect(await vanished(pid), `upstream ${pid} outlived the proxy`).toBe(true);
  });

  it.runIf(process.platform === "linux" && binaryAvailable("setpriv"))(
    "a SIGKILLed proxy leaves no upstream behind: the kernel ends it (setpriv --pdeathsig KILL)",
    async () => {
      const c = lineClient(proxyProcess([stubborn], "upstream-pdeathsig"));
      const pid = await upstreamPid(c);
      // The pid is the upstream's own process (its command line names it), not a wrapper's.
      expect(readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")).toContain(stubborn);
      const exited = new Promise((r) => c.child.once("exit", (_code, signal) => r(signal)));
      c.child.kill("SIGKILL");
      expect(await exited).toBe("SIGKILL");
      expect(await vanished(pid), `upstream ${pid} outlived the SIGKILLed proxy`).toBe(true);
    },
  );
});

describe("withParentDeathSignal", () => {
  const dir = tempDir("pdeathsig-path");
  const setpriv = join(dir, "setpriv");
  const tool = join(dir, "upstream-tool");
  for (const file of [setpriv, tool]) {
    writeFileSync(file, "#!/bin/sh\n");
    chmodSync(file, 0o755);
  }
  writeFileSync(join(dir, "not-executable"), "");
  const target = { command: "upstream-tool", args: ["--flag"] };

  it("wraps a command found on PATH in setpriv --pdeathsig KILL on Linux", () => {
    expect(withParentDeathSignal(target, { PATH: dir }, "/", "linux")).toEqual({
      command: setpriv,
      args: ["--pdeathsig", "KILL", "--", "upstream-tool", "--flag"],
    });
    // A command with a slash is looked for where the upstream starts (its cwd), not on PATH.
    expect(withParentDeathSignal({ command: "./upstream-tool", args: [] }, { PATH: dir }, dir, "linux")).toEqual({
      command: setpriv,
      args: ["--pdeathsig", "KILL", "--", "./upstream-tool"],
    });
    expect(withParentDeathSignal({ command: "./upstream-tool", args: [] }, { PATH: dir }, "/", "linux")).toEqual({
      command: "./upstream-tool",
      args: [],
    });
  });

  it("leaves it as given elsewhere, without setpriv, or when the command does not resolve (its spawn then fails naming it)", () => {
    expect(withParentDeathSignal(target, { PATH: dir }, "/", "darwin")).toBe(target);
    expect(withParentDeathSignal(target, { PATH: "/nonexistent" }, "/", "linux")).toBe(target);
    const missing = { command: "no-such-upstream", args: [] };
    expect(withParentDeathSignal(missing, { PATH: dir }, "/", "linux")).toBe(missing);
    expect(onPath("not-executable", dir, "/")).toBeUndefined();
    expect(onPath("upstream-tool", `/nonexistent:${dir}`, "/")).toBe(tool);
  });
});
