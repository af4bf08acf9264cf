/**
 * A stdio upstream does not outlive `toolgate proxy`. A client that closes the proxy's stdin and
 * then, as the SDKs' transports do when a server is slow to go, sends SIGTERM, used to kill the
 * proxy while it was still ending its upstream gracefully (the SDK waits 2 s, then SIGTERM, 2 s,
 * then SIGKILL): the upstream was left running, orphaned. Against a real proxy from source and an
 * upstream that ignores SIGTERM and its stdin's end, the proxy now exits at the signal and its
 * upstream is gone with it.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { proxyProcess } from "../../support/proxy-process.js";
import { lineClient } from "../transports/stdio-lines.js";

const stubborn = fileURLToPath(new URL("../fixtures/stubborn-server.mjs", import.meta.url));
const started: number[] = [];

/** Whether `pid` is a live process (a zombie waiting for its parent to reap it is not). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

afterAll(() => {
  for (const pid of started)
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone, as it should be.
    }
});

describe("toolgate proxy and its stdio upstream", { timeout: 60_000 }, () => {
  it("a SIGTERM while the proxy closes ends its upstream too (which ignores SIGTERM and stdin's end)", async () => {
    const c = lineClient(proxyProcess([stubborn], "upstream-reaper"));
    const init = await c.request("initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "reaper-test", version: "1.0.0" },
    });
    expect(init.error).toBeUndefined();
    c.send({ method: "notifications/initialized" });
    const answer = await c.request("tools/call", { name: "pid", arguments: {} });
    // The upstream's text, inside the observation's untrusted fence, is its pid alone on a line.
    const text = (answer.result?.content as Array<{ text: string }>)[0]!.text;
    const pid = Number(/^(\d+)$/m.exec(text)?.[1]);
    expect(pid).toBeGreaterThan(1);
    started.push(pid);
    expect(alive(pid)).toBe(true);

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
    for (let i = 0; i < 200 && alive(pid); i++) await new Promise((r) => setTimeout(r, 25));
    expect(alive(pid), `upstream ${pid} outlived the proxy`).toBe(false);
  });
});
