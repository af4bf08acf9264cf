/**
 * Messages a transport of toolgate's has parsed with the SDK's JSON-RPC message schema (`parseJSONRPCMessage`, whose
 * output they are, unchanged since), and what kind each is. That schema is a union of four strict object kinds, so
 * a parsed message's kind follows from two members: a request has a `method` and an `id`, a notification a `method`
 * and no `id`, a response no `method`. The SDK, its stdio entry and `stdio-listen.ts` otherwise find the kind of
 * every message by parsing it again as each kind in turn (as a result, as an error, as a request: two failing parses
 * for each request, per reader); for a message marked here they read the kind instead.
 */
import { isJSONRPCNotification, isJSONRPCRequest } from "@modelcontextprotocol/server";

const parsed = new WeakSet<object>();

export type ParsedKind = "request" | "notification" | "response";

/** Says that `message` is the output of the SDK's `parseJSONRPCMessage` (a transport calls it once per message). */
export function markParsed(message: object): void {
  parsed.add(message);
}

/** The kind of `message` when it was marked parsed (`markParsed`); undefined for any other value. */
export function parsedKind(message: unknown): ParsedKind | undefined {
  if (typeof message !== "object" || message === null || !parsed.has(message)) return undefined;
  const m = message as { id?: unknown; method?: unknown };
  if (m.method === undefined) return "response";
  return m.id === undefined ? "notification" : "request";
}

/**
 * Whether `message` is a request or a notification: read off a marked message's members, else found by the SDK's own
 * check of that kind (a message no transport of toolgate's parsed).
 */
export function isKind(message: unknown, kind: "request" | "notification"): boolean {
  const known = parsedKind(message);
  if (known !== undefined) return known === kind;
  return kind === "request" ? isJSONRPCRequest(message) : isJSONRPCNotification(message);
}
