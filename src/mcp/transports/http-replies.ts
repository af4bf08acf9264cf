/**
 * The JSON-RPC side of the HTTP endpoint's own answers: an error body (`errorBody`, `jsonError`,
 * echoing a request's id only when MCP allows it), what a message is (`messageMethod`, and
 * `requestOf` as 2026-07-28 admission counts it), and a POST's body read under its bound
 * (`readPost`: 413 beyond it) with its JSON when it parses.
 */
import type http from "node:http";
import { readBody } from "./node-web.js";

export type JsonRpcId = string | number | null;

export const errorBody = (code: number, message: string, id: JsonRpcId = null, data?: Record<string, unknown>) =>
  JSON.stringify({ jsonrpc: "2.0", id, error: { code, message, ...(data ? { data } : {}) } });

export function jsonError(
  res: http.ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
  id: JsonRpcId = null,
  data?: Record<string, unknown>,
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(errorBody(code, message, id, data));
}

/** The id of one JSON-RPC message, to echo in an error: only one MCP allows (a string or a safe integer), else null. */
export function echoedId(json: unknown): JsonRpcId {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return null;
  const { id } = json as { id?: unknown };
  return typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id)) ? id : null;
}

/** What a 2026-07-28 POST body asks for, as admission counts it: a request (its id), a listen stream, or neither. */
export function requestOf(json: unknown): { id: JsonRpcId; listen: boolean } | null {
  const method = messageMethod(json);
  if (typeof method !== "string" || (json as { id?: unknown }).id === undefined) return null;
  return { id: echoedId(json), listen: method === "subscriptions/listen" };
}

/** The method of one JSON-RPC message (null for a response), undefined for anything else (a batch, no JSON). */
export function messageMethod(json: unknown): string | null | undefined {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return undefined;
  const { method } = json as { method?: unknown };
  return typeof method === "string" ? method : method === undefined ? null : undefined;
}

/** A POST's body (null when it was refused, the answer already sent) and its JSON, when it parses. */
export async function readPost(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  maxBytes: number,
): Promise<{ bytes: Buffer | undefined; json: unknown } | null> {
  if (req.method !== "POST") return { bytes: undefined, json: undefined };
  const read = await readBody(req, maxBytes);
  if (!read.ok) {
    jsonError(res, read.status, -32000, read.message);
    return null;
  }
  let json: unknown;
  try {
    json = JSON.parse(read.bytes.toString("utf8"));
  } catch {
    // The SDK transport answers it: 400 with a JSON-RPC parse error.
  }
  return { bytes: read.bytes, json };
}

export function parsed(read: { json: unknown }): { parsedBody: unknown } | undefined {
  return read.json === undefined ? undefined : { parsedBody: read.json };
}
