/**
 * Node's `http` request and response, as the web `Request` and `Response` the SDK's HTTP
 * serving speaks. The body is read here, once, under a bound (the era of a POST is decided from
 * it, and an oversized one is refused before anything parses it); the answer is streamed back
 * chunk by chunk, so an SSE stream reaches the client as it is written and stops when the client
 * goes away.
 */
import type http from "node:http";

export type BodyRead = { ok: true; bytes: Buffer } | { ok: false; status: 413; message: string };

/** The request body, or a refusal once it passes `maxBytes` (the rest is not read). */
export function readBody(req: http.IncomingMessage, maxBytes: number): Promise<BodyRead> {
  const declared = Number(req.headers["content-length"]);
  const tooLarge: BodyRead = {
    ok: false,
    status: 413,
    message: `request body too large: the most one message may be is ${maxBytes} bytes; send a smaller message (toolgate serve or proxy --max-request-bytes raises the bound)`,
  };
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.resolve(tooLarge);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.off("data", onData);
        req.resume();
        resolve(tooLarge);
        return;
      }
      chunks.push(chunk);
    };
    req.on("data", onData);
    req.once("end", () => resolve({ ok: true, bytes: Buffer.concat(chunks) }));
    req.once("error", reject);
  });
}

/** A web `Request` for `req` with `body`; its signal aborts when the client closes the connection. */
export function toWebRequest(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer | undefined): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.set(name, value);
  }
  const gone = new AbortController();
  res.once("close", () => gone.abort());
  const method = req.method ?? "GET";
  const withBody = body !== undefined && method !== "GET" && method !== "HEAD";
  return new Request(new URL(req.url ?? "/", "http://local"), {
    method,
    headers,
    signal: gone.signal,
    ...(withBody ? { body: new Uint8Array(body) } : {}),
  });
}

/** Writes `response` to `res`, streaming its body; resolves when it is written or the client has gone. */
export async function sendWebResponse(res: http.ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  res.writeHead(response.status, headers);
  if (response.body === null) return void res.end();
  // Headers go out at once: a client opening an SSE stream waits for them before anything is sent on it.
  res.flushHeaders();
  const reader = response.body.getReader();
  const cancel = () => void reader.cancel().catch(() => {});
  res.once("close", cancel);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      res.write(value);
    }
  } catch {
    // The stream was cancelled (the client went away) or failed: nothing more to write.
  } finally {
    res.off("close", cancel);
    res.end();
  }
}
