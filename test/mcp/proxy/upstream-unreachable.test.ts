/**
 * An upstream that cannot be started or reached: the error says what happened under the SDK's
 * "Connection closed" (how the command ended) and "fetch failed" (the network error), so the
 * operator knows what to fix.
 */
import net from "node:net";
import { describe, expect, it } from "vitest";
import type { ToolgateError } from "../../../src/core/errors.js";
import { connectUpstream } from "../../../src/mcp/proxy/upstream.js";
import { unreachableReason } from "../../../src/mcp/proxy/upstream-unreachable.js";

const failure = (target: Parameters<typeof connectUpstream>[0]) =>
  connectUpstream(target).then(
    () => {
      throw new Error("connected");
    },
    (e: unknown) => e as ToolgateError,
  );

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const { port } = s.address() as net.AddressInfo;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

describe("an upstream that cannot be started or reached", { timeout: 30_000 }, () => {
  it("a command that exits at once: its exit code, and where its stderr went", async () => {
    const err = await failure({ command: "sh", args: ["-c", "echo no such server >&2; exit 3"] });
    expect(err.code).toBe("upstream_unavailable");
    expect(err.message).toBe(
      "cannot start or reach the upstream MCP server (sh -c echo no such server >&2; exit 3): Connection closed: the command exited with code 3 before it answered; its stderr, in toolgate's own log, says why; check that it runs on its own as an MCP server on stdio",
    );
  });

  it("a URL where nothing listens: connection refused, and what to check", async () => {
    const url = `http://127.0.0.1:${await freePort()}/mcp`;
    const err = await failure({ url });
    expect(err.code).toBe("upstream_unavailable");
    expect(err.message).toMatch(
      /^cannot start or reach the upstream MCP server \(http:\/\/127\.0\.0\.1:\d+\/mcp\): .*fetch failed \(ECONNREFUSED\): nothing listens there \(connection refused\): is the server running, on that port\?$/,
    );
  });

  it("a command killed by a signal, and an error with nothing under it, say what they can", () => {
    const killed = { exitCode: null, signalCode: "SIGKILL" } as unknown as Parameters<typeof unreachableReason>[1];
    expect(unreachableReason(new Error("Connection closed"), killed)).toBe(
      "Connection closed: the command was ended by SIGKILL before it answered; its stderr, in toolgate's own log, says why; check that it runs on its own as an MCP server on stdio",
    );
    const running = { exitCode: null, signalCode: null } as unknown as Parameters<typeof unreachableReason>[1];
    expect(unreachableReason(new Error("Request timed out"), running)).toBe("Request timed out");
    const other = Object.assign(new Error("fetch failed"), {
      cause: Object.assign(new Error("x"), { code: "EPROTO" }),
    });
    expect(unreachableReason(other, undefined)).toBe("fetch failed");
  });
});
