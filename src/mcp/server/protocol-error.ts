/**
 * The -32602 this server answers a bad request with (server.ts, tasks.ts and pass-through.ts each
 * refused with their own copy); a client's value in its message is `observation/escape.ts` `shownValue`.
 */
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";

/** A -32602 whose wire message is exactly `message`. */
export function invalidParams(message: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, message);
}
