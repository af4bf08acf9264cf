/**
 * The serving lifecycle of `toolgate serve` and `toolgate proxy`: serve a gateway over stdio
 * (until the client closes stdin) or Streamable HTTP, and on SIGINT/SIGTERM shut down cleanly —
 * refuse new calls, let in-flight calls finish or be marked by `gateway.close({ grace_ms })`
 * (an A2/A3 call cut off there stays IN_DOUBT, never lost), then close the transport.
 */
import process from "node:process";
import type { Gateway } from "../../runtime/types.js";
import { serveHttp, type HttpOptions } from "../../mcp/transports/http.js";
import type { McpServerOptions } from "../../mcp/server/server.js";
import type { ListenAddress } from "./flags.js";
import type { HttpFlagOption } from "./http-flags.js";
import type { ListenOptions } from "../../mcp/transports/listen-hold.js";
import { serveStdio } from "../../mcp/transports/stdio.js";
import { preloadTokenizer } from "../../observation/tokens.js";
import { ToolgateError } from "../../core/errors.js";
import { escapeUntrusted } from "../../observation/escape.js";

/** How long a shutdown waits for in-flight calls, ms. */
export const DEFAULT_GRACE_MS = 10_000;

export interface RunOptions
  extends McpServerOptions, ListenOptions, Pick<HttpOptions, "sessionIdleMs" | HttpFlagOption> {
  /** Serve Streamable HTTP here instead of stdio. */
  http?: ListenAddress;
  graceMs?: number;
  /** Operator log; default stderr (stdout is the protocol over stdio). */
  log?: (line: string) => void;
  /** Resolves when the process should stop; default the first SIGINT or SIGTERM. */
  stop?: Promise<string>;
  /** Called once serving has started (HTTP: with the endpoint URL). */
  onListening?: (where: string) => void;
}

/**
 * The first SIGINT or SIGTERM resolves `stop` (the graceful close); one more while serving or
 * closing exits at once through `process.exit` (130 or 143, as the signal's default would), so the
 * `exit` hooks still run: the audit trail's last lines, `upstream-reaper.ts`. Without a listener
 * then, the signal's default death would skip them.
 */
function signalled(): { stop: Promise<string>; dispose: () => void } {
  let dispose = () => {};
  const stop = new Promise<string>((resolve) => {
    let stopping = false;
    const on = (sig: NodeJS.Signals) => {
      if (!stopping) {
        stopping = true;
        return resolve(sig);
      }
      process.stderr.write(`toolgate: ${sig} again while closing: exiting now\n`);
      process.exit(sig === "SIGINT" ? 130 : 143);
    };
    process.on("SIGINT", on);
    process.on("SIGTERM", on);
    dispose = () => {
      process.off("SIGINT", on);
      process.off("SIGTERM", on);
    };
  });
  return { stop, dispose };
}

/**
 * Runs `close` (the proxy's upstreams ended gracefully: seconds, for one that ignores its stdin
 * closing); a SIGINT or SIGTERM meanwhile exits at once, as the signal's default would, but
 * through `process.exit`, so its `exit` hooks run (`mcp/proxy/upstream-reaper.ts` ends the
 * upstreams still running instead of leaving them orphaned).
 */
export async function closeOrExitOnSignal(close: () => Promise<void>): Promise<void> {
  const exit = (signal: NodeJS.Signals) => {
    process.stderr.write(`toolgate: ${signal} while closing: ending the upstreams now\n`);
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  process.once("SIGINT", exit);
  process.once("SIGTERM", exit);
  try {
    await close();
  } finally {
    process.off("SIGINT", exit);
    process.off("SIGTERM", exit);
  }
}

/**
 * A listen that failed at start, as the operator can act on it: the `--http` address, why the
 * system refused it and what to pass instead (the system's own message names none of these).
 */
export function listenError(err: unknown, at: ListenAddress): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const host = at.host.includes(":") ? `[${at.host}]` : at.host;
  const why =
    code === "EADDRINUSE"
      ? `port ${at.port} is already in use on ${at.host} (another toolgate, or another program, listens there); stop that one, or choose another port, e.g. --http ${host}:${at.port === 65535 ? 8765 : at.port + 1}, or --http ${host}:0 for any free port`
      : code === "EACCES"
        ? `the system does not let this user listen on port ${at.port}${at.port < 1024 ? " (ports below 1024 need privilege)" : ""}; choose a port from 1024 to 65535, e.g. --http ${host}:8765`
        : code === "EADDRNOTAVAIL"
          ? `${at.host} is not an address of this machine; use 127.0.0.1 (loopback), one of its interfaces' addresses, or 0.0.0.0 (every interface, with --keys)`
          : undefined;
  if (why === undefined) return err;
  return new ToolgateError("bad_address", `cannot serve --http ${host}:${at.port}: ${why}`, { cause: err });
}

/** Serves `gateway` until the client leaves (stdio) or a stop signal, then shuts down cleanly. */
export async function runGatewayServer(gateway: Gateway, options: RunOptions = {}): Promise<void> {
  const log = options.log ?? ((line: string) => process.stderr.write(line + "\n"));
  // The SDK reports a body it could not parse by the parser's own words alone: say what they are about. Those words
  // quote the body's start, a client's text: escaped, so no escape sequence or line break of its reaches the terminal.
  const onError = (err: Error) =>
    log(
      `toolgate: ${escapeUntrusted(err instanceof SyntaxError ? `a client sent a request body that is not JSON (answered -32700, Parse error): ${err.message}` : err.message)}`,
    );
  const signals = options.stop ? null : signalled();
  const stop = options.stop ?? signals!.stop;
  const grace_ms = options.graceMs ?? DEFAULT_GRACE_MS;
  // Every call's observation and audit record counts tokens: the encoder loads while the client
  // connects, not inside its first tools/call (a quarter of a second or more, which it would wait out).
  setImmediate(() => preloadTokenizer());
  try {
    await serve();
  } finally {
    signals?.dispose();
    // Approval waits of tasks end now; a task's running call ends with the gateway's close.
    options.tasks?.close();
  }

  async function serve(): Promise<void> {
    if (options.http) {
      const handle = await serveHttp(gateway, {
        warn: log,
        ...options,
        host: options.http.host,
        port: options.http.port,
        onError,
      }).catch(async (err: unknown) => {
        // Refused at start (an unauthenticated network bind, a port in use): nothing ran; close the state.
        await gateway.close({ grace_ms: 0 });
        throw listenError(err, options.http!);
      });
      options.onListening?.(handle.url.href);
      const why = await stop;
      log(`toolgate: ${why}: finishing in-flight calls (up to ${grace_ms} ms), then closing`);
      handle.drain();
      await gateway.close({ grace_ms });
      await handle.close();
    } else {
      const handle = await serveStdio(gateway, { warn: log, ...options, onError });
      options.onListening?.("stdio");
      const why = await Promise.race([handle.closed.then(() => "stdin closed"), stop]);
      // Requests read just before the end of input reach the gateway a few microtasks later.
      await new Promise((resolve) => setImmediate(resolve));
      if (why !== "stdin closed")
        log(`toolgate: ${why}: finishing in-flight calls (up to ${grace_ms} ms), then closing`);
      await gateway.close({ grace_ms });
      await handle.close();
    }
  }
}
