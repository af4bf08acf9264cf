/**
 * The flags `toolgate serve` and `toolgate proxy` share for Streamable HTTP and for who approves
 * A3 calls, registered once and parsed to settings with errors that name the flag, the value
 * and an example.
 */
import type { Command } from "commander";
import { APPROVE_VIA, type ApproveVia } from "../../runtime/approvals.js";
import { ToolgateError } from "../../core/errors.js";
import { wholeNumber } from "../whole-number.js";
import { isLoopback, normaliseOrigin } from "../../mcp/transports/http-guard.js";
import type { HttpOptions } from "../../mcp/transports/http.js";

export interface HttpFlags {
  allowOrigin?: string[];
  allowHost?: string[];
  /** Commander's `--no-auth`: false when given. */
  auth?: boolean;
  maxSessions?: string;
  maxSessionsPerClient?: string;
  maxRequestsPerClient?: string;
  maxRequestBytes?: string;
  maxConnections?: string;
  maxConnectionsPerPeer?: string;
  approveVia?: string;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** The HttpOptions these flags set. */
export type HttpFlagOption =
  | "allowOrigins"
  | "allowHosts"
  | "noAuth"
  | "maxSessions"
  | "maxSessionsPerClient"
  | "maxRequestsPerClient"
  | "maxRequestBytes"
  | "maxConnections"
  | "maxConnectionsPerPeer";

/** Adds the HTTP and approval flags to `cmd` (`--session-idle-ms` is parsed by ms-flag.ts). */
export function httpFlagOptions(cmd: Command): Command {
  return cmd
    .option(
      "--session-idle-ms <ms>",
      "with --http: close a session after this long without a request (default 1800000, 30 minutes); its client gets 404 and starts a new one",
    )
    .option(
      "--allow-origin <origin>",
      "with --http: also answer browser pages of this origin, e.g. http://localhost:6274 (repeatable; other origins get 403)",
      collect,
    )
    .option(
      "--allow-host <name>",
      "with --http: also answer this Host name (or name:port), e.g. a reverse proxy's (repeatable)",
      collect,
    )
    .option(
      "--no-auth",
      "with --http on a non-loopback address: serve it without --keys, so anyone who can reach it runs the tools (refused otherwise)",
    )
    .option(
      "--max-sessions <n>",
      "with --http: sessions open at once (default 256); a client's least recently active idle session makes room for its own new one, never another client's",
    )
    .option(
      "--max-sessions-per-client <n>",
      "with --http: sessions open at once per client: with --keys per issued capability grant, else per peer address, every local client being one peer (default 32)",
    )
    .option(
      "--max-requests-per-client <n>",
      "with --http: 2026-07-28 requests in flight at once per client, counted like --max-sessions-per-client (default 64); more are answered 429 with Retry-After at once",
    )
    .option(
      "--max-request-bytes <n>",
      "with --http: the most one POST body may be, bytes (default 4194304, 4 MiB); a larger one is answered 413 before it is parsed",
    )
    .option("--max-connections <n>", "with --http: TCP connections open at once (default 1024)")
    .option(
      "--max-connections-per-peer <n>",
      "with --http: TCP connections open at once from one peer address, every local client being one peer (default 128); more are answered 503 and closed",
    )
    .option(
      "--approve-via <channel>",
      "who may approve destructive (A3) calls: cli (toolgate approvals), elicitation (the person the MCP client asks) or both (default both; cli over --http without --keys)",
    );
}

/** A count flag's value: a whole number of at least 1, or undefined when absent; a bad one names the flag. */
export function countFlag(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = wholeNumber(text, 1);
  if (n === null)
    throw new ToolgateError(
      "bad_flag",
      `${flag} must be a whole number of at least 1; received ${JSON.stringify(text)}; example ${flag} 64`,
    );
  return n;
}

/**
 * The HTTP options and the approval channels the flags ask for. `address`: the `--http` host, if
 * given (the HTTP flags need it); `keys`: whether calls need a capability. A non-loopback address
 * without keys is refused here, before any state is opened, unless `--no-auth` says so.
 */
export function parseHttpFlags(
  flags: HttpFlags,
  address: { host: string } | undefined,
  keys: boolean,
): { http: Pick<HttpOptions, HttpFlagOption>; approveVia: ApproveVia } {
  const given = [
    flags.allowOrigin?.length ? "--allow-origin" : null,
    flags.allowHost?.length ? "--allow-host" : null,
    flags.auth === false ? "--no-auth" : null,
    flags.maxSessions !== undefined ? "--max-sessions" : null,
    flags.maxSessionsPerClient !== undefined ? "--max-sessions-per-client" : null,
    flags.maxRequestsPerClient !== undefined ? "--max-requests-per-client" : null,
    flags.maxRequestBytes !== undefined ? "--max-request-bytes" : null,
    flags.maxConnections !== undefined ? "--max-connections" : null,
    flags.maxConnectionsPerPeer !== undefined ? "--max-connections-per-peer" : null,
  ].filter((f) => f !== null);
  const http = address !== undefined;
  if (!http && given.length > 0)
    throw new ToolgateError(
      "bad_flag",
      `${given.join(", ")} appl${given.length === 1 ? "ies" : "y"} to Streamable HTTP: add --http HOST:PORT, or drop ${given.length === 1 ? "it" : "them"}`,
    );
  if (flags.approveVia !== undefined && !APPROVE_VIA.includes(flags.approveVia as ApproveVia)) {
    throw new ToolgateError(
      "bad_flag",
      `--approve-via must be one of ${APPROVE_VIA.join(", ")}; received ${JSON.stringify(flags.approveVia)}; example --approve-via cli`,
    );
  }
  for (const origin of flags.allowOrigin ?? []) normaliseOrigin(origin);
  if (address && !isLoopback(address.host) && !keys && flags.auth !== false) {
    throw new ToolgateError(
      "auth_required",
      `--http ${address.host} is not a loopback address and no capability keys are configured, so anyone who can reach it could run every tool; pass --keys FILE, bind 127.0.0.1, or pass --no-auth to serve it unauthenticated on purpose`,
    );
  }
  const maxSessions = countFlag("--max-sessions", flags.maxSessions);
  const maxSessionsPerClient = countFlag("--max-sessions-per-client", flags.maxSessionsPerClient);
  const maxRequestsPerClient = countFlag("--max-requests-per-client", flags.maxRequestsPerClient);
  const maxRequestBytes = countFlag("--max-request-bytes", flags.maxRequestBytes);
  const maxConnections = countFlag("--max-connections", flags.maxConnections);
  const maxConnectionsPerPeer = countFlag("--max-connections-per-peer", flags.maxConnectionsPerPeer);
  return {
    http: {
      ...(flags.allowOrigin?.length ? { allowOrigins: flags.allowOrigin } : {}),
      ...(flags.allowHost?.length ? { allowHosts: flags.allowHost } : {}),
      ...(flags.auth === false ? { noAuth: true } : {}),
      ...(maxSessions !== undefined ? { maxSessions } : {}),
      ...(maxSessionsPerClient !== undefined ? { maxSessionsPerClient } : {}),
      ...(maxRequestsPerClient !== undefined ? { maxRequestsPerClient } : {}),
      ...(maxRequestBytes !== undefined ? { maxRequestBytes } : {}),
      ...(maxConnections !== undefined ? { maxConnections } : {}),
      ...(maxConnectionsPerPeer !== undefined ? { maxConnectionsPerPeer } : {}),
    },
    // Over HTTP without keys the client that would be asked is any local process, not a person.
    approveVia: (flags.approveVia as ApproveVia | undefined) ?? (http && !keys ? "cli" : "both"),
  };
}
