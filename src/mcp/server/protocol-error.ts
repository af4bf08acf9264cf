/**
 * The -32602 this server answers a bad request with, and a client's value as such a message shows
 * it; server.ts, tasks.ts and pass-through.ts each refused with their own copy.
 */
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { escapeUntrusted } from "../../observation/escape.js";
import { jsonOrNote } from "./meta.js";

/** A -32602 whose wire message is exactly `message`. */
export function invalidParams(message: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, message);
}

/** A client's value in a JSON-RPC error message: short, and nothing in it a terminal would act on. */
export function shownJson(value: unknown): string {
  const json = jsonOrNote(value) ?? "nothing";
  return escapeUntrusted(json.length > 80 ? `${json.slice(0, 77)}…` : json);
}
