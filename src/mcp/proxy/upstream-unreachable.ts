/**
 * Why an upstream could not be started or reached, in words an operator can act on. The SDK says
 * "Connection closed" for a command that exited before it answered and "fetch failed" for a URL
 * nothing answers; the exit status and the system's error code under it say which it was.
 */
import type { ChildProcess } from "node:child_process";
import { spawnedChild } from "./upstream-reaper.js";

const NETWORK: Partial<Record<string, string>> = {
  ECONNREFUSED: "nothing listens there (connection refused): is the server running, on that port?",
  ENOTFOUND: "its host name does not resolve: check the spelling of the URL",
  EAI_AGAIN: "its host name could not be resolved now (DNS did not answer): check the network, or try again",
  ECONNRESET: "the server closed the connection: check that the URL is its MCP endpoint (often /mcp)",
  ETIMEDOUT: "the connection timed out: check the host and port, and any firewall between",
  EHOSTUNREACH: "the host cannot be reached from here: check the address and the network",
};

/** The first network error code (`ECONNREFUSED`, `ENOTFOUND`, …) in an error's cause chain. */
function networkCode(err: unknown): string | undefined {
  let at: unknown = err;
  for (let depth = 0; depth < 8 && typeof at === "object" && at !== null; depth++) {
    const code = (at as { code?: unknown }).code;
    if (typeof code === "string" && NETWORK[code] !== undefined) return code;
    at = (at as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * The child a stdio transport spawns, kept once its `start` has run: the SDK forgets it when it
 * closes, and a command that exited at once has closed before `connect` rejects.
 */
export function spawnedBy(transport: object): () => ChildProcess | undefined {
  let child: ChildProcess | undefined;
  const t = transport as { start: () => Promise<void> };
  const start = t.start.bind(transport);
  t.start = async () => {
    try {
      await start();
    } finally {
      child = spawnedChild(transport);
    }
  };
  return () => child;
}

/**
 * The SDK's message, and after it what happened: for a command, how it ended (its stderr goes to
 * toolgate's own, which the operator reads); for a URL, the network error under "fetch failed".
 */
export function unreachableReason(err: unknown, child: ChildProcess | undefined): string {
  const said = (err as Error | undefined)?.message ?? String(err);
  if (child) {
    const ended =
      child.exitCode !== null
        ? `the command exited with code ${child.exitCode}`
        : child.signalCode !== null
          ? `the command was ended by ${child.signalCode}`
          : undefined;
    if (ended)
      return `${said}: ${ended} before it answered; its stderr, in toolgate's own log, says why; check that it runs on its own as an MCP server on stdio`;
    return said;
  }
  const code = networkCode(err);
  return code ? `${said} (${code}): ${NETWORK[code]}` : said;
}
