/**
 * A request sent raw on an SDK client's own transport, its answer read off the transport as the
 * server sent it: for answers the SDK client refuses to hand over (2.4.0 has no tasks extension,
 * so a tools/call answered with `resultType: "task"` is an error to it).
 */
import type { Client } from "@modelcontextprotocol/client";

let rawId = 1_000_000;

type Answer = { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };

/** The JSON-RPC response to `method` with `params` exactly as given, whole. */
async function sendRaw(c: Client, method: string, params: unknown): Promise<Answer> {
  const transport = c.transport!;
  const id = ++rawId;
  const onmessage = transport.onmessage;
  const answer = new Promise<Answer>((resolve) => {
    transport.onmessage = (m, extra) => {
      if ((m as { id?: unknown }).id === id) {
        transport.onmessage = onmessage;
        resolve(m as Answer);
      } else onmessage?.(m, extra);
    };
  });
  await transport.send({ jsonrpc: "2.0", id, method, params } as never);
  return answer;
}

/** The JSON-RPC response to `method` with `params` (and `_meta` = `envelope`), whole. */
export function rawRequest(
  c: Client,
  method: string,
  params: Record<string, unknown>,
  envelope: Record<string, unknown>,
): Promise<Answer> {
  return sendRaw(c, method, { ...params, _meta: envelope });
}

/**
 * `@modelcontextprotocol/ext-tasks`'s `rawDispatch` over `c`'s transport: the request as the
 * package framed it (its `_meta` envelope included), the answer as a result or an error.
 */
export function rawDispatch(c: Client) {
  return async (request: unknown) => {
    const { method, params } = request as { method: string; params?: unknown };
    const answer = await sendRaw(c, method, params);
    return answer.error
      ? { kind: "error" as const, error: answer.error as never }
      : { kind: "result" as const, result: (answer.result ?? {}) as never };
  };
}
