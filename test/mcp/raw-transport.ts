/**
 * A request sent raw on an SDK client's own transport, its answer read off the transport as the
 * server sent it: for answers the SDK client refuses to hand over (2.4.0 has no tasks extension,
 * so a tools/call answered with `resultType: "task"` is an error to it).
 */
import type { Client } from "@modelcontextprotocol/client";

let rawId = 1_000_000;

/** The JSON-RPC response to `method` with `params` (and `_meta` = `envelope`), whole. */
export async function rawRequest(
  c: Client,
  method: string,
  params: Record<string, unknown>,
  envelope: Record<string, unknown>,
): Promise<{ result?: Record<string, unknown>; error?: { code: number; message: string } }> {
  const transport = c.transport!;
  const id = ++rawId;
  const onmessage = transport.onmessage;
  const answer = new Promise<Record<string, unknown>>((resolve) => {
    transport.onmessage = (m, extra) => {
      if ((m as { id?: unknown }).id === id) {
        transport.onmessage = onmessage;
        resolve(m as Record<string, unknown>);
      } else onmessage?.(m, extra);
    };
  });
  await transport.send({ jsonrpc: "2.0", id, method, params: { ...params, _meta: envelope } });
  return answer;
}
