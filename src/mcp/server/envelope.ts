/** The revision a request came in: its 2026-07-28 `_meta` envelope, else the connection's initialize. */
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  type ClientCapabilities,
  type Server,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { invalidParams } from "./protocol-error.js";

/** The fields of a request's `_meta` envelope (2026-07-28), as the SDK lifted and validated them. */
export interface Envelope {
  protocolVersion?: string;
  clientInfo?: { name?: unknown };
  clientCapabilities?: ClientCapabilities;
}

/**
 * A request must be of one revision: of 2026-07-28, carrying the `_meta` envelope, or of
 * 2025-11-25, on a connection that began with initialize. The SDK's stdio entry passes a request
 * with neither through to a connection opened with server/discover, so it is refused here,
 * naming what is missing.
 */
export function requireEnvelope(server: Server, ctx: ServerContext, method: string): Envelope {
  const envelope = envelopeOf(ctx);
  if (envelope.protocolVersion === undefined && server.getNegotiatedProtocolVersion() === undefined)
    throw invalidParams(
      `${method} must carry params._meta["${PROTOCOL_VERSION_META_KEY}"] and params._meta["${CLIENT_CAPABILITIES_META_KEY}"] (the 2026-07-28 per-request envelope), or come after initialize (2025-11-25); received neither; send the envelope with every request`,
    );
  return envelope;
}

export function envelopeOf(ctx: ServerContext): Envelope {
  const raw = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const envelope: Envelope = {};
  if (raw === undefined || raw === null) return envelope;
  const version = raw[PROTOCOL_VERSION_META_KEY];
  if (typeof version === "string") envelope.protocolVersion = version;
  if (raw[CLIENT_INFO_META_KEY]) envelope.clientInfo = raw[CLIENT_INFO_META_KEY] as { name?: unknown };
  if (raw[CLIENT_CAPABILITIES_META_KEY])
    envelope.clientCapabilities = raw[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities;
  return envelope;
}
