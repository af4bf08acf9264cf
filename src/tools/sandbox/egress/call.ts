/**
 * Egress as bash_execute uses it: one session and proxy per call, opened before the envelope
 * and closed after it; what the session refused becomes typed `sandbox_denied` entries, what it
 * saw the audit's `egress` note; the operator's secrets are removed from the command's output
 * (a server that echoes its request headers would otherwise show them).
 */
import type { GrantRequest } from "../../../core/tool.js";
import type { JsonValue } from "../../../core/json.js";
import type { EgressPolicy } from "./policy.js";
import { startEgressProxy, type EgressProxy } from "./server.js";
import { EgressSession, type EgressReason } from "./session.js";

export interface EgressRun {
  session: EgressSession;
  proxy: EgressProxy;
}

/** A refused connection as bash_execute's `sandbox_denied` lists it. */
export interface EgressDenialEntry {
  code: "egress_denied";
  message: string;
  host: string;
  port: number;
  reason: EgressReason;
}

/** Opens the call's proxy; `authorizeAlso` is the call's capability (absent when the gateway holds no keys). */
export async function openEgress(
  policy: EgressPolicy,
  authorizeAlso?: (request: GrantRequest) => Promise<string | null>,
): Promise<EgressRun> {
  const session = new EgressSession({
    policy,
    ...(authorizeAlso
      ? {
          capability: (host: string, port: number) =>
            authorizeAlso({ op: "connect", target: `host:${host}:${port}`, cost: 0 }),
        }
      : {}),
  });
  return { session, proxy: await startEgressProxy(session) };
}

export function egressDenials(session: EgressSession): EgressDenialEntry[] {
  return session.denials.map((d) => ({
    code: "egress_denied",
    message: `toolgate refused the connection to ${d.host.includes(":") ? `[${d.host}]` : d.host}:${d.port} (${d.reason}): ${d.message}`,
    host: d.host,
    port: d.port,
    reason: d.reason,
  }));
}

/** The audit's record of every connection: host, port, bytes, allowed or not, and why. */
export function egressNote(session: EgressSession): JsonValue {
  return {
    connections: session.events.map((e) => ({ ...e })) as unknown as JsonValue,
    connections_not_listed: session.eventsDropped,
    proxy_connections: session.accepted,
    bytes: session.bytes,
  };
}

/** `text` with every configured secret value replaced. */
export function withoutSecrets(policy: EgressPolicy, text: string): string {
  let out = text;
  for (const s of policy.secrets) if (out.includes(s.value)) out = out.split(s.value).join("[secret removed]");
  return out;
}
